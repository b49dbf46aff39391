// State-refresh use of the reference driver: the probes of R49/R60 and the command-buffer
// preamble rebuilt through refresh after every submit (CD10: refresh is how a driver re-emits
// state into a new command buffer).
#include "refdriver/internal/refresh.h"

#include <climits>

#include "refdriver/internal/common.h"
#include "refdriver/internal/ops.h"

namespace cltrace::refdriver {
namespace {

struct Probe {
  const void* ctx;
  bool expect_bound;
  rules::Rule rule;
  const char* phase;
};
thread_local Probe* t_probe = nullptr;

class ProbeScope {
 public:
  explicit ProbeScope(Probe* p) : previous_(t_probe), refresh_(p->ctx) { t_probe = p; }
  ProbeScope(Probe* p, const void* ctx) : previous_(t_probe), refresh_(ctx) { t_probe = p; }
  ~ProbeScope() { t_probe = previous_; }

 private:
  Probe* previous_;
  RefreshScope refresh_;
};

}  // namespace

void NoteRefreshAnswer(const void* ctx, bool matches_current, bool all_null) {
  Probe* p = t_probe;
  if (p == nullptr || p->ctx != ctx) return;
  if (p->expect_bound && !matches_current) {
    Report(p->rule, ctx,
           absl::StrCat("state refresh during ", p->phase, " re-sent ", CurrentFn(),
                        " bindings that differ from the context's current ones"));
  } else if (!p->expect_bound && !all_null) {
    Report(p->rule, ctx,
           absl::StrCat("state refresh during ", p->phase, " re-sent bound objects through ",
                        CurrentFn(), "; nothing is bound at this point"));
  }
}

void ProbeDcRefresh(DeferredContext* dc, bool expect_bound, const char* phase) {
  Probe p{dc, expect_bound, rules::Rule::kR49, phase};
  ProbeScope scope(&p);
  const D3D11DDI_CORELAYER_DEVICECALLBACKS* cb = dc->callbacks;
  // Planted bug R6: this one pointer was copied at CreateDeferredContext.
  PFND3D10DDI_STATE_OM_RENDERTARGETS_CB rt =
      dc->device->config.Has(Bug::kR6) ? dc->cached_refresh : cb->pfnStateOmRenderTargetsCb;
  rt(dc->rt_core_layer);
  cb->pfnStateIaVertexBufCb(dc->rt_core_layer, 0, UINT_MAX);
  cb->pfnStateVsShaderCb(dc->rt_core_layer);
}

void ProbeIcRefresh(Device* dev, const char* phase) {
  // The expectation is the driver's own state; with planted bug R60 that state is stale, so the
  // comparison would blame the runtime for the driver's bug: refresh without checking then.
  Probe p{dev->config.Has(Bug::kR60) ? nullptr : dev, true, rules::Rule::kR60, phase};
  ProbeScope scope(&p, dev);
  const D3D11DDI_CORELAYER_DEVICECALLBACKS* cb = dev->callbacks;
  cb->pfnStateOmRenderTargetsCb(dev->rt_core_layer);
  cb->pfnStateIaVertexBufCb(dev->rt_core_layer, 0, UINT_MAX);
  cb->pfnStateVsShaderCb(dev->rt_core_layer);
}

void RefreshPreamble(Device* dev) {
  RefreshScope scope(dev);
  const D3D11DDI_CORELAYER_DEVICECALLBACKS* cb = dev->callbacks;
  D3D10DDI_HRTCORELAYER rt = dev->rt_core_layer;
  cb->pfnStateIaInputLayoutCb(rt);
  cb->pfnStateIaVertexBufCb(rt, 0, UINT_MAX);
  cb->pfnStateIaIndexBufCb(rt);
  cb->pfnStateIaPrimitiveTopologyCb(rt);
  cb->pfnStateVsShaderCb(rt);
  cb->pfnStatePsShaderCb(rt);
  cb->pfnStateVsConstBufCb(rt, 0, UINT_MAX);
  cb->pfnStatePsConstBufCb(rt, 0, UINT_MAX);
  cb->pfnStatePsSrvCb(rt, 0, UINT_MAX);
  cb->pfnStatePsSamplerCb(rt, 0, UINT_MAX);
  cb->pfnStateOmRenderTargetsCb(rt);
  cb->pfnStateOmBlendStateCb(rt);
  cb->pfnStateOmDepthStateCb(rt);
  cb->pfnStateRsRastStateCb(rt);
  cb->pfnStateRsViewportsCb(rt);
  cb->pfnStateRsScissorCb(rt);
}

}  // namespace cltrace::refdriver
