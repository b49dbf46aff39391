// The replay kernel: the memory and bookkeeping behind the kernel-thunk callbacks.
//
// Kernel-thunk callbacks are answered with the recorded outputs (callbacks.cc applies them with
// the codec's ApplyOutputs*). What the recording cannot provide is memory: every pointer the
// recorded kernel handed out (command buffers, allocation and patch-location lists, lock
// pointers) is mapped to a zeroed buffer of the recorded size, the same recorded pointer to
// the same buffer, so the driver sees the aliasing the recorded kernel produced (e.g. the two
// alternating command buffers of a context). When the driver makes a kernel call the recording
// does not show, the fallback answers it like an infinitely fast kernel (fresh handles, the
// context's buffers again).
//
// Submissions: each RenderCb/PresentCb is counted and the submitted command range is folded
// into a digest (wddm/digest.h) after canonicalisation by the session (driver handle addresses
// replaced by recorded handle ids).
//
// Thread-safety: every method may be called from any thread (one mutex).
#ifndef CLTRACE_REPLAYER_INTERNAL_KERNEL_H_
#define CLTRACE_REPLAYER_INTERNAL_KERNEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "replayer/replay.h"

namespace cltrace::replay::internal {

// Bytes of one allocation-list / patch-location-list entry.
inline constexpr uint64_t kAllocationEntryBytes = 8;
inline constexpr uint64_t kPatchEntryBytes = 32;

class ReplayKernel {
 public:
  ReplayKernel() = default;
  ReplayKernel(const ReplayKernel&) = delete;
  ReplayKernel& operator=(const ReplayKernel&) = delete;

  // The buffer standing for pointer `recorded` of the recording, at least `bytes` long (a
  // later, larger recording of the same pointer gets a new buffer; the old one stays valid).
  void* Buffer(uint64_t recorded, uint64_t bytes);
  // A fresh zeroed buffer (fallback answers).
  void* Fresh(uint64_t bytes);
  // A kernel handle value the recording never uses (fallback answers).
  uint32_t NewHandle();

  // The buffers a context writes into next (after CreateContextCb and every RenderCb).
  struct ContextBuffers {
    void* command = nullptr;
    uint32_t command_size = 0;
    void* allocations = nullptr;
    uint32_t allocation_entries = 0;
    void* patches = nullptr;
    uint32_t patch_entries = 0;
  };
  void SetContext(uint32_t hcontext, const ContextBuffers& buffers);
  ContextBuffers Context(uint32_t hcontext);

  // A RenderCb of `hcontext` submitting [offset, offset + length) of its current command
  // buffer: counted and, if `digest`, digested (the words pass through `canon` first). False
  // if the range is outside the buffer (nothing digested).
  bool Submit(uint32_t hcontext, uint32_t offset, uint32_t length, uint32_t allocations,
              bool digest, const std::function<void(absl::Span<uint64_t>)>& canon);
  void Present();

  KernelSummary summary();

 private:
  struct Owned {
    std::unique_ptr<uint64_t[]> words;
    uint64_t bytes = 0;
  };
  void* NewBuffer(uint64_t bytes);

  std::mutex mu_;
  absl::flat_hash_map<uint64_t, void*> by_recorded_;
  absl::flat_hash_map<uint64_t, uint64_t> recorded_bytes_;
  std::vector<Owned> buffers_;
  absl::flat_hash_map<uint32_t, ContextBuffers> contexts_;
  uint32_t next_handle_ = 0x7fff0000;
  KernelSummary summary_;
};

}  // namespace cltrace::replay::internal

#endif  // CLTRACE_REPLAYER_INTERNAL_KERNEL_H_
