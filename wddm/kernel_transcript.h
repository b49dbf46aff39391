// A readable transcript of every kernel-layer call (kernel-thunk callbacks, KMD entry points,
// Dxgkrnl callbacks, the GPU observer's GpuFenceRetired) for golden tests, determinism checks
// and debugging. It interposes on the four C tables through gpu::TableWrappers, exactly where
// a recorder would, so it shows what
// a trace's kernel layer would contain: one line per call, nested calls indented under the
// call that made them, results appended, and the DMA commands each patched or paging buffer
// carries (decoded, with physical addresses) under the call that finished it.
//
// Handles are printed as stable names (dev1, kd1, kc1, ka1 ...) assigned in creation order, so
// the text does not depend on heap addresses. Line prefix: virtual time in ns, then the kernel
// thread ([vidsch], [interrupt], [dpc]; gpu::KernelExecutionContext) for calls the kernel made
// on its own rather than on behalf of the UMD call in progress; each thread nests separately.
//
// Thread-safety: C function pointers carry no state, so one transcript is active per process
// at a time (the most recently constructed); use it from one thread.
//
// Example:
//   KernelTranscript t;
//   KernelStack stack(options, &sink, t.Wrappers());
//   t.SetClock([&] { return stack.kernel().NowForObserver(); });
//   ... run a frame ...
//   std::string text = t.Text();
#ifndef CLTRACE_WDDM_KERNEL_TRANSCRIPT_H_
#define CLTRACE_WDDM_KERNEL_TRANSCRIPT_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ddi/ddi_abi.h"
#include "wddm/kernel_stack.h"
#include "wddm/scheduler.h"

namespace cltrace::gpu {

class KernelTranscript {
 public:
  KernelTranscript();
  ~KernelTranscript();
  KernelTranscript(const KernelTranscript&) = delete;
  KernelTranscript& operator=(const KernelTranscript&) = delete;

  // Hooks for KernelStack: remember the real tables, return the recording ones.
  TableWrappers Wrappers();
  void SetClock(std::function<VirtualTime()> clock) { clock_ = std::move(clock); }
  // Adds a free-form line (e.g. "# frame 1") at the current nesting depth.
  void Note(absl::string_view text);

  const std::vector<std::string>& lines() const { return lines_; }
  std::string Text() const;

  // Internal (used by the C wrappers in the .cc).
  size_t Begin(absl::string_view layer, std::string call);
  void End(size_t line, std::string result);
  void Detail(std::string text);
  std::string Name(const void* p, const char* prefix);     // lookup (or assign)
  std::string NewName(const void* p, const char* prefix);  // assign at creation
  const DRIVER_INITIALIZATION_DATA* kmd_ = nullptr;
  const DXGKRNL_INTERFACE* dxgkrnl_ = nullptr;
  const D3DDDI_DEVICECALLBACKS* callbacks_ = nullptr;
  const CLTRACE_GPU_OBSERVER* observer_ = nullptr;

 private:
  std::function<VirtualTime()> clock_;
  std::vector<std::string> lines_;
  std::map<std::string, int> depth_;  // per kernel thread ("" = the caller's thread)
  std::vector<std::string> line_thread_;
  std::map<const void*, std::string> names_;
  std::map<std::string, int> counters_;
};

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_KERNEL_TRANSCRIPT_H_
