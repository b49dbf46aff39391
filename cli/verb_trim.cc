// cltrace trim IN -o OUT --from SEQ --to SEQ | --handle H: a self-consistent, replayable cut of
// a trace (cli/trim.h does the work; docs/trim.md says what a cut keeps and what it cannot).
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/trace_input.h"
#include "cli/trim.h"
#include "cli/verb.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace trim IN -o OUT.cltrace [--from SEQ] [--to SEQ] [--handle H] [--salvage]\n"
    "\n"
    "Cuts the calls entered in seq SEQ..SEQ (whole top-level calls, with the callbacks nested\n"
    "in them), or with --handle the calls that name handle H (as check and dump print it,\n"
    "0x7e0000009000; within --from/--to if given), into a trace that stands on its own: the\n"
    "handles alive at the cut get a prelude of their recorded calls that brings them into the\n"
    "state they had (device and adapter opened, deferred contexts, objects and command lists\n"
    "created, recycled or cached, local handles opened, the pipeline state each context had\n"
    "bound), and everything those calls name, transitively. Seqs are kept, so the cut's\n"
    "findings and divergences name the original calls. `cltrace check` of the cut reports\n"
    "nothing the original did not; `cltrace replay` runs it.\n"
    "\n"
    "What cannot be synthesized (resource contents written before the cut, commands\n"
    "buffered for a submission before the window, calls other threads were inside of at the\n"
    "cut, a finding the cut shows and the original did not) is printed as\n"
    "\"unsynthesized: seq S: ...\" and annotated on that call of the cut (docs/trim.md).\n"
    "\n"
    "  -o, --output FILE  the .cltrace to write (replaced if it exists)\n"
    "  --from SEQ         first seq of the window (default: the first call)\n"
    "  --to SEQ           last seq of the window (default: the last call)\n"
    "  --handle H         keep the calls of handle H and what they depend on\n"
    "  --salvage          skip corrupt chunks of a .cltrace\n"
    "\n"
    "exit: 0 the cut is written; 1 written, but check of the cut reports findings the\n"
    "original did not (listed); 2 bad input or usage (an empty window, an unknown handle)\n";

int RunTrim(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ArgSpec spec = ArgSpec("trim", kUsage)
                     .Options({"--output", "--from", "--to", "--handle"})
                     .Alias("-o", "--output")
                     .Flags({"--salvage"})
                     .Positional(1, 1);
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(args, spec, &parsed, out, err)) return *done;
  std::optional<std::string> out_path = parsed.Option("--output");
  if (!out_path) return FailVerb(err, "trim", "-o", "-o OUT.cltrace is required");
  if (!parsed.Option("--from") && !parsed.Option("--to") && !parsed.Option("--handle"))
    return FailVerb(err, "trim", "arguments", "give --from/--to, --handle, or both");
  TrimOptions options;
  for (const char* name : {"--from", "--to"}) {
    if (std::optional<std::string> v = parsed.Option(name)) {
      absl::StatusOr<uint64_t> n = ParseCount(name, *v);
      if (!n.ok()) return FailVerb(err, "trim", name, n.status().message());
      (std::string(name) == "--from" ? options.from : options.to) = *n;
    }
  }
  options.handle = parsed.Option("--handle");
  if (IsDirectory(*out_path))
    return FailVerb(err, "trim", *out_path, "is a directory (name the .cltrace file to write)");
  const std::string& in_path = parsed.positional[0];
  std::optional<TraceInput> in = ReadVerbTrace("trim", in_path, parsed.Flag("--salvage"), err);
  if (!in) return kExitBadInput;
  if (ReportedReadError("trim", in_path, *in, " (nothing written)", out, err)) return kExitBadInput;
  absl::StatusOr<std::unique_ptr<TraceCutter>> cutter = TraceCutter::Build(&*in);
  if (!cutter.ok()) return FailVerb(err, "trim", in_path, cutter.status().message());
  absl::StatusOr<TrimResult> cut = Trim(**cutter, options);
  if (!cut.ok()) return FailVerb(err, "trim", in_path, cut.status().message());
  absl::Status written = WriteCut(*in, cut->events, cut->notes, *out_path, "cltrace trim");
  if (!written.ok()) return FailVerb(err, "trim", *out_path, written.message());
  for (const std::string& line : cut->unsynthesized) out << "unsynthesized: " << line << "\n";
  out << "trim: " << cut->events.size() << " of " << in->events.size() << " calls ("
      << cut->window_calls << " in the window, " << cut->prelude_calls << " of prelude) written to "
      << *out_path << "\n";
  return cut->new_findings.empty() ? kExitOk : kExitProblems;
}

const VerbRegistrar kTrim({"trim", "cut a seq range or one handle's calls into a replayable trace",
                           kUsage, RunTrim});

}  // namespace
}  // namespace cltrace::cli
