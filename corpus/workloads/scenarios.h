// Named workload scenarios that drive the runtime model (cltrace-workload, tests, benchmarks).
//
// A scenario is an application: it creates objects, records on deferred contexts from their own
// threads, executes on the immediate context and presents. It only uses the public runtime API.
//
// Thread-safety: RunScenario may be called from any thread; a scenario creates its own threads.
//
// Example:
//   Device* device = ...;
//   absl::Status s = RunScenario("smallcl", device, ScenarioOptions{.threads = 4});
#ifndef CLTRACE_CORPUS_WORKLOADS_SCENARIOS_H_
#define CLTRACE_CORPUS_WORKLOADS_SCENARIOS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/runtime.h"
#include "wddm/violation.h"

namespace cltrace::workloads {

struct ScenarioOptions {
  int threads = 4;  // deferred contexts, each on its own thread
  int frames = 20;  // frames (Present calls)
  uint64_t seed = 1;
  // Lockstep (--lockstep): the scenario's threads take turns in a fixed order, so no two of
  // them make DDI calls at once and every run makes the same calls in the same order (what a
  // reproducible recording needs: scripts/make-corpus.sh). Threads, deferred contexts and
  // the calls made are those of a free run; only the interleaving is fixed. `smallcl` and
  // `scene` honour it; `present` and `dp2` are single-threaded anyway.
  bool lockstep = false;
  // Runtime-misuse setup some modes need from the application side (R61: the IC begins a
  // query a command list manipulates). Set by the workload for --bug.
  runtime::Misuse misuse = runtime::Misuse::kNone;
  // Planted DX6 driver bug for `dp2` (R79/R80; --bug).
  gpu::PlantedBug dx6_bug = gpu::PlantedBug::kNone;
};

struct ScenarioInfo {
  const char* name;
  const char* description;
};

// Every scenario, in --list order.
const std::vector<ScenarioInfo>& Scenarios();

// Runs scenario `name` on `device` (which it does not release). NotFound for an unknown name;
// Internal if an API call the scenario needs failed unexpectedly.
absl::Status RunScenario(absl::string_view name, runtime::Device* device,
                         const ScenarioOptions& options);

// Individual scenarios.
absl::Status RunSmallCl(runtime::Device* device, const ScenarioOptions& options);
absl::Status RunScene(runtime::Device* device, const ScenarioOptions& options);
absl::Status RunPresent(runtime::Device* device, const ScenarioOptions& options);
// The DX6 path only: `device` is not used.
absl::Status RunDp2(runtime::Device* device, const ScenarioOptions& options);
absl::Status RunTables(runtime::Device* device, const ScenarioOptions& options);
// smallcl's shape with lists of draws, for traces of any length (benchmarks; never committed).
absl::Status RunLong(runtime::Device* device, const ScenarioOptions& options);
// The frame count `long` uses when none is given: about 100 million recorded calls.
int LongDefaultFrames();

// `present` with its results: the kernel's CombinedDigest after each frame (after WaitIdle).
struct PresentRun {
  std::vector<uint64_t> frame_digests;
};
absl::StatusOr<PresentRun> RunPresentFrames(runtime::Device* device, const ScenarioOptions& o);
// `dp2` with its result: the DX6 driver's render-target digest of the context.
absl::StatusOr<uint64_t> RunDp2Frames(const ScenarioOptions& o);

}  // namespace cltrace::workloads

#endif  // CLTRACE_CORPUS_WORKLOADS_SCENARIOS_H_
