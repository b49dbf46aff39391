// The process-wide kernel-table hook of runtime/kernel.h and the per-device assembly of the
// wrappers (options, hook, driver-library C hook), used by Device::Init.
#include "runtime/kernel.h"

#include <dlfcn.h>

#include <mutex>
#include <utility>
#include <vector>

#include "runtime/internal/driver_loader.h"
#include "runtime/internal/kernel_wiring.h"

namespace cltrace::runtime {
namespace {

std::mutex& HookMu() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
KernelTableHook& Hook() {
  static KernelTableHook* hook = new KernelTableHook;
  return *hook;
}

// `outer` around `inner`: inner's hook sees the real table, outer's hook sees inner's result.
gpu::TableWrappers Compose(gpu::TableWrappers inner, gpu::TableWrappers outer) {
  gpu::TableWrappers w;
  auto chain = [](auto a, auto b) {
    using F = decltype(a);
    if (!a) return b;
    if (!b) return a;
    return F([a, b](auto t) { return b(a(t)); });
  };
  w.kmd = chain(std::move(inner.kmd), std::move(outer.kmd));
  w.dxgkrnl = chain(std::move(inner.dxgkrnl), std::move(outer.dxgkrnl));
  w.device_callbacks = chain(std::move(inner.device_callbacks), std::move(outer.device_callbacks));
  w.gpu_observer = chain(std::move(inner.gpu_observer), std::move(outer.gpu_observer));
  return w;
}

}  // namespace

void SetKernelTableHook(KernelTableHook hook) {
  std::lock_guard<std::mutex> lock(HookMu());
  Hook() = std::move(hook);
}

const void* WrapWithDriverHook(const char* which, const void* table,
                               const std::string& driver_path) {
  // Loaded once per process and kept, as Device keeps its driver library.
  static internal::DriverLibrary* library = [&driver_path] {
    auto* l = new internal::DriverLibrary();
    if (!l->Load(driver_path).ok()) l->handle = nullptr;
    return l;
  }();
  if (library->handle == nullptr) return table;
  auto fn = reinterpret_cast<WrapKernelTableFn>(dlsym(library->handle, kWrapKernelTableSymbol));
  return fn != nullptr ? fn(which, table) : table;
}

namespace internal {

gpu::TableWrappers KernelWrappersFor(const RuntimeOptions& options, void* driver_library) {
  gpu::TableWrappers w = options.kernel_wrappers;
  {
    std::lock_guard<std::mutex> lock(HookMu());
    if (Hook()) w = Compose(std::move(w), Hook()());
  }
  if (driver_library != nullptr) {
    if (auto fn =
            reinterpret_cast<WrapKernelTableFn>(dlsym(driver_library, kWrapKernelTableSymbol))) {
      gpu::TableWrappers c;
      c.kmd = [fn](const DRIVER_INITIALIZATION_DATA* t) {
        return static_cast<const DRIVER_INITIALIZATION_DATA*>(fn("kmd", t));
      };
      c.dxgkrnl = [fn](const DXGKRNL_INTERFACE* t) {
        return static_cast<const DXGKRNL_INTERFACE*>(fn("dxgkrnl", t));
      };
      c.device_callbacks = [fn](const D3DDDI_DEVICECALLBACKS* t) {
        return static_cast<const D3DDDI_DEVICECALLBACKS*>(fn("kernel_thunks", t));
      };
      c.gpu_observer = [fn](const CLTRACE_GPU_OBSERVER* t) {
        return static_cast<const CLTRACE_GPU_OBSERVER*>(fn("gpu_observer", t));
      };
      w = Compose(std::move(w), std::move(c));
    }
  }
  return w;
}

}  // namespace internal
}  // namespace cltrace::runtime
