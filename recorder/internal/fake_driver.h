// A small fake driver and fake runtime for the recorder's tests and benchmarks (header-only).
//
// FakeDriver is a user-mode driver in the shape of the DDI: OpenAdapter fills an adapter table;
// CreateDevice keeps the core-layer and kernel callback tables by pointer (R6), fills an IC
// table and a DXGI table, and calls pfnDisableDeferredStagingResourceDestruction; Flush
// submits (pfnRenderCb) and pumps pfnPerformAmortizedProcessingCb; SetBlendState asks for a
// state refresh (pfnStateOmRenderTargetsCb); CreateDeferredContext fills a DC table. Planted
// bugs: kRewriteSlot (R5: Flush rewrites the IC slot pfnCreateResource), kCacheCallback (R6:
// Flush calls a pfnPerformAmortizedProcessingCb pointer cached at CreateDevice), and
// DrawIndexed with IndexCount == kCrashIndexCount raises SIGSEGV (crash tests).
//
// FakeRuntime answers the callbacks: the state refresh re-enters the driver's SetRenderTargets
// through the runtime's table (a DDI call nested in a callback), SwapCallbacks replaces the
// amortized-processing pointer of a context's table (the R6 probe) and counts which
// generation was called.
//
// Thread-safety: per-context use as the DDI requires (IC calls serialised, one thread per DC);
// counters are atomic.
#ifndef CLTRACE_RECORDER_INTERNAL_FAKE_DRIVER_H_
#define CLTRACE_RECORDER_INTERNAL_FAKE_DRIVER_H_

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "ddi/ddi_abi.h"
#include "recorder/recorder.h"

namespace cltrace::recorder::testing {

inline constexpr UINT kCrashIndexCount = 0xdead;

enum FakeBug : uint32_t { kNoBug = 0, kRewriteSlot = 1, kCacheCallback = 2 };

struct FakeDriverCounters {
  std::atomic<uint64_t> flushes{0};
  std::atomic<uint32_t> bugs{0};
};
inline FakeDriverCounters& Driver() {
  static FakeDriverCounters c;
  return c;
}

// Driver-private device / DC memory (the runtime allocates CalcPrivate*Size bytes).
struct FakeDevice {
  HANDLE rt_device{};
  D3D10DDI_HRTCORELAYER layer{};
  const D3D11DDI_CORELAYER_DEVICECALLBACKS* callbacks = nullptr;  // by pointer (R6)
  const D3DDDI_DEVICECALLBACKS* kt = nullptr;
  D3D11DDI_DEVICEFUNCS* table = nullptr;  // the table this driver filled
  PFND3D11DDI_PERFORM_AMORTIZED_PROCESSING_CB cached_amortized = nullptr;  // R6 bug only
  // Per context (a context is used by one thread at a time): no shared line between the
  // benchmark's threads, as in a real driver.
  uint64_t draws = 0;
  // What Map hands out (content capture): RowPitch = DepthPitch = sizeof(mapped); Unmap wipes
  // it, so a recorder that copied after the call would see zeros. The last upload it got.
  uint8_t mapped[256] = {};
  uint8_t uploaded[64] = {};
};
inline FakeDevice* AsFake(D3D10DDI_HDEVICE h) { return static_cast<FakeDevice*>(h.pDrvPrivate); }

namespace fake {

inline void APIENTRY Draw(D3D10DDI_HDEVICE h, UINT, UINT) { AsFake(h)->draws += 1; }
inline void APIENTRY DrawIndexed(D3D10DDI_HDEVICE h, UINT index_count, UINT, INT) {
  if (index_count == kCrashIndexCount) raise(SIGSEGV);
  AsFake(h)->draws += 1;
}
inline void APIENTRY SetRenderTargets(D3D10DDI_HDEVICE, const D3D10DDI_HRENDERTARGETVIEW*, UINT,
                                      UINT, D3D10DDI_HDEPTHSTENCILVIEW,
                                      const D3D11DDI_HUNORDEREDACCESSVIEW*, const UINT*, UINT, UINT,
                                      UINT, UINT) {}
inline void APIENTRY SetBlendState(D3D10DDI_HDEVICE h, D3D10DDI_HBLENDSTATE, const FLOAT*, UINT) {
  FakeDevice* d = AsFake(h);
  d->callbacks->pfnStateOmRenderTargetsCb(d->layer);  // refresh: the runtime re-sends RTs
}
inline void APIENTRY CreateResourceA(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATERESOURCE*,
                                     D3D10DDI_HRESOURCE, D3D10DDI_HRTRESOURCE) {}
inline void APIENTRY CreateResourceB(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATERESOURCE*,
                                     D3D10DDI_HRESOURCE, D3D10DDI_HRTRESOURCE) {}
inline void APIENTRY Flush(D3D10DDI_HDEVICE h) {
  FakeDevice* d = AsFake(h);
  Driver().flushes.fetch_add(1, std::memory_order_relaxed);
  D3DDDICB_RENDER render{};
  d->kt->pfnRenderCb(d->rt_device, &render);
  if ((Driver().bugs.load() & kCacheCallback) != 0) {
    d->cached_amortized(d->layer);  // R6: a pointer kept from CreateDevice
  } else {
    d->callbacks->pfnPerformAmortizedProcessingCb(d->layer);
  }
  if ((Driver().bugs.load() & kRewriteSlot) != 0) {
    // R5: a create slot changes after CreateDevice.
    d->table->pfnCreateResource =
        d->table->pfnCreateResource == &CreateResourceA ? &CreateResourceB : &CreateResourceA;
  }
}
inline SIZE_T APIENTRY CalcPrivateDeferredContextSize(
    D3D10DDI_HDEVICE, const D3D11DDIARG_CALCPRIVATEDEFERREDCONTEXTSIZE*) {
  return sizeof(FakeDevice);
}
inline void APIENTRY DestroyDevice(D3D10DDI_HDEVICE h) { AsFake(h)->~FakeDevice(); }
inline void APIENTRY AbandonCommandList(D3D10DDI_HDEVICE) {}

inline void APIENTRY MapDiscard(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE, UINT, D3D10_DDI_MAP,
                                D3D10_DDI_MAP_FLAG, D3D10DDI_MAPPED_SUBRESOURCE* out) {
  out->pData = AsFake(h)->mapped;
  out->RowPitch = out->DepthPitch = sizeof(FakeDevice::mapped);
}
inline void APIENTRY Unmap(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE, UINT) {
  std::memset(AsFake(h)->mapped, 0, sizeof(FakeDevice::mapped));
}
inline void APIENTRY UpdateSubresourceUP(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE, UINT,
                                         const D3D10_DDI_BOX*, PVOID data, UINT, UINT) {
  if (data != nullptr) std::memcpy(AsFake(h)->uploaded, data, sizeof(FakeDevice::uploaded));
}
inline void APIENTRY DestroyResource(D3D10DDI_HDEVICE, D3D10DDI_HRESOURCE) {}
// The runtime moved its copy of the table: the driver's later slot writes go to the table it
// is told of.
inline void APIENTRY RelocateDeviceFuncs(D3D10DDI_HDEVICE h, D3D11DDI_DEVICEFUNCS* t) {
  if (t != nullptr) AsFake(h)->table = t;
}

// The slots the IC and DC tables both fill.
inline void FillSharedSlots(D3D11DDI_DEVICEFUNCS* t) {
  t->pfnDraw = &Draw;
  t->pfnDrawIndexed = &DrawIndexed;
  t->pfnSetRenderTargets = &SetRenderTargets;
  t->pfnSetBlendState = &SetBlendState;
  t->pfnDestroyDevice = &DestroyDevice;
  t->pfnCreateResource = &CreateResourceA;
  t->pfnDynamicIABufferMapDiscard = &MapDiscard;
  t->pfnDynamicIABufferUnmap = &Unmap;
  t->pfnResourceMap = &MapDiscard;
  t->pfnResourceUnmap = &Unmap;
  t->pfnResourceUpdateSubresourceUP = &UpdateSubresourceUP;
  t->pfnDestroyResource = &DestroyResource;
  t->pfnRelocateDeviceFuncs = &RelocateDeviceFuncs;
}

inline void APIENTRY CreateDeferredContext(D3D10DDI_HDEVICE h,
                                           const D3D11DDIARG_CREATEDEFERREDCONTEXT* a) {
  FakeDevice* dc = new (a->hDrvContext.pDrvPrivate) FakeDevice;
  dc->layer = a->hRTCoreLayer;
  dc->callbacks = a->p11UMCallbacks;
  dc->kt = AsFake(h)->kt;
  dc->rt_device = AsFake(h)->rt_device;
  dc->table = a->p11ContextFuncs;
  D3D11DDI_DEVICEFUNCS* t = a->p11ContextFuncs;
  FillSharedSlots(t);
  t->pfnAbandonCommandList = &AbandonCommandList;
}

inline HRESULT APIENTRY Present(DXGI_DDI_ARG_PRESENT*) { return S_OK; }

inline SIZE_T APIENTRY CalcPrivateDeviceSize(D3D10DDI_HADAPTER,
                                             const D3D10DDIARG_CALCPRIVATEDEVICESIZE*) {
  return sizeof(FakeDevice);
}
inline HRESULT APIENTRY CreateDevice(D3D10DDI_HADAPTER, D3D10DDIARG_CREATEDEVICE* a) {
  FakeDevice* d = new (a->hDrvDevice.pDrvPrivate) FakeDevice;
  d->rt_device = a->hRTDevice.handle;
  d->layer = a->hRTCoreLayer;
  d->callbacks = a->p11UMCallbacks;
  d->kt = a->pKTCallbacks;
  d->table = a->p11DeviceFuncs;
  d->cached_amortized = a->p11UMCallbacks->pfnPerformAmortizedProcessingCb;
  D3D11DDI_DEVICEFUNCS* t = a->p11DeviceFuncs;
  FillSharedSlots(t);
  t->pfnFlush = &Flush;
  t->pfnCalcPrivateDeferredContextSize = &CalcPrivateDeferredContextSize;
  t->pfnCreateDeferredContext = &CreateDeferredContext;
  a->DXGIBaseDDI.pDXGIDDIBaseFunctions->pfnPresent = &Present;
  a->p11UMCallbacks->pfnDisableDeferredStagingResourceDestruction(a->hRTCoreLayer);
  return S_OK;
}
inline HRESULT APIENTRY CloseAdapter(D3D10DDI_HADAPTER) { return S_OK; }
inline HRESULT APIENTRY GetCaps(D3D10DDI_HADAPTER, const D3D10_2DDIARG_GETCAPS* caps) {
  if (caps->Type == D3D11DDICAPS_THREADING && caps->pData != nullptr) {
    static_cast<D3D11DDI_THREADING_CAPS*>(caps->pData)->Caps =
        D3D11DDICAPS_FREETHREADED | D3D11DDICAPS_COMMANDLISTS_BUILD_2;
  }
  return S_OK;
}

inline int g_adapter_token = 0;

}  // namespace fake

inline HRESULT APIENTRY FakeOpenAdapter10_2(D3D10DDIARG_OPENADAPTER* a) {
  a->hAdapter.pDrvPrivate = &fake::g_adapter_token;
  a->pAdapterFuncs_2->pfnCalcPrivateDeviceSize = &fake::CalcPrivateDeviceSize;
  a->pAdapterFuncs_2->pfnCreateDevice = &fake::CreateDevice;
  a->pAdapterFuncs_2->pfnCloseAdapter = &fake::CloseAdapter;
  a->pAdapterFuncs_2->pfnGetCaps = &fake::GetCaps;
  return S_OK;
}

// ---- The runtime side ----

struct FakeRtContext {
  D3D11DDI_CORELAYER_DEVICECALLBACKS callbacks{};
  D3D11DDI_DEVICEFUNCS funcs{};  // what the runtime calls through
  D3D10DDI_HDEVICE handle{};
  std::unique_ptr<unsigned char[]> memory;
  std::atomic<uint64_t> amortized_old{0}, amortized_new{0}, refreshes{0}, disable_staging{0};
  bool swapped = false;
};

struct FakeRtDevice {
  D3DDDI_DEVICECALLBACKS kt{};
  std::atomic<uint64_t> renders{0};
};

namespace fake_rt {

inline FakeRtContext* Ctx(D3D10DDI_HRTCORELAYER h) { return static_cast<FakeRtContext*>(h.handle); }
inline void APIENTRY AmortizedOld(D3D10DDI_HRTCORELAYER h) { Ctx(h)->amortized_old++; }
inline void APIENTRY AmortizedNew(D3D10DDI_HRTCORELAYER h) { Ctx(h)->amortized_new++; }
inline void APIENTRY DisableStaging(D3D10DDI_HRTCORELAYER h) { Ctx(h)->disable_staging++; }
inline void APIENTRY SetError(D3D10DDI_HRTCORELAYER, HRESULT) {}
inline void APIENTRY RefreshRenderTargets(D3D10DDI_HRTCORELAYER h) {
  FakeRtContext* c = Ctx(h);
  c->refreshes++;
  // The runtime re-sends the binding through its (wrapped) table: nested in the callback.
  c->funcs.pfnSetRenderTargets(c->handle, nullptr, 0, 0, D3D10DDI_HDEPTHSTENCILVIEW{}, nullptr,
                               nullptr, 0, 0, 0, 0);
}
inline HRESULT APIENTRY Render(HANDLE h, D3DDDICB_RENDER*) {
  static_cast<FakeRtDevice*>(h)->renders++;
  return S_OK;
}

inline void InitCallbacks(FakeRtContext* c) {
  c->callbacks.pfnSetErrorCb = &SetError;
  c->callbacks.pfnPerformAmortizedProcessingCb = &AmortizedOld;
  c->callbacks.pfnStateOmRenderTargetsCb = &RefreshRenderTargets;
  c->callbacks.pfnDisableDeferredStagingResourceDestruction = &DisableStaging;
}

}  // namespace fake_rt

// A minimal runtime: one device, its IC and any number of DCs.
class FakeRuntime {
 public:
  // Opens the adapter through `open` (the driver's entry point, or one that wraps it) and
  // creates the device.
  HRESULT Create(HRESULT (*open)(D3D10DDIARG_OPENADAPTER*)) {
    D3D10DDIARG_OPENADAPTER o{};
    o.pAdapterFuncs_2 = &adapter_funcs_;
    HRESULT hr = open(&o);
    if (hr != S_OK) return hr;
    adapter_ = o.hAdapter;
    D3D10DDIARG_CALCPRIVATEDEVICESIZE calc{};
    const SIZE_T size = adapter_funcs_.pfnCalcPrivateDeviceSize(adapter_, &calc);
    ic_.memory.reset(new unsigned char[size]);
    ic_.handle.pDrvPrivate = ic_.memory.get();
    fake_rt::InitCallbacks(&ic_);
    device_.kt.pfnRenderCb = &fake_rt::Render;
    D3D10DDIARG_CREATEDEVICE cd{};
    cd.hRTDevice.handle = &device_;
    cd.pKTCallbacks = &device_.kt;
    cd.p11DeviceFuncs = &ic_.funcs;
    cd.hDrvDevice = ic_.handle;
    cd.DXGIBaseDDI.pDXGIDDIBaseFunctions = &dxgi_;
    cd.hRTCoreLayer.handle = &ic_;
    cd.p11UMCallbacks = &ic_.callbacks;
    return adapter_funcs_.pfnCreateDevice(adapter_, &cd);
  }

  FakeRtContext* CreateDeferredContext() {
    auto dc = std::make_unique<FakeRtContext>();
    D3D11DDIARG_CALCPRIVATEDEFERREDCONTEXTSIZE calc{};
    const SIZE_T size = ic_.funcs.pfnCalcPrivateDeferredContextSize(ic_.handle, &calc);
    dc->memory.reset(new unsigned char[size]);
    dc->handle.pDrvPrivate = dc->memory.get();
    fake_rt::InitCallbacks(dc.get());
    D3D11DDIARG_CREATEDEFERREDCONTEXT a{};
    a.p11ContextFuncs = &dc->funcs;
    a.hDrvContext = dc->handle;
    a.hRTCoreLayer.handle = dc.get();
    a.p11UMCallbacks = &dc->callbacks;
    ic_.funcs.pfnCreateDeferredContext(ic_.handle, &a);
    dcs_.push_back(std::move(dc));
    return dcs_.back().get();
  }

  void DestroyDeferredContext(FakeRtContext* dc) { dc->funcs.pfnDestroyDevice(dc->handle); }

  // The R6 probe: replaces the amortized-processing pointer of the context's table.
  static void SwapCallbacks(FakeRtContext* c) {
    c->callbacks.pfnPerformAmortizedProcessingCb =
        c->swapped ? &fake_rt::AmortizedOld : &fake_rt::AmortizedNew;
    c->swapped = !c->swapped;
  }

  void Destroy() {
    ic_.funcs.pfnDestroyDevice(ic_.handle);
    adapter_funcs_.pfnCloseAdapter(adapter_);
  }

  FakeRtContext& ic() { return ic_; }
  FakeRtDevice& device() { return device_; }
  D3D10_2DDI_ADAPTERFUNCS& adapter_funcs() { return adapter_funcs_; }
  D3D10DDI_HADAPTER adapter() const { return adapter_; }
  DXGI_DDI_BASE_FUNCTIONS& dxgi() { return dxgi_; }

 private:
  D3D10_2DDI_ADAPTERFUNCS adapter_funcs_{};
  D3D10DDI_HADAPTER adapter_{};
  FakeRtContext ic_;
  FakeRtDevice device_;
  DXGI_DDI_BASE_FUNCTIONS dxgi_{};
  std::vector<std::unique_ptr<FakeRtContext>> dcs_;
};

// The recorder's OpenAdapter around the fake driver's: everything below the adapter recorded.
inline HRESULT APIENTRY RecordedOpenAdapter(D3D10DDIARG_OPENADAPTER* a) {
  return OpenAdapter(&FakeOpenAdapter10_2, a);
}

}  // namespace cltrace::recorder::testing

#endif  // CLTRACE_RECORDER_INTERNAL_FAKE_DRIVER_H_
