// Every example trace in docs/rules.md is executed: a ```jsonl block tagged with a rule id
// must produce exactly that finding (plus the ones listed as "+Rnn" in its tag), a block
// tagged "legal" none. Tag options ("--dc-amortized-max-calls=2") set checker options.
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "check/check_trace.h"
#include "check/checker.h"
#include "cli/check_output.h"
#include "format/jsonl.h"
#include "gtest/gtest.h"

namespace cltrace::check {
namespace {

struct Example {
  int line = 0;
  std::vector<std::string> tags;
  std::string body;
};

std::vector<Example> ReadExamples() {
  std::ifstream in("docs/rules.md");
  std::vector<Example> examples;
  std::string line;
  Example* open = nullptr;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    absl::string_view l = line;
    if (open == nullptr && absl::ConsumePrefix(&l, "```jsonl")) {
      examples.emplace_back();
      open = &examples.back();
      open->line = n;
      open->tags = absl::StrSplit(l, ' ', absl::SkipWhitespace());
    } else if (open != nullptr && l == "```") {
      open = nullptr;
    } else if (open != nullptr) {
      open->body += line + "\n";
    }
  }
  return examples;
}

TEST(RulesDocTest, EveryExampleProducesItsFinding) {
  std::vector<Example> examples = ReadExamples();
  ASSERT_GT(examples.size(), 60u) << "docs/rules.md not found or lost its examples";
  std::set<std::string> covered;
  for (const Example& ex : examples) {
    SCOPED_TRACE(absl::StrCat("docs/rules.md:", ex.line));
    ASSERT_FALSE(ex.tags.empty());
    absl::StatusOr<format::JsonlTrace> trace = format::ParseJsonl(ex.body);
    if (!trace.ok()) {
      ADD_FAILURE() << trace.status();
      continue;
    }
    CheckOptions options;
    std::multiset<std::string> want;
    for (size_t i = 0; i < ex.tags.size(); ++i) {
      absl::string_view tag = ex.tags[i];
      if (absl::StartsWith(tag, "--")) {
        std::vector<std::string> kv = absl::StrSplit(tag, absl::MaxSplits('=', 1));
        ASSERT_EQ(kv.size(), 2u) << tag;
        ASSERT_TRUE(cli::ApplyCheckOption(kv[0], kv[1], &options).ok()) << tag;
      } else if (tag != "legal") {
        absl::ConsumePrefix(&tag, "+");
        want.insert(std::string(tag));
      }
    }
    absl::StatusOr<CheckResult> r = Check(trace->events, trace->handles, options);
    ASSERT_TRUE(r.ok()) << r.status();
    std::multiset<std::string> got;
    std::string report;
    for (const auto* list : {&r->violations, &r->warnings}) {
      for (const Violation& v : *list) {
        got.insert(v.id());
        absl::StrAppend(&report, FormatViolation(v, trace->handles), "\n");
      }
    }
    EXPECT_EQ(got, want) << report;
    if (ex.tags[0] != "legal") covered.insert(ex.tags[0]);
  }
  // Every trace-checked rule has an example, except R5: it is judged from the recorder's
  // annotations, which JSONL cannot carry (checker_value_test.cc covers it).
  for (const RuleInfo& rule : Rules()) {
    if (rule.enforcement == Enforcement::kTrace && absl::string_view(rule.id) != "R5") {
      EXPECT_TRUE(covered.count(rule.id)) << rule.id << " has no example in docs/rules.md";
    }
  }
}

}  // namespace
}  // namespace cltrace::check
