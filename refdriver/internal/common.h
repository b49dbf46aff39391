// Helpers shared by the reference driver's DDI implementations.
//
// Thread-safety: as noted per function.
#ifndef CLTRACE_REFDRIVER_INTERNAL_COMMON_H_
#define CLTRACE_REFDRIVER_INTERNAL_COMMON_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "format/ddi_abi.h"
#include "refdriver/internal/driver.h"

namespace cltrace::refdriver {

#define CLTRACE_DDI_EXPORT extern "C" __attribute__((visibility("default")))

inline Device* AsDevice(D3D10DDI_HDEVICE h) { return static_cast<Device*>(h.pDrvPrivate); }
inline DeferredContext* AsDc(D3D10DDI_HDEVICE h) {
  return static_cast<DeferredContext*>(h.pDrvPrivate);
}
inline IcObject* AsIc(void* p) { return static_cast<IcObject*>(p); }
inline LocalObject* AsLocal(void* p) { return static_cast<LocalObject*>(p); }

// pfnSetErrorCb on the IC's / a DC's core layer, through the runtime's table (R6, R28).
void SetErrorIc(Device* dev, HRESULT hr);
void SetErrorDc(DeferredContext* dc, HRESULT hr);

// Counts one DDI call of `dev` (for `removed=N`).
inline void CountCall(Device* dev) { dev->ddi_calls.fetch_add(1, std::memory_order_relaxed); }

// For DDIs that may report D3DDDIERR_DEVICEREMOVED: reports it (once, through `dc`'s core
// layer if non-null, else the IC's) when the configured call number has been reached.
void MaybeReportRemoved(Device* dev, DeferredContext* dc);

// True if this call of `site` is configured to fail (counts the call).
bool InjectFault(Device* dev, FaultSite site);

// Enters the IC domain for an IC-domain DDI; reports R10 on overlap.
class IcDomainScope {
 public:
  explicit IcDomainScope(Device* dev);
  ~IcDomainScope();

 private:
  Device* dev_;
  bool entered_;
};

// Validates a DC-table call on `h` and enters the DC's domain. ok() is false when the handle is
// not a live DC of this driver (reported; the DDI then does nothing and never touches the
// handle memory). `state` is the registry state at entry.
class DcCallScope {
 public:
  DcCallScope(D3D10DDI_HDEVICE h, const char* rule_if_dead);
  ~DcCallScope();
  bool ok() const { return dc_ != nullptr; }
  DeferredContext* dc() const { return dc_; }
  DcState state() const { return entry_.state; }

 private:
  DeferredContext* dc_ = nullptr;
  DcEntry entry_;
  bool entered_ = false;
};

// True while the current thread runs inside a state-refresh callback the driver made on `ctx`
// (the IC Device* or a DeferredContext*): Set* calls then are the runtime's answers.
bool InRefreshOf(const void* ctx);
class RefreshScope {
 public:
  explicit RefreshScope(const void* ctx);
  ~RefreshScope();

 private:
  const void* previous_;
};

// Short text for messages.
std::string HandleText(const void* p);

}  // namespace cltrace::refdriver

#endif  // CLTRACE_REFDRIVER_INTERNAL_COMMON_H_
