// The contract checker: judges a trace against the trace-checkable rules of ddi-spec §5
// without any driver. One pass over the events in entry order runs the three handle state
// machines of §3 (command lists, deferred contexts, context-local handles), the query and
// map trackers of §3.4, thread-domain tracking from entry/exit positions (§0.2) and the
// sequence rules of §4.
//
// Every rule is keyed by (table, function): the table a device call went through is given by
// its hDevice — the hDrvDevice of CreateDevice is the immediate context, the hDrvContext of
// CreateDeferredContext is that deferred context.
//
// Thread-safety: a Checker is single-threaded; separate Checkers are independent.
//
// Example:
//   CheckOptions options;
//   absl::StatusOr<CheckResult> r = Check(trace.events, trace.handles, options);
//   if (r.ok()) for (const Violation& v : r->violations) ...  // check_trace.h formats one
#ifndef CLTRACE_CHECK_CHECKER_H_
#define CLTRACE_CHECK_CHECKER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "check/rules.h"
#include "check/states.h"
#include "format/event.h"
#include "rules/finding.h"

namespace cltrace::format {
struct PositionGaps;  // format/trace_reader.h
}  // namespace cltrace::format

namespace cltrace::check {

// ddi-spec §3.3 open question: which handle DC::CommandListExecute receives.
enum class NestedExecuteHandle : uint8_t {
  kLocal,  // the DC-local CL handle (default; docs imply it)
  kIc,     // the IC CL handle (what 11on12 assumes)
};

// Thresholds of the heuristic rules (project choices, ddi-spec §8.15). Violations of
// heuristic rules are warnings.
struct HeuristicThresholds {
  // R71: warn when this many IC submits (pfnRenderCb inside IC calls) pass without any
  // pfnPerformAmortizedProcessingCb on the IC core layer.
  uint32_t amortized_max_submits_without = 8;
  // R72: warn when a deferred context makes this many DC-table calls in one recording
  // without calling pfnPerformAmortizedProcessingCb on its core layer.
  uint32_t dc_amortized_max_calls = 100000;
};

struct CheckOptions {
  RuleSet rules = AllTraceRules();
  NestedExecuteHandle nested_execute_handle = NestedExecuteHandle::kLocal;
  HeuristicThresholds heuristics;
  // Stop collecting (but keep counting) after this many findings, to bound memory.
  size_t max_findings = 100000;
  // The trace's string table (annotations of a .cltrace), or nullptr. R5 is judged from the
  // recorder's "table-rewrite (R5)" notes, which only binary traces carry.
  const format::TokenTable* strings = nullptr;
  // Records of finished lifetimes (command lists, objects, local handles, allocations) are
  // dropped once nothing can reach them, whenever the checker holds this many and twice what
  // the last such compaction kept (and an eighth of the handle ids): memory follows the live
  // handles, not the trace. 0: after every event (tests; slow).
  size_t compact_above = 4096;
  // Streaming runs without a transition observer (Checker::Begin): the handles no call named
  // in the last `spill_after` calls whose lifetimes are over -- closed local handles,
  // destroyed objects, deallocated allocations -- move with their histories to an unlinked
  // temporary file in $TMPDIR (or /tmp) and come back when a call names one of them again
  // (check/internal/handle_spill.h). Findings do not change; memory follows the live and
  // recently used handles instead of every handle value of the trace. 0: keep all in memory.
  uint64_t spill_after = uint64_t{1} << 20;
  // CheckTrace only: the positions missing from a recording (format::PositionGaps, FORMAT.md
  // §5.5; not owned). Findings about a handle whose history crosses a hole are withheld and
  // summed up in one GAPS warning (docs/rules.md, "Traces with gaps").
  const format::PositionGaps* gaps = nullptr;
};

using rules::Severity;

// One state change as shown in a violation's "[last: ...]" tail.
// (Members ordered for size: 16 bytes, three in every record's "[last: ...]" ring.)
struct LastTransition {
  uint64_t seq;
  format::CallId call;
  State state;
};

// A finding of the checker: the rules::Finding every producer reports (rule, severity, seq =
// entry position of the offending call, handle = TokenTable id of the handle it is about or 0,
// message) plus where in the trace it happened.
struct Violation : rules::Finding {
  uint32_t tid = 0;
  format::CallId call = format::CallId::kInvalid;
  bool dc_table = false;  // the offending call went through a DC table
  // The handle's most recent transitions before the offending call, oldest first.
  absl::InlinedVector<LastTransition, 3> last;
};

struct CheckResult {
  uint64_t calls = 0;                 // events judged
  std::vector<Violation> violations;  // severity kError, in seq order of detection
  std::vector<Violation> warnings;    // severity kWarning
  uint64_t dropped_findings = 0;      // over CheckOptions::max_findings
};

// Receives every handle state change (the lifecycle analysis builds on this).
class TransitionObserver {
 public:
  virtual ~TransitionObserver() = default;
  virtual void OnTransition(const TransitionEvent& t) = 0;
  // Every device-layer call, with the table it went through (after its transitions).
  virtual void OnDeviceCall(const format::Event& e, bool dc_table) {
    (void)e;
    (void)dc_table;
  }
  // Lifetime `lifetime` of `role` is over: no transition of it follows (its record was
  // dropped, CheckOptions::compact_above; a context once destroyed and its handle value
  // reused or dropped). Lifetimes still held at the end get no call.
  virtual void OnRetired(HandleRole role, uint32_t lifetime) {
    (void)role;
    (void)lifetime;
  }
  // Local handle lifetime `lifetime` (HandleRole::kLocal, in its last state, Closed) is over
  // at `seq` (ddi-spec §3.3 C: its memory went back to the runtime at the close): the runtime
  // recycled that memory (the handle value begins a new lifetime, of any role) or destroyed
  // its deferred context. Its Closed interval ends there; no transition of it follows.
  // Closed local handles whose DC outlives the trace get no call.
  virtual void OnLocalEnded(uint32_t lifetime, uint64_t seq) {
    (void)lifetime;
    (void)seq;
  }
  // True if OnRetired and OnLocalEnded are wanted: only then does the checker keep what they
  // need (the closed local handles of every live DC, the records until they are dropped
  // rather than moved out of memory: CheckOptions::spill_after).
  virtual bool WantsEndings() const { return false; }
};

// Re-reads the whole trace in seq order, calling `visit` for every event (for a checker fed
// event by event that must look ahead: which handles are DCs, GuessDc). Its handle ids are
// those of the table the events are checked with.
using TraceReplay =
    std::function<absl::Status(const std::function<void(const format::Event&)>& visit)>;

class Checker {
 public:
  explicit Checker(const CheckOptions& options);
  ~Checker();
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;

  // Optional; must outlive Run. Not owned.
  void set_observer(TransitionObserver* observer);

  // Judges `events` (sorted by seq, as format::LoadTrace and ParseJsonl deliver them).
  // InvalidArgument if the events are not sorted by seq or a seq repeats (the call index is
  // in the message). Handle fields are ids of `handles`.
  absl::StatusOr<CheckResult> Run(absl::Span<const format::Event> events,
                                  const format::TokenTable& handles);

  // The same run, fed one event at a time in seq order (a trace streamed from its file,
  // format/seq_stream.h): Begin, Add every event, Finish. Only the calls still open are held
  // (the parents the rules look up). `handles` may grow while events are added (definitions
  // read with them); `replay` re-reads the trace when a rule needs to look ahead. Add's
  // errors are Run's.
  void Begin(const format::TokenTable& handles, TraceReplay replay);
  absl::Status Add(const format::Event& event);
  CheckResult Finish();
  // The findings so far of a run fed event by event (between Begin and Finish): a live
  // report prints the ones added since it last looked. Finish may still add findings (GPU
  // deadlines resolved at the end).
  const CheckResult& findings() const;

  // Records the trackers hold now (command lists, IC objects, local handles, allocations):
  // bounded by the live handles of the trace, not by its length (CheckOptions::compact_above).
  size_t records_held() const;
  // What memory the run holds for handles, and what CheckOptions::spill_after moved out.
  struct HandleMemory {
    size_t records = 0;         // records_held()
    size_t slots = 0;           // handle-id slots in memory
    uint64_t moved_out = 0;     // clusters (a handle's slot and records) moved out of memory
    uint64_t brought_back = 0;  // clusters brought back by a call naming one of their handles
    uint64_t file_bytes = 0;    // the temporary file's size
  };
  HandleMemory handle_memory() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Convenience: one Checker, one Run.
absl::StatusOr<CheckResult> Check(absl::Span<const format::Event> events,
                                  const format::TokenTable& handles,
                                  const CheckOptions& options = {});

}  // namespace cltrace::check

#endif  // CLTRACE_CHECK_CHECKER_H_
