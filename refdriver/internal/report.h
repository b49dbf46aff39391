// Violation reporting of the reference driver (process-wide sink).
//
// Every protocol violation the driver detects in the calls it receives (the runtime breaking
// ddi-spec §3/§5) becomes one rules::Finding, kept as its line "R40 seq=N fn=Name handle=0x...
// message" (rules::FormatFindingLine) in memory (CltraceRefDriverViolations) and optionally
// appended to a file.
//
// Thread-safety: Report() may be called concurrently from any thread.
#ifndef CLTRACE_REFDRIVER_INTERNAL_REPORT_H_
#define CLTRACE_REFDRIVER_INTERNAL_REPORT_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "rules/rules.h"

namespace cltrace::refdriver {

// Monotonic number of DDI calls this driver library received (all devices); "seq=" in lines.
uint64_t NextCallSeq();
uint64_t CurrentCallSeq();

// The DDI the current thread is executing (innermost), for "fn=" in lines. Set by CallScope.
class CallScope {
 public:
  explicit CallScope(const char* fn);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
  uint64_t seq() const { return seq_; }

 private:
  const char* previous_fn_;
  uint64_t previous_seq_;
  uint64_t seq_;
};
const char* CurrentFn();

// Records one violation of `rule` about `handle` (may be nullptr).
void Report(rules::Rule rule, const void* handle, absl::string_view message);

// Redirects a copy of every later line to `path` (append); empty path stops the copy.
void SetViolationFile(const std::string& path);

}  // namespace cltrace::refdriver

#endif  // CLTRACE_REFDRIVER_INTERNAL_REPORT_H_
