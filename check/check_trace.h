// Checking a whole trace: the checker plus the rule for traces with gaps (docs/rules.md), and
// the one-line text form of a finding. Loading a trace, printing a report, parsing arguments
// and exit codes are the front end's job (cli/check_output.h for `cltrace check`); this file
// never touches the file system or a stream.
//
// Text form of a finding (docs/rules.md "Output"):
//   R40 seq=12 tid=1 fn=CommandListExecute handle=cl1: <message> [last: Valid@5 CreateCommandList,
//   RecycleDestroyed@9 RecycleDestroyCommandList]
// warnings (heuristic rules, "not addressed by the sources") carry "warning: " before the
// message.
//
// Thread-safety: stateless functions.
//
// Example:
//   absl::StatusOr<CheckResult> r = CheckTrace(options, trace.events, trace.handles);
//   if (r.ok()) for (const Violation& v : r->violations) LOG(INFO) << FormatViolation(v, h);
#ifndef CLTRACE_CHECK_CHECK_TRACE_H_
#define CLTRACE_CHECK_CHECK_TRACE_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "check/checker.h"
#include "format/event.h"

namespace cltrace::check {

// One finding as a text line (no trailing newline).
std::string FormatViolation(const Violation& v, const format::TokenTable& handles);
// The "[last: ...]" tail of a finding, or "" if the handle has no recorded transitions.
std::string FormatLast(const Violation& v);

// Runs the checker over a whole trace. Errors (unsorted events, unknown call ids) are
// InvalidArgument. With options.gaps holding holes, findings about handles whose history
// crosses one are withheld (WithholdAcrossGaps).
absl::StatusOr<CheckResult> CheckTrace(const CheckOptions& options,
                                       absl::Span<const format::Event> events,
                                       const format::TokenTable& handles);

// Traces with gaps (docs/rules.md): removes from `result` every finding (violation or
// warning) about a handle whose history crosses a hole of `gaps` — a position missing
// after the handle's latest creation seen in the trace at or before the finding (from
// position 1 if the trace shows none, and for findings about no handle) and up to the end
// of the offending call — and adds one warning of the pseudo-rule GAPS that says how many
// findings about how many handles were not judged and where the holes are. No-op without
// holes. `creations` maps a handle id to the entry positions of the calls that created it
// (transitions from State::kNone), sorted.
void WithholdAcrossGaps(const format::PositionGaps& gaps, absl::Span<const format::Event> events,
                        const absl::flat_hash_map<uint64_t, std::vector<uint64_t>>& creations,
                        CheckResult* result);

// The same, with the calls' exit positions given by `end_of` (the end of the call entered at
// a finding's seq, 0 if unknown) instead of the events.
void WithholdAcrossGaps(const format::PositionGaps& gaps,
                        const std::function<uint64_t(uint64_t seq)>& end_of,
                        const absl::flat_hash_map<uint64_t, std::vector<uint64_t>>& creations,
                        CheckResult* result);

// CheckTrace for a trace read as a stream (format/seq_stream.h): Add every event in seq order,
// then Finish with the positions' gaps, known only at the end. `replay` re-reads the trace in
// seq order (Checker::Begin, for the rules that look ahead). `may_have_holes`: the trace is a
// recording (only then are creations kept for the gaps, and the exit positions of the
// findings' calls, which the gaps filter needs, noted while the events pass: the calls still
// open are held; only a finding Finish adds about a call that returned long before needs
// `replay`).
class StreamCheck {
 public:
  StreamCheck(const CheckOptions& options, const format::TokenTable& handles, TraceReplay replay,
              bool may_have_holes);
  ~StreamCheck();
  absl::Status Add(const format::Event& e);
  CheckResult Finish(const format::PositionGaps& gaps);
  // One more observer of the checker's transitions (the leak summary of `cltrace check`),
  // besides the one kept for gaps. Not owned; call before the first Add.
  void AddObserver(TransitionObserver* observer);
  // Checker::findings: the findings so far, before any is withheld across gaps.
  const CheckResult& findings() const { return checker_.findings(); }

 private:
  class Creations;
  class Tee;
  // Notes the exit positions of the calls of findings added since the last look.
  void NoteFindingEnds(const format::Event* current);
  std::unique_ptr<Creations> creations_;
  std::unique_ptr<Tee> tee_;
  Checker checker_;
  TraceReplay replay_;
  // may_have_holes: the calls still open that returned after a later call was entered
  // (entry seq, exit position; few: nesting times threads) and their lowest exit; the call
  // added last; the exit positions of the findings' calls; the findings seen so far.
  const uint64_t* OpenEnd(uint64_t seq) const;
  std::vector<std::pair<uint64_t, uint64_t>> open_;
  uint64_t open_min_end_ = UINT64_MAX;
  std::pair<uint64_t, uint64_t> previous_{0, 0};
  absl::flat_hash_map<uint64_t, uint64_t> finding_ends_;
  size_t seen_violations_ = 0;
  size_t seen_warnings_ = 0;
};

// The pseudo-rule of that finding (not in Rules(); never a violation).
const RuleInfo& GapsRule();

}  // namespace cltrace::check

#endif  // CLTRACE_CHECK_CHECK_TRACE_H_
