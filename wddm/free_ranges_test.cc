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

}  // namespace
}  // namespace cltrace::gpu
