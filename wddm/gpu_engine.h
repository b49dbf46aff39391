// The GPU hardware model: one engine per node, each with a ring of submitted DMA-buffer ranges
// that it executes in order, in virtual time, against the content model; completions and
// faults are latched in interrupt-status registers and an interrupt line is asserted.
//
// The model KMD is the only intended user (it "programs the hardware"): DxgkDdiSubmitCommand
// calls Submit with a DMA-buffer physical address, DxgkDdiInterruptRoutine calls
// ReadInterruptStatus. DMA buffers are fetched by physical address from memory the OS
// (gpu::Dxgkrnl) mapped with MapDmaMemory; they are not copied: the GPU reads them when it
// executes the entry, as hardware would, so the owner keeps them alive until the fence
// completed.
//
// Execution of the DMA format (wddm/README.md, "Command encoding"): references are GPU addresses
// resolved through a GpuMemoryMap (VidMm's view of which allocation lives where); a command
// that references an address where no allocation is resident, or whose operands are out of
// range, faults the entry: the rest of it is skipped and a DMA_FAULTED cause is latched.
//
// Thread-safety: none; runs under gpu::Dxgkrnl's lock like the rest of the model.
#ifndef CLTRACE_WDDM_GPU_ENGINE_H_
#define CLTRACE_WDDM_GPU_ENGINE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/types/span.h"
#include "wddm/content_model.h"
#include "wddm/scheduler.h"

namespace cltrace::gpu {

// Where an address points, as far as the GPU can tell.
struct ResolvedAddress {
  AllocationId allocation = 0;
  bool video = false;  // in a GPU-accessible segment (render commands need this)
};

class GpuMemoryMap {
 public:
  virtual ~GpuMemoryMap() = default;
  // The allocation whose range starts at `address`; nullopt if none.
  virtual std::optional<ResolvedAddress> Resolve(uint64_t address) const = 0;
};

// Virtual cost of GPU work. Only relative sizes matter; they shape the interleaving of CPU
// calls and completions, and are fixed so runs are reproducible.
struct GpuTiming {
  VirtualTime per_entry_ns = 2000;    // ring-entry fetch and fence write
  VirtualTime per_command_ns = 400;   // decode + execute one command
  VirtualTime per_vertex_ns = 2;      // draws
  VirtualTime per_kib_paged_ns = 50;  // paging transfers / fills
};

class GpuEngine {
 public:
  struct NodeStatus {
    bool dma_completed = false;
    uint64_t completed_fence = 0;  // last fence completed on the node (monotonic)
    bool dma_faulted = false;
    uint64_t faulted_fence = 0;
    std::string fault;  // why the entry faulted
  };
  struct InterruptStatus {
    std::vector<NodeStatus> nodes;
    bool vsync = false;  // a present blit reached the display (CRTC-type cause)
    bool Any() const;
  };
  struct Stats {
    uint64_t entries = 0, paging_entries = 0, commands = 0, faults = 0;
  };

  GpuEngine(Scheduler* scheduler, ContentModel* content, const GpuMemoryMap* memory,
            uint32_t num_nodes, GpuTiming timing);

  // The interrupt line: called (from a scheduler event) whenever a cause becomes pending while
  // none was. The handler must eventually call ReadInterruptStatus to acknowledge.
  void SetInterruptLine(absl::AnyInvocable<void()> assert_interrupt) {
    assert_interrupt_ = std::move(assert_interrupt);
  }

  // Makes `words` readable by the GPU at physical address `physical` (4-byte aligned).
  void MapDmaMemory(uint64_t physical, absl::Span<const uint32_t> words);
  void UnmapDmaMemory(uint64_t physical);

  // Ring write: queues the `bytes` of DMA buffer at `physical` on `node`. After executing them
  // the engine writes `fence` to the node's completed-fence register and raises DMA_COMPLETED
  // (plus DMA_FAULTED if the range is not mapped or a command faulted).
  void Submit(uint32_t node, uint64_t physical, uint32_t bytes, uint64_t fence, bool paging);

  // Interrupt-status read with acknowledge: returns the latched causes and clears them.
  InterruptStatus ReadInterruptStatus();

  // The content the entry with `fence` on `node` left (faulted or not): the content model's
  // SubsetDigest over the allocations its commands wrote, taken the moment the engine
  // completed it. A function of the entry's own work only: neither when the interrupt and the
  // DPC ran, nor what other CPU threads created, destroyed or wrote around the completion
  // shows in it (their order relative to a completion in virtual time depends on the kernel
  // lock order of calls that leave no trace of it). An entry that wrote nothing (paging,
  // markers only) gives the digest of no allocation. Each completion is kept
  // until taken (in completion order; older ones not taken are dropped): nullopt if the node
  // completed no such entry or it was taken already.
  std::optional<uint64_t> TakeCompletionDigest(uint32_t node, uint64_t fence);

  uint32_t num_nodes() const { return static_cast<uint32_t>(nodes_.size()); }
  uint64_t completed_fence(uint32_t node) const { return nodes_[node].completed_fence; }
  // Last value a kFence command wrote on the node (the DMA-buffer tail the KMD patched).
  uint64_t last_dma_fence(uint32_t node) const { return nodes_[node].last_dma_fence; }
  bool busy(uint32_t node) const { return nodes_[node].running || !nodes_[node].ring.empty(); }
  bool idle() const;
  const Stats& stats() const { return stats_; }

 private:
  struct Entry {
    absl::Span<const uint32_t> dma;
    uint64_t fence = 0;
    bool paging = false;
    std::string fetch_fault;  // the range was not mapped
  };
  struct Node {
    std::deque<Entry> ring;
    bool running = false;
    uint64_t completed_fence = 0;
    uint64_t last_dma_fence = 0;
    NodeStatus pending;
    std::deque<std::pair<uint64_t, uint64_t>> completion_digests;  // (fence, digest)
  };

  void Kick(uint32_t node);
  // Executes `e` against the content model; on a fault sets `fault` and stops. Appends the
  // allocation every executed content-changing command wrote to `written`.
  void Execute(uint32_t node, const Entry& e, std::string* fault,
               std::vector<AllocationId>* written);
  void Complete(uint32_t node, const Entry& e, std::string fault,
                absl::Span<const AllocationId> written);
  void Latch();

  Scheduler* scheduler_;
  ContentModel* content_;
  const GpuMemoryMap* memory_;
  GpuTiming timing_;
  std::vector<Node> nodes_;
  std::map<uint64_t, absl::Span<const uint32_t>> dma_memory_;  // physical base -> words
  bool vsync_pending_ = false;
  bool line_asserted_ = false;
  absl::AnyInvocable<void()> assert_interrupt_;
  Stats stats_;
};

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_GPU_ENGINE_H_
