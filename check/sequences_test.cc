// The full legal runtime call sequences of ddi-spec §4.1-4.10 produce zero findings —
// including the [INF] proposals (§3.1 T7e, §3.2 D5e/D9e/D11, §4.6 destroy order) and
// interleavings of the IC and DC threads.
#include "check/testing/check_fixture.h"

namespace cltrace::check::testing {
namespace {

class SequenceTest : public CheckTest {
 protected:
  void AllocatedResource(const std::string& h, const std::string& alloc, bool dynamic) {
    CheckTest::AllocatedResource(
        h, alloc, {{"Usage", dynamic ? "D3D10_DDI_USAGE_DYNAMIC" : "D3D10_DDI_USAGE_DEFAULT"}});
  }
  void Flush(const std::vector<std::string>& deallocs = {}) {
    t.On(1).Begin("Flush", {{"hDevice", "ic"}});
    t.Call("RenderCb", {{"hDevice", "rtdev"},
                        {"hContext", "hctx"},
                        {"CommandLength", "512"},
                        {"NumAllocations", "4"},
                        {"NewCommandBufferSizeOut", "65536"},
                        {"NewAllocationListSizeOut", "256"},
                        {"NewPatchLocationListSizeOut", "256"}});
    t.Call("PerformAmortizedProcessingCb", {{"hRuntimeDevice", "rtic"}});
    for (const std::string& a : deallocs)
      t.Call("DeallocateCb", {{"hDevice", "rtdev"}, {"NumAllocations", "1"}, {"HandleList", a}});
    t.End();
  }
  void SetSrv(const std::string& ctx, const std::string& srv) {
    t.On(ctx == "ic" ? 1 : 2)
        .Call("PsSetShaderResources", {{"hDevice", ctx},
                                       {"StartSlot", "0"},
                                       {"NumViews", "1"},
                                       {"phShaderResourceViews", srv}});
  }
  void SetCb(const std::string& ctx, const std::string& cb) {
    t.On(ctx == "ic" ? 1 : 2)
        .Call("PsSetConstantBuffers",
              {{"hDevice", ctx}, {"StartBuffer", "0"}, {"NumBuffers", "1"}, {"phBuffers", cb}});
  }
  // §4.4 + §4.5 on dc with the objects tex/srv/cb/q, producing `cl` (recycled if
  // `recycled` names a handle to drain and reuse).
  void Record(const std::string& dc, const std::string& cl, const std::string& drain, bool reuse) {
    const std::string p = "l" + dc + "_";
    Open(dc, p + "tex", "tex");
    Open(dc, p + "srv", "srv", "CreateShaderResourceView", {{"hDrvResource", p + "tex"}});
    Open(dc, p + "cb", "cb");
    Open(dc, p + "q", "q", "CreateQuery");
    SetSrv(dc, p + "srv");
    t.On(2).Call(
        "DynamicConstantBufferMapDiscard",
        {{"hDevice", dc}, {"hResource", p + "cb"}, {"DDIMap", "D3D10_DDI_MAP_WRITE_DISCARD"}});
    t.Call("DynamicConstantBufferUnmap", {{"hDevice", dc}, {"hResource", p + "cb"}});
    SetCb(dc, p + "cb");
    t.Call("QueryBegin", {{"hDevice", dc}, {"hQuery", p + "q"}});
    Draw(dc);
    // FinishCommandList: the query is still open -> the runtime ends it (§4.5 step 1).
    t.On(2).Call("QueryEnd", {{"hDevice", dc}, {"hQuery", p + "q"}});
    if (reuse) {
      FinishRecycled(dc, cl, {drain});
    } else {
      FinishNew(dc, cl,
                drain.empty() ? std::vector<std::string>{} : std::vector<std::string>{drain});
    }
    // Closing: dependents before their resource (§4.5 step 4), no unbinds first.
    Close(dc, p + "srv", "DestroyShaderResourceView");
    Close(dc, p + "tex");
    Close(dc, p + "cb");
    Close(dc, p + "q", "DestroyQuery");
    RecycleDc(dc);
    // [INF] RestoreDeferredContextState=TRUE: the saved state comes back through opens and
    // Set* calls in the new recording (§4.5 step 6).
    Open(dc, p + "tex", "tex");
    Open(dc, p + "srv", "srv", "CreateShaderResourceView", {{"hDrvResource", p + "tex"}});
    SetSrv(dc, p + "srv");
  }
  void CloseRestored(const std::string& dc) {
    const std::string p = "l" + dc + "_";
    Close(dc, p + "srv", "DestroyShaderResourceView");
    Close(dc, p + "tex");
  }
  // Closes the restored state by abandoning the (state-only) recording, then records again
  // into the cached handle `cl`.
  void AbandonRestoredAndRecord(const std::string& dc, const std::string& cl) {
    t.On(2).Call("AbandonCommandList", {{"hDevice", dc}});
    SetSrv(dc, "0");
    CloseRestored(dc);
    RecycleDc(dc);
    Record(dc, cl, cl, /*reuse=*/true);
    CloseRestored(dc);
  }
  void Objects() {
    AllocatedResource("tex", "a_tex", false);
    Srv("srv", "tex");
    AllocatedResource("cb", "a_cb", true);
    Query("q");
  }
};

TEST_F(SequenceTest, BringUpAndObjectCreation_4_1_4_2_4_3) {
  Device();
  Objects();
  Dc("dc1");
  Dc("dc2");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(SequenceTest, RecordFinishExecuteRelease_4_4_to_4_6_and_4_8) {
  Device();
  Objects();
  Dc("dc1");
  Record("dc1", "cl1", "", false);
  // §4.8: execute on the IC, then the runtime restores the IC state with Set* calls.
  Execute("cl1");
  SetSrv("ic", "srv");
  Draw("ic");
  SetSrv("ic", "0");
  Execute("cl1");
  RecycleDestroy("cl1");
  // Second recording reuses the released handle through the DC's cache.
  AbandonRestoredAndRecord("dc1", "cl1");
  Execute("cl1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(SequenceTest, AbandonPath_4_7) {
  Device();
  Objects();
  Dc("dc1");
  Open("dc1", "ltex", "tex");
  Open("dc1", "lsrv", "srv", "CreateShaderResourceView", {{"hDrvResource", "ltex"}});
  SetSrv("dc1", "lsrv");
  Draw("dc1");
  t.On(2).Call("AbandonCommandList", {{"hDevice", "dc1"}});
  SetSrv("dc1", "0");  // unbinds one by one
  Close("dc1", "lsrv", "DestroyShaderResourceView");
  Close("dc1", "ltex");
  RecycleDc("dc1");
  SmallList("dc1", "cl1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(SequenceTest, DcAndDeviceDestruction_4_9_and_Flush_4_10) {
  Device();
  Objects();
  Dc("dc1");
  Dc("dc2");
  SmallList("dc1", "cl1");
  SmallList("dc1", "cl2");
  SmallList("dc2", "cl3");
  Execute("cl1");
  Execute("cl3");
  RecycleDestroy("cl1");
  Draw("dc1");
  FinishNew("dc1", "cl4", {"cl1"});  // cl1 now cached (Recycled) in dc1
  RecycleDc("dc1");
  RecycleDestroy("cl2");  // pending (RecycleDestroyed) on dc1's list
  // DC release (§4.6, §4.9): cached and pending handles destroyed before the DC [INF].
  DestroyCl("cl1");
  DestroyCl("cl2");
  t.On(2).Call("DestroyDevice", {{"hDevice", "dc1"}});  // idle recording DC (D11)
  DestroyCl("cl4");                                     // owner gone: full destroy
  Draw("dc2");
  t.On(2).Call("AbandonCommandList", {{"hDevice", "dc2"}});
  t.Call("DestroyDevice", {{"hDevice", "dc2"}});
  DestroyCl("cl3");
  // Device release: children first, deferred destruction drained by Flush (§4.10).
  t.On(1).Call("DestroyShaderResourceView", {{"hDevice", "ic"}, {"hShaderResourceView", "srv"}});
  t.Call("DestroyResource", {{"hDevice", "ic"}, {"hResource", "tex"}});
  t.Call("DestroyResource", {{"hDevice", "ic"}, {"hResource", "cb"}});
  t.Call("DestroyQuery", {{"hDevice", "ic"}, {"hQuery", "q"}});
  Flush({"a_tex", "a_cb"});
  Flush();  // a flush with nothing pending is fine too
  t.On(1).Call("DestroyDevice", {{"hDevice", "ic"}});
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
  EXPECT_THAT(Warnings(), IsEmpty()) << Report();
}

TEST_F(SequenceTest, ConcurrentDcThreadsAndIc) {
  Device();
  Objects();
  Dc("dc1");
  Dc("dc2");
  // dc1 records on thread 2 while dc2 records on thread 3 and the IC draws on thread 1.
  uint64_t ic_draw = t.On(1).Begin("Draw", {{"hDevice", "ic"}, {"VertexCount", "3"}});
  uint64_t dc1_draw = t.On(2).Begin("Draw", {{"hDevice", "dc1"}, {"VertexCount", "3"}});
  uint64_t dc2_draw = t.On(3).Begin("Draw", {{"hDevice", "dc2"}, {"VertexCount", "3"}});
  t.On(2).EndSeq(dc1_draw);
  t.On(3).EndSeq(dc2_draw);
  // dc1 finishes while the IC is still inside its draw (IC-table calls on the DC thread).
  FinishNew("dc1", "cl1");
  RecycleDc("dc1");
  t.On(1).EndSeq(ic_draw);
  // dc2 finishes on thread 3 while thread 4 releases cl1 (FT) and the IC executes.
  uint64_t exec = t.On(1).Begin("CommandListExecute", {{"hDevice", "ic"}, {"hCommandList", "cl1"}});
  t.On(3);
  CreateList("dc2", "cl2");
  t.Call("RecycleCreateDeferredContext",
         {{"hDevice", "ic"}, {"hDrvContext", "dc2"}, {"hRTCoreLayer", "rtdc2"}}, "S_OK");
  t.On(1).EndSeq(exec);
  t.On(4).Call("RecycleDestroyCommandList", {{"hDevice", "ic"}, {"hCommandList", "cl1"}});
  // The same DC used from another thread afterwards (domains are about overlap).
  t.On(5).Call("Draw", {{"hDevice", "dc1"}, {"VertexCount", "3"}});
  FinishRecycled("dc1", "cl1", {"cl1"});
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), IsEmpty()) << Report();
}

TEST_F(SequenceTest, NestedCommandListsEitherSetting) {
  for (NestedExecuteHandle setting : {NestedExecuteHandle::kLocal, NestedExecuteHandle::kIc}) {
    t = TestTrace();
    options.nested_execute_handle = setting;
    Device();
    Dc("dc1");
    Dc("dc2");
    SmallList("dc1", "inner");
    if (setting == NestedExecuteHandle::kLocal) {
      Open("dc2", "linner", "inner", "CreateCommandList");
      t.On(2).Call("CommandListExecute", {{"hDevice", "dc2"}, {"hCommandList", "linner"}});
      FinishNew("dc2", "outer");
      Close("dc2", "linner", "DestroyCommandList");
    } else {
      t.On(2).Call("CommandListExecute", {{"hDevice", "dc2"}, {"hCommandList", "inner"}});
      FinishNew("dc2", "outer");
    }
    RecycleDc("dc2");
    Execute("outer");
    EXPECT_THAT(Errors(), IsEmpty()) << Report();
  }
}

}  // namespace
}  // namespace cltrace::check::testing
