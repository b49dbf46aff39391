// The runtime model on its kernel (gpu::KernelStack, runtime/kernel.h) with the reference
// driver on the GPU model's UMD side, end to end: determinism of the kernel layer (`present`
// twice: identical kernel-layer transcripts and digests), the kernel-table hooks, kernel-layer
// call counting, the one-frame golden, and R73 (a resource whose last reference is a binding
// is destroyed only after its unbind).
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "corpus/workloads/scenarios.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"
#include "runtime/runtime.h"
#include "tests/runtime/test_util.h"
#include "wddm/kernel_stack.h"
#include "wddm/kernel_transcript.h"

namespace cltrace::testing {
namespace {

using runtime::Device;
using runtime::RuntimeOptions;

struct PresentResult {
  std::string kernel_transcript;
  std::vector<uint64_t> digests;
  std::vector<std::string> violations;
};

PresentResult RunPresent(int frames) {
  PresentResult r;
  gpu::KernelTranscript transcript;
  RuntimeOptions options;
  options.kernel_wrappers = transcript.Wrappers();
  Device* device = nullptr;
  EXPECT_EQ(Device::Create(options, &device), S_OK);
  if (device == nullptr) return r;
  transcript.SetClock([device] { return device->GpuKernel()->kernel().NowForObserver(); });
  workloads::ScenarioOptions so;
  so.frames = frames;
  absl::StatusOr<workloads::PresentRun> run = workloads::RunPresentFrames(device, so);
  EXPECT_TRUE(run.ok()) << run.status();
  if (run.ok()) r.digests = run->frame_digests;
  r.violations = device->Violations();
  device->Release();
  r.kernel_transcript = transcript.Text();
  return r;
}

TEST(KernelWiringTest, PresentIsDeterministicAtTheKernelLayer) {
  ResetViolations();
  PresentResult a = RunPresent(4);
  PresentResult b = RunPresent(4);
  EXPECT_THAT(a.violations, ::testing::IsEmpty());
  ASSERT_EQ(a.digests.size(), 4u);
  EXPECT_EQ(a.digests, b.digests);
  // Each frame changes the content (clear colour, constants, renamed vertices).
  for (size_t i = 1; i < a.digests.size(); ++i) EXPECT_NE(a.digests[i], a.digests[i - 1]);
  EXPECT_GT(a.kernel_transcript.size(), 1000u);
  EXPECT_EQ(a.kernel_transcript, b.kernel_transcript);
  // The frames reached the GPU through every step of the WDDM flow.
  for (const char* call :
       {"CreateContextCb", "AllocateCb", "RenderCb", "PresentCb", "DxgkDdiRender", "DxgkDdiPatch",
        "DxgkDdiSubmitCommand", "DxgkDdiInterruptRoutine", "DxgkCbNotifyDpc", "DeallocateCb",
        "DxgkDdiDestroyDevice"}) {
    EXPECT_TRUE(absl::StrContains(a.kernel_transcript, call)) << call;
  }
}

TEST(KernelWiringTest, DigestsDependOnContent) {
  workloads::ScenarioOptions so;
  so.frames = 2;
  std::vector<uint64_t> digests[2];
  for (int seed = 0; seed < 2; ++seed) {
    so.seed = 1 + seed;
    Device* device = nullptr;
    ASSERT_EQ(Device::Create(RuntimeOptions{}, &device), S_OK);
    absl::StatusOr<workloads::PresentRun> run = workloads::RunPresentFrames(device, so);
    ASSERT_TRUE(run.ok()) << run.status();
    digests[seed] = run->frame_digests;
    device->Release();
  }
  EXPECT_NE(digests[0], digests[1]);
}

TEST(KernelWiringTest, OneFrameKernelLayerGolden) {
  ExpectGolden("present_one_frame_kernel", RunPresent(1).kernel_transcript);
}

TEST(KernelWiringTest, KernelLayerCallsAreCounted) {
  uint64_t before = gpu::ProcessKernelLayerCalls();
  RunPresent(1);
  EXPECT_GT(gpu::ProcessKernelLayerCalls(), before + 10);
}

// Stateless C wrappers need globals (as a recorder's would).
int g_render_calls = 0;
const D3DDDI_DEVICECALLBACKS* g_real_thunks = nullptr;
D3DDDI_DEVICECALLBACKS g_wrapped_thunks;
HRESULT APIENTRY CountingRender(HANDLE h, D3DDDICB_RENDER* a) {
  ++g_render_calls;
  return g_real_thunks->pfnRenderCb(h, a);
}

TEST(KernelWiringTest, ProcessWideHookWrapsTheKernelTables) {
  int hooked = 0;
  const DRIVER_INITIALIZATION_DATA* seen_kmd = nullptr;
  const DXGKRNL_INTERFACE* seen_dxgkrnl = nullptr;
  const CLTRACE_GPU_OBSERVER* seen_observer = nullptr;
  runtime::SetKernelTableHook([&] {
    ++hooked;
    gpu::TableWrappers w;
    w.kmd = [&](const DRIVER_INITIALIZATION_DATA* t) { return seen_kmd = t; };
    w.dxgkrnl = [&](const DXGKRNL_INTERFACE* t) { return seen_dxgkrnl = t; };
    w.gpu_observer = [&](const CLTRACE_GPU_OBSERVER* t) { return seen_observer = t; };
    w.device_callbacks = [](const D3DDDI_DEVICECALLBACKS* t) {
      g_real_thunks = t;
      g_wrapped_thunks = *t;
      g_wrapped_thunks.pfnRenderCb = &CountingRender;
      return &g_wrapped_thunks;
    };
    return w;
  });
  g_render_calls = 0;
  Device* device = nullptr;
  ASSERT_EQ(Device::Create(RuntimeOptions{}, &device), S_OK);
  workloads::ScenarioOptions so;
  so.frames = 2;
  EXPECT_TRUE(workloads::RunPresentFrames(device, so).ok());
  device->Release();
  runtime::SetKernelTableHook(nullptr);
  EXPECT_EQ(hooked, 1);
  EXPECT_NE(seen_kmd, nullptr);
  EXPECT_NE(seen_dxgkrnl, nullptr);
  EXPECT_NE(seen_observer, nullptr);
  EXPECT_GE(g_render_calls, 2);  // at least the mid-frame flush of each frame
}

TEST(KernelWiringTest, PlantedKernelBugIsReportedWithItsRule) {
  ResetViolations();
  RuntimeOptions options;
  options.kernel.bug = gpu::PlantedBug::kR75FenceMismatch;
  Device* device = nullptr;
  ASSERT_EQ(Device::Create(options, &device), S_OK);
  workloads::ScenarioOptions so;
  so.frames = 1;
  EXPECT_TRUE(workloads::RunPresentFrames(device, so).ok());
  std::vector<std::string> v = device->Violations();
  device->Release();
  ASSERT_FALSE(v.empty());
  for (const std::string& line : v) EXPECT_TRUE(absl::StartsWith(line, "R75 seq=")) << line;
}

// R73: the application releases a constant buffer while the immediate context binds it; the
// runtime must destroy it only after ClearState unbound it.
TEST(KernelWiringTest, ResourceBoundAtReleaseIsDestroyedAfterItsUnbind) {
  Transcript transcript;
  RuntimeOptions options;
  options.observer = &transcript;
  Device* device = nullptr;
  ASSERT_EQ(Device::Create(options, &device), S_OK);
  runtime::ResourceDesc desc;
  desc.width = 256;
  desc.bind_flags = D3D10_DDI_BIND_CONSTANT_BUFFER;
  runtime::Resource* cb = nullptr;
  ASSERT_EQ(device->CreateResource(desc, &cb), S_OK);
  runtime::DeviceContext* ic = device->GetImmediateContext();
  ic->SetConstantBuffers(runtime::Stage::kPS, 0, 1, &cb);
  cb->Release();
  ic->ClearState();
  device->Release();
  std::vector<std::string> lines = transcript.Lines();
  int unbind = -1, destroy = -1;
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    if (absl::StrContains(lines[i], "PsSetConstantBuffers") &&
        absl::StrContains(lines[i], "NULL") && unbind < 0) {
      unbind = i;
    }
    if (absl::StrContains(lines[i], "DestroyResource") && destroy < 0) destroy = i;
  }
  ASSERT_GE(unbind, 0) << absl::StrJoin(lines, "\n");
  ASSERT_GE(destroy, 0);
  EXPECT_LT(unbind, destroy) << absl::StrJoin(lines, "\n");
}

}  // namespace
}  // namespace cltrace::testing
