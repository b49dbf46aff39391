// How the runtime model calls into the driver: one helper every DDI call goes through.
//
// Invoke() counts the call ("calls: N"), pushes a frame on the calling thread's DDI stack (the
// callbacks use it to check which DDI they were made from: R16, R19, R22, R28, ...), renders
// the call for the transcript observer when one is set, and calls the driver's function
// pointer read from the table at call time (tables are never cached: R5 allows hot-swapping
// non-create slots). Callback thunks push frames too, so nesting is visible.
//
// Thread-safety: frames are thread-local; CallSink is shared and thread-safe.
#ifndef CLTRACE_RUNTIME_INTERNAL_DDI_H_
#define CLTRACE_RUNTIME_INTERNAL_DDI_H_

#include <atomic>
#include <concepts>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ddi/call_traits.h"
#include "ddi/ddi_abi.h"
#include "runtime/transcript.h"

namespace cltrace::runtime::internal {

struct ContextState;
struct DeviceState;

// Stable readable names of handle memory and runtime handles (transcripts only).
class HandleNames {
 public:
  void Set(const void* p, std::string name);
  void Erase(const void* p);
  std::string Get(const void* p) const;

 private:
  mutable std::mutex mu_;
  absl::flat_hash_map<const void*, std::string> names_;
};

// Shared per device: call counter (process-wide, survives teardown) and the observer.
struct CallSink {
  std::atomic<uint64_t>* calls = nullptr;
  DdiObserver* observer = nullptr;
  HandleNames names;
};

enum class Table : uint8_t { kAdapter, kIc, kDc, kDxgi, kCallback };

struct Frame {
  const char* name = "";
  ddi::CallId id = ddi::CallId::kInvalid;  // the catalog call (kInvalid: OpenAdapter10_2)
  Table table = Table::kAdapter;
  bool ic_domain = false;       // an IC-domain DDI (R10, R16)
  ContextState* ctx = nullptr;  // context whose table was used / callback's context
  DeviceState* dev = nullptr;
  int depth = 0;     // transcript depth
  std::string head;  // transcript: entry line not yet emitted
  bool head_emitted = false;
  uint32_t amortized_calls = 0;  // PerformAmortizedProcessingCb seen inside this call
};

// The innermost DDI frame (not a callback frame) of this thread, or nullptr.
Frame* CurrentDdiFrame();
// The innermost frame of any kind, or nullptr.
Frame* CurrentFrame();
// Number of frames on this thread.
int FrameCount();

class FrameScope {
 public:
  FrameScope(CallSink* sink, DeviceState* dev, ContextState* ctx, Table table, bool ic_domain,
             const char* name, ddi::CallId id = ddi::CallId::kInvalid);
  ~FrameScope();
  FrameScope(const FrameScope&) = delete;
  FrameScope& operator=(const FrameScope&) = delete;
  Frame& frame() { return frame_; }
  // Transcript: the entry line (emitted lazily) and the return value ("" for void).
  void SetHead(std::string head) { frame_.head = std::move(head); }
  void SetResult(std::string result) { result_ = std::move(result); }

 private:
  CallSink* sink_;
  Frame frame_;
  std::string result_;
};

// Emits a transcript line at the current depth (+extra), flushing pending frame heads first.
void EmitLine(CallSink* sink, int extra_depth, absl::string_view line);
// The API-call annotation line ("API FinishCommandList [DC1]").
void EmitApiLine(CallSink* sink, absl::string_view line);

// ---- argument rendering ----

template <typename T>
struct Arr {
  const T* p;
  uint32_t n;
  operator const T*() const { return p; }  // NOLINT: passes straight into the DDI
};
template <typename T>
Arr<T> MakeArr(const T* p, uint32_t n) {
  return Arr<T>{p, n};
}

template <typename T>
concept DrvHandle = requires(T t) {
  { t.pDrvPrivate } -> std::convertible_to<void*>;
};
template <typename T>
concept RtHandle = requires(T t) {
  { t.handle } -> std::convertible_to<void*>;
};
template <typename T>
concept KmHandle = requires(T t) {
  { t.value } -> std::convertible_to<uint32_t>;
};

std::string HresultName(HRESULT hr);
std::string FormatStruct(const HandleNames& n, const D3D11DDIARG_CREATECOMMANDLIST& a);
std::string FormatStruct(const HandleNames& n, const D3D11DDIARG_CREATEDEFERREDCONTEXT& a);
std::string FormatStruct(const HandleNames& n, const D3D11DDIARG_CALCPRIVATEDEFERREDCONTEXTSIZE& a);
std::string FormatStruct(const HandleNames& n, const D3D11DDIARG_CREATERESOURCE& a);
std::string FormatStruct(const HandleNames& n, const D3D11DDIARG_CREATESHADERRESOURCEVIEW& a);
std::string FormatStruct(const HandleNames& n, const D3D10DDIARG_CREATERENDERTARGETVIEW& a);
std::string FormatStruct(const HandleNames& n, const D3D11DDIARG_CREATEDEPTHSTENCILVIEW& a);
std::string FormatStruct(const HandleNames& n, const D3D11DDIARG_CREATEUNORDEREDACCESSVIEW& a);
std::string FormatStruct(const HandleNames& n, const D3D10DDIARG_CREATEQUERY& a);
std::string FormatStruct(const HandleNames& n, const D3D10_2DDIARG_GETCAPS& a);
std::string FormatStruct(const HandleNames& n, const D3D10DDIARG_CREATEDEVICE& a);
std::string FormatStruct(const HandleNames& n, const D3D10DDIARG_CALCPRIVATEDEVICESIZE& a);
std::string FormatStruct(const HandleNames& n, const D3D10DDIARG_OPENADAPTER& a);
std::string FormatStruct(const HandleNames& n, const DXGI_DDI_ARG_PRESENT& a);
std::string FormatStruct(const HandleNames& n, const D3DDDICB_RENDER& a);
std::string FormatStruct(const HandleNames& n, const D3DDDICB_ALLOCATE& a);
std::string FormatStruct(const HandleNames& n, const D3DDDICB_DEALLOCATE& a);
std::string FormatStruct(const HandleNames& n, const D3DDDICB_CREATECONTEXT& a);
std::string FormatStruct(const HandleNames& n, const D3DDDICB_PRESENT& a);
template <typename T>
std::string FormatStruct(const HandleNames&, const T&) {
  return "{...}";
}

template <typename T>
std::string FormatArg(const HandleNames& n, const T& v) {
  using U = std::remove_cvref_t<T>;
  if constexpr (DrvHandle<U>) {
    return n.Get(v.pDrvPrivate);
  } else if constexpr (RtHandle<U>) {
    return v.handle == nullptr ? std::string("NULL") : absl::StrCat("rt:", n.Get(v.handle));
  } else if constexpr (KmHandle<U>) {
    return absl::StrCat("km:", v.value);
  } else if constexpr (std::is_same_v<U, float>) {
    return absl::StrFormat("%g", v);
  } else if constexpr (std::is_integral_v<U>) {
    return absl::StrCat(v);
  } else if constexpr (std::is_pointer_v<U>) {
    using P = std::remove_cv_t<std::remove_pointer_t<U>>;
    if (v == nullptr) return "NULL";
    if constexpr (std::is_void_v<P> || std::is_arithmetic_v<P>) {
      return "ptr";
    } else if constexpr (std::is_class_v<P> && !DrvHandle<P> && !RtHandle<P>) {
      return FormatStruct(n, *v);
    } else {
      return "ptr";
    }
  } else {
    return "?";
  }
}

inline std::string FormatArg(const HandleNames&, const std::string& s) { return s; }

template <typename T>
std::string FormatArg(const HandleNames& n, const Arr<T>& a) {
  if (a.p == nullptr) return "NULL";
  std::string out = "[";
  for (uint32_t i = 0; i < a.n; ++i) {
    if (i > 0) out += ", ";
    out += FormatArg(n, a.p[i]);
  }
  return out + "]";
}

template <typename... A>
std::string FormatArgs(const HandleNames& n, const A&... args) {
  std::string out;
  bool first = true;
  ((out += (first ? "" : ", "), out += FormatArg(n, args), first = false), ...);
  return out;
}

// Renders "prefix.Name(args)" for the transcript.
std::string TablePrefix(ContextState* ctx, Table table);

template <typename R>
std::string FormatResult(ddi::CallId id, R r) {
  if constexpr (std::is_same_v<R, SIZE_T>) {
    return absl::StrCat(r);
  } else {
    // BOOL and HRESULT are both int32_t: the catalog's ret= tells them apart.
    if (ddi::TraitsOf(id).ret == ddi::ReturnKind::kBool) return r ? "TRUE" : "FALSE";
    return HresultName(static_cast<HRESULT>(r));
  }
}

// Records that the driver left a table slot NULL which the runtime needed (R2/R3/R4).
void ReportNullSlot(DeviceState* dev, ContextState* ctx, Table table, const char* name);

template <typename R, typename... P, typename... A>
R Invoke(CallSink* sink, DeviceState* dev, ContextState* ctx, Table table, bool ic_domain,
         ddi::CallId id, const char* name, R(APIENTRY* fn)(P...), const A&... args) {
  // The driver's exported entry point is not a table call: the catalog (and so a trace) does
  // not hold it, and `calls: N` counts what a trace of the run must hold.
  if constexpr (!std::is_same_v<R(APIENTRY*)(P...), PFND3D10DDI_OPENADAPTER>) {
    sink->calls->fetch_add(1, std::memory_order_relaxed);
  }
  if (fn == nullptr) {
    ReportNullSlot(dev, ctx, table, name);
    if constexpr (std::is_void_v<R>) {
      return;
    } else {
      return R{};
    }
  }
  FrameScope scope(sink, dev, ctx, table, ic_domain, name, id);
  if (sink->observer != nullptr) {
    scope.SetHead(
        absl::StrCat(TablePrefix(ctx, table), name, "(", FormatArgs(sink->names, args...), ")"));
  }
  if constexpr (std::is_void_v<R>) {
    fn(args...);
  } else {
    R r = fn(args...);
    if (sink->observer != nullptr) scope.SetResult(FormatResult(id, r));
    return r;
  }
}

}  // namespace cltrace::runtime::internal

#endif  // CLTRACE_RUNTIME_INTERNAL_DDI_H_
