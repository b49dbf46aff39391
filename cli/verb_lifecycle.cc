// cltrace lifecycle FILE [--handle H]: state timelines of command lists, deferred contexts
// and context-local handles (check/lifecycle.h; cli/lifecycle_output.h prints them).
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/lifecycle_output.h"
#include "cli/trace_input.h"
#include "cli/verb.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace lifecycle FILE [--handle H] [--salvage]\n"
    "\n"
    "Prints, for every command list, deferred context and context-local handle of a trace\n"
    "(.cltrace or .jsonl), its state intervals [from-seq, to-seq) with the call that caused\n"
    "each transition (DC:: marks a call through a deferred context's table) and the owning\n"
    "deferred context; local handles per recording. A handle value reused after its\n"
    "destruction is a new lifetime (#N).\n"
    "\n"
    "  --handle H   only handle H (its token as in the trace), with the local handles that\n"
    "               stand for it; IC objects are listed only this way\n"
    "  --salvage    skip corrupt chunks of a .cltrace\n"
    "\n"
    "exit: 0 ok; 2 bad input, unknown handle or bad usage\n";

int RunLifecycleVerb(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return RunVerbOnTrace("lifecycle", args, LifecycleArgSpec(kUsage), out, err,
                        [&](const ParsedArgs& parsed, const TraceInput& in) {
                          LifecycleOptions options;
                          options.handle = parsed.Option("--handle").value_or("");
                          return RunLifecycle(options, in.events, in.handles, out, err);
                        });
}

const VerbRegistrar kLifecycle({"lifecycle",
                                "state timelines of command lists, deferred contexts and "
                                "local handles",
                                kUsage, RunLifecycleVerb});

}  // namespace
}  // namespace cltrace::cli
