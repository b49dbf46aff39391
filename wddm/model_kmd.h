// The model kernel-mode driver: implements the DRIVER_INITIALIZATION_DATA entry points of
// ddi/ddi_abi.h (DxgkDdiCreateDevice ... DxgkDdiDpcRoutine) over the gpu::GpuEngine
// hardware model, and calls back into the kernel only through the DXGKRNL_INTERFACE table it
// was started with. Because both directions go through C tables, a recorder can interpose on
// every kernel-layer call.
//
// What it does, per ddi-spec §6:
//   CreateDevice      fills DXGK_DEVICEINFO (DMA buffer / list sizes for the device);
//   CreateContext     fills DXGK_CONTEXTINFO for a node;
//   CreateAllocation  sizes allocations from the UMD's AllocationDesc private data;
//   Render / Present  validate the untrusted user command buffer (wddm/README.md encoding),
//                     translate it into the DMA format with zero placeholders for addresses,
//                     emit the output patch list (SplitOffset = start of each command) and a
//                     fence command at the tail; multipass via MultipassOffset when the DMA
//                     buffer is full (STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER);
//   BuildPagingBuffer writes transfer / fill commands;
//   Patch             writes physical addresses and the SubmissionFenceId into the DMA buffer;
//   SubmitCommand     writes the ring (GpuEngine::Submit);
//   InterruptRoutine  reads the interrupt status, DxgkCbNotifyInterrupt per cause (DMA before
//                     CRTC), then DxgkCbQueueDpc;  DpcRoutine  DxgkCbNotifyDpc.
// Checks it makes on what the kernel gives it (reported to the ViolationSink): R75 (Patch and
// SubmitCommand fence ids equal, increasing per node) and R76 (a non-paging DMA buffer is
// patched before it is submitted). Planted bugs: kR77DpcBeforeNotify, kR78SplitOffsetOrder.
//
// Thread-safety: entry points are called by gpu::Dxgkrnl under its lock (the scheduler-class
// DDIs are never re-entered, ddi-spec §6.4); the object itself has no lock.
//
// Example:
//   Dxgkrnl kernel(options, &sink);
//   ModelKmd kmd(&kernel.hardware(), ModelKmdOptions{}, &sink);
//   kernel.StartAdapter(kmd.driver_initialization_data(), kmd.adapter());
//   kmd.Start(kernel.dxgkrnl_interface(), kernel.dxgkrnl_handle());
#ifndef CLTRACE_WDDM_MODEL_KMD_H_
#define CLTRACE_WDDM_MODEL_KMD_H_

#include <cstdint>
#include <map>
#include <vector>

#include "ddi/ddi_abi.h"
#include "wddm/gpu_engine.h"
#include "wddm/violation.h"

namespace cltrace::gpu {

struct ModelKmdOptions {
  uint32_t dma_buffer_size = 16 * 1024;  // bytes, DXGK_DEVICEINFO.DmaBufferSize
  uint32_t allocation_list_size = 128;   // entries
  uint32_t patch_location_list_size = 512;
  PlantedBug bug = PlantedBug::kNone;
};

class ModelKmd {
 public:
  ModelKmd(GpuEngine* hardware, ModelKmdOptions options, ViolationSink* violations);
  ~ModelKmd();
  ModelKmd(const ModelKmd&) = delete;
  ModelKmd& operator=(const ModelKmd&) = delete;

  // The entry-point table (what DriverEntry would pass to DxgkInitialize) and the miniport
  // adapter context every adapter-level entry point takes.
  const DRIVER_INITIALIZATION_DATA* driver_initialization_data() const;
  DXGK_HADAPTER adapter() { return DXGK_HADAPTER{this}; }

  // What DxgkDdiStartDevice does in a real driver (not in the catalog): keep the kernel's
  // callback table and adapter handle. Must be called before any entry point.
  void Start(const DXGKRNL_INTERFACE* dxgkrnl, DXGKRNL_HADAPTER handle);

  // Observability for tests and tools.
  uint64_t renders() const { return renders_; }
  uint64_t multipass_renders() const { return multipass_; }
  uint64_t patches() const { return patches_; }
  uint64_t submits() const { return submits_; }

  struct Device;
  struct Context;
  struct Allocation;

 private:
  friend struct KmdEntryPoints;
  void Violation(rules::Rule rule, std::string message);

  GpuEngine* hw_;
  ModelKmdOptions options_;
  ViolationSink* violations_;
  const DXGKRNL_INTERFACE* dxgkrnl_ = nullptr;
  DXGKRNL_HADAPTER dxgkrnl_handle_{};
  // R75/R76 bookkeeping: fence each DMA range was patched with, keyed by its physical start.
  std::map<uint64_t, uint32_t> patched_;
  std::vector<uint32_t> last_submitted_fence_;  // per node
  uint64_t renders_ = 0, multipass_ = 0, patches_ = 0, submits_ = 0;
};

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_MODEL_KMD_H_
