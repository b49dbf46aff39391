// The rule registry (check/rules.h) against ddi-spec's numbering and docs/rules.md.
#include "check/rules.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::check {
namespace {

using ::testing::HasSubstr;

TEST(RulesTest, RegistryCoversR1ToR80AndDocsListEveryRule) {
  // Every number 1..80 is a rule (plus R5a, R66a).
  for (int n = 1; n <= 80; ++n) EXPECT_NE(FindRule(absl::StrCat("R", n)), nullptr) << n;
  EXPECT_NE(FindRule("R5a"), nullptr);
  EXPECT_NE(FindRule("R66a"), nullptr);
  EXPECT_EQ(Rules().size(), 82u);
  // docs/rules.md has a section per rule (tests run from the source root).
  std::ifstream in("docs/rules.md");
  ASSERT_TRUE(in.good()) << "docs/rules.md missing";
  std::stringstream doc;
  doc << in.rdbuf();
  for (const RuleInfo& r : Rules()) {
    EXPECT_THAT(doc.str(), HasSubstr(absl::StrCat("### ", r.id, " ")))
        << r.id << " is not documented";
  }
}

}  // namespace
}  // namespace cltrace::check
