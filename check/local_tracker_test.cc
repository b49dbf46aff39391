// LocalTracker on its own: context-local handles (§3.3) and the local-size protocol (R35),
// fed event by event (the rule tests through the whole checker are in checker_dc_test.cc).
#include "check/testing/tracker_fixture.h"

namespace cltrace::check::testing {
namespace {

class LocalTrackerTest : public TrackerTest {
 protected:
  // Device, dc1 and IC resource r1, with l1 opened on dc1 for r1 (and `more` after).
  void Write() {
    Device();
    Dc("dc1");
    Resource("r1");
    Open("dc1", "l1", "r1");
  }
  // Feeds the contexts, r1's creation and l1's open; returns r1's object index.
  int32_t Opened() {
    DeviceAndDc();
    uint64_t res = SeqOf("CreateResource");
    trk().objects.OnCreate(E(res), M(res), ic_);
    uint64_t open = SeqOf("CreateResource", 1);
    trk().locals.OnOpen(E(open), M(open), dc_);
    return SlotOf("r1").obj;
  }
};

TEST_F(LocalTrackerTest, LocalHandleStandsForItsIcObjectUntilClosed) {
  Write();
  Close("dc1", "l1");
  Start();
  int32_t r1 = Opened();
  LocalTracker& locals = trk().locals;
  int32_t l1 = SlotOf("l1").local;
  ASSERT_GE(l1, 0);
  EXPECT_EQ(locals.at(l1).state, State::kOpen);
  EXPECT_EQ(locals.at(l1).target, r1);
  EXPECT_EQ(trk().locals.OpenLocalsOf(/*is_cl=*/false, r1), 1u);
  EXPECT_EQ(trk().locals.OpenLocalsOn(dc_), 1u);
  const format::Event& close = E(SeqOf("DestroyResource"));
  EXPECT_EQ(locals.Resolve(close, dc_, t.H("l1"), false), r1);
  locals.OnClose(close, M(close.seq), dc_);
  EXPECT_EQ(locals.at(l1).state, State::kClosedLocal);
  EXPECT_EQ(trk().locals.OpenLocalsOf(/*is_cl=*/false, r1), 0u);
  EXPECT_EQ(trk().locals.OpenLocalsOn(dc_), 0u);
  EXPECT_THAT(Found(), IsEmpty());
  EXPECT_EQ(locals.Resolve(close, dc_, t.H("l1"), false), -1);  // used after its close
  EXPECT_THAT(Found(), ElementsAre("R58"));
}

TEST_F(LocalTrackerTest, R57_AnIcHandleThroughADcTable) {
  Write();
  Draw("dc1");
  Start();
  Opened();
  EXPECT_EQ(trk().locals.Resolve(E(SeqOf("Draw")), dc_, t.H("r1"), false), -1);
  EXPECT_THAT(Found(), ElementsAre("R57"));
}

TEST_F(LocalTrackerTest, R58_RecycleWithALocalStillOpenClosesIt) {
  Write();
  RecycleDc("dc1");
  Start();
  Opened();
  int32_t l1 = SlotOf("l1").local;
  trk().locals.CloseAllOn(E(SeqOf("RecycleCreateDeferredContext")), dc_, /*destroy=*/false);
  EXPECT_THAT(Found(), ElementsAre("R58"));
  EXPECT_EQ(trk().locals.at(l1).state, State::kClosedLocal);
  EXPECT_EQ(trk().locals.OpenLocalsOn(dc_), 0u);
}

TEST_F(LocalTrackerTest, R55_ViewOpenedBeforeItsResource) {
  Device();
  Dc("dc1");
  Resource("r1");
  Srv("v1", "r1");
  Open("dc1", "lv", "v1", "CreateShaderResourceView", {{"hDrvResource", "l_none"}});
  Start();
  int32_t ic = DeviceFrom(SeqOf("CreateDevice"));
  uint64_t dc = SeqOf("CreateDeferredContext");
  trk().contexts.OnCreateDeferredContext(E(dc), M(dc), ic);
  for (absl::string_view fn : {"CreateResource", "CreateShaderResourceView"}) {
    uint64_t s = SeqOf(fn);
    trk().objects.OnCreate(E(s), M(s), ic);
  }
  uint64_t open = SeqOf("CreateShaderResourceView", 1);
  trk().locals.OnOpen(E(open), M(open), SlotOf("dc1").ctx);
  EXPECT_THAT(Found(), ElementsAre("R55"));
}

TEST_F(LocalTrackerTest, R35_CreationObligesTheThreadsNextCallToBeTheSizeQuery) {
  Device();
  Resource("r1");  // CreateResource, then CalcDeferredContextHandleSize
  t.On(kIcThread).Call("CalcPrivateResourceSize", {{"hDevice", "ic"}}, "128");
  t.Call("CreateResource", {{"hDevice", "ic"}, {"hResource", "r2"}, {"hRTResource", "rt_r2"}});
  t.Call("Flush", {{"hDevice", "ic"}});  // not the size query
  Start();
  int32_t ic = DeviceFrom(SeqOf("CreateDevice"));
  uint64_t sizes = SeqOf("CheckDeferredContextHandleSizes", 1);
  trk().locals.OnCheckHandleSizes(E(sizes), M(sizes), ic);  // the device supports DCs
  for (int nth : {0, 1}) {
    uint64_t s = SeqOf("CreateResource", nth);
    trk().objects.OnCreate(E(s), M(s), ic);
    ASSERT_NE(trk().threads.Pending(kIcThread), nullptr);
    uint64_t next = s + 2;  // the next top-level call on the thread (entry + exit positions)
    EXPECT_EQ(trk().locals.ResolvePending(E(next), M(next)), nth == 0);
    EXPECT_EQ(trk().threads.Pending(kIcThread), nullptr);
  }
  EXPECT_THAT(Found(), ElementsAre("R35"));
}

// On a scene-shaped trace every open names a new handle value, so the handle slots and the
// local records grow with the trace (a closed local's record answers a later use, R58). They
// are kept in fixed-size blocks: growing never moves (copies) them, so the memory peak is
// their size, not the two to three times of a doubling vector's reallocation; and each
// "[last: ...]" entry is 16 bytes.
TEST_F(LocalTrackerTest, SlotsAndLocalRecordsGrowWithoutMoving) {
  Write();
  Start();
  Opened();
  const int32_t l1 = SlotOf("l1").local;
  ASSERT_GE(l1, 0);
  const internal::HandleSlot* slot = &SlotOf("l1");
  const internal::Local* record = &trk().locals.at(l1);
  const uint64_t open = SeqOf("CreateResource", 1);
  const uint64_t first_new = env().slot_count();
  for (uint64_t i = 0; i < 5000; ++i) {
    env().Slot(first_new + 32 * i);              // a handle id never seen before
    trk().locals.OnOpen(E(open), M(open), dc_);  // (R58: opened again; a record each time)
  }
  EXPECT_GT(trk().locals.size(), 5000u);
  EXPECT_EQ(&SlotOf("l1"), slot);
  EXPECT_EQ(&trk().locals.at(l1), record);
  EXPECT_EQ(trk().locals.at(l1).handle, record->handle);
  EXPECT_EQ(sizeof(LastTransition), 16u);
}

}  // namespace
}  // namespace cltrace::check::testing
