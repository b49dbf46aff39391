// ThreadTracker on its own: per-thread first calls and R35 obligations (the rule tests in
// checker_thread_test.cc and checker_dc_test.cc judge through the whole checker).
#include "check/internal/thread_tracker.h"

#include "gtest/gtest.h"

namespace cltrace::check::internal {
namespace {

PendingCalc Obligation(uint32_t tid, uint64_t create_seq, uint64_t after) {
  PendingCalc p;
  p.tid = tid;
  p.create_seq = create_seq;
  p.after = after;
  return p;
}

TEST(ThreadTrackerTest, FirstTopLevelCallPerThread) {
  ThreadTracker threads;
  EXPECT_TRUE(threads.OnTopLevelCall(1));
  EXPECT_FALSE(threads.OnTopLevelCall(1));
  EXPECT_TRUE(threads.OnTopLevelCall(2));
  EXPECT_FALSE(threads.OnTopLevelCall(2));
}

TEST(ThreadTrackerTest, TakeAnswersOnlyFromTheCreatorsExitOnAndOnlyOnce) {
  ThreadTracker threads;
  threads.Expect(Obligation(1, 10, 13));
  EXPECT_FALSE(threads.Take(1, 12).has_value());  // began before the creation returned
  EXPECT_NE(threads.Pending(1), nullptr);
  EXPECT_FALSE(threads.Take(2, 14).has_value());  // another thread owes nothing
  std::optional<PendingCalc> p = threads.Take(1, 14);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->create_seq, 10u);
  EXPECT_EQ(threads.Pending(1), nullptr);
  EXPECT_FALSE(threads.Take(1, 15).has_value());
}

TEST(ThreadTrackerTest, ExpectReplacesTheThreadsEarlierObligation) {
  ThreadTracker threads;
  threads.Expect(Obligation(1, 10, 11));
  threads.Expect(Obligation(2, 20, 21));
  threads.Expect(Obligation(1, 30, 31));
  ASSERT_NE(threads.Pending(1), nullptr);
  EXPECT_EQ(threads.Pending(1)->create_seq, 30u);
  ASSERT_NE(threads.Pending(2), nullptr);
  EXPECT_EQ(threads.Pending(2)->create_seq, 20u);
}

TEST(ThreadTrackerTest, CancelDropsOnlyTheFailedCreationsObligation) {
  ThreadTracker threads;
  threads.Expect(Obligation(1, 10, 11));
  threads.Cancel(1, 9);  // an older creation: the obligation is not its
  ASSERT_NE(threads.Pending(1), nullptr);
  threads.Cancel(2, 10);  // another thread
  ASSERT_NE(threads.Pending(1), nullptr);
  threads.Cancel(1, 10);
  EXPECT_EQ(threads.Pending(1), nullptr);
}

TEST(ThreadTrackerTest, ObligationAfterACreationStartsAtItsExit) {
  format::Event e;
  e.seq = 10;
  e.end = 13;
  e.tid = 4;
  e.call = format::CallId::kInvalid;
  PendingCalc p = PendingCalc::After(e, 77);
  EXPECT_EQ(p.tid, 4u);
  EXPECT_EQ(p.create_seq, 10u);
  EXPECT_EQ(p.after, 13u);
  EXPECT_EQ(p.handle, 77u);
  EXPECT_TRUE(p.expected);
  e.end = 0;  // never returned: no later call answers it
  EXPECT_EQ(PendingCalc::After(e, 77).after, ~uint64_t{0});
}

}  // namespace
}  // namespace cltrace::check::internal
