#include "check/stats.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "check/testing/check_fixture.h"
#include "format/load_trace.h"

namespace cltrace::check::testing {
namespace {

class StatsTest : public DcTest {};

TEST_F(StatsTest, RecycleHitRateAndListsPerFinish) {
  SmallList("dc1", "cl1");  // created
  Execute("cl1");
  RecycleDestroy("cl1");
  Draw("dc1");
  FinishRecycled("dc1", "cl1", {"cl1"});  // recycled, one drained
  RecycleDc("dc1");
  Execute("cl1");
  Execute("cl1");
  RecycleDestroy("cl1");
  SmallList("dc1", "cl2");  // nothing drained, new handle
  Draw("dc1");
  t.On(2).Call("AbandonCommandList", {{"hDevice", "dc1"}});
  RecycleDc("dc1");
  absl::StatusOr<TraceStats> s = ComputeStats(t.events(), t.handles(), 4);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->creates, 2u);
  EXPECT_EQ(s->recycle_creates, 1u);
  EXPECT_DOUBLE_EQ(s->recycle_hit_rate(), 1.0 / 3.0);
  EXPECT_EQ(s->finishes, 3u);
  EXPECT_EQ(s->abandons, 1u);
  EXPECT_EQ(s->recycled_per_finish.at(0), 2u);
  EXPECT_EQ(s->recycled_per_finish.at(1), 1u);
  EXPECT_EQ(s->ic_executes, 3u);
  EXPECT_EQ(s->recycle_destroys, 2u);
  ASSERT_EQ(s->alive.size(), 4u);
  EXPECT_EQ(s->alive.back().deferred_contexts, 1u);
  EXPECT_EQ(s->alive.back().command_lists, 2u);  // cl1 RecycleDestroyed, cl2 Valid
  EXPECT_EQ(s->peak.command_lists, 2u);
}

TEST_F(StatsTest, CallbacksPerDdiByTable) {
  CallbackInside(2, "Draw", {{"hDevice", "dc1"}}, "PerformAmortizedProcessingCb",
                 {{"hRuntimeDevice", "rtdc1"}});
  for (int i = 0; i < 2; ++i) {
    t.On(1).Begin("Flush", {{"hDevice", "ic"}});
    t.Call("RenderCb", {{"hDevice", "rtdev"}, {"hContext", "hctx"}});
    t.End();
  }
  absl::StatusOr<TraceStats> s = ComputeStats(t.events(), t.handles());
  ASSERT_TRUE(s.ok());
  ASSERT_GE(s->callbacks.size(), 3u);
  EXPECT_EQ(s->callbacks[0].ddi, "IC::Flush");
  EXPECT_EQ(s->callbacks[0].callback, "RenderCb");
  EXPECT_EQ(s->callbacks[0].count, 2u);
  bool dc_seen = false;
  for (const CallbackCount& c : s->callbacks)
    dc_seen |= c.ddi == "DC::Draw" && c.callback == "PerformAmortizedProcessingCb";
  EXPECT_TRUE(dc_seen);
}

// With no room for the changes of the alive counts (max_deltas 0) the samples come from a
// second pass over the trace: every figure is the same as with them all kept.
TEST(StatsBoundedTest, SamplingInASecondPassGivesTheSameStatsOnTheCorpus) {
  const std::vector<std::string> traces = testing::CorpusTraces();
  ASSERT_GE(traces.size(), 20u) << "run from the source root";
  size_t sampled_something = 0;
  for (const std::string& path : traces) {
    SCOPED_TRACE(path);
    absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(path);
    ASSERT_TRUE(t.ok()) << t.status();
    absl::StatusOr<TraceStats> kept = ComputeStats(t->events, t->handles, 7);
    absl::StatusOr<TraceStats> again = ComputeStats(t->events, t->handles, 7, /*max_deltas=*/0);
    ASSERT_TRUE(kept.ok() && again.ok());
    ASSERT_EQ(again->alive.size(), kept->alive.size());
    for (size_t i = 0; i < kept->alive.size(); ++i) {
      const AliveSample& a = kept->alive[i];
      const AliveSample& b = again->alive[i];
      EXPECT_EQ(
          std::vector<uint64_t>({b.seq, b.command_lists, b.deferred_contexts, b.objects, b.locals}),
          std::vector<uint64_t>({a.seq, a.command_lists, a.deferred_contexts, a.objects, a.locals}))
          << "sample " << i;
      sampled_something += a.objects + a.command_lists;
    }
    EXPECT_EQ(again->peak.command_lists, kept->peak.command_lists);
    EXPECT_EQ(again->peak.seq, kept->peak.seq);
    EXPECT_EQ(again->peak.objects, kept->peak.objects);
    EXPECT_EQ(again->peak.locals, kept->peak.locals);
    EXPECT_EQ(again->peak.deferred_contexts, kept->peak.deferred_contexts);
    EXPECT_EQ(again->callbacks.size(), kept->callbacks.size());
  }
  EXPECT_GT(sampled_something, 0u);
}

}  // namespace
}  // namespace cltrace::check::testing
