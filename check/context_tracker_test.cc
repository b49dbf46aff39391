// ContextTracker on its own: the deferred-context machine (§3.2), implicit contexts of a
// trace fragment and thread domains (R10), fed event by event (the rule tests through the
// whole checker are in checker_dc_test.cc and checker_thread_test.cc).
#include "check/testing/tracker_fixture.h"

namespace cltrace::check::testing {
namespace {

class ContextTrackerTest : public TrackerTest {};

TEST_F(ContextTrackerTest, DeferredContextRecordsAbandonsIsRecycledAndDies) {
  Device();
  Dc("dc1");
  uint64_t abandon = t.On(kDcThread).Call("AbandonCommandList", {{"hDevice", "dc1"}});
  RecycleDc("dc1");
  uint64_t destroy = t.On(kDcThread).Call("DestroyDevice", {{"hDevice", "dc1"}});
  ContextTracker& c = Start().contexts;
  int32_t dc = DeviceAndDc();
  ASSERT_GE(dc, 0);
  EXPECT_TRUE(c.at(dc).dc);
  EXPECT_EQ(c.at(dc).device, ic_);
  EXPECT_EQ(c.at(dc).state, State::kRecording);
  EXPECT_EQ(c.at(dc).recording, 1u);
  EXPECT_TRUE(c.at(ic_).dc_support);
  c.OnAbandon(E(abandon), dc);
  EXPECT_EQ(c.at(dc).state, State::kAbandoned);
  uint64_t recycle = SeqOf("RecycleCreateDeferredContext");
  c.OnRecycleCreateDeferredContext(E(recycle), M(recycle), ic_);
  EXPECT_EQ(c.at(dc).state, State::kRecording);
  EXPECT_EQ(c.at(dc).recording, 2u);
  c.OnDestroy(E(destroy), dc);
  EXPECT_EQ(c.at(dc).state, State::kDestroyed);
  EXPECT_EQ(c.at(dc).last.n, 3);
  EXPECT_THAT(Found(), IsEmpty());
}

TEST_F(ContextTrackerTest, R48_RecycleCreateOfARecordingDcIsFlagged) {
  Device();
  Dc("dc1");
  RecycleDc("dc1");  // no Abandon or Finish first
  ContextTracker& c = Start().contexts;
  int32_t dc = DeviceAndDc();
  uint64_t recycle = SeqOf("RecycleCreateDeferredContext");
  c.OnRecycleCreateDeferredContext(E(recycle), M(recycle), ic_);
  EXPECT_THAT(Found(), ElementsAre("R48"));
  EXPECT_EQ(c.at(dc).recording, 2u);  // judged, then followed as the runtime did
}

TEST_F(ContextTrackerTest, R53_GateStopsCallsThroughADestroyedDc) {
  Device();
  Dc("dc1");
  uint64_t destroy = t.On(kDcThread).Call("DestroyDevice", {{"hDevice", "dc1"}});
  Draw("dc1");
  ContextTracker& c = Start().contexts;
  int32_t dc = DeviceAndDc();
  EXPECT_TRUE(c.DcGate(E(destroy), M(destroy), dc));
  c.OnDestroy(E(destroy), dc);
  uint64_t draw = SeqOf("Draw");
  EXPECT_FALSE(c.DcGate(E(draw), M(draw), dc));
  EXPECT_THAT(Found(), ElementsAre("R53"));
}

TEST_F(ContextTrackerTest, ImplicitContextOfAFragmentIsGuessedFromItsTable) {
  uint64_t abandon = t.On(kDcThread).Call("AbandonCommandList", {{"hDevice", "dcx"}});
  uint64_t flush = t.On(kIcThread).Call("Flush", {{"hDevice", "icx"}});
  ContextTracker& c = Start().contexts;
  int32_t dc = c.ContextOf(E(abandon), M(abandon));
  int32_t ic = c.ContextOf(E(flush), M(flush));
  ASSERT_GE(dc, 0);
  ASSERT_GE(ic, 0);
  EXPECT_TRUE(c.at(dc).dc);
  EXPECT_TRUE(c.at(dc).implicit);
  EXPECT_FALSE(c.at(ic).dc);
  EXPECT_FALSE(c.Complete(dc));  // created before the trace: "never created" is not judged
  EXPECT_EQ(c.ContextOf(E(abandon), M(abandon)), dc);
  EXPECT_EQ(c.Lookup(t.H("dcx")), dc);
}

TEST_F(ContextTrackerTest, R10_OverlappingCallsInOneDomainAreFlaggedNestedOnesAreNot) {
  Device();
  uint64_t outer = t.On(kIcThread).Begin("Flush", {{"hDevice", "ic"}});
  uint64_t nested = t.Call("Flush", {{"hDevice", "ic"}});
  uint64_t other = t.On(3).Call("Flush", {{"hDevice", "ic"}});
  t.On(kIcThread).End();
  ContextTracker& c = Start().contexts;
  int32_t ic = DeviceFrom(SeqOf("CreateDevice"));
  c.EnterDomain(ic, E(outer), Rule::kR10);
  c.EnterDomain(ic, E(nested), Rule::kR10);
  EXPECT_THAT(Found(), IsEmpty());
  c.EnterDomain(ic, E(other), Rule::kR10);
  EXPECT_THAT(Found(), ElementsAre("R10"));
}

}  // namespace
}  // namespace cltrace::check::testing
