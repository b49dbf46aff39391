#include "cli/check_output.h"

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "check/check_trace.h"
#include "check/rules.h"
#include "check/testing/check_fixture.h"
#include "cli/args.h"
#include "cli/verb.h"
#include "format/trace_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::cli {
namespace {

using check::FindRule;
using check::NestedExecuteHandle;
using check::ParseRuleList;
using check::RuleIndex;
using check::testing::CheckTest;

// The parser `cltrace check` runs (verb_check.cc): ParseArgs with the verb's ArgSpec, then
// the option values.
absl::StatusOr<CheckCommandLine> ParseCheckArgs(const std::vector<std::string>& args) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args, CheckArgSpec("usage: cltrace check"));
  if (!parsed.ok()) return parsed.status();
  return CheckCommandLineFrom(*parsed);
}

using ::testing::HasSubstr;

class CheckCommandTest : public CheckTest {
 protected:
  // One R40 (execute after release) and one R44 (destroy twice).
  void TwoViolations() {
    Device();
    Dc("dc1");
    SmallList("dc1", "cl1");
    RecycleDestroy("cl1");
    Execute("cl1");
    DestroyCl("cl1");
    DestroyCl("cl1");
  }
  int RunIt(std::string* out_text, std::string* err_text = nullptr) {
    std::ostringstream out, err;
    int code = RunCheck(options, json, t.events(), t.handles(), out, err);
    *out_text = out.str();
    if (err_text) *err_text = err.str();
    return code;
  }
  bool json = false;  // `cltrace check --json`
};

TEST_F(CheckCommandTest, CleanTraceExitsZero) {
  Device();
  Dc("dc1");
  SmallList("dc1", "cl1");
  std::string out;
  EXPECT_EQ(RunIt(&out), kExitOk);
  EXPECT_THAT(out, HasSubstr("0 violations"));
}

TEST_F(CheckCommandTest, TextLinesStartWithRuleSeqTidFnHandle) {
  TwoViolations();
  std::string out;
  EXPECT_EQ(RunIt(&out), kExitProblems);
  std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << out;
  EXPECT_THAT(lines[0], ::testing::MatchesRegex(
                            "R40 seq=[0-9]+ tid=1 fn=CommandListExecute handle=cl1: .* "
                            "\\[last: Valid@[0-9]+ CreateCommandList, RecycleDestroyed@[0-9]+ "
                            "RecycleDestroyCommandList\\]"));
  EXPECT_THAT(lines[1], ::testing::StartsWith("R44 seq="));
  EXPECT_EQ(lines[2], absl::StrCat("# ", t.events().size(), " calls, 2 violations, 0 warnings"));
}

TEST_F(CheckCommandTest, JsonReport) {
  TwoViolations();
  json = true;
  std::string out;
  EXPECT_EQ(RunIt(&out), kExitProblems);
  EXPECT_THAT(out, ::testing::StartsWith(absl::StrCat("{\"calls\": ", t.events().size(),
                                                      ", \"violations\": [{\"rule\": \"R40\", "
                                                      "\"seq\": ")));
  EXPECT_THAT(out, HasSubstr("\"tid\": 1, \"fn\": \"CommandListExecute\", \"handle\": \"cl1\", "
                             "\"message\": \"CommandListExecute on a command list in state "
                             "RecycleDestroyed"));
  EXPECT_THAT(out, HasSubstr("{\"rule\": \"R44\""));
  EXPECT_THAT(out, HasSubstr("], \"warnings\": []}"));
}

TEST_F(CheckCommandTest, RulesFilter) {
  TwoViolations();
  auto rules = ParseRuleList("R44");
  ASSERT_TRUE(rules.ok());
  options.rules = *rules;
  std::string out;
  EXPECT_EQ(RunIt(&out), kExitProblems);
  EXPECT_THAT(out, ::testing::Not(HasSubstr("R40 ")));
  EXPECT_THAT(out, HasSubstr("R44 "));
  options.rules = *ParseRuleList("R41,R45");
  EXPECT_EQ(RunIt(&out), kExitOk);
}

TEST_F(CheckCommandTest, WarningsAloneExitZero) {
  Device();
  Dc("dc1");
  Draw("dc1");
  t.On(2).Begin("AbandonCommandList", {{"hDevice", "dc1"}});
  t.Call("SetErrorCb", {{"hRuntimeDevice", "rtdc1"}, {"hResult", "E_FAIL"}});
  t.End();
  std::string out;
  EXPECT_EQ(RunIt(&out), kExitOk);
  EXPECT_THAT(out, HasSubstr("R26 seq="));
  EXPECT_THAT(out, HasSubstr(": warning: "));
}

TEST_F(CheckCommandTest, UnsortedEventsExitTwo) {
  Device();
  std::vector<format::Event> events = t.events();
  std::swap(events[0], events[1]);
  std::ostringstream out, err;
  EXPECT_EQ(RunCheck(options, json, events, t.handles(), out, err), kExitBadInput);
  EXPECT_THAT(err.str(), HasSubstr("must be sorted by seq"));
}

TEST(CheckArgsTest, ParsesFlags) {
  auto cmd =
      ParseCheckArgs({"t.cltrace", "--rules", "R40,r45", "--json", "--nested-execute-handle=ic",
                      "--amortized-max-submits=4", "--dc-amortized-max-calls", "9"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->file, "t.cltrace");
  EXPECT_TRUE(cmd->json);
  EXPECT_EQ(cmd->options.nested_execute_handle, NestedExecuteHandle::kIc);
  EXPECT_EQ(cmd->options.heuristics.amortized_max_submits_without, 4u);
  EXPECT_EQ(cmd->options.heuristics.dc_amortized_max_calls, 9u);
  EXPECT_TRUE(cmd->options.rules.test(RuleIndex(*FindRule("R40"))));
  EXPECT_TRUE(cmd->options.rules.test(RuleIndex(*FindRule("R45"))));
  EXPECT_EQ(cmd->options.rules.count(), 2u);
}

TEST(CheckArgsTest, RejectsBadInput) {
  EXPECT_THAT(ParseCheckArgs({"t", "--rules", "R40,R999"}).status().message(),
              HasSubstr("unknown rule \"R999\""));
  EXPECT_EQ(ParseCheckArgs({"t", "--rules"}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseCheckArgs({"t", "--nested-execute-handle=both"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseCheckArgs({"t", "--bogus"}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseCheckArgs({}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseCheckArgs({"a", "b"}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseCheckArgs({"t", "--amortized-max-submits=0"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // The verb reports a bad option value as bad usage.
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"cltrace", "check", "t", "--rules", "R40,R999"}, out, err), kExitBadInput);
  EXPECT_THAT(err.str(), HasSubstr("cltrace check: --rules: unknown rule \"R999\""));
}

TEST(RulesTest, JsonStringEscapes) {
  EXPECT_EQ(JsonString("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
}

// docs/rules.md "Traces with gaps": a finding about a handle whose history crosses a hole is
// withheld and summed up in one GAPS warning; a handle created after the hole is judged.
TEST_F(CheckCommandTest, FindingsAcrossAHoleAreWithheldInOneGapsWarning) {
  Device();
  Dc("dc1");
  SmallList("dc1", "cl1");
  RecycleDestroy("cl1");
  Draw("ic");  // stands for the calls the recording lost
  const uint64_t lost = t.events().back().seq;
  Execute("cl1");  // R40, but cl1's history crosses the hole
  SmallList("dc1", "cl2");
  RecycleDestroy("cl2");
  Execute("cl2");  // R40, judged: cl2 was created after the hole
  std::vector<format::Event> events;
  for (const format::Event& e : t.events()) {
    if (e.seq != lost) events.push_back(e);
  }
  const format::PositionGaps gaps = format::FindPositionGaps(events);
  ASSERT_EQ(gaps.missing, 2u);
  ASSERT_EQ(gaps.first_missing, lost);
  options.gaps = &gaps;
  std::ostringstream out, err;
  EXPECT_EQ(RunCheck(options, json, events, t.handles(), out, err), kExitProblems) << err.str();
  std::vector<std::string> lines = absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << out.str();
  EXPECT_THAT(lines[0], ::testing::StartsWith("R40 seq="));
  EXPECT_THAT(lines[0], HasSubstr("handle=cl2:"));
  EXPECT_THAT(lines[1], ::testing::StartsWith(
                            absl::StrCat("GAPS seq=", lost, " tid=0 fn=- handle=-: warning: ")));
  EXPECT_THAT(lines[1], HasSubstr("(2 positions missing in 1 hole, seq " + std::to_string(lost) +
                                  " .. " + std::to_string(lost + 1) + ")"));
  EXPECT_THAT(lines[1], HasSubstr("withheld: 1 finding about 1 handle (R40 x1)"));
  EXPECT_EQ(lines[2], absl::StrCat("# ", events.size(), " calls, 1 violations, 1 warnings"));

  // Fed event by event (the streaming check), with the gaps known only at the end and the
  // findings' exit positions noted while the events pass: the same report, in one pass (the
  // trace is not read again).
  int replays = 0;
  check::StreamCheck stream(
      options, t.handles(),
      [&](const std::function<void(const format::Event&)>& visit) {
        ++replays;
        for (const format::Event& e : events) visit(e);
        return absl::OkStatus();
      },
      /*may_have_holes=*/true);
  for (const format::Event& e : events) ASSERT_TRUE(stream.Add(e).ok());
  std::ostringstream streamed;
  EXPECT_EQ(PrintCheckResult(stream.Finish(gaps), json, t.handles(), streamed), kExitProblems);
  EXPECT_EQ(streamed.str(), out.str());
  EXPECT_EQ(replays, 0);

  // Without gaps both are reported.
  options.gaps = nullptr;
  std::ostringstream all, all_err;
  EXPECT_EQ(RunCheck(options, json, events, t.handles(), all, all_err), kExitProblems);
  EXPECT_THAT(all.str(), HasSubstr("handle=cl1:"));
  EXPECT_THAT(all.str(), HasSubstr("handle=cl2:"));
}

}  // namespace
}  // namespace cltrace::cli
