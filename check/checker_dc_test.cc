// Deferred-context state machine (§3.2), context-local handles (§3.3), the query and map
// trackers (§3.4) and the table rules R4, R13, R29, R34, R65. Each rule has a violating
// trace and a legal near-miss.
#include "check/testing/check_fixture.h"

namespace cltrace::check::testing {
namespace {

class DeferredContextTest : public DcTest {
 protected:
  void MapDiscard(const std::string& ctx, const std::string& res,
                  const std::string& how = "D3D10_DDI_MAP_WRITE_DISCARD",
                  const std::string& fn = "DynamicResourceMapDiscard") {
    t.On(ctx == "ic" ? kIcThread : kDcThread);
    t.Call(fn, {{"hDevice", ctx}, {"hResource", res}, {"Subresource", "0"}, {"DDIMap", how}});
  }
  void Unmap(const std::string& ctx, const std::string& res) {
    t.On(ctx == "ic" ? kIcThread : kDcThread);
    t.Call("DynamicResourceUnmap", {{"hDevice", ctx}, {"hResource", res}, {"Subresource", "0"}});
  }
  void QueryCall(const std::string& fn, const std::string& ctx, const std::string& q) {
    t.On(ctx == "ic" ? kIcThread : kDcThread);
    t.Call(fn, {{"hDevice", ctx}, {"hQuery", q}});
  }
  void Abandon(const std::string& dc) {
    t.On(kDcThread).Call("AbandonCommandList", {{"hDevice", dc}});
  }
  // A draw on dc1 that reports E_OUTOFMEMORY to dc1's core layer (a local out-of-memory).
  void DrawReportingOom() {
    t.On(kDcThread).Begin("Draw", {{"hDevice", "dc1"}, {"VertexCount", "3"}});
    t.Call("SetErrorCb", {{"hRuntimeDevice", "rtdc1"}, {"hResult", "E_OUTOFMEMORY"}});
    t.End();
  }
  // Buffer vb, opened on dc1 as lvb and bound there.
  void BoundLocalVb() {
    Resource("vb");
    Open("dc1", "lvb", "vb");
    BindVb("dc1", "lvb");
  }
  // Dynamic buffer cb, opened on dc1 as lcb.
  void OpenDynamicCb() {
    Resource("cb", /*dynamic=*/true);
    Open("dc1", "lcb", "cb");
  }
  // Query q, opened on dc1 as lq.
  void OpenQuery() {
    Query("q");
    Open("dc1", "lq", "q", "CreateQuery");
  }
  // cl1 recorded on dc1 with query q begun (and ended unless !end) through lq; dc1 recycled.
  void ListUsingQuery(bool end = true) {
    OpenQuery();
    QueryCall("QueryBegin", "dc1", "lq");
    if (end) QueryCall("QueryEnd", "dc1", "lq");
    FinishNew("dc1", "cl1");
    Close("dc1", "lq", "DestroyQuery");
    RecycleDc("dc1");
  }
  // cl1 recorded on dc1 with dynamic buffer cb mapped (and unmapped unless !unmap) through
  // lcb; dc1 recycled.
  void ListUsingMap(bool unmap = true) {
    OpenDynamicCb();
    MapDiscard("dc1", "lcb");
    if (unmap) Unmap("dc1", "lcb");
    FinishNew("dc1", "cl1");
    Close("dc1", "lcb");
    RecycleDc("dc1");
  }
};

// ---- §3.2 ---------------------------------------------------------------------------

TEST_F(DeferredContextTest, R48_RecycleCreateWhileRecording) {
  Draw("dc1");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), ElementsAre("R48")) << Report();
}

TEST_F(DeferredContextTest, R48_NearMiss_RecycleAfterAbandon) {
  Draw("dc1");
  Abandon("dc1");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R48_DestroyWithUnfinishedWork) {
  Draw("dc1");
  t.On(kDcThread).Call("DestroyDevice", {{"hDevice", "dc1"}});
  EXPECT_THAT(Errors(), ElementsAre("R48")) << Report();
}

TEST_F(DeferredContextTest, R48_NearMiss_DestroyIdleOrAbandoned) {
  // D11: an idle recording DC may be destroyed directly, or after an abandon.
  SmallList("dc1", "cl1");
  t.On(kDcThread).Call("DestroyDevice", {{"hDevice", "dc1"}});
  Dc("dc2");
  Draw("dc2");
  Abandon("dc2");
  t.On(kDcThread).Call("DestroyDevice", {{"hDevice", "dc2"}});
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R48_NearMiss_FailedRecycleThenDestroyOrNot) {
  // D9e: after RecycleCreateDeferredContext returned E_OUTOFMEMORY, both are accepted.
  SmallList("dc1", "cl1");
  Draw("dc1");
  FinishNew("dc1", "cl2");
  RecycleDc("dc1", "E_OUTOFMEMORY");
  t.On(kDcThread).Call("DestroyDevice", {{"hDevice", "dc1"}});
  Dc("dc2");
  SmallList("dc2", "cl3");
  Draw("dc2");
  FinishNew("dc2", "cl4");
  RecycleDc("dc2", "E_OUTOFMEMORY");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R23_RecycleCreateDcReturnsOtherCode) {
  Draw("dc1");
  FinishNew("dc1", "cl1");
  RecycleDc("dc1", "E_FAIL");
  EXPECT_THAT(Errors(), ElementsAre("R23")) << Report();
}

TEST_F(DeferredContextTest, R23_OomThroughSetErrorCb) {
  Draw("dc1");
  FinishNew("dc1", "cl1");
  t.Begin("RecycleCreateDeferredContext",
          {{"hDevice", "ic"}, {"hDrvContext", "dc1"}, {"hRTCoreLayer", "rtdc1"}}, "S_OK");
  t.Call("SetErrorCb", {{"hRuntimeDevice", "rtic"}, {"hResult", "E_OUTOFMEMORY"}});
  t.End();
  EXPECT_THAT(Errors(), ElementsAre("R23")) << Report();
}

TEST_F(DeferredContextTest, R23_NearMiss_OomByReturnValue) {
  Draw("dc1");
  FinishNew("dc1", "cl1");
  RecycleDc("dc1", "E_OUTOFMEMORY");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R51_UnbindAfterClose) {
  BoundLocalVb();
  Draw("dc1");
  Abandon("dc1");
  Close("dc1", "lvb");
  BindVb("dc1", "0");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), ElementsAre("R51")) << Report();
}

TEST_F(DeferredContextTest, R51_RecycleWithOpenLocalsAfterAbandon) {
  BoundLocalVb();
  Abandon("dc1");
  BindVb("dc1", "0");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), ElementsAre("R51")) << Report();
}

TEST_F(DeferredContextTest, R51_NearMiss_AbandonUnbindCloseRecycle) {
  BoundLocalVb();
  Draw("dc1");
  Abandon("dc1");
  BindVb("dc1", "0");
  Close("dc1", "lvb");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R52_QueryStillBegunAtFinish) {
  ListUsingQuery(/*end=*/false);
  EXPECT_THAT(Errors(), ElementsAre("R52")) << Report();
}

TEST_F(DeferredContextTest, R52_ResourceStillMappedAtFinish) {
  ListUsingMap(/*unmap=*/false);
  EXPECT_THAT(Errors(), ElementsAre("R52")) << Report();
}

TEST_F(DeferredContextTest, R52_NearMiss_EndedAndUnmappedFirst) {
  Query("q");
  Resource("cb", true);
  Open("dc1", "lq", "q", "CreateQuery");
  Open("dc1", "lcb", "cb");
  QueryCall("QueryBegin", "dc1", "lq");
  MapDiscard("dc1", "lcb");
  QueryCall("QueryEnd", "dc1", "lq");  // §4.5 step 1
  Unmap("dc1", "lcb");
  FinishNew("dc1", "cl1");
  Close("dc1", "lq", "DestroyQuery");
  Close("dc1", "lcb");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R53_DrawOnClosedDc) {
  Draw("dc1");
  FinishNew("dc1", "cl1");
  Draw("dc1");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), ElementsAre("R53")) << Report();
}

TEST_F(DeferredContextTest, R53_DrawOnAbandonedDc) {
  Draw("dc1");
  Abandon("dc1");
  Draw("dc1");
  EXPECT_THAT(Errors(), ElementsAre("R53")) << Report();
}

TEST_F(DeferredContextTest, R53_NearMiss_ClosesAndUnbindsOnClosedDc) {
  BoundLocalVb();
  Draw("dc1");
  FinishNew("dc1", "cl1");
  BindVb("dc1", "0");  // an unbind is not rendering
  Close("dc1", "lvb");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R53_NearMiss_RefreshAnswersInsideDcDestroyDevice) {
  // R49: the driver refreshes state inside the DC's DestroyDevice; the runtime answers that
  // nothing is bound. The DC's life ends on entry, but these answers are not rendering.
  BoundLocalVb();
  Draw("dc1");
  FinishNew("dc1", "cl1");
  Close("dc1", "lvb");
  t.On(kDcThread).Begin("DestroyDevice", {{"hDevice", "dc1"}});
  t.Begin("StateIaVertexBufCb", {{"hRuntimeDevice", "rtdc1"}});
  BindVb("dc1", "0", "0");  // unbinds slot 0
  t.End();
  ShaderRefresh("Vs", "rtdc1", "dc1");
  t.End();
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R53_SetterAfterDcDestroyDevice) {
  // The same answer after the DestroyDevice returned is a call on a destroyed DC.
  Draw("dc1");
  FinishNew("dc1", "cl1");
  t.On(kDcThread).Call("DestroyDevice", {{"hDevice", "dc1"}});
  t.Begin("Draw", {{"hDevice", "ic"}, {"VertexCount", "3"}});
  ShaderRefresh("Vs", "rtic", "dc1");
  t.End();
  EXPECT_THAT(Errors(), ElementsAre("R53")) << Report();
}

TEST_F(DeferredContextTest, R29_FinishAfterLocalOom) {
  DrawReportingOom();
  FinishNew("dc1", "cl1");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), ElementsAre("R29")) << Report();
}

TEST_F(DeferredContextTest, R29_NearMiss_AbandonAfterLocalOom) {
  DrawReportingOom();
  Abandon("dc1");
  RecycleDc("dc1");
  SmallList("dc1", "cl1");  // the next recording is fine again
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

// ---- §3.3 ---------------------------------------------------------------------------

TEST_F(DeferredContextTest, R54_IcDestroyWhileLocalOpen) {
  Resource("vb");
  Open("dc1", "lvb", "vb");
  t.On(kIcThread).Call("DestroyResource", {{"hDevice", "ic"}, {"hResource", "vb"}});
  EXPECT_THAT(Errors(), ElementsAre("R54")) << Report();
}

TEST_F(DeferredContextTest, R54_LocalOpenOfDestroyedObject) {
  Resource("vb");
  t.On(kIcThread).Call("DestroyResource", {{"hDevice", "ic"}, {"hResource", "vb"}});
  Open("dc1", "lvb", "vb");
  EXPECT_THAT(Errors(), ElementsAre("R54")) << Report();
}

TEST_F(DeferredContextTest, R54_NearMiss_IcDestroyAfterClose) {
  BoundLocalVb();
  Draw("dc1");
  FinishNew("dc1", "cl1");
  Close("dc1", "lvb");
  RecycleDc("dc1");
  t.On(kIcThread).Call("DestroyResource", {{"hDevice", "ic"}, {"hResource", "vb"}});
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R55_ViewOpenedBeforeItsResource) {
  Resource("tex");
  Srv("srv", "tex");
  Open("dc1", "lsrv", "srv", "CreateShaderResourceView", {{"hDrvResource", "ltex"}});
  EXPECT_THAT(Errors(), ElementsAre("R55")) << Report();
}

TEST_F(DeferredContextTest, R55_ResourceClosedBeforeItsView) {
  Resource("tex");
  Srv("srv", "tex");
  Open("dc1", "ltex", "tex");
  Open("dc1", "lsrv", "srv", "CreateShaderResourceView", {{"hDrvResource", "ltex"}});
  FinishNew("dc1", "cl1");
  Close("dc1", "ltex");
  Close("dc1", "lsrv", "DestroyShaderResourceView");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), ElementsAre("R55")) << Report();
}

TEST_F(DeferredContextTest, R55_NearMiss_DependencyOrderRespected) {
  Resource("tex");
  Srv("srv", "tex");
  Open("dc1", "ltex", "tex");
  Open("dc1", "lsrv", "srv", "CreateShaderResourceView", {{"hDrvResource", "ltex"}});
  t.On(kDcThread).Call("PsSetShaderResources", {{"hDevice", "dc1"},
                                                {"StartSlot", "0"},
                                                {"NumViews", "1"},
                                                {"phShaderResourceViews", "lsrv"}});
  Draw("dc1");
  FinishNew("dc1", "cl1");
  Close("dc1", "lsrv", "DestroyShaderResourceView");
  Close("dc1", "ltex");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R56_ArgumentsForDependencyFreeObject) {
  Resource("vb");
  Open("dc1", "lvb", "vb", "CreateResource", {{"pCreateResource", "1"}, {"ByteStride", "64"}});
  EXPECT_THAT(Errors(), ElementsAre("R56")) << Report();
}

TEST_F(DeferredContextTest, R56_ViewArgumentsBeyondTheDependency) {
  Resource("tex");
  Srv("srv", "tex");
  Open("dc1", "ltex", "tex");
  Open("dc1", "lsrv", "srv", "CreateShaderResourceView",
       {{"hDrvResource", "ltex"}, {"Format", "28"}});
  EXPECT_THAT(Errors(), ElementsAre("R56")) << Report();
}

TEST_F(DeferredContextTest, R56_HrtSlotIsNotAnIcHandle) {
  Open("dc1", "lvb", "nothing");
  EXPECT_THAT(Errors(), ElementsAre("R56")) << Report();
}

TEST_F(DeferredContextTest, R56_NearMiss_NullArgumentsAndIcHandle) {
  Resource("vb");
  Open("dc1", "lvb", "vb");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R57_IcHandleInDcCall) {
  Resource("vb");
  BindVb("dc1", "vb");
  EXPECT_THAT(Errors(), ElementsAre("R57")) << Report();
}

TEST_F(DeferredContextTest, R57_LocalHandleOfAnotherDc) {
  Dc("dc2");
  Resource("vb");
  Open("dc2", "lvb2", "vb");
  BindVb("dc1", "lvb2");
  EXPECT_THAT(Errors(), ElementsAre("R57")) << Report();
}

TEST_F(DeferredContextTest, R57_NearMiss_OwnLocalHandle) {
  Dc("dc2");
  Resource("vb");
  Open("dc1", "lvb1", "vb");
  Open("dc2", "lvb2", "vb");  // one local handle per (object, DC)
  BindVb("dc1", "lvb1");
  BindVb("dc2", "lvb2");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R58_OpenedTwiceInOneRecording) {
  Resource("vb");
  Open("dc1", "lvb", "vb");
  Open("dc1", "lvb_again", "vb");
  EXPECT_THAT(Errors(), ElementsAre("R58")) << Report();
}

TEST_F(DeferredContextTest, R58_UsedInNextRecordingWithoutReopen) {
  BoundLocalVb();
  FinishNew("dc1", "cl1");
  Close("dc1", "lvb");
  RecycleDc("dc1");
  BindVb("dc1", "lvb");
  EXPECT_THAT(Errors(), ElementsAre("R58")) << Report();
}

TEST_F(DeferredContextTest, R58_LocalHandleLeftOpenAtRecycle) {
  Resource("vb");
  Open("dc1", "lvb", "vb");
  FinishNew("dc1", "cl1");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), ElementsAre("R58")) << Report();
}

TEST_F(DeferredContextTest, R58_NearMiss_ReopenedInNextRecording) {
  Resource("vb");
  for (const char* cl : {"cl1", "cl2"}) {
    Open("dc1", "lvb", "vb");  // same memory reused for the local handle
    BindVb("dc1", "lvb");
    Draw("dc1");
    FinishNew("dc1", cl);
    Close("dc1", "lvb");
    RecycleDc("dc1");
  }
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

// Nested execution (§3.3, R59): cl1 recorded on dc1, executed inside dc2's recording.
class NestedTest : public DeferredContextTest {
 protected:
  void MakeInner() {
    Dc("dc2");
    SmallList("dc1", "cl1");
  }
  void Nested(const std::string& handle) {
    t.On(kDcThread).Call("CommandListExecute", {{"hDevice", "dc2"}, {"hCommandList", handle}});
  }
};

TEST_F(NestedTest, R59_IcHandleWithLocalSetting) {
  MakeInner();
  Nested("cl1");
  EXPECT_THAT(Errors(), ElementsAre("R59")) << Report();
}

TEST_F(NestedTest, R59_InnerListReleased) {
  MakeInner();
  Open("dc2", "lcl1", "cl1", "CreateCommandList");
  RecycleDestroy("cl1");
  Nested("lcl1");
  EXPECT_THAT(Errors(), ElementsAre("R59")) << Report();
}

TEST_F(NestedTest, R59_NearMiss_LocalHandle) {
  MakeInner();
  Open("dc2", "lcl1", "cl1", "CreateCommandList");
  Nested("lcl1");
  FinishNew("dc2", "cl2");
  Close("dc2", "lcl1", "DestroyCommandList");
  RecycleDc("dc2");
  Execute("cl2");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(NestedTest, R59_NearMiss_IcHandleWithIcSetting) {
  options.nested_execute_handle = NestedExecuteHandle::kIc;
  MakeInner();
  Nested("cl1");
  FinishNew("dc2", "cl2");
  RecycleDc("dc2");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

// ---- §3.4 ---------------------------------------------------------------------------

TEST_F(DeferredContextTest, R61_ExecuteWhileQueryBegunOnIc) {
  ListUsingQuery();
  QueryCall("QueryBegin", "ic", "q");
  Execute("cl1");
  EXPECT_THAT(Errors(), ElementsAre("R61")) << Report();
}

TEST_F(DeferredContextTest, R61_NearMiss_QueryEndedOnIcFirst) {
  ListUsingQuery();
  QueryCall("QueryBegin", "ic", "q");
  QueryCall("QueryEnd", "ic", "q");
  Execute("cl1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R62_ExecuteWhileMappedOnIc) {
  ListUsingMap();
  MapDiscard("ic", "cb");
  Execute("cl1");
  EXPECT_THAT(Errors(), ElementsAre("R62")) << Report();
}

TEST_F(DeferredContextTest, R62_NearMiss_UnmappedOnIcFirst) {
  ListUsingMap();
  MapDiscard("ic", "cb");
  Unmap("ic", "cb");
  Execute("cl1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R63_QuerySpansContexts) {
  OpenQuery();
  QueryCall("QueryBegin", "ic", "q");
  QueryCall("QueryEnd", "dc1", "lq");
  EXPECT_THAT(Errors(), ElementsAre("R63")) << Report();
}

TEST_F(DeferredContextTest, R63_QuerySpansCommandListBoundary) {
  OpenQuery();
  QueryCall("QueryBegin", "dc1", "lq");
  Abandon("dc1");
  Close("dc1", "lq", "DestroyQuery");
  RecycleDc("dc1");
  Open("dc1", "lq", "q", "CreateQuery");
  QueryCall("QueryEnd", "dc1", "lq");
  EXPECT_THAT(Errors(), ElementsAre("R63")) << Report();
}

TEST_F(DeferredContextTest, R63_NearMiss_EndWithoutBeginAndPairsPerContext) {
  OpenQuery();
  QueryCall("QueryEnd", "dc1", "lq");  // End without Begin = Begin+End
  QueryCall("QueryBegin", "ic", "q");
  QueryCall("QueryEnd", "ic", "q");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R63_NearMiss_IndependentPairsOnIcAndDc) {
  // §3.4 tracks (query, context): a pair on the IC and one on the DC may interleave.
  OpenQuery();
  QueryCall("QueryBegin", "ic", "q");
  QueryCall("QueryBegin", "dc1", "lq");
  QueryCall("QueryEnd", "dc1", "lq");
  QueryCall("QueryEnd", "ic", "q");
  FinishNew("dc1", "cl1");
  Close("dc1", "lq", "DestroyQuery");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R52_DcQueryStillBegunWhileIcPairEnded) {
  // The IC's pair is complete; the DC's pair is still open when the list is made.
  OpenQuery();
  QueryCall("QueryBegin", "ic", "q");
  QueryCall("QueryBegin", "dc1", "lq");
  QueryCall("QueryEnd", "ic", "q");
  FinishNew("dc1", "cl1");
  EXPECT_THAT(Errors(), ElementsAre("R52")) << Report();
}

TEST_F(DeferredContextTest, R64_MapOfNonDynamicResource) {
  Resource("vb");
  Open("dc1", "lvb", "vb");
  MapDiscard("dc1", "lvb");
  EXPECT_THAT(Errors(), ElementsAre("R64")) << Report();
}

TEST_F(DeferredContextTest, R64_FirstMapIsNoOverwrite) {
  OpenDynamicCb();
  MapDiscard("dc1", "lcb", "D3D10_DDI_MAP_WRITE_NOOVERWRITE", "DynamicIABufferMapNoOverwrite");
  EXPECT_THAT(Errors(), ElementsAre("R64")) << Report();
}

TEST_F(DeferredContextTest, R64_ReadMapOnDc) {
  OpenDynamicCb();
  MapDiscard("dc1", "lcb", "D3D10_DDI_MAP_READ");
  EXPECT_THAT(Errors(), ElementsAre("R64")) << Report();
}

TEST_F(DeferredContextTest, R64_NearMiss_DiscardThenNoOverwrite) {
  OpenDynamicCb();
  MapDiscard("dc1", "lcb");
  Unmap("dc1", "lcb");
  MapDiscard("dc1", "lcb", "D3D10_DDI_MAP_WRITE_NOOVERWRITE", "DynamicIABufferMapNoOverwrite");
  Unmap("dc1", "lcb");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

// ---- (table, function) rules -----------------------------------------------------------

TEST_F(DeferredContextTest, R65_FlushThroughDc) {
  t.On(kDcThread).Call("Flush", {{"hDevice", "dc1"}});
  EXPECT_THAT(Errors(), ElementsAre("R65")) << Report();
}

TEST_F(DeferredContextTest, R65_QueryGetDataThroughDc) {
  OpenQuery();
  t.On(kDcThread).Call("QueryGetData", {{"hDevice", "dc1"}, {"hQuery", "lq"}});
  EXPECT_THAT(Errors(), ElementsAre("R65")) << Report();
}

TEST_F(DeferredContextTest, R65_NearMiss_FlushThroughIc) {
  t.On(kIcThread).Call("Flush", {{"hDevice", "ic"}});
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R4_ExcludableSlotThroughDc) {
  OpenDynamicCb();
  MapDiscard("dc1", "lcb", "D3D10_DDI_MAP_WRITE_DISCARD", "ResourceMap");
  EXPECT_THAT(Errors(), ElementsAre("R4")) << Report();
}

TEST_F(DeferredContextTest, R4_NearMiss_DynamicMapSlotThroughDc) {
  OpenDynamicCb();
  MapDiscard("dc1", "lcb", "D3D10_DDI_MAP_WRITE_DISCARD", "DynamicResourceMapDiscard");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(DeferredContextTest, R34_CalcHandleSizeThroughDc) {
  t.On(kDcThread).Call("CalcDeferredContextHandleSize",
                       {{"hDevice", "dc1"}, {"HandleType", "D3D10DDI_HT_RESOURCE"}}, "64");
  EXPECT_THAT(Errors(), ElementsAre("R34")) << Report();
}

TEST_F(DeferredContextTest, R13_RecycleCommandListThroughIc) {
  SmallList("dc1", "cl1");
  RecycleDestroy("cl1");
  t.On(kIcThread).Call("RecycleCommandList", {{"hDevice", "ic"}, {"hCommandList", "cl1"}});
  EXPECT_THAT(Errors(), ElementsAre("R13")) << Report();
}

TEST_F(DeferredContextTest, R13_RecycleCommandListWithLocalHandle) {
  Dc("dc2");
  SmallList("dc1", "cl1");
  Open("dc2", "lcl1", "cl1", "CreateCommandList");
  t.On(kDcThread).Call("RecycleCommandList", {{"hDevice", "dc2"}, {"hCommandList", "lcl1"}});
  EXPECT_THAT(Errors(), ElementsAre("R13")) << Report();
}

}  // namespace
}  // namespace cltrace::check::testing
