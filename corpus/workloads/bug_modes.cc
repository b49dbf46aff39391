#include "corpus/workloads/bug_modes.h"

#include <cstdlib>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "rules/planted_bugs.h"
#include "rules/rules.h"
#include "wddm/violation.h"

namespace cltrace::workloads {

namespace {

// The ids of the modes of one layer, in rules::PlantedBugModes() order.
std::vector<std::string>* RulesOf(rules::BugLayer layer) {
  auto* out = new std::vector<std::string>;
  for (const rules::PlantedBugMode& m : rules::PlantedBugModes())
    if (m.layer == layer) out->push_back(rules::RuleId(m.rule));
  return out;
}

const char* KindOf(rules::BugLayer layer) {
  switch (layer) {
    case rules::BugLayer::kDriver:
      return "driver bug";
    case rules::BugLayer::kKernel:
      return "kernel bug";
    case rules::BugLayer::kDx6Driver:
      return "DX6 driver bug";
    case rules::BugLayer::kMisuse:
      return "misuse";
  }
  return "?";
}

}  // namespace

const std::vector<std::string>& DriverBugRules() {
  static const std::vector<std::string>* rules = RulesOf(rules::BugLayer::kDriver);
  return *rules;
}

const std::vector<std::string>& RuntimeMisuseRules() {
  static const std::vector<std::string>* rules = RulesOf(rules::BugLayer::kMisuse);
  return *rules;
}

const std::vector<BugModeInfo>& BugModes() {
  static const std::vector<BugModeInfo>* modes = [] {
    auto* m = new std::vector<BugModeInfo>;
    for (const rules::PlantedBugMode& mode : rules::PlantedBugModes()) {
      const rules::Rule r = mode.rule;
      std::vector<const char*> scenarios = {"smallcl", "scene"};
      // R60 and R72 need draws and deferred-context recordings larger than one copy; R74 is
      // the GPU model's UMD side, which `present` drives most; R52 and R61 need the queries
      // the `scene` workload makes.
      if (r == rules::Rule::kR60 || r == rules::Rule::kR72 || r == rules::Rule::kR52 ||
          r == rules::Rule::kR61)
        scenarios = {"scene"};
      if (r == rules::Rule::kR74) scenarios = {"present", "smallcl"};
      if (mode.layer == rules::BugLayer::kKernel) scenarios = {"present"};
      if (mode.layer == rules::BugLayer::kDx6Driver) scenarios = {"dp2"};
      m->push_back({rules::RuleId(r), KindOf(mode.layer), scenarios});
    }
    return m;
  }();
  return *modes;
}

std::string DriverConfigFor(absl::string_view rule) {
  std::string config = absl::StrCat("bug=", rule);
  // R22 is about how an out-of-memory is reported: it needs one to happen.
  if (rules::FindRule(rule) == &rules::Info(rules::Rule::kR22))
    absl::StrAppend(&config, ";oom:RecycleCreateCommandList=2");
  return config;
}

absl::Status ApplyBugMode(absl::string_view rule, runtime::RuntimeOptions* runtime,
                          ScenarioOptions* scenario) {
  // Driver bugs first, through the list of their ids (the golden corpus' recordings follow the
  // heap layout of this process, which this list is part of).
  if (absl::c_linear_search(DriverBugRules(), rule)) {
    std::string config = DriverConfigFor(rule);
    if (const char* existing = std::getenv("CLTRACE_REFDRIVER_CONFIG");
        existing != nullptr && existing[0] != '\0') {
      config = absl::StrCat(existing, ";", config);
    }
    setenv("CLTRACE_REFDRIVER_CONFIG", config.c_str(), 1);
    return absl::OkStatus();
  }
  const rules::RuleInfo* info = rules::FindRule(rule);
  for (const rules::PlantedBugMode& mode : rules::PlantedBugModes()) {
    if (info == nullptr || mode.rule != info->rule) continue;
    runtime::Misuse misuse;
    switch (mode.layer) {
      case rules::BugLayer::kDriver:
        break;  // above
      case rules::BugLayer::kKernel:
        runtime->kernel.bug = gpu::PlantedBugFromRule(mode.rule);
        return absl::OkStatus();
      case rules::BugLayer::kDx6Driver:
        scenario->dx6_bug = gpu::PlantedBugFromRule(mode.rule);
        return absl::OkStatus();
      case rules::BugLayer::kMisuse:
        if (!runtime::MisuseFromRule(rule, &misuse)) break;
        runtime->misuse = misuse;
        scenario->misuse = misuse;
        return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no planted-bug or misuse mode for rule '", rule, "'"));
}

}  // namespace cltrace::workloads
