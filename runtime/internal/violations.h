// The runtime model's violation log: what it detected about the driver (driver-side rules of
// ddi-spec §5) and about the application (misuse of the API, e.g. R10 overlap).
//
// Each report is one rules::Finding (seq = the trace seq under a recorder, else the runtime's
// call count) with the DDI or callback it was made in; Lines() writes them as
// "R22 seq=N fn=<DDI or callback> <message>" (rules::FormatFindingLine).
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
#include "rules/finding.h"
#include "rules/rules.h"

namespace cltrace::runtime::internal {

class ViolationLog {
 public:
  // Keeps `finding`, made in the DDI or callback `fn`.
  void Add(rules::Finding finding, absl::string_view fn);
  // Like Add, but only the first time `key` is seen (repeating heuristics); true if added.
  bool AddOnce(absl::string_view key, rules::Finding finding, absl::string_view fn);
  std::vector<rules::Finding> Findings() const;
  std::vector<std::string> Lines() const;

 private:
  struct Entry {
    rules::Finding finding;
    std::string fn;
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
  absl::flat_hash_set<std::string> once_;
};

}  // namespace cltrace::runtime::internal

#endif  // CLTRACE_RUNTIME_INTERNAL_VIOLATIONS_H_
