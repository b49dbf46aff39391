#include "cli/progress.h"

#include <unistd.h>

#include "gtest/gtest.h"

namespace cltrace::cli {
namespace {

TEST(ProgressTextTest, KnownTotalShowsBarPercentRateAndTimeLeft) {
  EXPECT_EQ(ProgressText("check", 3'500'000, 10'000'000, -1, 1.0),
            "cltrace check [#######.............]  35%  3.5 M / 10.0 M calls  3.5 M calls/s  2 s "
            "left");
}

TEST(ProgressTextTest, UnknownTotalUsesTheOtherMeasureForBarAndTimeLeft) {
  EXPECT_EQ(ProgressText("import", 1'250, 0, 0.5, 125.0),
            "cltrace import [##########..........]  50%  1.2 k calls  10 calls/s  2 min 5 s left");
}

TEST(ProgressTextTest, NothingToPlaceTheBarByShowsCountAndRate) {
  EXPECT_EQ(ProgressText("import", 42, 0, -1, 2.0), "cltrace import 42 calls  21 calls/s");
}

TEST(ProgressTextTest, DoneAndHoursAndBillions) {
  EXPECT_EQ(ProgressText("dump", 2'000'000'000, 2'000'000'000, -1, 7300.0),
            "cltrace dump [####################] 100%  2.0 G / 2.0 G calls  274.0 k calls/s");
  EXPECT_EQ(
      ProgressText("dump", 1'000'000, 10'000'000, -1, 800.0),
      "cltrace dump [##..................]  10%  1.0 M / 10.0 M calls  1.2 k calls/s  2 h 0 min "
      "left");
}

// Progress is drawn only on a terminal: a test's standard error is a file or a pipe.
TEST(ProgressTest, DisabledWhenStandardErrorIsNotATerminalOrWithQuiet) {
  Progress quiet("info", /*quiet=*/true);
  EXPECT_FALSE(quiet.enabled());
  Progress piped("info", /*quiet=*/false);
  EXPECT_EQ(piped.enabled(), isatty(2) == 1);
}

}  // namespace
}  // namespace cltrace::cli
