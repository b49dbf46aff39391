// Thread domains and callback placement (ddi-spec §0.2, §2.4): R7, R10-R19. Overlap is
// judged from entry/exit positions, never from thread ids.
#include "check/testing/check_fixture.h"

namespace cltrace::check::testing {
namespace {

// A Draw's arguments through context `ctx`.
Args DrawArgs(const std::string& ctx) { return {{"hDevice", ctx}, {"VertexCount", "3"}}; }

class ThreadTest : public DcTest {
 protected:
  // Thread 3's EscapeCb on HCONTEXT `hcontext` while thread 1's Flush is inside its RenderCb
  // on "hctx".
  void EscapeDuringRender(const std::string& hcontext) {
    uint64_t flush = t.On(1).Begin("Flush", {{"hDevice", "ic"}});
    uint64_t render = t.Begin("RenderCb", {{"hDevice", "rtdev"}, {"hContext", "hctx"}});
    t.On(3).Call("EscapeCb", {{"hDevice", "rtdev"}, {"hContext", hcontext}});
    t.On(1).EndSeq(render);
    t.EndSeq(flush);
  }
  // The IC's CreateResource of the shared resource "shared" (with its allocation made inside
  // when `allocate_inside`) and its handle-size query.
  void SharedResource(bool allocate_inside) {
    t.On(1).Begin("CreateResource", {{"hDevice", "ic"},
                                     {"hResource", "shared"},
                                     {"hRTResource", "rt_shared"},
                                     {"MiscFlags", "D3D10_DDI_RESOURCE_MISC_SHARED"}});
    if (allocate_inside) AllocateShared();
    t.End();
    t.Call("CalcDeferredContextHandleSize",
           {{"hDevice", "ic"}, {"HandleType", "D3D10DDI_HT_RESOURCE"}}, "64");
  }
  void AllocateShared() {
    t.Call("AllocateCb", {{"hDevice", "rtdev"},
                          {"hResource", "rt_shared"},
                          {"NumAllocations", "1"},
                          {"pAllocationInfo", "alloc1:0:0:0:0:0"}});
  }
};

TEST_F(ThreadTest, R10_TwoIcCallsInFlight) {
  uint64_t first = t.On(1).Begin("Draw", DrawArgs("ic"));
  t.On(3).Call("Draw", DrawArgs("ic"));
  t.EndSeq(first);
  EXPECT_THAT(Errors(), ElementsAre("R10")) << Report();
}

TEST_F(ThreadTest, R10_TwoCallsOnOneDcInFlight) {
  uint64_t first = t.On(2).Begin("Draw", DrawArgs("dc1"));
  t.On(3).Call("Draw", DrawArgs("dc1"));
  t.EndSeq(first);
  EXPECT_THAT(Errors(), ElementsAre("R10")) << Report();
}

TEST_F(ThreadTest, R10_NearMiss_ThreadsTakeTurnsAndDomainsRunConcurrently) {
  t.On(1).Call("Draw", DrawArgs("ic"));
  t.On(3).Call("Draw", DrawArgs("ic"));  // another thread, one after another: fine
  Dc("dc2");
  uint64_t ic = t.On(1).Begin("Draw", DrawArgs("ic"));
  uint64_t d1 = t.On(2).Begin("Draw", DrawArgs("dc1"));
  t.On(4).Call("Draw", DrawArgs("dc2"));
  t.EndSeq(d1);
  t.EndSeq(ic);
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(ThreadTest, R10_NearMiss_NestedRefreshIsNotOverlap) {
  // State refresh: the runtime re-enters the driver's Set* inside the callback.
  t.On(1).Begin("Draw", DrawArgs("ic"));
  ShaderRefresh("Ps", "rtic", "ic");
  t.End();
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(ThreadTest, R11_NonSharedPrimaryCreateOverlapsIcCall) {
  uint64_t draw = t.On(1).Begin("Draw", DrawArgs("ic"));
  t.On(3).Call("CreateResource", {{"hDevice", "ic"},
                                  {"hResource", "primary"},
                                  {"hRTResource", "rt_primary"},
                                  {"pPrimaryDesc", "1"}});
  t.On(1).EndSeq(draw);
  t.On(3).Call("CalcDeferredContextHandleSize",
               {{"hDevice", "ic"}, {"HandleType", "D3D10DDI_HT_RESOURCE"}}, "64");
  EXPECT_THAT(Errors(), ElementsAre("R11")) << Report();
}

TEST_F(ThreadTest, R11_NearMiss_SharedPrimaryAndOrdinaryResourceAreFreeThreaded) {
  uint64_t draw = t.On(1).Begin("Draw", DrawArgs("ic"));
  t.On(3).Call("CreateResource", {{"hDevice", "ic"},
                                  {"hResource", "primary"},
                                  {"hRTResource", "rt_primary"},
                                  {"pPrimaryDesc", "1"},
                                  {"MiscFlags", "D3D10_DDI_RESOURCE_MISC_SHARED"}});
  t.Call("CalcDeferredContextHandleSize",
         {{"hDevice", "ic"}, {"HandleType", "D3D10DDI_HT_RESOURCE"}}, "64");
  t.Call("CreateResource", {{"hDevice", "ic"}, {"hResource", "tex"}, {"hRTResource", "rt_tex"}});
  t.Call("CalcDeferredContextHandleSize",
         {{"hDevice", "ic"}, {"HandleType", "D3D10DDI_HT_RESOURCE"}}, "64");
  t.On(1).EndSeq(draw);
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(ThreadTest, R12_FinishCallOverlapsItsDcsDomain) {
  Draw("dc1");
  t.On(2).Call("CalcPrivateCommandListSize", {{"hDevice", "ic"}, {"hDeferredContext", "dc1"}},
               "256");
  uint64_t create = t.On(2).Begin("CreateCommandList", CreateListArgs("dc1", "cl1"));
  t.On(3).Call("AbandonCommandList", {{"hDevice", "dc1"}});
  t.On(2).EndSeq(create);
  EXPECT_THAT(Errors(), ::testing::Contains("R12")) << Report();
}

TEST_F(ThreadTest, R12_NearMiss_FinishCallsOverlapIcCalls) {
  Draw("dc1");
  uint64_t draw = t.On(1).Begin("Draw", DrawArgs("ic"));
  FinishNew("dc1", "cl1");  // IC-table calls on the DC's thread while the IC is busy
  RecycleDc("dc1");
  t.On(1).EndSeq(draw);
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(ThreadTest, R14_RecycleDestroyThroughDcTable) {
  SmallList("dc1", "cl1");
  t.On(2).Call("RecycleDestroyCommandList", {{"hDevice", "dc1"}, {"hCommandList", "cl1"}});
  EXPECT_THAT(Errors(), ElementsAre("R14")) << Report();
}

TEST_F(ThreadTest, R14_NearMiss_DestroysOverlapIcCalls) {
  SmallList("dc1", "cl1");
  Dc("dc2");
  SmallList("dc2", "cl2");
  uint64_t draw = t.On(1).Begin("Draw", DrawArgs("ic"));
  t.On(5).Call("RecycleDestroyCommandList", {{"hDevice", "ic"}, {"hCommandList", "cl1"}});
  t.On(6).Call("DestroyCommandList", {{"hDevice", "ic"}, {"hCommandList", "cl2"}});
  t.On(1).EndSeq(draw);
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(ThreadTest, R15_SameHContextConcurrently) {
  EscapeDuringRender("hctx");
  EXPECT_THAT(Errors(), ElementsAre("R15")) << Report();
}

TEST_F(ThreadTest, R15_NearMiss_DifferentHContexts) {
  EscapeDuringRender("hctx2");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(ThreadTest, R16_RenderCbInsideFreeThreadedCall) {
  CallbackInside(3, "CreateResource",
                 {{"hDevice", "ic"}, {"hResource", "r"}, {"hRTResource", "rt_r"}}, "RenderCb",
                 {{"hDevice", "rtdev"}, {"hContext", "hctx"}});
  t.Call("CalcDeferredContextHandleSize",
         {{"hDevice", "ic"}, {"HandleType", "D3D10DDI_HT_RESOURCE"}}, "64");
  EXPECT_THAT(Errors(), ElementsAre("R16")) << Report();
}

TEST_F(ThreadTest, R16_NearMiss_RenderCbInsideFlushAndPresent) {
  t.On(1).Begin("Flush", {{"hDevice", "ic"}});
  t.Call("RenderCb", {{"hDevice", "rtdev"}, {"hContext", "hctx"}});
  t.Call("PerformAmortizedProcessingCb", {{"hRuntimeDevice", "rtic"}});
  t.End();
  t.Begin("PresentDXGI", {{"hDevice", "ic"}});
  t.Call("RenderCb", {{"hDevice", "rtdev"}, {"hContext", "hctx"}});
  t.Call("PresentCb", {{"hDevice", "rtdev"}, {"hContext", "hctx"}});
  t.End();
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(ThreadTest, R18_SharedAllocationOutsideCreateResource) {
  SharedResource(/*allocate_inside=*/false);
  t.Begin("Flush", {{"hDevice", "ic"}});
  AllocateShared();
  t.End();
  EXPECT_THAT(Errors(), ElementsAre("R18")) << Report();
}

TEST_F(ThreadTest, R18_NearMiss_SharedInsideCreateAndPlainAnywhere) {
  SharedResource(/*allocate_inside=*/true);
  CallbackInside(
      4, "Flush", {{"hDevice", "ic"}}, "AllocateCb",
      {{"hDevice", "rtdev"}, {"NumAllocations", "1"}, {"pAllocationInfo", "alloc2:0:0:0:0:0"}});
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(ThreadTest, R19_AmortizedOutsideAnyCall) {
  t.On(1).Call("PerformAmortizedProcessingCb", {{"hRuntimeDevice", "rtic"}});
  EXPECT_THAT(Errors(), ElementsAre("R19")) << Report();
}

// A callback made inside a DDI call, judged by where it is made: the rule it breaks ("" for
// a legal placement).
struct PlacementCase {
  const char* name;
  uint32_t tid;
  std::string fn;
  Args fn_args;
  std::string cb;
  Args cb_args;
  std::string rule;
};

class CallbackPlacementTest : public ThreadTest,
                              public ::testing::WithParamInterface<PlacementCase> {};

TEST_P(CallbackPlacementTest, IsJudgedByTheEnclosingCall) {
  const PlacementCase& c = GetParam();
  CallbackInside(c.tid, c.fn, c.fn_args, c.cb, c.cb_args);
  if (c.rule.empty()) {
    EXPECT_THAT(Errors(), IsEmpty()) << Report();
  } else {
    EXPECT_THAT(Errors(), ElementsAre(c.rule)) << Report();
  }
}

// Argument lists of the placement cases: a call's hDevice, a callback's core layer, and the
// kernel callbacks' device and HCONTEXT.
Args DeviceArg(const std::string& h) { return {{"hDevice", h}}; }
Args CoreLayerArg(const std::string& rt) { return {{"hRuntimeDevice", rt}}; }
Args KernelArgs() { return {{"hDevice", "rtdev"}, {"hContext", "hctx"}}; }

INSTANTIATE_TEST_SUITE_P(
    ThreadTest, CallbackPlacementTest,
    ::testing::Values(
        PlacementCase{"R16_RenderCbInsideDcCall", 2, "Draw", DrawArgs("dc1"), "RenderCb",
                      KernelArgs(), "R16"},
        PlacementCase{"R17_PresentCbOutsidePresent", 1, "Flush", DeviceArg("ic"), "PresentCb",
                      KernelArgs(), "R17"},
        PlacementCase{"R17_SetDisplayModeCbOutsideSetDisplayMode", 1, "PresentDXGI",
                      DeviceArg("ic"), "SetDisplayModeCb", DeviceArg("rtdev"), "R17"},
        PlacementCase{"R19_AmortizedWithAnotherContextsCoreLayer", 1, "Flush", DeviceArg("ic"),
                      "PerformAmortizedProcessingCb", CoreLayerArg("rtdc1"), "R19"},
        PlacementCase{"R19_NearMiss_OwnCoreLayerInsideCall", 2, "Draw", DrawArgs("dc1"),
                      "PerformAmortizedProcessingCb", CoreLayerArg("rtdc1"), ""},
        PlacementCase{"R7_DisableStagingOutsideCreateDevice", 1, "Flush", DeviceArg("ic"),
                      "DisableDeferredStagingResourceDestruction", CoreLayerArg("rtic"), "R7"},
        PlacementCase{"R7_DisableStagingThroughDcCallbacks", 2, "Draw", DrawArgs("dc1"),
                      "DisableDeferredStagingResourceDestruction", CoreLayerArg("rtdc1"), "R7"}),
    [](const ::testing::TestParamInfo<PlacementCase>& info) { return info.param.name; });

TEST(ThreadTestNoFixture, R7_NearMiss_InsideCreateDevice) {
  TestTrace t;
  t.Begin("CreateDevice", {{"hAdapter", "adapter"},
                           {"hDrvDevice", "ic"},
                           {"hRTCoreLayer", "rtic"},
                           {"hRTDevice", "rtdev"}});
  t.Call("DisableDeferredStagingResourceDestruction", {{"hRuntimeDevice", "rtic"}});
  t.End();
  auto r = Check(t.events(), t.handles());
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->violations, IsEmpty());
}

}  // namespace
}  // namespace cltrace::check::testing
