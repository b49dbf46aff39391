// The `cltrace check` verb as a library function: argument parsing, the text and JSON
// reports, and the exit code. Loading FILE (.cltrace or .jsonl) is the caller's job; this
// file never touches the file system.
//
// Text report (docs/rules.md "Output"): one line per finding,
//   R40 seq=12 tid=1 fn=CommandListExecute handle=cl1: <message> [last: Valid@5 CreateCommandList,
//   RecycleDestroyed@9 RecycleDestroyCommandList]
// warnings (heuristic rules, "not addressed by the sources") carry "warning: " before the
// message; a last line "# N calls, V violations, W warnings" closes the report.
// JSON report: {"calls": N, "violations": [{"rule": "R40", "seq": 12, "tid": 1,
//   "fn": "CommandListExecute", "handle": "cl1", "message": "..."}], "warnings": [...]}
// Exit code: 0 clean (warnings allowed), 1 violations found, 2 bad input.
//
// Thread-safety: stateless functions.
//
// Example:
//   auto cmd = ParseCheckArgs({"t.cltrace", "--rules", "R40,R45", "--json"});
//   int code = RunCheck(cmd->options, trace.events, trace.handles, std::cout, std::cerr);
#ifndef CLTRACE_CHECK_CHECK_COMMAND_H_
#define CLTRACE_CHECK_CHECK_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "check/checker.h"
#include "format/event.h"

namespace cltrace::check {

inline constexpr int kExitClean = 0;
inline constexpr int kExitViolations = 1;
inline constexpr int kExitBadInput = 2;

struct CheckCommandLine {
  std::string file;
  CheckOptions options;
};

// Parses the verb's arguments (without the verb): FILE plus
//   --rules R40,R45   (or --rules=R40,R45)   judge only these rules
//   --json                                  JSON report
//   --nested-execute-handle=local|ic        ddi-spec §3.3 setting (default local)
//   --amortized-max-submits=N               R71 threshold
//   --dc-amortized-max-calls=N              R72 threshold
// InvalidArgument for an unknown flag, a bad value, a missing or second FILE.
absl::StatusOr<CheckCommandLine> ParseCheckArgs(absl::Span<const std::string> args);

// Applies one of the value-taking options above (name with "--") to `options`, for callers
// with their own argument parser. InvalidArgument names the option on a bad value.
absl::Status ApplyCheckOption(absl::string_view name, absl::string_view value,
                              CheckOptions* options);

// One finding as a text line (no trailing newline).
std::string FormatViolation(const Violation& v, const format::TokenTable& handles);
// The "[last: ...]" tail of a finding, or "" if the handle has no recorded transitions.
std::string FormatLast(const Violation& v);

// Runs the checker and prints the report to `out`; errors (unsorted events, unknown call
// ids) go to `err` and return kExitBadInput. With options.gaps holding holes, findings
// about handles whose history crosses one are withheld (WithholdAcrossGaps).
int RunCheck(const CheckOptions& options, absl::Span<const format::Event> events,
             const format::TokenTable& handles, std::ostream& out, std::ostream& err);

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

// The pseudo-rule of that finding (not in Rules(); never a violation).
const RuleInfo& GapsRule();

// JSON string literal of `s` (quotes included).
std::string JsonString(absl::string_view s);

}  // namespace cltrace::check

#endif  // CLTRACE_CHECK_CHECK_COMMAND_H_
