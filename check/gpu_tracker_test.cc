// GpuTracker on its own: kernel callbacks, the GPU model's KMD calls and the checks judged
// when a call returns, fed event by event (the rule tests through the whole checker are in
// checker_kernel_test.cc).
#include "check/testing/tracker_fixture.h"

namespace cltrace::check::testing {
namespace {

class GpuTrackerTest : public TrackerTest {
 protected:
  // Feeds every kernel-side event of the trace to the GPU tracker, in order.
  void FeedKernel() {
    for (const format::Event& e : t.events()) {
      const CallMeta& m = M(e.seq);
      if (m.layer == format::Layer::kKernelCb) trk().gpu.OnKernelCallback(e, m);
      if (m.layer == format::Layer::kKmd || m.layer == format::Layer::kDxgkrnl)
        trk().gpu.OnKmdCall(e, m);
    }
  }
  void PatchAndSubmit(const std::string& addr, const std::string& patch_fence,
                      const std::string& submit_fence, bool patch = true) {
    Args dma = {{"hAdapter", "kmd"},
                {"hContext", "gctx"},
                {"DmaBufferPhysicalAddress", addr},
                {"DmaBufferSubmissionEndOffset", "64"}};
    Args p = dma;
    p.push_back({"SubmissionFenceId", patch_fence});
    if (patch) t.On(9).Call("DxgkDdiPatch", p);
    Args s = dma;
    s.push_back({"SubmissionFenceId", submit_fence});
    t.On(9).Call("DxgkDdiSubmitCommand", s);
  }
};

TEST_F(GpuTrackerTest, R16_R74_RenderCbOutsideAnyCallAndBeforeAnyContext) {
  t.On(1).Call("RenderCb", {{"hDevice", "rtdev"}, {"hContext", "hctx"}, {"CommandLength", "64"}});
  Start();
  FeedKernel();
  EXPECT_THAT(Found(), ElementsAre("R74", "R16"));
}

TEST_F(GpuTrackerTest, R75_R76_SubmissionsArePatchedWithTheirFenceAndFencesRise) {
  PatchAndSubmit("4096", "5", "5");                   // legal
  PatchAndSubmit("8192", "0", "6", /*patch=*/false);  // R76: never patched
  PatchAndSubmit("12288", "7", "8");                  // R75: Patch got another fence
  PatchAndSubmit("16384", "3", "3");                  // R75: not above 8 on the engine
  Start();
  FeedKernel();
  EXPECT_THAT(Found(), ElementsAre("R76", "R75", "R75"));
}

TEST_F(GpuTrackerTest, R77_InterruptIsJudgedOnlyOnceItReturns) {
  uint64_t isr = t.On(9).Begin("DxgkDdiInterruptRoutine", {{"MiniportDeviceContext", "kmd"}}, "1");
  t.Call("DxgkCbNotifyInterrupt",
         {{"hAdapter", "krnl"}, {"InterruptType", "DXGK_INTERRUPT_DMA_COMPLETED"}});
  t.End();  // no DxgkCbQueueDpc after the notification
  Start();
  FeedKernel();
  EXPECT_THAT(Found(), IsEmpty());
  EXPECT_EQ(trk().gpu.next_deadline(), E(isr).end);
  trk().gpu.ResolveDeadlines(E(isr).end);  // not yet past its exit
  EXPECT_THAT(Found(), IsEmpty());
  trk().gpu.ResolveDeadlines(E(isr).end + 1);
  EXPECT_THAT(Found(), ElementsAre("R77"));
}

TEST_F(GpuTrackerTest, AllocationsAreTrackedUntilDeallocated) {
  Device();
  AllocatedResource("vb", "a1");
  uint64_t dealloc = t.On(1).Call(
      "DeallocateCb", {{"hDevice", "rtdev"}, {"NumAllocations", "1"}, {"HandleList", "a1"}});
  Start();
  int32_t ic = DeviceFrom(SeqOf("CreateDevice"));
  uint64_t create = SeqOf("CreateResource");
  trk().objects.OnCreate(E(create), M(create), ic);
  FeedKernel();
  int32_t vb = SlotOf("vb").obj;
  ASSERT_EQ(trk().gpu.AllocationsOf(vb).size(), 1u);
  EXPECT_TRUE(trk().gpu.Deallocated(vb, dealloc));
  EXPECT_FALSE(trk().gpu.Deallocated(vb, dealloc - 1));
  EXPECT_EQ(trk().gpu.allocations()[trk().gpu.AllocationsOf(vb)[0]].dealloc_seq, dealloc);
  EXPECT_THAT(Found(), IsEmpty());
}

}  // namespace
}  // namespace cltrace::check::testing
