// Helpers shared by the runtime model's implementation files.
//
// Thread-safety: as noted per declaration.
#ifndef CLTRACE_RUNTIME_INTERNAL_COMMON_H_
#define CLTRACE_RUNTIME_INTERNAL_COMMON_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "ddi/call_traits.h"
#include "runtime/internal/state.h"

namespace cltrace::runtime::internal {

// Process-wide call counter behind every CallSink (DDI calls + callbacks).
std::atomic<uint64_t>& ProcessCalls();
// Process-wide copy of every violation line (survives device teardown).
void AddProcessViolation(const std::string& line);

// Records a violation the runtime detected (driver-side rule or application misuse).
void Report(DeviceState* dev, rules::Rule rule, absl::string_view fn, absl::string_view message);
void ReportOnce(DeviceState* dev, absl::string_view key, rules::Rule rule, absl::string_view fn,
                absl::string_view message);

// Stable transcript names: "<prefix><n>" with a per-device counter per prefix.
std::string NewName(DeviceState* dev, absl::string_view prefix);

// Handle memory the runtime allocates with the driver's sizes (zeroed, 16-byte aligned).
void* AllocHandle(size_t size);
// Frees handle memory after the driver let go of it; with poison_freed_handles it is poisoned
// and quarantined to catch later writes (`rule`: R39 for destroyed handles, R50 for closed
// context-local handles).
void FreeHandle(DeviceState* dev, void* memory, size_t size, rules::Rule rule, std::string what);

// The application API call in progress on this thread: transcript line and annotation. Only
// the outermost API call of a thread is annotated.
class ApiScope {
 public:
  ApiScope(DeviceState* dev, const char* api, ContextState* ctx);
  // `target`: what the call is about, for the transcript ("CL3").
  ApiScope(DeviceState* dev, const char* api, absl::string_view target);
  ~ApiScope();
  ApiScope(const ApiScope&) = delete;
  ApiScope& operator=(const ApiScope&) = delete;

 private:
  // Kept by value: the device may be torn down inside the call (a final Release).
  PFN_CLTRACE_ANNOTATE_END annotate_end_ = nullptr;
};

// An API call on a context: ApiScope plus the context's domain (R10 enforcement: an overlapping
// call is reported as application misuse and then waits).
class ContextCall {
 public:
  ContextCall(ContextState* ctx, const char* api);
  ~ContextCall();

 private:
  ApiScope api_;
  // Destroyed before api_: deferred destroys still belong to this API call.
  DeferredBindingReleases releases_;
  ContextState* ctx_;
  bool entered_ = false;
};

// Captures errors the driver reports through pfnSetErrorCb while this scope is active on the
// calling thread (innermost scope wins).
class ErrorCapture {
 public:
  ErrorCapture();
  ~ErrorCapture();
  ErrorCapture(const ErrorCapture&) = delete;
  ErrorCapture& operator=(const ErrorCapture&) = delete;
  HRESULT error() const { return error_; }
  bool failed() const { return error_ != S_OK; }
  // Called by the SetErrorCb thunk.
  static void Record(HRESULT hr);

 private:
  ErrorCapture* previous_;
  HRESULT error_ = S_OK;
};

// The IC's context state.
ContextState* Ic(DeviceState* dev);

// A device child (object, deferred context, command list) went away; the last one after the
// application's final Device::Release tears the device down (device.cc).
void ChildGone(DeviceState* dev);
void ChildAdded(DeviceState* dev);

// Enters the IC domain for runtime-internal IC work (no application misuse to report).
class IcDomainScope {
 public:
  explicit IcDomainScope(DeviceState* dev);
  ~IcDomainScope();

 private:
  ContextState* ic_;
};

// R5: compares the fixed IC-table slots with the snapshot taken after CreateDevice.
void CheckFixedSlots(DeviceState* dev, const char* when);

}  // namespace cltrace::runtime::internal

// DDI call sites. The thread domain of a call (an IC-domain DDI: R10, R16) is the catalog's
// domain= (ddi/call_traits.h), a constant per call, so no call site chooses it by hand.

// DDI call through a context's own table (IC table for the IC, DC table for a DC).
#define CLTRACE_CTX_DDI(c, Name, ...)                                                \
  ::cltrace::runtime::internal::Invoke(                                              \
      &(c)->dev->sink, (c)->dev, (c),                                                \
      (c)->deferred ? ::cltrace::runtime::internal::Table::kDc                       \
                    : ::cltrace::runtime::internal::Table::kIc,                      \
      !(c)->deferred && ::cltrace::ddi::InIcDomain(::cltrace::ddi::CallId::k##Name), \
      ::cltrace::ddi::CallId::k##Name, #Name, (c)->funcs->pfn##Name,                 \
      (c)->handle __VA_OPT__(, ) __VA_ARGS__)

// DDI call through the IC table.
#define CLTRACE_DDI(dev, Name, ...)                                      \
  ::cltrace::runtime::internal::Invoke(                                  \
      &(dev)->sink, (dev), ::cltrace::runtime::internal::Ic(dev),        \
      ::cltrace::runtime::internal::Table::kIc,                          \
      ::cltrace::ddi::InIcDomain(::cltrace::ddi::CallId::k##Name),       \
      ::cltrace::ddi::CallId::k##Name, #Name, (dev)->ic_funcs.pfn##Name, \
      (dev)->hdevice __VA_OPT__(, ) __VA_ARGS__)

// A free-threaded DDI called in the IC domain although the catalog says FT: the create and
// destroy of a non-shared primary, which lives in the IC domain (R11).
#define CLTRACE_PRIMARY_DDI(dev, Name, ...)                                                   \
  ::cltrace::runtime::internal::Invoke(                                                       \
      &(dev)->sink, (dev), ::cltrace::runtime::internal::Ic(dev),                             \
      ::cltrace::runtime::internal::Table::kIc, true, ::cltrace::ddi::CallId::k##Name, #Name, \
      (dev)->ic_funcs.pfn##Name, (dev)->hdevice __VA_OPT__(, ) __VA_ARGS__)

#endif  // CLTRACE_RUNTIME_INTERNAL_COMMON_H_
