// cltrace lifecycle FILE [--handle H]: state timelines of command lists, deferred contexts
// and context-local handles (check/lifecycle.h; cli/lifecycle_output.h prints them).
#include <memory>
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
    "usage: cltrace lifecycle FILE [--handle H] [--json] [--salvage] [--quiet]\n"
    "\n"
    "Prints, for every command list, deferred context and context-local handle of a trace\n"
    "(.cltrace or .jsonl), its state intervals [from-seq, to-seq) with the call that caused\n"
    "each transition (DC:: marks a call through a deferred context's table) and the owning\n"
    "deferred context; local handles per recording. A handle value reused after its\n"
    "destruction is a new lifetime (#N).\n"
    "\n"
    "  --handle H   only handle H (its token as in the trace), with the local handles that\n"
    "               stand for it; IC objects are listed only this way\n"
    "  --json       one JSON object with the same lifetimes and intervals (for scripts)\n"
    "  --salvage    skip corrupt chunks of a .cltrace\n"
    "  --quiet      no progress bar (shown on a terminal when reading takes over a second)\n"
    "\n"
    "exit: 0 ok; 2 bad input, unknown handle or bad usage\n";

int RunLifecycleVerb(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::unique_ptr<check::LifecycleBuilder> builder;
  LifecycleOptions options;
  const format::TokenTable* handles = nullptr;
  bool json = false;
  return StreamVerbOnTrace(
      "lifecycle", args, LifecycleArgSpec(kUsage), out, err,
      [&](const ParsedArgs& parsed, const format::SeqStream& in) {
        options.handle = parsed.Option("--handle").value_or("");
        json = parsed.Flag("--json");
        handles = &in.handles();
        builder = std::make_unique<check::LifecycleBuilder>(
            in.handles(), ReplayOf(parsed.positional[0], parsed.Flag("--salvage")), options.check);
        return StreamWork{[&](const format::Event& e) { return builder->Add(e); },
                          [&](const absl::Status& add_error) {
                            // The handle is looked up once every definition was read.
                            absl::StatusOr<uint64_t> want = LifecycleHandle(options, *handles);
                            if (!want.ok()) {
                              err << want.status().message() << "\n";
                              return static_cast<int>(kExitBadInput);
                            }
                            if (!add_error.ok()) {
                              err << "cltrace lifecycle: " << add_error.message() << "\n";
                              return static_cast<int>(kExitBadInput);
                            }
                            return json
                                       ? PrintLifecycleJson(builder->Finish(), *want, *handles, out)
                                       : PrintLifecycle(builder->Finish(), *want, *handles, out);
                          }};
      });
}

const VerbRegistrar kLifecycle({"lifecycle",
                                "state timelines of command lists, deferred contexts and "
                                "local handles",
                                kUsage, RunLifecycleVerb});

}  // namespace
}  // namespace cltrace::cli
