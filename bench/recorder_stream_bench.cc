// The stream of issue #15, recorded by this recorder and by the previous one, in one run.
//
// BM_BareStream / BM_RecordStream: call i of 1,000,000 per thread is
// DrawIndexed(hCtx, 36 + (i % 7) * 3, (i * 36) % 65536, (i / 100) % 1000) into a driver that
// does nothing — on 1, 2 and 4 threads (each on its own deferred context), without and with a
// Recorder writing a compressed file (the same region, rings and drainer as `cltrace record`,
// in-process). Counters: the calling thread's CPU per call (thread CPU clock, averaged over
// the threads), the drainer's CPU per call (encode + compress + write), bytes per call,
// producer waits. RecordStream also reports the calling thread's added cost (its
// cpu_ns_per_call minus BareStream's of the same run) and the ratio of its CPU per call to the
// bare call's.
//
// BM_PreviousRecordStream/N: BM_RecordStream/threads:N of the previous recorder — the
// in-process recorder with its own background thread, before the shared-memory region
// (commit f6d33c7) — built from this same file by scripts/build-previous-recorder.sh into
// build/previous-recorder/ and run as a child process here, right after this recorder's runs.
// It reports the previous recorder's figures and this recorder's as ratios to them
// (`*_vs_previous`: below 1 is better). Skipped, saying how to build it, when it is not built.
//
// Run: build/bin/cltrace_bench --benchmark_filter='BM_(Bare|Record|PreviousRecord)Stream'
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/recorder_fixture.h"
#include "benchmark/benchmark.h"
#ifndef CLTRACE_PREVIOUS_RECORDER_BUILD
#include "rapidjson/document.h"
#endif

namespace cltrace::recorder {
namespace {

using bench::Setup;
using testing::FakeRtContext;

constexpr int kStreamCalls = 1000000;

// This run's figures per thread count, for the ratios (benchmarks of one binary run in the
// order they are registered: bare, recorded, previous).
struct StreamFigures {
  double bare_cpu_ns = 0;
  double record_cpu_ns = 0;
  double record_drainer_ns = 0;
  double record_bytes = 0;
};
std::map<int, StreamFigures>& Figures() {
  static std::map<int, StreamFigures> figures;
  return figures;
}

void StreamLoop(benchmark::State& state, Setup* const& setup, std::atomic<int64_t>* cpu_ns) {
  for (auto _ : state) {
    // Threads meet at the first iteration: thread 0's setup is complete from here.
    FakeRtContext* dc = setup->dcs[static_cast<size_t>(state.thread_index())];
    const int64_t start = bench::ThreadCpuNs();
    for (uint32_t i = 0; i < static_cast<uint32_t>(kStreamCalls); ++i) {
      dc->funcs.pfnDrawIndexed(dc->handle, 36 + (i % 7) * 3, (i * 36) % 65536,
                               static_cast<INT>((i / 100) % 1000));
    }
    cpu_ns->fetch_add(bench::ThreadCpuNs() - start);
  }
  state.SetItemsProcessed(state.iterations() * kStreamCalls);
}

double CpuPerCall(const benchmark::State& state, int64_t cpu_ns) {
  return static_cast<double>(cpu_ns) /
         (static_cast<double>(state.iterations()) * kStreamCalls * state.threads());
}

void BM_BareStream(benchmark::State& state) {
  static Setup* setup = nullptr;
  static std::atomic<int64_t> cpu_ns{0};
  if (state.thread_index() == 0) {
    setup = &bench::Get(false, state.threads());
    cpu_ns = 0;
  }
  StreamLoop(state, setup, &cpu_ns);
  if (state.thread_index() == 0) {
    const double cpu = CpuPerCall(state, cpu_ns.load());
    Figures()[state.threads()].bare_cpu_ns = cpu;
    state.counters["cpu_ns_per_call"] = benchmark::Counter(cpu);
  }
}
BENCHMARK(BM_BareStream)->Threads(1)->Threads(2)->Threads(4)->Iterations(1)->UseRealTime();

std::unique_ptr<Recorder> g_recorder;
std::string g_path;

void BM_RecordStream(benchmark::State& state) {
  static Setup* setup = nullptr;
  static std::atomic<int64_t> cpu_ns{0};
  if (state.thread_index() == 0) {
    g_path = bench::BenchTracePath();
    auto rec = bench::StartFileRecorder(g_path);
    if (!rec.ok()) {
      state.SkipWithError(std::string(rec.status().message()).c_str());
      return;
    }
    g_recorder = std::move(*rec);
    setup = &bench::Get(true, state.threads());
    cpu_ns = 0;
  }
  StreamLoop(state, setup, &cpu_ns);
  if (state.thread_index() == 0) {
    Stats stats = g_recorder->Stop();
    g_recorder.reset();
    unlink(g_path.c_str());
    const double calls = static_cast<double>(stats.calls);
    StreamFigures& f = Figures()[state.threads()];
    f.record_cpu_ns = CpuPerCall(state, cpu_ns.load());
    f.record_drainer_ns = static_cast<double>(stats.background_cpu_ns) / calls;
    f.record_bytes = static_cast<double>(stats.bytes_written) / calls;
    state.counters["cpu_ns_per_call"] = benchmark::Counter(f.record_cpu_ns);
    state.counters["drainer_ns_per_call"] = benchmark::Counter(f.record_drainer_ns);
    state.counters["bytes_per_call"] = benchmark::Counter(f.record_bytes);
    state.counters["waits_per_million"] =
        benchmark::Counter(static_cast<double>(stats.producer_waits) * 1e6 / calls);
    state.counters["recorded_calls"] = benchmark::Counter(calls);
    if (f.bare_cpu_ns > 0) {
      state.counters["added_ns_per_call"] = benchmark::Counter(f.record_cpu_ns - f.bare_cpu_ns);
      state.counters["cpu_vs_bare"] = benchmark::Counter(f.record_cpu_ns / f.bare_cpu_ns);
    }
  }
}
BENCHMARK(BM_RecordStream)->Threads(1)->Threads(2)->Threads(4)->Iterations(1)->UseRealTime();

#ifndef CLTRACE_PREVIOUS_RECORDER_BUILD
// The previous recorder's stream benchmark, built by scripts/build-previous-recorder.sh.
std::string PreviousRecorderBench() {
  if (const char* path = std::getenv("CLTRACE_PREVIOUS_RECORDER_BENCH"); path != nullptr) {
    return path;
  }
  return bench::BinDir() + "/../previous-recorder/build/bin/previous_recorder_stream";
}

// Runs the previous recorder's BM_RecordStream/threads:`threads` and returns its counters
// (empty with `error` set when it could not).
std::map<std::string, double> RunPrevious(const std::string& binary, int threads,
                                          std::string* error) {
  const std::string json = absl::StrCat("/tmp/cltrace_previous_recorder_", getpid(), ".json");
  const std::string cmd = absl::StrCat(
      binary, " --benchmark_filter='^BM_RecordStream/iterations:1/real_time/threads:", threads,
      "$' --benchmark_format=json --benchmark_out_format=json --benchmark_out=", json,
      " >/dev/null");
  std::map<std::string, double> counters;
  if (std::system(cmd.c_str()) != 0) {
    *error = absl::StrCat("the previous recorder's benchmark failed: ", cmd);
    return counters;
  }
  std::ifstream in(json);
  std::stringstream text;
  text << in.rdbuf();
  unlink(json.c_str());
  rapidjson::Document doc;
  doc.Parse(text.str().c_str());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("benchmarks") ||
      !doc["benchmarks"].IsArray() || doc["benchmarks"].Empty()) {
    *error = "the previous recorder's benchmark wrote no result";
    return counters;
  }
  for (const auto& m : doc["benchmarks"][0].GetObject()) {
    if (m.value.IsNumber()) counters[m.name.GetString()] = m.value.GetDouble();
  }
  return counters;
}

void BM_PreviousRecordStream(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const std::string binary = PreviousRecorderBench();
  if (access(binary.c_str(), X_OK) != 0) {
    state.SkipWithError(
        "the previous recorder is not built: run scripts/build-previous-recorder.sh");
    return;
  }
  std::map<std::string, double> prev;
  std::string error;
  for (auto _ : state) prev = RunPrevious(binary, threads, &error);
  if (!error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  const StreamFigures& f = Figures()[threads];
  const double prev_cpu = prev["cpu_ns_per_call"];
  state.counters["prev_cpu_ns_per_call"] = benchmark::Counter(prev_cpu);
  state.counters["prev_drainer_ns_per_call"] = benchmark::Counter(prev["drainer_ns_per_call"]);
  state.counters["prev_bytes_per_call"] = benchmark::Counter(prev["bytes_per_call"]);
  state.counters["prev_waits_per_million"] = benchmark::Counter(prev["waits_per_million"]);
  if (f.bare_cpu_ns > 0 && f.record_cpu_ns > 0 && prev_cpu > f.bare_cpu_ns) {
    state.counters["prev_added_ns_per_call"] = benchmark::Counter(prev_cpu - f.bare_cpu_ns);
    state.counters["added_vs_previous"] =
        benchmark::Counter((f.record_cpu_ns - f.bare_cpu_ns) / (prev_cpu - f.bare_cpu_ns));
    state.counters["drainer_vs_previous"] =
        benchmark::Counter(f.record_drainer_ns / prev["drainer_ns_per_call"]);
    state.counters["bytes_vs_previous"] =
        benchmark::Counter(f.record_bytes / prev["bytes_per_call"]);
  }
}
BENCHMARK(BM_PreviousRecordStream)
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
#endif  // CLTRACE_PREVIOUS_RECORDER_BUILD

}  // namespace
}  // namespace cltrace::recorder
