// How the GPU / kernel model reports contract-rule violations (ddi-spec §5.10, R74-R80).
//
// The model keeps running after a violation (it reports and carries on where it can), so that
// a planted bug shows up as a rule number instead of a crash; the sink decides what to do.
//
// Thread-safety: ViolationSink implementations must tolerate calls from whichever thread is
// inside the model; CollectingViolationSink locks.
//
// Example:
//   CollectingViolationSink sink;
//   Dxgkrnl kernel(options, &sink);
//   ...
//   EXPECT_TRUE(sink.Has(rules::Rule::kR75));
#ifndef CLTRACE_WDDM_VIOLATION_H_
#define CLTRACE_WDDM_VIOLATION_H_

#include <mutex>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "rules/finding.h"
#include "rules/rules.h"

namespace cltrace::gpu {

// The one finding type of every producer: rule, message (what happened, with the offending
// values) and time (the virtual time, ns, at which it was detected).
using Violation = rules::Finding;

class ViolationSink {
 public:
  virtual ~ViolationSink() = default;
  virtual void Report(const Violation& v) = 0;
};

// Keeps every report; the default sink for tests and tools.
class CollectingViolationSink : public ViolationSink {
 public:
  void Report(const Violation& v) override {
    std::lock_guard<std::mutex> lock(mu_);
    violations_.push_back(v);
  }
  std::vector<Violation> violations() const {
    std::lock_guard<std::mutex> lock(mu_);
    return violations_;
  }
  bool Has(rules::Rule rule) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Violation& v : violations_) {
      if (v.rule == rule) return true;
    }
    return false;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return violations_.size();
  }

 private:
  // std::mutex, not absl::Mutex: Debian's Abseil is not ThreadSanitizer-instrumented, so
  // TSAN would not see the lock and would report the guarded vector as raced.
  mutable std::mutex mu_;
  std::vector<Violation> violations_;  // guarded by mu_
};

// The rule-violating behaviours the model can be told to plant (one at a time), for
// `cltrace-workload --bug RNN` and the tests. Each names who misbehaves.
enum class PlantedBug {
  kNone,
  kR74StaleCommandBuffer,  // UMD helper: keeps writing into the previous command buffer
  kR75FenceMismatch,       // Dxgkrnl (VidSch): SubmitCommand gets Patch's fence id + 1
  kR76SubmitUnpatched,     // Dxgkrnl (VidSch): submits a DMA buffer without DxgkDdiPatch
  kR77DpcBeforeNotify,     // model KMD: ISR queues the DPC before DxgkCbNotifyInterrupt
  kR78SplitOffsetOrder,    // model KMD: Render emits a decreasing SplitOffset
  kR79ImplicitVbInVidmem,  // DX6 driver: swaps an implicit VB into video memory, no flag
  kR80BadErrorOffset,      // DX6 driver: parses past dwCommandLength / wrong dwErrorOffset
};

// Who a planted bug makes misbehave.
enum class PlantedBugLayer : uint8_t {
  kUmd,     // the reference driver's gpu::UmdContext (turned on by the driver's bug=R74)
  kKernel,  // Dxgkrnl or the model KMD (RuntimeOptions::kernel.bug)
  kDx6,     // the DX6 driver (ScenarioOptions::dx6_bug)
};
struct PlantedBugInfo {
  PlantedBug bug;
  rules::Rule rule;  // the rule it breaks
  PlantedBugLayer layer;
};
// Every planted bug (kNone excluded), in rule order.
absl::Span<const PlantedBugInfo> PlantedBugs();

// Rule::kR74 -> kR74StaleCommandBuffer ...; kNone for a rule without a planted bug.
PlantedBug PlantedBugFromRule(rules::Rule rule);

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_VIOLATION_H_
