// Benchmarks of the GPU / kernel model (wddm/, umd/): how many simulated submissions per second the
// model sustains on the host, so its share of replay time can be judged. A "submission" is a
// full round trip: pfnRenderCb -> DxgkDdiRender -> VidSch (paging if needed) -> DxgkDdiPatch ->
// DxgkDdiSubmitCommand -> GPU execution on the content model -> interrupt -> DPC -> retire.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "umd/synthetic_frames.h"
#include "umd/umd_context.h"
#include "wddm/digest.h"
#include "wddm/kernel_stack.h"

namespace cltrace::gpu {
namespace {

// A kernel stack with a device, a context of it and a 64 KiB render target.
struct SubmitSetup {
  CollectingViolationSink sink;
  KernelStack stack{KernelStackOptions{}, &sink};
  UmdDevice umd{stack.device_callbacks(), stack.kernel().CreateDevice().value()};
  std::unique_ptr<UmdContext> ctx = umd.CreateContext(0).value();
  D3DKMT_HALLOCATION rt = umd.Allocate(64 * 1024).value();
};

// Small submissions: one clear + one draw per pfnRenderCb.
void BM_GpuSubmitRoundTrip(benchmark::State& state) {
  SubmitSetup s;
  auto tex = s.umd.Allocate(16 * 1024).value();
  const uint64_t in[] = {tex.value};
  for (auto _ : state) {
    (void)s.ctx->Emit(Command::Clear(s.rt.value, 1));
    (void)s.ctx->Emit(Command::Draw(s.rt.value, in, 7, 300, 0, 1));
    (void)s.ctx->Flush();
  }
  (void)s.stack.kernel().WaitIdle();
  const auto st = s.stack.kernel().stats();
  state.counters["submissions/s"] =
      benchmark::Counter(static_cast<double>(st.submissions), benchmark::Counter::kIsRate);
  state.counters["virtual_us/submission"] =
      static_cast<double>(s.stack.kernel().now()) / 1000.0 / static_cast<double>(st.submissions);
  state.SetItemsProcessed(static_cast<int64_t>(st.submissions));
}
BENCHMARK(BM_GpuSubmitRoundTrip);

// Larger submissions: `range(0)` draws per pfnRenderCb.
void BM_GpuSubmitDraws(benchmark::State& state) {
  SubmitSetup s;
  std::vector<D3DKMT_HALLOCATION> tex;
  for (int i = 0; i < 8; ++i) tex.push_back(s.umd.Allocate(16 * 1024).value());
  int64_t commands = 0;
  for (auto _ : state) {
    for (int64_t d = 0; d < state.range(0); ++d) {
      const uint64_t in[] = {tex[d % tex.size()].value, tex[(d + 3) % tex.size()].value};
      (void)s.ctx->Emit(Command::Draw(s.rt.value, in, static_cast<uint64_t>(d), 300, 0, 1));
    }
    (void)s.ctx->Flush();
    commands += state.range(0);
  }
  (void)s.stack.kernel().WaitIdle();
  const auto st = s.stack.kernel().stats();
  state.counters["submissions/s"] =
      benchmark::Counter(static_cast<double>(st.submissions), benchmark::Counter::kIsRate);
  state.counters["commands/s"] =
      benchmark::Counter(static_cast<double>(commands), benchmark::Counter::kIsRate);
  state.SetItemsProcessed(commands);
}
BENCHMARK(BM_GpuSubmitDraws)->Arg(16)->Arg(256);

// Whole synthetic frames (renames, a spliced command list, mid-frame flush, present).
void BM_GpuSyntheticFrames(benchmark::State& state) {
  uint64_t submissions = 0;
  for (auto _ : state) {
    CollectingViolationSink sink;
    KernelStack stack(KernelStackOptions{}, &sink);
    SyntheticFrameOptions o;
    o.frames = 20;
    o.wait_each_frame = false;
    auto r = RunSyntheticFrames(stack, o);
    if (r.ok()) submissions += r->submissions;
  }
  state.counters["submissions/s"] =
      benchmark::Counter(static_cast<double>(submissions), benchmark::Counter::kIsRate);
  state.SetItemsProcessed(static_cast<int64_t>(submissions));
}
BENCHMARK(BM_GpuSyntheticFrames);

void BM_HashBytes4K(benchmark::State& state) {
  std::vector<uint8_t> data(4096, 0x5A);
  for (auto _ : state) benchmark::DoNotOptimize(HashBytes(data.data(), data.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 4096);
}
BENCHMARK(BM_HashBytes4K);

}  // namespace
}  // namespace cltrace::gpu
