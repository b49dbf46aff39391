// Deferred destruction, submission and the GPU-model rules (ddi-spec §5.9, §5.10): R67-R80.
#include "absl/strings/str_split.h"
#include "check/testing/check_fixture.h"

namespace cltrace::check::testing {
namespace {

class KernelTest : public CheckTest {
 protected:
  void SetUp() override { Device(); }
  // CreateResource with one allocation made inside it.
  void AllocatedResource(const std::string& h, const std::string& alloc,
                         const std::string& misc = "0") {
    CheckTest::AllocatedResource(h, alloc, {{"MiscFlags", misc}});
  }
  // A primary: created with a pPrimaryDesc (a swap chain's scanned-out buffer).
  void AllocatedPrimary(const std::string& h, const std::string& alloc) {
    CheckTest::AllocatedResource(h, alloc, {{"pPrimaryDesc", "1"}});
  }
  void Dealloc(const std::string& alloc) {
    t.Call("DeallocateCb", {{"hDevice", "rtdev"}, {"NumAllocations", "1"}, {"HandleList", alloc}});
  }
  void UseOnIc(const std::string& res) {
    BindVb("ic", res);
    Draw("ic");
    BindVb("ic", "0", /*stride=*/"0");
  }
  // A pfnRenderCb submitting `length` bytes, answered with a `buffer_out`-byte command buffer
  // (and 256-entry lists); `extra` adds arguments (what the runtime asked for, ...).
  // The arguments of a RenderCb submitting `length` bytes.
  static Args RenderCbArgs(const std::string& length, const std::string& buffer_out,
                           Args extra = {}) {
    Args args = {{"hDevice", "rtdev"}, {"hContext", "hctx"}, {"CommandLength", length}};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {{"NewCommandBufferSizeOut", buffer_out},
                             {"NewAllocationListSizeOut", "256"},
                             {"NewPatchLocationListSizeOut", "256"}});
    return args;
  }
  // A RenderCb submitting `length` bytes and returning `ret` ("" = success).
  void RenderCb(const std::string& length, const std::string& buffer_out, Args extra = {},
                const std::string& ret = "") {
    t.Call("RenderCb", RenderCbArgs(length, buffer_out, std::move(extra)), ret);
  }
  // Flush with a submit, amortized processing, and the given deallocations inside.
  void Flush(const std::vector<std::string>& deallocs = {}, bool submit = true) {
    t.On(1).Begin("Flush", {{"hDevice", "ic"}});
    if (submit) {
      RenderCb("64", "65536");
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

// R68 for non-shared resources: the kernel-layer calls show when the GPU is done with them.
class IdleDestructionTest : public KernelTest {
 protected:
  // A Flush whose pfnRenderCb fills the DMA buffer at `dma` (DxgkDdiRender), deallocating
  // `deallocs`.
  void FlushFilling(const std::string& dma, const std::vector<std::string>& deallocs = {}) {
    t.On(1).Begin("Flush", {{"hDevice", "ic"}});
    t.Begin("RenderCb", RenderCbArgs("64", "65536"));
    t.Call("DxgkDdiRender", {{"hContext", "gctx"}, {"DmaBufferPhysicalAddress", dma}});
    t.End();
    t.Call("PerformAmortizedProcessingCb", {{"hRuntimeDevice", "rtic"}});
    for (const std::string& a : deallocs) Dealloc(a);
    t.End();
  }
  // The kernel patches and submits the DMA buffer at `dma` with `fence`; the GPU retires it
  // (interrupt, DPC) unless !retire.
  void SubmitAndRetire(const std::string& dma, const std::string& fence, bool retire = true) {
    t.On(9).Call("DxgkDdiPatch", {{"hAdapter", "kmd"},
                                  {"hContext", "gctx"},
                                  {"DmaBufferPhysicalAddress", dma},
                                  {"DmaBufferSubmissionEndOffset", "64"},
                                  {"SubmissionFenceId", fence}});
    t.Call("DxgkDdiSubmitCommand", {{"hAdapter", "kmd"},
                                    {"hContext", "gctx"},
                                    {"DmaBufferPhysicalAddress", dma},
                                    {"DmaBufferSubmissionEndOffset", "64"},
                                    {"SubmissionFenceId", fence}});
    if (!retire) return;
    t.Begin("DxgkDdiInterruptRoutine", {{"MiniportDeviceContext", "kmd"}}, "1");
    t.Call("DxgkCbNotifyInterrupt", {{"hAdapter", "krnl"},
                                     {"InterruptType", "DXGK_INTERRUPT_DMA_COMPLETED"},
                                     {"SubmissionFenceId", fence}});
    t.Call("DxgkCbQueueDpc", {{"hAdapter", "krnl"}}, "1");
    t.End();
    t.Call("GpuFenceRetired", {{"hAdapter", "krnl"}, {"FenceId", fence}});
  }
};

TEST_F(IdleDestructionTest, R68_FlushKeepsAnIdleResourceQueued) {
  AllocatedResource("vb", "a1");
  UseOnIc("vb");
  Destroy("vb");
  FlushFilling("4096");          // submits the work that used vb
  SubmitAndRetire("4096", "7");  // ... and the GPU finished it
  FlushFilling("8192");          // freeing vb no longer stalls: this Flush must
  EXPECT_THAT(Errors(), ElementsAre("R68")) << Report();
}

TEST_F(IdleDestructionTest, R68_NearMiss_StillInUseOrFreed) {
  AllocatedResource("vb", "a1");
  AllocatedResource("ib", "a2");
  UseOnIc("vb");
  UseOnIc("ib");
  Destroy("vb");
  FlushFilling("4096");  // in flight: both may stay queued
  SubmitAndRetire("4096", "7", /*retire=*/false);
  FlushFilling("8192");  // not retired yet: still no stall-free free
  SubmitAndRetire("8192", "8");
  Destroy("ib");                 // destroyed after the retired submission
  FlushFilling("4096", {"a1"});  // vb is freed; ib's use may be in flight
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(IdleDestructionTest, R68_NearMiss_EarlierSubmissionStillPending) {
  // A later submission retired (another engine, say) while the one carrying vb's last use
  // is still pending: not known to be idle.
  AllocatedResource("vb", "a1");
  UseOnIc("vb");
  Destroy("vb");
  FlushFilling("4096");
  FlushFilling("8192");
  SubmitAndRetire("4096", "7", /*retire=*/false);
  SubmitAndRetire("8192", "8");
  FlushFilling("12288");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(KernelTest, R69_PrimaryDeallocatedLater) {
  AllocatedPrimary("p", "a1");
  Destroy("p");
  Flush({"a1"});
  EXPECT_THAT(Errors(), ElementsAre("R69")) << Report();
}

TEST_F(KernelTest, R69_NearMiss_PrimaryDeallocatedInsideDestroy) {
  AllocatedPrimary("p", "a1");
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
    RenderCb("64", "65536");
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
  BindVb("ic", "vb");
  Destroy("vb");
  EXPECT_THAT(Errors(), ElementsAre("R73")) << Report();
}

TEST_F(KernelTest, R73_NearMiss_ExecuteClearsAndRefreshDoesNotRebind) {
  AllocatedResource("vb", "a1");
  Dc("dc1");
  SmallList("dc1", "cl1");
  BindVb("ic", "vb");
  // During CommandListExecute a refresh still re-sends the pre-execute binding (R60).
  t.Begin("CommandListExecute", {{"hDevice", "ic"}, {"hCommandList", "cl1"}});
  t.Begin("StateIaVertexBufCb", {{"hRuntimeDevice", "rtic"}, {"Base", "0"}, {"Count", "1"}});
  BindVb("ic", "vb");
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
  EXPECT_STREQ(r->violations[0].id(), "R74");
}

TEST_F(KernelTest, R74_SubmissionIgnoresShrunkBuffer) {
  t.On(1).Begin("Flush", {{"hDevice", "ic"}});
  RenderCb("4096", "1024", {{"NewCommandBufferSize", "131072"}});  // asked for more, got less
  RenderCb("4096", "65536");
  t.End();
  EXPECT_THAT(Errors(), ElementsAre("R74")) << Report();
}

TEST_F(KernelTest, R74_NearMiss_SubmissionsFitTheReturnedBuffers) {
  t.On(1).Begin("Flush", {{"hDevice", "ic"}});
  RenderCb("4096", "1024");
  RenderCb("1024", "65536", {{"NumAllocations", "256"}});
  t.End();
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(KernelTest, R74_KernelRefusesCommandsWrittenIntoAStaleBuffer) {
  // Planted bug R74: the driver keeps writing into the previous command buffer; the kernel
  // finds nothing written in the one it handed out and refuses the submission.
  t.On(1).Begin("Flush", {{"hDevice", "ic"}});
  RenderCb("64", "65536");
  RenderCb("64", "65536", {}, "D3DDDIERR_INVALIDUSERBUFFER");
  t.End();
  EXPECT_THAT(Errors(), ElementsAre("R74")) << Report();
}

TEST_F(KernelTest, R74_NearMiss_OtherRenderFailuresAndEmptySubmissions) {
  t.On(1).Begin("Flush", {{"hDevice", "ic"}});
  RenderCb("64", "65536", {}, "E_OUTOFMEMORY");
  t.End();
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

// The kernel-mode rules need no device: each test is a bare sequence of DxgkDdi*/DxgkCb*
// and DX6 HAL calls.
class GpuTest : public CheckTest {
 protected:
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
  // One interrupt the miniport claims: the given notifications, then (if `dpc`) a DPC queued.
  void Isr(const std::vector<std::string>& interrupts, bool dpc) {
    t.Begin("DxgkDdiInterruptRoutine", {{"MiniportDeviceContext", "kmd"}}, "1");
    for (const std::string& type : interrupts) Notify(type);
    if (dpc) t.Call("DxgkCbQueueDpc", {{"hAdapter", "krnl"}});
    t.End();
  }
  // DX6 CreateD3DBuffer of `surface` asking for `caps` (and `caps2` if given), placed by the
  // driver as `caps_out`.
  void CreateD3DBuffer(const std::string& surface, const std::string& caps,
                       const std::string& caps2, const std::string& caps_out) {
    Args args = {{"lpDDSurface", surface}, {"dwCaps", caps}};
    if (!caps2.empty()) args.push_back({"dwCaps2", caps2});
    args.push_back({"dwCapsOut", caps_out});
    t.Call("CreateD3DBuffer", args);
  }
  // D3dDrawPrimitives2 of 64 command bytes from `commands`, the driver answering with
  // `commands_out`; `flags` adds dwFlags / dwFlagsOut.
  void DrawPrimitives2(const std::string& commands, const std::string& commands_out,
                       Args flags = {}) {
    Args args = {{"dwhContext", "ctx"}};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(
        args.end(),
        {{"lpDDCommands", commands}, {"lpDDCommandsOut", commands_out}, {"dwCommandLength", "64"}});
    t.Call("D3dDrawPrimitives2", args);
  }
  // D3dDrawPrimitives2 of the commands at 16..80 failing with E_FAIL at `error_offset`.
  void FailedDrawPrimitives2(const std::string& error_offset) {
    t.Call("D3dDrawPrimitives2", {{"dwhContext", "ctx"},
                                  {"lpDDCommands", "cb0"},
                                  {"dwCommandOffset", "16"},
                                  {"dwCommandLength", "64"},
                                  {"ddrval", "E_FAIL"},
                                  {"dwErrorOffset", error_offset}});
  }
};

TEST_F(GpuTest, R75_FenceDiffersBetweenPatchAndSubmit) {
  Patch("4096", "5");
  Submit("4096", "6");
  EXPECT_THAT(Errors(), ElementsAre("R75")) << Report();
}

TEST_F(GpuTest, R75_FenceNotIncreasing) {
  Patch("4096", "5");
  Submit("4096", "5");
  Patch("8192", "5");
  Submit("8192", "5");
  EXPECT_THAT(Errors(), ElementsAre("R75")) << Report();
}

TEST_F(GpuTest, R75_R76_NearMiss_PatchedThenSubmittedInOrder) {
  Patch("4096", "5");
  Submit("4096", "5");
  Submit("8192", "6", "0");  // a paging buffer needs no patch
  Patch("4096", "7");
  Submit("4096", "7");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(GpuTest, R76_SubmitWithoutPatch) {
  Submit("4096", "5");
  EXPECT_THAT(Errors(), ElementsAre("R76")) << Report();
}

TEST_F(GpuTest, R77_NoDpcQueued) {
  Isr({"DXGK_INTERRUPT_DMA_COMPLETED"}, /*dpc=*/false);
  EXPECT_THAT(Errors(), ElementsAre("R77")) << Report();
}

TEST_F(GpuTest, R77_CrtcBeforeDma) {
  Isr({"DXGK_INTERRUPT_CRTC_VSYNC", "DXGK_INTERRUPT_DMA_COMPLETED"}, /*dpc=*/true);
  EXPECT_THAT(Errors(), ElementsAre("R77")) << Report();
}

TEST_F(GpuTest, R77_NotifyOutsideIsr) {
  Notify("DXGK_INTERRUPT_DMA_COMPLETED");
  EXPECT_THAT(Errors(), ElementsAre("R77")) << Report();
}

TEST_F(GpuTest, R77_NearMiss_DmaThenCrtcThenDpc) {
  Isr({"DXGK_INTERRUPT_DMA_COMPLETED", "DXGK_INTERRUPT_CRTC_VSYNC"}, /*dpc=*/true);
  t.Call("DxgkDdiInterruptRoutine", {{"MiniportDeviceContext", "kmd"}}, "0");  // not ours
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(GpuTest, R78_SplitOffsetDecreases) {
  Patch("4096", "1", "0,8,4");
  Submit("4096", "1");
  EXPECT_THAT(Errors(), ElementsAre("R78")) << Report();
}

TEST_F(GpuTest, R78_NearMiss_SharedSplitPoints) {
  Patch("4096", "1", "0,4,4,8");
  Submit("4096", "1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(GpuTest, R79_ImplicitVertexBufferInVideoMemory) {
  CreateD3DBuffer("vb0", "DDSCAPS_EXECUTEBUFFER", "", "DDSCAPS_EXECUTEBUFFER|DDSCAPS_VIDEOMEMORY");
  EXPECT_THAT(Errors(), ElementsAre("R79")) << Report();
}

TEST_F(GpuTest, R79_ExplicitVertexBufferInVideoMemoryWithoutWriteOnly) {
  CreateD3DBuffer("vb1", "DDSCAPS_EXECUTEBUFFER", "DDSCAPS2_VERTEXBUFFER",
                  "DDSCAPS_EXECUTEBUFFER|DDSCAPS_VIDEOMEMORY");
  EXPECT_THAT(Errors(), ElementsAre("R79")) << Report();
}

TEST_F(GpuTest, R79_SwapWithoutPermission) {
  DrawPrimitives2("cb0", "cb1");
  EXPECT_THAT(Errors(), ElementsAre("R79")) << Report();
}

TEST_F(GpuTest, R79_VidmemFlagMissing) {
  CreateD3DBuffer("cb1", "DDSCAPS_EXECUTEBUFFER", "DDSCAPS2_COMMANDBUFFER",
                  "DDSCAPS_EXECUTEBUFFER|DDSCAPS_VIDEOMEMORY");
  DrawPrimitives2("cb0", "cb1", {{"dwFlags", "D3DHALDP2_SWAPCOMMANDBUFFER"}});
  EXPECT_THAT(Errors(), ElementsAre("R79")) << Report();
}

TEST_F(GpuTest, R79_NearMiss_PermittedSwapsAndPlacements) {
  CreateD3DBuffer("vb0", "DDSCAPS_EXECUTEBUFFER", "", "DDSCAPS_EXECUTEBUFFER|DDSCAPS_SYSTEMMEMORY");
  CreateD3DBuffer("vb1", "DDSCAPS_EXECUTEBUFFER|DDSCAPS_WRITEONLY", "DDSCAPS2_VERTEXBUFFER",
                  "DDSCAPS_EXECUTEBUFFER|DDSCAPS_WRITEONLY|DDSCAPS_VIDEOMEMORY");
  CreateD3DBuffer("cb1", "DDSCAPS_EXECUTEBUFFER", "DDSCAPS2_COMMANDBUFFER",
                  "DDSCAPS_EXECUTEBUFFER|DDSCAPS_VIDEOMEMORY");
  DrawPrimitives2("cb0", "cb1",
                  {{"dwFlags", "D3DHALDP2_SWAPCOMMANDBUFFER"},
                   {"dwFlagsOut", "D3DHALDP2_SWAPCOMMANDBUFFER|D3DHALDP2_VIDMEMCOMMANDBUF"}});
  DrawPrimitives2("cb1", "cb1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(GpuTest, R80_ErrorOffsetOutsideCommands) {
  FailedDrawPrimitives2("0");
  EXPECT_THAT(Errors(), ElementsAre("R80")) << Report();
}

TEST_F(GpuTest, R80_NearMiss_ErrorOffsetNamesACommand) {
  FailedDrawPrimitives2("40");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

}  // namespace
}  // namespace cltrace::check::testing
