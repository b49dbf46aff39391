// cltrace reduce IN -o OUT --rule RNN [--driver LIB]: delta debugging of a trace down to the
// smallest self-consistent cut that still shows the failure (cli/reduce.h does the work).
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "cli/args.h"
#include "cli/reduce.h"
#include "cli/trace_input.h"
#include "cli/trim.h"
#include "cli/verb.h"
#include "replayer/replay.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace reduce IN -o OUT.cltrace --rule RNN [--driver LIB] [--salvage]\n"
    "\n"
    "Delta debugging (ddmin) over the calls and threads of a trace: writes the smallest trace\n"
    "found that still makes `cltrace check` report rule RNN at the call where the original\n"
    "first reports it. Every candidate is a self-consistent cut, as `cltrace trim` makes\n"
    "them (the handles its calls name, with their creation), and one the checker finds\n"
    "nothing new in. With --driver LIB, the failure kept is instead the first divergence of\n"
    "a replay into LIB (single-threaded, kernel answered from the recording): the result\n"
    "still diverges at the same call. Prints the reduction ratio (calls before/after).\n"
    "\n"
    "  -o, --output FILE  the .cltrace to write (replaced if it exists)\n"
    "  --rule RNN         the rule to keep (R22, R40, ...); required without --driver\n"
    "  --driver LIB       keep the first divergence of replay into LIB instead\n"
    "  --salvage          skip corrupt chunks of a .cltrace\n"
    "\n"
    "exit: 0 reduced and written; 1 the input does not show the failure (the rule is not\n"
    "reported, the replay does not diverge): nothing written; 2 bad input or usage\n";

int RunReduce(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ArgSpec spec = ArgSpec("reduce", kUsage)
                     .Options({"--output", "--rule", "--driver"})
                     .Alias("-o", "--output")
                     .Flags({"--salvage"})
                     .Positional(1, 1);
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(args, spec, &parsed, out, err)) return *done;
  std::optional<std::string> out_path = parsed.Option("--output");
  if (!out_path) return FailVerb(err, "reduce", "-o", "-o OUT.cltrace is required");
  std::optional<std::string> rule_id = parsed.Option("--rule");
  std::optional<std::string> driver = parsed.Option("--driver");
  if (!rule_id && !driver) return FailVerb(err, "reduce", "--rule", "--rule RNN is required");
  const rules::RuleInfo* rule = rule_id ? rules::FindRule(*rule_id) : nullptr;
  if (rule_id && rule == nullptr)
    return FailVerb(err, "reduce", "--rule", absl::StrCat("no rule named '", *rule_id, "'"));
  if (IsDirectory(*out_path))
    return FailVerb(err, "reduce", *out_path, "is a directory (name the .cltrace file to write)");
  const std::string& in_path = parsed.positional[0];
  std::optional<TraceInput> in = ReadVerbTrace("reduce", in_path, parsed.Flag("--salvage"), err);
  if (!in) return kExitBadInput;
  if (ReportedReadError("reduce", in_path, *in, " (nothing written)", out, err))
    return kExitBadInput;
  absl::StatusOr<std::unique_ptr<TraceCutter>> cutter = TraceCutter::Build(&*in);
  if (!cutter.ok()) return FailVerb(err, "reduce", in_path, cutter.status().message());

  absl::StatusOr<ReduceResult> reduced;
  if (driver) {
    replay::ReplayOptions options;
    options.driver_path = *driver;
    options.threads = replay::ThreadMode::kSingle;
    auto divergence = [&](absl::Span<const format::Event> events) -> absl::StatusOr<uint64_t> {
      absl::StatusOr<replay::ReplayResult> r =
          replay::Replay(options, events, in->handles, in->strings, in->contents);
      if (!r.ok()) return r.status();
      if (r->outcome != replay::Outcome::kDivergent || r->divergences.empty()) return 0;
      return r->divergences.front().seq;
    };
    absl::StatusOr<uint64_t> target = divergence(in->events);
    if (!target.ok()) return FailVerb(err, "reduce", *driver, target.status().message());
    if (*target == 0) {
      err << "cltrace reduce: " << in_path << ": replay into " << *driver
          << " does not diverge: nothing to reduce\n";
      return kExitProblems;
    }
    out << "reduce: replay into " << *driver << " diverges at seq " << *target << "\n";
    const uint64_t at = *target;
    reduced =
        Reduce(**cutter, at, [&](absl::Span<const format::Event> events) -> absl::StatusOr<bool> {
          absl::StatusOr<uint64_t> d = divergence(events);
          if (!d.ok()) return d.status();
          return *d == at;
        });
  } else {
    reduced = ReduceToRule(**cutter, rule->rule);
  }
  if (!reduced.ok()) {
    if (reduced.status().code() == absl::StatusCode::kNotFound) {
      err << "cltrace reduce: " << in_path << ": " << reduced.status().message()
          << ": nothing to reduce\n";
      return kExitProblems;
    }
    return FailVerb(err, "reduce", in_path, reduced.status().message());
  }
  absl::Status written = WriteCut(*in, reduced->events, {}, *out_path, "cltrace reduce");
  if (!written.ok()) return FailVerb(err, "reduce", *out_path, written.message());
  out << absl::StrFormat(
      "reduce: %s at seq %d kept: %d calls -> %d calls (ratio %.1f:1, %d candidates judged); "
      "wrote %s\n",
      driver ? "the divergence" : rule->id, reduced->target_seq, reduced->calls_before,
      reduced->calls_after,
      static_cast<double>(reduced->calls_before) / std::max<uint64_t>(1, reduced->calls_after),
      reduced->tests, *out_path);
  return kExitOk;
}

const VerbRegistrar kReduce({"reduce",
                             "shrink a trace to the smallest cut that still shows a finding",
                             kUsage, RunReduce});

}  // namespace
}  // namespace cltrace::cli
