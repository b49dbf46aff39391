#include "format/event.h"

#include "absl/strings/str_format.h"

namespace cltrace::format {

uint64_t TokenTable::Intern(absl::string_view token) {
  if (token.empty()) return 0;
  auto it = ids_.find(token);
  if (it != ids_.end()) return it->second;
  uint64_t id = tokens_.size();
  tokens_.emplace_back(token);
  ids_.emplace(std::string(token), id);
  return id;
}

uint64_t TokenTable::InternValue(uint64_t value) {
  if (value == 0) return 0;
  auto it = by_value_.find(value);
  if (it != by_value_.end()) return it->second;
  uint64_t id = Intern(absl::StrFormat("0x%x", value));
  by_value_.emplace(value, id);
  return id;
}

bool TokenTable::Define(uint64_t id, absl::string_view token) {
  if (id == 0) return false;
  if (id < tokens_.size()) return tokens_[id] == token;
  if (id != tokens_.size()) return false;
  if (ids_.contains(token)) return false;  // one token, one id
  tokens_.emplace_back(token);
  ids_.emplace(std::string(token), id);
  return true;
}

int64_t TokenTable::Find(absl::string_view token) const {
  if (token.empty()) return 0;
  auto it = ids_.find(token);
  return it == ids_.end() ? -1 : static_cast<int64_t>(it->second);
}

}  // namespace cltrace::format
