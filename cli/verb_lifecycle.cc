// cltrace lifecycle FILE [--handle H]: state timelines of command lists, deferred contexts
// and context-local handles (check/lifecycle.h; cli/lifecycle_output.h prints them). A
// lifetime is printed once it is over: its finished intervals over a budget wait in a
// temporary file meanwhile (check::LifecycleBuilder), so memory follows the handles alive.
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
    "destruction is a new lifetime (#N); a closed local handle's lifetime ends where its\n"
    "memory is recycled (the value begins a new lifetime) or its deferred context destroyed.\n"
    "\n"
    "  --handle H   only handle H (its token as in the trace), with the local handles that\n"
    "               stand for it; IC objects are listed only this way\n"
    "  --at SEQ     instead: every handle alive at position SEQ, one line each with the state\n"
    "               it is in there, since when and by which call (objects included);\n"
    "               reads the trace only up to SEQ\n"
    "  --json       one JSON object with the same lifetimes and intervals (for scripts)\n"
    "  --salvage    skip corrupt chunks of a .cltrace\n"
    "  --quiet      no progress bar (shown on a terminal when reading takes over a second)\n"
    "\n"
    "exit: 0 ok; 2 bad input, unknown handle or bad usage\n";

int RunLifecycleVerb(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::unique_ptr<check::LifecycleBuilder> builder;
  std::unique_ptr<LifecycleJsonStream> json_out;
  LiveAt live_at;
  std::unique_ptr<check::Checker> at_checker;
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
  uint64_t at_seq = 0;
  bool at_error = false;
  bool past_at = false;  // --at: the stream went past SEQ
  bool json = false;
  absl::Status spill_error;  // the intervals' temporary file failed
  return StreamVerbOnTrace(
      "lifecycle", args, LifecycleArgSpec(kUsage), out, err,
      [&](const ParsedArgs& parsed, const format::SeqStream& in) {
        options.handle = parsed.Option("--handle").value_or("");
        if (auto at = parsed.Option("--at")) {
          if (!absl::SimpleAtoi(*at, &at_seq) || at_seq == 0) at_error = true;
        }
        json = parsed.Flag("--json");
        handles = &in.handles();
        StreamWork work;
        if (at_seq != 0) {
          // --at: the checker's transitions up to SEQ, kept as what each lifetime is in now;
          // reading stops after SEQ (once a --handle is defined: an unknown one is told).
          at_checker = std::make_unique<check::Checker>(options.check);
          at_checker->set_observer(&live_at);
          at_checker->Begin(in.handles(), ReplayOf(parsed.positional[0], parsed.Flag("--salvage")));
          work.add = [&](const format::Event& e) {
            if (e.seq > at_seq) {
              past_at = true;
              return absl::OkStatus();
            }
            return at_checker->Add(e);
          };
          work.done = [&] {
            return past_at && (options.handle.empty() || handles->Find(options.handle) > 0);
          };
        } else {
          // Each lifetime is printed (or, --json, written aside) once it is over, in the order
          // they began: the trace's lifetimes are not all held (check::LifecycleBuilder).
          if (json) json_out = std::make_unique<LifecycleJsonStream>(in.handles());
          builder = std::make_unique<check::LifecycleBuilder>(
              in.handles(), ReplayOf(parsed.positional[0], parsed.Flag("--salvage")), options.check,
              wanted,
              [&](const check::StreamedLifetime& l) {
                absl::Status s =
                    json_out != nullptr ? json_out->Add(l) : WriteLifetime(l, *handles, out);
                if (!s.ok() && spill_error.ok()) spill_error = s;
                ++shown;
              },
              LifecycleSpillForTesting().interval_budget);
          work.add = [&](const format::Event& e) { return builder->Add(e); };
        }
        work.finish = [&](const absl::Status& add_error) {
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
          if (at_seq != 0) return live_at.Print(at_seq, *known, *handles, out);
          check::Lifecycle lc = builder->FinishStream();
          LifecycleSpillForTesting().most_intervals_held = builder->most_intervals_held();
          LifecycleSpillForTesting().intervals_spilled = builder->intervals_spilled();
          if (!spill_error.ok()) {
            err << "cltrace lifecycle: " << spill_error.message() << "\n";
            return static_cast<int>(kExitBadInput);
          }
          if (json_out != nullptr) return json_out->Finish(lc.calls, out);
          out << "# " << shown << " lifetimes, " << lc.calls << " calls\n";
          return static_cast<int>(kExitOk);
        };
        return work;
      });
}

const VerbRegistrar kLifecycle({"lifecycle",
                                "state timelines of CLs, DCs and local handles; --at SEQ: the "
                                "handles alive there",
                                kUsage, RunLifecycleVerb});

}  // namespace
}  // namespace cltrace::cli
