#include "refdriver/internal/config.h"

#include "gtest/gtest.h"

namespace cltrace::refdriver {
namespace {

TEST(ConfigTest, EmptyTextIsTheCleanConfiguration) {
  absl::StatusOr<Config> c = ParseConfig("");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->bugs.empty());
  EXPECT_EQ(c->removed_at_call, 0u);
  EXPECT_FALSE(c->nested_execute_ic);
  EXPECT_FALSE(c->aliases_with_resource);
}

TEST(ConfigTest, BugsFaultsAndSettings) {
  absl::StatusOr<Config> c = ParseConfig(
      " bug=R22,R36 ; oom:RecycleCreateCommandList=3,5; removed=40;nested_execute_handle=ic;"
      "violations=/tmp/v.txt");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->Has(Bug::kR22));
  EXPECT_TRUE(c->Has(Bug::kR36));
  EXPECT_FALSE(c->Has(Bug::kR5));
  EXPECT_TRUE(c->FailsAt(FaultSite::kRecycleCreateCommandList, 3));
  EXPECT_TRUE(c->FailsAt(FaultSite::kRecycleCreateCommandList, 5));
  EXPECT_FALSE(c->FailsAt(FaultSite::kRecycleCreateCommandList, 4));
  EXPECT_FALSE(c->FailsAt(FaultSite::kCreateCommandList, 3));
  EXPECT_EQ(c->removed_at_call, 40u);
  EXPECT_TRUE(c->nested_execute_ic);
  EXPECT_EQ(c->violations_path, "/tmp/v.txt");
}

TEST(ConfigTest, UnknownBugRuleIsRejected) {
  absl::StatusOr<Config> c = ParseConfig("bug=R99");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("R99"), absl::string_view::npos);
}

TEST(ConfigTest, UnknownFaultSiteIsRejected) {
  EXPECT_EQ(ParseConfig("oom:Flush=1").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConfigTest, CallNumbersStartAtOne) {
  EXPECT_EQ(ParseConfig("oom:CreateCommandList=0").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseConfig("removed=x").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConfigTest, UnknownItemIsRejected) {
  EXPECT_EQ(ParseConfig("verbose=1").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConfigTest, AliasesAreReleasedOrFreedWithTheirResource) {
  EXPECT_FALSE(ParseConfig("aliases=released")->aliases_with_resource);
  EXPECT_TRUE(ParseConfig("aliases=with_resource")->aliases_with_resource);
  EXPECT_EQ(ParseConfig("aliases=never").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ConfigTest, NestedHandleNeedsLocalOrIc) {
  EXPECT_EQ(ParseConfig("nested_execute_handle=both").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ConfigTest, EveryBugHasItsRule) {
  for (Bug b : AllBugs()) {
    Bug back;
    ASSERT_TRUE(BugFromRule(BugRule(b), &back));
    EXPECT_EQ(back, b);
  }
}

}  // namespace
}  // namespace cltrace::refdriver
