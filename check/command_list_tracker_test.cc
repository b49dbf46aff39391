// CommandListTracker on its own: the command-list machine of §3.1 fed event by event, with
// only the peers it queries (the rule tests through the whole checker are in
// checker_cl_test.cc).
#include "check/testing/tracker_fixture.h"

namespace cltrace::check::testing {
namespace {

class CommandListTrackerTest : public TrackerTest {
 protected:
  // Device, dc1 recording a draw, cl1 made from it, then `more` written by the test.
  void Write() {
    Device();
    Dc("dc1");
    Draw("dc1");
    FinishNew("dc1", "cl1");
  }
  // Feeds the contexts' creation and cl1's CreateCommandList; returns cl1's index.
  int32_t Made() {
    DeviceAndDc();
    uint64_t create = SeqOf("CreateCommandList");
    trk().lists.OnCreate(E(create), M(create), ic_, /*recycle=*/false);
    return SlotOf("cl1").cl;
  }
  void Feed(absl::string_view fn, int nth = 0) {
    uint64_t s = SeqOf(fn, nth);
    CommandListTracker& l = trk().lists;
    const CallMeta& m = M(s);
    switch (m.op) {
      case Op::kCommandListExecute:
        return l.OnExecute(E(s), m, ic_);
      case Op::kRecycleDestroyCommandList:
        return l.OnRecycleDestroy(E(s), m, ic_);
      case Op::kDestroyCommandList:
        return l.OnDestroy(E(s), m, ic_);
      case Op::kRecycleCommandList:
        return l.OnDcRecycle(E(s), m, dc_);
      case Op::kRecycleCreateCommandList:
        return l.OnCreate(E(s), m, ic_, /*recycle=*/true);
      default:
        FAIL() << fn << " is not a command-list call";
    }
  }
};

TEST_F(CommandListTrackerTest, CreateClosesTheDcAndObligesTheThreadToQueryTheLocalSize) {
  Write();
  Start();
  int32_t cl = Made();
  ASSERT_GE(cl, 0);
  EXPECT_EQ(trk().lists.at(cl).state, State::kValid);
  EXPECT_EQ(trk().lists.at(cl).owner, dc_);
  EXPECT_EQ(trk().contexts.at(dc_).state, State::kClosed);
  const internal::PendingCalc* p = trk().threads.Pending(kDcThread);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->cl, cl);
  EXPECT_FALSE(p->recycle);
  EXPECT_THAT(Found(), IsEmpty());
}

TEST_F(CommandListTrackerTest, ListGoesRoundTheRecycleLoop) {
  Write();
  RecycleDc("dc1");
  Execute("cl1");
  RecycleDestroy("cl1");
  Draw("dc1");
  FinishRecycled("dc1", "cl1", {"cl1"});
  Start();
  int32_t cl = Made();
  uint64_t recycle_dc = SeqOf("RecycleCreateDeferredContext");
  trk().contexts.OnRecycleCreateDeferredContext(E(recycle_dc), M(recycle_dc), ic_);
  Feed("CommandListExecute");
  Feed("RecycleDestroyCommandList");
  EXPECT_EQ(trk().lists.at(cl).state, State::kRecycleDestroyed);
  Feed("RecycleCommandList");
  EXPECT_EQ(trk().lists.at(cl).state, State::kRecycled);
  EXPECT_EQ(trk().lists.at(cl).cache_dc, dc_);
  EXPECT_EQ(trk().contexts.at(dc_).state, State::kFinishing);
  Feed("RecycleCreateCommandList");
  EXPECT_EQ(trk().lists.at(cl).state, State::kValid);
  EXPECT_EQ(trk().lists.at(cl).cache_dc, -1);
  EXPECT_EQ(trk().contexts.at(dc_).state, State::kClosed);
  EXPECT_THAT(Found(), IsEmpty());
}

TEST_F(CommandListTrackerTest, R40_ExecuteOfARecycleDestroyedList) {
  Write();
  RecycleDestroy("cl1");
  Execute("cl1");
  Start();
  int32_t cl = Made();
  Feed("RecycleDestroyCommandList");
  Feed("CommandListExecute");
  EXPECT_THAT(Found(), ElementsAre("R40"));
  ASSERT_EQ(env().result().violations.size(), 1u);
  EXPECT_EQ(env().result().violations[0].last.size(), 2u);  // Valid, RecycleDestroyed
  EXPECT_EQ(trk().lists.at(cl).state, State::kRecycleDestroyed);
}

TEST_F(CommandListTrackerTest, R45_RecycleCreateWithoutTheDcRecycleLoop) {
  Write();
  RecycleDc("dc1");
  RecycleDestroy("cl1");
  FinishRecycled("dc1", "cl1", {});  // cl1 never went through RecycleCommandList
  Start();
  Made();
  uint64_t recycle_dc = SeqOf("RecycleCreateDeferredContext");
  trk().contexts.OnRecycleCreateDeferredContext(E(recycle_dc), M(recycle_dc), ic_);
  Feed("RecycleDestroyCommandList");
  Feed("RecycleCreateCommandList");
  EXPECT_THAT(Found(), ElementsAre("R45"));
}

TEST_F(CommandListTrackerTest, R54_DestroyWhileALocalHandleOfItIsOpen) {
  Write();
  RecycleDc("dc1");
  Open("dc1", "lcl1", "cl1", "CreateCommandList");
  DestroyCl("cl1");
  Start();
  int32_t cl = Made();
  uint64_t recycle_dc = SeqOf("RecycleCreateDeferredContext");
  trk().contexts.OnRecycleCreateDeferredContext(E(recycle_dc), M(recycle_dc), ic_);
  uint64_t open = SeqOf("CreateCommandList", 1);
  trk().locals.OnOpen(E(open), M(open), dc_);
  EXPECT_EQ(trk().locals.OpenLocalsOf(/*is_cl=*/true, cl), 1u);
  Feed("DestroyCommandList");
  EXPECT_THAT(Found(), ElementsAre("R54"));
  EXPECT_EQ(trk().lists.at(cl).state, State::kDestroyed);
}

}  // namespace
}  // namespace cltrace::check::testing
