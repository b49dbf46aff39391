// Pipeline DDIs of the reference driver for the IC and DC tables: the bindings and the draws
// (copies, updates, clears, queries and maps: resource_work.cc; both on internal/pipe_call.h).
// IC work goes into the kernel command buffer; DC work into the deferred context's recording
// (a command list later). DC calls are validated against
// the deferred-context state machine (R50, R51, R53), handle ownership (R57) and the map rules
// (R64); refresh answers are checked in refresh.cc (R49/R60).
#include <algorithm>
#include <cstring>
#include <optional>

#include "refdriver/internal/common.h"
#include "refdriver/internal/ops.h"
#include "refdriver/internal/pipe_call.h"
#include "refdriver/internal/refresh.h"
#include "refdriver/internal/tables.h"
#include "wddm/digest.h"

namespace cltrace::refdriver {
namespace {

constexpr uint32_t kDcPumpChunk = 1024;  // DC recording bytes per amortized-processing pump

constexpr const char* kSetShaderNames[] = {"VsSetShader", "PsSetShader", "GsSetShader",
                                           "HsSetShader", "DsSetShader", "CsSetShader"};
constexpr const char* kSetCbNames[] = {"VsSetConstantBuffers", "PsSetConstantBuffers",
                                       "GsSetConstantBuffers", "HsSetConstantBuffers",
                                       "DsSetConstantBuffers", "CsSetConstantBuffers"};
constexpr const char* kSetSrvNames[] = {"VsSetShaderResources", "PsSetShaderResources",
                                        "GsSetShaderResources", "HsSetShaderResources",
                                        "DsSetShaderResources", "CsSetShaderResources"};
constexpr const char* kSetSamplerNames[] = {"VsSetSamplers", "PsSetSamplers", "GsSetSamplers",
                                            "HsSetSamplers", "DsSetSamplers", "CsSetSamplers"};

template <bool kDc, int S>
void APIENTRY SetShader(D3D10DDI_HDEVICE h, D3D10DDI_HSHADER s) {
  PipeCall<kDc> c(h, kSetShaderNames[S], true, s.pDrvPrivate == nullptr);
  if (!c.ok()) return;
  void* bound = c.Binding(s.pDrvPrivate, D3D10DDI_HT_SHADER, kSetShaderNames[S]);
  c.Answer(c.state().shader[S] == s.pDrvPrivate, s.pDrvPrivate == nullptr);
  c.state().shader[S] = bound;
  c.Generic(refcmd::kSet, kBindShader + S, 0, reinterpret_cast<uint64_t>(s.pDrvPrivate));
}

template <bool kDc, int S, typename H, int kSlots,
          void* (PipelineState::*Slots)[kStageCount][kSlots]>
void SetRange(D3D10DDI_HDEVICE h, const char* fn, uint32_t type, uint64_t kind, UINT start, UINT n,
              const H* handles) {
  PipeCall<kDc> c(h, fn, true, AllNull(handles, n));
  if (!c.ok()) return;
  void** slots = (c.state().*Slots)[S];
  bool matches = true;
  for (UINT i = 0; i < n && start + i < static_cast<UINT>(kSlots); ++i) {
    void* v = handles != nullptr ? handles[i].pDrvPrivate : nullptr;
    void* bound = c.Binding(v, type, fn);
    matches = matches && slots[start + i] == v;
    slots[start + i] = bound;
    c.Generic(refcmd::kSet, kind + S, start + i, reinterpret_cast<uint64_t>(v));
  }
  c.Answer(matches, AllNull(handles, n));
}

template <bool kDc, int S>
void APIENTRY SetConstantBuffers(D3D10DDI_HDEVICE h, UINT start, UINT n,
                                 const D3D10DDI_HRESOURCE* b) {
  SetRange<kDc, S, D3D10DDI_HRESOURCE, kCbSlots, &PipelineState::cb>(
      h, kSetCbNames[S], D3D10DDI_HT_RESOURCE, kBindCb, start, n, b);
}

template <bool kDc, int S>
void APIENTRY SetShaderResources(D3D10DDI_HDEVICE h, UINT start, UINT n,
                                 const D3D10DDI_HSHADERRESOURCEVIEW* v) {
  SetRange<kDc, S, D3D10DDI_HSHADERRESOURCEVIEW, kSrvSlots, &PipelineState::srv>(
      h, kSetSrvNames[S], D3D10DDI_HT_SHADERRESOURCEVIEW, kBindSrv, start, n, v);
}

template <bool kDc, int S>
void APIENTRY SetSamplers(D3D10DDI_HDEVICE h, UINT start, UINT n, const D3D10DDI_HSAMPLER* v) {
  SetRange<kDc, S, D3D10DDI_HSAMPLER, kSamplerSlots, &PipelineState::sampler>(
      h, kSetSamplerNames[S], D3D10DDI_HT_SAMPLERSTATE, kBindSampler, start, n, v);
}

template <bool kDc>
void APIENTRY CsSetUnorderedAccessViews(D3D10DDI_HDEVICE h, UINT start, UINT n,
                                        const D3D11DDI_HUNORDEREDACCESSVIEW* v, const UINT*) {
  PipeCall<kDc> c(h, "CsSetUnorderedAccessViews", true, AllNull(v, n));
  if (!c.ok()) return;
  for (UINT i = 0; i < n && start + i < kUavSlots; ++i) {
    void* p = v != nullptr ? v[i].pDrvPrivate : nullptr;
    c.state().cs_uav[start + i] =
        c.Binding(p, D3D11DDI_HT_UNORDEREDACCESSVIEW, "CsSetUnorderedAccessViews");
    c.Generic(refcmd::kSet, kBindCsUav, start + i, reinterpret_cast<uint64_t>(p));
  }
}

template <bool kDc>
void APIENTRY IaSetInputLayout(D3D10DDI_HDEVICE h, D3D10DDI_HELEMENTLAYOUT l) {
  PipeCall<kDc> c(h, "IaSetInputLayout", true, l.pDrvPrivate == nullptr);
  if (!c.ok()) return;
  void* bound = c.Binding(l.pDrvPrivate, D3D10DDI_HT_ELEMENTLAYOUT, "IaSetInputLayout");
  c.Answer(c.state().input_layout == l.pDrvPrivate, l.pDrvPrivate == nullptr);
  c.state().input_layout = bound;
  c.Generic(refcmd::kSet, kBindInputLayout, 0, reinterpret_cast<uint64_t>(l.pDrvPrivate));
}

template <bool kDc>
void APIENTRY IaSetVertexBuffers(D3D10DDI_HDEVICE h, UINT start, UINT n,
                                 const D3D10DDI_HRESOURCE* b, const UINT* strides,
                                 const UINT* offsets) {
  PipeCall<kDc> c(h, "IaSetVertexBuffers", true, AllNull(b, n));
  if (!c.ok()) return;
  bool matches = true;
  PipelineState& s = c.state();
  for (UINT i = 0; i < n && start + i < kVbSlots; ++i) {
    void* v = b != nullptr ? b[i].pDrvPrivate : nullptr;
    void* bound = c.Binding(v, D3D10DDI_HT_RESOURCE, "IaSetVertexBuffers");
    matches = matches && s.vb[start + i] == v;
    s.vb[start + i] = bound;
    s.vb_stride[start + i] = strides != nullptr ? strides[i] : 0;
    s.vb_offset[start + i] = offsets != nullptr ? offsets[i] : 0;
    c.Generic(refcmd::kSet, kBindVb, start + i, reinterpret_cast<uint64_t>(v));
  }
  c.Answer(matches, AllNull(b, n));
}

template <bool kDc>
void APIENTRY IaSetIndexBuffer(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE b, DXGI_FORMAT format,
                               UINT offset) {
  PipeCall<kDc> c(h, "IaSetIndexBuffer", true, b.pDrvPrivate == nullptr);
  if (!c.ok()) return;
  c.state().ib = c.Binding(b.pDrvPrivate, D3D10DDI_HT_RESOURCE, "IaSetIndexBuffer");
  c.state().ib_format = format;
  c.state().ib_offset = offset;
  c.Generic(refcmd::kSet, kBindIb, 0, reinterpret_cast<uint64_t>(b.pDrvPrivate));
}

template <bool kDc>
void APIENTRY IaSetTopology(D3D10DDI_HDEVICE h, D3D10_DDI_PRIMITIVE_TOPOLOGY t) {
  PipeCall<kDc> c(h, "IaSetTopology", true, t == D3D10_DDI_PRIMITIVE_TOPOLOGY_UNDEFINED);
  if (!c.ok()) return;
  c.state().topology = t;
  c.Generic(refcmd::kSet, kBindTopology, 0, t);
}

template <bool kDc>
void APIENTRY SetRenderTargets(D3D10DDI_HDEVICE h, const D3D10DDI_HRENDERTARGETVIEW* rtvs, UINT n,
                               UINT unbind, D3D10DDI_HDEPTHSTENCILVIEW dsv,
                               const D3D11DDI_HUNORDEREDACCESSVIEW* uavs, const UINT*,
                               UINT uav_index, UINT num_uavs, UINT, UINT) {
  bool all_null = AllNull(rtvs, n) && dsv.pDrvPrivate == nullptr && AllNull(uavs, num_uavs);
  PipeCall<kDc> c(h, "SetRenderTargets", true, all_null);
  if (!c.ok()) return;
  PipelineState& s = c.state();
  bool matches = s.dsv == dsv.pDrvPrivate;
  for (UINT i = 0; i < kRtvSlots; ++i) {
    void* v = i < n && rtvs != nullptr ? rtvs[i].pDrvPrivate : nullptr;
    void* bound = i < n ? c.Binding(v, D3D10DDI_HT_RENDERTARGETVIEW, "SetRenderTargets") : v;
    if (i < n || i < n + unbind) {
      matches = matches && s.rtv[i] == v;
      s.rtv[i] = bound;
    }
  }
  s.dsv = c.Binding(dsv.pDrvPrivate, D3D10DDI_HT_DEPTHSTENCILVIEW, "SetRenderTargets");
  for (UINT i = 0; i < num_uavs && uav_index + i < kRtvSlots + kUavSlots; ++i) {
    void* v = uavs != nullptr ? uavs[i].pDrvPrivate : nullptr;
    void* bound = c.Binding(v, D3D11DDI_HT_UNORDEREDACCESSVIEW, "SetRenderTargets");
    if (uav_index + i >= kRtvSlots) s.om_uav[uav_index + i - kRtvSlots] = bound;
  }
  c.Answer(matches, all_null);
  c.Generic(refcmd::kSet, kBindRtv, n, reinterpret_cast<uint64_t>(s.rtv[0]));
  c.Generic(refcmd::kSet, kBindDsv, 0, reinterpret_cast<uint64_t>(s.dsv));
}

template <bool kDc>
void APIENTRY SetBlendState(D3D10DDI_HDEVICE h, D3D10DDI_HBLENDSTATE b, const FLOAT* factor,
                            UINT mask) {
  PipeCall<kDc> c(h, "SetBlendState", true, b.pDrvPrivate == nullptr);
  if (!c.ok()) return;
  c.state().blend = c.Binding(b.pDrvPrivate, D3D10DDI_HT_BLENDSTATE, "SetBlendState");
  if (factor != nullptr) std::copy(factor, factor + 4, c.state().blend_factor);
  c.state().sample_mask = mask;
  c.Generic(refcmd::kSet, kBindBlend, mask, reinterpret_cast<uint64_t>(b.pDrvPrivate));
}

template <bool kDc>
void APIENTRY SetDepthStencilState(D3D10DDI_HDEVICE h, D3D10DDI_HDEPTHSTENCILSTATE d, UINT ref) {
  PipeCall<kDc> c(h, "SetDepthStencilState", true, d.pDrvPrivate == nullptr);
  if (!c.ok()) return;
  c.state().depth_stencil =
      c.Binding(d.pDrvPrivate, D3D10DDI_HT_DEPTHSTENCILSTATE, "SetDepthStencilState");
  c.state().stencil_ref = ref;
  c.Generic(refcmd::kSet, kBindDepthStencil, ref, reinterpret_cast<uint64_t>(d.pDrvPrivate));
}

template <bool kDc>
void APIENTRY SetRasterizerState(D3D10DDI_HDEVICE h, D3D10DDI_HRASTERIZERSTATE r) {
  PipeCall<kDc> c(h, "SetRasterizerState", true, r.pDrvPrivate == nullptr);
  if (!c.ok()) return;
  c.state().rasterizer =
      c.Binding(r.pDrvPrivate, D3D10DDI_HT_RASTERIZERSTATE, "SetRasterizerState");
  c.Generic(refcmd::kSet, kBindRasterizer, 0, reinterpret_cast<uint64_t>(r.pDrvPrivate));
}

template <bool kDc>
void APIENTRY SoSetTargets(D3D10DDI_HDEVICE h, UINT n, UINT clear, const D3D10DDI_HRESOURCE* b,
                           const UINT* offsets) {
  PipeCall<kDc> c(h, "SoSetTargets", true, AllNull(b, n));
  if (!c.ok()) return;
  for (UINT i = 0; i < kSoSlots; ++i) {
    if (i < n) {
      void* v = b != nullptr ? b[i].pDrvPrivate : nullptr;
      c.state().so[i] = c.Binding(v, D3D10DDI_HT_RESOURCE, "SoSetTargets");
      c.state().so_offset[i] = offsets != nullptr ? offsets[i] : 0;
    } else if (i < n + clear) {
      c.state().so[i] = nullptr;
    }
  }
  c.Generic(refcmd::kSet, kBindSo, n, reinterpret_cast<uint64_t>(c.state().so[0]));
}

// SetViewports and SetScissorRects: only the count is state the driver keeps.
template <bool kDc, uint32_t PipelineState::*kCount, uint32_t kBind>
void SetRectCount(D3D10DDI_HDEVICE h, const char* fn, UINT n) {
  PipeCall<kDc> c(h, fn, true, n == 0);
  if (!c.ok()) return;
  c.state().*kCount = n;
  c.Generic(refcmd::kSet, kBind, n);
}

template <bool kDc>
void APIENTRY SetViewports(D3D10DDI_HDEVICE h, UINT n, UINT, const D3D10_DDI_VIEWPORT*) {
  SetRectCount<kDc, &PipelineState::num_viewports, kBindViewports>(h, "SetViewports", n);
}

template <bool kDc>
void APIENTRY SetScissorRects(D3D10DDI_HDEVICE h, UINT n, UINT, const D3D10_DDI_RECT*) {
  SetRectCount<kDc, &PipelineState::num_scissors, kBindScissors>(h, "SetScissorRects", n);
}

template <bool kDc>
void APIENTRY SetPredication(D3D10DDI_HDEVICE h, D3D10DDI_HQUERY q, BOOL value) {
  PipeCall<kDc> c(h, "SetPredication", true, q.pDrvPrivate == nullptr);
  if (!c.ok()) return;
  c.state().predicate = c.Binding(q.pDrvPrivate, D3D10DDI_HT_QUERY, "SetPredication");
  c.state().predicate_value = value;
  c.Generic(refcmd::kSet, kBindPredicate, value, reinterpret_cast<uint64_t>(q.pDrvPrivate));
}

// ---- draws ----

// What a draw's state value knows a bound object by. Never its serial number `id`: that comes
// from one driver-wide counter in the order threads happen to create objects (command lists
// even take theirs after their state refresh), so a multi-threaded recording and its replay
// number objects differently and every later digest would differ. Instead what a replay
// reproduces whatever the threads' timing: a resource by its description and its GPU
// allocation (kernel handles are the recorded ones on every replay), a view by its kind and its
// resource, a query by its type, any other object by its kind.
//
// A primary (pPrimaryDesc) counts as bit 31 of its flags here: the bit catalog versions before 4
// marked primaries with in MiscFlags, so the digests of recordings made then (tests/replay's
// saved recordings) stay reproducible.
uint64_t DescribedFlags(const IcObject* o) {
  return o->misc_flags | (o->primary ? uint64_t{0x80000000} : 0);
}

uint64_t StateIdentity(const IcObject* o) {
  if (o == nullptr) return 0;
  uint64_t h = gpu::DigestCombineAll(o->type, {o->allocation, o->usage, o->bind_flags,
                                               DescribedFlags(o), o->byte_size, o->query_type});
  if (const IcObject* r = o->dependency; r != nullptr) {
    h = gpu::DigestCombineAll(
        h, {r->type, r->allocation, r->usage, r->bind_flags, DescribedFlags(r), r->byte_size});
  }
  return h;
}

template <bool kDc>
void EmitDraw(PipeCall<kDc>& c, uint32_t kind, uint32_t count) {
  PipelineState& s = c.state();
  refcmd::Draw d{};
  d.header = {refcmd::kDraw, sizeof(refcmd::Draw)};
  d.kind = kind;
  d.count = count;
  auto ic = [](void* p) { return reinterpret_cast<uint64_t>(PipeCall<kDc>::Bound(p)); };
  d.state[refcmd::kSlotInputLayout] = ic(s.input_layout);
  d.state[refcmd::kSlotVs] = ic(s.shader[kVs]);
  d.state[refcmd::kSlotPs] = ic(s.shader[kPs]);
  d.state[refcmd::kSlotGs] = ic(s.shader[kGs]);
  d.state[refcmd::kSlotHs] = ic(s.shader[kHs]);
  d.state[refcmd::kSlotDs] = ic(s.shader[kDs]);
  d.state[refcmd::kSlotVb0] = ic(s.vb[0]);
  d.state[refcmd::kSlotIb] = ic(s.ib);
  d.state[refcmd::kSlotVsCb0] = ic(s.cb[kVs][0]);
  d.state[refcmd::kSlotPsCb0] = ic(s.cb[kPs][0]);
  d.state[refcmd::kSlotPsSrv0] = ic(s.srv[kPs][0]);
  d.state[refcmd::kSlotPsSampler0] = ic(s.sampler[kPs][0]);
  d.state[refcmd::kSlotRtv0] = ic(s.rtv[0]);
  d.state[refcmd::kSlotDsv] = ic(s.dsv);
  d.state[refcmd::kSlotBlend] = ic(s.blend);
  d.state[refcmd::kSlotDepthStencil] = ic(s.depth_stencil);
  d.state[refcmd::kSlotRasterizer] = ic(s.rasterizer);
  c.Write(&d, sizeof(d));
  // The GPU-model draw: into the bound render target, reading the bound buffers and views. Its
  // state value folds the bound objects' StateIdentity (never addresses or serial numbers), so
  // the content digests are the same in every run and on every replay.
  uint32_t target = c.Alloc(PipeCall<kDc>::Bound(s.rtv[0]));
  if (target == 0) return;
  std::vector<uint64_t> inputs;
  for (void* p : {s.vb[0], s.ib, s.cb[kVs][0], s.cb[kPs][0], s.srv[kPs][0], s.dsv}) {
    if (uint32_t a = c.Alloc(PipeCall<kDc>::Bound(p)); a != 0) inputs.push_back(a);
  }
  uint64_t state = gpu::DigestCombine(kind, count);
  for (uint32_t slot = 0; slot < refcmd::kDrawSlotCount; ++slot) {
    const IcObject* o =
        d.state[slot] != 0 ? reinterpret_cast<const IcObject*>(d.state[slot]) : nullptr;
    state = gpu::DigestCombine(state, StateIdentity(o));
  }
  c.Emit(gpu::Command::Draw(target, inputs, state, count, 0, 1));
}

template <bool kDc>
void APIENTRY Draw(D3D10DDI_HDEVICE h, UINT n, UINT) {
  PipeCall<kDc> c(h, "Draw", false, false);
  if (c.ok()) EmitDraw(c, 0, n);
}
template <bool kDc>
void APIENTRY DrawIndexed(D3D10DDI_HDEVICE h, UINT n, UINT, INT) {
  PipeCall<kDc> c(h, "DrawIndexed", false, false);
  if (c.ok()) EmitDraw(c, 1, n);
}
template <bool kDc>
void APIENTRY DrawInstanced(D3D10DDI_HDEVICE h, UINT n, UINT instances, UINT, UINT) {
  PipeCall<kDc> c(h, "DrawInstanced", false, false);
  if (c.ok()) EmitDraw(c, 2, n * instances);
}
template <bool kDc>
void APIENTRY DrawIndexedInstanced(D3D10DDI_HDEVICE h, UINT n, UINT instances, UINT, INT, UINT) {
  PipeCall<kDc> c(h, "DrawIndexedInstanced", false, false);
  if (c.ok()) EmitDraw(c, 3, n * instances);
}
template <bool kDc>
void APIENTRY DrawAuto(D3D10DDI_HDEVICE h) {
  PipeCall<kDc> c(h, "DrawAuto", false, false);
  if (c.ok()) EmitDraw(c, 4, 0);
}
// The indirect draws: the argument buffer must be a live resource; the draw is not sized.
template <bool kDc>
void IndirectDraw(D3D10DDI_HDEVICE h, const char* fn, D3D10DDI_HRESOURCE args) {
  PipeCall<kDc> c(h, fn, false, false);
  if (!c.ok()) return;
  (void)c.Ic(args.pDrvPrivate, D3D10DDI_HT_RESOURCE, fn);
  EmitDraw(c, 4, 0);
}
template <bool kDc>
void APIENTRY DrawInstancedIndirect(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE args, UINT) {
  IndirectDraw<kDc>(h, "DrawInstancedIndirect", args);
}
template <bool kDc>
void APIENTRY DrawIndexedInstancedIndirect(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE args, UINT) {
  IndirectDraw<kDc>(h, "DrawIndexedInstancedIndirect", args);
}
template <bool kDc>
void APIENTRY Dispatch(D3D10DDI_HDEVICE h, UINT x, UINT y, UINT z) {
  PipeCall<kDc> c(h, "Dispatch", false, false);
  if (c.ok()) c.Generic(refcmd::kDispatch, x, y, z);
}
template <bool kDc>
void APIENTRY DispatchIndirect(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE args, UINT) {
  PipeCall<kDc> c(h, "DispatchIndirect", false, false);
  if (!c.ok()) return;
  (void)c.Ic(args.pDrvPrivate, D3D10DDI_HT_RESOURCE, "DispatchIndirect");
  c.Generic(refcmd::kDispatch, 0, 0, 0);
}

// SetTextFilterSize (the D3D10 text filter): no state of the model GPU; validated only.
template <bool kDc>
void APIENTRY SetTextFilterSize(D3D10DDI_HDEVICE h, UINT, UINT) {
  PipeCall<kDc> c(h, "SetTextFilterSize", true, false);
  (void)c.ok();
}

// Set*ShaderWithIfaces binds the shader like Set*Shader; the class instances select code
// inside it, which the model does not run.
constexpr const char* kSetShaderWithIfacesNames[] = {
    "VsSetShaderWithIfaces", "PsSetShaderWithIfaces", "GsSetShaderWithIfaces",
    "HsSetShaderWithIfaces", "DsSetShaderWithIfaces", "CsSetShaderWithIfaces"};

template <bool kDc, int S>
void APIENTRY SetShaderWithIfaces(D3D10DDI_HDEVICE h, D3D10DDI_HSHADER s, UINT, const UINT*,
                                  const D3D11DDIARG_POINTERDATA*) {
  PipeCall<kDc> c(h, kSetShaderWithIfacesNames[S], true, s.pDrvPrivate == nullptr);
  if (!c.ok()) return;
  void* bound = c.Binding(s.pDrvPrivate, D3D10DDI_HT_SHADER, kSetShaderWithIfacesNames[S]);
  c.Answer(c.state().shader[S] == s.pDrvPrivate, s.pDrvPrivate == nullptr);
  c.state().shader[S] = bound;
  c.Generic(refcmd::kSet, kBindShader + S, 0, reinterpret_cast<uint64_t>(s.pDrvPrivate));
}

}  // namespace

// ---- shared with other files ----

void DcWrite(DeferredContext* dc, const void* record, uint32_t size) {
  const auto* b = static_cast<const uint8_t*>(record);
  dc->rec.stream.insert(dc->rec.stream.end(), b, b + size);
  DcEmit(dc, PrivateRecord(record, size));
  dc->rec.bytes_since_pump += size;
  if (dc->rec.bytes_since_pump >= kDcPumpChunk) {
    dc->rec.bytes_since_pump = 0;
    Device* dev = dc->device;
    if (dev->config.Has(Bug::kR71)) return;  // planted bug R71: never pumps
    // A DC "runs out of room" here: amortized processing on the DC's own core layer (R72).
    PFND3D11DDI_PERFORM_AMORTIZED_PROCESSING_CB pump =
        dev->config.Has(Bug::kR6) ? dc->cached_amortized
                                  : dc->callbacks->pfnPerformAmortizedProcessingCb;
    pump(dc->rt_core_layer);
    if (dev->config.Has(Bug::kR72)) pump(dc->rt_core_layer);  // planted bug R72: twice
  }
}

void DcEmit(DeferredContext* dc, const gpu::Command& c) { (void)dc->rec.gpu.Emit(c); }

void DcWriteGeneric(DeferredContext* dc, uint32_t opcode, uint64_t a, uint64_t b, uint64_t c) {
  refcmd::Generic g{{opcode, sizeof(refcmd::Generic)}, a, b, c};
  DcWrite(dc, &g, sizeof(g));
}

void ClearIcState(Device* dev) {
  dev->ic_state.Clear();
  IcWriteGeneric(dev, refcmd::kClearState, 0);
}

void ClearDcState(DeferredContext* dc) {
  dc->state.Clear();
  DcWriteGeneric(dc, refcmd::kClearState, 0);
}
#define CLTRACE_STAGE_SLOTS(t, dc, Prefix, S)                                  \
  t->pfn##Prefix##SetShader = dc ? &SetShader<true, S> : &SetShader<false, S>; \
  t->pfn##Prefix##SetConstantBuffers =                                         \
      dc ? &SetConstantBuffers<true, S> : &SetConstantBuffers<false, S>;       \
  t->pfn##Prefix##SetShaderResources =                                         \
      dc ? &SetShaderResources<true, S> : &SetShaderResources<false, S>;       \
  t->pfn##Prefix##SetSamplers = dc ? &SetSamplers<true, S> : &SetSamplers<false, S>;

void FillPipelineSlots(D3D11DDI_DEVICEFUNCS* t, bool dc) {
  CLTRACE_STAGE_SLOTS(t, dc, Vs, kVs)
  CLTRACE_STAGE_SLOTS(t, dc, Ps, kPs)
  CLTRACE_STAGE_SLOTS(t, dc, Gs, kGs)
  CLTRACE_STAGE_SLOTS(t, dc, Hs, kHs)
  CLTRACE_STAGE_SLOTS(t, dc, Ds, kDs)
  CLTRACE_STAGE_SLOTS(t, dc, Cs, kCs)
  CLTRACE_PIPE_SLOT(t, dc, CsSetUnorderedAccessViews)
  CLTRACE_PIPE_SLOT(t, dc, IaSetInputLayout)
  CLTRACE_PIPE_SLOT(t, dc, IaSetVertexBuffers)
  CLTRACE_PIPE_SLOT(t, dc, IaSetIndexBuffer)
  CLTRACE_PIPE_SLOT(t, dc, IaSetTopology)
  CLTRACE_PIPE_SLOT(t, dc, SetRenderTargets)
  CLTRACE_PIPE_SLOT(t, dc, SetBlendState)
  CLTRACE_PIPE_SLOT(t, dc, SetDepthStencilState)
  CLTRACE_PIPE_SLOT(t, dc, SetRasterizerState)
  CLTRACE_PIPE_SLOT(t, dc, SoSetTargets)
  CLTRACE_PIPE_SLOT(t, dc, SetViewports)
  CLTRACE_PIPE_SLOT(t, dc, SetScissorRects)
  CLTRACE_PIPE_SLOT(t, dc, SetPredication)
  CLTRACE_PIPE_SLOT(t, dc, Draw)
  CLTRACE_PIPE_SLOT(t, dc, DrawIndexed)
  CLTRACE_PIPE_SLOT(t, dc, DrawInstanced)
  CLTRACE_PIPE_SLOT(t, dc, DrawIndexedInstanced)
  CLTRACE_PIPE_SLOT(t, dc, DrawAuto)
  CLTRACE_PIPE_SLOT(t, dc, DrawInstancedIndirect)
  CLTRACE_PIPE_SLOT(t, dc, DrawIndexedInstancedIndirect)
  CLTRACE_PIPE_SLOT(t, dc, Dispatch)
  CLTRACE_PIPE_SLOT(t, dc, DispatchIndirect)
  CLTRACE_PIPE_SLOT(t, dc, SetTextFilterSize)
  t->pfnVsSetShaderWithIfaces =
      dc ? &SetShaderWithIfaces<true, kVs> : &SetShaderWithIfaces<false, kVs>;
  t->pfnPsSetShaderWithIfaces =
      dc ? &SetShaderWithIfaces<true, kPs> : &SetShaderWithIfaces<false, kPs>;
  t->pfnGsSetShaderWithIfaces =
      dc ? &SetShaderWithIfaces<true, kGs> : &SetShaderWithIfaces<false, kGs>;
  t->pfnHsSetShaderWithIfaces =
      dc ? &SetShaderWithIfaces<true, kHs> : &SetShaderWithIfaces<false, kHs>;
  t->pfnDsSetShaderWithIfaces =
      dc ? &SetShaderWithIfaces<true, kDs> : &SetShaderWithIfaces<false, kDs>;
  t->pfnCsSetShaderWithIfaces =
      dc ? &SetShaderWithIfaces<true, kCs> : &SetShaderWithIfaces<false, kCs>;
}

}  // namespace cltrace::refdriver
