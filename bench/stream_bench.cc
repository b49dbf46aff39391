// Reading a large recorder-shaped trace (bench/synthetic_trace.h: the corpus's smallcl.cltrace
// repeated, 4 threads' runs interleaved as the recorder writes them): the raw decode in file
// order (BM_StreamRawDecode, the reference), LoadTrace (materialised and sorted), the
// seq-ordered SeqStream, and the verbs that run on it (the whole `cltrace VERB`, output
// discarded), and JSONL import (lines of the trace's export). Every benchmark after the raw
// decode reports `ratio_to_raw`: its calls (import: lines) per second of wall time over the
// raw decode's, measured in the same run (run the raw decode first: it is registered first).
// Calls: CLTRACE_BENCH_CALLS (default 2,000,000); the trace is generated once into the
// temporary directory. CLTRACE_BENCH_TRACE=PATH measures an existing trace instead (a
// recording of `cltrace-workload long`, say).
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "bench/synthetic_trace.h"
#include "benchmark/benchmark.h"
#include "cli/verb.h"
#include "format/load_trace.h"
#include "format/seq_stream.h"
#include "format/trace_reader.h"

namespace cltrace {
namespace {

uint64_t Calls() {
  uint64_t n = 2'000'000;
  if (const char* v = std::getenv("CLTRACE_BENCH_CALLS")) (void)absl::SimpleAtoi(v, &n);
  return n;
}

// The synthetic trace's path (written on first use), or CLTRACE_BENCH_TRACE.
const std::string& TracePath() {
  static const std::string* path = [] {
    if (const char* given = std::getenv("CLTRACE_BENCH_TRACE")) return new std::string(given);
    const char* tmp = std::getenv("TMPDIR");
    auto* p = new std::string(
        absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/cltrace_bench_stream_", Calls(), ".cltrace"));
    if (!std::ifstream(*p).good()) {
      absl::Status s = bench::WriteRepeatedTrace(
          CLTRACE_SOURCE_DIR "/corpus/traces/smallcl.cltrace", *p, Calls());
      if (!s.ok()) *p = "";
    }
    return p;
  }();
  return *path;
}

double raw_rate = 0;       // calls/s (wall) of BM_StreamRawDecode in this run
uint64_t trace_calls = 0;  // calls in the trace (counted by BM_StreamRawDecode)

// Wall time of a benchmark's loop, for the ratio to the raw decode.
class Wall {
 public:
  Wall() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

void Report(benchmark::State& state, uint64_t calls, const Wall& wall, bool is_raw = false) {
  const double total = static_cast<double>(calls) * static_cast<double>(state.iterations());
  state.counters["calls/s"] = benchmark::Counter(total, benchmark::Counter::kIsRate);
  const double rate = total / wall.seconds();
  if (is_raw) {
    raw_rate = rate;
  } else if (raw_rate > 0) {
    state.counters["ratio_to_raw"] = rate / raw_rate;
  }
}

// The raw decode: every event of `path` in file order, nothing kept. Returns the events.
uint64_t DecodeAll(const std::string& path) {
  auto r = format::TraceReader::Open(path);
  format::Event e;
  uint64_t n = 0;
  while ((*r)->Next(&e)) ++n;
  benchmark::DoNotOptimize(e);
  return n;
}

void BM_StreamRawDecode(benchmark::State& state) {
  if (TracePath().empty()) return state.SkipWithError("cannot write the trace");
  uint64_t n = 0;
  Wall wall;
  for (auto _ : state) n = DecodeAll(TracePath());
  trace_calls = n;
  Report(state, n, wall, true);
}
BENCHMARK(BM_StreamRawDecode)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StreamLoadTrace(benchmark::State& state) {
  uint64_t n = 0;
  Wall wall;
  for (auto _ : state) {
    absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(TracePath());
    n = t->events.size();
  }
  Report(state, n, wall);
}
BENCHMARK(BM_StreamLoadTrace)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StreamSeqOrder(benchmark::State& state) {
  uint64_t n = 0;
  Wall wall;
  for (auto _ : state) {
    auto s = format::SeqStream::Open(TracePath());
    format::Event e;
    n = 0;
    while ((*s)->Next(&e)) ++n;
    benchmark::DoNotOptimize(e);
  }
  Report(state, n, wall);
}
BENCHMARK(BM_StreamSeqOrder)->Unit(benchmark::kMillisecond)->UseRealTime();

// Counts and discards what a verb prints, as `>/dev/null` does: a verb's output is not held
// (dump of a 100M-call trace prints gigabytes).
class DiscardBuf : public std::streambuf {
 public:
  uint64_t bytes() const { return bytes_; }

 protected:
  int overflow(int c) override {
    ++bytes_;
    return c == traits_type::eof() ? traits_type::not_eof(c) : c;
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes_ += static_cast<uint64_t>(n);
    return n;
  }

 private:
  uint64_t bytes_ = 0;
};

// `cltrace ARGS...` with the trace as its first argument, output discarded.
void RunVerb(benchmark::State& state, std::vector<std::string> args, bool quiet = true) {
  args.insert(args.begin() + 1, TracePath());
  args.insert(args.begin(), "cltrace");
  if (quiet) args.push_back("--quiet");
  int code = 0;
  Wall wall;
  for (auto _ : state) {
    DiscardBuf out_buf;
    std::ostream out(&out_buf);
    std::ostringstream err;
    code = cli::RunCli(args, out, err);
    benchmark::DoNotOptimize(out_buf.bytes());
  }
  if (code == 2) state.SkipWithError("the verb failed");
  Report(state, trace_calls != 0 ? trace_calls : Calls(), wall);
}

void BM_StreamVerbInfo(benchmark::State& state) { RunVerb(state, {"info"}); }
BENCHMARK(BM_StreamVerbInfo)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_StreamVerbCheck(benchmark::State& state) { RunVerb(state, {"check"}); }
BENCHMARK(BM_StreamVerbCheck)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_StreamVerbStats(benchmark::State& state) { RunVerb(state, {"stats"}); }
BENCHMARK(BM_StreamVerbStats)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_StreamVerbLifecycle(benchmark::State& state) { RunVerb(state, {"lifecycle"}); }
BENCHMARK(BM_StreamVerbLifecycle)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_StreamVerbDump(benchmark::State& state) { RunVerb(state, {"dump"}); }
BENCHMARK(BM_StreamVerbDump)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_StreamVerbExport(benchmark::State& state) { RunVerb(state, {"export", "-o", "/dev/null"}); }
BENCHMARK(BM_StreamVerbExport)->Unit(benchmark::kMillisecond)->UseRealTime();

// `cltrace import` of the trace's JSONL export (written once, next to the trace): lines per
// second, as a ratio to the raw decode's calls per second.
void BM_StreamVerbImport(benchmark::State& state) {
  const std::string jsonl =
      absl::StrCat(std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp",
                   "/cltrace_bench_import_", getpid(), ".jsonl");
  const std::string out_path = jsonl + ".cltrace";
  {
    std::ostringstream out, err;
    if (cli::RunCli({"cltrace", "export", TracePath(), "-o", jsonl, "--quiet"}, out, err) != 0)
      return state.SkipWithError("cannot export the trace");
  }
  uint64_t lines = 0;
  {
    std::ifstream in(jsonl);
    std::string line;
    while (std::getline(in, line)) ++lines;
  }
  int code = 0;
  Wall wall;
  for (auto _ : state) {
    std::ostringstream out, err;
    code = cli::RunCli({"cltrace", "import", jsonl, "-o", out_path, "--quiet"}, out, err);
    benchmark::DoNotOptimize(out.tellp());
  }
  std::remove(jsonl.c_str());
  std::remove(out_path.c_str());
  if (code != 0) return state.SkipWithError("import failed");
  Report(state, lines, wall);
}
BENCHMARK(BM_StreamVerbImport)->Unit(benchmark::kMillisecond)->UseRealTime();

// dump --from the middle --count 5, JSON and text: cost independent of the trace's length
// (both seek through the index; the text form takes the IC::/DC:: tables from the contexts'
// creations).
void DumpSeek(benchmark::State& state, bool json) {
  const std::string from =
      absl::StrCat(trace_calls != 0 ? trace_calls : Calls());  // about the middle
  std::vector<std::string> args{"cltrace", "dump",    TracePath(), "--from",
                                from,      "--count", "5",         "--quiet"};
  if (json) args.push_back("--json");
  for (auto _ : state) {
    std::ostringstream out, err;
    cli::RunCli(args, out, err);
    benchmark::DoNotOptimize(out.tellp());
  }
}
void BM_StreamDumpSeek(benchmark::State& state) { DumpSeek(state, true); }
BENCHMARK(BM_StreamDumpSeek)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_StreamDumpSeekText(benchmark::State& state) { DumpSeek(state, false); }
BENCHMARK(BM_StreamDumpSeekText)->Unit(benchmark::kMillisecond)->UseRealTime();

// `cltrace replay --threads single` into the reference driver. The synthetic trace above is
// no replay input (it repeats smallcl.cltrace, whose device the reference driver will not
// create twice on one adapter, and its last repetition is cut off), so the replay runs on a
// recording of `cltrace-workload smallcl --frames N` (N: CLTRACE_BENCH_REPLAY_FRAMES, default
// 1200, about 2 M calls), made once into the temporary directory with the tools beside this
// binary; BM_StreamReplayRawDecode is the raw decode of that recording in the same run and
// BM_StreamVerbReplay's `ratio_to_raw` is relative to it.
const std::string& ReplayTracePath() {
  static const std::string* path = [] {
    std::string frames = "1200";
    if (const char* v = std::getenv("CLTRACE_BENCH_REPLAY_FRAMES")) frames = v;
    const char* tmp = std::getenv("TMPDIR");
    auto* p = new std::string(absl::StrCat(tmp != nullptr ? tmp : "/tmp",
                                           "/cltrace_bench_replay_smallcl_", frames, ".cltrace"));
    if (!std::ifstream(*p).good()) {
      char exe[4096];
      const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
      std::string bin = n > 0 ? std::string(exe, static_cast<size_t>(n)) : "./x";
      bin = bin.substr(0, bin.rfind('/'));
      const std::string cmd =
          absl::StrCat(bin, "/cltrace record -o ", *p, " -- ", bin,
                       "/cltrace-workload smallcl --frames ", frames, " >/dev/null 2>&1");
      if (std::system(cmd.c_str()) != 0) *p = "";
    }
    return p;
  }();
  return *path;
}

double replay_raw_rate = 0;  // calls/s (wall) of BM_StreamReplayRawDecode in this run
uint64_t replay_trace_calls = 0;

void BM_StreamReplayRawDecode(benchmark::State& state) {
  if (ReplayTracePath().empty()) return state.SkipWithError("cannot record the workload");
  uint64_t n = 0;
  Wall wall;
  for (auto _ : state) n = DecodeAll(ReplayTracePath());
  replay_trace_calls = n;
  const double total = static_cast<double>(n) * static_cast<double>(state.iterations());
  state.counters["calls/s"] = benchmark::Counter(total, benchmark::Counter::kIsRate);
  replay_raw_rate = total / wall.seconds();
}
BENCHMARK(BM_StreamReplayRawDecode)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StreamVerbReplay(benchmark::State& state) {
  if (ReplayTracePath().empty()) return state.SkipWithError("cannot record the workload");
  const std::vector<std::string> args = {"cltrace", "replay", ReplayTracePath(), "--threads",
                                         "single"};
  int code = 0;
  Wall wall;
  for (auto _ : state) {
    std::ostringstream out, err;
    code = cli::RunCli(args, out, err);
    benchmark::DoNotOptimize(out.tellp());
  }
  if (code != 0) return state.SkipWithError("the replay was not identical");
  const double total =
      static_cast<double>(replay_trace_calls) * static_cast<double>(state.iterations());
  state.counters["calls/s"] = benchmark::Counter(total, benchmark::Counter::kIsRate);
  if (replay_raw_rate > 0)
    state.counters["ratio_to_raw"] = total / wall.seconds() / replay_raw_rate;
}
BENCHMARK(BM_StreamVerbReplay)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace cltrace
