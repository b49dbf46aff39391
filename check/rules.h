// The checker's view of the rule registry (rules/rules.h holds it: the `Rule` enum and the
// table of ddi-spec §5, shared with every other producer of findings, the CLI's --rules and
// docs/rules.md), plus the --rules list parser.
//
// Thread-safety: constant data; every function is safe from any thread.
//
// Example:
//   const RuleInfo* r = FindRule("R40");
//   if (r && r->enforcement == Enforcement::kTrace) ...
//   absl::StatusOr<RuleSet> set = ParseRuleList("R40,R45");
#ifndef CLTRACE_CHECK_RULES_H_
#define CLTRACE_CHECK_RULES_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "rules/rules.h"

namespace cltrace::check {

using rules::Enforcement;
using rules::FindRule;
using rules::Rule;
using rules::RuleId;
using rules::RuleIndex;
using rules::RuleInfo;
using rules::Rules;
using rules::RuleSet;

// Parses "R40,R45" (spaces allowed). InvalidArgument names the first unknown id. An empty
// list is InvalidArgument too (use AllTraceRules() for "everything").
absl::StatusOr<RuleSet> ParseRuleList(absl::string_view list);
// Every rule with Enforcement::kTrace.
RuleSet AllTraceRules();

}  // namespace cltrace::check

#endif  // CLTRACE_CHECK_RULES_H_
