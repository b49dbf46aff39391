#include "wddm/scheduler.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cltrace::gpu {
namespace {

TEST(SchedulerTest, RunsInDueTimeOrder) {
  Scheduler s;
  std::vector<int> order;
  s.At(30, [&] { order.push_back(3); });
  s.At(10, [&] { order.push_back(1); });
  s.At(20, [&] { order.push_back(2); });
  EXPECT_EQ(s.RunUntilIdle(), 3u);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(s.now(), 30u);
}

TEST(SchedulerTest, SameTimeRunsInSchedulingOrder) {
  Scheduler s;
  std::string order;
  for (char c : std::string("abcdef")) s.At(5, [&order, c] { order.push_back(c); });
  s.RunUntilIdle();
  EXPECT_EQ(order, "abcdef");
}

TEST(SchedulerTest, PastIsClampedToNow) {
  Scheduler s;
  s.Advance(100);
  VirtualTime ran_at = 0;
  s.At(5, [&] { ran_at = s.now(); });
  s.RunUntilIdle();
  EXPECT_EQ(ran_at, 100u);
}

TEST(SchedulerTest, EventsScheduledByEventsRunInOrder) {
  Scheduler s;
  std::vector<VirtualTime> times;
  s.After(10, [&] {
    times.push_back(s.now());
    s.After(5, [&] { times.push_back(s.now()); });
  });
  s.After(12, [&] { times.push_back(s.now()); });
  s.RunUntilIdle();
  EXPECT_EQ(times, (std::vector<VirtualTime>{10, 12, 15}));
}

TEST(SchedulerTest, RunUntilStopsAtDeadlineAndAdvancesClock) {
  Scheduler s;
  int ran = 0;
  s.At(10, [&] { ++ran; });
  s.At(50, [&] { ++ran; });
  EXPECT_EQ(s.RunUntil(20), 1u);
  EXPECT_EQ(s.now(), 20u);
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(s.pending(), 1u);
}

TEST(SchedulerTest, CancelRemovesPendingEventOnly) {
  Scheduler s;
  int ran = 0;
  auto id = s.At(10, [&] { ++ran; });
  EXPECT_TRUE(s.Cancel(id));
  EXPECT_FALSE(s.Cancel(id));
  s.RunUntilIdle();
  EXPECT_EQ(ran, 0);
}

TEST(SchedulerTest, RunUntilConditionStopsEarly) {
  Scheduler s;
  int ran = 0;
  for (int i = 1; i <= 5; ++i) s.At(i, [&] { ++ran; });
  EXPECT_TRUE(s.RunUntilCondition([&] { return ran == 2; }));
  EXPECT_EQ(s.now(), 2u);
  EXPECT_FALSE(s.RunUntilCondition([&] { return ran == 99; }));
  EXPECT_EQ(ran, 5);
}

}  // namespace
}  // namespace cltrace::gpu
