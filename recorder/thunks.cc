// The generic thunks: one C function per catalog call of the wrapped tables (and per
// generation, contexts.h), instantiated from format/call_traits.h. Each finds its context
// from its first parameter, records around the real call (core.h) and forwards.
//
// The creating calls substitute the recorder's own tables in their argument structures
// (CreateDevice: device, DXGI, core-layer and kernel callback tables; CreateDeferredContext /
// RecycleCreateDeferredContext: the DC table and its core-layer callbacks) while the event
// records the runtime's original arguments.
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ddi/catalog.h"
#include "format/call_traits.h"
#include "recorder/internal/content.h"
#include "recorder/internal/contexts.h"
#include "recorder/internal/core.h"

namespace cltrace::recorder::internal {
namespace {

using format::CallTraits;
using format::Layer;

template <typename First, typename... Rest>
First FirstArg(First first, Rest...) {
  return first;
}

template <typename R>
R DefaultReturn() {
  if constexpr (!std::is_void_v<R>) return R{};
}

// The context the recorder registered for `handle` in `map`; for a handle it never saw,
// `unknown` reports it and names the most recent context of the kind (null if there is none).
// Every thunk starts here, so it stays inline.
template <typename Ctx>
[[gnu::always_inline]] inline Ctx* FindOrUnknown(const HandleMap<Ctx>& map, const void* handle,
                                                 const char* fn,
                                                 Ctx* (*unknown)(const char*, const void*)) {
  Ctx* ctx = map.Find(handle);
  if (__builtin_expect(ctx == nullptr, 0)) ctx = unknown(fn, handle);
  return ctx;
}

struct NoAfter {
  char* operator()() const { return nullptr; }
};

// Content capture (recorder/internal/content.h), compiled into the thunks of the calls it
// concerns only. Before the call: the bytes of an upload's source or of a mapping about to be
// unmapped (nullptr: none). After it: what a Map returned, and each resource's shape.
template <CallId kId, typename... P>
std::string* ContentBefore(P... p) {
  constexpr format::ContentRole kRole = ThunkContentRole(kId);
  if constexpr (kRole == format::ContentRole::kUploadSource) {
    const auto a = std::make_tuple(p...);
    return ContentOfUpload(std::get<1>(a).pDrvPrivate, std::get<2>(a), std::get<3>(a),
                           std::get<4>(a), std::get<5>(a), std::get<6>(a));
  } else if constexpr (kRole == format::ContentRole::kUnmap) {
    const auto a = std::make_tuple(p...);
    return ContentAtUnmap(std::get<0>(a).pDrvPrivate, std::get<1>(a).pDrvPrivate, std::get<2>(a));
  } else if constexpr (kRole == format::ContentRole::kDrawPrimitives2) {
    return ContentOfDrawPrimitives2(p...);
  } else if constexpr (kRole == format::ContentRole::kInitialData) {
    return ContentOfInitialData(std::get<1>(std::make_tuple(p...)));
  } else {
    return nullptr;
  }
}

template <CallId kId, typename... P>
void ContentAfter(P... p) {
  if constexpr (ThunkContentRole(kId) == format::ContentRole::kMap) {
    const auto a = std::make_tuple(p...);
    ContentOnMap(std::get<0>(a).pDrvPrivate, std::get<1>(a).pDrvPrivate, std::get<2>(a),
                 std::get<3>(a), std::get<5>(a));
  } else if constexpr (kId == CallId::kCreateResource) {
    const auto a = std::make_tuple(p...);
    ContentOnCreateResource(std::get<2>(a).pDrvPrivate, std::get<1>(a), std::get<3>(a).handle);
  } else if constexpr (kId == CallId::kDestroyResource) {
    ContentOnDestroyResource(std::get<1>(std::make_tuple(p...)).pDrvPrivate);
  } else if constexpr (kId == CallId::kCreateD3DBuffer) {
    const DD_CREATESURFACEDATA* c = std::get<0>(std::make_tuple(p...));
    if (c != nullptr) {
      ContentOnD3DBuffer(c->lpDDSurface.handle, c->ddRVal < 0 ? nullptr : c->fpVidMem);
    }
  } else if constexpr (kId == CallId::kLockD3DBuffer) {
    const DD_LOCKDATA* k = std::get<0>(std::make_tuple(p...));
    if (k != nullptr) {
      ContentOnD3DBuffer(k->lpDDSurface.handle, k->ddRVal < 0 ? nullptr : k->lpSurfData);
    }
  } else if constexpr (kId == CallId::kDestroyD3DBuffer) {
    const DD_DESTROYSURFACEDATA* k = std::get<0>(std::make_tuple(p...));
    if (k != nullptr) ContentOnDestroyD3DBuffer(k->lpDDSurface.handle);
  }
}

// Records one call around `callee` (which makes the real call, possibly with substituted
// arguments); `p...` are the parameters as the caller passed them. `after` runs once the
// callee returned and may return a note for this call's event (a table check).
template <CallId kId, typename R, typename Callee, typename After, typename... P>
R RecordCallThen(char* note, Callee&& callee, After&& after, P... p) {
  using T = CallTraits<kId>;
  constexpr bool kCapturesContent =
      ThunkContentRole(kId) == format::ContentRole::kUploadSource ||
      ThunkContentRole(kId) == format::ContentRole::kUnmap ||
      ThunkContentRole(kId) == format::ContentRole::kDrawPrimitives2 ||
      ThunkContentRole(kId) == format::ContentRole::kInitialData;
  if (!Recording()) {
    std::free(note);
    delete ContentBefore<kId>(p...);  // forgets an unmapped mapping; captures nothing
    if constexpr (std::is_void_v<R>) {
      callee();
      ContentAfter<kId>(p...);
      std::free(after());
      return;
    } else {
      const R r = callee();
      ContentAfter<kId>(p...);
      std::free(after());
      return r;
    }
  }
  [[maybe_unused]] std::string* content = ContentBefore<kId>(p...);
  ThreadState* t = Self();
  Frame* f = BeginCall(t, kId, note);
  if constexpr (T::kFlat) {
    // Handles and scalars by value: the fields are the parameters, nothing is written back.
    static_assert(sizeof...(P) <= Frame::kMaxFlat);
    f->is_flat = true;
    f->flat_count = sizeof...(P);
    size_t i = 0;
    ((f->flat[i++] = FlatArg(p)), ...);
  } else {
    f->is_flat = false;
    T::CaptureEntry(&f->args, RawHandle, p...);
  }
  if constexpr (std::is_void_v<R>) {
    callee();
    const uint64_t end = NextPosition();
    if constexpr (!T::kFlat) T::CaptureExit(&f->args, RawHandle, p...);
    ContentAfter<kId>(p...);
    if (char* extra = after()) f->note = JoinNotes(f->note, extra);
    if constexpr (kCapturesContent) {
      EndCallWithContent(t, f, end, 0, content);
    } else {
      EndCall(t, f, end, 0);
    }
  } else {
    const R r = callee();
    const uint64_t end = NextPosition();
    if constexpr (!T::kFlat) T::CaptureExit(&f->args, RawHandle, p...);
    ContentAfter<kId>(p...);
    if (char* extra = after()) f->note = JoinNotes(f->note, extra);
    // HRESULT/NTSTATUS/BOOL sign-extend, SIZE_T as is, DWORD results zero-extend.
    if constexpr (kCapturesContent) {
      EndCallWithContent(t, f, end, static_cast<int64_t>(r), content);
    } else {
      EndCall(t, f, end, static_cast<int64_t>(r));
    }
    return r;
  }
}

template <CallId kId, typename R, typename Callee, typename... P>
R RecordCall(char* note, Callee&& callee, P... p) {
  return RecordCallThen<kId, R>(note, std::forward<Callee>(callee), NoAfter{}, p...);
}

// The calls after which the runtime model compares its table with its snapshot (R5): the
// recorder checks the driver's whole table there too, so a rewrite made inside such a call
// is noted on it and reaches the runtime's table before the runtime looks.
template <CallId kId>
constexpr bool kChecksTableAfter = kId == CallId::kFlush || kId == CallId::kCommandListExecute;

// Calls whose argument structure names a deferred context other than the first parameter:
// callbacks may arrive on that DC's core layer too (state refresh during CreateCommandList).
template <CallId kId>
constexpr bool kNamesDeferredContext =
    kId == CallId::kCalcPrivateCommandListSize || kId == CallId::kCreateCommandList ||
    kId == CallId::kRecycleCreateCommandList;

void SyncDcLayer(const void* dc_handle) {
  if (DeviceCtx* dc = Contexts().devices.Find(dc_handle); dc != nullptr && dc->layer) {
    SyncCoreLayer(dc->layer);
  }
}

// ---- Device tables (IC and DC) ----

// CreateDeferredContext / RecycleCreateDeferredContext: the driver fills the recorder's table
// for the DC and gets the recorder's core-layer callbacks; the runtime's table then gets
// thunks for every slot the driver filled.
template <CallId kId, typename R>
R DeferredContextCreate(DeviceCtx* ic, void* real, char* note, D3D10DDI_HDEVICE hDevice,
                        const D3D11DDIARG_CREATEDEFERREDCONTEXT* args) {
  if (args == nullptr) {
    return RecordCall<kId, R>(
        note, [&] { return reinterpret_cast<typename CallTraits<kId>::Pfn>(real)(hDevice, args); },
        hDevice, args);
  }
  D3D11DDIARG_CREATEDEFERREDCONTEXT sub = *args;
  const bool recycle = kId == CallId::kRecycleCreateDeferredContext;
  DeviceCtx* dc = recycle ? Contexts().devices.Find(args->hDrvContext.pDrvPrivate) : nullptr;
  const bool fresh = dc == nullptr;
  if (fresh) {
    dc = NewDeviceCtx();
    dc->key = reinterpret_cast<uintptr_t>(args->hDrvContext.pDrvPrivate);
    dc->is_dc = true;
    dc->driver = &dc->owned_driver;
    dc->ic = ic;
  }
  dc->runtime = args->p11ContextFuncs;
  if (args->p11UMCallbacks != nullptr && args->hRTCoreLayer.handle != nullptr) {
    dc->layer = WrapCoreLayerTable(reinterpret_cast<uintptr_t>(args->hRTCoreLayer.handle),
                                   args->p11UMCallbacks);
    sub.p11UMCallbacks = &dc->layer->driver;
    SyncCoreLayer(dc->layer);
  }
  if (args->p11ContextFuncs != nullptr) sub.p11ContextFuncs = &dc->owned_driver;
  if (fresh && dc->key != 0) Contexts().devices.Insert(dc->key, dc);
  using Pfn = typename CallTraits<kId>::Pfn;
  auto callee = [&] { return reinterpret_cast<Pfn>(real)(hDevice, &sub); };
  if constexpr (std::is_void_v<R>) {
    RecordCall<kId, R>(note, callee, hDevice, args);
    // A driver (re)fills the DC table here; a refill on recycle is not a mutation.
    InstallDeviceThunks(dc);
  } else {
    R r = RecordCall<kId, R>(note, callee, hDevice, args);
    InstallDeviceThunks(dc);
    return r;
  }
}

template <CallId kId, typename R, typename... P>
R DeviceBody(P... p) {
  using T = CallTraits<kId>;
  const D3D10DDI_HDEVICE h = FirstArg(p...);
  DeviceCtx* ctx = FindOrUnknown(Contexts().devices, h.pDrvPrivate, T::kName, UnknownDevice);
  if (ctx == nullptr) return DefaultReturn<R>();
  void* real = LoadSlot(ctx->driver, T::kSlotIndex);
  char* note = nullptr;
  if (__builtin_expect(real != LoadSlot(&ctx->snapshot, T::kSlotIndex), 0)) {
    note = OnSlotRewrite(ctx, T::kSlotIndex);
  }
  if (__builtin_expect(ctx->pending_note.load(std::memory_order_relaxed) != nullptr, 0)) {
    note = JoinNotes(note, ctx->pending_note.exchange(nullptr));
  }
  if (ctx->layer != nullptr) SyncCoreLayer(ctx->layer);
  using Pfn = typename T::Pfn;
  if constexpr (kId == CallId::kCreateDeferredContext ||
                kId == CallId::kRecycleCreateDeferredContext) {
    return DeferredContextCreate<kId, R>(ctx, real, note, p...);
  } else if constexpr (kId == CallId::kRelocateDeviceFuncs) {
    // The runtime moved its copy of the table (our thunks) to pDeviceFunctions: the recorder
    // mirrors later slot changes there. The driver's table is the recorder's and did not move,
    // so the driver is told its own address (the event records the runtime's argument).
    auto [hdev, moved] = std::tuple<P...>(p...);
    if (moved != nullptr) ctx->runtime = moved;
    return RecordCall<kId, R>(
        note, [&] { reinterpret_cast<Pfn>(real)(hdev, const_cast<DeviceTable*>(ctx->driver)); },
        p...);
  } else if constexpr (kId == CallId::kDestroyDevice) {
    RecordCall<kId, R>(
        note, [&] { reinterpret_cast<Pfn>(real)(p...); }, p...);
    // The handle memory goes back to the runtime now; a DC's context is reused later.
    Contexts().devices.Erase(h.pDrvPrivate);
    if (ctx->is_dc) RecycleDeviceCtx(ctx);
  } else {
    if constexpr (kNamesDeferredContext<kId>) {
      const D3D11DDIARG_CREATECOMMANDLIST* a = std::get<1>(std::tuple<P...>(p...));
      if (a != nullptr) SyncDcLayer(a->hDeferredContext.pDrvPrivate);
    }
    if constexpr (kChecksTableAfter<kId>) {
      return RecordCallThen<kId, R>(
          note, [&] { return reinterpret_cast<Pfn>(real)(p...); },
          [ctx] { return CheckDeviceTable(ctx); }, p...);
    } else {
      return RecordCall<kId, R>(
          note, [&] { return reinterpret_cast<Pfn>(real)(p...); }, p...);
    }
  }
}

// ---- DXGI ----

// Every DXGI base function takes one argument structure whose hDevice is the IC's driver
// handle. Present checks the device table on its way out, like Flush (R5).
template <CallId kId, typename Arg>
HRESULT DxgiBody(Arg* p) {
  using T = CallTraits<kId>;
  DeviceCtx* ctx = p != nullptr ? Contexts().devices.Find(p->hDevice.handle) : nullptr;
  if (ctx == nullptr) {
    ctx = UnknownDevice(T::kName, p != nullptr ? p->hDevice.handle : nullptr);
    if (ctx == nullptr) return static_cast<HRESULT>(E_FAIL);
  }
  if (ctx->ic != nullptr) ctx = ctx->ic;
  if (ctx->layer != nullptr) SyncCoreLayer(ctx->layer);
  auto real = ctx->dxgi_driver != nullptr
                  ? reinterpret_cast<typename T::Pfn>(LoadSlot(ctx->dxgi_driver, T::kSlotIndex))
                  : nullptr;
  if (real == nullptr) return static_cast<HRESULT>(E_FAIL);
  if constexpr (kId == CallId::kPresentDXGI) {
    return RecordCallThen<kId, HRESULT>(
        nullptr, [&] { return real(p); }, [ctx] { return CheckDeviceTable(ctx); }, p);
  } else {
    return RecordCall<kId, HRESULT>(
        nullptr, [&] { return real(p); }, p);
  }
}

// ---- Core-layer callbacks ----

char* StaleCallbackNote(CoreLayerCtx* l, size_t slot, int gen) {
  const int current = l->gen[slot].load(std::memory_order_relaxed);
  const int ago = (current - gen + kCoreGenerations) % kCoreGenerations;
  char text[256];
  std::snprintf(text, sizeof(text),
                "stale-callback (R6): D3D11DDI_CORELAYER_DEVICECALLBACKS.%s of core layer %p "
                "called through a pointer the runtime replaced %d swap(s) ago",
                format::GetCall(format::TableTraits<CoreTable>::kCalls[slot])->member,
                reinterpret_cast<void*>(l->key), ago);
  return MakeNote(text);
}

template <CallId kId, int kGen, typename R, typename... P>
R CoreBody(P... p) {
  using T = CallTraits<kId>;
  using Pfn = typename T::Pfn;
  const D3D10DDI_HRTCORELAYER h = FirstArg(p...);
  CoreLayerCtx* l = FindOrUnknown(Contexts().layers, h.handle, T::kName, UnknownLayer);
  if (l == nullptr) return DefaultReturn<R>();
  constexpr size_t k = T::kSlotIndex;
  Pfn fn;
  char* note = nullptr;
  if (__builtin_expect(l->gen[k].load(std::memory_order_acquire) == kGen, 1)) {
    fn = reinterpret_cast<Pfn>(LoadSlot(l->runtime, k));
  } else {
    // A pointer the driver kept from before the runtime replaced it.
    fn = reinterpret_cast<Pfn>(l->target[kGen][k]);
    note = StaleCallbackNote(l, k, kGen);
  }
  if (fn == nullptr) {
    std::free(note);
    return DefaultReturn<R>();
  }
  return RecordCall<kId, R>(
      note, [&] { return fn(p...); }, p...);
}

// Records a call forwarded to `fn` without a note; a null `fn` (an empty slot) drops the call.
template <CallId kId, typename R, typename Pfn, typename... P>
[[gnu::always_inline]] inline R RecordOrDrop(Pfn fn, P... p) {
  if (fn == nullptr) return DefaultReturn<R>();
  return RecordCall<kId, R>(
      nullptr, [&] { return fn(p...); }, p...);
}

// ---- Kernel-thunk callbacks ----

template <CallId kId, typename R, typename... P>
R KernelBody(P... p) {
  using T = CallTraits<kId>;
  using Pfn = typename T::Pfn;
  const HANDLE h = FirstArg(p...);
  KernelCtx* k = FindOrUnknown(Contexts().kernels, h, T::kName, UnknownKernel);
  if (k == nullptr) return DefaultReturn<R>();
  return RecordOrDrop<kId, R>(reinterpret_cast<Pfn>(LoadSlot(k->runtime, T::kSlotIndex)), p...);
}

// ---- Adapter ----

HRESULT CreateDeviceBody(AdapterCtx* a, PFND3D10DDI_CREATEDEVICE real, D3D10DDI_HADAPTER hAdapter,
                         D3D10DDIARG_CREATEDEVICE* args) {
  if (args == nullptr) {
    return RecordCall<CallId::kCreateDevice, HRESULT>(
        nullptr, [&] { return real(hAdapter, args); }, hAdapter, args);
  }
  D3D10DDIARG_CREATEDEVICE sub = *args;
  DeviceCtx* ic = NewDeviceCtx();
  ic->key = reinterpret_cast<uintptr_t>(args->hDrvDevice.pDrvPrivate);
  ic->driver = &ic->owned_driver;
  ic->runtime = args->p11DeviceFuncs;
  ic->ic = ic;
  ic->dxgi_driver = &ic->owned_dxgi;
  ic->dxgi_runtime = args->DXGIBaseDDI.pDXGIDDIBaseFunctions;
  if (args->pKTCallbacks != nullptr) {
    ic->kernel =
        WrapKernelTable(reinterpret_cast<uintptr_t>(args->hRTDevice.handle), args->pKTCallbacks);
    sub.pKTCallbacks = &ic->kernel->driver;
  }
  if (args->p11UMCallbacks != nullptr && args->hRTCoreLayer.handle != nullptr) {
    ic->layer = WrapCoreLayerTable(reinterpret_cast<uintptr_t>(args->hRTCoreLayer.handle),
                                   args->p11UMCallbacks);
    sub.p11UMCallbacks = &ic->layer->driver;
  }
  if (args->p11DeviceFuncs != nullptr) sub.p11DeviceFuncs = &ic->owned_driver;
  if (args->DXGIBaseDDI.pDXGIDDIBaseFunctions != nullptr)
    sub.DXGIBaseDDI.pDXGIDDIBaseFunctions = &ic->owned_dxgi;
  if (ic->key != 0) Contexts().devices.Insert(ic->key, ic);
  (void)a;
  HRESULT hr = RecordCall<CallId::kCreateDevice, HRESULT>(
      nullptr, [&] { return real(hAdapter, &sub); }, hAdapter, args);
  // Hand back anything the driver wrote into the structure, with the runtime's own pointers.
  D3D10DDIARG_CREATEDEVICE out = sub;
  out.pKTCallbacks = args->pKTCallbacks;
  out.p11DeviceFuncs = args->p11DeviceFuncs;
  out.DXGIBaseDDI.pDXGIDDIBaseFunctions = args->DXGIBaseDDI.pDXGIDDIBaseFunctions;
  out.p11UMCallbacks = args->p11UMCallbacks;
  *args = out;
  InstallDeviceThunks(ic);
  InstallDxgiThunks(ic);
  return hr;
}

template <CallId kId, typename R, typename... P>
R AdapterBody(P... p) {
  using T = CallTraits<kId>;
  using Pfn = typename T::Pfn;
  const D3D10DDI_HADAPTER h = FirstArg(p...);
  AdapterCtx* a = FindOrUnknown(Contexts().adapters, h.pDrvPrivate, T::kName, UnknownAdapter);
  if (a == nullptr) return DefaultReturn<R>();
  Pfn real = reinterpret_cast<Pfn>(LoadSlot(&a->driver, T::kSlotIndex));
  if (real == nullptr) return DefaultReturn<R>();
  if constexpr (kId == CallId::kCreateDevice) {
    return CreateDeviceBody(a, real, p...);
  } else if constexpr (kId == CallId::kCloseAdapter) {
    R r = RecordCall<kId, R>(
        nullptr, [&] { return real(p...); }, p...);
    Contexts().adapters.Erase(h.pDrvPrivate);
    return r;
  } else {
    return RecordCall<kId, R>(
        nullptr, [&] { return real(p...); }, p...);
  }
}

// ---- Kernel layer (process-wide KMD, Dxgkrnl and GPU observer tables) ----

template <CallId kId, typename R, typename... P>
R KernelLayerBody(P... p) {
  using T = CallTraits<kId>;
  using Pfn = typename T::Pfn;
  using Table = typename T::Table;
  const void* table;
  if constexpr (std::is_same_v<Table, KmdTable>) {
    table = KernelLayer().kmd.load(std::memory_order_acquire);
  } else if constexpr (std::is_same_v<Table, DxgkrnlTable>) {
    table = KernelLayer().dxgkrnl.load(std::memory_order_acquire);
  } else if constexpr (std::is_same_v<Table, GpuObserverTable>) {
    table = KernelLayer().gpu_observer.load(std::memory_order_acquire);
  } else if constexpr (std::is_same_v<Table, Dx6BufferTable>) {
    table = KernelLayer().dx6_buffers.load(std::memory_order_acquire);
  } else {
    static_assert(std::is_same_v<Table, Dx6HalTable>);
    table = KernelLayer().dx6_hal.load(std::memory_order_acquire);
  }
  return RecordOrDrop<kId, R>(
      table != nullptr ? reinterpret_cast<Pfn>(LoadSlot(table, T::kSlotIndex)) : nullptr, p...);
}

// ---- One thunk per call and generation ----

template <CallId kId, int kGen, typename Pfn = typename CallTraits<kId>::Pfn>
struct Thunk;

template <CallId kId, int kGen, typename R, typename... P>
struct Thunk<kId, kGen, R (*)(P...)> {
  static R Fn(P... p) {
    constexpr Layer kLayer = CallTraits<kId>::kLayer;
    if constexpr (kLayer == Layer::kDevice) {
      if constexpr (kGen == 0) {
        return DeviceBody<kId, R>(p...);
      } else {
        // Same behaviour, different address: lets a rewrite show in the runtime's table.
        return Thunk<kId, 0>::Fn(p...);
      }
    } else if constexpr (kLayer == Layer::kCoreLayer) {
      return CoreBody<kId, kGen, R>(p...);
    } else if constexpr (kLayer == Layer::kKernelCb) {
      return KernelBody<kId, R>(p...);
    } else if constexpr (kLayer == Layer::kAdapter) {
      return AdapterBody<kId, R>(p...);
    } else if constexpr (kLayer == Layer::kKmd || kLayer == Layer::kDxgkrnl ||
                         kLayer == Layer::kDx6) {
      return KernelLayerBody<kId, R>(p...);
    } else {
      static_assert(kLayer == Layer::kDxgi);
      return DxgiBody<kId>(p...);
    }
  }
};

#define CLTRACE_THUNK_GEN(name, gen) reinterpret_cast<void*>(&Thunk<CallId::k##name, gen>::Fn),
#define CLTRACE_THUNK_G0(name) CLTRACE_THUNK_GEN(name, 0)
#define CLTRACE_THUNK_G1(name) CLTRACE_THUNK_GEN(name, 1)
#define CLTRACE_THUNK_G2(name) CLTRACE_THUNK_GEN(name, 2)
#define CLTRACE_THUNK_G3(name) CLTRACE_THUNK_GEN(name, 3)

}  // namespace

void* const kDeviceThunks[kDeviceGenerations][kDeviceSlots] = {
    {CLTRACE_CALLS_D3D11DDI_DEVICEFUNCS(CLTRACE_THUNK_G0)},
    {CLTRACE_CALLS_D3D11DDI_DEVICEFUNCS(CLTRACE_THUNK_G1)},
};
void* const kCoreThunks[kCoreGenerations][kCoreSlots] = {
    {CLTRACE_CALLS_D3D11DDI_CORELAYER_DEVICECALLBACKS(CLTRACE_THUNK_G0)},
    {CLTRACE_CALLS_D3D11DDI_CORELAYER_DEVICECALLBACKS(CLTRACE_THUNK_G1)},
    {CLTRACE_CALLS_D3D11DDI_CORELAYER_DEVICECALLBACKS(CLTRACE_THUNK_G2)},
    {CLTRACE_CALLS_D3D11DDI_CORELAYER_DEVICECALLBACKS(CLTRACE_THUNK_G3)},
};
void* const kKernelThunks[kKernelSlots] = {CLTRACE_CALLS_D3DDDI_DEVICECALLBACKS(CLTRACE_THUNK_G0)};
void* const kAdapterThunks[kAdapterSlots] = {
    CLTRACE_CALLS_D3D10_2DDI_ADAPTERFUNCS(CLTRACE_THUNK_G0)};
void* const kDxgiThunks[kDxgiSlots] = {CLTRACE_CALLS_DXGI_DDI_BASE_FUNCTIONS(CLTRACE_THUNK_G0)};
void* const kKmdThunks[kSlots<KmdTable>] = {
    CLTRACE_CALLS_DRIVER_INITIALIZATION_DATA(CLTRACE_THUNK_G0)};
void* const kDxgkrnlThunks[kSlots<DxgkrnlTable>] = {
    CLTRACE_CALLS_DXGKRNL_INTERFACE(CLTRACE_THUNK_G0)};
void* const kGpuObserverThunks[kSlots<GpuObserverTable>] = {
    CLTRACE_CALLS_CLTRACE_GPU_OBSERVER(CLTRACE_THUNK_G0)};
void* const kDx6BufferThunks[kSlots<Dx6BufferTable>] = {
    CLTRACE_CALLS_DD_D3DBUFCALLBACKS(CLTRACE_THUNK_G0)};
void* const kDx6HalThunks[kSlots<Dx6HalTable>] = {
    CLTRACE_CALLS_D3DHAL_CALLBACKS3(CLTRACE_THUNK_G0)};

}  // namespace cltrace::recorder::internal
