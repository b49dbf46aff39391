// The kernel side of the GPU model ("dxgkrnl": the kernel thunks, VidMm and VidSch of WDDM).
//
// A UMD talks to it only through the D3DDDI_DEVICECALLBACKS table (pfnAllocateCb,
// pfnRenderCb, pfnPresentCb, pfnCreateContextCb ...), the model KMD only through the
// DXGKRNL_INTERFACE table, and it calls the KMD only through the DRIVER_INITIALIZATION_DATA
// table it was started with. Every kernel-layer call therefore crosses a C table that a
// recorder can wrap (see wddm/kernel_stack.h for the wiring and the wrap hooks).
//
// Flow (ddi-spec §6): CreateDevice -> DxgkDdiCreateDevice (DXGK_DEVICEINFO);
// pfnCreateContextCb -> DxgkDdiCreateContext, hands out command buffer + allocation list +
// patch-location list; pfnAllocateCb -> DxgkDdiCreateAllocation; pfnRenderCb / pfnPresentCb ->
// DxgkDdiRender / DxgkDdiPresent into a DMA buffer (multipass when full), then the next
// buffers; VidSch (virtual-time events) makes allocations resident (DxgkDdiBuildPagingBuffer +
// DxgkDdiSubmitCommand of the paging buffer, no patch), splits a DMA buffer at patch-list split
// points when its allocations do not fit together, DxgkDdiPatch with the submission fence id,
// DxgkDdiSubmitCommand with the same id; the GPU completes -> DxgkDdiInterruptRoutine ->
// DxgkCbNotifyInterrupt + DxgkCbQueueDpc -> DxgkDdiDpcRoutine -> DxgkCbNotifyDpc -> retire.
//
// Time is virtual (gpu::Scheduler): each kernel-thunk call costs `cpu_per_call_ns` and runs
// every event that became due, so the same sequence of calls always gives the same
// interleaving, completion order and digests. Nothing here starts a thread or reads a clock.
//
// Checks (reported to the ViolationSink with rule numbers): R74 (pfnRenderCb before
// pfnCreateContextCb; CommandOffset/CommandLength/NumAllocations/NumPatchLocations beyond the
// buffers handed out last; commands not written in the buffer handed out last), R77 (ISR /
// DPC callback order, fences reported), R78 (SplitOffset non-decreasing in the KMD's patch
// list). Planted bugs: kR75FenceMismatch and kR76SubmitUnpatched (VidSch misbehaves).
//
// Thread-safety: all public methods and all table entry points may be called from any thread;
// one lock serialises the model (KMD entry points and DxgkCb* callbacks run under it).
//
// Example (normally through gpu::KernelStack):
//   Dxgkrnl kernel(DxgkrnlOptions{}, &sink);
//   ModelKmd kmd(&kernel.hardware(), ModelKmdOptions{}, &sink);
//   kernel.StartAdapter(kmd.driver_initialization_data(), kmd.adapter());
//   kmd.Start(kernel.dxgkrnl_interface(), kernel.dxgkrnl_handle());
//   HANDLE dev = kernel.CreateDevice().value();
//   // ... UMD: kernel.device_callbacks()->pfnCreateContextCb(dev, &cc) ...
//   kernel.WaitIdle();
//   uint64_t d = kernel.AllocationDigest(hAllocation).value();
#ifndef CLTRACE_WDDM_DXGKRNL_H_
#define CLTRACE_WDDM_DXGKRNL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ddi/ddi_abi.h"
#include "wddm/gpu_engine.h"
#include "wddm/scheduler.h"
#include "wddm/violation.h"

namespace cltrace::gpu {

// Which kernel "thread" of the model is running on the calling thread right now: "vidsch",
// "interrupt" or "dpc" while a virtual-time event of that kind runs (possibly inside a
// kernel-thunk call that let time pass), nullptr otherwise. Recorders use it to attribute
// kernel-layer calls to the kernel's own threads instead of the UMD call that happened to
// advance the clock.
const char* KernelExecutionContext();

struct KernelTiming {
  VirtualTime cpu_per_call_ns = 1000;   // each kernel-thunk call
  VirtualTime vidsch_latency_ns = 500;  // queued DMA buffer -> VidSch looks at it
  VirtualTime isr_latency_ns = 300;     // interrupt asserted -> ISR runs
  VirtualTime dpc_latency_ns = 1500;    // DPC queued -> DPC runs
};

struct DxgkrnlOptions {
  uint64_t video_memory_bytes = 64ull << 20;
  uint32_t num_nodes = 2;
  GpuTiming gpu;
  KernelTiming timing;
  uint32_t command_buffers_per_context = 2;     // rotated on every pfnRenderCb (R74 poison)
  uint32_t dma_buffers_per_context = 4;         // beyond this pfnRenderCb waits for completions
  uint32_t max_in_flight_per_node = 4;          // ring entries VidSch keeps queued per node
  uint32_t max_command_buffer_size = 1u << 20;  // larger resize requests are refused
  PlantedBug bug = PlantedBug::kNone;
};

class Dxgkrnl {
 public:
  struct Stats {
    uint64_t renders = 0, presents = 0;  // pfnRenderCb / pfnPresentCb calls
    uint64_t dma_buffers = 0;            // DMA buffers built (multipass counts each)
    uint64_t submissions = 0;            // DxgkDdiSubmitCommand of DMA buffers
    uint64_t paging_buffers = 0, paging_operations = 0;
    uint64_t splits = 0;  // extra portions from split points
    uint64_t interrupts = 0, dpcs = 0, vsyncs = 0, faults = 0;
    uint64_t allocations = 0;  // live
  };

  Dxgkrnl(DxgkrnlOptions options, ViolationSink* violations);
  ~Dxgkrnl();
  Dxgkrnl(const Dxgkrnl&) = delete;
  Dxgkrnl& operator=(const Dxgkrnl&) = delete;

  // The simulated GPU (owned here); the KMD programs it.
  GpuEngine& hardware();

  // DXGKRNL_INTERFACE the KMD must call (possibly wrapped by the caller before handing it on)
  // and the DXGKRNL_HADAPTER those callbacks take.
  const DXGKRNL_INTERFACE* dxgkrnl_interface() const;
  DXGKRNL_HADAPTER dxgkrnl_handle();
  // Registers the KMD (what DxgkInitialize + DxgkDdiAddDevice do). `kmd` may be a wrapper.
  void StartAdapter(const DRIVER_INITIALIZATION_DATA* kmd, DXGK_HADAPTER adapter);

  // The model GPU's observation point (CLTRACE_GPU_OBSERVER, our own table: Windows has no
  // such DDI). For every fence it retires (DMA and paging buffers, after DxgkCbNotifyDpc, in
  // retirement order) the kernel calls
  //   pfnGpuFenceRetired(dxgkrnl_handle(), node, fence, digest, paging)
  // where `digest` is what that ring entry wrote, right after the GPU executed it
  // (GpuEngine::TakeCompletionDigest), independent of when the DPC ran and of other threads.
  // gpu_observer() is the model's own table, which does nothing: it is there to be wrapped
  // (gpu::KernelStack installs it, wrapped, with SetGpuObserver). nullptr: no calls (default).
  // The call is made under the model's lock, like the DxgkCb* callbacks: an observer must not
  // call back into this kernel.
  const CLTRACE_GPU_OBSERVER* gpu_observer() const;
  void SetGpuObserver(const CLTRACE_GPU_OBSERVER* observer);

  // The kernel-thunk table a UMD gets as D3D10DDIARG_CREATEDEVICE.pKTCallbacks.
  const D3DDDI_DEVICECALLBACKS* device_callbacks() const;

  // What the D3D runtime does before calling the UMD's CreateDevice: DxgkDdiCreateDevice.
  // The returned handle is the hRTDevice / hDevice the UMD passes to every callback.
  absl::StatusOr<HANDLE> CreateDevice();
  // After the UMD's DestroyDevice: waits for the device's work, destroys what the UMD left
  // (contexts, allocations) and calls DxgkDdiDestroyDevice.
  absl::Status DestroyDevice(HANDLE device);
  // DXGK_DEVICEINFO the KMD returned for `device` (nullopt if unknown).
  std::optional<DXGK_DEVICEINFO> device_info(HANDLE device) const;

  // Virtual time.
  VirtualTime now() const;
  // now() without taking the lock: for observers that run inside kernel-layer calls (which
  // already hold it; now() would deadlock), e.g. gpu::KernelTranscript. Never a data race (the
  // clock is a relaxed atomic); exact inside a kernel-layer call, outside one it may be
  // already stale when it returns if other threads are using the model.
  VirtualTime NowForObserver() const;
  // Lets `ns` of virtual time pass (running what becomes due).
  void RunFor(VirtualTime ns);
  // Runs until nothing is pending. FailedPrecondition if queued work can never run (a wait on
  // a synchronization object nobody signals).
  absl::Status WaitIdle();

  // Content model: digest of an allocation's content as of the work completed so far.
  std::optional<uint64_t> AllocationDigest(D3DKMT_HALLOCATION allocation) const;
  // (handle, digest) of every live allocation, sorted by handle.
  std::vector<std::pair<uint32_t, uint64_t>> AllocationDigests() const;
  uint64_t CombinedDigest() const;
  // Segment id an allocation currently lives in (0 system, 1 video); nullopt if unknown.
  std::optional<uint32_t> AllocationSegment(D3DKMT_HALLOCATION allocation) const;

  Stats stats() const;
  uint64_t completed_fence(uint32_t node) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_DXGKRNL_H_
