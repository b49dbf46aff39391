// cltrace replay FILE: plays the runtime side of a trace into a driver and compares everything
// the driver does with the recording (replayer/replay.h does the work).
#include "cli/verb_replay.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cli/args.h"
#include "cli/dx6_model_driver.h"
#include "cli/json_out.h"
#include "cli/progress.h"
#include "cli/trace_input.h"
#include "cli/verb.h"
#include "ddi/catalog.h"
#include "format/load_trace.h"
#include "replayer/replay.h"

namespace cltrace::cli {
namespace {

constexpr char kUsage[] =
    "usage: cltrace replay FILE [--driver LIB] [--threads recorded|single] [--until SEQ]\n"
    "                           [--kernel recorded|model]\n"
    "                           [--inject oom:FUNCTION:N|removed:N ...] [--keep-going]\n"
    "                           [--digest] [--history N] [--json] [--salvage] [--quiet]\n"
    "\n"
    "Plays the runtime side of a trace (.cltrace or .jsonl) into a driver: every DDI call the\n"
    "runtime made is issued again with handle memory sized by the driver's own CalcPrivate*\n"
    "answers, the driver's callbacks are matched against the recording (a state refresh is\n"
    "answered with the Set* calls recorded under it) and kernel-thunk callbacks get the\n"
    "recorded kernel's answers. Return values, outputs, SetErrorCb codes, which callbacks are\n"
    "made and in what order, and every kernel call are compared. When the trace carries the\n"
    "bytes the application handed the driver (content: UpdateSubresourceUP sources, mapped\n"
    "subresources at Unmap), the driver gets them again (a mapping re-pitched to the replay\n"
    "driver's pitches); without content it reads zeros. DX6-layer calls (CanCreateD3DBuffer\n"
    "... D3dDrawPrimitives2) go to the DX6 model driver, with the recorded command and vertex\n"
    "bytes written into its buffers; a bug=R79 / bug=R80 item of CLTRACE_REFDRIVER_CONFIG\n"
    "plants that DX6 driver bug.\n"
    "\n"
    "  --driver LIB          the driver (exports OpenAdapter10_2); default $CLTRACE_DRIVER, else\n"
    "                        the reference driver next to this tool (../lib)\n"
    "  --threads MODE        recorded (default): one thread per recorded thread, calls started\n"
    "                        in recorded order, every recorded happens-before kept;\n"
    "                        single: every call on one thread in seq order\n"
    "  --until SEQ           replay the top-level calls up to seq SEQ only\n"
    "  --kernel MODE         who answers the driver's kernel-thunk calls: recorded (default):\n"
    "                        the recorded outputs; model: cltrace's WDDM kernel/GPU model, whose\n"
    "                        kernel-layer calls (DxgkDdi*, DxgkCb*: submissions, patching,\n"
    "                        fences, interrupts) and GPU content digests are compared with the\n"
    "                        recording's (for traces recorded on the runtime model); model\n"
    "                        holds the calls in memory (a few hundred bytes each) and refuses\n"
    "                        a trace that would not fit in the memory available (exit 2)\n"
    "  --inject SPEC         fault injection through the driver's configuration interface\n"
    "                        (reference driver only): oom:FUNCTION:N makes the Nth call of\n"
    "                        FUNCTION (RecycleCreateCommandList, RecycleCreateDeferredContext,\n"
    "                        CreateCommandList) fail with E_OUTOFMEMORY the way the DDI allows;\n"
    "                        removed:N reports device removal from its Nth call. Repeatable.\n"
    "                        The report then shows what the driver did differently.\n"
    "  --keep-going          report every divergence, not only the first\n"
    "  --digest              add a digest of the submitted command buffers to the report\n"
    "                        (stable in single mode; in recorded mode a driver that numbers\n"
    "                        objects in arrival order may vary it where calls overlapped)\n"
    "  --history N           recorded calls shown per handle involved (default 4)\n"
    "  --json                one JSON object instead of the report: outcome, calls,\n"
    "                        divergences, bad input, kernel and content summaries, driver\n"
    "                        violations (the same facts; same exit codes)\n"
    "  --salvage             skip corrupt chunks of a .cltrace\n"
    "  --quiet               no progress bar (shown on a terminal when replaying takes over a\n"
    "                        second)\n"
    "\n"
    "Output: `replay: identical (N calls)`, or `replay: divergence at seq S (fn F, tid T):\n"
    "expected X, actual Y` with the recent recorded calls on the handles involved, or\n"
    "`replay: bad input at seq S ...`; then a kernel line, a content line (bytes handed\n"
    "over, and where less than the recorded bytes reached the driver) and the driver's own\n"
    "violation lines (reference driver). The report contains no addresses or times: two\n"
    "replays of one trace print the same bytes.\n"
    "\n"
    "A recording with holes (positions lost when the recorded program died; `cltrace info`\n"
    "shows them on its gaps line) is replayed only up to its first hole, with --until.\n"
    "\n"
    "exit: 0 identical; 3 divergent; 2 bad input, bad usage or a driver that cannot be loaded\n";

// Sets *value from option `name` when given, which must be one of the two named choices;
// false (reported) for anything else.
template <typename T>
bool ParseEitherOf(const ParsedArgs& parsed, const char* name, std::pair<const char*, T> first,
                   std::pair<const char*, T> second, T* value, std::ostream& err) {
  std::optional<std::string> v = parsed.Option(name);
  if (!v) return true;
  for (const auto& [text, choice] : {first, second}) {
    if (*v == text) {
      *value = choice;
      return true;
    }
  }
  err << "cltrace replay: " << name << " must be " << first.first << " or " << second.first
      << ", not " << *v << "\n";
  return false;
}

// --kernel model (which compares the kernel layer of the whole trace and may replay it again
// to place kernel thunks: replayer/replay.h) loads the trace; every other replay streams it
// (ReplayStreamed below).
// --until SEQ: the calls up to SEQ and every call entered before the last of their exits (the
// calls nested in them, other threads' calls in between), read in seq order from the chunks
// that hold them (format::SeqStream); the rest of the trace is not read. A hole at or below
// SEQ makes it read the whole trace, for the message about the holes.
// --kernel model holds the calls it replays, and their plan, in memory: 2.15 GB peak for the
// 10M calls of `cltrace-workload long` (215 bytes a call; counted here with some margin). A
// trace that would not fit in the memory the machine has available is refused up front with
// the figures, rather than killed half-way by the kernel. The available memory is
// MemAvailable of /proc/meminfo, or CLTRACE_MEMORY_AVAILABLE (bytes) when set (tests).
constexpr uint64_t kKernelModelBytesPerCall = 256;

uint64_t AvailableMemory() {
  if (const char* v = getenv("CLTRACE_MEMORY_AVAILABLE"); v != nullptr && *v != '\0')
    return strtoull(v, nullptr, 10);
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  uint64_t kb = 0;
  while (meminfo >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;  // unknown: not judged
}

// False (with the message) if `calls` calls would not fit in memory for --kernel model.
bool KernelModelFits(const std::string& path, uint64_t calls, std::ostream& err) {
  const uint64_t available = AvailableMemory();
  const uint64_t need = calls * kKernelModelBytesPerCall;
  if (available == 0 || need <= available) return true;
  err << absl::StrFormat(
      "cltrace replay: %s: --kernel model holds the calls it replays in memory: about %.1f GiB "
      "for %d calls, more than the %.1f GiB available; replay it with --kernel recorded (the "
      "default, which streams), or only its beginning with --until SEQ\n",
      path, static_cast<double>(need) / (1 << 30), calls,
      static_cast<double>(available) / (1 << 30));
  return false;
}

// The calls --kernel model would hold: the trace's (from its index), or about --until's.
uint64_t KernelModelCalls(const std::string& path, uint64_t until, std::ostream& err) {
  std::unique_ptr<format::SeqStream> s = OpenVerbStream("replay", path, {}, err);
  if (s == nullptr) return 0;  // the load that follows reports it
  const uint64_t calls = s->expected_events();
  return until == 0 ? calls : std::min(calls, until);
}

// --kernel model's whole trace, loaded with a progress bar on a terminal (the replay that
// follows has none).
std::optional<TraceInput> LoadShown(const std::string& path, bool salvage, bool quiet,
                                    std::ostream& err) {
  Progress progress("replay", quiet);
  format::LoadOptions lo;
  lo.salvage = salvage;
  constexpr uint64_t kEvery = uint64_t{1} << 16;
  lo.progress_every = kEvery;
  uint64_t calls = 0;  // about: a call every kEvery events
  lo.progress = [&](uint64_t done, uint64_t total) {
    calls += kEvery;
    progress.Update(calls, 0,
                    static_cast<double>(done) / static_cast<double>(std::max<uint64_t>(1, total)));
  };
  absl::StatusOr<TraceInput> in = format::LoadTrace(path, lo);
  if (!in.ok()) {
    FailVerb(err, "replay", path, in.status().message());
    return std::nullopt;
  }
  return *std::move(in);
}

std::optional<TraceInput> ReadUntil(const std::string& path, bool salvage, uint64_t until,
                                    bool quiet, std::ostream& err) {
  format::SeqStreamOptions options;
  options.salvage = salvage;
  options.gaps = false;
  std::unique_ptr<format::SeqStream> s = OpenVerbStream("replay", path, options, err);
  if (s == nullptr) return std::nullopt;
  TraceInput in;
  uint64_t last_end = 0;  // the last exit of a call entered at or before `until`
  format::Event e;
  Progress progress("replay", quiet);
  while (s->Next(&e)) {
    progress.Update(s->delivered(), until);
    if (e.seq > until && e.seq > last_end) break;
    if (e.seq <= until) last_end = std::max(last_end, e.end == 0 ? UINT64_MAX : e.end);
    in.events.push_back(std::move(e));
  }
  in.path = path;
  in.format = s->format();
  in.file_size = s->file_size();
  in.handles = s->handles();
  in.strings = s->strings();
  in.contents = s->contents();
  in.error = s->status();
  in.header = s->header();
  in.stats = s->reader_stats();
  in.torn_tail = s->torn_tail();
  in.lines = s->lines();
  in.dense_positions = s->dense_positions();
  in.gaps = format::FindPositionGaps(in.events);
  if (!in.dense_positions) {
    in.gaps.missing = in.gaps.first_missing = 0;
    in.gaps.holes.clear();
  }
  if (in.gaps.missing > 0 && in.gaps.first_missing <= until)
    return LoadShown(path, salvage, quiet, err);
  return in;
}

// `replay --json`: the replay's result (replayer/replay.h ReplayResult) as one JSON object;
// the exit code of the text report.
// The exit code of a replay's verdict: 0 identical, 3 divergent, 2 bad input.
int ExitCodeOf(replay::Outcome outcome) {
  switch (outcome) {
    case replay::Outcome::kIdentical:
      return kExitOk;
    case replay::Outcome::kDivergent:
      return kExitDivergence;
    case replay::Outcome::kBadInput:
      return kExitBadInput;
  }
  return kExitBadInput;
}

int ReplayJson(const replay::ReplayOptions& options, const absl::StatusOr<replay::ReplayResult>& r,
               const format::TokenTable& handles, std::ostream& out, std::ostream& err) {
  if (!r.ok()) {
    err << "cltrace replay: " << r.status().message() << "\n";
    return kExitBadInput;
  }
  auto fn = [](format::CallId c) {
    const format::CallInfo* ci = format::GetCall(c);
    return std::string(ci != nullptr ? ci->name : "?");
  };
  JsonOut j;
  j.Begin();
  const char* outcome = r->outcome == replay::Outcome::kIdentical   ? "identical"
                        : r->outcome == replay::Outcome::kDivergent ? "divergent"
                                                                    : "bad input";
  j.Field("outcome", outcome);
  j.Field("calls", r->calls);
  if (r->until_seq != 0) j.Field("until", r->until_seq);
  if (r->never_returned_seq != 0) j.Field("never_returned", r->never_returned_seq);
  j.Key("divergences");
  j.w().StartArray();
  for (const replay::Divergence& d : r->divergences) {
    j.w().StartObject();
    j.Field("seq", d.seq);
    j.Field("tid", d.tid);
    j.Field("fn", fn(d.call));
    j.Field("expected", d.expected);
    j.Field("actual", d.actual);
    j.Key("handles");
    j.w().StartArray();
    for (uint64_t h : d.handles) j.Str(handles.Token(h));
    j.w().EndArray();
    j.w().EndObject();
  }
  j.w().EndArray();
  if (r->outcome == replay::Outcome::kBadInput) {
    j.Key("bad_input");
    j.w().StartObject();
    j.Field("seq", r->bad_seq);
    j.Field("tid", r->bad_tid);
    j.Field("fn", fn(r->bad_call));
    j.Field("message", r->bad_message);
    j.w().EndObject();
  }
  const replay::KernelSummary& k = r->kernel;
  j.Key("kernel");
  j.w().StartObject();
  j.Field("mode", k.model ? "model" : "recorded");
  j.Field("submissions", k.submissions);
  j.Field("command_bytes", k.command_bytes);
  if (options.digest) j.Field("digest", absl::StrFormat("%016x", k.digest));
  if (k.model) {
    j.Field("kernel_calls_compared", k.kernel_calls_compared);
    j.Field("dma_buffers", k.dma_buffers);
    j.Field("fences", k.fences);
    j.Field("fence_digests_recorded", k.fence_digests_recorded);
    j.Field("fence_digests_compared", k.fence_digests_compared);
    j.Field("gpu_digest", absl::StrFormat("%016x", k.gpu_digest));
    j.Key("checkpoints");
    j.w().StartArray();
    for (const auto& c : k.checkpoints) {
      j.w().StartObject();
      j.Field("seq", c.seq);
      j.Field("fn", fn(c.call));
      j.Field("digest", absl::StrFormat("%016x", c.digest));
      j.w().EndObject();
    }
    j.w().EndArray();
  }
  j.w().EndObject();
  const replay::ContentSummary& c = r->content;
  j.Key("content");
  j.w().StartObject();
  j.Field("uploads", c.uploads);
  j.Field("unmaps", c.unmaps);
  j.Field("bytes", c.bytes);
  j.Field("initial_data", c.initial_data);
  j.Field("initial_data_bytes", c.initial_data_bytes);
  j.Field("dx6_draws", c.dx6_draws);
  j.Field("dx6_bytes", c.dx6_bytes);
  j.Key("notes");
  j.w().StartArray();
  for (const std::string& n : c.notes) j.Str(n);
  j.w().EndArray();
  j.w().EndObject();
  j.Field("dx6_calls", r->dx6_calls);
  j.Key("driver_violations");
  j.w().StartArray();
  for (const std::string& v : r->driver_violations) j.Str(v);
  j.w().EndArray();
  j.End(out);
  return ExitCodeOf(r->outcome);
}

// The message about the holes of a recording (FORMAT.md §5.5) replayed across its first one.
int HolesMessage(const std::string& path, const format::PositionGaps& g, std::ostream& err) {
  err << "cltrace replay: " << path << ": the recording has " << g.missing
      << " missing positions (first missing seq " << g.first_missing << ", in " << g.holes.size()
      << (g.holes.size() == 1 ? " hole" : " holes")
      << "): calls lost when the recorded program died; replay the calls before the first "
         "hole with --until "
      << g.first_missing - 1 << "\n";
  return kExitBadInput;
}

}  // namespace

int ReplayStreamed(const replay::ReplayOptions& options, const std::string& path, bool salvage,
                   bool json, std::ostream& out, std::ostream& err, ReplayStreamCounts* counts,
                   bool quiet) {
  format::SeqStreamOptions so;
  so.salvage = salvage;
  so.gaps = options.until_seq == 0;
  std::unique_ptr<format::SeqStream> s = OpenVerbStream("replay", path, so, err);
  if (s == nullptr) return kExitBadInput;
  // --until: the positions of the events the replay took (ReplayStream asks for one more
  // than it takes when it stops early).
  format::PositionGapFinder finder;
  std::optional<format::Event> taken;
  auto next = [&](format::Event* e) {
    if (taken) finder.Add(*taken);
    taken.reset();
    if (!s->Next(e)) return false;
    if (options.until_seq != 0) taken = *e;
    return true;
  };
  replay::StreamReplayStats stats;
  // The bar counts the calls read (the replay follows a segment behind); erased before the
  // report. --until: the calls up to SEQ are the total.
  std::optional<Progress> progress;
  progress.emplace("replay", quiet);
  const uint64_t expected = options.until_seq != 0 && s->expected_events() != 0
                                ? std::min(options.until_seq, s->expected_events())
                                : s->expected_events();
  auto next_shown = [&](format::Event* e) {
    const bool more = next(e);
    progress->Update(s->delivered(), expected,
                     options.until_seq != 0
                         ? -1
                         : static_cast<double>(s->position()) /
                               static_cast<double>(std::max<uint64_t>(1, s->file_size())));
    return more;
  };
  absl::StatusOr<replay::ReplayResult> r =
      replay::ReplayStream(options, next_shown, s->handles(), s->strings(), s->contents(), &stats);
  progress.reset();
  if (taken && !stats.stopped_early) finder.Add(*taken);
  if (counts != nullptr) {
    counts->replay = stats;
    counts->stream = s->stats();
  }
  if (ReportedStreamError("replay", path, *s, "", out, err)) return kExitBadInput;
  // A recording with holes (a killed program: FORMAT.md §5.5) lacks calls the driver made or
  // was given: replaying across the first hole would judge the driver by a history it never
  // had. Replaying the calls before it is faithful.
  if (s->dense_positions()) {
    if (options.until_seq == 0) {
      if (s->gaps().missing > 0) return HolesMessage(path, s->gaps(), err);
    } else if (format::PositionGaps g = finder.Finish();
               g.missing > 0 && g.first_missing <= options.until_seq) {
      // The whole trace's holes, for the message.
      format::SeqStreamOptions all;
      all.salvage = salvage;
      std::unique_ptr<format::SeqStream> w = OpenVerbStream("replay", path, all, err);
      if (w == nullptr) return kExitBadInput;
      format::Event e;
      while (w->Next(&e)) {
      }
      if (ReportedStreamError("replay", path, *w, "", out, err)) return kExitBadInput;
      return HolesMessage(path, w->gaps(), err);
    }
  }
  if (json) return ReplayJson(options, r, s->handles(), out, err);
  if (!r.ok()) {
    err << "cltrace replay: " << r.status().message() << "\n";
    return kExitBadInput;
  }
  out << replay::FormatReport(*r, {}, s->handles(), s->strings(), options);
  return ExitCodeOf(r->outcome);
}

namespace {

int RunReplayVerb(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  // --inject may repeat: collect its values before the generic parser keeps the last one.
  std::vector<std::string> rest;
  std::vector<std::string> injects;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      rest.insert(rest.end(), args.begin() + static_cast<long>(i), args.end());
      break;
    }
    if (args[i] == "--inject" && i + 1 < args.size()) {
      injects.push_back(args[++i]);
    } else if (args[i].rfind("--inject=", 0) == 0) {
      injects.push_back(args[i].substr(9));
    } else {
      rest.push_back(args[i]);
    }
  }
  ArgSpec spec =
      ArgSpec("replay", kUsage)
          .Options({"--driver", "--threads", "--until", "--history", "--inject", "--kernel"})
          .Flags({"--keep-going", "--digest", "--json", "--salvage", "--quiet"})
          .Positional(1, 1);
  ParsedArgs parsed;
  if (std::optional<int> done = ParseVerbArgs(rest, spec, &parsed, out, err)) return *done;
  replay::ReplayOptions options;
  options.dx6_driver = Dx6ModelDriverFactory();
  options.keep_going = parsed.Flag("--keep-going");
  options.digest = parsed.Flag("--digest");
  if (!ParseEitherOf(parsed, "--threads", {"recorded", replay::ThreadMode::kRecorded},
                     {"single", replay::ThreadMode::kSingle}, &options.threads, err) ||
      !ParseEitherOf(parsed, "--kernel", {"recorded", replay::KernelMode::kRecorded},
                     {"model", replay::KernelMode::kModel}, &options.kernel, err)) {
    return kExitBadInput;
  }
  if (std::optional<std::string> u = parsed.Option("--until")) {
    absl::StatusOr<uint64_t> seq = ParseCount("--until", *u);
    if (!seq.ok() || *seq == 0) {
      err << "cltrace replay: --until needs a seq >= 1\n";
      return kExitBadInput;
    }
    options.until_seq = *seq;
  }
  if (std::optional<std::string> h = parsed.Option("--history")) {
    absl::StatusOr<uint64_t> n = ParseCount("--history", *h);
    if (!n.ok()) {
      err << "cltrace replay: " << n.status().message() << "\n";
      return kExitBadInput;
    }
    options.history = static_cast<size_t>(*n);
  }
  for (const std::string& spec_text : injects) {
    absl::StatusOr<replay::Injection> in = replay::ParseInjection(spec_text);
    if (!in.ok()) {
      err << "cltrace replay: " << in.status().message() << "\n";
      return kExitBadInput;
    }
    options.injections.push_back(*in);
  }
  options.driver_path = parsed.Option("--driver")
                            .value_or(FindBesideTool("CLTRACE_DRIVER", "libcltrace_refdriver.so"));
  if (options.driver_path.empty()) {
    err << "cltrace replay: no driver: pass --driver LIB (the reference driver was not found "
           "beside this tool)\n";
    return kExitBadInput;
  }
  const std::string& path = parsed.positional[0];
  if (options.kernel != replay::KernelMode::kModel) {
    return ReplayStreamed(options, path, parsed.Flag("--salvage"), parsed.Flag("--json"), out, err,
                          nullptr, parsed.Flag("--quiet"));
  }
  if (!KernelModelFits(path, KernelModelCalls(path, options.until_seq, err), err))
    return kExitBadInput;
  std::optional<TraceInput> in =
      options.until_seq != 0
          ? ReadUntil(path, parsed.Flag("--salvage"), options.until_seq, parsed.Flag("--quiet"),
                      err)
          : LoadShown(path, parsed.Flag("--salvage"), parsed.Flag("--quiet"), err);
  if (!in) return kExitBadInput;
  if (ReportedReadError("replay", path, *in, "", out, err)) return kExitBadInput;
  // A recording with holes (a killed program: FORMAT.md §5.5) lacks calls the driver made or
  // was given: replaying across the first hole would judge the driver by a history it never
  // had. Replaying the calls before it is faithful.
  if (in->dense_positions && in->gaps.missing > 0 &&
      (options.until_seq == 0 || options.until_seq >= in->gaps.first_missing)) {
    err << "cltrace replay: " << path << ": the recording has " << in->gaps.missing
        << " missing positions (first missing seq " << in->gaps.first_missing << ", in "
        << in->gaps.holes.size() << (in->gaps.holes.size() == 1 ? " hole" : " holes")
        << "): calls lost when the recorded program died; replay the calls before the first "
           "hole with --until "
        << in->gaps.first_missing - 1 << "\n";
    return kExitBadInput;
  }
  if (parsed.Flag("--json")) {
    return ReplayJson(options,
                      replay::Replay(options, in->events, in->handles, in->strings, in->contents),
                      in->handles, out, err);
  }
  return replay::RunReplay(options, in->events, in->handles, in->strings, in->contents, out, err);
}

const VerbRegistrar kReplay({"replay",
                             "replay a trace into a driver and compare with the recording", kUsage,
                             RunReplayVerb});

}  // namespace
}  // namespace cltrace::cli
