// The runtime's answers to the core-layer callbacks (D3D11DDI_CORELAYER_DEVICECALLBACKS) and
// the driver-side rules they check: R6 (stale cached pointers), R7, R19, R20–R31 (error
// channels and routing), R71/R72 (amortized-processing cadence), and the state-refresh timing
// of R49/R60 (answered by re-sending bindings through the driver's Set* DDIs).
#include "runtime/internal/callbacks.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/internal/common.h"
#include "runtime/internal/send.h"

namespace cltrace::runtime::internal {
namespace {

CoreLayer* LayerOf(D3D10DDI_HRTCORELAYER h) { return static_cast<CoreLayer*>(h.handle); }

// A size query: CalcPrivate*Size or CalcDeferredContextHandleSize (R31).
bool IsCalc(ddi::CallId id) {
  const ddi::CallRole role = ddi::TraitsOf(id).role;
  return ddi::IsSizeQuery(role) || role == ddi::CallRole::kLocalSize;
}

// The calls that may fail only with D3DDDIERR_DEVICEREMOVED (R25).
bool OnlyDeviceRemoved(ddi::CallId id) {
  using ddi::CallId;
  switch (id) {
    case CallId::kDestroyCommandList:
    case CallId::kRecycleDestroyCommandList:
    case CallId::kDestroyDevice:
    case CallId::kFlush:
    case CallId::kQueryBegin:
    case CallId::kQueryEnd:
    case CallId::kDestroyResource:
    case CallId::kRecycleCommandList:
      return true;
    default:
      return false;
  }
}

// Entry of every callback: counting, R6 generation check, frame, transcript line.
class CallbackEntry {
 public:
  template <typename... A>
  CallbackEntry(int generation, D3D10DDI_HRTCORELAYER h, ddi::CallId id, const A&... args)
      : layer_(LayerOf(h)),
        dev_(layer_->ctx->dev),
        scope_(&dev_->sink, dev_, layer_->ctx, Table::kCallback, false, ddi::NameOf(id), id) {
    const char* name = ddi::NameOf(id);
    dev_->sink.calls->fetch_add(1, std::memory_order_relaxed);
    if (dev_->sink.observer != nullptr) {
      EmitLine(&dev_->sink, 0,
               absl::StrCat("cb ", name, "(", FormatArgs(dev_->sink.names, args...), ")"));
    }
    if (layer_->generation.load(std::memory_order_relaxed) != generation) {
      Report(dev_, rules::Rule::kR6, name,
             absl::StrCat("driver called a stale pfn", name, " of ", layer_->name,
                          " (the runtime replaced the table's pointers; the driver cached one)"));
    }
  }
  CoreLayer* layer() const { return layer_; }
  ContextState* ctx() const { return layer_->ctx; }
  DeviceState* dev() const { return dev_; }
  const char* name() { return scope_.frame().name; }

 private:
  CoreLayer* layer_;
  DeviceState* dev_;
  FrameScope scope_;
};

// The refresh answer for `ctx` now: nothing bound while the DC is closed (R49), else the
// current bindings (during CommandListExecute these are still the pre-execute ones, R60).
SendMode RefreshMode(ContextState* ctx) {
  return ctx->phase == Phase::kClosed ? SendMode::kNull : SendMode::kCurrent;
}

void CheckError(CallbackEntry& e, HRESULT hr) {
  DeviceState* dev = e.dev();
  ContextState* ctx = e.ctx();
  Frame* f = CurrentDdiFrame();
  std::string code = HresultName(hr);
  if (f == nullptr) {
    Report(dev, rules::Rule::kR28, "SetErrorCb",
           absl::StrCat(code, " reported outside any DDI call"));
    return;
  }
  const char* fn = f->name;
  // R28: errors go to the core layer of the table the call came through.
  ContextState* expected = f->table == Table::kDc ? f->ctx : dev->ic;
  if (expected != nullptr && expected != ctx) {
    Report(dev, rules::Rule::kR28, fn,
           absl::StrCat(code, " reported to ", ctx->layer.name, " from a ",
                        f->table == Table::kDc ? "DC-table" : "IC-table", " call (expected ",
                        expected->layer.name, ")"));
  }
  bool dc = f->table == Table::kDc;
  uint32_t u = static_cast<uint32_t>(hr);
  bool oom = u == E_OUTOFMEMORY;
  bool removed = u == D3DDDIERR_DEVICEREMOVED;
  if (u == E_INVALIDARG) {
    Report(dev, rules::Rule::kR30, fn,
           "E_INVALIDARG reported (application errors use D3DDDIERR_APPLICATIONERROR)");
  }
  using ddi::CallId;
  const CallId id = f->id;
  if (IsCalc(id)) {
    Report(dev, rules::Rule::kR31, fn,
           absl::StrCat("pfnSetErrorCb(", code, ") from a CalcPrivate/size function"));
  } else if (id == CallId::kCheckDeferredContextHandleSizes) {
    Report(dev, rules::Rule::kR27, fn,
           absl::StrCat("pfnSetErrorCb(", code, ") from a capability check"));
  } else if (id == CallId::kCreateCommandList && !dc) {
    if (!oom && !removed)
      Report(dev, rules::Rule::kR20, fn, absl::StrCat(code, " is not a legal code"));
  } else if (id == CallId::kRecycleCreateCommandList) {
    if (oom)
      Report(dev, rules::Rule::kR22, fn,
             "E_OUTOFMEMORY through pfnSetErrorCb (must be the return value)");
  } else if (id == CallId::kRecycleCreateDeferredContext) {
    if (oom)
      Report(dev, rules::Rule::kR23, fn,
             "E_OUTOFMEMORY through pfnSetErrorCb (must be the return value)");
  } else if (id == CallId::kCommandListExecute) {
    if (!oom && !removed)
      Report(dev, rules::Rule::kR24, fn, absl::StrCat(code, " is a critical error here"));
  } else if (id == CallId::kAbandonCommandList) {
    Report(dev, rules::Rule::kR26, fn,
           absl::StrCat(code, ": AbandonCommandList may only fail critically"));
  } else if (OnlyDeviceRemoved(id)) {
    if (!removed && !(dc && oom)) {
      Report(dev, rules::Rule::kR25, fn,
             absl::StrCat(code, ": only D3DDDIERR_DEVICEREMOVED is allowed"));
    }
  }
  if (removed) dev->removed.store(true);
  if (oom && dc && f->ctx != nullptr && f->ctx->deferred) {
    // Local context removal: the recording is discarded at FinishCommandList (R29).
    f->ctx->local_removed = true;
  }
}

template <int G>
struct Thunks {
  static void APIENTRY SetErrorCb(D3D10DDI_HRTCORELAYER h, HRESULT hr) {
    CallbackEntry e(G, h, ddi::CallId::kSetErrorCb, HresultName(hr));
    ErrorCapture::Record(hr);
    CheckError(e, hr);
  }

  static void APIENTRY PerformAmortizedProcessingCb(D3D10DDI_HRTCORELAYER h) {
    CallbackEntry e(G, h, ddi::CallId::kPerformAmortizedProcessingCb, h);
    DeviceState* dev = e.dev();
    ContextState* ctx = e.ctx();
    Frame* f = CurrentDdiFrame();
    bool dc = ctx->deferred;
    if (f == nullptr || (dc && f->ctx != ctx) || (!dc && f->table == Table::kDc)) {
      Report(dev, rules::Rule::kR19, e.name(),
             absl::StrCat("pumped ", ctx->layer.name, " from ",
                          f == nullptr ? "outside any DDI call"
                                       : absl::StrCat("inside ", f->name, " of another context")));
    }
    if (f != nullptr && ++f->amortized_calls > 1) {
      Report(dev, dc ? rules::Rule::kR72 : rules::Rule::kR71, e.name(),
             absl::StrCat("pumped ", ctx->layer.name, " twice within one ", f->name,
                          " (at most once per submit)"));
    }
    if (!dc) dev->submits_since_amortized = 0;
  }

  static void APIENTRY DisableDeferredStagingResourceDestruction(D3D10DDI_HRTCORELAYER h) {
    CallbackEntry e(G, h, ddi::CallId::kDisableDeferredStagingResourceDestruction, h);
    Frame* f = CurrentDdiFrame();
    if (e.ctx()->deferred || f == nullptr || f->id != ddi::CallId::kCreateDevice) {
      Report(e.dev(), rules::Rule::kR7, e.name(),
             "called outside the immediate context's CreateDevice");
    }
  }

#define CLTRACE_REFRESH_SINGLE(Cb, Send)             \
  static void APIENTRY Cb(D3D10DDI_HRTCORELAYER h) { \
    CallbackEntry e(G, h, ddi::CallId::k##Cb, h);    \
    Send(e.ctx(), RefreshMode(e.ctx()));             \
  }
#define CLTRACE_REFRESH_STAGE_SINGLE(Cb, stage)       \
  static void APIENTRY Cb(D3D10DDI_HRTCORELAYER h) {  \
    CallbackEntry e(G, h, ddi::CallId::k##Cb, h);     \
    SendShader(e.ctx(), stage, RefreshMode(e.ctx())); \
  }
#define CLTRACE_REFRESH_RANGE(Cb, Send, stage)                              \
  static void APIENTRY Cb(D3D10DDI_HRTCORELAYER h, UINT base, UINT count) { \
    CallbackEntry e(G, h, ddi::CallId::k##Cb, h, base, count);              \
    Send(e.ctx(), stage, base, count, RefreshMode(e.ctx()));                \
  }

  CLTRACE_REFRESH_RANGE(StateVsConstBufCb, SendConstantBuffers, Stage::kVS)
  CLTRACE_REFRESH_RANGE(StatePsConstBufCb, SendConstantBuffers, Stage::kPS)
  CLTRACE_REFRESH_RANGE(StateGsConstBufCb, SendConstantBuffers, Stage::kGS)
  CLTRACE_REFRESH_RANGE(StateHsConstBufCb, SendConstantBuffers, Stage::kHS)
  CLTRACE_REFRESH_RANGE(StateDsConstBufCb, SendConstantBuffers, Stage::kDS)
  CLTRACE_REFRESH_RANGE(StateCsConstBufCb, SendConstantBuffers, Stage::kCS)
  CLTRACE_REFRESH_RANGE(StateVsSrvCb, SendShaderResources, Stage::kVS)
  CLTRACE_REFRESH_RANGE(StatePsSrvCb, SendShaderResources, Stage::kPS)
  CLTRACE_REFRESH_RANGE(StateGsSrvCb, SendShaderResources, Stage::kGS)
  CLTRACE_REFRESH_RANGE(StateHsSrvCb, SendShaderResources, Stage::kHS)
  CLTRACE_REFRESH_RANGE(StateDsSrvCb, SendShaderResources, Stage::kDS)
  CLTRACE_REFRESH_RANGE(StateCsSrvCb, SendShaderResources, Stage::kCS)
  CLTRACE_REFRESH_RANGE(StateVsSamplerCb, SendSamplers, Stage::kVS)
  CLTRACE_REFRESH_RANGE(StatePsSamplerCb, SendSamplers, Stage::kPS)
  CLTRACE_REFRESH_RANGE(StateGsSamplerCb, SendSamplers, Stage::kGS)
  CLTRACE_REFRESH_RANGE(StateHsSamplerCb, SendSamplers, Stage::kHS)
  CLTRACE_REFRESH_RANGE(StateDsSamplerCb, SendSamplers, Stage::kDS)
  CLTRACE_REFRESH_RANGE(StateCsSamplerCb, SendSamplers, Stage::kCS)
  CLTRACE_REFRESH_STAGE_SINGLE(StateVsShaderCb, Stage::kVS)
  CLTRACE_REFRESH_STAGE_SINGLE(StatePsShaderCb, Stage::kPS)
  CLTRACE_REFRESH_STAGE_SINGLE(StateGsShaderCb, Stage::kGS)
  CLTRACE_REFRESH_STAGE_SINGLE(StateHsShaderCb, Stage::kHS)
  CLTRACE_REFRESH_STAGE_SINGLE(StateDsShaderCb, Stage::kDS)
  CLTRACE_REFRESH_STAGE_SINGLE(StateCsShaderCb, Stage::kCS)
  CLTRACE_REFRESH_SINGLE(StateIaInputLayoutCb, SendInputLayout)
  CLTRACE_REFRESH_SINGLE(StateIaIndexBufCb, SendIndexBuffer)
  CLTRACE_REFRESH_SINGLE(StateIaPrimitiveTopologyCb, SendTopology)
  CLTRACE_REFRESH_SINGLE(StateOmRenderTargetsCb, SendRenderTargets)
  CLTRACE_REFRESH_SINGLE(StateOmBlendStateCb, SendBlendState)
  CLTRACE_REFRESH_SINGLE(StateOmDepthStateCb, SendDepthStencilState)
  CLTRACE_REFRESH_SINGLE(StateRsRastStateCb, SendRasterizerState)
  CLTRACE_REFRESH_SINGLE(StateSoTargetsCb, SendSoTargets)
  CLTRACE_REFRESH_SINGLE(StateRsViewportsCb, SendViewports)
  CLTRACE_REFRESH_SINGLE(StateRsScissorCb, SendScissorRects)

  static void APIENTRY StateIaVertexBufCb(D3D10DDI_HRTCORELAYER h, UINT base, UINT count) {
    CallbackEntry e(G, h, ddi::CallId::kStateIaVertexBufCb, h, base, count);
    SendVertexBuffers(e.ctx(), base, count, RefreshMode(e.ctx()));
  }
  static void APIENTRY StateCsUavCb(D3D10DDI_HRTCORELAYER h, UINT base, UINT count) {
    CallbackEntry e(G, h, ddi::CallId::kStateCsUavCb, h, base, count);
    SendCsUavs(e.ctx(), base, count, RefreshMode(e.ctx()));
  }
  // The D3D11 DDI table in scope has no SetTextFilterSize: nothing to re-send.
  static void APIENTRY StateTextFilterSizeCb(D3D10DDI_HRTCORELAYER h) {
    CallbackEntry e(G, h, ddi::CallId::kStateTextFilterSizeCb, h);
  }

#undef CLTRACE_REFRESH_SINGLE
#undef CLTRACE_REFRESH_STAGE_SINGLE
#undef CLTRACE_REFRESH_RANGE

  static void Fill(D3D11DDI_CORELAYER_DEVICECALLBACKS* t) {
    t->pfnSetErrorCb = &SetErrorCb;
    t->pfnStateVsConstBufCb = &StateVsConstBufCb;
    t->pfnStatePsSrvCb = &StatePsSrvCb;
    t->pfnStatePsShaderCb = &StatePsShaderCb;
    t->pfnStatePsSamplerCb = &StatePsSamplerCb;
    t->pfnStateVsShaderCb = &StateVsShaderCb;
    t->pfnStatePsConstBufCb = &StatePsConstBufCb;
    t->pfnStateIaInputLayoutCb = &StateIaInputLayoutCb;
    t->pfnStateIaVertexBufCb = &StateIaVertexBufCb;
    t->pfnStateIaIndexBufCb = &StateIaIndexBufCb;
    t->pfnStateGsConstBufCb = &StateGsConstBufCb;
    t->pfnStateGsShaderCb = &StateGsShaderCb;
    t->pfnStateIaPrimitiveTopologyCb = &StateIaPrimitiveTopologyCb;
    t->pfnStateVsSrvCb = &StateVsSrvCb;
    t->pfnStateVsSamplerCb = &StateVsSamplerCb;
    t->pfnStateGsSrvCb = &StateGsSrvCb;
    t->pfnStateGsSamplerCb = &StateGsSamplerCb;
    t->pfnStateOmRenderTargetsCb = &StateOmRenderTargetsCb;
    t->pfnStateOmBlendStateCb = &StateOmBlendStateCb;
    t->pfnStateOmDepthStateCb = &StateOmDepthStateCb;
    t->pfnStateRsRastStateCb = &StateRsRastStateCb;
    t->pfnStateSoTargetsCb = &StateSoTargetsCb;
    t->pfnStateRsViewportsCb = &StateRsViewportsCb;
    t->pfnStateRsScissorCb = &StateRsScissorCb;
    t->pfnDisableDeferredStagingResourceDestruction = &DisableDeferredStagingResourceDestruction;
    t->pfnStateTextFilterSizeCb = &StateTextFilterSizeCb;
    t->pfnStateHsSrvCb = &StateHsSrvCb;
    t->pfnStateHsShaderCb = &StateHsShaderCb;
    t->pfnStateHsSamplerCb = &StateHsSamplerCb;
    t->pfnStateHsConstBufCb = &StateHsConstBufCb;
    t->pfnStateDsSrvCb = &StateDsSrvCb;
    t->pfnStateDsShaderCb = &StateDsShaderCb;
    t->pfnStateDsSamplerCb = &StateDsSamplerCb;
    t->pfnStateDsConstBufCb = &StateDsConstBufCb;
    t->pfnPerformAmortizedProcessingCb = &PerformAmortizedProcessingCb;
    t->pfnStateCsSrvCb = &StateCsSrvCb;
    t->pfnStateCsUavCb = &StateCsUavCb;
    t->pfnStateCsShaderCb = &StateCsShaderCb;
    t->pfnStateCsSamplerCb = &StateCsSamplerCb;
    t->pfnStateCsConstBufCb = &StateCsConstBufCb;
  }
};

}  // namespace

void InitCoreLayer(CoreLayer* layer, ContextState* ctx, std::string name) {
  layer->ctx = ctx;
  layer->name = std::move(name);
  layer->generation.store(0);
  Thunks<0>::Fill(&layer->table);
}

void SwapCoreCallbacks(CoreLayer* layer) {
  int next = 1 - layer->generation.load(std::memory_order_relaxed);
  if (next == 0) {
    Thunks<0>::Fill(&layer->table);
  } else {
    Thunks<1>::Fill(&layer->table);
  }
  layer->generation.store(next, std::memory_order_relaxed);
}

namespace {

HRESULT APIENTRY QueryAdapterInfoCb(HANDLE /*hAdapter*/, const D3DDDICB_QUERYADAPTERINFO* data) {
  if (data == nullptr || (data->pPrivateDriverData == nullptr && data->PrivateDriverDataSize != 0))
    return static_cast<HRESULT>(E_INVALIDARG);
  if (data->PrivateDriverDataSize != 0)
    std::memset(data->pPrivateDriverData, 0, data->PrivateDriverDataSize);
  return S_OK;
}

HRESULT APIENTRY GetMultisampleMethodListCb(HANDLE /*hAdapter*/,
                                            D3DDDICB_GETMULTISAMPLEMETHODLIST* data) {
  if (data == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  if (data->pMethodList != nullptr && data->MethodCount >= 1) {
    data->pMethodList[0].NumSamples = 1;
    data->pMethodList[0].NumQualityLevels = 1;
  }
  data->MethodCount = 1;
  return S_OK;
}

}  // namespace

const D3DDDI_ADAPTERCALLBACKS* AdapterCallbacks() {
  static constexpr D3DDDI_ADAPTERCALLBACKS kTable = {&QueryAdapterInfoCb,
                                                     &GetMultisampleMethodListCb};
  return &kTable;
}

}  // namespace cltrace::runtime::internal
