#include "cli/lifecycle_output.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "check/testing/check_fixture.h"
#include "cli/args.h"
#include "cli/verb.h"
#include "format/load_trace.h"
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

struct CliRun {
  int exit = 0;
  std::string out, err;
};
CliRun Cli(std::vector<std::string> args) {
  args.insert(args.begin(), "cltrace");
  std::ostringstream out, err;
  CliRun r;
  r.exit = RunCli(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// `lifecycle --json` and `--at SEQ` stream (lifetimes as they end; --at only what is alive):
// on every shipped trace they print what the whole-trace analysis prints.
TEST(LifecycleStreamingTest, JsonAndAtMatchTheWholeTraceAnalysisOnTheCorpus) {
  int traces = 0;
  for (const auto& entry : std::filesystem::directory_iterator("corpus/traces")) {
    const std::string path = entry.path().string();
    if (entry.path().extension() != ".cltrace") continue;
    SCOPED_TRACE(path);
    ++traces;
    absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(path);
    ASSERT_TRUE(t.ok()) << t.status();
    absl::StatusOr<check::Lifecycle> lc = check::AnalyzeLifecycle(t->events, t->handles);
    ASSERT_TRUE(lc.ok()) << lc.status();
    std::ostringstream json;
    PrintLifecycleJson(*lc, 0, t->handles, json);
    CliRun streamed = Cli({"lifecycle", path, "--json", "--quiet"});
    EXPECT_EQ(streamed.exit, 0) << streamed.err;
    EXPECT_EQ(streamed.out, json.str());
    const uint64_t last = t->events.empty() ? 1 : t->events.back().seq;
    for (uint64_t at : {uint64_t{1}, uint64_t{40}, last / 3, last / 2, last - 1, last + 5}) {
      if (at == 0) continue;
      SCOPED_TRACE(at);
      std::ostringstream want;
      PrintLiveAt(*lc, at, 0, t->handles, want);
      CliRun got = Cli({"lifecycle", path, "--at", absl::StrCat(at), "--quiet"});
      EXPECT_EQ(got.exit, 0) << got.err;
      EXPECT_EQ(got.out, want.str());
    }
  }
  EXPECT_GT(traces, 20);
}

// With a budget of 2 finished intervals held, the rest of every lifetime waits in the
// temporary file until it is printed: text and --json are byte for byte the whole-trace
// analysis's on every shipped trace, and the verb never held more than the budget.
TEST(LifecycleStreamingTest, SpilledIntervalsPrintTheSameBytesOnTheCorpus) {
  LifecycleSpillCounters& spill = LifecycleSpillForTesting();
  const size_t budget = spill.interval_budget;
  spill.interval_budget = 2;
  int traces = 0;
  uint64_t spilled = 0;
  for (const auto& entry : std::filesystem::directory_iterator("corpus/traces")) {
    const std::string path = entry.path().string();
    if (entry.path().extension() != ".cltrace") continue;
    SCOPED_TRACE(path);
    ++traces;
    absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(path);
    ASSERT_TRUE(t.ok()) << t.status();
    absl::StatusOr<check::Lifecycle> lc = check::AnalyzeLifecycle(t->events, t->handles);
    ASSERT_TRUE(lc.ok()) << lc.status();
    std::ostringstream text, json;
    PrintLifecycle(*lc, 0, t->handles, text);
    PrintLifecycleJson(*lc, 0, t->handles, json);
    for (bool as_json : {false, true}) {
      SCOPED_TRACE(as_json);
      spill.most_intervals_held = spill.intervals_spilled = 99;
      CliRun run = as_json ? Cli({"lifecycle", path, "--json", "--quiet"})
                           : Cli({"lifecycle", path, "--quiet"});
      EXPECT_EQ(run.exit, 0) << run.err;
      EXPECT_EQ(run.out, as_json ? json.str() : text.str());
      EXPECT_LE(spill.most_intervals_held, 2u);
      spilled += spill.intervals_spilled;
    }
  }
  spill.interval_budget = budget;
  EXPECT_GT(traces, 20);
  EXPECT_GT(spilled, 1000u);  // not vacuous: intervals did go through the file
}

// --at stops reading after SEQ: a trace damaged after it still answers; reading it all fails.
TEST(LifecycleStreamingTest, AtReadsOnlyUpToSeq) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "lifecycle_at_damaged.jsonl").string();
  {
    std::ifstream in("corpus/jsonl/cl_recycle.jsonl");
    std::ofstream out(path);
    out << in.rdbuf() << "this line is not JSON\n";
  }
  CliRun all = Cli({"lifecycle", path, "--json", "--quiet"});
  EXPECT_EQ(all.exit, kExitBadInput);
  CliRun at = Cli({"lifecycle", path, "--at", "20", "--quiet"});
  EXPECT_EQ(at.exit, kExitOk) << at.err;
  EXPECT_THAT(at.out, HasSubstr("handles alive at seq 20"));
  std::filesystem::remove(path);
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
