#include "corpus/workloads/bug_modes.h"

#include <cstdlib>

#include "absl/algorithm/container.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "wddm/violation.h"

namespace cltrace::workloads {

const std::vector<std::string>& DriverBugRules() {
  static const std::vector<std::string>* rules =
      new std::vector<std::string>{"R5",  "R6",  "R16", "R22", "R33", "R36", "R39", "R50",
                                   "R60", "R67", "R68", "R70", "R71", "R72", "R74"};
  return *rules;
}

const std::vector<std::string>& RuntimeMisuseRules() {
  static const std::vector<std::string>* rules =
      new std::vector<std::string>{"R40", "R41", "R44", "R45", "R46", "R52", "R61"};
  return *rules;
}

const std::vector<BugModeInfo>& BugModes() {
  static const std::vector<BugModeInfo>* modes = [] {
    // The rule lists are never destroyed, so their strings outlive every BugModeInfo.
    auto* m = new std::vector<BugModeInfo>;
    for (const std::string& rule : DriverBugRules()) {
      // R60 and R72 need draws and deferred-context recordings larger than one copy; R74 is
      // the GPU model's UMD side, which `present` drives most.
      std::vector<const char*> scenarios = {"smallcl", "scene"};
      if (rule == "R60" || rule == "R72") scenarios = {"scene"};
      if (rule == "R74") scenarios = {"present", "smallcl"};
      m->push_back({rule.c_str(), "driver bug", scenarios});
    }
    for (const char* rule : {"R75", "R76", "R77", "R78"}) {
      m->push_back({rule, "kernel bug", {"present"}});
    }
    for (const char* rule : {"R79", "R80"}) m->push_back({rule, "DX6 driver bug", {"dp2"}});
    for (const std::string& rule : RuntimeMisuseRules()) {
      // R52 and R61 need queries the `scene` workload makes.
      std::vector<const char*> scenarios = {"smallcl", "scene"};
      if (rule == "R52" || rule == "R61") scenarios = {"scene"};
      m->push_back({rule.c_str(), "misuse", scenarios});
    }
    return m;
  }();
  return *modes;
}

std::string DriverConfigFor(absl::string_view rule) {
  std::string config = absl::StrCat("bug=", rule);
  // R22 is about how an out-of-memory is reported: it needs one to happen.
  if (rule == "R22") absl::StrAppend(&config, ";oom:RecycleCreateCommandList=2");
  return config;
}

absl::Status ApplyBugMode(absl::string_view rule, runtime::RuntimeOptions* runtime,
                          ScenarioOptions* scenario) {
  if (absl::c_linear_search(DriverBugRules(), rule)) {
    std::string config = DriverConfigFor(rule);
    if (const char* existing = std::getenv("CLTRACE_REFDRIVER_CONFIG");
        existing != nullptr && existing[0] != '\0') {
      config = absl::StrCat(existing, ";", config);
    }
    setenv("CLTRACE_REFDRIVER_CONFIG", config.c_str(), 1);
    return absl::OkStatus();
  }
  // The kernel/KMD (R75-R78) and DX6 driver (R79/R80) bugs of the GPU model.
  int number = 0;
  if (rule.size() > 1 && rule[0] == 'R' && absl::SimpleAtoi(rule.substr(1), &number)) {
    gpu::PlantedBug bug = gpu::PlantedBugFromRule(number);
    if (number >= 75 && number <= 78 && bug != gpu::PlantedBug::kNone) {
      runtime->kernel.bug = bug;
      return absl::OkStatus();
    }
    if (number >= 79 && number <= 80 && bug != gpu::PlantedBug::kNone) {
      scenario->dx6_bug = bug;
      return absl::OkStatus();
    }
  }
  runtime::Misuse misuse;
  if (runtime::MisuseFromRule(rule, &misuse)) {
    runtime->misuse = misuse;
    scenario->misuse = misuse;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no planted-bug or misuse mode for rule '", rule, "'"));
}

}  // namespace cltrace::workloads
