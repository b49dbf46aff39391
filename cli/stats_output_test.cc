#include "cli/stats_output.h"

#include <sstream>
#include <utility>
#include <vector>

#include "check/testing/check_fixture.h"
#include "cli/verb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::cli {
namespace {

using ::testing::HasSubstr;

class StatsOutputTest : public check::testing::CheckTest {};

TEST_F(StatsOutputTest, PrintsRecycleHitRateAndCallbacks) {
  Device();
  Dc("dc1");
  SmallList("dc1", "cl1");  // created
  Execute("cl1");
  for (int i = 0; i < 2; ++i) {
    t.On(1).Begin("Flush", {{"hDevice", "ic"}});
    t.Call("RenderCb", {{"hDevice", "rtdev"}, {"hContext", "hctx"}});
    t.End();
  }
  std::ostringstream out, err;
  EXPECT_EQ(RunStats(t.events(), t.handles(), out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("recycle hit rate"));
  EXPECT_THAT(out.str(), HasSubstr("IC::Flush"));
}

TEST(StatsBadInput, UnsortedEventsAreBadInput) {
  check::testing::TestTrace t;
  t.Call("Draw", {{"hDevice", "ic"}});
  t.Call("Draw", {{"hDevice", "ic"}});
  std::vector<format::Event> events = t.events();
  std::swap(events[0], events[1]);
  std::ostringstream out, err;
  EXPECT_EQ(RunStats(events, t.handles(), out, err), kExitBadInput);
  EXPECT_THAT(err.str(), HasSubstr("sorted by seq"));
}

}  // namespace
}  // namespace cltrace::cli
