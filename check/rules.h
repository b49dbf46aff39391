// The contract rules of ddi-spec §5 (R1-R80): one registry shared by the checker, the CLI
// (--rules), the inspector and docs/rules.md (a test keeps the document and this table in
// step).
//
// Thread-safety: constant data; every function is safe from any thread.
//
// Example:
//   const RuleInfo* r = FindRule("R40");
//   if (r && r->enforcement == Enforcement::kTrace) ...
//   absl::StatusOr<RuleSet> set = ParseRuleList("R40,R45");
#ifndef CLTRACE_CHECK_RULES_H_
#define CLTRACE_CHECK_RULES_H_

#include <bitset>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace cltrace::check {

// Who enforces a rule.
enum class Enforcement : uint8_t {
  kTrace,        // `cltrace check` judges it from a trace (kinds T, H, V)
  kReplay,       // kind D: the runtime model and reference driver enforce it in live runs
  kStatic,       // kind S: a property of the function/callback tables, not of a call sequence
  kInformative,  // no check (an exemption or a note)
};

struct RuleInfo {
  const char* id;    // "R40", "R5a"
  const char* kind;  // the spec's check kind: "T", "H/T", "V/D", "S", "D", "-"
  Enforcement enforcement;
  bool heuristic;         // reported as warnings (thresholds, see CheckOptions)
  const char* statement;  // one line, our words
};

// Every rule of ddi-spec §5 in document order.
absl::Span<const RuleInfo> Rules();
// nullptr if `id` names no rule. Case-sensitive ("R40").
const RuleInfo* FindRule(absl::string_view id);
// Index of a rule in Rules() (dense, < kMaxRules).
int RuleIndex(const RuleInfo& rule);

inline constexpr int kMaxRules = 96;
using RuleSet = std::bitset<kMaxRules>;

// Parses "R40,R45" (spaces allowed). InvalidArgument names the first unknown id. An empty
// list is InvalidArgument too (use AllTraceRules() for "everything").
absl::StatusOr<RuleSet> ParseRuleList(absl::string_view list);
// Every rule with Enforcement::kTrace.
RuleSet AllTraceRules();

}  // namespace cltrace::check

#endif  // CLTRACE_CHECK_RULES_H_
