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
//   EXPECT_TRUE(sink.Has(75));
#ifndef CLTRACE_WDDM_VIOLATION_H_
#define CLTRACE_WDDM_VIOLATION_H_

#include <mutex>
#include <string>
#include <vector>

namespace cltrace::gpu {

struct Violation {
  int rule = 0;         // 74 for R74, ...
  std::string message;  // what happened, with the offending values
  uint64_t time = 0;    // virtual time (ns) at which it was detected
};

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
  bool Has(int rule) const {
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

// "R74" -> kR74StaleCommandBuffer ...; kNone for anything else.
PlantedBug PlantedBugFromRule(int rule);
int RuleOf(PlantedBug bug);

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_VIOLATION_H_
