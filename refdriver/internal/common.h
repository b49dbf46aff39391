// Helpers shared by the reference driver's DDI implementations.
//
// Thread-safety: as noted per function.
#ifndef CLTRACE_REFDRIVER_INTERNAL_COMMON_H_
#define CLTRACE_REFDRIVER_INTERNAL_COMMON_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "ddi/ddi_abi.h"
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
// layer if non-null, else the IC's) when the configured call number has been reached. True if
// this call reported it: a create then failed, and the runtime will not destroy its handle.
bool MaybeReportRemoved(Device* dev, DeferredContext* dc);

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
  DcCallScope(D3D10DDI_HDEVICE h, rules::Rule rule_if_dead);
  ~DcCallScope();
  bool ok() const { return dc_ != nullptr; }
  DeferredContext* dc() const { return dc_; }
  DcState state() const { return entry_.state; }
  const DcEntry& entry() const { return entry_; }

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

// ---- hostile calls ----
// A driver must never crash on a malformed call: these checks report a violation and the DDI
// then does nothing (returns a neutral value). Which driver object a handle's memory holds is
// read from its first word (the magic every object starts with); handle memory comes zeroed
// from the runtime and objects clear their magic when destroyed, so a destroyed or foreign
// handle never passes.
//   R39  a handle that is not a live object of this driver (NULL, destroyed, never created)
//   R57  a handle of the wrong kind: a context-local handle, deferred-context or command-list
//        handle where an IC object (or device) is expected, an IC handle where a context-local
//        one is, or an object of another type
//   R56  a NULL argument structure (only context-local opens may pass NULL arguments)

// What kind of driver object `p`'s memory holds, by its magic, for messages ("a device",
// "a deferred context", "an IC object", "a context-local handle", "an IC command list"), or
// nullptr if none is live there.
const char* ObjectKind(const void* p);
// The live device behind an IC-table (or DXGI) hDevice; nullptr (reported R39/R57) otherwise.
Device* IcDevice(const void* h);
inline Device* IcDevice(D3D10DDI_HDEVICE h) { return IcDevice(h.pDrvPrivate); }
// The live IC object of `type` behind an IC-table handle argument (`what` names the DDI or
// parameter); nullptr for NULL without a report, nullptr reported (R39/R57) if not valid.
IcObject* IcArg(void* h, uint32_t type, const char* what);
// False (reported R56) if the argument structure `p` of `fn` is NULL.
bool ArgPresent(const void* p, const char* fn, const char* what);
// False (reported R39) if the handle memory `p` of a create is NULL.
bool HandleMemoryPresent(const void* p, const char* fn, const char* what);
// False (reported) if a create must not construct an object in the handle memory `p`: NULL
// (R39) or the memory of a live driver object (R57; constructing would overwrite it).
bool CreatableAt(const void* p, const char* fn, const char* what);

}  // namespace cltrace::refdriver

#endif  // CLTRACE_REFDRIVER_INTERNAL_COMMON_H_
