// WrapDevice (recorder/recorder.h): the in-process API's way of wrapping one device table.
// Apart from contexts.cc because it reports through absl::Status, which the shim (built from
// the producer library without it) must not link (tests/recorder/shim_deps_test.cc).
#include "absl/status/status.h"
#include "recorder/internal/contexts.h"
#include "recorder/recorder.h"

namespace cltrace::recorder {

using internal::Contexts;

absl::Status WrapDevice(const DeviceTables& tables) {
  if (tables.device.pDrvPrivate == nullptr) {
    return absl::InvalidArgumentError("WrapDevice: null device handle");
  }
  if (tables.driver_funcs == nullptr) {
    return absl::InvalidArgumentError("WrapDevice: null driver table");
  }
  internal::Registry& r = Contexts();
  internal::DeviceCtx* ic = nullptr;
  if (tables.immediate.pDrvPrivate != nullptr) {
    ic = r.devices.Find(tables.immediate.pDrvPrivate);
    if (ic == nullptr) {
      return absl::FailedPreconditionError(
          "WrapDevice: the immediate context of this deferred context is not wrapped");
    }
  }
  // Wrapping a handle again (the same table re-wrapped, or handle memory reused) reuses its
  // context.
  internal::DeviceCtx* ctx = r.devices.Find(tables.device.pDrvPrivate);
  if (ctx != nullptr) {
    r.devices.Erase(tables.device.pDrvPrivate);
    internal::RecycleDeviceCtx(ctx);
  }
  ctx = internal::NewDeviceCtx();
  ctx->key = reinterpret_cast<uintptr_t>(tables.device.pDrvPrivate);
  ctx->is_dc = ic != nullptr;
  ctx->ic = ic != nullptr ? ic : ctx;
  ctx->driver = tables.driver_funcs;
  ctx->runtime = tables.runtime_funcs;
  ctx->dxgi_driver = tables.driver_dxgi;
  ctx->dxgi_runtime = tables.runtime_dxgi;
  if (tables.core_layer.handle != nullptr) ctx->layer = r.layers.Find(tables.core_layer.handle);
  internal::InstallDeviceThunks(ctx);
  internal::InstallDxgiThunks(ctx);
  r.devices.Insert(ctx->key, ctx);
  return absl::OkStatus();
}

}  // namespace cltrace::recorder
