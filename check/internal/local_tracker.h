// LocalTracker: context-local handles (ddi-spec §3.3) -- the DC-table Create*/Destroy* that
// open and close a DC's local handle of an IC object or command list, every DC-table handle
// a call names (which must be an open local handle of that DC), and the local-handle size
// protocol of the IC (CheckDeferredContextHandleSizes, CalcDeferredContextHandleSize and the
// thread's R35 obligation after an IC creation). It reports R27, R32, R33, R35, R37, R51,
// R53-R58. Peers resolve a DC's handle to its IC object (Resolve), close a DC's handles
// when it is recycled or destroyed (CloseAllOn) and read locals by index (at).
//
// Thread-safety: none (one per Checker, which is single-threaded).
//
// Example:
//   t.locals.OnOpen(e, m, dc);                          // DC::CreateResource (local open)
//   int32_t o = t.locals.Resolve(e, dc, h, false);      // the IC object, or -1 (flagged)
#ifndef CLTRACE_CHECK_INTERNAL_LOCAL_TRACKER_H_
#define CLTRACE_CHECK_INTERNAL_LOCAL_TRACKER_H_

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "check/internal/thread_tracker.h"
#include "check/internal/tracker.h"

namespace cltrace::check::internal {

class HandleSpill;

struct Local {
  uint64_t handle = 0;
  uint32_t number = 0;  // lifetime number (1, 2, ... in creation order; TransitionEvent)
  int32_t dc = -1;
  bool is_cl = false;
  int32_t target = -1;  // Object index or CommandList index
  State state = State::kNone;
  uint32_t recording = 0;
  int32_t dep_local = -1;
  uint32_t open_dependents = 0;
  uint64_t open_seq = 0;
  uint64_t close_seq = 0;
  Ring last;
};

class LocalTracker : public TrackerBase {
 public:
  LocalTracker(CheckEnv& env, Trackers& peers) : TrackerBase(env, peers) {}

  const Local& at(int32_t i) const { return locals_[i]; }
  size_t size() const { return locals_.size(); }
  // Moves local `i` to `s` (its "[last: ...]" ring and the observer see it).
  void To(int32_t i, State s, const Event& e);

  // DC-table opens and closes.
  void OnOpen(const Event& e, const CallMeta& m, int32_t dc);
  void OnClose(const Event& e, const CallMeta& m, int32_t dc);
  // A pfnSetErrorCb `cb` failed the local open `create`.
  void OnOpenFailed(const Event& cb, const Event& create, const CallMeta& cm);
  // How many local handles are open on DC `dc`; of IC command list (is_cl) or object `target`.
  uint32_t OpenLocalsOn(int32_t dc) const {
    return static_cast<size_t>(dc) < open_on_.size() ? open_on_[dc] : 0;
  }
  uint32_t OpenLocalsOf(bool is_cl, int32_t target) const {
    const std::vector<uint32_t>& v = open_of_[is_cl ? 1 : 0];
    return static_cast<size_t>(target) < v.size() ? v[target] : 0;
  }
  // Closes local `l` (no judgement).
  void Close(int32_t l, const Event& e);
  // The IC object (>= 0) a DC-table call's handle stands for; flags R57/R58 otherwise.
  int32_t Resolve(const Event& e, int32_t dc, uint64_t h, bool want_cl);
  // Resolves every handle a DC-table call names.
  void CheckHandles(const Event& e, const CallMeta& m, int32_t dc);
  // R51/R58: DC `dc` is recycled (or destroyed) with local handles open; closes them.
  void CloseAllOn(const Event& e, int32_t dc, bool destroy);

  // The IC's local-handle sizes (R27, R32, R33, R35).
  void OnCheckHandleSizes(const Event& e, const CallMeta& m, int32_t ic);
  // first_of_thread: `e` is its thread's first top-level device call; consumed: it answered
  // the thread's R35 obligation (ResolvePending).
  void OnCalcHandleSize(const Event& e, const CallMeta& m, int32_t ic, bool consumed,
                        bool first_of_thread);
  // Called before every top-level device call. Returns true if `e` is the
  // CalcDeferredContextHandleSize the thread's pending creation asked for (R35, R37).
  bool ResolvePending(const Event& e, const CallMeta& m);

  // Compaction (Trackers::Compact): what the local handles refer to (an open one is kept:
  // CloseAllOn finds it); drops the locals `r` drops and forgets dropped lists and objects.
  void MarkRefs(RecordMarks& marks) const;
  void Compact(const RecordRemap& r);

 private:
  friend class HandleSpill;  // moves finished records out of memory and back
  // The IC object or list a local open names (-1: not judged further).
  int32_t OpenTarget(const Event& e, const CallMeta& m, int32_t dc, bool is_cl);
  // R55/R56: a local open's argument structure; the open local of the dependency or -1.
  int32_t OpenDependency(const Event& e, const CallMeta& m, int32_t dc, int32_t target, bool is_cl);
  static uint64_t OpenKey(int32_t dc, bool is_cl, int32_t target) {
    return (static_cast<uint64_t>(dc) << 33) | (uint64_t{is_cl} << 32) |
           static_cast<uint32_t>(target);
  }
  // Counts one more (delta 1) or one less (-1) open local handle of `l`'s DC and target.
  void CountOpen(const Local& l, int delta);
  bool ResolveRecycle(const Event& e, const CallMeta& m, const PendingCalc& pc);

  // In fixed-size blocks: growing never copies the records (see CheckEnv::Slot).
  std::deque<Local> locals_;
  // (dc << 33 | is_cl << 32 | target) -> open local index (R58).
  absl::flat_hash_map<uint64_t, int32_t> open_local_;
  std::vector<uint32_t> open_on_;     // by DC: open local handles
  std::vector<uint32_t> open_of_[2];  // [is_cl] by IC object / command list: open locals
  // The IC's CheckDeferredContextHandleSizes answer: (HandleType, DriverPrivateSize).
  absl::flat_hash_map<int32_t, std::vector<std::pair<uint64_t, uint64_t>>> sizes_;
  // R37: CalcDeferredContextHandleSize(HT_COMMANDLIST) answer after a list's creation.
  absl::flat_hash_map<int32_t, uint64_t> cl_local_size_;
  uint32_t created_ = 0;  // locals ever opened (the last lifetime number)
};

}  // namespace cltrace::check::internal

#endif  // CLTRACE_CHECK_INTERNAL_LOCAL_TRACKER_H_
