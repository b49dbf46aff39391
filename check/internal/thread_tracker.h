// ThreadTracker: the contract checker's per-thread state (ddi-spec §0.2, R35), owned here
// rather than in Checker::Impl: which threads have made a top-level device call, and for
// each thread the CalcDeferredContextHandleSize its last IC creation obliges it to make
// next. The tracker keeps the state; the checker judges (it flags R35/R37 from what Take
// returns).
//
// Thread-safety: none (one per Checker, which is single-threaded).
//
// Example:
//   ThreadTracker threads;
//   bool first = threads.OnTopLevelCall(e.tid);
//   threads.Expect(PendingCalc{.tid = 1, .after = 12, .create_seq = 11});
//   if (std::optional<PendingCalc> p = threads.Take(e.tid, e.seq)) { ...judge *p... }
#ifndef CLTRACE_CHECK_INTERNAL_THREAD_TRACKER_H_
#define CLTRACE_CHECK_INTERNAL_THREAD_TRACKER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "format/event.h"

namespace cltrace::check::internal {

// R35: after an IC creation the thread's next call must be CalcDeferredContextHandleSize.
struct PendingCalc {
  uint32_t tid = 0;
  uint64_t after = 0;  // the creating call's exit position
  uint64_t create_seq = 0;
  format::CallId create_call = format::CallId::kInvalid;
  uint64_t handle = 0;
  int8_t type = -1;
  int32_t cl = -1;
  bool recycle = false;  // set by RecycleCreateCommandList: a Calc must NOT follow
  // A missing Calc is judged only when the device shows DC support; a Calc that follows is
  // accepted either way (a fragment or late attach may lack the support evidence).
  bool expected = true;

  // The obligation the IC creation `e` of `handle` leaves its thread (type, cl, recycle and
  // expected are the caller's).
  static PendingCalc After(const format::Event& e, uint64_t handle) {
    PendingCalc p;
    p.tid = e.tid;
    p.after = e.end == 0 ? ~uint64_t{0} : e.end;  // a call that never returned: never
    p.create_seq = e.seq;
    p.create_call = e.call;
    p.handle = handle;
    return p;
  }
};

class ThreadTracker {
 public:
  // Records a top-level device call on `tid`; true if it is the thread's first.
  bool OnTopLevelCall(uint32_t tid) { return seen_.insert(tid).second; }

  // Sets p.tid's obligation (replacing an earlier one of that thread).
  void Expect(const PendingCalc& p);
  // The obligation a top-level call at entry position `seq` on `tid` answers, removed from
  // the tracker; nullopt if the thread owes nothing or the call began before the creating
  // call returned (seq < after).
  std::optional<PendingCalc> Take(uint32_t tid, uint64_t seq);
  // A creation (entry position `create_seq`) that failed owes nothing: drops the obligation
  // it set on `tid`, if it is still that thread's.
  void Cancel(uint32_t tid, uint64_t create_seq);
  // The thread's current obligation, or nullptr.
  const PendingCalc* Pending(uint32_t tid) const;
  // The command lists the obligations name (compaction, check/internal/tracker.h).
  template <typename F>
  void ForEachList(F f) {
    for (PendingCalc& p : pending_) f(p.cl);
  }

 private:
  std::vector<PendingCalc> pending_;    // at most one per thread; threads are few
  absl::flat_hash_set<uint32_t> seen_;  // threads with a top-level device call
};

}  // namespace cltrace::check::internal

#endif  // CLTRACE_CHECK_INTERNAL_THREAD_TRACKER_H_
