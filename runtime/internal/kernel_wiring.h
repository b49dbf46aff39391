// Assembly of a device's kernel-table wrappers (runtime/kernel.h), innermost first:
// RuntimeOptions::kernel_wrappers, the process-wide SetKernelTableHook, the driver library's
// CltraceWrapKernelTable export.
//
// Thread-safety: may be called from any thread.
#ifndef CLTRACE_RUNTIME_INTERNAL_KERNEL_WIRING_H_
#define CLTRACE_RUNTIME_INTERNAL_KERNEL_WIRING_H_

#include "runtime/options.h"
#include "wddm/kernel_stack.h"

namespace cltrace::runtime::internal {

// `driver_library`: the dlopen handle of the loaded driver (nullptr: none).
gpu::TableWrappers KernelWrappersFor(const RuntimeOptions& options, void* driver_library);

}  // namespace cltrace::runtime::internal

#endif  // CLTRACE_RUNTIME_INTERNAL_KERNEL_WIRING_H_
