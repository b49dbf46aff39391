// cltrace info FILE: what a trace holds, at a glance.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cli/args.h"
#include "cli/json_out.h"
#include "cli/progress.h"
#include "cli/trace_input.h"
#include "cli/verb.h"
#include "ddi/catalog.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace info FILE [--json] [--salvage] [--quiet]\n"
    "\n"
    "Summarises a trace (.cltrace or .jsonl, detected by content): header (format and\n"
    "catalog version, writer, process), size and chunks, calls and callbacks per function\n"
    "and per thread, seq range, duration, torn tail, gaps and salvage counts.\n"
    "\n"
    "gaps: positions (seqs and exit positions) missing below the highest one present, in a\n"
    "recording: `none`, or `K (first missing seq S)` (format/FORMAT.md section 5.5).\n"
    "\n"
    "  --json      one JSON object with the same facts (for scripts): file, format, header,\n"
    "              size, calls, threads, seq range, duration_ns, torn tail, gaps, salvage\n"
    "              counts, calls per function and per thread\n"
    "  --salvage   skip corrupt chunks of a .cltrace instead of stopping at the first one\n"
    "  --quiet     no progress bar (shown on a terminal when reading takes over a second)\n"
    "\n"
    "exit: 0 ok; 1 --salvage had to skip data; 2 unreadable or damaged file (what was\n"
    "readable is still summarised) or bad usage\n";

std::string Row(absl::string_view label, absl::string_view value) {
  return absl::StrFormat("%-15s %s\n", label, value);
}

std::string Count(uint64_t n, absl::string_view noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

std::string Duration(int64_t ns) {
  if (ns < 1000) return absl::StrCat(ns, " ns");
  if (ns < 1000000) return absl::StrFormat("%.3f us", ns / 1e3);
  if (ns < 1000000000) return absl::StrFormat("%.3f ms", ns / 1e6);
  return absl::StrFormat("%.3f s", ns / 1e9);
}

// What `info` counts in one pass over the calls.
struct Summary {
  uint64_t n = 0, callbacks = 0, open = 0, min_seq = 0, max_pos = 0;
  int64_t min_ts = 0, max_ts = 0;
  std::vector<uint64_t> per_call;  // by CallId
  uint64_t unknown = 0;            // calls this catalog does not know
  std::map<uint32_t, uint64_t> per_tid;

  void Add(const format::Event& e) {
    if (IsCallback(e)) ++callbacks;
    if (e.end == 0) ++open;
    const size_t id = static_cast<size_t>(e.call);
    if (format::GetCall(e.call) == nullptr) {
      ++unknown;
    } else {
      if (per_call.size() <= id) per_call.resize(id + 1);
      ++per_call[id];
    }
    ++per_tid[e.tid];
    min_seq = n == 0 ? e.seq : std::min(min_seq, e.seq);
    max_pos = std::max({max_pos, e.seq, e.end});
    min_ts = n == 0 ? e.timestamp_ns : std::min(min_ts, e.timestamp_ns);
    max_ts = n == 0 ? e.timestamp_ns : std::max(max_ts, e.timestamp_ns);
    ++n;
  }
};

// The `gaps` row: "none", or "K (first missing seq S)" with K the positions missing below the
// highest one present (format::PositionGaps: calls the recording lost, which check does not
// judge across), then ", in H holes" when there are several;
// "not checked" for a trace that may number its calls sparsely (hand-written, imported);
// duplicated positions (corruption) follow in every case.
std::string GapsText(const format::SeqStream& in) {
  const format::PositionGaps& g = in.gaps();
  std::string text;
  if (!in.dense_positions()) {
    text = "not checked (not a recording)";
  } else if (g.missing == 0) {
    text = "none";
  } else {
    text = absl::StrCat(g.missing, " (first missing seq ", g.first_missing, ")");
    if (g.holes.size() > 1) absl::StrAppend(&text, ", in ", g.holes.size(), " holes");
  }
  if (g.duplicates != 0) {
    absl::StrAppend(&text, "; ", Count(g.duplicates, "position"), " used twice (first ",
                    g.first_duplicate, "): the trace is damaged");
  }
  return text;
}

std::vector<std::pair<std::string, uint64_t>> PerFunction(const Summary& sum);

void PrintInfo(const format::SeqStream& in, const Summary& sum, std::ostream& out) {
  out << Row("file", in.path());
  const auto& h = in.header();
  if (in.format() == TraceFormat::kJsonl) {
    out << Row("format", absl::StrCat("JSONL, ", in.lines(), " lines"));
  } else {
    out << Row("format",
               absl::StrCat("cltrace format version ", h.format_version(), ", catalog version ",
                            h.catalog_version(), " (this tool: ", format::CatalogVersion(), ")"));
    out << Row("writer", h.writer().name().empty()
                             ? std::string("(unnamed)")
                             : absl::StrCat(h.writer().name(), " ", h.writer().version()));
    std::vector<std::string> process;
    if (h.process().pid() != 0) process.push_back(absl::StrCat("pid ", h.process().pid()));
    if (!h.process().executable().empty()) process.push_back(h.process().executable());
    if (h.process().argv_size() > 0)
      process.push_back(absl::StrCat("argv [", absl::StrJoin(h.process().argv(), " "), "]"));
    if (!h.process().driver().empty())
      process.push_back(absl::StrCat("driver ", h.process().driver()));
    out << Row("process", process.empty() ? "(none recorded)" : absl::StrJoin(process, ", "));
    if (h.start_unix_ns() != 0)
      out << Row("started",
                 absl::FormatTime("%Y-%m-%d %H:%M:%E3S UTC", absl::FromUnixNanos(h.start_unix_ns()),
                                  absl::UTCTimeZone()));
  }
  const format::TraceReader::Stats stats = in.reader_stats();
  const uint64_t n = sum.n;
  std::string size = absl::StrCat(in.file_size(), " bytes");
  if (in.format() == TraceFormat::kCltrace)
    absl::StrAppend(&size, ", ", Count(stats.chunks, "chunk"), ", ",
                    stats.has_index ? "index present" : "no index");
  if (n != 0)
    absl::StrAppend(
        &size, absl::StrFormat(", %.1f bytes per call", static_cast<double>(in.file_size()) / n));
  out << Row("size", size);
  out << Row("calls",
             absl::StrCat(n, " (", Count(n - sum.callbacks, "DDI call"), ", ",
                          Count(sum.callbacks, "callback"), ", ", sum.open, " never returned)"));
  out << Row("threads", absl::StrCat(sum.per_tid.size()));
  out << Row("seq range",
             n == 0 ? std::string("-") : absl::StrCat(sum.min_seq, " .. ", sum.max_pos));
  out << Row("duration", n == 0 || (sum.min_ts == 0 && sum.max_ts == 0)
                             ? std::string("- (no timestamps)")
                             : Duration(sum.max_ts - sum.min_ts));
  if (in.format() == TraceFormat::kCltrace) {
    out << Row("torn tail",
               in.torn_tail() < 0
                   ? std::string("none")
                   : absl::StrCat("partial chunk from offset ", in.torn_tail(), " ignored (",
                                  in.file_size() - in.torn_tail(), " bytes)"));
  }
  out << Row("gaps", GapsText(in));
  if (in.format() == TraceFormat::kCltrace) {
    const auto& s = stats;
    if (s.corrupt_chunks_skipped || s.bytes_skipped || s.events_skipped || s.definitions_skipped)
      out << Row(
          "salvaged",
          absl::StrCat("skipped ", Count(s.corrupt_chunks_skipped, "corrupt chunk"), " (",
                       Count(s.bytes_skipped, "byte"), "), ", Count(s.events_skipped, "event"),
                       ", ", Count(s.definitions_skipped, "definition")));
  }
  if (n == 0) return;
  const std::vector<std::pair<std::string, uint64_t>> fns = PerFunction(sum);
  size_t width = 0;
  for (const auto& [name, count] : fns) width = std::max(width, name.size());
  out << "\ncalls per function\n";
  for (const auto& [name, count] : fns)
    out << absl::StrFormat("  %-*s %8d\n", static_cast<int>(width), name, count);
  out << "\ncalls per thread\n";
  for (const auto& [tid, count] : sum.per_tid)
    out << absl::StrFormat("  tid %-10d %8d\n", tid, count);
}

// The calls per function name, most first (ties by name), "(unknown)" for calls this
// catalog does not know.
std::vector<std::pair<std::string, uint64_t>> PerFunction(const Summary& sum) {
  std::map<std::string, uint64_t> per_fn;
  for (size_t id = 0; id < sum.per_call.size(); ++id) {
    if (sum.per_call[id] != 0)
      per_fn[format::GetCall(static_cast<format::CallId>(id))->name] += sum.per_call[id];
  }
  if (sum.unknown != 0) per_fn["(unknown)"] += sum.unknown;
  std::vector<std::pair<std::string, uint64_t>> fns(per_fn.begin(), per_fn.end());
  std::stable_sort(fns.begin(), fns.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return fns;
}

// `info --json`: the facts of PrintInfo as one JSON object.
void PrintInfoJson(const format::SeqStream& in, const Summary& sum, std::ostream& out) {
  JsonOut j;
  j.Begin();
  j.Field("file", in.path());
  const bool cltrace = in.format() == TraceFormat::kCltrace;
  j.Field("format", cltrace ? "cltrace" : "jsonl");
  if (!cltrace) j.Field("lines", static_cast<uint64_t>(in.lines()));
  if (cltrace) {
    const auto& h = in.header();
    j.Field("format_version", static_cast<uint64_t>(h.format_version()));
    j.Field("catalog_version", static_cast<uint64_t>(h.catalog_version()));
    j.Field("tool_catalog_version", static_cast<int64_t>(format::CatalogVersion()));
    j.Key("writer");
    j.w().StartObject();
    j.Field("name", h.writer().name());
    j.Field("version", h.writer().version());
    j.w().EndObject();
    j.Key("process");
    j.w().StartObject();
    j.Field("pid", static_cast<uint64_t>(h.process().pid()));
    j.Field("executable", h.process().executable());
    j.Key("argv");
    j.w().StartArray();
    for (const std::string& a : h.process().argv()) j.Str(a);
    j.w().EndArray();
    j.Field("driver", h.process().driver());
    j.w().EndObject();
    j.Field("start_unix_ns", static_cast<uint64_t>(h.start_unix_ns()));
  }
  const format::TraceReader::Stats stats = in.reader_stats();
  j.Field("size_bytes", static_cast<uint64_t>(in.file_size()));
  if (cltrace) {
    j.Field("chunks", static_cast<uint64_t>(stats.chunks));
    j.Field("index", stats.has_index);
  }
  j.Field("calls", sum.n);
  j.Field("ddi_calls", sum.n - sum.callbacks);
  j.Field("callbacks", sum.callbacks);
  j.Field("never_returned", sum.open);
  j.Field("threads", static_cast<uint64_t>(sum.per_tid.size()));
  j.Key("seq_range");  // null for an empty trace
  if (sum.n == 0) {
    j.w().Null();
  } else {
    j.w().StartArray();
    j.w().Uint64(sum.min_seq);
    j.w().Uint64(sum.max_pos);
    j.w().EndArray();
  }
  j.Key("duration_ns");  // null: no timestamps
  if (sum.n == 0 || (sum.min_ts == 0 && sum.max_ts == 0)) {
    j.w().Null();
  } else {
    j.w().Int64(sum.max_ts - sum.min_ts);
  }
  if (cltrace) {
    j.Key("torn_tail_offset");  // null: none
    if (in.torn_tail() < 0) {
      j.w().Null();
    } else {
      j.w().Int64(in.torn_tail());
    }
  }
  const format::PositionGaps& g = in.gaps();
  j.Key("gaps");
  j.w().StartObject();
  j.Field("checked", in.dense_positions());
  j.Field("missing", static_cast<uint64_t>(g.missing));
  if (g.missing != 0) {
    j.Field("first_missing", static_cast<uint64_t>(g.first_missing));
    j.Field("holes", static_cast<uint64_t>(g.holes.size()));
  }
  j.Field("duplicates", static_cast<uint64_t>(g.duplicates));
  if (g.duplicates != 0) j.Field("first_duplicate", static_cast<uint64_t>(g.first_duplicate));
  j.w().EndObject();
  if (cltrace) {
    j.Key("salvaged");
    j.w().StartObject();
    j.Field("corrupt_chunks", static_cast<uint64_t>(stats.corrupt_chunks_skipped));
    j.Field("bytes", static_cast<uint64_t>(stats.bytes_skipped));
    j.Field("events", static_cast<uint64_t>(stats.events_skipped));
    j.Field("definitions", static_cast<uint64_t>(stats.definitions_skipped));
    j.w().EndObject();
  }
  j.Key("calls_per_function");
  j.w().StartObject();
  for (const auto& [name, count] : PerFunction(sum)) j.Field(name, count);
  j.w().EndObject();
  j.Key("calls_per_thread");
  j.w().StartObject();
  for (const auto& [tid, count] : sum.per_tid) j.Field(absl::StrCat(tid), count);
  j.w().EndObject();
  j.End(out);
}

int RunInfo(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ArgSpec spec = ArgSpec("info", kUsage).Flags({"--json", "--salvage", "--quiet"}).Positional(1, 1);
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(args, spec, &parsed, out, err)) return *done;
  const std::string& path = parsed.positional[0];
  format::SeqStreamOptions options;
  options.salvage = parsed.Flag("--salvage");
  std::unique_ptr<format::SeqStream> in = OpenVerbStream("info", path, options, err);
  if (in == nullptr) return kExitBadInput;
  Summary sum;
  {
    Progress progress("info", parsed.Flag("--quiet"));
    format::Event e;
    while (in->Next(&e)) {
      sum.Add(e);
      progress.Update(sum.n, in->expected_events(),
                      static_cast<double>(in->position()) / std::max<uint64_t>(1, in->file_size()));
    }
  }
  if (parsed.Flag("--json")) {
    PrintInfoJson(*in, sum, out);
  } else {
    PrintInfo(*in, sum, out);
  }
  const format::PositionGaps& gaps = in->gaps();
  if (gaps.duplicates != 0) {
    out.flush();
    err << "cltrace info: " << path << ": position " << gaps.first_duplicate
        << " is used by more than one call (" << Count(gaps.duplicates, "duplicate")
        << "): the trace is damaged\n";
    return kExitBadInput;
  }
  return ExitAfterStreaming(
      "info", path, *in,
      absl::StrCat(" (the summary above covers the ", sum.n, " calls read before it)"), kExitOk,
      out, err);
}

const VerbRegistrar kInfo({"info", "summarise a trace (header, counts, ranges, chunks)", kUsage,
                           RunInfo});

}  // namespace
}  // namespace cltrace::cli
