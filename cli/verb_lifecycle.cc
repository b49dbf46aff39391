// cltrace lifecycle FILE [--handle H]: state timelines of command lists, deferred contexts
// and context-local handles (check/lifecycle.h; cli/lifecycle_output.h prints them).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "cli/args.h"
#include "cli/lifecycle_output.h"
#include "cli/trace_input.h"
#include "cli/verb.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace lifecycle FILE [--handle H] [--at SEQ] [--json] [--salvage] [--quiet]\n"
    "\n"
    "Prints, for every command list, deferred context and context-local handle of a trace\n"
    "(.cltrace or .jsonl), its state intervals [from-seq, to-seq) with the call that caused\n"
    "each transition (DC:: marks a call through a deferred context's table) and the owning\n"
    "deferred context; local handles per recording. A handle value reused after its\n"
    "destruction is a new lifetime (#N).\n"
    "\n"
    "  --handle H   only handle H (its token as in the trace), with the local handles that\n"
    "               stand for it; IC objects are listed only this way\n"
    "  --at SEQ     instead: every handle alive at position SEQ, one line each with the state\n"
    "               it is in there, since when and by which call (objects included)\n"
    "  --json       one JSON object with the same lifetimes and intervals (for scripts)\n"
    "  --salvage    skip corrupt chunks of a .cltrace\n"
    "  --quiet      no progress bar (shown on a terminal when reading takes over a second)\n"
    "\n"
    "exit: 0 ok; 2 bad input, unknown handle or bad usage\n";

int RunLifecycleVerb(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::unique_ptr<check::LifecycleBuilder> builder;
  LifecycleOptions options;
  const format::TokenTable* handles = nullptr;
  uint64_t want = 0;  // the --handle's id once it is defined
  size_t shown = 0;
  // Which lifetimes are printed: every one but IC objects, or those of --handle (and the local
  // handles standing for it). The handle is defined before any call names it.
  auto wanted = [&](const check::TransitionEvent& first) {
    if (options.handle.empty()) return first.role != check::HandleRole::kObject;
    if (want == 0) {
      int64_t id = handles->Find(options.handle);
      if (id <= 0) return false;
      want = static_cast<uint64_t>(id);
    }
    return first.handle == want || first.ic_handle == want;
  };
  // Each lifetime is printed once it is over (in the order they began): the trace's lifetimes
  // are not all held (check::LifecycleBuilder).
  auto print = [&](const check::Lifetime& l) {
    out << check::FormatLifetime(l, *handles);
    ++shown;
  };
  uint64_t at_seq = 0;
  bool at_error = false;
  bool json = false;
  return StreamVerbOnTrace(
      "lifecycle", args, LifecycleArgSpec(kUsage), out, err,
      [&](const ParsedArgs& parsed, const format::SeqStream& in) {
        options.handle = parsed.Option("--handle").value_or("");
        if (auto at = parsed.Option("--at")) {
          if (!absl::SimpleAtoi(*at, &at_seq) || at_seq == 0) at_error = true;
        }
        json = parsed.Flag("--json");
        handles = &in.handles();
        // --at and --json need every lifetime (--at: those over before SEQ too): the whole-trace
        // builder.
        // Otherwise lifetimes stream out as they end.
        if (at_seq != 0 || json) {
          builder = std::make_unique<check::LifecycleBuilder>(
              in.handles(), ReplayOf(parsed.positional[0], parsed.Flag("--salvage")),
              options.check);
        } else {
          builder = std::make_unique<check::LifecycleBuilder>(
              in.handles(), ReplayOf(parsed.positional[0], parsed.Flag("--salvage")), options.check,
              wanted, print);
        }
        return StreamWork{[&](const format::Event& e) { return builder->Add(e); },
                          [&](const absl::Status& add_error) {
                            // An unknown handle is told once every definition was read.
                            absl::StatusOr<uint64_t> known = LifecycleHandle(options, *handles);
                            if (!known.ok()) {
                              err << known.status().message() << "\n";
                              return static_cast<int>(kExitBadInput);
                            }
                            if (!add_error.ok()) {
                              err << "cltrace lifecycle: " << add_error.message() << "\n";
                              return static_cast<int>(kExitBadInput);
                            }
                            if (at_error) {
                              err << "cltrace lifecycle: --at: expected a position (a seq "
                                     "of the trace, 1 or more)\n";
                              return static_cast<int>(kExitBadInput);
                            }
                            if (at_seq != 0) {
                              return PrintLiveAt(builder->Finish(), at_seq, *known, *handles, out);
                            }
                            if (json) {
                              return PrintLifecycleJson(builder->Finish(), *known, *handles, out);
                            }
                            check::Lifecycle lc = builder->FinishStream();
                            out << "# " << shown << " lifetimes, " << lc.calls << " calls\n";
                            return static_cast<int>(kExitOk);
                          }};
      });
}

const VerbRegistrar kLifecycle({"lifecycle",
                                "state timelines of CLs, DCs and local handles; --at SEQ: the "
                                "handles alive there",
                                kUsage, RunLifecycleVerb});

}  // namespace
}  // namespace cltrace::cli
