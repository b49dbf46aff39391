// Workload scenarios are linear in their frames (issue: `scene --frames N` grew with N squared
// through the kernel model's residency undo log, the runtime's quarantine scan at every
// Present and its R68 walk at every Flush). BM_ScenarioFrames runs one scenario in process
// (runtime model + reference driver + kernel model, nothing recorded) at growing frame counts:
// `us_per_frame` must stay flat from row to row of one scenario; compare the rows, not the
// absolute times (the 100-frame row is the baseline of the same run).
#include <chrono>
#include <cstdlib>
#include <string>

#include "benchmark/benchmark.h"
#include "corpus/workloads/scenarios.h"
#include "runtime/runtime.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kScenarios[] = {"scene", "smallcl", "long", "present"};

void BM_ScenarioFrames(benchmark::State& state) {
  unsetenv("CLTRACE_REFDRIVER_CONFIG");
  const char* name = kScenarios[state.range(0)];
  cltrace::workloads::ScenarioOptions options;
  options.frames = static_cast<int>(state.range(1));
  state.SetLabel(name);
  uint64_t calls = 0;
  const Clock::time_point start = Clock::now();
  for (auto _ : state) {
    cltrace::runtime::Device* device = nullptr;
    if (cltrace::runtime::Device::Create(cltrace::runtime::RuntimeOptions{}, &device) != S_OK) {
      state.SkipWithError("no driver");
      return;
    }
    const uint64_t before = cltrace::runtime::ProcessCallCount();
    absl::Status s = cltrace::workloads::RunScenario(name, device, options);
    device->Release();
    calls += cltrace::runtime::ProcessCallCount() - before;
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  const double frames = static_cast<double>(state.iterations()) * options.frames;
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  state.counters["us_per_frame"] = benchmark::Counter(us / frames);
  state.counters["ddi_calls_per_frame"] = benchmark::Counter(static_cast<double>(calls) / frames);
}
BENCHMARK(BM_ScenarioFrames)
    ->ArgNames({"scenario", "frames"})
    ->ArgsProduct({{0, 1}, {100, 400, 1600}})
    ->Args({2, 10})
    ->Args({2, 40})
    ->Args({3, 100})
    ->Args({3, 1600})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
