// Unit tests of the recorder's building blocks: the per-thread ring and its back-pressure, the
// lock-free handle map and the derived timebase.
#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "recorder/internal/handle_map.h"
#include "recorder/internal/ring.h"
#include "recorder/internal/ring_wait.h"
#include "recorder/internal/timebase.h"

namespace cltrace::recorder::internal {
namespace {

// ---- SpscRing ----

TEST(SpscRingTest, RecordThatDoesNotFitBeforeTheEndIsPrecededByPadding) {
  SpscRing ring(1024);
  ASSERT_EQ(ring.capacity(), 1024u);
  uint64_t* w = ring.Reserve(1000);
  ASSERT_NE(w, nullptr);
  w[0] = MakeHeader(7, 1000, 0);
  ring.Commit(1000);
  ring.Release(ring.Head());  // consumer took it
  w = ring.Reserve(100);      // 24 words left before the end: padding, then index 0
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w, ring.At(0));
  w[0] = MakeHeader(8, 100, 0);
  ring.Commit(100);
  const uint64_t* pad = ring.At(1000);
  EXPECT_EQ(HeaderCall(pad[0]), 0u);
  EXPECT_EQ(HeaderWords(pad[0]), 24u);
  const uint64_t* rec = ring.At(1024);
  EXPECT_EQ(HeaderCall(rec[0]), 8u);
  EXPECT_EQ(ring.Head(), 1124u);
}

TEST(SpscRingTest, FullRingRefusesUntilTheConsumerReleases) {
  SpscRing ring(1024);
  ASSERT_NE(ring.Reserve(512), nullptr);
  ring.Commit(512);
  ASSERT_NE(ring.Reserve(512), nullptr);
  ring.Commit(512);
  EXPECT_EQ(ring.Reserve(1), nullptr);
  ring.Release(512);
  EXPECT_NE(ring.Reserve(1), nullptr);
}

TEST(SpscRingTest, ProducerAndConsumerOnTwoThreadsSeeEveryRecordInOrder) {
  SpscRing ring(1024);
  constexpr uint64_t kRecords = 200000;
  std::thread producer([&] {
    for (uint64_t i = 1; i <= kRecords; ++i) {
      const uint64_t words = 2 + i % 7;
      uint64_t* w;
      while ((w = ring.Reserve(words)) == nullptr) std::this_thread::yield();
      w[0] = MakeHeader(1, words, 0);
      w[1] = i;
      ring.Commit(words);
    }
  });
  uint64_t expected = 1;
  while (expected <= kRecords) {
    uint64_t pos = ring.tail();
    const uint64_t head = ring.Head();
    while (pos != head) {
      const uint64_t* rec = ring.At(pos);
      if (HeaderCall(rec[0]) != 0) {
        ASSERT_EQ(rec[1], expected);
        ASSERT_EQ(HeaderWords(rec[0]), 2 + expected % 7);
        ++expected;
      }
      pos += HeaderWords(rec[0]);
    }
    ring.Release(pos);
  }
  producer.join();
}

// ---- HandleMap ----

// ---- Back-pressure (ring_wait.h) ----

// Fills a 1024-word ring with two committed 512-word records.
void Fill(SpscRing* ring) {
  for (int i = 0; i < 2; ++i) {
    uint64_t* w = ring->Reserve(512);
    ASSERT_NE(w, nullptr);
    w[0] = MakeHeader(7, 512, 0);
    ring->Commit(512);
  }
}

TEST(RingWaitTest, RoomAtOnceIsNoWait) {
  SpscRing ring(1024);
  int64_t wait_start = 0;
  EXPECT_NE(RingReserveWaiting(
                &ring, 8, nullptr, [] { return true; }, &wait_start),
            nullptr);
  EXPECT_EQ(wait_start, 0);
  EXPECT_EQ(ring.control()->waits.load(), 0u);
}

TEST(RingWaitTest, AFullRingWithoutADrainerGivesNoRoomAndCountsOneWait) {
  SpscRing ring(1024);
  Fill(&ring);
  int64_t wait_start = 0;
  EXPECT_EQ(RingReserveWaiting(
                &ring, 8, nullptr, [] { return false; }, &wait_start),
            nullptr);
  EXPECT_NE(wait_start, 0);
  EXPECT_EQ(ring.control()->waits.load(), 1u);
  // The same record waiting again is the same wait.
  EXPECT_EQ(RingReserveWaiting(
                &ring, 8, nullptr, [] { return false; }, &wait_start),
            nullptr);
  EXPECT_EQ(ring.control()->waits.load(), 1u);
}

TEST(RingWaitTest, AProducerWaitingOnAFullRingGetsTheRoomTheDrainerReleases) {
  SpscRing ring(1024);
  Fill(&ring);
  std::atomic<uint64_t*> got{nullptr};
  std::thread producer([&] {
    int64_t wait_start = 0;
    got.store(RingReserveWaiting(
        &ring, 8, nullptr, [] { return true; }, &wait_start));
  });
  // Once it sleeps (or is about to) on the slot's futex, the drainer takes the first record.
  while (ring.control()->space_waiter.load() == 0) std::this_thread::yield();
  RingRelease(&ring, 512);
  producer.join();
  EXPECT_EQ(got.load(), ring.At(0));
  EXPECT_EQ(ring.control()->waits.load(), 1u);
}

TEST(HandleMapTest, FindsInsertedReplacesAndForgets) {
  HandleMap<int> map;
  int a = 1, b = 2;
  map.Insert(reinterpret_cast<void*>(0x1000), &a);
  EXPECT_EQ(map.Find(reinterpret_cast<void*>(0x1000)), &a);
  EXPECT_EQ(map.Find(reinterpret_cast<void*>(0x2000)), nullptr);
  map.Insert(reinterpret_cast<void*>(0x1000), &b);  // handle memory reused
  EXPECT_EQ(map.Find(reinterpret_cast<void*>(0x1000)), &b);
  map.Erase(reinterpret_cast<void*>(0x1000));
  EXPECT_EQ(map.Find(reinterpret_cast<void*>(0x1000)), nullptr);
  EXPECT_EQ(map.size(), 0u);
}

TEST(HandleMapTest, GrowsAndKeepsEveryLiveKeyThroughChurn) {
  HandleMap<int> map;
  std::vector<int> values(5000);
  for (size_t i = 0; i < values.size(); ++i) map.Insert(0x10000 + 16 * i, &values[i]);
  for (size_t i = 0; i < values.size(); i += 2) map.Erase(0x10000 + 16 * i);
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(map.Find(0x10000 + 16 * i), i % 2 ? &values[i] : nullptr) << i;
  }
  EXPECT_EQ(map.size(), values.size() / 2);
}

TEST(HandleMapTest, ReadersNeverMissALiveKeyWhileAnotherThreadInsertsAndErases) {
  HandleMap<int> map;
  int stable = 7;
  map.Insert(0x4000, &stable);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    std::vector<int> v(20000);
    for (size_t i = 0; i < v.size(); ++i) {
      map.Insert(0x100000 + 16 * i, &v[i]);
      if (i >= 8) map.Erase(0x100000 + 16 * (i - 8));
    }
    stop.store(true);
  });
  uint64_t lookups = 0;
  // do/while: on a loaded machine the writer may finish before this thread first runs.
  do {
    ASSERT_EQ(map.Find(0x4000), &stable);
    ++lookups;
  } while (!stop.load());
  writer.join();
  EXPECT_GT(lookups, 0u);
}

// ---- Timebase ----

TEST(TimebaseTest, PositionGetsTheStartOfItsBracket) {
  Timebase tb;
  tb.Add(10, 1000);
  tb.Add(30, 2000);
  EXPECT_EQ(tb.At(1), 0);
  EXPECT_EQ(tb.At(10), 0);
  EXPECT_EQ(tb.At(11), 1000);
  EXPECT_EQ(tb.At(30), 1000);
  EXPECT_EQ(tb.At(31), 2000) << "beyond the last sample: its time";
}

TEST(TimebaseTest, IdlePollsMoveTheNextBracketsStartButNotThePreviousEnd) {
  Timebase tb;
  tb.Add(10, 1000);
  tb.Add(10, 5000);  // nothing happened until 5000
  tb.Add(10, 9000);
  tb.Add(20, 10000);
  EXPECT_EQ(tb.At(5), 0);
  EXPECT_EQ(tb.At(11), 9000);
  EXPECT_EQ(tb.size(), 4u) << "one sample kept per idle stretch";
}

TEST(TimebaseTest, ThinningKeepsMonotonicBoundsWithinMemory) {
  Timebase tb(/*max_samples=*/64);
  for (uint64_t i = 1; i <= 1000; ++i) tb.Add(i * 10, static_cast<int64_t>(i) * 100);
  EXPECT_LE(tb.size(), 65u);
  int64_t prev = 0;
  for (uint64_t seq = 1; seq <= 10000; ++seq) {
    const int64_t t = tb.At(seq);
    ASSERT_GE(t, prev);
    // The true entry time of seq is in ((seq-1)/10 * 100, ...]: the bound never exceeds it.
    ASSERT_LE(t, static_cast<int64_t>((seq - 1) / 10) * 100);
    prev = t;
  }
  EXPECT_EQ(tb.At(9995), 99900) << "recent samples stay exact";
}

}  // namespace
}  // namespace cltrace::recorder::internal
