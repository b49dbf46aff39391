// The kernel behind the runtime model's kernel-thunk callbacks (D3DDDI_DEVICECALLBACKS).
//
// A user-mode driver reaches the kernel (Dxgkrnl, the KMD, the GPU) only through the runtime's
// kernel-thunk callbacks: pfnCreateContextCb, pfnRenderCb, pfnAllocateCb, ... Every runtime
// Device owns one gpu::KernelStack (wddm/kernel_stack.h: the model Dxgkrnl + model KMD + GPU in
// virtual time). The runtime's thunks keep the contract checks of the UMD boundary (R15, R16,
// R17, R47/R60, R67, R68, R70, R71) and forward every call, with the kernel's device handle,
// through the stack's C table; the stack's own checks (R74-R78) come back as violation lines
// of the device ("R75 seq=... fn=kernel ...").
//
// Kernel-layer interposition (recorders, transcripts). The KMD entry points (DxgkDdi*), the
// Dxgkrnl callbacks (DxgkCb*), the model GPU's observer (GpuFenceRetired: the GPU content
// digest of every retired fence, wddm/dxgkrnl.h) and the runtime-to-kernel thunk table can be
// wrapped, as their own layer, in three ways; all apply to each Device created afterwards,
// innermost first:
//   1. RuntimeOptions::kernel_wrappers (in-process, per device; e.g. gpu::KernelTranscript);
//   2. SetKernelTableHook(...) (in-process, process-wide; e.g. a recorder linked into the app);
//   3. a driver library (typically a recorder shim loaded as the driver) exporting
//        extern "C" const void* CltraceWrapKernelTable(const char* which, const void* table);
//      The runtime calls it with which = "kmd" (DRIVER_INITIALIZATION_DATA), "dxgkrnl"
//      (DXGKRNL_INTERFACE), "gpu_observer" (CLTRACE_GPU_OBSERVER, our own table) and
//      "kernel_thunks" (D3DDDI_DEVICECALLBACKS: the runtime -> kernel side; the UMD-facing
//      table is D3D10DDIARG_CREATEDEVICE.pKTCallbacks, which a shim sees anyway) and uses the
//      table it returns (return `table` itself to not interpose; a hook that does not know a
//      `which` must do that). The returned table must stay valid until the device is
//      destroyed.
// The model's tables are process-wide constants, so a wrapper may keep the real table in a
// global. gpu::KernelExecutionContext() tells a wrapper when a call runs on a kernel "thread"
// (vidsch / interrupt / dpc) rather than inside the UMD call that let virtual time pass.
//
// Thread-safety: SetKernelTableHook may be called at any time; it affects devices created
// afterwards. Devices' kernels are independent.
#ifndef CLTRACE_RUNTIME_KERNEL_H_
#define CLTRACE_RUNTIME_KERNEL_H_

#include <functional>
#include <string>

#include "ddi/ddi_abi.h"
#include "wddm/kernel_stack.h"

namespace cltrace::runtime {

// Name of the optional C hook a driver library may export (see above).
inline constexpr char kWrapKernelTableSymbol[] = "CltraceWrapKernelTable";
using WrapKernelTableFn = const void* (*)(const char* which, const void* table);

// Process-wide: called once per Device being created; returns the wrappers to install around
// that device's kernel tables. An empty function removes the hook.
using KernelTableHook = std::function<gpu::TableWrappers()>;
void SetKernelTableHook(KernelTableHook hook);

// For the other driver tables a workload drives without a D3D11 device (the DX6 driver of
// ddi-spec §7, `which` = "dx6_buffers" for DD_D3DBUFCALLBACKS and "dx6_hal" for
// D3DHAL_CALLBACKS3): loads the driver library as a Device would (`driver_path`, else
// $CLTRACE_DRIVER, else the reference driver) and passes `table` through its
// CltraceWrapKernelTable hook, so a recorder shim loaded as the driver records those calls
// too. Returns `table` itself when the library has no hook or cannot be loaded.
const void* WrapWithDriverHook(const char* which, const void* table,
                               const std::string& driver_path = "");

}  // namespace cltrace::runtime

#endif  // CLTRACE_RUNTIME_KERNEL_H_
