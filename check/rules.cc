#include "check/rules.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace cltrace::check {

absl::StatusOr<RuleSet> ParseRuleList(absl::string_view list) {
  RuleSet set;
  for (absl::string_view part : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    part = absl::StripAsciiWhitespace(part);
    std::string upper = absl::AsciiStrToUpper(part);
    // Accept "r40" as well as "R40"; the sub-rule letter stays lower case ("R5a").
    if (!upper.empty() && upper.back() == 'A') upper.back() = 'a';
    const RuleInfo* rule = FindRule(upper);
    if (rule == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("--rules: unknown rule \"", part, "\""));
    }
    set.set(RuleIndex(*rule));
  }
  if (set.none()) return absl::InvalidArgumentError("--rules: empty rule list");
  return set;
}

RuleSet AllTraceRules() {
  RuleSet set;
  for (const RuleInfo& r : Rules())
    if (r.enforcement == Enforcement::kTrace) set.set(RuleIndex(r));
  return set;
}

}  // namespace cltrace::check
