// The runtime model's violation log: what it detected about the driver (driver-side rules of
// ddi-spec §5) and about the application (misuse of the API, e.g. R10 overlap).
//
// Line format: "R22 seq=<runtime call count> fn=<DDI or callback> <message>".
//
// Thread-safety: Add and Lines may be called concurrently.
#ifndef CLTRACE_RUNTIME_INTERNAL_VIOLATIONS_H_
#define CLTRACE_RUNTIME_INTERNAL_VIOLATIONS_H_

#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "rules/rules.h"

namespace cltrace::runtime::internal {

class ViolationLog {
 public:
  void Add(rules::Rule rule, uint64_t seq, absl::string_view fn, absl::string_view message);
  // Like Add, but only the first time `key` is seen (repeating heuristics); true if added.
  bool AddOnce(absl::string_view key, rules::Rule rule, uint64_t seq, absl::string_view fn,
               absl::string_view message);
  std::vector<std::string> Lines() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
  absl::flat_hash_set<std::string> once_;
};

}  // namespace cltrace::runtime::internal

#endif  // CLTRACE_RUNTIME_INTERNAL_VIOLATIONS_H_
