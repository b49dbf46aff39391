#include "check/lifecycle.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "check/testing/check_fixture.h"
#include "ddi/catalog.h"
#include "format/load_trace.h"
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

// ddi-spec §3.3: a closed local handle's memory is back with the runtime; its Closed
// interval ends where the runtime hands that memory out again (here: the next recording
// re-opens the same value), not at the end of the trace (issue #17 item 7).
TEST_F(LifecycleTest, ClosedLocalEndsWhereItsMemoryIsRecycled) {
  Device();
  Resource("vb");
  Dc("dc1");
  std::vector<uint64_t> opened;
  for (const char* cl : {"cl1", "cl2"}) {
    Open("dc1", "lvb", "vb");
    opened.push_back(t.events().back().seq);
    Draw("dc1");
    FinishNew("dc1", cl);
    Close("dc1", "lvb");
    RecycleDc("dc1");
  }
  absl::StatusOr<Lifecycle> lc = AnalyzeLifecycle(t.events(), t.handles());
  ASSERT_TRUE(lc.ok());
  EXPECT_TRUE(lc->check.violations.empty());
  std::vector<const Lifetime*> local = lc->Of(t.H("lvb"));
  ASSERT_EQ(local.size(), 2u);
  ASSERT_EQ(local[0]->intervals.size(), 2u);
  EXPECT_EQ(local[0]->intervals[1].state, State::kClosedLocal);
  EXPECT_EQ(local[0]->intervals[1].to_seq, opened[1]);
  EXPECT_EQ(local[0]->At(opened[1]), nullptr);
  // The second is closed while its DC lives on to the end: Closed to the end.
  ASSERT_EQ(local[1]->intervals.size(), 2u);
  EXPECT_EQ(local[1]->intervals[1].state, State::kClosedLocal);
  EXPECT_EQ(local[1]->intervals[1].to_seq, 0u);
}

// ... or where its deferred context is destroyed.
TEST_F(LifecycleTest, ClosedLocalEndsWhereItsDeferredContextIsDestroyed) {
  Device();
  Resource("vb");
  Resource("ib");
  Dc("dc1");
  Open("dc1", "lvb", "vb");
  Draw("dc1");
  FinishNew("dc1", "cl1");
  Close("dc1", "lvb");
  const uint64_t closed = t.events().back().seq;
  RecycleDc("dc1");
  Open("dc1", "lib", "ib");  // open when the DC goes: closed by the teardown, then over
  Draw("dc1");
  t.On(kDcThread).Call("AbandonCommandList", {{"hDevice", "dc1"}});
  Close("dc1", "lib");
  t.On(kDcThread).Call("DestroyDevice", {{"hDevice", "dc1"}});
  const uint64_t destroyed = t.events().back().seq;
  Draw("ic");

  absl::StatusOr<Lifecycle> lc = AnalyzeLifecycle(t.events(), t.handles());
  ASSERT_TRUE(lc.ok());
  EXPECT_TRUE(lc->check.violations.empty());
  for (const char* h : {"lvb", "lib"}) {
    SCOPED_TRACE(h);
    std::vector<const Lifetime*> local = lc->Of(t.H(h));
    ASSERT_EQ(local.size(), 1u);
    ASSERT_EQ(local[0]->intervals.size(), 2u);
    EXPECT_EQ(local[0]->intervals[1].state, State::kClosedLocal);
    EXPECT_EQ(local[0]->intervals[1].to_seq, destroyed);
  }
  EXPECT_EQ(lc->Of(t.H("lvb"))[0]->intervals[1].from_seq, closed);
  EXPECT_THAT(FormatLifetime(*lc->Of(t.H("lvb"))[0], t.handles()),
              ::testing::HasSubstr(absl::StrCat("[", closed, ", ", destroyed, ")")));
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

// `t` repeated `reps` times with shifted positions and the same handle values every time.
std::vector<format::Event> RepeatedEvents(const format::LoadedTrace& t, int reps) {
  uint64_t span = 0;
  for (const format::Event& e : t.events) span = std::max({span, e.seq, e.end});
  std::vector<format::Event> out;
  for (int rep = 0; rep < reps; ++rep) {
    const uint64_t shift = static_cast<uint64_t>(rep) * span;
    for (format::Event e : t.events) {
      e.seq += shift;
      if (e.end != 0) e.end += shift;
      if (e.parent != 0) e.parent += shift;
      out.push_back(std::move(e));
    }
  }
  return out;
}

// Streamed out as lifetimes end (compacting after every event, so they end as early as they
// can), the lifetimes are those AnalyzeLifecycle keeps to the end, in the same order; with a
// budget of 3 finished intervals held, the rest go through the temporary file and back.
TEST(LifecycleStreamTest, StreamedLifetimesAreTheWholeRunsOnTheCorpus) {
  const std::vector<std::string> traces = testing::CorpusTraces();
  ASSERT_GE(traces.size(), 20u) << "run from the source root";
  size_t streamed_early = 0;
  uint64_t spilled = 0;
  for (const std::string& path : traces) {
    SCOPED_TRACE(path);
    absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(path);
    ASSERT_TRUE(t.ok()) << t.status();
    const std::vector<format::Event> events = RepeatedEvents(*t, 3);
    CheckOptions whole_options;
    whole_options.compact_above = std::numeric_limits<size_t>::max();
    absl::StatusOr<Lifecycle> whole = AnalyzeLifecycle(events, t->handles, whole_options);
    ASSERT_TRUE(whole.ok()) << whole.status();
    std::vector<std::string> expected;
    for (const Lifetime& l : whole->lifetimes)
      if (l.role != HandleRole::kObject) expected.push_back(FormatLifetime(l, t->handles));
    CheckOptions options;
    options.compact_above = 0;
    std::vector<std::string> streamed;
    LifecycleBuilder builder(
        t->handles, nullptr, options,
        [](const TransitionEvent& first) { return first.role != HandleRole::kObject; },
        [&](const StreamedLifetime& s) {
          Lifetime l = s.lifetime();
          l.intervals.clear();
          ASSERT_TRUE(
              s.ForEachInterval([&](const Interval& iv) { l.intervals.push_back(iv); }).ok());
          streamed.push_back(FormatLifetime(l, t->handles));
        },
        /*interval_budget=*/3);
    size_t before_end = 0;
    for (const format::Event& e : events) {
      ASSERT_TRUE(builder.Add(e).ok());
      before_end = streamed.size();
    }
    Lifecycle lc = builder.FinishStream();
    EXPECT_EQ(lc.calls, events.size());
    EXPECT_EQ(streamed, expected);
    if (before_end > 0) ++streamed_early;
    // Finished intervals over the budget waited in the temporary file.
    EXPECT_LE(builder.most_intervals_held(), 3u);
    spilled += builder.intervals_spilled();
  }
  EXPECT_GT(spilled, 0u);
  // Not vacuous: lifetimes did go out before the end of the trace.
  EXPECT_GT(streamed_early, traces.size() / 2);
}

// Over a long stream of short lifetimes the lifetimes held stay bounded.
TEST(LifecycleStreamTest, LifetimesHeldStayBounded) {
  absl::StatusOr<format::LoadedTrace> t = format::LoadTrace("corpus/traces/smallcl.cltrace");
  ASSERT_TRUE(t.ok()) << t.status();
  const std::vector<format::Event> events = RepeatedEvents(*t, 200);
  size_t printed = 0, most = 0, most_first_half = 0;
  LifecycleBuilder builder(
      t->handles, nullptr, CheckOptions{},
      [](const TransitionEvent& first) { return first.role != HandleRole::kObject; },
      [&](const StreamedLifetime&) { ++printed; });
  for (size_t i = 0; i < events.size(); ++i) {
    ASSERT_TRUE(builder.Add(events[i]).ok());
    if (i == events.size() / 2) {
      most_first_half = most;
      most = 0;
    }
    most = std::max(most, builder.lifetimes_held());
  }
  builder.FinishStream();
  EXPECT_GT(printed, 20000u);
  EXPECT_GT(most, 0u);
  EXPECT_LE(most, most_first_half);
  EXPECT_LT(most * 5, printed);  // at most a few compaction intervals (compact_above) held
}

}  // namespace
}  // namespace cltrace::check::testing
