// Values, errors and sizes (ddi-spec §5.1, §5.3, §5.4): R1, R24-R28, R30-R33, R35-R37.
#include "check/testing/check_fixture.h"

namespace cltrace::check::testing {
namespace {

class ValueTest : public DcTest {
 protected:
  // `fn` through `ctx` reporting `hr` to core layer `rt`.
  void Report(const std::string& fn, const Args& args, const std::string& rt, const std::string& hr,
              uint32_t tid = 1) {
    t.On(tid).Begin(fn, args);
    t.Call("SetErrorCb", {{"hRuntimeDevice", rt}, {"hResult", hr}});
    t.End();
  }
};

TEST(CapsTest, R1_CommandListsWithoutFreeThreaded) {
  TestTrace t;
  t.Call("GetCaps", {{"hAdapter", "a"},
                     {"Type", "D3D11DDICAPS_THREADING"},
                     {"pData.pData", "4"},
                     {"DataSize", "4"}});
  auto r = Check(t.events(), t.handles());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->violations.size(), 1u);
  EXPECT_STREQ(r->violations[0].id(), "R1");
}

TEST(CapsTest, R1_NearMiss_FreeThreadedWithOrWithoutCommandLists) {
  TestTrace t;
  for (const char* caps : {"5", "1", "0", "7"}) {
    t.Call("GetCaps", {{"hAdapter", "a"},
                       {"Type", "D3D11DDICAPS_THREADING"},
                       {"pData.pData", caps},
                       {"DataSize", "4"}});
  }
  auto r = Check(t.events(), t.handles());
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->violations, IsEmpty());
}

TEST_F(ValueTest, R24_CriticalCodeFromExecute) {
  SmallList("dc1", "cl1");
  Report("CommandListExecute", {{"hDevice", "ic"}, {"hCommandList", "cl1"}}, "rtic", "E_FAIL");
  EXPECT_THAT(Errors(), ElementsAre("R24")) << CheckTest::Report();
}

TEST_F(ValueTest, R24_NearMiss_OomFromExecute) {
  SmallList("dc1", "cl1");
  Report("CommandListExecute", {{"hDevice", "ic"}, {"hCommandList", "cl1"}}, "rtic",
         "E_OUTOFMEMORY");
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
}

TEST_F(ValueTest, R25_OomFromIcFlush) {
  Report("Flush", {{"hDevice", "ic"}}, "rtic", "E_OUTOFMEMORY");
  EXPECT_THAT(Errors(), ElementsAre("R25")) << CheckTest::Report();
}

TEST_F(ValueTest, R25_NearMiss_DeviceRemovedFromIcAndOomFromDc) {
  Report("Flush", {{"hDevice", "ic"}}, "rtic", "D3DDDIERR_DEVICEREMOVED");
  Query("q");
  Open("dc1", "lq", "q", "CreateQuery");
  Report("QueryEnd", {{"hDevice", "dc1"}, {"hQuery", "lq"}}, "rtdc1", "E_OUTOFMEMORY", 2);
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
}

TEST_F(ValueTest, R26_NonCriticalCodeFromAbandon) {
  Draw("dc1");
  Report("AbandonCommandList", {{"hDevice", "dc1"}}, "rtdc1", "E_OUTOFMEMORY", 2);
  EXPECT_THAT(Errors(), ElementsAre("R26")) << CheckTest::Report();
}

TEST_F(ValueTest, R26_NearMiss_CriticalCodeIsOnlyAWarning) {
  Draw("dc1");
  Report("AbandonCommandList", {{"hDevice", "dc1"}}, "rtdc1", "E_FAIL", 2);
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
  EXPECT_THAT(Warnings(), ElementsAre("R26"));
}

TEST_F(ValueTest, R27_DeviceRemovedFromHandleSizeQuery) {
  Report("CheckDeferredContextHandleSizes",
         {{"hDevice", "ic"}, {"pHSizes", "0"}, {"pHSizesOut", "6"}}, "rtic",
         "D3DDDIERR_DEVICEREMOVED");
  EXPECT_THAT(Errors(), ElementsAre("R27")) << CheckTest::Report();
}

TEST_F(ValueTest, R27_DifferentSizesAfterRemoval) {
  Report("Flush", {{"hDevice", "ic"}}, "rtic", "D3DDDIERR_DEVICEREMOVED");
  t.Call("CheckDeferredContextHandleSizes", {{"hDevice", "ic"},
                                             {"pHSizes", "1"},
                                             {"pHSizesOut", "1"},
                                             {"pHandleSize", "D3D10DDI_HT_RESOURCE:0"}});
  EXPECT_THAT(Errors(), ElementsAre("R27")) << CheckTest::Report();
}

TEST_F(ValueTest, R27_NearMiss_SameSizesAfterRemoval) {
  Report("Flush", {{"hDevice", "ic"}}, "rtic", "D3DDDIERR_DEVICEREMOVED");
  Device("ic");  // asks again: the same answer
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
}

TEST_F(ValueTest, R28_IcCallReportsToDcCoreLayer) {
  Report("Flush", {{"hDevice", "ic"}}, "rtdc1", "D3DDDIERR_DEVICEREMOVED");
  EXPECT_THAT(Errors(), ElementsAre("R28")) << CheckTest::Report();
}

TEST_F(ValueTest, R28_DcLocalOpenReportsToIcCoreLayer) {
  Resource("vb");
  Report("CreateResource", {{"hDevice", "dc1"}, {"hResource", "lvb"}, {"hRTResource", "vb"}},
         "rtic", "E_OUTOFMEMORY", 2);
  EXPECT_THAT(Errors(), ElementsAre("R28")) << CheckTest::Report();
}

TEST_F(ValueTest, R28_NearMiss_RoutedByTable) {
  // An IC-table create on the DC's thread reports to the IC; a DC-local open to the DC.
  Draw("dc1");
  t.On(2).Call("CalcPrivateCommandListSize", {{"hDevice", "ic"}, {"hDeferredContext", "dc1"}},
               "256");
  Report("CreateCommandList", CreateListArgs("dc1", "cl1"), "rtic", "E_OUTOFMEMORY", 2);
  t.Call("AbandonCommandList", {{"hDevice", "dc1"}});
  RecycleDc("dc1");
  Resource("vb");
  Report("CreateResource", {{"hDevice", "dc1"}, {"hResource", "lvb"}, {"hRTResource", "vb"}},
         "rtdc1", "E_OUTOFMEMORY", 2);
  t.On(2).Call("AbandonCommandList", {{"hDevice", "dc1"}});
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
}

TEST_F(ValueTest, R30_InvalidArgForApplicationError) {
  Report("Draw", {{"hDevice", "ic"}}, "rtic", "E_INVALIDARG");
  EXPECT_THAT(Errors(), ElementsAre("R30")) << CheckTest::Report();
}

TEST_F(ValueTest, R30_NearMiss_ApplicationError) {
  Report("Draw", {{"hDevice", "ic"}}, "rtic", "D3DDDIERR_APPLICATIONERROR");
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
}

TEST_F(ValueTest, R31_SizeQueryReportsError) {
  Report("CalcPrivateResourceSize", {{"hDevice", "ic"}}, "rtic", "E_OUTOFMEMORY");
  EXPECT_THAT(Errors(), ElementsAre("R31")) << CheckTest::Report();
}

TEST_F(ValueTest, R32_WritesMoreThanTheArrayHolds) {
  t.Call("CheckDeferredContextHandleSizes",
         {{"hDevice", "ic"},
          {"pHSizes", "1"},
          {"pHSizesOut", "2"},
          {"pHandleSize", "D3D10DDI_HT_RESOURCE:64,D3D10DDI_HT_QUERY:32"}});
  EXPECT_THAT(Errors(), ElementsAre("R32")) << CheckTest::Report();
}

TEST_F(ValueTest, R32_NearMiss_TwoPassProtocol) {
  Device("ic");  // count pass, then a fill pass of exactly the count
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
}

TEST_F(ValueTest, R33_UnlistedHandleSize) {
  t.Call("CalcPrivateResourceSize", {{"hDevice", "ic"}}, "128");
  t.Call("CreateResource", {{"hDevice", "ic"}, {"hResource", "r"}, {"hRTResource", "rt_r"}});
  t.Call("CalcDeferredContextHandleSize",
         {{"hDevice", "ic"}, {"HandleType", "D3D10DDI_HT_RESOURCE"}}, "48");
  EXPECT_THAT(Errors(), ElementsAre("R33")) << CheckTest::Report();
}

TEST_F(ValueTest, R35_NoSizeQueryAfterCreate) {
  t.Call("CreateResource", {{"hDevice", "ic"}, {"hResource", "r"}, {"hRTResource", "rt_r"}});
  Draw("ic");
  EXPECT_THAT(Errors(), ElementsAre("R35")) << CheckTest::Report();
}

TEST_F(ValueTest, R35_SizeQueryAfterRecycleCreate) {
  SmallList("dc1", "cl1");
  RecycleDestroy("cl1");
  FinishRecycled("dc1", "cl1", {"cl1"});
  t.Call("CalcDeferredContextHandleSize",
         {{"hDevice", "ic"}, {"HandleType", "D3D11DDI_HT_COMMANDLIST"}}, "16");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), ElementsAre("R35")) << CheckTest::Report();
}

TEST_F(ValueTest, R35_NearMiss_QueryAfterEveryCreateButNotAfterFailure) {
  Resource("vb");
  Srv("srv", "vb");
  Query("q");
  CallbackInside(1, "CreateResource",
                 {{"hDevice", "ic"}, {"hResource", "r"}, {"hRTResource", "rt_r"}}, "SetErrorCb",
                 {{"hRuntimeDevice", "rtic"}, {"hResult", "E_OUTOFMEMORY"}});
  Draw("ic");  // a failed create is followed by no size query
  SmallList("dc1", "cl1");
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
}

// R5 from the recorder's table-rewrite notes (annotations of a binary trace).
class TableRewriteTest : public CheckTest {
 protected:
  // Runs the checker with `note` as the annotation of the event at `seq`.
  std::vector<std::string> ErrorsWithNote(uint64_t seq, const std::string& note) {
    std::vector<format::Event> events = t.events();
    format::TokenTable strings;
    strings.Intern("");
    for (format::Event& e : events)
      if (e.seq == seq) e.annotation = strings.Intern(note);
    options.strings = &strings;
    absl::StatusOr<CheckResult> r = Check(events, t.handles(), options);
    EXPECT_TRUE(r.ok()) << r.status();
    std::vector<std::string> ids;
    if (r.ok())
      for (const Violation& v : r->violations) ids.push_back(v.id());
    return ids;
  }
};

TEST_F(TableRewriteTest, R5_CreateSlotRewrittenAfterCreateDevice) {
  Device();
  uint64_t flush = t.On(1).Call("Flush", {{"hDevice", "ic"}});
  EXPECT_THAT(
      ErrorsWithNote(flush,
                     "API Flush | table-rewrite (R5): D3D11DDI_DEVICEFUNCS.pfnCreateResource"
                     " of immediate context 0x1000 changed by the driver from 0x2000 to "
                     "0x3000"),
      ElementsAre("R5"));
}

TEST_F(TableRewriteTest, R5_RecycleSlotRewritten) {
  Device();
  uint64_t flush = t.On(1).Call("Flush", {{"hDevice", "ic"}});
  EXPECT_THAT(ErrorsWithNote(flush,
                             "table-rewrite (R5): D3D11DDI_DEVICEFUNCS.pfnRecycleCreateCommandList"
                             " of immediate context 0x1000 changed by the driver from 0x2 to 0x3"),
              ElementsAre("R5"));
}

TEST_F(TableRewriteTest, R5_NearMiss_HotSwappableSlotAndDeferredContextTable) {
  Device();
  uint64_t flush = t.On(1).Call("Flush", {{"hDevice", "ic"}});
  EXPECT_THAT(ErrorsWithNote(flush,
                             "table-rewrite (R5): D3D11DDI_DEVICEFUNCS.pfnDraw of immediate "
                             "context 0x1000 changed by the driver from 0x2000 to 0x3000 | "
                             "table-rewrite (R5): D3D11DDI_DEVICEFUNCS.pfnCreateResource of "
                             "deferred context 0x1100 changed by the driver from 0x2 to 0x3"),
              IsEmpty());
}

TEST_F(TableRewriteTest, R5_NearMiss_NotJudgedWithoutTheStringTable) {
  Device();
  t.On(1).Call("Flush", {{"hDevice", "ic"}});
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
}

// R35 in traces without DC-support evidence: fragments and late-attach recordings.
class FragmentTest : public CheckTest {
 protected:
  // Evidence that deferred contexts are unsupported: threading caps without
  // COMMANDLISTS(_BUILD_2), then a device (never showing DC support) and its resource "r".
  void DeviceWithoutCommandListCaps() {
    t.On(1).Call("GetCaps", {{"hAdapter", "adapter"},
                             {"Type", "D3D11DDICAPS_THREADING"},
                             {"pData.pData", "1"},
                             {"DataSize", "4"}});
    t.Call("CreateDevice", {{"hAdapter", "adapter"},
                            {"hDrvDevice", "ic"},
                            {"hRTCoreLayer", "rtic"},
                            {"hRTDevice", "rtdev"}});
    t.Call("CreateResource", {{"hDevice", "ic"}, {"hResource", "r"}, {"hRTResource", "rt_r"}});
  }
};

TEST_F(FragmentTest, R35_NearMiss_FragmentWithoutSupportEvidence) {
  // The trace begins after CreateDevice, CheckDeferredContextHandleSizes and
  // CreateDeferredContext: the creations' size queries are the legal §4.2 sequence.
  t.On(1).Call("CreateResource", {{"hDevice", "ic"}, {"hResource", "r"}, {"hRTResource", "rt_r"}});
  t.Call("CalcDeferredContextHandleSize",
         {{"hDevice", "ic"}, {"HandleType", "D3D10DDI_HT_RESOURCE"}}, "64");
  t.Call("CreateQuery", {{"hDevice", "ic"},
                         {"Query", "D3D10DDI_QUERY_OCCLUSION"},
                         {"hQuery", "q"},
                         {"hRTQuery", "rt_q"}});
  t.Call("CalcDeferredContextHandleSize", {{"hDevice", "ic"}, {"HandleType", "D3D10DDI_HT_QUERY"}},
         "32");
  Draw("ic");
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
}

TEST_F(FragmentTest, R35_NearMiss_LateAttachBetweenCreateAndSizeQuery) {
  // Thread 3 created an object before the recorder attached: its first traced call is the
  // size query of that creation.
  t.On(3).Call("CalcDeferredContextHandleSize",
               {{"hDevice", "ic"}, {"HandleType", "D3D10DDI_HT_RESOURCE"}}, "64");
  Draw("ic");
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
}

TEST_F(FragmentTest, R35_SizeQueryWithoutCreationInAFragment) {
  Draw("ic");
  t.On(1).Call("CalcDeferredContextHandleSize",
               {{"hDevice", "ic"}, {"HandleType", "D3D10DDI_HT_RESOURCE"}}, "64");
  EXPECT_THAT(Errors(), ElementsAre("R35")) << CheckTest::Report();
}

TEST_F(FragmentTest, R35_SizeQueryThoughCapsReportNoCommandLists) {
  DeviceWithoutCommandListCaps();
  t.Call("CalcDeferredContextHandleSize",
         {{"hDevice", "ic"}, {"HandleType", "D3D10DDI_HT_RESOURCE"}}, "64");
  EXPECT_THAT(Errors(), ElementsAre("R35")) << CheckTest::Report();
}

TEST_F(FragmentTest, R35_NearMiss_NoCommandListCapsAndNoSizeQuery) {
  DeviceWithoutCommandListCaps();
  Draw("ic");
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
}

TEST_F(ValueTest, R36_CommandListSizeChangesForOneDc) {
  SmallList("dc1", "cl1");
  Draw("dc1");
  t.On(2).Call("CalcPrivateCommandListSize", {{"hDevice", "ic"}, {"hDeferredContext", "dc1"}},
               "512");
  EXPECT_THAT(Errors(), ElementsAre("R36")) << CheckTest::Report();
}

TEST_F(ValueTest, R36_NearMiss_ConstantPerDc) {
  Dc("dc2");
  SmallList("dc1", "cl1");
  SmallList("dc1", "cl2");
  t.On(2).Call("CalcPrivateCommandListSize", {{"hDevice", "ic"}, {"hDeferredContext", "dc2"}},
               "384");  // another DC may differ
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
}

TEST_F(ValueTest, R37_LocalSizeChangesAcrossRecycle) {
  SmallList("dc1", "cl1");
  RecycleDestroy("cl1");
  FinishRecycled("dc1", "cl1", {"cl1"});
  t.Call("CalcDeferredContextHandleSize",
         {{"hDevice", "ic"}, {"HandleType", "D3D11DDI_HT_COMMANDLIST"}}, "24");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), ElementsAre("R35", "R37")) << CheckTest::Report();
}

TEST_F(ValueTest, R37_NearMiss_NewLifetimeMayHaveAnotherSize) {
  SmallList("dc1", "cl1");
  DestroyCl("cl1");
  Draw("dc1");
  t.On(2);
  CreateList("dc1", "cl1", "24");
  RecycleDc("dc1");
  EXPECT_THAT(Errors(), IsEmpty()) << CheckTest::Report();
}

}  // namespace
}  // namespace cltrace::check::testing
