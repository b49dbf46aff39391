// cltrace stats FILE: recycling and lifetime statistics (check/stats.h;
// cli/stats_output.h prints them).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check/stats.h"
#include "cli/args.h"
#include "cli/stats_output.h"
#include "cli/trace_input.h"
#include "cli/verb.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace stats FILE [--json] [--salvage] [--quiet]\n"
    "\n"
    "Command-list statistics of a trace (.cltrace or .jsonl): recycle hit rate\n"
    "(RecycleCreateCommandList / all command lists made), command lists recycled per Finish\n"
    "(the drained RecycleCommandList calls), executions per list, handles alive over time\n"
    "(command lists, deferred contexts, IC objects, local handles) and callbacks per DDI\n"
    "(IC::/DC:: for the table the enclosing call went through).\n"
    "\n"
    "  --json      one JSON object with the same figures (for scripts)\n"
    "  --salvage   skip corrupt chunks of a .cltrace\n"
    "  --quiet     no progress bar (shown on a terminal when reading takes over a second)\n"
    "\n"
    "exit: 0 ok; 2 bad input or bad usage\n";

int RunStatsVerb(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::unique_ptr<check::StatsBuilder> stats;
  bool json = false;
  return StreamVerbOnTrace(
      "stats", args,
      ArgSpec("stats", kUsage).Flags({"--json", "--salvage", "--quiet"}).Positional(1, 1), out, err,
      [&](const ParsedArgs& parsed, const format::SeqStream& in) {
        json = parsed.Flag("--json");
        stats = std::make_unique<check::StatsBuilder>(
            in.handles(), ReplayOf(parsed.positional[0], parsed.Flag("--salvage")));
        return StreamWork{[&](const format::Event& e) { return stats->Add(e); },
                          [&](const absl::Status& add_error) {
                            if (!add_error.ok()) {
                              err << "cltrace stats: " << add_error.message() << "\n";
                              return static_cast<int>(kExitBadInput);
                            }
                            return json ? PrintStatsJson(stats->Finish(), out)
                                        : PrintStats(stats->Finish(), out);
                          }};
      });
}

const VerbRegistrar kStats({"stats",
                            "recycle hit rate, lists per Finish, handles alive, "
                            "callbacks per DDI",
                            kUsage, RunStatsVerb});

}  // namespace
}  // namespace cltrace::cli
