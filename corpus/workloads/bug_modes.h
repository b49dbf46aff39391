// --bug RULE of cltrace-workload: which planted-bug mode of the reference driver or which
// runtime-misuse mode of the runtime model a rule number selects, and the configuration it
// needs (some bugs only show under an injected fault).
//
// Thread-safety: ApplyBugMode sets the process environment; call it before any thread starts.
#ifndef CLTRACE_CORPUS_WORKLOADS_BUG_MODES_H_
#define CLTRACE_CORPUS_WORKLOADS_BUG_MODES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "corpus/workloads/scenarios.h"
#include "runtime/options.h"

namespace cltrace::workloads {

// Rules with a planted-bug mode in the reference driver (R74: its gpu::UmdContext) / a misuse
// mode in the runtime model. R75-R78 plant bugs in the device's kernel
// (RuntimeOptions::kernel.bug), R79/R80 in the DX6 driver of `dp2` (ScenarioOptions::dx6_bug).
const std::vector<std::string>& DriverBugRules();
const std::vector<std::string>& RuntimeMisuseRules();

// One --bug mode: its rule, what it plants and the scenarios that show it (`cltrace-workload
// --list`; tests/runtime/modes_test.cc runs every pair).
struct BugModeInfo {
  const char* rule;
  const char* kind;  // "driver bug", "kernel bug", "DX6 driver bug" or "misuse"
  std::vector<const char*> scenarios;
};
// Every mode: the planted bugs (driver, kernel, DX6) in rule order, then the misuse modes.
const std::vector<BugModeInfo>& BugModes();

// The CLTRACE_REFDRIVER_CONFIG text that turns on the driver bug for `rule`.
std::string DriverConfigFor(absl::string_view rule);

// Turns on the mode for `rule`: a driver bug through CLTRACE_REFDRIVER_CONFIG (appended to an
// existing value), a misuse mode through `runtime` and `scenario`. InvalidArgument if no mode
// exists for the rule.
absl::Status ApplyBugMode(absl::string_view rule, runtime::RuntimeOptions* runtime,
                          ScenarioOptions* scenario);

}  // namespace cltrace::workloads

#endif  // CLTRACE_CORPUS_WORKLOADS_BUG_MODES_H_
