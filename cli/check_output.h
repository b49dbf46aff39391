// `cltrace check`'s front end: its options, the text and JSON reports and the exit code. The
// checking itself is check/check_trace.h; loading FILE is cli/trace_input.h.
//
// Text report (docs/rules.md "Output"): one line per finding (check::FormatViolation),
// violations first, then warnings; a last line "# N calls, V violations, W warnings" closes
// the report.
// JSON report: {"calls": N, "violations": [{"rule": "R40", "seq": 12, "tid": 1,
//   "fn": "CommandListExecute", "handle": "cl1", "message": "..."}], "warnings": [...]}
// Exit code: kExitOk clean (warnings allowed), kExitProblems violations found, kExitBadInput
// bad input.
//
// Thread-safety: stateless functions.
//
// Example:
//   absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, CheckArgSpec(kUsage));
//   absl::StatusOr<CheckCommandLine> cmd = CheckCommandLineFrom(*parsed);
//   int code = RunCheck(cmd->options, cmd->json, trace.events, trace.handles, out, err);
#ifndef CLTRACE_CLI_CHECK_OUTPUT_H_
#define CLTRACE_CLI_CHECK_OUTPUT_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "check/checker.h"
#include "cli/args.h"
#include "format/event.h"

namespace cltrace::cli {

struct CheckCommandLine {
  std::string file;
  check::CheckOptions options;
  bool json = false;
  bool salvage = false;
};

// The verb's arguments: FILE plus
//   --rules R40,R45   (or --rules=R40,R45)   judge only these rules
//   --json                                  JSON report
//   --nested-execute-handle=local|ic        ddi-spec §3.3 setting (default local)
//   --amortized-max-submits=N               R71 threshold
//   --dc-amortized-max-calls=N              R72 threshold
//   --salvage                               skip corrupt chunks of a .cltrace
//   --quiet                                 no progress bar
ArgSpec CheckArgSpec(const char* usage);

// The command line of ParseArgs(args, CheckArgSpec(...)); InvalidArgument naming the option
// on a bad value.
absl::StatusOr<CheckCommandLine> CheckCommandLineFrom(const ParsedArgs& parsed);

// Applies one of the value-taking options above (name with "--") to `options`.
// InvalidArgument names the option on a bad value.
absl::Status ApplyCheckOption(absl::string_view name, absl::string_view value,
                              check::CheckOptions* options);

// Runs check::CheckTrace and prints the report (JSON with `json`) to `out`; errors
// (unsorted events, unknown call ids) go to `err` and return kExitBadInput.
int RunCheck(const check::CheckOptions& options, bool json, absl::Span<const format::Event> events,
             const format::TokenTable& handles, std::ostream& out, std::ostream& err);

class LiveHandles;  // cli/lifecycle_output.h

// Prints a checker's result as RunCheck does; returns RunCheck's exit code for it. With
// `leaks`, the text report lists the handles alive at the end between the findings and the
// last line (LiveHandles::PrintLeaks; not a finding, no effect on the exit code).
int PrintCheckResult(const check::CheckResult& result, bool json, const format::TokenTable& handles,
                     std::ostream& out, const LiveHandles* leaks = nullptr);

// JSON string literal of `s` (quotes included).
std::string JsonString(absl::string_view s);

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_CHECK_OUTPUT_H_
