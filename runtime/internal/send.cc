#include "runtime/internal/send.h"

#include <algorithm>
#include <climits>

#include "runtime/internal/common.h"
#include "runtime/internal/locals.h"

namespace cltrace::runtime::internal {
namespace {

// Resolves Count = (UINT)-1 ("up to the high watermark") and clamps to the slot count.
uint32_t ClampCount(uint32_t base, uint32_t count, uint32_t hw, uint32_t slots) {
  if (base >= slots) return 0;
  if (count == UINT_MAX) count = hw > base ? hw - base : 0;
  return std::min(count, slots - base);
}

template <typename H>
H Handle(ContextState* c, DeviceChild* o, SendMode mode) {
  H h{};
  if (mode == SendMode::kCurrent && o != nullptr) h.pDrvPrivate = HandleFor(c, o);
  return h;
}

#define CLTRACE_STAGE_DDI(c, stage, Suffix, ...)   \
  switch (stage) {                                 \
    case Stage::kVS:                               \
      CLTRACE_CTX_DDI(c, Vs##Suffix, __VA_ARGS__); \
      break;                                       \
    case Stage::kPS:                               \
      CLTRACE_CTX_DDI(c, Ps##Suffix, __VA_ARGS__); \
      break;                                       \
    case Stage::kGS:                               \
      CLTRACE_CTX_DDI(c, Gs##Suffix, __VA_ARGS__); \
      break;                                       \
    case Stage::kHS:                               \
      CLTRACE_CTX_DDI(c, Hs##Suffix, __VA_ARGS__); \
      break;                                       \
    case Stage::kDS:                               \
      CLTRACE_CTX_DDI(c, Ds##Suffix, __VA_ARGS__); \
      break;                                       \
    case Stage::kCS:                               \
      CLTRACE_CTX_DDI(c, Cs##Suffix, __VA_ARGS__); \
      break;                                       \
  }

uint64_t IcOf(DeviceChild* o) {
  return reinterpret_cast<uint64_t>(o == nullptr ? nullptr : o->ic_handle());
}

}  // namespace

void* HandleFor(ContextState* c, DeviceChild* o) {
  if (o == nullptr) return nullptr;
  if (!c->deferred) return o->ic_handle();
  return EnsureLocal(c, o);
}

void SendShader(ContextState* c, Stage stage, SendMode mode) {
  auto h = Handle<D3D10DDI_HSHADER>(c, c->bindings.shader[static_cast<int>(stage)], mode);
  CLTRACE_STAGE_DDI(c, stage, SetShader, h);
}

void SendShaderWithIfaces(ContextState* c, Stage stage, uint32_t count, const uint32_t* interfaces,
                          const D3D11DDIARG_POINTERDATA* pointer_data) {
  auto h =
      Handle<D3D10DDI_HSHADER>(c, c->bindings.shader[static_cast<int>(stage)], SendMode::kCurrent);
  CLTRACE_STAGE_DDI(c, stage, SetShaderWithIfaces, h, count, MakeArr(interfaces, count),
                    MakeArr(pointer_data, count));
}

void SendConstantBuffers(ContextState* c, Stage stage, uint32_t base, uint32_t count,
                         SendMode mode) {
  int s = static_cast<int>(stage);
  uint32_t n = ClampCount(base, count, c->bindings.cb_hw[s], kCbSlots);
  if (n == 0) return;
  D3D10DDI_HRESOURCE h[kCbSlots];
  for (uint32_t i = 0; i < n; ++i)
    h[i] = Handle<D3D10DDI_HRESOURCE>(c, c->bindings.cb[s][base + i], mode);
  CLTRACE_STAGE_DDI(c, stage, SetConstantBuffers, base, n, MakeArr(h, n));
}

void SendShaderResources(ContextState* c, Stage stage, uint32_t base, uint32_t count,
                         SendMode mode) {
  int s = static_cast<int>(stage);
  uint32_t n = ClampCount(base, count, c->bindings.srv_hw[s], kSrvSlots);
  if (n == 0) return;
  D3D10DDI_HSHADERRESOURCEVIEW h[kSrvSlots];
  for (uint32_t i = 0; i < n; ++i) {
    h[i] = Handle<D3D10DDI_HSHADERRESOURCEVIEW>(c, c->bindings.srv[s][base + i], mode);
  }
  CLTRACE_STAGE_DDI(c, stage, SetShaderResources, base, n, MakeArr(h, n));
}

void SendSamplers(ContextState* c, Stage stage, uint32_t base, uint32_t count, SendMode mode) {
  int s = static_cast<int>(stage);
  uint32_t n = ClampCount(base, count, c->bindings.sampler_hw[s], kSamplerSlots);
  if (n == 0) return;
  D3D10DDI_HSAMPLER h[kSamplerSlots];
  for (uint32_t i = 0; i < n; ++i) {
    h[i] = Handle<D3D10DDI_HSAMPLER>(c, c->bindings.sampler[s][base + i], mode);
  }
  CLTRACE_STAGE_DDI(c, stage, SetSamplers, base, n, MakeArr(h, n));
}

void SendCsUavs(ContextState* c, uint32_t base, uint32_t count, SendMode mode) {
  uint32_t n = ClampCount(base, count, c->bindings.cs_uav_hw, kUavSlots);
  if (n == 0) return;
  D3D11DDI_HUNORDEREDACCESSVIEW h[kUavSlots];
  UINT counts[kUavSlots];
  for (uint32_t i = 0; i < n; ++i) {
    h[i] = Handle<D3D11DDI_HUNORDEREDACCESSVIEW>(c, c->bindings.cs_uav[base + i], mode);
    counts[i] = UINT_MAX;  // keep the current hidden counters
  }
  CLTRACE_CTX_DDI(c, CsSetUnorderedAccessViews, base, n, MakeArr(h, n), MakeArr(counts, n));
}

void SendInputLayout(ContextState* c, SendMode mode) {
  CLTRACE_CTX_DDI(c, IaSetInputLayout,
                  Handle<D3D10DDI_HELEMENTLAYOUT>(c, c->bindings.input_layout, mode));
}

void SendVertexBuffers(ContextState* c, uint32_t base, uint32_t count, SendMode mode) {
  uint32_t n = ClampCount(base, count, c->bindings.vb_hw, kVbSlots);
  if (n == 0) return;
  D3D10DDI_HRESOURCE h[kVbSlots];
  UINT strides[kVbSlots];
  UINT offsets[kVbSlots];
  for (uint32_t i = 0; i < n; ++i) {
    h[i] = Handle<D3D10DDI_HRESOURCE>(c, c->bindings.vb[base + i], mode);
    strides[i] = mode == SendMode::kCurrent ? c->bindings.vb_stride[base + i] : 0;
    offsets[i] = mode == SendMode::kCurrent ? c->bindings.vb_offset[base + i] : 0;
  }
  CLTRACE_CTX_DDI(c, IaSetVertexBuffers, base, n, MakeArr(h, n), MakeArr(strides, n),
                  MakeArr(offsets, n));
}

void SendIndexBuffer(ContextState* c, SendMode mode) {
  bool cur = mode == SendMode::kCurrent;
  CLTRACE_CTX_DDI(c, IaSetIndexBuffer, Handle<D3D10DDI_HRESOURCE>(c, c->bindings.ib, mode),
                  cur ? c->bindings.ib_format : 0u, cur ? c->bindings.ib_offset : 0u);
}

void SendTopology(ContextState* c, SendMode mode) {
  CLTRACE_CTX_DDI(
      c, IaSetTopology,
      mode == SendMode::kCurrent ? c->bindings.topology : D3D10_DDI_PRIMITIVE_TOPOLOGY_UNDEFINED);
}

void SendRenderTargets(ContextState* c, SendMode mode) {
  SendRenderTargets(c, mode, mode == SendMode::kCurrent ? c->bindings.om_uav_hw : 0, nullptr);
}

void SendRenderTargets(ContextState* c, SendMode mode, uint32_t uav_slots, const UINT* counts) {
  bool cur = mode == SendMode::kCurrent;
  uint32_t n = cur ? c->bindings.num_rtvs : 0;
  D3D10DDI_HRENDERTARGETVIEW h[kRtvSlots];
  for (uint32_t i = 0; i < n; ++i)
    h[i] = Handle<D3D10DDI_HRENDERTARGETVIEW>(c, c->bindings.rtv[i], mode);
  auto dsv = Handle<D3D10DDI_HDEPTHSTENCILVIEW>(c, c->bindings.dsv, mode);
  uav_slots = std::min(uav_slots, kUavSlots);
  if (uav_slots <= n) {
    // No pixel-stage UAV involved: the UAV range is empty (UAVStartSlot past the RTV slots).
    CLTRACE_CTX_DDI(c, SetRenderTargets, MakeArr(n > 0 ? h : nullptr, n), n, kRtvSlots - n, dsv,
                    MakeArr(static_cast<const D3D11DDI_HUNORDEREDACCESSVIEW*>(nullptr), 0u),
                    MakeArr(static_cast<const UINT*>(nullptr), 0u), kRtvSlots, 0u, 0u, 0u);
    return;
  }
  // UAVStartSlot = NumRTVs (at least NumRTVs, ddi-spec: RTVs and UAVs share one set of slots),
  // NumUAVs up to the last UAV slot, and the range updated is the same.
  const uint32_t num_uavs = uav_slots - n;
  D3D11DDI_HUNORDEREDACCESSVIEW u[kUavSlots];
  UINT keep[kUavSlots];
  for (uint32_t i = 0; i < num_uavs; ++i) {
    u[i] = Handle<D3D11DDI_HUNORDEREDACCESSVIEW>(c, c->bindings.om_uav[n + i], mode);
    keep[i] = counts != nullptr ? counts[n + i] : UINT_MAX;
  }
  CLTRACE_CTX_DDI(c, SetRenderTargets, MakeArr(n > 0 ? h : nullptr, n), n, kRtvSlots - n, dsv,
                  MakeArr(static_cast<const D3D11DDI_HUNORDEREDACCESSVIEW*>(u), num_uavs),
                  MakeArr(static_cast<const UINT*>(keep), num_uavs), n, num_uavs, n, num_uavs);
}

void SendBlendState(ContextState* c, SendMode mode) {
  bool cur = mode == SendMode::kCurrent;
  static const float kDefaultFactor[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  CLTRACE_CTX_DDI(c, SetBlendState, Handle<D3D10DDI_HBLENDSTATE>(c, c->bindings.blend, mode),
                  MakeArr(cur ? c->bindings.blend_factor : kDefaultFactor, 4u),
                  cur ? c->bindings.sample_mask : 0xffffffffu);
}

void SendDepthStencilState(ContextState* c, SendMode mode) {
  CLTRACE_CTX_DDI(c, SetDepthStencilState,
                  Handle<D3D10DDI_HDEPTHSTENCILSTATE>(c, c->bindings.depth_stencil, mode),
                  mode == SendMode::kCurrent ? c->bindings.stencil_ref : 0u);
}

void SendRasterizerState(ContextState* c, SendMode mode) {
  CLTRACE_CTX_DDI(c, SetRasterizerState,
                  Handle<D3D10DDI_HRASTERIZERSTATE>(c, c->bindings.rasterizer, mode));
}

void SendSoTargets(ContextState* c, SendMode mode) {
  bool cur = mode == SendMode::kCurrent;
  uint32_t n = cur ? c->bindings.num_so : 0;
  D3D10DDI_HRESOURCE h[kSoSlots];
  UINT offsets[kSoSlots];
  for (uint32_t i = 0; i < n; ++i) {
    h[i] = Handle<D3D10DDI_HRESOURCE>(c, c->bindings.so[i], mode);
    offsets[i] = c->bindings.so_offset[i];
  }
  CLTRACE_CTX_DDI(c, SoSetTargets, n, kSoSlots - n, MakeArr(n > 0 ? h : nullptr, n),
                  MakeArr(n > 0 ? offsets : nullptr, n));
}

void SendViewports(ContextState* c, SendMode mode) {
  uint32_t n = mode == SendMode::kCurrent ? c->bindings.num_viewports : 0;
  CLTRACE_CTX_DDI(c, SetViewports, n, kViewportSlots - n,
                  n > 0 ? c->bindings.viewports : static_cast<const D3D10_DDI_VIEWPORT*>(nullptr));
}

void SendScissorRects(ContextState* c, SendMode mode) {
  uint32_t n = mode == SendMode::kCurrent ? c->bindings.num_scissors : 0;
  CLTRACE_CTX_DDI(c, SetScissorRects, n, kViewportSlots - n,
                  n > 0 ? c->bindings.scissors : static_cast<const D3D10_DDI_RECT*>(nullptr));
}

void SendPredication(ContextState* c, SendMode mode) {
  bool cur = mode == SendMode::kCurrent;
  CLTRACE_CTX_DDI(c, SetPredication, Handle<D3D10DDI_HQUERY>(c, c->bindings.predicate, mode),
                  cur ? c->bindings.predicate_value : 0);
}

void SendAllBound(ContextState* c, SendMode mode) {
  // Snapshot what is bound first: with kNull the bindings are reset before the unbind calls
  // (a refresh made inside them must already see "nothing bound").
  const Bindings& b = c->bindings;
  struct Groups {
    bool shader[kStageCount], cb[kStageCount], srv[kStageCount], sampler[kStageCount];
    uint32_t cb_hw[kStageCount], srv_hw[kStageCount], sampler_hw[kStageCount];
    uint32_t cs_uav_hw, vb_hw, om_uav_hw;
    bool il, ib, topo, om, blend, dss, rs, so, vp, sc, pred;
  } g{};
  for (int s = 0; s < kStageCount; ++s) {
    g.shader[s] = b.shader[s] != nullptr;
    g.cb_hw[s] = b.cb_hw[s];
    g.srv_hw[s] = b.srv_hw[s];
    g.sampler_hw[s] = b.sampler_hw[s];
  }
  g.cs_uav_hw = b.cs_uav_hw;
  g.vb_hw = b.vb_hw;
  g.il = b.input_layout != nullptr;
  g.ib = b.ib != nullptr;
  g.topo = b.topology != D3D10_DDI_PRIMITIVE_TOPOLOGY_UNDEFINED;
  g.om_uav_hw = b.om_uav_hw;
  g.om = b.num_rtvs > 0 || b.dsv != nullptr || b.om_uav_hw > 0;
  g.blend = b.blend != nullptr || b.sample_mask != 0xffffffffu;
  g.dss = b.depth_stencil != nullptr || b.stencil_ref != 0;
  g.rs = b.rasterizer != nullptr;
  g.so = b.num_so > 0;
  g.vp = b.num_viewports > 0;
  g.sc = b.num_scissors > 0;
  g.pred = b.predicate != nullptr;
  // The references of the old bindings are kept until the unbind calls were made: an object
  // whose last reference is a binding is destroyed only once no context binds it (R73), i.e.
  // after its unbind, not between its bind and its unbind.
  Bindings held;
  if (mode == SendMode::kNull) {
    held.CopyFrom(c->bindings);
    c->bindings.Reset();
  }
  for (int s = 0; s < kStageCount; ++s) {
    Stage stage = static_cast<Stage>(s);
    if (g.shader[s]) SendShader(c, stage, mode);
    if (g.cb_hw[s] > 0) SendConstantBuffers(c, stage, 0, g.cb_hw[s], mode);
    if (g.srv_hw[s] > 0) SendShaderResources(c, stage, 0, g.srv_hw[s], mode);
    if (g.sampler_hw[s] > 0) SendSamplers(c, stage, 0, g.sampler_hw[s], mode);
  }
  if (g.cs_uav_hw > 0) SendCsUavs(c, 0, g.cs_uav_hw, mode);
  if (g.il) SendInputLayout(c, mode);
  if (g.vb_hw > 0) SendVertexBuffers(c, 0, g.vb_hw, mode);
  if (g.ib) SendIndexBuffer(c, mode);
  if (g.topo) SendTopology(c, mode);
  if (g.om) {
    SendRenderTargets(c, mode, mode == SendMode::kCurrent ? c->bindings.om_uav_hw : g.om_uav_hw,
                      nullptr);
  }
  if (g.blend) SendBlendState(c, mode);
  if (g.dss) SendDepthStencilState(c, mode);
  if (g.rs) SendRasterizerState(c, mode);
  if (g.so) SendSoTargets(c, mode);
  if (g.vp) SendViewports(c, mode);
  if (g.sc) SendScissorRects(c, mode);
  if (g.pred) SendPredication(c, mode);
}

DrawExpectation CurrentDrawState(ContextState* c) {
  const Bindings& b = c->bindings;
  DrawExpectation e;
  e.state[gpu::kSlotInputLayout] = IcOf(b.input_layout);
  e.state[gpu::kSlotVs] = IcOf(b.shader[static_cast<int>(Stage::kVS)]);
  e.state[gpu::kSlotPs] = IcOf(b.shader[static_cast<int>(Stage::kPS)]);
  e.state[gpu::kSlotGs] = IcOf(b.shader[static_cast<int>(Stage::kGS)]);
  e.state[gpu::kSlotHs] = IcOf(b.shader[static_cast<int>(Stage::kHS)]);
  e.state[gpu::kSlotDs] = IcOf(b.shader[static_cast<int>(Stage::kDS)]);
  e.state[gpu::kSlotVb0] = IcOf(b.vb[0]);
  e.state[gpu::kSlotIb] = IcOf(b.ib);
  e.state[gpu::kSlotVsCb0] = IcOf(b.cb[static_cast<int>(Stage::kVS)][0]);
  e.state[gpu::kSlotPsCb0] = IcOf(b.cb[static_cast<int>(Stage::kPS)][0]);
  e.state[gpu::kSlotPsSrv0] = IcOf(b.srv[static_cast<int>(Stage::kPS)][0]);
  e.state[gpu::kSlotPsSampler0] = IcOf(b.sampler[static_cast<int>(Stage::kPS)][0]);
  e.state[gpu::kSlotRtv0] = IcOf(b.num_rtvs > 0 ? b.rtv[0] : nullptr);
  e.state[gpu::kSlotDsv] = IcOf(b.dsv);
  e.state[gpu::kSlotBlend] = IcOf(b.blend);
  e.state[gpu::kSlotDepthStencil] = IcOf(b.depth_stencil);
  e.state[gpu::kSlotRasterizer] = IcOf(b.rasterizer);
  e.since = c->last_reset;
  return e;
}

// ---- Bindings ----

void Bindings::CopyFrom(const Bindings& o) {
  for (int s = 0; s < kStageCount; ++s) {
    Assign(shader[s], o.shader[s]);
    for (uint32_t i = 0; i < kCbSlots; ++i) Assign(cb[s][i], o.cb[s][i]);
    for (uint32_t i = 0; i < kSrvSlots; ++i) Assign(srv[s][i], o.srv[s][i]);
    for (uint32_t i = 0; i < kSamplerSlots; ++i) Assign(sampler[s][i], o.sampler[s][i]);
    cb_hw[s] = o.cb_hw[s];
    srv_hw[s] = o.srv_hw[s];
    sampler_hw[s] = o.sampler_hw[s];
  }
  for (uint32_t i = 0; i < kUavSlots; ++i) Assign(cs_uav[i], o.cs_uav[i]);
  cs_uav_hw = o.cs_uav_hw;
  Assign(input_layout, o.input_layout);
  for (uint32_t i = 0; i < kVbSlots; ++i) {
    Assign(vb[i], o.vb[i]);
    vb_stride[i] = o.vb_stride[i];
    vb_offset[i] = o.vb_offset[i];
  }
  vb_hw = o.vb_hw;
  Assign(ib, o.ib);
  ib_format = o.ib_format;
  ib_offset = o.ib_offset;
  topology = o.topology;
  for (uint32_t i = 0; i < kRtvSlots; ++i) Assign(rtv[i], o.rtv[i]);
  num_rtvs = o.num_rtvs;
  for (uint32_t i = 0; i < kUavSlots; ++i) Assign(om_uav[i], o.om_uav[i]);
  om_uav_hw = o.om_uav_hw;
  Assign(dsv, o.dsv);
  Assign(blend, o.blend);
  std::copy(o.blend_factor, o.blend_factor + 4, blend_factor);
  sample_mask = o.sample_mask;
  Assign(depth_stencil, o.depth_stencil);
  stencil_ref = o.stencil_ref;
  Assign(rasterizer, o.rasterizer);
  for (uint32_t i = 0; i < kSoSlots; ++i) {
    Assign(so[i], o.so[i]);
    so_offset[i] = o.so_offset[i];
  }
  num_so = o.num_so;
  std::copy(o.viewports, o.viewports + kViewportSlots, viewports);
  num_viewports = o.num_viewports;
  std::copy(o.scissors, o.scissors + kViewportSlots, scissors);
  num_scissors = o.num_scissors;
  Assign(predicate, o.predicate);
  predicate_value = o.predicate_value;
}

void Bindings::Reset() {
  for (int s = 0; s < kStageCount; ++s) {
    Assign(shader[s], static_cast<Shader*>(nullptr));
    for (uint32_t i = 0; i < cb_hw[s]; ++i) Assign(cb[s][i], static_cast<Resource*>(nullptr));
    for (uint32_t i = 0; i < srv_hw[s]; ++i) Assign(srv[s][i], static_cast<View*>(nullptr));
    for (uint32_t i = 0; i < sampler_hw[s]; ++i) {
      Assign(sampler[s][i], static_cast<SamplerState*>(nullptr));
    }
    cb_hw[s] = srv_hw[s] = sampler_hw[s] = 0;
  }
  for (uint32_t i = 0; i < cs_uav_hw; ++i) Assign(cs_uav[i], static_cast<View*>(nullptr));
  cs_uav_hw = 0;
  Assign(input_layout, static_cast<InputLayout*>(nullptr));
  for (uint32_t i = 0; i < vb_hw; ++i) {
    Assign(vb[i], static_cast<Resource*>(nullptr));
    vb_stride[i] = vb_offset[i] = 0;
  }
  vb_hw = 0;
  Assign(ib, static_cast<Resource*>(nullptr));
  ib_format = ib_offset = 0;
  topology = D3D10_DDI_PRIMITIVE_TOPOLOGY_UNDEFINED;
  for (uint32_t i = 0; i < kRtvSlots; ++i) Assign(rtv[i], static_cast<View*>(nullptr));
  num_rtvs = 0;
  for (uint32_t i = 0; i < om_uav_hw; ++i) Assign(om_uav[i], static_cast<View*>(nullptr));
  om_uav_hw = 0;
  Assign(dsv, static_cast<View*>(nullptr));
  Assign(blend, static_cast<BlendState*>(nullptr));
  std::fill(blend_factor, blend_factor + 4, 1.0f);
  sample_mask = 0xffffffffu;
  Assign(depth_stencil, static_cast<DepthStencilState*>(nullptr));
  stencil_ref = 0;
  Assign(rasterizer, static_cast<RasterizerState*>(nullptr));
  for (uint32_t i = 0; i < kSoSlots; ++i) {
    Assign(so[i], static_cast<Resource*>(nullptr));
    so_offset[i] = 0;
  }
  num_so = 0;
  num_viewports = num_scissors = 0;
  Assign(predicate, static_cast<Query*>(nullptr));
  predicate_value = 0;
}

bool Bindings::IsCleared() const {
  for (int s = 0; s < kStageCount; ++s) {
    if (shader[s] != nullptr || cb_hw[s] || srv_hw[s] || sampler_hw[s]) return false;
  }
  return cs_uav_hw == 0 && om_uav_hw == 0 && input_layout == nullptr && vb_hw == 0 &&
         ib == nullptr && topology == D3D10_DDI_PRIMITIVE_TOPOLOGY_UNDEFINED && num_rtvs == 0 &&
         dsv == nullptr && blend == nullptr && depth_stencil == nullptr && rasterizer == nullptr &&
         num_so == 0 && num_viewports == 0 && num_scissors == 0 && predicate == nullptr;
}

}  // namespace cltrace::runtime::internal
