#include "cli/lifecycle_output.h"

#include <sstream>
#include <string>
#include <vector>

#include "check/testing/check_fixture.h"
#include "cli/args.h"
#include "cli/verb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::cli {
namespace {

using ::testing::HasSubstr;

class LifecycleOutputTest : public check::testing::CheckTest {};

// The parser `cltrace lifecycle` runs (verb_lifecycle.cc).
absl::StatusOr<ParsedArgs> ParseLifecycleArgs(const std::vector<std::string>& args) {
  return ParseArgs(args, LifecycleArgSpec("usage: cltrace lifecycle"));
}

TEST_F(LifecycleOutputTest, RunLifecyclePrintsTimelineForOneHandle) {
  Device();
  Dc("dc1");
  SmallList("dc1", "cl1");
  RecycleDestroy("cl1");
  LifecycleOptions options;
  options.handle = "cl1";
  std::ostringstream out, err;
  EXPECT_EQ(RunLifecycle(options, t.events(), t.handles(), out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("command list cl1 #1 (owner DC dc1)"));
  EXPECT_THAT(out.str(), HasSubstr("Valid"));
  EXPECT_THAT(out.str(), HasSubstr("RecycleDestroyed"));
  EXPECT_THAT(out.str(), HasSubstr("by RecycleDestroyCommandList"));
  EXPECT_THAT(out.str(), ::testing::Not(HasSubstr("deferred context dc1")));
}

TEST_F(LifecycleOutputTest, RunLifecycleUnknownHandleIsBadInput) {
  Device();
  LifecycleOptions options;
  options.handle = "nope";
  std::ostringstream out, err;
  EXPECT_EQ(RunLifecycle(options, t.events(), t.handles(), out, err), kExitBadInput);
  EXPECT_THAT(err.str(), HasSubstr("no handle \"nope\""));
}

TEST(LifecycleArgsTest, Parses) {
  auto cmd = ParseLifecycleArgs({"t.jsonl", "--handle", "cl1"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(cmd->positional[0], "t.jsonl");
  EXPECT_EQ(cmd->Option("--handle"), "cl1");
  EXPECT_EQ(ParseLifecycleArgs({"t.jsonl", "--handle"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseLifecycleArgs({}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseLifecycleArgs({"a", "b"}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cltrace::cli
