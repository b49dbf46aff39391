// ContextTracker: the contexts of a trace -- immediate contexts (devices) and the deferred-
// context state machine of ddi-spec §3.2 -- and the thread domains they enter (§0.2, R10-R12).
// It consumes adapter calls (CreateDevice, threading GetCaps), the deferred-context calls
// (Create/RecycleCreate/Destroy/Abandon, CalcPrivateCommandListSize), the gate every DC-table
// call passes (R53, R72, R51) and amortized-processing callbacks (R19, R71, R72). It reports
// R1, R10-R12, R19, R36, R48, R51, R53, R71, R72 (and R4, R12, R14, R34, R65 for an IC-only
// function through a DC table). Peers look contexts up by handle (Lookup, DcOf), read their
// records (at, read-only) and tell it what happened to them (To, OnFinished, Note*).
//
// Thread-safety: none (one per Checker, which is single-threaded).
//
// Example:
//   int32_t c = t.contexts.ContextOf(e, m);  // the table e went through
//   if (t.contexts.at(c).dc && t.contexts.DcGate(e, m, c)) { ... }
#ifndef CLTRACE_CHECK_INTERNAL_CONTEXT_TRACKER_H_
#define CLTRACE_CHECK_INTERNAL_CONTEXT_TRACKER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "check/internal/tracker.h"

namespace cltrace::check::internal {

// The call of one thread domain (§0.2) that returns last among those entered so far.
struct DomainSlot {
  uint64_t seq = 0;
  uint64_t end = 0;
  uint32_t tid = 0;
  CallId call = CallId::kInvalid;
  Rule rule = Rule::kR10;  // R10, R11 (non-shared primary) or R12 (IC-table call of a DC's Finish)
  bool used = false;

  // Holds `e` (entered for `r`) when it returns later than the call held so far.
  void Hold(const Event& e, Rule r = Rule::kR10);
};

struct Ctx {
  bool dc = false;
  bool retired = false;   // its lifetime is over (RetireFinished)
  bool implicit = false;  // first seen as an hDevice, never created in the trace
  State state = State::kNone;
  uint64_t handle = 0;
  uint64_t core_layer = 0;
  int32_t device = -1;  // DC: its immediate context
  uint32_t recording = 0;
  Ring last;
  DomainSlot domain;
  // Deferred context.
  bool has_work = false;
  bool oom_pending = false;
  bool closes_started = false;
  uint64_t oom_seq = 0;
  uint32_t calls_since_amortized = 0;
  bool r72_warned = false;
  uint64_t cl_size = 0;
  std::vector<int32_t> rec_queries;  // IC queries this recording began or ended
  std::vector<int32_t> rec_maps;     // IC dynamic resources this recording mapped
  // Immediate context.
  bool dc_support = false;
  // R35: seq of the GetCaps(D3D11DDICAPS_THREADING) of its adapter that reported no command
  // lists (0: none seen) -- the only evidence that the runtime must not query local sizes.
  uint64_t no_lists_caps_seq = 0;
  bool removed = false;  // reported device removal (R27)
  uint32_t submits_since_amortized = 0;
  uint64_t last_amortized_parent = 0;  // enclosing call of the last amortized callback
  bool submit_since_amortized = true;
};

class ContextTracker : public TrackerBase {
 public:
  ContextTracker(CheckEnv& env, Trackers& peers) : TrackerBase(env, peers) {}

  // Peers read contexts; they change them only through the methods below.
  const Ctx& at(int32_t c) const { return ctxs_[c]; }
  size_t size() const { return ctxs_.size(); }
  // "IC h" / "DC h" ("?" for -1).
  std::string Name(int32_t c) const;
  // The context of an hDevice/hDrvContext, -1 if none.
  int32_t Lookup(uint64_t h) { return h == 0 ? -1 : Slot(h).ctx; }
  // Handles created before a trace fragment began cannot be judged as "never created":
  // true if the context (and, for a DC, its device) was created in the trace.
  bool Complete(int32_t c) const;
  // Moves context `c` to `s` (its "[last: ...]" ring and the observer see it).
  void To(int32_t c, State s, const Event& e);
  int32_t New(bool dc, uint64_t handle, uint64_t core, int32_t device, bool implicit,
              const Event& e);
  // The context whose table a device call went through (creating an implicit one for an
  // hDevice the trace never created: a trace may start after CreateDevice).
  int32_t ContextOf(const Event& e, const CallMeta& m) {
    uint64_t h = Arg(e, m.hdevice);
    if (h == 0) return -1;
    int32_t c = Slot(h).ctx;
    return c >= 0 ? c : NewImplicit(h, m, e);
  }
  // The DC a pCreateCommandList/pCreateDeferredContext names (implicit DC if unknown).
  int32_t DcOf(const Event& e, uint64_t h, int32_t device);
  // A fragment's implicit context learns its core layer from the first callback made inside
  // one of its calls (a traced CreateDevice/CreateDeferredContext names it up front).
  void LearnCore(int32_t c, uint64_t rt);
  // R10-R12: `e` enters the thread domain of context `c`.
  void EnterDomain(int32_t c, const Event& e, Rule rule);
  // Some adapter reported D3D11DDICAPS_COMMANDLISTS_BUILD_2 (a deferred-context driver).
  bool caps_build2() const { return caps_build2_; }

  // Adapter calls.
  void OnCreateDevice(const Event& e, const CallMeta& m);
  void OnGetCaps(const Event& e, const CallMeta& m);
  // IC-table calls of the deferred-context machine.
  void OnCreateDeferredContext(const Event& e, const CallMeta& m, int32_t ic);
  void OnRecycleCreateDeferredContext(const Event& e, const CallMeta& m, int32_t ic);
  void OnCalcPrivateCommandListSize(const Event& e, const CallMeta& m, int32_t ic);
  // DC-table calls: false if the call through DC `dc` is not judged further (wrong table,
  // dead DC); counts it for R72.
  bool DcGate(const Event& e, const CallMeta& m, int32_t dc);
  // A top-level Set* on a DC that is not recording: false (flagged) unless it only unbinds.
  bool DcSetterAllowed(const Event& e, const CallMeta& m, int32_t dc);
  void OnAbandon(const Event& e, int32_t dc);
  void OnDestroy(const Event& e, int32_t dc);
  // A Finish (IC CreateCommandList / RecycleCreateCommandList) of a recording DC returned:
  // Closed (nothing bound) if it made the list, FinishFailed otherwise.
  void OnFinished(const Event& e, int32_t dc, bool ok);
  // DC `dc`'s recording began or ended query `o` (map: mapped dynamic resource `o`).
  void NoteRecorded(int32_t dc, int32_t o, bool map);
  // The DC recorded work (a draw, copy, ...): destroying it unfinished is R48.
  void NoteWork(int32_t dc);
  // A local handle of `dc` was closed (the abandon order of R51 starts its closes).
  void NoteLocalClosed(int32_t dc);
  // A call through DC `dc` reported E_OUTOFMEMORY (R29).
  void NoteOutOfMemory(const Event& e, int32_t dc);
  // A call through context `c` reported device removal (its device's answers are fixed, R27).
  void NoteRemoved(int32_t c);
  // The IC answered a deferred-context capability query: the driver supports DCs.
  void NoteDcSupport(int32_t ic) { ctxs_[ic].dc_support = true; }
  // pfnPerformAmortizedProcessingCb (R19, R71, R72).
  void OnAmortizedCb(const Event& e, const CallMeta& m);
  // A pfnRenderCb inside a call of IC `ic` (R71).
  void OnIcSubmit(const Event& e, int32_t ic);

  // Compaction (Trackers::Compact): the objects recordings began, ended or mapped.
  void MarkRefs(RecordMarks& marks) const;
  void Remap(const RecordRemap& r);
  // Tells the observer of the contexts whose lifetime is over: destroyed (or failed) and
  // their handle value gone on to another context.
  void RetireFinished();

 private:
  int32_t NewImplicit(uint64_t h, const CallMeta& m, const Event& e);
  bool GuessDc(uint64_t h, const CallMeta& m, const Event& e);
  void BuildEvidence();
  // Clears a DC's recording (queries, maps, bindings) for the next one.
  void ResetRecording(int32_t dc);

  std::vector<Ctx> ctxs_;
  absl::flat_hash_map<uint64_t, bool> evidence_;  // GuessDc: handle -> is a DC
  bool evidence_built_ = false;
  bool caps_build2_ = false;
  absl::flat_hash_map<uint64_t, uint64_t> no_lists_;  // R35: adapter -> GetCaps seq, no lists
};

}  // namespace cltrace::check::internal

#endif  // CLTRACE_CHECK_INTERNAL_CONTEXT_TRACKER_H_
