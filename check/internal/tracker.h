// TrackerBase: what each tracker of the contract checker starts from -- the shared CheckEnv
// (findings, the trace, handle slots, transitions) and its peers (Trackers), through which
// one tracker queries another's records (a command list's owning DC, a local handle's IC
// object). Trackers own their records; peers read and, where a rule's consequence crosses
// machines (a Finish closes its DC), drive them only through the owner's methods.
//
// Thread-safety: none (one set of trackers per Checker, which is single-threaded).
#ifndef CLTRACE_CHECK_INTERNAL_TRACKER_H_
#define CLTRACE_CHECK_INTERNAL_TRACKER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "check/internal/check_env.h"

namespace cltrace::check::internal {

struct Ctx;
struct CommandList;
struct Object;
struct Local;
struct Trackers;  // check/internal/trackers.h

// The records something still refers to (a handle slot, a peer record, a pending deadline):
// those are kept, every other one is dropped.
struct RecordMarks {
  std::vector<uint8_t> keep[kRecordKinds];
  void Mark(RecordKind k, int32_t i) {
    if (i >= 0 && static_cast<size_t>(i) < keep[k].size()) keep[k][i] = 1;
  }
  bool Kept(RecordKind k, int32_t i) const {
    return i >= 0 && static_cast<size_t>(i) < keep[k].size() && keep[k][i] != 0;
  }
};

// Old index -> new index after a compaction (-1: dropped), per kind.
struct RecordRemap {
  std::vector<int32_t> to[kRecordKinds];
  int32_t operator()(RecordKind k, int32_t i) const {
    return i < 0 || static_cast<size_t>(i) >= to[k].size() ? -1 : to[k][i];
  }
  void Apply(RecordKind k, int32_t& i) const { i = (*this)(k, i); }
  template <typename Container>
  void ApplyAll(RecordKind k, Container& c) const {
    for (int32_t& i : c) Apply(k, i);
  }
};

// Moves the kept records of `v` (to[i] >= 0) to the front, in order, and drops the rest
// (a std::vector or std::deque of records).
template <typename Records>
void CompactRecords(Records& v, const std::vector<int32_t>& to) {
  size_t n = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (to[i] < 0) continue;
    if (n != i) v[n] = std::move(v[i]);
    ++n;
  }
  v.resize(n);
  if constexpr (requires { v.capacity(); }) {
    if (v.capacity() > 2 * n + 1024) v.shrink_to_fit();
  }
}

class TrackerBase {
 protected:
  TrackerBase(CheckEnv& env, Trackers& peers)
      : env_(env), t_(peers), table_(env.table()), k_(env.k()), options_(env.options()) {}

  void Flag(Rule rule, const Event& e, uint64_t handle, std::string message,
            const Ring* last = nullptr) {
    env_.Flag(rule, e, handle, std::move(message), last);
  }
  void Warn(Rule rule, const Event& e, uint64_t handle, std::string message,
            const Ring* last = nullptr) {
    env_.Warn(rule, e, handle, std::move(message), last);
  }
  void FlagAt(Rule rule, uint64_t seq, uint32_t tid, CallId call, bool dc_table, uint64_t handle,
              std::string message) {
    env_.FlagAt(rule, seq, tid, call, dc_table, handle, std::move(message));
  }
  // Moves record `r` (a Ctx, CommandList or Local) to `s` and pushes the move on its
  // "[last: ...]" ring; returns the state it left.
  template <typename Record>
  static State Advance(Record& r, State s, const Event& e) {
    State from = r.state;
    r.state = s;
    r.last.Push(s, e.seq, e.call);
    return from;
  }
  static uint64_t Arg(const Event& e, int16_t f) { return CheckEnv::Arg(e, f); }
  absl::Span<const uint64_t> ArrayElems(const Event& e, const CallMeta& m, size_t i,
                                        uint32_t* count) const {
    return env_.ArrayElems(e, m, i, count);
  }
  HandleSlot& Slot(uint64_t id) { return env_.Slot(id); }
  absl::string_view Token(uint64_t id) const { return env_.Token(id); }
  static absl::string_view CallName(CallId c) { return CheckEnv::CallName(c); }
  static std::string HandleTypeName(int64_t type) { return CheckEnv::HandleTypeName(type); }
  const Event* Enclosing(const Event& e) const { return env_.Enclosing(e); }

  // Peer records (read-only: a peer changes them through the owner's methods) and queries
  // (defined in trackers.h).
  inline const Ctx& ctx(int32_t c) const;
  inline const CommandList& cl(int32_t i) const;
  inline const Object& obj(int32_t i) const;
  inline const Local& local(int32_t i) const;
  inline std::string CtxName(int32_t c) const;
  inline bool Complete(int32_t c) const;
  inline int32_t LookupCtx(uint64_t h);

  CheckEnv& env_;
  Trackers& t_;
  const CallTable& table_;
  const Constants& k_;
  const CheckOptions& options_;
};

}  // namespace cltrace::check::internal

#endif  // CLTRACE_CHECK_INTERNAL_TRACKER_H_
