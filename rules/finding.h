// One finding about one rule: what every producer reports — the checker (check::Violation adds
// where in the trace), the reference driver and the runtime model (one text line each, see
// FormatFindingLine), the GPU/kernel model (gpu::ViolationSink) and the planted-bug modes.
//
// Thread-safety: a plain value.
//
// Example:
//   Finding f{.rule = Rule::kR40, .message = "CommandListExecute on a destroyed list"};
//   std::cout << f.id();  // "R40"
//   FormatFindingLine(f, "CommandListExecute", LineHandle::kPrint);
//   // "R40 seq=0 fn=CommandListExecute handle=- CommandListExecute on a destroyed list"
#ifndef CLTRACE_RULES_FINDING_H_
#define CLTRACE_RULES_FINDING_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "rules/rules.h"

namespace cltrace::rules {

enum class Severity : uint8_t { kError, kWarning };

struct Finding {
  Rule rule = Rule::kGaps;
  Severity severity = Severity::kError;
  // Where: the entry position of the offending call (checker), the driver's or runtime's call
  // number (reference driver, runtime model), 0 when the producer has none.
  uint64_t seq = 0;
  // The handle the finding is about: a TokenTable id (checker), 0 = none.
  uint64_t handle = 0;
  // GPU/kernel model: the virtual time (ns) at which it was detected; 0 elsewhere.
  uint64_t time = 0;
  std::string message;  // what happened, with the offending values

  const char* id() const { return RuleId(rule); }
  const RuleInfo& info() const { return Info(rule); }
};

// Whether a finding's text line names its handle: the reference driver's lines do
// ("handle=0x...", "-" for none), the runtime model's do not.
enum class LineHandle : uint8_t { kOmit, kPrint };

// The one text line of a live producer's finding (reference driver, runtime model):
// "R40 seq=N fn=<DDI or callback> [handle=0x...|- ]<message>", without a newline.
std::string FormatFindingLine(const Finding& f, absl::string_view fn, LineHandle handle);

}  // namespace cltrace::rules

#endif  // CLTRACE_RULES_FINDING_H_
