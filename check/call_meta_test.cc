// The checker's per-call table (check/internal/call_meta.h) as the catalog's traits make it.
#include "check/internal/call_meta.h"

#include "ddi/call_traits.h"
#include "gtest/gtest.h"

namespace cltrace::check::internal {
namespace {

// A catalog dc_rule= that named no rule would silently judge the call under R4.
TEST(CallMetaTest, EveryDcTableRuleIsARule) {
  for (int i = 1; i < format::kCallIdCount; ++i) {
    const auto id = static_cast<format::CallId>(i);
    const char* rule_id = ddi::TraitsOf(id).dc_table_rule;
    const rules::RuleInfo* rule = rules::FindRule(rule_id);
    ASSERT_NE(rule, nullptr) << ddi::TraitsOf(id).name << ": dc_rule=" << rule_id;
    EXPECT_EQ(CallTable::Get()[id].dc_table_rule, rule->rule) << ddi::TraitsOf(id).name;
  }
  EXPECT_EQ(CallTable::Get()[format::CallId::kQueryGetData].dc_table_rule, Rule::kR65);
  EXPECT_EQ(CallTable::Get()[format::CallId::kDraw].dc_table_rule, Rule::kR4);
}

}  // namespace
}  // namespace cltrace::check::internal
