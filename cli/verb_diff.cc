// cltrace diff A B: two traces compared call by call, per thread, handles by identity
// (format/trace_diff.h does the work).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/trace_input.h"
#include "cli/verb.h"
#include "format/trace_diff.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace diff A B [--all] [--json] [--context N] [--salvage]\n"
    "\n"
    "Compares two traces (.cltrace or .jsonl) call by call. Threads are numbered by first\n"
    "appearance and thread N of A is compared with thread N of B, in order, so recordings\n"
    "whose threads interleave differently compare equal. Handles are compared by identity\n"
    "(the first time a handle of A meets one of B they are paired; a destroy ends the pair),\n"
    "addresses in pointer fields only by being NULL or not; seq, end and timestamps are not\n"
    "compared. Prints the first difference with the calls before it on its thread, both\n"
    "calls in normalised JSONL (handles as cl#3, dc#1, ...; `cltrace export --normalize`).\n"
    "\n"
    "  --all         list every differing call and a summary (a call one trace lacks counts)\n"
    "  --json        one JSON object: equal, calls, threads, differences, first, listed\n"
    "  --context N   calls shown before the first difference (default 3)\n"
    "  --salvage     skip corrupt chunks of a .cltrace\n"
    "\n"
    "exit: 0 equal; 1 different; 2 bad input or usage\n";

int RunDiff(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ArgSpec spec = ArgSpec("diff", kUsage)
                     .Options({"--context"})
                     .Flags({"--all", "--json", "--salvage"})
                     .Positional(2, 2);
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(args, spec, &parsed, out, err)) return *done;
  format::DiffOptions options;
  options.all = parsed.Flag("--all");
  options.json = parsed.Flag("--json");
  if (std::optional<std::string> v = parsed.Option("--context")) {
    absl::StatusOr<uint64_t> n = ParseCount("--context", *v);
    if (!n.ok()) {
      err << "cltrace diff: " << n.status().message() << "\n";
      return kExitBadInput;
    }
    options.context = static_cast<size_t>(*n);
  }
  format::SeqStreamOptions stream_options;
  stream_options.salvage = parsed.Flag("--salvage");
  stream_options.gaps = false;
  std::unique_ptr<format::SeqStream> a =
      OpenVerbStream("diff", parsed.positional[0], stream_options, err);
  if (a == nullptr) return kExitBadInput;
  std::unique_ptr<format::SeqStream> b =
      OpenVerbStream("diff", parsed.positional[1], stream_options, err);
  if (b == nullptr) return kExitBadInput;
  absl::StatusOr<format::DiffSummary> summary = format::DiffTraces(*a, *b, options, out);
  if (!summary.ok()) {
    out.flush();
    err << "cltrace diff: " << summary.status().message() << "\n";
    return kExitBadInput;
  }
  return summary->equal() ? kExitOk : kExitProblems;
}

const VerbRegistrar kDiff({"diff",
                           "compare two traces call by call (per thread, handles by "
                           "identity)",
                           kUsage, RunDiff});

}  // namespace
}  // namespace cltrace::cli
