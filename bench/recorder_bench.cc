// The recorder's per-call cost (recorder/README.md has the figures).
//
// BM_BareCall: a Draw through a deferred context's table as the fake driver filled it
// (recorder/internal/fake_driver.h), no recorder. BM_RecordCall: the same call through the
// table the recorder filled, with a Recorder writing a compressed trace to a file. Both run on
// 1 and 2 threads, each thread on its own deferred context (the concurrent case the DDI
// allows: different DCs record in parallel). Times are wall-clock (UseRealTime), so producer
// waits and the background thread's competition for the CPU are included. Google Benchmark
// divides a multi-threaded run's wall time by the iterations of all its threads: the time of
// threads:2 is per call of the two threads together (half a thread's own time per call when
// they run truly in parallel, as BM_BareCall shows). The recorder's own counters are reported
// (waits and wait time per call, background CPU per call, trace bytes per call). The added cost
// of recording is BM_RecordCall minus BM_BareCall of the same run.
//
// BM_RecorderPhases: the two sides of that cost measured apart. A fresh thread makes
// kPhaseCalls Draws into a ring large enough to hold them all (the background thread leaves a
// ring alone until it is an eighth full), then Stop turns them into events, compresses and
// writes them. produce_ns_per_call is the application thread's cost alone (no consumer
// competing for the ring's cache lines); the iteration time (manual) is Stop's per call and
// background_ns_per_call the background thread's CPU per call, both including what a session
// costs once (thread, zstd context, buffers, index; tens of ns per call at 128 Ki calls), so an
// upper bound of the per-event cost that BM_RecordCall's background_ns_per_call shows in
// steady state. Back-to-back calls run at the pace of the slower side.
//
// BM_BareStream / BM_RecordStream (issue #15's stream, and the previous recorder on it) are
// in bench/recorder_stream_bench.cc.
//
// BM_SmallClTraceSize: build/bin/cltrace-workload smallcl (4 threads, the small-command-list
// workload) run with build/lib/libcltrace_shim.so as its driver, as `cltrace record` runs it,
// recording into /tmp; reports the trace's bytes per call from the shim's statistics. (A child
// process: the shim cannot be loaded into this binary, which links cltrace_format itself; see
// recorder/CMakeLists.txt.) Skipped when the shim or the workload is not built.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bench/recorder_fixture.h"
#include "benchmark/benchmark.h"
#include "recorder/internal/fake_driver.h"
#include "recorder/recorder.h"

namespace cltrace::recorder {
namespace {

using bench::BenchTracePath;
using bench::BinDir;
using bench::Get;
using bench::Setup;
using bench::StartFileRecorder;
using bench::ThreadCpuNs;
using testing::FakeRtContext;

void BM_BareCall(benchmark::State& state) {
  static Setup* setup = nullptr;
  if (state.thread_index() == 0) setup = &Get(false, state.threads());
  // Threads meet at the first iteration; the setup is complete by then.
  for (auto _ : state) {
    FakeRtContext* dc = setup->dcs[static_cast<size_t>(state.thread_index())];
    dc->funcs.pfnDraw(dc->handle, 3, 0);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BareCall)->Threads(1)->Threads(2)->UseRealTime();

std::unique_ptr<Recorder> g_recorder;
std::string g_path;

void BM_RecordCall(benchmark::State& state) {
  static Setup* setup = nullptr;
  if (state.thread_index() == 0) {
    g_path = BenchTracePath();
    auto rec = StartFileRecorder(g_path);
    if (!rec.ok()) {
      state.SkipWithError(std::string(rec.status().message()).c_str());
      return;
    }
    g_recorder = std::move(*rec);
    setup = &Get(true, state.threads());
  }
  for (auto _ : state) {
    FakeRtContext* dc = setup->dcs[static_cast<size_t>(state.thread_index())];
    dc->funcs.pfnDraw(dc->handle, 3, 0);
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    // After the timed loop (every thread's loop has ended here): the rest is not timed.
    Stats stats = g_recorder->Stop();
    g_recorder.reset();
    unlink(g_path.c_str());
    state.counters["waits_per_call"] = benchmark::Counter(
        static_cast<double>(stats.producer_waits) / static_cast<double>(stats.calls));
    state.counters["bytes_per_call"] = benchmark::Counter(static_cast<double>(stats.bytes_written) /
                                                          static_cast<double>(stats.calls));
    state.counters["recorded_calls"] = benchmark::Counter(static_cast<double>(stats.calls));
    // Time the producers spent waiting for ring space, per call (all threads).
    state.counters["wait_ns_per_call"] = benchmark::Counter(
        static_cast<double>(stats.producer_wait_ns) / static_cast<double>(stats.calls));
    // The background thread's CPU per call (interning, encoding, compression, writing).
    state.counters["background_ns_per_call"] = benchmark::Counter(
        static_cast<double>(stats.background_cpu_ns) / static_cast<double>(stats.calls));
  }
}
BENCHMARK(BM_RecordCall)->Threads(1)->Threads(2)->UseRealTime();

// BM_BareUpload / BM_RecordUpload: a 256-byte UpdateSubresourceUP of a buffer on the immediate
// context, every call's bytes different (nothing for the writer to deduplicate: the worst
// case), without and with the recorder. Content capture copies the source before the call and
// the background thread interns it; RecordUpload minus BareUpload is what recording such a call
// costs, to compare with BM_RecordCall minus BM_BareCall for a call without content.
void UploadLoop(benchmark::State& state, FakeRtContext& ic) {
  alignas(8) static unsigned char res_mem[64];
  const D3D10DDI_HRESOURCE res{res_mem};
  const D3D10DDI_MIPINFO mip{256, 1, 1, 256, 1, 1};
  D3D11DDIARG_CREATERESOURCE create{};
  create.pMipInfoList = &mip;
  create.ResourceDimension = D3D10DDIRESOURCE_BUFFER;
  create.MipLevels = create.ArraySize = 1;
  ic.funcs.pfnCreateResource(ic.handle, &create, res, D3D10DDI_HRTRESOURCE{});
  uint32_t data[64] = {};
  for (auto _ : state) {
    ++data[0];
    ic.funcs.pfnResourceUpdateSubresourceUP(ic.handle, res, 0, nullptr, data, sizeof(data), 0);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(sizeof(data)));
}

void BM_BareUpload(benchmark::State& state) { UploadLoop(state, Get(false, 1).runtime.ic()); }
BENCHMARK(BM_BareUpload)->UseRealTime();

void BM_RecordUpload(benchmark::State& state) {
  const std::string path = BenchTracePath();
  auto rec = StartFileRecorder(path);
  if (!rec.ok()) {
    state.SkipWithError(std::string(rec.status().message()).c_str());
    return;
  }
  UploadLoop(state, Get(true, 1).runtime.ic());
  Stats stats = (*rec)->Stop();
  unlink(path.c_str());
  state.counters["contents_per_call"] =
      benchmark::Counter(static_cast<double>(stats.contents) / static_cast<double>(stats.calls));
  state.counters["bytes_per_call"] = benchmark::Counter(static_cast<double>(stats.bytes_written) /
                                                        static_cast<double>(stats.calls));
  state.counters["background_ns_per_call"] = benchmark::Counter(
      static_cast<double>(stats.background_cpu_ns) / static_cast<double>(stats.calls));
}
BENCHMARK(BM_RecordUpload)->UseRealTime();

// BM_PositionPair: the floor of the calling thread's cost on this machine. Every recorded call
// takes its entry and its exit position from the region's process-wide counter (two `lock
// xadd` on one cache line, recorder/internal/core.h); this is those two and nothing else, on
// 1, 2 and 4 threads (one shared counter, as in BM_RecordStream). In a profile of
// BM_RecordStream/threads:1 the two instructions hold ~60% of the thunk's samples.
void BM_PositionPair(benchmark::State& state) {
  alignas(64) static std::atomic<uint64_t> counter{0};
  uint64_t sum = 0;
  const int64_t start = ThreadCpuNs();
  for (auto _ : state) {
    sum += counter.fetch_add(1, std::memory_order_acq_rel);
    sum += counter.fetch_add(1, std::memory_order_acq_rel);
  }
  benchmark::DoNotOptimize(sum);
  state.counters["cpu_ns_per_call"] = benchmark::Counter(
      static_cast<double>(ThreadCpuNs() - start) / static_cast<double>(state.iterations()),
      benchmark::Counter::kAvgThreads);
}
BENCHMARK(BM_PositionPair)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

constexpr int kPhaseCalls = 1 << 17;

void BM_RecorderPhases(benchmark::State& state) {
  const std::string path = absl::StrCat("/tmp/cltrace_recorder_phases_", getpid(), ".cltrace");
  Setup& setup = Get(true, 1);
  FakeRtContext* dc = setup.dcs[0];
  double produce_ns = 0, background_ns = 0;
  for (auto _ : state) {
    Options o;
    o.output_path = path;
    // 48-byte records: 128 Ki calls (6 MiB, cache-resident as a busy 1 MiB ring is) stay
    // under an eighth of 64 MiB, so nothing is drained before Stop (no periodic flush, the
    // hold time is 250 ms).
    o.thread_buffer_bytes = size_t{64} << 20;
    o.max_threads = 4;  // the region: 4 slots of 64 MiB
    o.flush_period_ms = 0;
    auto rec = Recorder::Start(std::move(o));
    if (!rec.ok()) {
      state.SkipWithError(std::string(rec.status().message()).c_str());
      return;
    }
    std::chrono::steady_clock::duration produce{};
    std::thread producer([&] {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kPhaseCalls; ++i) dc->funcs.pfnDraw(dc->handle, 3, 0);
      produce = std::chrono::steady_clock::now() - start;
    });
    producer.join();
    const auto start = std::chrono::steady_clock::now();
    Stats stats = (*rec)->Stop();
    const std::chrono::duration<double> drain = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(drain.count() / kPhaseCalls);
    produce_ns += std::chrono::duration<double, std::nano>(produce).count() / kPhaseCalls;
    background_ns += static_cast<double>(stats.background_cpu_ns) / kPhaseCalls;
    if (stats.calls != kPhaseCalls || stats.events_written != kPhaseCalls) {
      state.SkipWithError("calls were not all recorded");
      return;
    }
  }
  unlink(path.c_str());
  const double n = static_cast<double>(state.iterations());
  state.counters["produce_ns_per_call"] = benchmark::Counter(produce_ns / n);
  state.counters["background_ns_per_call"] = benchmark::Counter(background_ns / n);
}
BENCHMARK(BM_RecorderPhases)->UseManualTime()->Unit(benchmark::kNanosecond)->Iterations(20);

void BM_SmallClTraceSize(benchmark::State& state) {
  const std::string shim = BinDir() + "/../lib/libcltrace_shim.so";
  const std::string workload = BinDir() + "/cltrace-workload";
  if (access(shim.c_str(), R_OK) != 0 || access(workload.c_str(), X_OK) != 0) {
    state.SkipWithError("libcltrace_shim.so or cltrace-workload not built");
    return;
  }
  const std::string trace = absl::StrCat("/tmp/cltrace_smallcl_bench_", getpid(), ".cltrace");
  const std::string stats_path = trace + ".stats";
  std::map<std::string, uint64_t> stats;
  for (auto _ : state) {
    const std::string cmd = absl::StrCat("CLTRACE_DRIVER=", shim, " CLTRACE_SHIM_OUTPUT=", trace,
                                         " CLTRACE_SHIM_STATS=", stats_path, " ", workload,
                                         " smallcl --threads 4 >/dev/null");
    if (std::system(cmd.c_str()) != 0) {
      state.SkipWithError("the workload failed");
      return;
    }
    std::ifstream in(stats_path);
    std::string key;
    uint64_t value;
    while (in >> key >> value) stats[key] = value;
  }
  unlink(trace.c_str());
  unlink(stats_path.c_str());
  state.counters["calls"] = benchmark::Counter(static_cast<double>(stats["calls"]));
  state.counters["bytes"] = benchmark::Counter(static_cast<double>(stats["bytes"]));
  state.counters["bytes_per_call"] = benchmark::Counter(
      stats["calls"] != 0 ? static_cast<double>(stats["bytes"]) / stats["calls"] : 0.0);
}
BENCHMARK(BM_SmallClTraceSize)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace cltrace::recorder
