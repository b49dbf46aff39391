// Configuration of the reference driver: planted bugs and fault injection.
//
// Parsed from CLTRACE_REFDRIVER_CONFIG (grammar in refdriver/refdriver.h). Each device copies
// the configuration in force when its adapter was opened.
//
// Thread-safety: Config is an immutable value after parsing.
#ifndef CLTRACE_REFDRIVER_INTERNAL_CONFIG_H_
#define CLTRACE_REFDRIVER_INTERNAL_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "rules/planted_bugs.h"
#include "rules/rules.h"

namespace cltrace::refdriver {

// Planted-bug modes; each breaks exactly one rule of ddi-spec §5 (refdriver/README.md). A bug
// mode is its rule: the modes are the rules::PlantedBugModes() of layer kDriver.
//   R5   rewrites IC-table pfnCreateResource after CreateDevice (at the first Flush)
//   R6   caches pfnPerformAmortizedProcessingCb instead of calling through the table
//   R16  calls pfnRenderCb from inside a deferred-context DDI
//   R22  reports RecycleCreateCommandList's E_OUTOFMEMORY through pfnSetErrorCb
//   R33  CalcDeferredContextHandleSize(RESOURCE) returns a size not in the list
//   R36  CalcPrivateCommandListSize grows with the deferred context's history
//   R39  writes into a command-list handle's memory after DestroyCommandList
//   R50  writes into a closed context-local handle at RecycleCreateDeferredContext
//   R60  does not clear the executing context's state in CommandListExecute
//   R67  DestroyResource calls pfnDeallocateCb before the referencing work is submitted
//   R68  Flush does not process the deferred-destruction queue
//   R70  DestroyDevice returns with deferred destructions still queued
//   R71  never calls pfnPerformAmortizedProcessingCb
//   R72  calls pfnPerformAmortizedProcessingCb twice per submit (IC) / chunk (DC)
//   R74  keeps writing into the previous command buffer after pfnRenderCb (gpu::UmdContext)
using Bug = rules::Rule;

// The rule name ("R22") of a bug mode, and the reverse lookup (false for a rule without a
// driver bug mode).
absl::string_view BugRule(Bug bug);
bool BugFromRule(absl::string_view rule, Bug* bug);
// Every bug mode, in rule order.
const std::vector<Bug>& AllBugs();

// Injected faults.
enum class FaultSite : uint8_t {
  kRecycleCreateCommandList,
  kRecycleCreateDeferredContext,
  kCreateCommandList,
  kCount,
};

struct Config {
  absl::flat_hash_set<Bug> bugs;
  // Per site: the 1-based call numbers that fail with E_OUTOFMEMORY.
  std::vector<uint64_t> oom[static_cast<int>(FaultSite::kCount)];
  uint64_t removed_at_call = 0;  // 0: never
  std::string violations_path;
  // ddi-spec §3.3 open question: which handle DC::CommandListExecute receives for a nested list.
  // false (default, `nested_execute_handle=local`): the DC-local handle; true (`=ic`): the IC
  // handle (what D3D11On12 assumes).
  bool nested_execute_ic = false;
  // `aliases=with_resource`: DC map-discard aliases are freed only with their resource (this
  // driver before issue #16 item 6; what recordings made then replay against). Default
  // (`aliases=released`): once no command list can execute them and they are not current.
  bool aliases_with_resource = false;

  bool Has(Bug bug) const { return bugs.contains(bug); }
  bool FailsAt(FaultSite site, uint64_t n) const;
};

// Parses the configuration text; InvalidArgument names the offending item.
absl::StatusOr<Config> ParseConfig(absl::string_view text);

// The configuration for the next adapter: the CltraceRefDriverConfigure override if set, else
// the environment variable (parse errors are reported on stderr and ignored).
Config CurrentConfig();

}  // namespace cltrace::refdriver

#endif  // CLTRACE_REFDRIVER_INTERNAL_CONFIG_H_
