#include "wddm/free_ranges.h"

#include <cstdint>
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(FreeRangesTest, ReleasedRangeMergesWithTheRangesItTouches) {
  std::map<uint64_t, uint64_t> free = {{0, 16}, {32, 16}};
  ReleaseRange(free, 16, 16);  // touches both neighbours
  EXPECT_THAT(free, ElementsAre(Pair(0, 48)));
}

TEST(FreeRangesTest, ReleasedRangeApartFromTheOthersStaysApart) {
  std::map<uint32_t, uint32_t> free = {{0, 16}, {64, 16}};
  ReleaseRange(free, 32, 8);
  EXPECT_THAT(free, ElementsAre(Pair(0, 16), Pair(32, 8), Pair(64, 16)));
  ReleaseRange(free, 40, 24);  // closes the gap to 64, not the one to 16
  EXPECT_THAT(free, ElementsAre(Pair(0, 16), Pair(32, 48)));
}

TEST(FreeRangesTest, TakenRangeSplitsItsFreeRangeAndAReleaseRestoresIt) {
  std::map<uint64_t, uint64_t> free = {{0, 64}, {128, 16}};
  EXPECT_TRUE(TakeRange(free, 16, 8));
  EXPECT_THAT(free, ElementsAre(Pair(0, 16), Pair(24, 40), Pair(128, 16)));
  EXPECT_TRUE(TakeRange(free, 128, 16));  // a whole range
  EXPECT_THAT(free, ElementsAre(Pair(0, 16), Pair(24, 40)));
  ReleaseRange(free, 16, 8);
  ReleaseRange(free, 128, 16);
  EXPECT_THAT(free, ElementsAre(Pair(0, 64), Pair(128, 16)));
}

TEST(FreeRangesTest, TakingARangeThatIsNotWhollyFreeChangesNothing) {
  std::map<uint64_t, uint64_t> free = {{16, 16}, {64, 16}};
  EXPECT_FALSE(TakeRange(free, 0, 8));    // before every free range
  EXPECT_FALSE(TakeRange(free, 24, 16));  // runs past the end of its range
  EXPECT_FALSE(TakeRange(free, 40, 8));   // in the gap
  EXPECT_THAT(free, ElementsAre(Pair(16, 16), Pair(64, 16)));
}

}  // namespace
}  // namespace cltrace::gpu
