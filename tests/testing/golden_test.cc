// tests/testing/golden.h: only CLTRACE_UPDATE_GOLDEN=1 rewrites a golden file; every other
// value (unset, empty, "0", "true") compares, so a mismatch still fails.
#include "tests/testing/golden.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/command_test.h"

namespace cltrace::testing {
namespace {

using ::testing::HasSubstr;

class GoldenHelperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* v = std::getenv(kUpdateGoldenEnv)) saved_ = v;
    path_ = ::testing::TempDir() + "/golden_helper_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt";
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << "one\ntwo\nthree\n";
  }
  void TearDown() override {
    if (saved_) {
      setenv(kUpdateGoldenEnv, saved_->c_str(), 1);
    } else {
      unsetenv(kUpdateGoldenEnv);
    }
    unlink(path_.c_str());
  }
  static void SetUpdate(const char* value) {
    if (value == nullptr) {
      unsetenv(kUpdateGoldenEnv);
    } else {
      setenv(kUpdateGoldenEnv, value, 1);
    }
  }

  std::optional<std::string> saved_;
  std::string path_;
};

TEST_F(GoldenHelperTest, EqualTextMatches) {
  SetUpdate(nullptr);
  EXPECT_TRUE(MatchesGolden(path_, "one\ntwo\nthree\n"));
}

TEST_F(GoldenHelperTest, DifferenceFailsNamingTheFirstDifferingLine) {
  SetUpdate(nullptr);
  ::testing::AssertionResult r = MatchesGolden(path_, "one\nTWO\nthree\n");
  EXPECT_FALSE(r);
  EXPECT_THAT(r.message(), HasSubstr(path_ + ":2 differs"));
  EXPECT_THAT(r.message(), HasSubstr("golden: two"));
  EXPECT_THAT(r.message(), HasSubstr("actual: TWO"));
  EXPECT_EQ(ReadFile(path_), "one\ntwo\nthree\n");
}

TEST_F(GoldenHelperTest, MissingFinalNewlineIsADifference) {
  SetUpdate(nullptr);
  ::testing::AssertionResult r = MatchesGolden(path_, "one\ntwo\nthree");
  EXPECT_FALSE(r);
  EXPECT_THAT(r.message(), HasSubstr("differs only in its final newline"));
}

TEST_F(GoldenHelperTest, MissingTrailingLineIsADifference) {
  SetUpdate(nullptr);
  ::testing::AssertionResult r = MatchesGolden(path_, "one\ntwo\n");
  EXPECT_FALSE(r);
  EXPECT_THAT(r.message(), HasSubstr(":3 differs"));
  EXPECT_THAT(r.message(), HasSubstr("actual: <end of actual>"));
}

// The defect this helper replaces: a helper that rewrote on any value made
// CLTRACE_UPDATE_GOLDEN=0 a test that cannot fail.
TEST_F(GoldenHelperTest, AnyValueOtherThanOneCompares) {
  for (const char* value : {"0", "", "true", "yes", "1 ", "01"}) {
    SCOPED_TRACE(std::string("CLTRACE_UPDATE_GOLDEN='") + value + "'");
    SetUpdate(value);
    EXPECT_FALSE(UpdateGoldenRequested());
    ::testing::AssertionResult r = MatchesGolden(path_, "changed\n");
    EXPECT_FALSE(r);
    EXPECT_THAT(r.message(), HasSubstr("only 1 rewrites"));
    EXPECT_EQ(ReadFile(path_), "one\ntwo\nthree\n") << "the golden was rewritten";
  }
}

TEST_F(GoldenHelperTest, OneRewritesTheFile) {
  SetUpdate("1");
  EXPECT_TRUE(UpdateGoldenRequested());
  EXPECT_TRUE(MatchesGolden(path_, "new\ntext\n"));
  EXPECT_EQ(ReadFile(path_), "new\ntext\n");
  SetUpdate(nullptr);
  EXPECT_TRUE(MatchesGolden(path_, "new\ntext\n"));
}

TEST_F(GoldenHelperTest, MissingGoldenFailsUnlessUpdating) {
  const std::string missing = path_ + ".missing";
  SetUpdate("0");
  ::testing::AssertionResult r = MatchesGolden(missing, "x\n");
  EXPECT_FALSE(r);
  EXPECT_THAT(r.message(), HasSubstr("missing golden " + missing));
  SetUpdate("1");
  EXPECT_TRUE(MatchesGolden(missing, "x\n"));
  EXPECT_EQ(ReadFile(missing), "x\n");
  unlink(missing.c_str());
}

TEST_F(GoldenHelperTest, UnwritableGoldenFailsWhenUpdating) {
  SetUpdate("1");
  EXPECT_FALSE(MatchesGolden("/nonexistent-dir/golden.txt", "x\n"));
}

}  // namespace
}  // namespace cltrace::testing
