#include "runtime/internal/violations.h"

#include "absl/strings/str_cat.h"

namespace cltrace::runtime::internal {

void ViolationLog::Add(rules::Rule rule, uint64_t seq, absl::string_view fn,
                       absl::string_view message) {
  std::string line = absl::StrCat(rules::RuleId(rule), " seq=", seq, " fn=", fn, " ", message);
  std::lock_guard<std::mutex> lock(mu_);
  lines_.push_back(std::move(line));
}

bool ViolationLog::AddOnce(absl::string_view key, rules::Rule rule, uint64_t seq,
                           absl::string_view fn, absl::string_view message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!once_.insert(std::string(key)).second) return false;
  }
  Add(rule, seq, fn, message);
  return true;
}

std::vector<std::string> ViolationLog::Lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lines_;
}

}  // namespace cltrace::runtime::internal
