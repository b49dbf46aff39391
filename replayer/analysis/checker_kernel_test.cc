// Deferred destruction, submission and the GPU-model rules (ddi-spec §5.9, §5.10): R67-R80.
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "replayer/analysis/internal/check_fixture.h"

namespace cltrace::analysis::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class KernelTest : public CheckTest {
 protected:
  void SetUp() override { Device(); }
  // CreateResource with one allocation made inside it.
  void AllocatedResource(const std::string& h, const std::string& alloc,
                         const std::string& misc = "0") {
    t.On(1).Call("CalcPrivateResourceSize", {{"hDevice", "ic"}}, "128");
    t.Begin("CreateResource",
            {{"hDevice", "ic"}, {"hResource", h}, {"hRTResource", "rt_" + h}, {"MiscFlags", misc}});
    t.Call("AllocateCb", {{"hDevice", "rtdev"},
                          {"hResource", "rt_" + h},
                          {"NumAllocations", "1"},
                          {"pAllocationInfo", alloc + ":0:0:0:0:0"}});
    t.End();
    t.Call("CalcDeferredContextHandleSize",
           {{"hDevice", "ic"}, {"HandleType", "D3D10DDI_HT_RESOURCE"}}, "64");
  }
  void Dealloc(const std::string& alloc) {
    t.Call("DeallocateCb", {{"hDevice", "rtdev"}, {"NumAllocations", "1"}, {"HandleList", alloc}});
  }
  void UseOnIc(const std::string& res) {
    t.On(1).Call("IaSetVertexBuffers", {{"hDevice", "ic"},
                                        {"StartBuffer", "0"},
                                        {"NumBuffers", "1"},
                                        {"phBuffers", res},
                                        {"pStrides", "16"},
                                        {"pOffsets", "0"}});
    Draw("ic");
    t.Call("IaSetVertexBuffers", {{"hDevice", "ic"},
                                  {"StartBuffer", "0"},
                                  {"NumBuffers", "1"},
                                  {"phBuffers", "0"},
                                  {"pStrides", "0"},
                                  {"pOffsets", "0"}});
  }
  // Flush with a submit, amortized processing, and the given deallocations inside.
  void Flush(const std::vector<std::string>& deallocs = {}, bool submit = true) {
    t.On(1).Begin("Flush", {{"hDevice", "ic"}});
    if (submit) {
      t.Call("RenderCb", {{"hDevice", "rtdev"},
                          {"hContext", "hctx"},
                          {"CommandLength", "64"},
                          {"NewCommandBufferSizeOut", "65536"},
                          {"NewAllocationListSizeOut", "256"},
                          {"NewPatchLocationListSizeOut", "256"}});
      t.Call("PerformAmortizedProcessingCb", {{"hRuntimeDevice", "rtic"}});
    }
    for (const std::string& a : deallocs) Dealloc(a);
    t.End();
  }
  void Destroy(const std::string& res, const std::vector<std::string>& deallocs_inside = {}) {
    t.On(1).Begin("DestroyResource", {{"hDevice", "ic"}, {"hResource", res}});
    for (const std::string& a : deallocs_inside) Dealloc(a);
    t.End();
  }
};

TEST_F(KernelTest, R67_DeallocateBeforeSubmit) {
  AllocatedResource("vb", "a1");
  UseOnIc("vb");
  Destroy("vb", {"a1"});
  EXPECT_THAT(Errors(), ElementsAre("R67")) << Report();
}

TEST_F(KernelTest, R67_NearMiss_DeallocateInNextFlushAfterSubmit) {
  AllocatedResource("vb", "a1");
  UseOnIc("vb");
  Destroy("vb");
  Flush({"a1"});
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(KernelTest, R68_FlushLeavesSharedResourceAllocated) {
  AllocatedResource("s", "a1", "D3D10_DDI_RESOURCE_MISC_SHARED");
  Destroy("s");
  Flush();
  EXPECT_THAT(Errors(), ElementsAre("R68")) << Report();
}

TEST_F(KernelTest, R68_NearMiss_FlushWithoutCommandsStillDeallocates) {
  AllocatedResource("s", "a1", "D3D10_DDI_RESOURCE_MISC_SHARED");
  Destroy("s");
  Flush({"a1"}, /*submit=*/false);
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(KernelTest, R69_PrimaryDeallocatedLater) {
  AllocatedResource("p", "a1", "D3D10_DDI_RESOURCE_MISC_PRIMARY");
  Destroy("p");
  Flush({"a1"});
  EXPECT_THAT(Errors(), ElementsAre("R69")) << Report();
}

TEST_F(KernelTest, R69_NearMiss_PrimaryDeallocatedInsideDestroy) {
  AllocatedResource("p", "a1", "D3D10_DDI_RESOURCE_MISC_PRIMARY");
  UseOnIc("p");
  Destroy("p", {"a1"});  // no deferral, and no R67 for non-shared primaries
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(KernelTest, R70_DestroyDeviceWithQueuedDestruction) {
  AllocatedResource("vb", "a1");
  Destroy("vb");
  t.On(1).Call("DestroyDevice", {{"hDevice", "ic"}});
  EXPECT_THAT(Errors(), ElementsAre("R70")) << Report();
}

TEST_F(KernelTest, R70_NearMiss_DrainedInsideDestroyDevice) {
  AllocatedResource("vb", "a1");
  Destroy("vb");
  t.On(1).Begin("DestroyDevice", {{"hDevice", "ic"}});
  Dealloc("a1");
  t.End();
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(KernelTest, R71_SubmitsWithoutAmortizedProcessing) {
  options.heuristics.amortized_max_submits_without = 3;
  for (int i = 0; i < 3; ++i) {
    t.On(1).Begin("Flush", {{"hDevice", "ic"}});
    t.Call("RenderCb", {{"hDevice", "rtdev"},
                        {"hContext", "hctx"},
                        {"CommandLength", "64"},
                        {"NewCommandBufferSizeOut", "65536"},
                        {"NewAllocationListSizeOut", "256"},
                        {"NewPatchLocationListSizeOut", "256"}});
    t.End();
  }
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
  EXPECT_THAT(Warnings(), ElementsAre("R71")) << Report();
}

TEST_F(KernelTest, R71_DoublePump) {
  t.On(1).Begin("Flush", {{"hDevice", "ic"}});
  t.Call("PerformAmortizedProcessingCb", {{"hRuntimeDevice", "rtic"}});
  t.Call("PerformAmortizedProcessingCb", {{"hRuntimeDevice", "rtic"}});
  t.End();
  EXPECT_THAT(Warnings(), ElementsAre("R71")) << Report();
}

TEST_F(KernelTest, R71_NearMiss_PumpPerSubmit) {
  options.heuristics.amortized_max_submits_without = 3;
  for (int i = 0; i < 10; ++i) Flush();
  EXPECT_THAT(Warnings(), IsEmpty()) << Report();
}

TEST_F(KernelTest, R72_LongRecordingWithoutAmortizedProcessing) {
  options.heuristics.dc_amortized_max_calls = 5;
  Dc("dc1");
  for (int i = 0; i < 6; ++i) Draw("dc1");
  EXPECT_THAT(Warnings(), ElementsAre("R72")) << Report();
}

TEST_F(KernelTest, R72_DcDoublePump) {
  Dc("dc1");
  t.On(2).Begin("Draw", {{"hDevice", "dc1"}, {"VertexCount", "3"}});
  t.Call("PerformAmortizedProcessingCb", {{"hRuntimeDevice", "rtdc1"}});
  t.Call("PerformAmortizedProcessingCb", {{"hRuntimeDevice", "rtdc1"}});
  t.End();
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
  EXPECT_THAT(Warnings(), ElementsAre("R72")) << Report();
}

TEST_F(KernelTest, R72_NearMiss_DcPumpsWhenOutOfRoom) {
  options.heuristics.dc_amortized_max_calls = 5;
  Dc("dc1");
  for (int i = 0; i < 12; ++i) {
    t.On(2).Begin("Draw", {{"hDevice", "dc1"}, {"VertexCount", "3"}});
    if (i % 4 == 3) t.Call("PerformAmortizedProcessingCb", {{"hRuntimeDevice", "rtdc1"}});
    t.End();
  }
  EXPECT_THAT(Warnings(), IsEmpty()) << Report();
}

TEST_F(KernelTest, R73_BoundObjectDestroyed) {
  AllocatedResource("vb", "a1");
  UseOnIc("vb");
  t.On(1).Call("IaSetVertexBuffers", {{"hDevice", "ic"},
                                      {"StartBuffer", "0"},
                                      {"NumBuffers", "1"},
                                      {"phBuffers", "vb"},
                                      {"pStrides", "16"},
                                      {"pOffsets", "0"}});
  Destroy("vb");
  EXPECT_THAT(Errors(), ElementsAre("R73")) << Report();
}

TEST_F(KernelTest, R73_NearMiss_ExecuteClearsAndRefreshDoesNotRebind) {
  AllocatedResource("vb", "a1");
  Dc("dc1");
  SmallList("dc1", "cl1");
  t.On(1).Call("IaSetVertexBuffers", {{"hDevice", "ic"},
                                      {"StartBuffer", "0"},
                                      {"NumBuffers", "1"},
                                      {"phBuffers", "vb"},
                                      {"pStrides", "16"},
                                      {"pOffsets", "0"}});
  // During CommandListExecute a refresh still re-sends the pre-execute binding (R60).
  t.Begin("CommandListExecute", {{"hDevice", "ic"}, {"hCommandList", "cl1"}});
  t.Begin("StateIaVertexBufCb", {{"hRuntimeDevice", "rtic"}, {"Base", "0"}, {"Count", "1"}});
  t.Call("IaSetVertexBuffers", {{"hDevice", "ic"},
                                {"StartBuffer", "0"},
                                {"NumBuffers", "1"},
                                {"phBuffers", "vb"},
                                {"pStrides", "16"},
                                {"pOffsets", "0"}});
  t.End();
  t.End();
  Destroy("vb");  // the IC is cleared after the execute: nothing is bound
  Flush({"a1"});
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST(KernelNoDevice, R74_RenderBeforeCreateContext) {
  TestTrace t;
  t.Begin("Flush", {{"hDevice", "ic"}});
  t.Call("RenderCb", {{"hDevice", "rtdev"}, {"hContext", "hctx"}});
  t.End();
  auto r = Check(t.events(), t.handles());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->violations.size(), 1u);
  EXPECT_STREQ(r->violations[0].rule->id, "R74");
}

TEST_F(KernelTest, R74_SubmissionIgnoresShrunkBuffer) {
  t.On(1).Begin("Flush", {{"hDevice", "ic"}});
  t.Call("RenderCb", {{"hDevice", "rtdev"},
                      {"hContext", "hctx"},
                      {"CommandLength", "4096"},
                      {"NewCommandBufferSize", "131072"},  // asked for more, got less
                      {"NewCommandBufferSizeOut", "1024"},
                      {"NewAllocationListSizeOut", "256"},
                      {"NewPatchLocationListSizeOut", "256"}});
  t.Call("RenderCb", {{"hDevice", "rtdev"},
                      {"hContext", "hctx"},
                      {"CommandLength", "4096"},
                      {"NewCommandBufferSizeOut", "65536"},
                      {"NewAllocationListSizeOut", "256"},
                      {"NewPatchLocationListSizeOut", "256"}});
  t.End();
  EXPECT_THAT(Errors(), ElementsAre("R74")) << Report();
}

TEST_F(KernelTest, R74_NearMiss_SubmissionsFitTheReturnedBuffers) {
  t.On(1).Begin("Flush", {{"hDevice", "ic"}});
  t.Call("RenderCb", {{"hDevice", "rtdev"},
                      {"hContext", "hctx"},
                      {"CommandLength", "4096"},
                      {"NewCommandBufferSizeOut", "1024"},
                      {"NewAllocationListSizeOut", "256"},
                      {"NewPatchLocationListSizeOut", "256"}});
  t.Call("RenderCb", {{"hDevice", "rtdev"},
                      {"hContext", "hctx"},
                      {"CommandLength", "1024"},
                      {"NumAllocations", "256"},
                      {"NewCommandBufferSizeOut", "65536"},
                      {"NewAllocationListSizeOut", "256"},
                      {"NewPatchLocationListSizeOut", "256"}});
  t.End();
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

class GpuTest : public ::testing::Test {
 protected:
  std::vector<std::string> Errors() {
    auto r = Check(t.events(), t.handles());
    EXPECT_TRUE(r.ok());
    std::vector<std::string> ids;
    for (const Violation& v : r->violations) {
      ids.push_back(v.rule->id);
      report += FormatViolation(v, t.handles()) + "\n";
    }
    return ids;
  }
  void Patch(const std::string& addr, const std::string& fence, const std::string& splits = "0,0") {
    Args a = {{"hAdapter", "kmd"},
              {"hContext", "gctx"},
              {"DmaBufferPhysicalAddress", addr},
              {"DmaBufferSubmissionStartOffset", "0"},
              {"DmaBufferSubmissionEndOffset", "256"},
              {"SubmissionFenceId", fence}};
    std::string list;
    for (absl::string_view s : absl::StrSplit(splits, ',')) {
      if (!list.empty()) list += ",";
      absl::StrAppend(&list, "0:0:0:0:0:", s);
    }
    a.push_back({"pPatchLocationList", list});
    t.Call("DxgkDdiPatch", a);
  }
  void Submit(const std::string& addr, const std::string& fence,
              const std::string& context = "gctx") {
    t.Call("DxgkDdiSubmitCommand", {{"hAdapter", "kmd"},
                                    {"hContext", context},
                                    {"DmaBufferPhysicalAddress", addr},
                                    {"DmaBufferSubmissionStartOffset", "0"},
                                    {"DmaBufferSubmissionEndOffset", "256"},
                                    {"SubmissionFenceId", fence}});
  }
  void Notify(const std::string& type) {
    t.Call("DxgkCbNotifyInterrupt", {{"hAdapter", "krnl"}, {"InterruptType", type}});
  }
  TestTrace t;
  std::string report;
};

TEST_F(GpuTest, R75_FenceDiffersBetweenPatchAndSubmit) {
  Patch("4096", "5");
  Submit("4096", "6");
  EXPECT_THAT(Errors(), ElementsAre("R75")) << report;
}

TEST_F(GpuTest, R75_FenceNotIncreasing) {
  Patch("4096", "5");
  Submit("4096", "5");
  Patch("8192", "5");
  Submit("8192", "5");
  EXPECT_THAT(Errors(), ElementsAre("R75")) << report;
}

TEST_F(GpuTest, R75_R76_NearMiss_PatchedThenSubmittedInOrder) {
  Patch("4096", "5");
  Submit("4096", "5");
  Submit("8192", "6", "0");  // a paging buffer needs no patch
  Patch("4096", "7");
  Submit("4096", "7");
  EXPECT_THAT(Errors(), IsEmpty()) << report;
}

TEST_F(GpuTest, R76_SubmitWithoutPatch) {
  Submit("4096", "5");
  EXPECT_THAT(Errors(), ElementsAre("R76")) << report;
}

TEST_F(GpuTest, R77_NoDpcQueued) {
  t.Begin("DxgkDdiInterruptRoutine", {{"MiniportDeviceContext", "kmd"}}, "1");
  Notify("DXGK_INTERRUPT_DMA_COMPLETED");
  t.End();
  EXPECT_THAT(Errors(), ElementsAre("R77")) << report;
}

TEST_F(GpuTest, R77_CrtcBeforeDma) {
  t.Begin("DxgkDdiInterruptRoutine", {{"MiniportDeviceContext", "kmd"}}, "1");
  Notify("DXGK_INTERRUPT_CRTC_VSYNC");
  Notify("DXGK_INTERRUPT_DMA_COMPLETED");
  t.Call("DxgkCbQueueDpc", {{"hAdapter", "krnl"}});
  t.End();
  EXPECT_THAT(Errors(), ElementsAre("R77")) << report;
}

TEST_F(GpuTest, R77_NotifyOutsideIsr) {
  Notify("DXGK_INTERRUPT_DMA_COMPLETED");
  EXPECT_THAT(Errors(), ElementsAre("R77")) << report;
}

TEST_F(GpuTest, R77_NearMiss_DmaThenCrtcThenDpc) {
  t.Begin("DxgkDdiInterruptRoutine", {{"MiniportDeviceContext", "kmd"}}, "1");
  Notify("DXGK_INTERRUPT_DMA_COMPLETED");
  Notify("DXGK_INTERRUPT_CRTC_VSYNC");
  t.Call("DxgkCbQueueDpc", {{"hAdapter", "krnl"}});
  t.End();
  t.Call("DxgkDdiInterruptRoutine", {{"MiniportDeviceContext", "kmd"}}, "0");  // not ours
  EXPECT_THAT(Errors(), IsEmpty()) << report;
}

TEST_F(GpuTest, R78_SplitOffsetDecreases) {
  Patch("4096", "1", "0,8,4");
  Submit("4096", "1");
  EXPECT_THAT(Errors(), ElementsAre("R78")) << report;
}

TEST_F(GpuTest, R78_NearMiss_SharedSplitPoints) {
  Patch("4096", "1", "0,4,4,8");
  Submit("4096", "1");
  EXPECT_THAT(Errors(), IsEmpty()) << report;
}

TEST_F(GpuTest, R79_ImplicitVertexBufferInVideoMemory) {
  t.Call("CreateD3DBuffer", {{"lpDDSurface", "vb0"},
                             {"dwCaps", "DDSCAPS_EXECUTEBUFFER"},
                             {"dwCapsOut", "DDSCAPS_EXECUTEBUFFER|DDSCAPS_VIDEOMEMORY"}});
  EXPECT_THAT(Errors(), ElementsAre("R79")) << report;
}

TEST_F(GpuTest, R79_ExplicitVertexBufferInVideoMemoryWithoutWriteOnly) {
  t.Call("CreateD3DBuffer", {{"lpDDSurface", "vb1"},
                             {"dwCaps", "DDSCAPS_EXECUTEBUFFER"},
                             {"dwCaps2", "DDSCAPS2_VERTEXBUFFER"},
                             {"dwCapsOut", "DDSCAPS_EXECUTEBUFFER|DDSCAPS_VIDEOMEMORY"}});
  EXPECT_THAT(Errors(), ElementsAre("R79")) << report;
}

TEST_F(GpuTest, R79_SwapWithoutPermission) {
  t.Call("D3dDrawPrimitives2", {{"dwhContext", "ctx"},
                                {"lpDDCommands", "cb0"},
                                {"lpDDCommandsOut", "cb1"},
                                {"dwCommandLength", "64"}});
  EXPECT_THAT(Errors(), ElementsAre("R79")) << report;
}

TEST_F(GpuTest, R79_VidmemFlagMissing) {
  t.Call("CreateD3DBuffer", {{"lpDDSurface", "cb1"},
                             {"dwCaps", "DDSCAPS_EXECUTEBUFFER"},
                             {"dwCaps2", "DDSCAPS2_COMMANDBUFFER"},
                             {"dwCapsOut", "DDSCAPS_EXECUTEBUFFER|DDSCAPS_VIDEOMEMORY"}});
  t.Call("D3dDrawPrimitives2", {{"dwhContext", "ctx"},
                                {"dwFlags", "D3DHALDP2_SWAPCOMMANDBUFFER"},
                                {"lpDDCommands", "cb0"},
                                {"lpDDCommandsOut", "cb1"},
                                {"dwCommandLength", "64"}});
  EXPECT_THAT(Errors(), ElementsAre("R79")) << report;
}

TEST_F(GpuTest, R79_NearMiss_PermittedSwapsAndPlacements) {
  t.Call("CreateD3DBuffer", {{"lpDDSurface", "vb0"},
                             {"dwCaps", "DDSCAPS_EXECUTEBUFFER"},
                             {"dwCapsOut", "DDSCAPS_EXECUTEBUFFER|DDSCAPS_SYSTEMMEMORY"}});
  t.Call("CreateD3DBuffer",
         {{"lpDDSurface", "vb1"},
          {"dwCaps", "DDSCAPS_EXECUTEBUFFER|DDSCAPS_WRITEONLY"},
          {"dwCaps2", "DDSCAPS2_VERTEXBUFFER"},
          {"dwCapsOut", "DDSCAPS_EXECUTEBUFFER|DDSCAPS_WRITEONLY|DDSCAPS_VIDEOMEMORY"}});
  t.Call("CreateD3DBuffer", {{"lpDDSurface", "cb1"},
                             {"dwCaps", "DDSCAPS_EXECUTEBUFFER"},
                             {"dwCaps2", "DDSCAPS2_COMMANDBUFFER"},
                             {"dwCapsOut", "DDSCAPS_EXECUTEBUFFER|DDSCAPS_VIDEOMEMORY"}});
  t.Call("D3dDrawPrimitives2",
         {{"dwhContext", "ctx"},
          {"dwFlags", "D3DHALDP2_SWAPCOMMANDBUFFER"},
          {"dwFlagsOut", "D3DHALDP2_SWAPCOMMANDBUFFER|D3DHALDP2_VIDMEMCOMMANDBUF"},
          {"lpDDCommands", "cb0"},
          {"lpDDCommandsOut", "cb1"},
          {"dwCommandLength", "64"}});
  t.Call("D3dDrawPrimitives2", {{"dwhContext", "ctx"},
                                {"lpDDCommands", "cb1"},
                                {"lpDDCommandsOut", "cb1"},
                                {"dwCommandLength", "64"}});
  EXPECT_THAT(Errors(), IsEmpty()) << report;
}

TEST_F(GpuTest, R80_ErrorOffsetOutsideCommands) {
  t.Call("D3dDrawPrimitives2", {{"dwhContext", "ctx"},
                                {"lpDDCommands", "cb0"},
                                {"dwCommandOffset", "16"},
                                {"dwCommandLength", "64"},
                                {"ddrval", "E_FAIL"},
                                {"dwErrorOffset", "0"}});
  EXPECT_THAT(Errors(), ElementsAre("R80")) << report;
}

TEST_F(GpuTest, R80_NearMiss_ErrorOffsetNamesACommand) {
  t.Call("D3dDrawPrimitives2", {{"dwhContext", "ctx"},
                                {"lpDDCommands", "cb0"},
                                {"dwCommandOffset", "16"},
                                {"dwCommandLength", "64"},
                                {"ddrval", "E_FAIL"},
                                {"dwErrorOffset", "40"}});
  EXPECT_THAT(Errors(), IsEmpty()) << report;
}

}  // namespace
}  // namespace cltrace::analysis::testing
