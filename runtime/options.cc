#include "runtime/options.h"

namespace cltrace::runtime {
namespace {

struct MisuseName {
  Misuse misuse;
  rules::Rule rule;
};
constexpr MisuseName kMisuseNames[] = {
    {Misuse::kR40, rules::Rule::kR40}, {Misuse::kR41, rules::Rule::kR41},
    {Misuse::kR44, rules::Rule::kR44}, {Misuse::kR45, rules::Rule::kR45},
    {Misuse::kR46, rules::Rule::kR46}, {Misuse::kR52, rules::Rule::kR52},
    {Misuse::kR61, rules::Rule::kR61},
};

}  // namespace

absl::string_view MisuseRule(Misuse m) {
  for (const MisuseName& n : kMisuseNames) {
    if (n.misuse == m) return rules::RuleId(n.rule);
  }
  return "";
}

bool MisuseFromRule(absl::string_view rule, Misuse* m) {
  for (const MisuseName& n : kMisuseNames) {
    if (rule == rules::RuleId(n.rule)) {
      *m = n.misuse;
      return true;
    }
  }
  return false;
}

std::vector<rules::Rule> MisuseRules() {
  std::vector<rules::Rule> out;
  for (const MisuseName& n : kMisuseNames) out.push_back(n.rule);
  return out;
}

}  // namespace cltrace::runtime
