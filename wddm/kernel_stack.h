// Wires the kernel side of the GPU model together: gpu::Dxgkrnl (kernel thunks, VidMm, VidSch,
// the GPU) and gpu::ModelKmd, connected through their C tables, with optional wrappers around
// each table so a recorder (or gpu::KernelTranscript) sees every kernel-layer call:
//   UMD --D3DDDI_DEVICECALLBACKS--> Dxgkrnl --DRIVER_INITIALIZATION_DATA--> ModelKmd
//   ModelKmd --DXGKRNL_INTERFACE--> Dxgkrnl
//   Dxgkrnl --CLTRACE_GPU_OBSERVER--> (the observation point: GpuFenceRetired per retired
//                                      fence, with the GPU content digest; see wddm/dxgkrnl.h)
//
// Thread-safety: as gpu::Dxgkrnl (all calls may come from any thread).
//
// Example (the runtime model):
//   KernelStack stack(KernelStackOptions{}, &violations);
//   HANDLE dev = stack.kernel().CreateDevice().value();
//   create_device_args.hRTDevice.handle = dev;
//   create_device_args.pKTCallbacks =
//   const_cast<D3DDDI_DEVICECALLBACKS*>(stack.device_callbacks());
//   adapter_funcs.pfnCreateDevice(hAdapter, &create_device_args);   // UMD calls CreateContextCb
#ifndef CLTRACE_WDDM_KERNEL_STACK_H_
#define CLTRACE_WDDM_KERNEL_STACK_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "ddi/ddi_abi.h"
#include "wddm/dxgkrnl.h"
#include "wddm/model_kmd.h"
#include "wddm/violation.h"

namespace cltrace::gpu {

// Each hook receives the real table and returns the one to use instead (the same pointer for
// no interposition). The returned tables must outlive the stack.
struct TableWrappers {
  std::function<const DRIVER_INITIALIZATION_DATA*(const DRIVER_INITIALIZATION_DATA*)> kmd;
  std::function<const DXGKRNL_INTERFACE*(const DXGKRNL_INTERFACE*)> dxgkrnl;
  std::function<const D3DDDI_DEVICECALLBACKS*(const D3DDDI_DEVICECALLBACKS*)> device_callbacks;
  std::function<const CLTRACE_GPU_OBSERVER*(const CLTRACE_GPU_OBSERVER*)> gpu_observer;
};

struct KernelStackOptions {
  DxgkrnlOptions kernel;
  ModelKmdOptions kmd;
  // One planted bug for the whole stack: applied to whichever part misbehaves for it
  // (R75/R76 the kernel, R77/R78 the KMD; R74 belongs to gpu::UmdDevice, R79/R80 to DX6).
  PlantedBug bug = PlantedBug::kNone;
};

class KernelStack {
 public:
  KernelStack(KernelStackOptions options, ViolationSink* violations, TableWrappers wrappers = {});
  ~KernelStack();

  Dxgkrnl& kernel() { return *kernel_; }
  ModelKmd& kmd() { return *kmd_; }
  // The kernel-thunk table to hand to a UMD (wrapped if a hook was given).
  const D3DDDI_DEVICECALLBACKS* device_callbacks() const { return callbacks_; }
  // The tables as the stack wired them (after the wrapper hooks), e.g. for a recorder that
  // wants to know what it wrapped.
  const DRIVER_INITIALIZATION_DATA* kmd_table() const { return kmd_table_; }
  const DXGKRNL_INTERFACE* dxgkrnl_table() const { return dxgkrnl_table_; }
  const CLTRACE_GPU_OBSERVER* gpu_observer_table() const { return observer_table_; }

 private:
  std::unique_ptr<Dxgkrnl> kernel_;
  std::unique_ptr<ModelKmd> kmd_;
  const D3DDDI_DEVICECALLBACKS* callbacks_ = nullptr;
  const DRIVER_INITIALIZATION_DATA* kmd_table_ = nullptr;
  const DXGKRNL_INTERFACE* dxgkrnl_table_ = nullptr;
  const CLTRACE_GPU_OBSERVER* observer_table_ = nullptr;
};

// KMD entry-point calls (DxgkDdi*), Dxgkrnl callbacks (DxgkCb*) and GPU observer calls
// (GpuFenceRetired) made by every KernelStack of this process so far: the calls a recording
// of the kernel layer holds. Counted by an innermost wrapper that every stack installs around
// the model's (static) tables, below any TableWrappers hook; kernel-thunk callbacks are not
// included (whoever hands the table to the UMD counts those, e.g. the runtime model).
uint64_t ProcessKernelLayerCalls();

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_KERNEL_STACK_H_
