// The contract rules of ddi-spec §5 as a typed registry: `Rule` (an enum class with one value
// per rule, R5a and R66a included) and its RuleInfo table, both expanded from the one list in
// rules/rule_list.inc. Every producer of findings — the checker, the reference driver, the
// runtime model, the GPU/kernel model and the planted-bug modes — names rules with `Rule`;
// the id text ("R40", "R5a") exists only in the table.
//
// Header-only and constant: the bottom component every other one may include.
//
// Thread-safety: constant data; every function is safe from any thread.
//
// Example:
//   Rule r = Rule::kR40;
//   std::cout << RuleId(r);                                  // "R40"
//   if (Info(r).enforcement == Enforcement::kTrace) ...
//   const RuleInfo* found = FindRule("R5a");                 // &Info(Rule::kR5a)
#ifndef CLTRACE_RULES_RULES_H_
#define CLTRACE_RULES_RULES_H_

#include <bitset>
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace cltrace::rules {

// Who enforces a rule.
enum class Enforcement : uint8_t {
  kTrace,        // `cltrace check` judges it from a trace (kinds T, H, V)
  kReplay,       // kind D: the runtime model and reference driver enforce it in live runs
  kStatic,       // kind S: a property of the function/callback tables, not of a call sequence
  kInformative,  // no check (an exemption or a note)
};

// One value per rule, in document order (so Rule::kR10 < Rule::kR11 < Rule::kR12), then the
// checker's pseudo-rule GAPS (docs/rules.md "Traces with gaps"), which is no rule of the spec.
enum class Rule : uint8_t {
#define CLTRACE_RULE(id, kind, enforcement, heuristic, statement) k##id,
#include "rules/rule_list.inc"
#undef CLTRACE_RULE
  kGaps,
};

// Number of rules of the spec (Rule::kGaps excluded).
inline constexpr size_t kRuleCount = static_cast<size_t>(Rule::kGaps);

struct RuleInfo {
  Rule rule;
  const char* id;    // "R40", "R5a"
  const char* kind;  // the spec's check kind: "T", "H/T", "V/D", "S", "D", "-"
  Enforcement enforcement;
  bool heuristic;         // reported as warnings (thresholds, see check::CheckOptions)
  const char* statement;  // one line, our words
};

namespace internal {
inline constexpr RuleInfo kRuleTable[] = {
#define CLTRACE_RULE(id, kind, enforcement, heuristic, statement) \
  {Rule::k##id, #id, kind, Enforcement::enforcement, heuristic, statement},
#include "rules/rule_list.inc"
#undef CLTRACE_RULE
    {Rule::kGaps, "GAPS", "-", Enforcement::kInformative, false,
     "findings across positions missing from a recording are not judged"},
};
static_assert(sizeof(kRuleTable) / sizeof(kRuleTable[0]) == kRuleCount + 1);
}  // namespace internal

constexpr const RuleInfo& Info(Rule rule) {
  return internal::kRuleTable[static_cast<size_t>(rule)];
}
// "R40" (the text every report prints).
constexpr const char* RuleId(Rule rule) { return Info(rule).id; }
// Dense index of a rule (< kRuleCount for the spec's rules).
constexpr size_t RuleIndex(Rule rule) { return static_cast<size_t>(rule); }
inline size_t RuleIndex(const RuleInfo& info) { return RuleIndex(info.rule); }

// Every rule of ddi-spec §5 in document order (GAPS excluded).
inline absl::Span<const RuleInfo> Rules() {
  return absl::MakeConstSpan(internal::kRuleTable, kRuleCount);
}

// nullptr if `id` names no rule of the spec. Case-sensitive ("R40", "R5a").
constexpr const RuleInfo* FindRule(absl::string_view id) {
  for (size_t i = 0; i < kRuleCount; ++i)
    if (id == internal::kRuleTable[i].id) return &internal::kRuleTable[i];
  return nullptr;
}

// A set of rules (bit RuleIndex(r)).
using RuleSet = std::bitset<kRuleCount>;

}  // namespace cltrace::rules

#endif  // CLTRACE_RULES_RULES_H_
