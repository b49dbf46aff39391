#include "corpus/workloads/scenarios.h"

#include "absl/strings/str_cat.h"

namespace cltrace::workloads {

const std::vector<ScenarioInfo>& Scenarios() {
  static const std::vector<ScenarioInfo>* list = new std::vector<ScenarioInfo>{
      {"smallcl",
       "single-copy command lists finished, executed and released at high frequency from "
       "several threads (recycling of small command lists)"},
      {"scene",
       "deferred contexts record full-pipeline draws with first-bind local opens, nested and "
       "restored lists; the immediate context executes, composites, destroys synchronously "
       "and presents"},
  };
  return *list;
}

absl::Status RunScenario(absl::string_view name, runtime::Device* device,
                         const ScenarioOptions& options) {
  if (name == "smallcl") return RunSmallCl(device, options);
  if (name == "scene") return RunScene(device, options);
  return absl::NotFoundError(absl::StrCat("no scenario named '", name, "' (see --list)"));
}

}  // namespace cltrace::workloads
