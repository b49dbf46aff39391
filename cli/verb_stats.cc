// cltrace stats FILE: recycling and lifetime statistics (check/stats.h;
// cli/stats_output.h prints them).
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/stats_output.h"
#include "cli/trace_input.h"
#include "cli/verb.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace stats FILE [--salvage]\n"
    "\n"
    "Command-list statistics of a trace (.cltrace or .jsonl): recycle hit rate\n"
    "(RecycleCreateCommandList / all command lists made), command lists recycled per Finish\n"
    "(the drained RecycleCommandList calls), executions per list, handles alive over time\n"
    "(command lists, deferred contexts, IC objects, local handles) and callbacks per DDI\n"
    "(IC::/DC:: for the table the enclosing call went through).\n"
    "\n"
    "  --salvage   skip corrupt chunks of a .cltrace\n"
    "\n"
    "exit: 0 ok; 2 bad input or bad usage\n";

int RunStatsVerb(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return RunVerbOnTrace("stats", args,
                        ArgSpec("stats", kUsage).Flags({"--salvage"}).Positional(1, 1), out, err,
                        [&](const ParsedArgs&, const TraceInput& in) {
                          return RunStats(in.events, in.handles, out, err);
                        });
}

const VerbRegistrar kStats({"stats",
                            "recycle hit rate, lists per Finish, handles alive, "
                            "callbacks per DDI",
                            kUsage, RunStatsVerb});

}  // namespace
}  // namespace cltrace::cli
