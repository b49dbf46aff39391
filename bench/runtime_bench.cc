// Cost of the runtime model + reference driver for the seeds' small-command-list case: one
// FinishCommandList / ExecuteCommandList / Release cycle of a single-copy command list, with
// command-list recycling (RecycleDestroyCommandList, RecycleCommandList,
// RecycleCreateCommandList) and without it (DestroyCommandList, CalcPrivateCommandListSize,
// CreateCommandList, CalcDeferredContextHandleSize every time). The recycled path must be the
// cheaper one; compare the two rows (time per cycle).
#include <cstdlib>

#include "benchmark/benchmark.h"
#include "runtime/runtime.h"

namespace {

using cltrace::runtime::CommandList;
using cltrace::runtime::Device;
using cltrace::runtime::DeviceContext;
using cltrace::runtime::Resource;

void BM_SmallCommandListCycle(benchmark::State& state) {
  unsetenv("CLTRACE_REFDRIVER_CONFIG");
  cltrace::runtime::RuntimeOptions options;
  options.recycle_command_lists = state.range(0) != 0;
  // Memory poisoning is a checking aid that costs the same on both paths only approximately;
  // measure the protocol itself.
  options.poison_freed_handles = false;
  Device* device = nullptr;
  if (Device::Create(options, &device) != S_OK) {
    state.SkipWithError("no driver");
    return;
  }
  DeviceContext* ic = device->GetImmediateContext();
  cltrace::runtime::ResourceDesc desc;
  desc.bind_flags = D3D10_DDI_BIND_SHADER_RESOURCE;
  desc.width = 256;
  Resource* src = nullptr;
  Resource* dst = nullptr;
  device->CreateResource(desc, &src);
  device->CreateResource(desc, &dst);
  DeviceContext* dc = nullptr;
  device->CreateDeferredContext(0, &dc);
  uint64_t calls_before = cltrace::runtime::ProcessCallCount();
  int64_t n = 0;
  for (auto _ : state) {
    dc->CopyResource(dst, src);
    CommandList* cl = nullptr;
    dc->FinishCommandList(FALSE, &cl);
    ic->ExecuteCommandList(cl, FALSE);
    cl->Release();
    // Submits and drains the deferred-destruction queue now and then, as a frame would.
    if (++n % 64 == 0) ic->Flush();
  }
  state.counters["ddi_calls_per_cycle"] =
      benchmark::Counter(static_cast<double>(cltrace::runtime::ProcessCallCount() - calls_before) /
                         static_cast<double>(n == 0 ? 1 : n));
  dc->Release();
  src->Release();
  dst->Release();
  device->Release();
}
BENCHMARK(BM_SmallCommandListCycle)->ArgName("recycle")->Arg(1)->Arg(0);

}  // namespace
