// Deferred-context DDIs of the reference driver: the DC handle state machine (ddi-spec §3.2,
// R47–R53) and the context-local handle sizes (R32–R37).
#include <new>

#include "refdriver/internal/common.h"
#include "refdriver/internal/ops.h"
#include "refdriver/internal/tables.h"

namespace cltrace::refdriver {
namespace {

// Every context-local handle of this driver is one LocalObject, whatever the type.
constexpr SIZE_T kLocalHandleSize = sizeof(LocalObject);

void ResetDc(DeferredContext* dc) {
  dc->state.Clear();
  if (dc->device != nullptr) ReleaseRecordingAliases(dc->device, dc->rec);
  dc->rec.Clear();
  dc->building_queries.clear();
  dc->mapped_resources.clear();
  dc->mapped_this_recording.clear();
  dc->closing_started = false;
  dc->local_oom_reported = false;
}

}  // namespace

void APIENTRY CheckDeferredContextHandleSizes(D3D10DDI_HDEVICE hDevice, UINT* pHSizes,
                                              D3D11DDI_HANDLESIZE* pHandleSize) {
  CallScope scope("CheckDeferredContextHandleSizes");
  // Answers even for an invalid device (reported): the sizes do not depend on it (R27).
  if (Device* dev = IcDevice(hDevice)) CountCall(dev);
  // Never reports an error, before or after device removal (R27).
  if (pHSizes == nullptr) return;
  if (pHandleSize == nullptr) {
    *pHSizes = kHandleTypeCount;
    return;
  }
  UINT n = *pHSizes < kHandleTypeCount ? *pHSizes : kHandleTypeCount;
  for (UINT i = 0; i < n; ++i) {
    pHandleSize[i].HandleType = static_cast<D3D11DDI_HANDLETYPE>(i);
    pHandleSize[i].DriverPrivateSize = kLocalHandleSize;
  }
  *pHSizes = n;
}

SIZE_T APIENTRY CalcDeferredContextHandleSize(D3D10DDI_HDEVICE hDevice,
                                              D3D11DDI_HANDLETYPE HandleType, PVOID /*pICObject*/) {
  CallScope scope("CalcDeferredContextHandleSize");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return kLocalHandleSize;
  CountCall(dev);
  if (dev->config.Has(Bug::kR33) && HandleType == D3D10DDI_HT_RESOURCE) {
    // Planted bug R33: a size that CheckDeferredContextHandleSizes never listed.
    return kLocalHandleSize + 8;
  }
  return kLocalHandleSize;
}

SIZE_T APIENTRY CalcPrivateDeferredContextSize(
    D3D10DDI_HDEVICE hDevice, const D3D11DDIARG_CALCPRIVATEDEFERREDCONTEXTSIZE* /*args*/) {
  CallScope scope("CalcPrivateDeferredContextSize");
  if (Device* dev = IcDevice(hDevice)) CountCall(dev);
  return sizeof(DeferredContext);
}

void APIENTRY CreateDeferredContext(D3D10DDI_HDEVICE hDevice,
                                    const D3D11DDIARG_CREATEDEFERREDCONTEXT* args) {
  CallScope scope("CreateDeferredContext");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  CountCall(dev);
  // Without these nothing can be created; the handle stays unknown to the driver, so every
  // later call on it is reported (R53/R48) instead of crashing.
  if (!ArgPresent(args, "CreateDeferredContext", "pCreateDeferredContext") ||
      !HandleMemoryPresent(args->hDrvContext.pDrvPrivate, "CreateDeferredContext", "hDrvContext") ||
      !ArgPresent(args->p11ContextFuncs, "CreateDeferredContext", "p11ContextFuncs") ||
      !ArgPresent(args->p11UMCallbacks, "CreateDeferredContext", "p11UMCallbacks")) {
    return;
  }
  void* h = args->hDrvContext.pDrvPrivate;
  if (const char* kind = ObjectKind(h)) {
    Report(rules::Rule::kR57, h, absl::StrCat("CreateDeferredContext into the memory of ", kind));
    return;
  }
  auto* dc = new (h) DeferredContext();
  dc->id = dev->next_id.fetch_add(1);
  dc->device = dev;
  dc->rt_core_layer = args->hRTCoreLayer;
  dc->callbacks = args->p11UMCallbacks;
  if (dev->config.Has(Bug::kR6)) {
    // Planted bug R6: a copy of the callback pointer instead of the runtime's table.
    dc->cached_amortized = args->p11UMCallbacks->pfnPerformAmortizedProcessingCb;
    dc->cached_refresh = args->p11UMCallbacks->pfnStateOmRenderTargetsCb;
  }
  FillDcTable(args->p11ContextFuncs);
  SetDcState(h, DcEntry{dev, DcState::kRecording, false});
}

HRESULT APIENTRY RecycleCreateDeferredContext(D3D10DDI_HDEVICE hDevice,
                                              const D3D11DDIARG_CREATEDEFERREDCONTEXT* args) {
  CallScope scope("RecycleCreateDeferredContext");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return static_cast<HRESULT>(E_OUTOFMEMORY);
  CountCall(dev);
  if (!ArgPresent(args, "RecycleCreateDeferredContext", "pCreateDeferredContext")) {
    return static_cast<HRESULT>(E_OUTOFMEMORY);
  }
  void* h = args->hDrvContext.pDrvPrivate;
  DcEntry entry;
  if (!LookupDc(h, &entry) || entry.state == DcState::kDestroyed) {
    Report(rules::Rule::kR48, h,
           "RecycleCreateDeferredContext on a handle that is not a live deferred context");
    return static_cast<HRESULT>(E_OUTOFMEMORY);
  }
  auto* dc = static_cast<DeferredContext*>(h);
  // D9 (from Clo/Abd) or D5e (from Fin after a failed create) of the §3.2 table.
  if (!IsDcEdge(TableState(entry), DcState::kRecording, "RecycleCreateDeferredContext")) {
    Report(rules::Rule::kR48, h,
           absl::StrCat("RecycleCreateDeferredContext in state ", rules::StateName(entry.state),
                        " (only after AbandonCommandList or Create/RecycleCreateCommandList)"));
  }
  if (!dc->locals.empty()) {
    Report(rules::Rule::kR48, h,
           absl::StrCat("RecycleCreateDeferredContext with ", dc->locals.size(),
                        " context-local handle(s) still open (closing incomplete)"));
  }
  if (dev->config.Has(Bug::kR50) && dc->last_used_local != nullptr) {
    // Planted bug R50: drops its reference on the last context-local handle it used, writing
    // into a handle the runtime closed (and owns again) during the closing loop.
    --AsLocal(dc->last_used_local)->bind_refs;
  }
  dc->last_used_local = nullptr;
  if (InjectFault(dev, FaultSite::kRecycleCreateDeferredContext)) {
    // Clean up before failing; the handle stays Closed and a DestroyDevice is tolerated (D9e).
    ResetDc(dc);
    UpdateDc(h, [](DcEntry& e) { e.recycle_failed = true; });
    return static_cast<HRESULT>(E_OUTOFMEMORY);
  }
  ProbeDcRefresh(dc, /*expect_bound=*/false, "RecycleCreateDeferredContext");
  ResetDc(dc);
  UpdateDc(h, [](DcEntry& e) {
    e.state = DcState::kRecording;
    e.create_failed = false;
  });
  return S_OK;
}

void APIENTRY AbandonCommandList(D3D10DDI_HDEVICE hDevice) {
  CallScope scope("AbandonCommandList");
  DcCallScope call(hDevice, rules::Rule::kR51);
  if (!call.ok()) return;
  DeferredContext* dc = call.dc();
  // D7 (from Rec) or D5e (from Fin after a failed create) of the §3.2 table.
  if (!IsDcEdge(TableState(call.entry()), DcState::kAbandoned, "AbandonCommandList")) {
    Report(rules::Rule::kR51, dc,
           absl::StrCat("AbandonCommandList on a deferred context in state ",
                        rules::StateName(call.state())));
  }
  // The driver may leave the bindings as they are; the runtime unbinds them next (§4.7).
  ReleaseRecordingAliases(dc->device, dc->rec);
  dc->rec.Clear();
  dc->building_queries.clear();
  dc->mapped_resources.clear();
  dc->closing_started = false;
  UpdateDc(dc, [](DcEntry& e) { e.state = DcState::kAbandoned; });
}

void APIENTRY DcDestroyDevice(D3D10DDI_HDEVICE hDevice) {
  CallScope scope("DestroyDevice");
  DcEntry entry;
  void* h = hDevice.pDrvPrivate;
  if (!LookupDc(h, &entry) || entry.state == DcState::kDestroyed) {
    Report(rules::Rule::kR48, h, "DestroyDevice on a deferred-context handle that is not live");
    return;
  }
  auto* dc = static_cast<DeferredContext*>(h);
  if (!dc->locals.empty()) {
    Report(rules::Rule::kR48, h,
           absl::StrCat("DestroyDevice with ", dc->locals.size(),
                        " context-local handle(s) still open"));
  }
  // D10/D11, D5e and D9e of the §3.2 table: only a Finish in progress has no destroy edge.
  if (!IsDcEdge(TableState(entry), DcState::kDestroyed, "DestroyDevice")) {
    Report(rules::Rule::kR48, h, "DestroyDevice in the middle of FinishCommandList");
  }
  if (!dc->building_queries.empty() || !dc->rec.stream.empty()) {
    if (entry.state == DcState::kRecording) {
      Report(rules::Rule::kR48, h,
             "DestroyDevice on a deferred context with unfinished commands that was "
             "not abandoned first");
    }
  }
  dc->magic = 0;
  if (dc->device != nullptr) ReleaseRecordingAliases(dc->device, dc->rec);
  dc->~DeferredContext();
  UpdateDc(h, [](DcEntry& e) { e.state = DcState::kDestroyed; });
}

}  // namespace cltrace::refdriver
