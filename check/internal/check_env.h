// CheckEnv: what every tracker of the contract checker shares -- the findings of a run (rule
// switches, the max_findings cap, the table the current call went through), a view of the
// trace (positions, enclosing calls, handle tokens), the per-handle-id slots naming each
// role's current lifetime, and the transition stream for the observer. It judges nothing;
// the trackers (command lists, contexts, objects, local handles, kernel/GPU, threads) own
// the state machines and report through it.
//
// Thread-safety: one CheckEnv per Checker, single-threaded.
//
// Example:
//   CheckEnv env(options);
//   env.Begin(events, handles);
//   env.Flag(Rule::kR40, e, h, "CommandListExecute on a handle that is not a command list");
//   CheckResult r = env.TakeResult();
#ifndef CLTRACE_CHECK_INTERNAL_CHECK_ENV_H_
#define CLTRACE_CHECK_INTERNAL_CHECK_ENV_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "check/checker.h"
#include "check/internal/call_meta.h"
#include "check/internal/slot_table.h"
#include "format/catalog.h"

namespace cltrace::check::internal {

using format::CallId;
using format::Domain;
using format::Event;
using format::Layer;

// The records the checker drops once nothing reaches them (Trackers::Compact): command lists,
// IC objects, local handles and allocations, by index in their tracker's vector.
enum RecordKind : uint8_t { kClRecord, kObjRecord, kLocalRecord, kAllocRecord, kRecordKinds };

constexpr uint64_t kNeverReturned = ~uint64_t{0};
inline uint64_t EndOf(const Event& e) { return e.end == 0 ? kNeverReturned : e.end; }

// The last few transitions of one handle lifetime, for "[last: ...]".
struct Ring {
  LastTransition t[3];
  uint8_t n = 0;
  void Push(State s, uint64_t seq, CallId call) {
    if (n == 3) {
      t[0] = t[1];
      t[1] = t[2];
      n = 2;
    }
    t[n++] = LastTransition{seq, call, s};
  }
};

class CheckEnv {
 public:
  explicit CheckEnv(const CheckOptions& options);

  // Starts a run over `events` (not owned; must outlive the run).
  void Begin(absl::Span<const Event> events, const format::TokenTable& handles);
  // Starts a run fed event by event (Checker::Begin): FindSeq then sees the calls still open.
  void BeginStream(const format::TokenTable& handles, TraceReplay replay);
  // Streaming: `e` is the next event (seq order); forgets the calls that returned before it.
  void Track(const Event& e) {
    if (streaming_) TrackOpen(e);
  }
  // Every event of the trace in seq order (the whole span, or a re-read of the stream).
  absl::Status ForEachEvent(const std::function<void(const Event&)>& visit) const;
  const CheckResult& result() const { return result_; }
  CheckResult TakeResult() { return std::move(result_); }

  const CheckOptions& options() const { return options_; }
  const CallTable& table() const { return table_; }
  const Constants& k() const { return k_; }
  void set_observer(TransitionObserver* o) {
    observer_ = o;
    endings_ = o != nullptr && o->WantsEndings();
  }
  // The observer is told when lifetimes are over (OnRetired, OnLocalEnded).
  bool endings() const { return endings_; }
  TransitionObserver* observer() const { return observer_; }

  // ---- Findings -------------------------------------------------------------------------
  bool On(Rule rule) const { return options_.rules.test(RuleIndex(rule)); }
  // Whether the call being judged went through a DC table (Violation::dc_table).
  void set_dc_table(bool dc) { dc_table_ = dc; }
  bool dc_table() const { return dc_table_; }
  void Flag(Rule rule, const Event& e, uint64_t handle, std::string message,
            const Ring* last = nullptr, Severity severity = Severity::kError) {
    FlagAt(rule, e.seq, e.tid, e.call, dc_table_, handle, std::move(message), last, severity);
  }
  void FlagAt(Rule rule, uint64_t seq, uint32_t tid, CallId call, bool dc_table, uint64_t handle,
              std::string message, const Ring* last = nullptr,
              Severity severity = Severity::kError);
  void Warn(Rule rule, const Event& e, uint64_t handle, std::string message,
            const Ring* last = nullptr) {
    Flag(rule, e, handle, std::move(message), last, Severity::kWarning);
  }

  // ---- The trace ------------------------------------------------------------------------
  absl::Span<const Event> events() const { return events_; }
  static uint64_t Arg(const Event& e, int16_t f) {
    return f >= 0 && static_cast<size_t>(f) < e.args.size() ? e.args[f] : 0;
  }
  // Elements of array number `i` of a call (empty for a NULL array).
  absl::Span<const uint64_t> ArrayElems(const Event& e, const CallMeta& m, size_t i,
                                        uint32_t* count) const;
  // Calls `use` with every non-NULL handle a call names (fields and array elements).
  template <typename F>
  void ForEachHandle(const Event& e, const CallMeta& m, F use) const {
    for (int16_t f : m.handle_fields)
      if (uint64_t v = Arg(e, f); v != 0) use(v);
    for (size_t a = 0; a < m.arrays.size(); ++a) {
      const auto& af = m.arrays[a];
      if (af.handle_elem[0] < 0) continue;
      uint32_t n = 0;
      auto elems = ArrayElems(e, m, a, &n);
      for (uint32_t i = 0; i < n; ++i)
        for (int8_t he : af.handle_elem)
          if (he >= 0 && elems[i * af.stride + he] != 0) use(elems[i * af.stride + he]);
    }
  }
  const Event* FindSeq(uint64_t seq) const;
  // True if the call at `anc` encloses `e`.
  bool IsAncestor(const Event& e, uint64_t anc) const;
  static bool IsCallbackLayer(Layer l) {
    return l == Layer::kCoreLayer || l == Layer::kKernelCb || l == Layer::kDxgkrnl;
  }
  // The nearest enclosing call that is not a callback, or nullptr.
  const Event* Enclosing(const Event& e) const;

  // ---- Handles ------------------------------------------------------------------------
  // The slot of handle id `id` (check/internal/slot_table.h: in pages allocated on first
  // use; a slot moved out of memory comes back here).
  HandleSlot& Slot(uint64_t id) { return slots_.Get(id); }
  SlotTable& slots() { return slots_; }
  absl::string_view Token(uint64_t id) const {
    absl::string_view t = handles_->Token(id);
    return t.empty() ? absl::string_view("?") : t;
  }
  static absl::string_view CallName(CallId c) {
    const format::CallInfo* ci = format::GetCall(c);
    return ci ? absl::string_view(ci->name) : absl::string_view("?");
  }
  static std::string HandleTypeName(int64_t type);
  bool IsDeviceRemovedCode(uint32_t hr) const {
    return hr == k_.deviceremoved || hr == k_.dxgi_deviceremoved;
  }

  // Slots in memory (they pace Checker's compaction).
  size_t slot_count() const { return slots_.resident(); }
  // Compaction (check/internal/tracker.h): the records the handle slots name.
  template <typename F>
  void ForEachSlotRecord(F f) {
    slots_.ForEachResident([&](uint64_t, HandleSlot& s, uint32_t) {
      f(RecordKind{kClRecord}, s.cl);
      f(RecordKind{kObjRecord}, s.obj);
      f(RecordKind{kObjRecord}, s.rtobj);
      f(RecordKind{kLocalRecord}, s.local);
      f(RecordKind{kAllocRecord}, s.alloc);
    });
  }
  // Streaming: every call still in flight (entered, not yet returned) and the latest call.
  template <typename F>
  void ForEachOpenCall(F f) const {
    for (const auto& [seq, e] : open_) f(e);
    if (has_leaf_) f(leaf_);
  }
  bool streaming() const { return streaming_; }
  // An error that stops the run (reading back what HandleSpill moved out failed).
  void SetFatal(absl::Status s) {
    if (fatal_.ok()) fatal_ = std::move(s);
  }
  const absl::Status& fatal() const { return fatal_; }

  // ---- Transitions ----------------------------------------------------------------------
  void Retire(HandleRole role, uint32_t lifetime) {
    if (endings_) observer_->OnRetired(role, lifetime);
  }
  void Emit(HandleRole role, State from, State to, uint32_t lifetime, uint64_t handle,
            const Event& e, uint64_t context, uint64_t ic_handle, uint32_t recording) {
    if (observer_ == nullptr) return;
    // A new lifetime on the memory of a closed local handle: the runtime recycled it.
    if (from == State::kNone && !closed_locals_.empty()) EndClosedLocal(handle, e.seq);
    TransitionEvent t{role,   from,      to,      lifetime,  handle,   e.seq,
                      e.call, dc_table_, context, ic_handle, recording};
    observer_->OnTransition(t);
    if (!endings_) return;
    if (role == HandleRole::kLocal && to == State::kClosedLocal) {
      EndClosedLocal(handle, e.seq);  // (a second close of one value: the first is over)
      closed_locals_[handle] = ClosedLocal{lifetime, context};
      closed_on_[context].insert(handle);
    } else if (role == HandleRole::kDeferredContext &&
               (to == State::kDestroyed || to == State::kCreateFailed)) {
      EndClosedLocalsOf(handle, e.seq);
    }
  }

 private:
  const CheckOptions options_;
  const CallTable& table_;
  const Constants& k_;
  TransitionObserver* observer_ = nullptr;
  bool endings_ = false;
  void TrackOpen(const Event& e);
  absl::Span<const Event> events_;
  bool streaming_ = false;
  TraceReplay replay_;
  absl::flat_hash_map<uint64_t, Event> open_;        // streaming: calls not yet returned
  std::vector<std::pair<uint64_t, uint64_t>> ends_;  // (end, seq) of open_, a min-heap
  Event leaf_;  // streaming: the latest call, when it returned before the next (not in open_)
  bool has_leaf_ = false;
  const format::TokenTable* handles_ = nullptr;
  CheckResult result_;
  bool dc_table_ = false;
  SlotTable slots_;
  absl::Status fatal_;

  // Closed local handles whose lifetime is not over (TransitionObserver::OnLocalEnded), by
  // handle id, and by the handle id of their DC: bounded by the local handle values of the
  // DCs alive, not by the trace.
  struct ClosedLocal {
    uint32_t lifetime = 0;
    uint64_t dc = 0;
  };
  void EndClosedLocal(uint64_t handle, uint64_t seq);
  void EndClosedLocalsOf(uint64_t dc, uint64_t seq);
  absl::flat_hash_map<uint64_t, ClosedLocal> closed_locals_;
  absl::flat_hash_map<uint64_t, absl::flat_hash_set<uint64_t>> closed_on_;
};

}  // namespace cltrace::check::internal

#endif  // CLTRACE_CHECK_INTERNAL_CHECK_ENV_H_
