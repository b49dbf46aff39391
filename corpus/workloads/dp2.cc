// dp2: the DX6 path of ddi-spec §7 through the GPU model's DX6 driver and runtime loop
// (gpu::Dx6Driver, gpu::Dx6Runtime): implicit vertex-buffer and command-buffer swaps with
// states and triangles, an explicit write-only vertex buffer, user-memory vertices, a larger
// REQCOMMANDBUFSIZE, one deliberately invalid command per frame (the driver must report its
// dwErrorOffset, R80), then teardown. The driver's tables are called through counting
// wrappers (cltrace-workload's `calls:`) and the driver library's CltraceWrapKernelTable hook
// (runtime::WrapWithDriverHook: the recorder shim under `cltrace record`); R79/R80 violations
// go to ModelViolations().
#include <vector>

#include "absl/strings/str_cat.h"
#include "corpus/workloads/model_layers.h"
#include "corpus/workloads/scenarios.h"
#include "dx6/dx6_driver.h"
#include "dx6/dx6_runtime.h"
#include "runtime/kernel.h"

namespace cltrace::workloads {
namespace {

absl::Status Check(absl::Status s, const char* what) {
  if (s.ok()) return s;
  return absl::InternalError(absl::StrCat(what, ": ", s.message()));
}

}  // namespace

absl::StatusOr<uint64_t> RunDp2Frames(const ScenarioOptions& o) {
  gpu::Dx6DriverOptions driver_options;
  driver_options.bug = o.dx6_bug;
  gpu::Dx6Driver driver(driver_options);
  D3DHAL_HCONTEXT context = driver.CreateContext();
  ModelViolationSink sink("dx6");
  // The driver library the D3D11 workloads load ($CLTRACE_DRIVER: a recorder shim under
  // `cltrace record`) gets to interpose on the DX6 tables too, so their calls are recorded.
  const auto* buffers = static_cast<const DD_D3DBUFCALLBACKS*>(runtime::WrapWithDriverHook(
      "dx6_buffers", CountingBufferCallbacks(driver.buffer_callbacks())));
  const auto* hal = static_cast<const D3DHAL_CALLBACKS3*>(
      runtime::WrapWithDriverHook("dx6_hal", CountingHalCallbacks3(driver.hal_callbacks3())));
  gpu::Dx6Runtime rt(buffers, hal, driver.video_heap(), context, gpu::Dx6RuntimeOptions{}, &sink);
  if (absl::Status s = Check(rt.Init(), "Init"); !s.ok()) return s;
  const uint32_t stride = rt.stride();
  absl::StatusOr<uint32_t> vb = rt.CreateExplicitVertexBuffer(60 * stride, /*write_only=*/true);
  if (!vb.ok()) return Check(vb.status(), "CreateExplicitVertexBuffer");
  if (absl::Status s =
          Check(rt.WriteExplicit(*vb, gpu::PatternTriangles(20, stride, o.seed)), "WriteExplicit");
      !s.ok()) {
    return s;
  }
  const uint8_t unknown_command[] = {0x77, 0, 1, 0};  // no such DP2 opcode
  for (int f = 0; f < o.frames; ++f) {
    if (absl::Status s = Check(rt.SetRenderState(7, f), "SetRenderState"); !s.ok()) return s;
    for (int i = 0; i < 24; ++i) {
      absl::Status s =
          Check(rt.DrawTriangles(gpu::PatternTriangles(3, stride, o.seed + f + i)), "Draw");
      if (!s.ok()) return s;
    }
    if (absl::Status s = Check(rt.DrawExplicit(*vb, 0, 20), "DrawExplicit"); !s.ok()) return s;
    if (absl::Status s =
            Check(rt.DrawUserMemory(gpu::PatternTriangles(2, stride, f)), "DrawUserMemory");
        !s.ok()) {
      return s;
    }
    if (f % 3 == 2) {
      // A stream the driver must refuse at the right offset (R80).
      if (absl::Status s = Check(rt.SetRenderState(1, f), "SetRenderState"); !s.ok()) return s;
      if (absl::Status s = Check(rt.AppendRaw(unknown_command), "AppendRaw"); !s.ok()) return s;
    }
    if (absl::Status s = Check(rt.Flush(f == 1 ? 8192 : 0, 0), "Flush"); !s.ok()) return s;
  }
  if (absl::Status s = Check(rt.Shutdown(), "Shutdown"); !s.ok()) return s;
  uint64_t digest = driver.ContextDigest(context);
  driver.DestroyContext(context);
  return digest;
}

absl::Status RunDp2(runtime::Device*, const ScenarioOptions& options) {
  return RunDp2Frames(options).status();
}

}  // namespace cltrace::workloads
