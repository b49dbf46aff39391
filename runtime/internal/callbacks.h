// Callback tables the runtime hands to the driver: the core-layer callbacks of each context
// (callbacks.cc) and the kernel-thunk callbacks of the device (kernel_callbacks.cc).
//
// Thread-safety: Init/Fill before the driver sees the table; SwapCoreCallbacks only inside the
// context's domain while the driver is not inside a call of that context.
#ifndef CLTRACE_RUNTIME_INTERNAL_CALLBACKS_H_
#define CLTRACE_RUNTIME_INTERNAL_CALLBACKS_H_

#include <string>

#include "runtime/internal/state.h"

namespace cltrace::runtime::internal {

void InitCoreLayer(CoreLayer* layer, ContextState* ctx, std::string name);
// R6 probe: replaces every pointer of the table with the other generation's thunks; a later
// call through an old pointer is reported.
void SwapCoreCallbacks(CoreLayer* layer);

void FillKernelCallbacks(D3DDDI_DEVICECALLBACKS* table);

// The adapter callbacks OpenAdapter10_2 hands the driver (D3DDDI_ADAPTERCALLBACKS): the
// model has no kernel-mode private adapter data, so QueryAdapterInfoCb answers with zeroed
// bytes of the size asked for, and GetMultisampleMethodListCb lists one method (1 sample,
// 1 quality level). Stateless; one table for every device.
const D3DDDI_ADAPTERCALLBACKS* AdapterCallbacks();

// Draw-state check of a submitted reference-driver command buffer (kernel_callbacks.cc).
void CheckSubmittedCommands(DeviceState* dev, const uint8_t* data, uint32_t size);

}  // namespace cltrace::runtime::internal

#endif  // CLTRACE_RUNTIME_INTERNAL_CALLBACKS_H_
