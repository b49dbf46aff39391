#include "check/lifecycle.h"

#include "check/testing/check_fixture.h"
#include "ddi/catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::check::testing {
namespace {

using ::testing::ElementsAre;

class LifecycleTest : public CheckTest {
 protected:
  format::CallId Id(absl::string_view name) { return format::IdOf(*format::FindCall(name)); }
};

// cl1: Valid -> RecycleDestroyed -> Recycled -> Valid -> Destroyed.
TEST_F(LifecycleTest, CommandListIntervals) {
  Device();
  Dc("dc1");
  Draw("dc1");
  FinishNew("dc1", "cl1");
  const uint64_t created = t.events()[t.events().size() - 2].seq;  // CreateCommandList
  RecycleDc("dc1");
  Execute("cl1");
  RecycleDestroy("cl1");
  const uint64_t released = t.events().back().seq;
  Draw("dc1");
  FinishRecycled("dc1", "cl1", {"cl1"});
  const uint64_t recycled = t.events()[t.events().size() - 2].seq;
  const uint64_t remade = t.events().back().seq;
  RecycleDc("dc1");
  DestroyCl("cl1");
  const uint64_t destroyed = t.events().back().seq;

  absl::StatusOr<Lifecycle> lc = AnalyzeLifecycle(t.events(), t.handles());
  ASSERT_TRUE(lc.ok()) << lc.status();
  EXPECT_TRUE(lc->check.violations.empty());
  std::vector<const Lifetime*> of = lc->Of(t.H("cl1"));
  ASSERT_EQ(of.size(), 1u);
  const Lifetime& l = *of[0];
  EXPECT_EQ(l.role, HandleRole::kCommandList);
  EXPECT_EQ(l.context, t.H("dc1"));
  ASSERT_EQ(l.intervals.size(), 5u);
  struct Want {
    State state;
    uint64_t from, to;
    const char* cause;
    bool dc_table;
  };
  const Want want[] = {
      {State::kValid, created, released, "CreateCommandList", false},
      {State::kRecycleDestroyed, released, recycled, "RecycleDestroyCommandList", false},
      {State::kRecycled, recycled, remade, "RecycleCommandList", true},
      {State::kValid, remade, destroyed, "RecycleCreateCommandList", false},
      {State::kDestroyed, destroyed, 0, "DestroyCommandList", false},
  };
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(l.intervals[i].state, want[i].state);
    EXPECT_EQ(l.intervals[i].from_seq, want[i].from);
    EXPECT_EQ(l.intervals[i].to_seq, want[i].to);
    EXPECT_EQ(l.intervals[i].cause, Id(want[i].cause));
    EXPECT_EQ(l.intervals[i].dc_table, want[i].dc_table);
    EXPECT_EQ(l.intervals[i].context, t.H("dc1"));
  }
  EXPECT_EQ(l.At(released + 1)->state, State::kRecycleDestroyed);
  EXPECT_EQ(l.At(created - 1), nullptr);
}

TEST_F(LifecycleTest, DeferredContextAndLocalIntervalsPerRecording) {
  Device();
  Resource("vb");
  Dc("dc1");
  for (const char* cl : {"cl1", "cl2"}) {
    Open("dc1", "lvb", "vb");
    Draw("dc1");
    FinishNew("dc1", cl);
    Close("dc1", "lvb");
    RecycleDc("dc1");
  }
  absl::StatusOr<Lifecycle> lc = AnalyzeLifecycle(t.events(), t.handles());
  ASSERT_TRUE(lc.ok());
  // The DC: Recording, Closed, Recording, Closed, Recording.
  std::vector<const Lifetime*> dc = lc->Of(t.H("dc1"));
  ASSERT_EQ(dc.size(), 1u);
  std::vector<State> states;
  for (const Interval& iv : dc[0]->intervals) states.push_back(iv.state);
  EXPECT_THAT(states, ElementsAre(State::kRecording, State::kClosed, State::kRecording,
                                  State::kClosed, State::kRecording));
  // The local handle: one lifetime per recording, each open then closed.
  std::vector<const Lifetime*> local = lc->Of(t.H("lvb"));
  ASSERT_EQ(local.size(), 2u);
  for (uint32_t r = 0; r < 2; ++r) {
    EXPECT_EQ(local[r]->role, HandleRole::kLocal);
    EXPECT_EQ(local[r]->recording, r + 1);
    EXPECT_EQ(local[r]->ic_handle, t.H("vb"));
    EXPECT_EQ(local[r]->context, t.H("dc1"));
    ASSERT_EQ(local[r]->intervals.size(), 2u);
    EXPECT_EQ(local[r]->intervals[0].state, State::kOpen);
    EXPECT_EQ(local[r]->intervals[1].state, State::kClosedLocal);
    EXPECT_EQ(local[r]->intervals[0].to_seq, local[r]->intervals[1].from_seq);
  }
}

TEST_F(LifecycleTest, ReusedHandleValueStartsANewLifetime) {
  Device();
  Dc("dc1");
  SmallList("dc1", "cl1");
  DestroyCl("cl1");
  SmallList("dc1", "cl1");
  absl::StatusOr<Lifecycle> lc = AnalyzeLifecycle(t.events(), t.handles());
  ASSERT_TRUE(lc.ok());
  std::vector<const Lifetime*> of = lc->Of(t.H("cl1"));
  ASSERT_EQ(of.size(), 2u);
  EXPECT_NE(of[0]->lifetime, of[1]->lifetime);
  EXPECT_EQ(of[0]->intervals.back().state, State::kDestroyed);
  EXPECT_EQ(of[1]->intervals.back().state, State::kValid);
}

}  // namespace
}  // namespace cltrace::check::testing
