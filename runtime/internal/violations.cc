#include "runtime/internal/violations.h"

namespace cltrace::runtime::internal {

void ViolationLog::Add(rules::Finding finding, absl::string_view fn) {
  Entry entry{.finding = std::move(finding), .fn = std::string(fn)};
  std::lock_guard<std::mutex> lock(mu_);
  entries_.push_back(std::move(entry));
}

bool ViolationLog::AddOnce(absl::string_view key, rules::Finding finding, absl::string_view fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!once_.insert(std::string(key)).second) return false;
  }
  Add(std::move(finding), fn);
  return true;
}

std::vector<rules::Finding> ViolationLog::Findings() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<rules::Finding> findings;
  findings.reserve(entries_.size());
  for (const Entry& e : entries_) findings.push_back(e.finding);
  return findings;
}

std::vector<std::string> ViolationLog::Lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> lines;
  lines.reserve(entries_.size());
  for (const Entry& e : entries_) {
    lines.push_back(rules::FormatFindingLine(e.finding, e.fn, rules::LineHandle::kOmit));
  }
  return lines;
}

}  // namespace cltrace::runtime::internal
