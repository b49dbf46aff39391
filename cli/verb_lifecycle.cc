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
  ArgSpec spec = LifecycleArgSpec(kUsage);
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(args, spec, &parsed, out, err)) return *done;
  LifecycleOptions options;
  options.handle = parsed.Option("--handle").value_or("");
  const std::string& path = parsed.positional[0];
  absl::StatusOr<TraceInput> in = ReadTrace(path, parsed.Flag("--salvage"));
  if (!in.ok()) {
    err << "cltrace lifecycle: " << path << ": " << in.status().message() << "\n";
    return kExitBadInput;
  }
  int code = RunLifecycle(options, in->events, in->handles, out, err);
  if (!in->error.ok()) {
    out.flush();
    err << "cltrace lifecycle: " << path << ": " << in->error.message() << "\n";
    return kExitBadInput;
  }
  return code;
}

const VerbRegistrar kLifecycle({"lifecycle",
                                "state timelines of command lists, deferred contexts and "
                                "local handles",
                                kUsage, RunLifecycleVerb});

}  // namespace
}  // namespace cltrace::cli
