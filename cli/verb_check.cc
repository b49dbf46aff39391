// cltrace check FILE: judges a trace against the contract rules of ddi-spec §5
// (check/check_trace.h does the work, cli/check_output.h prints the report; docs/rules.md
// lists the rules).
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/check_output.h"
#include "cli/trace_input.h"
#include "cli/verb.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace check FILE [--rules R40,R45...] [--json] [--salvage]\n"
    "                          [--nested-execute-handle=local|ic]\n"
    "                          [--amortized-max-submits=N] [--dc-amortized-max-calls=N]\n"
    "\n"
    "Judges a trace (.cltrace or .jsonl) against the rules of ddi-spec section 5 without any\n"
    "driver: the command-list, deferred-context and context-local handle state machines,\n"
    "the query and map trackers, thread domains from entry/exit positions and the runtime\n"
    "call sequences. docs/rules.md lists every rule and how it is checked.\n"
    "\n"
    "Output: one line per finding,\n"
    "  RULE seq=S tid=T fn=NAME handle=H: message [last: State@seq Call, ...]\n"
    "warnings (heuristic rules) say \"warning:\"; a last line counts calls and findings.\n"
    "\n"
    "  --rules LIST                   judge only these rules (comma-separated ids)\n"
    "  --json                         {\"calls\": N, \"violations\": [...], \"warnings\": [...]}\n"
    "  --nested-execute-handle=local|ic  the handle DC CommandListExecute takes (default local)\n"
    "  --amortized-max-submits=N      R71: IC submits without amortized processing (default 8)\n"
    "  --dc-amortized-max-calls=N     R72: DC calls without amortized processing (default 100000)\n"
    "  --salvage                      skip corrupt chunks of a .cltrace\n"
    "\n"
    "exit: 0 no violations (warnings allowed); 1 violations found; 2 bad input or usage\n";

int RunCheckVerb(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ArgSpec spec = CheckArgSpec(kUsage);
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(args, spec, &parsed, out, err)) return *done;
  absl::StatusOr<CheckCommandLine> cmd = CheckCommandLineFrom(parsed);
  if (!cmd.ok()) {
    err << "cltrace check: " << cmd.status().message() << "\n";
    return kExitBadInput;
  }
  check::CheckOptions& options = cmd->options;
  const std::string& path = parsed.positional[0];
  absl::StatusOr<TraceInput> in = ReadTrace(path, cmd->salvage);
  if (!in.ok()) {
    err << "cltrace check: " << path << ": " << in.status().message() << "\n";
    return kExitBadInput;
  }
  if (!in->error.ok()) {
    // No verdict on part of a trace: a "0 violations" line above the error would read as a
    // clean result. (--salvage reads past corrupt chunks of a .cltrace.)
    err << "cltrace check: " << path << ": " << in->error.message() << " (nothing judged";
    if (!in->events.empty())
      err << ": a verdict needs the whole trace, " << in->events.size()
          << " calls were read before it";
    if (in->format == TraceFormat::kCltrace && !parsed.Flag("--salvage"))
      err << "; --salvage skips corrupt chunks";
    err << ")\n";
    return kExitBadInput;
  }
  options.strings = &in->strings;  // R5: the recorder's table-rewrite notes
  options.gaps = &in->gaps;        // holes only for a recording (ReadTrace)
  // Findings go to stdout only when the check ran to a verdict (not on exit 2).
  std::ostringstream findings;
  int code = RunCheck(options, cmd->json, in->events, in->handles, findings, err);
  if (code != kExitBadInput) out << findings.str();
  return code;
}

const VerbRegistrar kCheck({"check", "judge a trace against the DDI contract rules (R1-R80)",
                            kUsage, RunCheckVerb});

}  // namespace
}  // namespace cltrace::cli
