// cltrace check FILE: judges a trace against the contract rules of ddi-spec §5
// (check/check_trace.h does the work, cli/check_output.h prints the report; docs/rules.md
// lists the rules).
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check/check_trace.h"
#include "cli/args.h"
#include "cli/check_output.h"
#include "cli/lifecycle_output.h"
#include "cli/progress.h"
#include "cli/trace_input.h"
#include "cli/verb.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace check FILE [--rules R40,R45...] [--json] [--salvage] [--quiet]\n"
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
    "warnings (heuristic rules) say \"warning:\"; then the handles still alive at the end of\n"
    "the trace (a leak summary, not a finding: no effect on the exit code),\n"
    "  leak: ROLE H #N STATE since seq=S by CALL [(owner DC D)]\n"
    "and a last line that counts calls and findings.\n"
    "\n"
    "  --rules LIST                   judge only these rules (comma-separated ids)\n"
    "  --json                         {\"calls\": N, \"violations\": [...], \"warnings\": [...]}\n"
    "  --nested-execute-handle=local|ic  the handle DC CommandListExecute takes (default local)\n"
    "  --amortized-max-submits=N      R71: IC submits without amortized processing (default 8)\n"
    "  --dc-amortized-max-calls=N     R72: DC calls without amortized processing (default 100000)\n"
    "  --salvage                      skip corrupt chunks of a .cltrace\n"
    "  --quiet                        no progress bar (shown on a terminal after a second)\n"
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
  format::SeqStreamOptions stream_options;
  stream_options.salvage = cmd->salvage;
  std::unique_ptr<format::SeqStream> in = OpenVerbStream("check", path, stream_options, err);
  if (in == nullptr) return kExitBadInput;
  options.strings = &in->strings();  // R5: the recorder's table-rewrite notes
  // Rules that look ahead (GuessDc) and the gaps filter read the trace again.
  stream_options.gaps = false;
  check::TraceReplay replay =
      [&](const std::function<void(const format::Event&)>& visit) -> absl::Status {
    absl::StatusOr<std::unique_ptr<format::SeqStream>> again =
        format::SeqStream::Open(path, stream_options);
    if (!again.ok()) return again.status();
    format::Event e;
    while ((*again)->Next(&e)) visit(e);
    return (*again)->status();
  };
  check::StreamCheck checker(options, in->handles(), replay, in->dense_positions());
  LiveHandles live;  // the leak summary
  checker.AddObserver(&live);
  absl::Status check_error;
  {
    Progress progress("check", parsed.Flag("--quiet"));
    format::Event e;
    while (in->Next(&e)) {
      progress.Update(in->delivered(), in->expected_events(),
                      static_cast<double>(in->position()) / std::max<uint64_t>(1, in->file_size()));
      // After an error the trace is still read to its end: damage there is reported first.
      if (check_error.ok()) check_error = checker.Add(e);
    }
  }
  if (!in->status().ok()) {
    // No verdict on part of a trace: a "0 violations" line above the error would read as a
    // clean result. (--salvage reads past corrupt chunks of a .cltrace.)
    err << "cltrace check: " << path << ": " << in->status().message() << " (nothing judged";
    if (in->events_read() != 0)
      err << ": a verdict needs the whole trace, " << in->events_read()
          << " calls were read before it";
    if (in->format() == TraceFormat::kCltrace && !parsed.Flag("--salvage"))
      err << "; --salvage skips corrupt chunks";
    err << ")\n";
    return kExitBadInput;
  }
  if (!check_error.ok()) {
    err << "cltrace check: " << check_error.message() << "\n";
    return kExitBadInput;
  }
  // holes only for a recording (SeqStream::gaps)
  check::CheckResult result = checker.Finish(in->gaps());
  return PrintCheckResult(result, cmd->json, in->handles(), out, &live);
}

const VerbRegistrar kCheck({"check",
                            "judge a trace against the DDI contract rules (R1-R80); list leaks",
                            kUsage, RunCheckVerb});

}  // namespace
}  // namespace cltrace::cli
