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
      {"present",
       "single-threaded frames of clears, updates, draws and a command list with a renamed "
       "dynamic vertex buffer, flushed and presented through the kernel/GPU model"},
      {"dp2",
       "the DX6 path: DrawPrimitives2 batches with vertex/command buffer swaps, explicit and "
       "user-memory vertices, an invalid command per third frame (driver error offsets)"},
      {"tables",
       "the rarely used slots of the full D3D11.0 tables: capability checks, a stream-output "
       "geometry shader, shaders with class instances, a resolve, a structure count (also on a "
       "deferred context) and the DXGI functions beside Present"},
      {"long",
       "smallcl's shape with lists of 32 draws, linear in frames and threads: without "
       "--frames about 100 million calls (benchmark traces, generated on demand)"},
  };
  return *list;
}

absl::Status RunScenario(absl::string_view name, runtime::Device* device,
                         const ScenarioOptions& options) {
  if (name == "smallcl") return RunSmallCl(device, options);
  if (name == "scene") return RunScene(device, options);
  if (name == "present") return RunPresent(device, options);
  if (name == "dp2") return RunDp2(device, options);
  if (name == "tables") return RunTables(device, options);
  if (name == "long") return RunLong(device, options);
  return absl::NotFoundError(absl::StrCat("no scenario named '", name, "' (see --list)"));
}

}  // namespace cltrace::workloads
