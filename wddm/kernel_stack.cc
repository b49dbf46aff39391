#include "wddm/kernel_stack.h"

#include <atomic>

#include "wddm/counting_call.h"

namespace cltrace::gpu {
namespace {

// The model's KMD and Dxgkrnl tables are static (the same for every instance, dispatching on
// the handle argument), so one process-wide counting table per kind wraps all of them.
std::atomic<uint64_t> g_kernel_layer_calls{0};
std::atomic<const DRIVER_INITIALIZATION_DATA*> g_real_kmd{nullptr};
std::atomic<const DXGKRNL_INTERFACE*> g_real_dxgkrnl{nullptr};
std::atomic<const CLTRACE_GPU_OBSERVER*> g_real_observer{nullptr};

#define CLTRACE_COUNT_KMD(M) \
  CLTRACE_COUNTING_CALL(g_kernel_layer_calls, g_real_kmd, DRIVER_INITIALIZATION_DATA, M)
#define CLTRACE_COUNT_DXGKRNL(M) \
  CLTRACE_COUNTING_CALL(g_kernel_layer_calls, g_real_dxgkrnl, DXGKRNL_INTERFACE, M)
#define CLTRACE_COUNT_OBSERVER(M) \
  CLTRACE_COUNTING_CALL(g_kernel_layer_calls, g_real_observer, CLTRACE_GPU_OBSERVER, M)
const DRIVER_INITIALIZATION_DATA kCountingKmd = {
    CLTRACE_COUNT_KMD(DxgkDdiCreateDevice),
    CLTRACE_COUNT_KMD(DxgkDdiCreateContext),
    CLTRACE_COUNT_KMD(DxgkDdiCreateAllocation),
    CLTRACE_COUNT_KMD(DxgkDdiDestroyAllocation),
    CLTRACE_COUNT_KMD(DxgkDdiRender),
    CLTRACE_COUNT_KMD(DxgkDdiPresent),
    CLTRACE_COUNT_KMD(DxgkDdiBuildPagingBuffer),
    CLTRACE_COUNT_KMD(DxgkDdiPatch),
    CLTRACE_COUNT_KMD(DxgkDdiSubmitCommand),
    CLTRACE_COUNT_KMD(DxgkDdiInterruptRoutine),
    CLTRACE_COUNT_KMD(DxgkDdiDpcRoutine),
    CLTRACE_COUNT_KMD(DxgkDdiDestroyContext),
    CLTRACE_COUNT_KMD(DxgkDdiDestroyDevice),
};
const DXGKRNL_INTERFACE kCountingDxgkrnl = {
    CLTRACE_COUNT_DXGKRNL(DxgkCbNotifyInterrupt),
    CLTRACE_COUNT_DXGKRNL(DxgkCbQueueDpc),
    CLTRACE_COUNT_DXGKRNL(DxgkCbNotifyDpc),
};
const CLTRACE_GPU_OBSERVER kCountingObserver = {
    CLTRACE_COUNT_OBSERVER(pfnGpuFenceRetired),
};
#undef CLTRACE_COUNT_KMD
#undef CLTRACE_COUNT_DXGKRNL
#undef CLTRACE_COUNT_OBSERVER
static_assert(sizeof(DRIVER_INITIALIZATION_DATA) == 13 * sizeof(void*),
              "a KMD entry point is missing from the counting table");
static_assert(sizeof(DXGKRNL_INTERFACE) == 3 * sizeof(void*),
              "a Dxgkrnl callback is missing from the counting table");
static_assert(sizeof(CLTRACE_GPU_OBSERVER) == 1 * sizeof(void*),
              "a GPU observer call is missing from the counting table");

}  // namespace

uint64_t ProcessKernelLayerCalls() { return g_kernel_layer_calls.load(); }

KernelStack::KernelStack(KernelStackOptions options, ViolationSink* violations,
                         TableWrappers wrappers) {
  if (options.bug == PlantedBug::kR75FenceMismatch ||
      options.bug == PlantedBug::kR76SubmitUnpatched) {
    options.kernel.bug = options.bug;
  }
  if (options.bug == PlantedBug::kR77DpcBeforeNotify ||
      options.bug == PlantedBug::kR78SplitOffsetOrder) {
    options.kmd.bug = options.bug;
  }
  kernel_ = std::make_unique<Dxgkrnl>(options.kernel, violations);
  kmd_ = std::make_unique<ModelKmd>(&kernel_->hardware(), options.kmd, violations);
  // Counting first (innermost): the real tables are static, so the globals never change.
  g_real_kmd.store(kmd_->driver_initialization_data(), std::memory_order_release);
  g_real_dxgkrnl.store(kernel_->dxgkrnl_interface(), std::memory_order_release);
  g_real_observer.store(kernel_->gpu_observer(), std::memory_order_release);
  const DRIVER_INITIALIZATION_DATA* kmd_table = &kCountingKmd;
  if (wrappers.kmd) kmd_table = wrappers.kmd(kmd_table);
  const DXGKRNL_INTERFACE* cb_table = &kCountingDxgkrnl;
  if (wrappers.dxgkrnl) cb_table = wrappers.dxgkrnl(cb_table);
  const CLTRACE_GPU_OBSERVER* observer_table = &kCountingObserver;
  if (wrappers.gpu_observer) observer_table = wrappers.gpu_observer(observer_table);
  kmd_table_ = kmd_table;
  dxgkrnl_table_ = cb_table;
  observer_table_ = observer_table;
  kernel_->SetGpuObserver(observer_table);
  kernel_->StartAdapter(kmd_table, kmd_->adapter());
  kmd_->Start(cb_table, kernel_->dxgkrnl_handle());
  callbacks_ = kernel_->device_callbacks();
  if (wrappers.device_callbacks) callbacks_ = wrappers.device_callbacks(callbacks_);
}

KernelStack::~KernelStack() {
  // The kernel first: it may still reference KMD objects, never the other way round after
  // this point.
  kernel_.reset();
  kmd_.reset();
}

}  // namespace cltrace::gpu
