// cltrace import / export: JSONL <-> .cltrace, an exact round trip (format/jsonl.h).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/args.h"
#include "cli/export_chrome.h"
#include "cli/export_sqlite.h"
#include "cli/progress.h"
#include "cli/trace_input.h"
#include "cli/verb.h"
#include "cltrace_version.h"
#include "format/jsonl.h"
#include "format/stable_names.h"
#include "format/trace_writer.h"

namespace cltrace::cli {
namespace {

constexpr char kImportUsage[] =
    "usage: cltrace import IN.jsonl -o OUT.cltrace [--chunk-bytes N] [--quiet]\n"
    "\n"
    "Converts a JSONL trace (hand-written or exported; format/jsonl.h) into a .cltrace file;\n"
    "IN.jsonl - reads it from standard input.\n"
    "Missing \"end\" values are inferred; the file is written only if every line is valid\n"
    "(a bad line is reported with its line number and nothing is written).\n"
    "\n"
    "  -o, --output FILE   the .cltrace file to write (replaced if it exists)\n"
    "  --chunk-bytes N     close a chunk after N bytes of uncompressed payload (default 1 MiB)\n"
    "  --quiet             no progress bar (shown on a terminal when it takes over a second)\n"
    "\n"
    "exit: 0 ok; 2 bad input (line number on stderr), I/O error or bad usage\n";

constexpr char kExportUsage[] =
    "usage: cltrace export IN -o OUT.jsonl [--normalize] [--salvage] [--quiet]\n"
    "       cltrace export IN --chrome OUT.json [--salvage] [--quiet]\n"
    "       cltrace export IN --sqlite OUT.db [--salvage] [--quiet]\n"
    "\n"
    "Writes a trace (.cltrace, or .jsonl to normalise it) as canonical JSONL: one call per\n"
    "line in seq order, every end given. `cltrace import` of the output gives the same calls\n"
    "back, and exporting that again gives the same bytes. Each call's entry time (\"ts_ns\")\n"
    "and annotation (\"annotation\": the API call, recorder notes such as R5 table rewrites)\n"
    "are kept.\n"
    "\n"
    "  -o, --output FILE   the JSONL file to write; - writes to standard output\n"
    "  --normalize         stable names instead of a run's: handles as KIND#N by first\n"
    "                      appearance (cl#3, dc#1, res#7 ...), thread ids as 1, 2, ...,\n"
    "                      addresses in pointer fields renumbered, so text tools can diff\n"
    "                      two recordings (times and annotations left out)\n"
    "  --chrome FILE       Chrome trace-event JSON for ui.perfetto.dev / chrome://tracing\n"
    "                      (docs/chrome.md): a track per thread with the calls as nested\n"
    "                      slices (DC::Draw), a track per command list, deferred context and\n"
    "                      local handle with its states, the checker's findings as instant\n"
    "                      events; - writes to standard output\n"
    "  --sqlite FILE       an SQLite database (docs/sql.md): tables calls, args, handles,\n"
    "                      intervals, findings, meta\n"
    "  --salvage           skip corrupt chunks of a .cltrace instead of stopping\n"
    "  --quiet             no progress bar (shown on a terminal when it takes over a second)\n"
    "\n"
    "exit: 0 ok; 1 --salvage had to skip data; 2 damaged input (the calls read before the\n"
    "damage are still written), I/O error or bad usage\n";

// The verb's -o FILE; reported as required (`what` naming the file) when missing.
std::optional<std::string> RequiredOutput(const ParsedArgs& parsed, absl::string_view verb,
                                          absl::string_view what, std::ostream& err) {
  std::optional<std::string> out_path = parsed.Option("--output");
  if (!out_path) {
    err << "cltrace " << verb << ": -o " << what << " is required\n"
        << "(cltrace " << verb << " --help for more)\n";
  }
  return out_path;
}

uint64_t FileSizeOf(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

int RunImport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ArgSpec spec = ArgSpec("import", kImportUsage)
                     .Options({"--output", "--chunk-bytes"})
                     .Alias("-o", "--output")
                     .Flags({"--quiet"})
                     .Positional(1, 1);
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(args, spec, &parsed, out, err)) return *done;
  const std::string& in_path = parsed.positional[0];
  std::optional<std::string> out_path = RequiredOutput(parsed, "import", "OUT.cltrace", err);
  if (!out_path) return kExitBadInput;
  format::TraceWriter::Options options;
  if (std::optional<std::string> v = parsed.Option("--chunk-bytes")) {
    absl::StatusOr<uint64_t> n = ParseCount("--chunk-bytes", *v);
    if (!n.ok() || *n == 0) {
      err << "cltrace import: --chunk-bytes needs a positive integer, not '" << *v << "'\n";
      return kExitBadInput;
    }
    options.chunk_bytes = static_cast<size_t>(*n);
  }
  if (*out_path == "-")
    return FailVerb(err, "import", "-o -", "a .cltrace file cannot go to stdout");
  if (IsDirectory(*out_path))
    return FailVerb(err, "import", *out_path, "is a directory (name the .cltrace file to write)");
  // `-` reads the JSONL from standard input (streamed: it is read once, so its format is not
  // sniffed first; a .cltrace there fails as malformed JSON on line 1).
  const bool from_stdin = in_path == "-";
  const std::string in_name = from_stdin ? "stdin" : in_path;
  if (!from_stdin) {
    absl::StatusOr<TraceFormat> format = DetectFormat(in_path);
    if (!format.ok()) return FailVerb(err, "import", in_path, format.status().message());
    if (*format != TraceFormat::kJsonl)
      return FailVerb(err, "import", in_path, "not JSONL (its first byte is not '{')");
  }
  absl::StatusOr<std::unique_ptr<format::JsonlReader>> reader =
      format::JsonlReader::Open(from_stdin ? "/dev/stdin" : in_path);
  if (!reader.ok()) return FailVerb(err, "import", in_name, reader.status().message());

  // Written beside the target and renamed at the end, so a bad line leaves no half file.
  std::string tmp_path = absl::StrCat(*out_path, ".tmp-", getpid());
  options.writer.set_name("cltrace import");
  options.writer.set_version(CLTRACE_VERSION);
  options.start_unix_ns = 0;  // JSONL has no wall-clock start: keep the output reproducible
  // "ts_ns" values are nanoseconds: kept exactly (a coarser unit would round them down).
  options.timestamp_unit_ns = 1;
  absl::StatusOr<std::unique_ptr<format::TraceWriter>> writer =
      format::TraceWriter::Open(tmp_path, options);
  if (!writer.ok()) return FailVerb(err, "import", *out_path, writer.status().message());

  std::vector<uint64_t> handle_ids{0}, string_ids{0};  // JSONL id -> writer id
  auto map_id = [](std::vector<uint64_t>& ids, uint64_t id, const format::TokenTable& tokens,
                   auto intern) {
    while (ids.size() <= id) ids.push_back(intern(tokens.Token(ids.size())));
    return ids[id];
  };
  format::TraceWriter& w = **writer;
  format::JsonlReader& r = **reader;
  format::Event e;
  uint64_t calls = 0;
  absl::Status status;
  Progress progress("import", parsed.Flag("--quiet"));
  const double in_size = from_stdin ? 0 : static_cast<double>(FileSizeOf(in_path));
  while (status.ok() && r.Next(&e)) {
    progress.Update(calls, 0, in_size > 0 ? static_cast<double>(r.position()) / in_size : -1);
    RemapIds(
        &e,
        [&](uint64_t id) {
          return map_id(handle_ids, id, r.handles(),
                        [&](absl::string_view t) { return w.InternHandleToken(t); });
        },
        [&](uint64_t id) {
          return map_id(string_ids, id, r.strings(),
                        [&](absl::string_view t) { return w.InternString(t); });
        });
    if (e.content != 0) e.content = w.InternContent(r.contents().Token(e.content));
    status = w.Append(e);
    if (!status.ok())
      status = absl::Status(status.code(), absl::StrCat("writing: ", status.message()));
    ++calls;
  }
  progress.Finish();
  if (status.ok()) status = r.status();
  absl::Status closed = w.Close();
  if (status.ok() && !closed.ok()) status = closed;
  if (status.ok() && std::rename(tmp_path.c_str(), out_path->c_str()) != 0)
    status = absl::InternalError(absl::StrCat("cannot rename ", tmp_path, " to ", *out_path));
  if (!status.ok()) {
    std::remove(tmp_path.c_str());
    return FailVerb(err, "import", in_name, status.message());
  }
  out << "imported " << calls << " calls (" << r.lines() << " lines) into " << *out_path << "\n";
  return kExitOk;
}

// `export --chrome FILE` and `export --sqlite FILE`: one pass with the checker's states
// (cli/trace_walk.h).
int RunRichExport(const ParsedArgs& parsed, bool chrome, const std::string& dst_path,
                  std::ostream& out, std::ostream& err) {
  const std::string& in_path = parsed.positional[0];
  const bool to_stdout = chrome && dst_path == "-";
  if (!chrome && dst_path == "-")
    return FailVerb(err, "export", "--sqlite -", "a database cannot go to stdout");
  if (IsDirectory(dst_path))
    return FailVerb(err, "export", dst_path, "is a directory (name the file to write)");
  format::SeqStreamOptions options;
  options.salvage = parsed.Flag("--salvage");
  std::unique_ptr<format::SeqStream> in = OpenVerbStream("export", in_path, options, err);
  if (in == nullptr) return kExitBadInput;
  Progress progress("export", parsed.Flag("--quiet"));
  auto tick = [&] {
    progress.Update(in->delivered(), in->expected_events(),
                    static_cast<double>(in->position()) / std::max<uint64_t>(1, in->file_size()));
  };
  check::TraceReplay replay = ReplayOf(in_path, parsed.Flag("--salvage"));
  absl::StatusOr<WalkSummary> summary;
  if (chrome) {
    std::ofstream file;
    if (!to_stdout) {
      file.open(dst_path, std::ios::binary | std::ios::trunc);
      if (!file) return FailVerb(err, "export", dst_path, "cannot open for writing");
    }
    std::ostream& dst = to_stdout ? out : file;
    summary = ExportChrome(*in, replay, check::CheckOptions(), dst, tick);
    if (summary.ok()) {
      dst.flush();
      if (!dst) summary = absl::DataLossError("write error");
    }
  } else {
    summary = ExportSqlite(*in, replay, check::CheckOptions(), dst_path, tick);
  }
  progress.Finish();
  if (!summary.ok()) return FailVerb(err, "export", dst_path, summary.status().message());
  if (!to_stdout && in->status().ok()) {
    out << "exported " << summary->calls << " calls, " << summary->threads << " threads, "
        << summary->lifetimes << " handle lifetimes, " << summary->violations << " violations and "
        << summary->warnings << " warnings to " << dst_path
        << " (timestamps: " << summary->timestamps.source << ")\n";
  }
  return ExitAfterStreaming(
      "export", in_path, *in,
      in->delivered() == 0
          ? std::string(" (no call could be written)")
          : absl::StrCat(" (the ", in->delivered(), " calls read before it were written)"),
      kExitOk, out, err);
}

int RunExport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ArgSpec spec = ArgSpec("export", kExportUsage)
                     .Options({"--output", "--chrome", "--sqlite"})
                     .Alias("-o", "--output")
                     .Flags({"--salvage", "--quiet", "--normalize"})
                     .Positional(1, 1);
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(args, spec, &parsed, out, err)) return *done;
  const std::string& in_path = parsed.positional[0];
  const std::optional<std::string> chrome = parsed.Option("--chrome");
  const std::optional<std::string> sqlite = parsed.Option("--sqlite");
  const int outputs = (parsed.Option("--output") ? 1 : 0) + (chrome ? 1 : 0) + (sqlite ? 1 : 0);
  if (outputs > 1) {
    err << "cltrace export: give one of -o, --chrome and --sqlite\n"
        << "(cltrace export --help for more)\n";
    return kExitBadInput;
  }
  if ((chrome || sqlite) && parsed.Flag("--normalize")) {
    err << "cltrace export: --normalize applies to JSONL (-o) only\n"
        << "(cltrace export --help for more)\n";
    return kExitBadInput;
  }
  if (chrome) return RunRichExport(parsed, /*chrome=*/true, *chrome, out, err);
  if (sqlite) return RunRichExport(parsed, /*chrome=*/false, *sqlite, out, err);
  std::optional<std::string> out_path =
      RequiredOutput(parsed, "export", "OUT.jsonl (or -o - for stdout)", err);
  if (!out_path) return kExitBadInput;
  format::SeqStreamOptions options;
  options.salvage = parsed.Flag("--salvage");
  options.gaps = false;
  std::unique_ptr<format::SeqStream> in = OpenVerbStream("export", in_path, options, err);
  if (in == nullptr) return kExitBadInput;

  if (IsDirectory(*out_path))
    return FailVerb(err, "export", *out_path, "is a directory (name the .jsonl file to write)");
  std::ofstream file;
  if (*out_path != "-") {
    file.open(*out_path, std::ios::binary | std::ios::trunc);
    if (!file) return FailVerb(err, "export", *out_path, "cannot open for writing");
  }
  std::ostream& dst = *out_path == "-" ? out : file;
  int status = kExitOk;
  Progress progress("export", parsed.Flag("--quiet"));
  std::optional<format::Normalizer> normalizer;
  if (parsed.Flag("--normalize")) normalizer.emplace();
  format::Event e;
  // Lines are gathered and written in blocks (one stream write per block, not per line).
  constexpr size_t kBlock = size_t{1} << 16;
  std::string block;
  block.reserve(kBlock + 4096);
  auto flush = [&] {
    dst.write(block.data(), static_cast<std::streamsize>(block.size()));
    block.clear();
  };
  while (in->Next(&e)) {
    progress.Update(in->delivered(), in->expected_events(),
                    static_cast<double>(in->position()) / std::max<uint64_t>(1, in->file_size()));
    absl::Status layout = format::CheckEventLayout(e);
    if (!layout.ok()) {
      flush();
      status =
          FailVerb(err, "export", in_path, absl::StrCat("seq ", e.seq, ": ", layout.message()));
      continue;
    }
    if (normalizer) {
      normalizer->Rewrite(&e, in->handles());
      format::AppendEventJsonl(&block, e, normalizer->names(), in->strings(), &in->contents());
    } else {
      format::AppendEventJsonl(&block, e, in->handles(), in->strings(), &in->contents());
    }
    block.push_back('\n');
    if (block.size() >= kBlock) flush();
  }
  flush();
  progress.Finish();
  dst.flush();
  if (!dst) return FailVerb(err, "export", *out_path, "write error");
  return ExitAfterStreaming(
      "export", in_path, *in,
      in->delivered() == 0
          ? std::string(" (no call could be written)")
          : absl::StrCat(" (the ", in->delivered(), " calls read before it were written)"),
      status, out, err);
}

const VerbRegistrar kImport({"import", "convert a JSONL trace into a .cltrace file", kImportUsage,
                             RunImport});
const VerbRegistrar kExport({"export",
                             "write a trace as canonical JSONL, Chrome trace JSON or SQLite",
                             kExportUsage, RunExport});

}  // namespace
}  // namespace cltrace::cli
