#include "gpu/kernel_stack.h"

namespace cltrace::gpu {

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
  const DRIVER_INITIALIZATION_DATA* kmd_table = kmd_->driver_initialization_data();
  if (wrappers.kmd) kmd_table = wrappers.kmd(kmd_table);
  const DXGKRNL_INTERFACE* cb_table = kernel_->dxgkrnl_interface();
  if (wrappers.dxgkrnl) cb_table = wrappers.dxgkrnl(cb_table);
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
