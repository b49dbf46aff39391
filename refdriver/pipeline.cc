// Pipeline DDIs of the reference driver for the IC and DC tables: bindings, draws, copies,
// clears, queries and the dynamic maps. IC work goes into the kernel command buffer; DC work
// into the deferred context's recording (a command list later). DC calls are validated against
// the deferred-context state machine (R50, R51, R53), handle ownership (R57) and the map rules
// (R64); refresh answers are checked in refresh.cc (R49/R60).
#include <algorithm>
#include <cstring>
#include <optional>

#include "refdriver/internal/common.h"
#include "refdriver/internal/ops.h"
#include "refdriver/internal/refresh.h"
#include "refdriver/internal/tables.h"
#include "wddm/digest.h"

namespace cltrace::refdriver {
namespace {

// Binding kinds in kSet records (operand a).
enum BindKind : uint64_t {
  kBindShader = 0,    // + stage
  kBindCb = 8,        // + stage
  kBindSrv = 16,      // + stage
  kBindSampler = 24,  // + stage
  kBindCsUav = 32,
  kBindInputLayout,
  kBindVb,
  kBindIb,
  kBindTopology,
  kBindRtv,
  kBindDsv,
  kBindBlend,
  kBindDepthStencil,
  kBindRasterizer,
  kBindSo,
  kBindViewports,
  kBindScissors,
  kBindPredicate,
};

constexpr uint32_t kDcPumpChunk = 1024;  // DC recording bytes per amortized-processing pump

// One pipeline DDI on the IC (kDc = false) or a deferred context (kDc = true).
template <bool kDc>
class PipeCall {
 public:
  // `binding`: a Set* call (unbinds are legal in some closed states); `all_null`: it only
  // unbinds.
  PipeCall(D3D10DDI_HDEVICE h, const char* fn, bool binding, bool all_null) : scope_(fn) {
    if constexpr (kDc) {
      dc_call_.emplace(h, rules::Rule::kR53);
      if (!dc_call_->ok()) return;
      dc_ = dc_call_->dc();
      dev_ = dc_->device;
      ok_ = CheckDcState(fn, binding, all_null);
    } else {
      dev_ = IcDevice(h);
      if (dev_ == nullptr) return;
      ic_.emplace(dev_);
      ok_ = true;
    }
    if (ok_ && binding && !all_null) state().dirty = true;
  }
  bool ok() const { return ok_; }
  Device* dev() const { return dev_; }
  DeferredContext* dc() const { return dc_; }
  PipelineState& state() { return kDc ? dc_->state : dev_->ic_state; }
  const void* ctx() const { return kDc ? static_cast<const void*>(dc_) : dev_; }

  // Validates a handle argument; returns the IC object it stands for (nullptr for NULL or
  // an invalid handle, which is reported: R57 on a DC, R39/R57 on the IC).
  IcObject* Ic(void* h, uint32_t type, const char* what) {
    if (h == nullptr) return nullptr;
    if constexpr (kDc) return AsIc(LocalToIc(dc_, h, type, what));
    return IcArg(h, type, what);
  }
  // A handle to keep as a binding: `h` if valid, else NULL (reported), so that draws never
  // dereference a handle the driver does not know.
  void* Binding(void* h, uint32_t type, const char* what) {
    return Ic(h, type, what) != nullptr ? h : nullptr;
  }
  // The IC object behind a bound handle (bindings hold local handles on a DC).
  static IcObject* Bound(void* h) {
    if (h == nullptr) return nullptr;
    if constexpr (kDc) return AsIc(AsLocal(h)->ic);
    return AsIc(h);
  }
  void Write(const void* rec, uint32_t size) {
    if constexpr (kDc) {
      DcWrite(dc_, rec, size);
    } else {
      IcWrite(dev_, rec, size);
    }
  }
  void Generic(uint32_t opcode, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
    if constexpr (kDc) {
      DcWriteGeneric(dc_, opcode, a, b, c);
    } else {
      IcWriteGeneric(dev_, opcode, a, b, c);
    }
  }
  // The allocation this context's GPU commands reference for a resource or view (0: none):
  // on a DC the alias of a map-discard in this recording, on the IC the current alias a
  // command list left (R66), else the resource's own allocation.
  uint32_t Alloc(const IcObject* o) {
    if (o == nullptr) return 0;
    if (o->type != D3D10DDI_HT_RESOURCE) o = o->dependency;
    if (o == nullptr) return 0;
    if constexpr (kDc) {
      auto it = dc_->rec.renamed.find(o);
      if (it != dc_->rec.renamed.end()) return it->second.first;
      dc_->rec.allocations.push_back(o->allocation);
      return o->allocation;
    } else {
      return IcAllocationOf(dev_, o);
    }
  }
  // One GPU-model command (wddm/README.md) into the recording or the IC's command buffer.
  void Emit(const gpu::Command& command) {
    if constexpr (kDc) {
      DcEmit(dc_, command);
    } else {
      IcEmit(dev_, command);
    }
  }
  // Refresh answers (InRefreshOf this context) are compared with the probe's expectation.
  void Answer(bool matches_current, bool all_null) {
    if (InRefreshOf(ctx())) NoteRefreshAnswer(ctx(), matches_current, all_null);
  }

 private:
  bool CheckDcState(const char* fn, bool binding, bool all_null) {
    DcState s = dc_call_->state();
    if (s == DcState::kRecording) return true;
    if (binding && InRefreshOf(dc_)) return true;  // the runtime answering a refresh
    if (binding && all_null && s == DcState::kAbandoned) {
      if (dc_->closing_started) {
        Report(rules::Rule::kR51, dc_,
               absl::StrCat(fn,
                            ": unbind after the local-handle closes of the "
                            "abandon sequence"));
      }
      return true;
    }
    if (binding && all_null && s == DcState::kClosed) {
      Report(rules::Rule::kR50, dc_,
             absl::StrCat(fn,
                          ": unbind in the FinishCommandList closing path "
                          "(closes must not be preceded by unbinds)"));
      return true;
    }
    Report(rules::Rule::kR53, dc_,
           absl::StrCat(fn, " on a deferred context in state ", rules::StateName(s)));
    return false;
  }

  CallScope scope_;
  std::optional<DcCallScope> dc_call_;
  std::optional<IcDomainScope> ic_;
  Device* dev_ = nullptr;
  DeferredContext* dc_ = nullptr;
  bool ok_ = false;
};

template <typename H>
bool AllNull(const H* h, UINT n) {
  for (UINT i = 0; i < n; ++i) {
    if (h != nullptr && h[i].pDrvPrivate != nullptr) return false;
  }
  return true;
}

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
void APIENTRY IaSetIndexBuffer(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE b, UINT format, UINT offset) {
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
uint64_t StateIdentity(const IcObject* o) {
  if (o == nullptr) return 0;
  uint64_t h = gpu::DigestCombineAll(o->type, {o->allocation, o->usage, o->bind_flags,
                                               o->misc_flags, o->byte_size, o->query_type});
  if (const IcObject* r = o->dependency; r != nullptr) {
    h = gpu::DigestCombineAll(
        h, {r->type, r->allocation, r->usage, r->bind_flags, r->misc_flags, r->byte_size});
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

// ---- copies, updates, clears ----

template <bool kDc>
void Copy(PipeCall<kDc>& c, void* dst, void* src, const char* fn) {
  IcObject* d = c.Ic(dst, D3D10DDI_HT_RESOURCE, fn);
  IcObject* s = c.Ic(src, D3D10DDI_HT_RESOURCE, fn);
  if (uint32_t da = c.Alloc(d), sa = c.Alloc(s); da != 0 && sa != 0 && da != sa) {
    c.Emit(gpu::Command::Copy(da, sa));
  }
  if constexpr (!kDc) {
    // The model GPU is immediate: IC copies take effect at once in the CPU backing.
    if (d != nullptr && s != nullptr && d->memory != nullptr && s->memory != nullptr) {
      std::memmove(d->memory, s->memory, std::min<uint64_t>({d->byte_size, s->byte_size, 16}));
    }
  }
  c.Generic(refcmd::kCopy, reinterpret_cast<uint64_t>(d), reinterpret_cast<uint64_t>(s));
}

template <bool kDc>
void APIENTRY ResourceCopy(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE dst, D3D10DDI_HRESOURCE src) {
  PipeCall<kDc> c(h, "ResourceCopy", false, false);
  if (c.ok()) Copy(c, dst.pDrvPrivate, src.pDrvPrivate, "ResourceCopy");
}

template <bool kDc>
void APIENTRY ResourceCopyRegion(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE dst, UINT, UINT, UINT, UINT,
                                 D3D10DDI_HRESOURCE src, UINT, const D3D10_DDI_BOX*) {
  PipeCall<kDc> c(h, "ResourceCopyRegion", false, false);
  if (c.ok()) Copy(c, dst.pDrvPrivate, src.pDrvPrivate, "ResourceCopyRegion");
}

template <bool kDc>
void Update(D3D10DDI_HDEVICE h, const char* fn, D3D10DDI_HRESOURCE dst, PVOID data, UINT pitch) {
  PipeCall<kDc> c(h, fn, false, false);
  if (!c.ok()) return;
  IcObject* d = c.Ic(dst.pDrvPrivate, D3D10DDI_HT_RESOURCE, fn);
  if (uint32_t da = c.Alloc(d); da != 0 && data != nullptr) {
    // The model driver uploads the bytes it keeps (the CPU backing's first line).
    uint32_t n = static_cast<uint32_t>(std::min<uint64_t>({d->byte_size, 16, pitch ? pitch : 16}));
    if (n > 0) c.Emit(gpu::Command::Update(da, 0, n, gpu::HashBytes(data, n)));
  }
  if constexpr (!kDc) {
    if (d != nullptr && d->memory != nullptr && data != nullptr) {
      std::memcpy(d->memory, data, std::min<uint64_t>({d->byte_size, 16, pitch ? pitch : 16}));
    }
  }
  c.Generic(refcmd::kUpdate, reinterpret_cast<uint64_t>(d));
}

template <bool kDc>
void APIENTRY ResourceUpdateSubresourceUP(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE dst, UINT,
                                          const D3D10_DDI_BOX*, PVOID data, UINT pitch, UINT) {
  Update<kDc>(h, "ResourceUpdateSubresourceUP", dst, data, pitch);
}

template <bool kDc>
void APIENTRY DefaultConstantBufferUpdateSubresourceUP(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE dst,
                                                       UINT, const D3D10_DDI_BOX*, PVOID data,
                                                       UINT pitch, UINT) {
  Update<kDc>(h, "DefaultConstantBufferUpdateSubresourceUP", dst, data, pitch);
}

template <bool kDc, typename H>
void Clear(D3D10DDI_HDEVICE h, const char* fn, H view, uint32_t type) {
  PipeCall<kDc> c(h, fn, false, false);
  if (!c.ok()) return;
  IcObject* v = c.Ic(view.pDrvPrivate, type, fn);
  c.Generic(refcmd::kClear, reinterpret_cast<uint64_t>(v));
  // GenerateMips (an SRV) does not change content in the model; the clears fill with a value
  // per view kind (the colours are not part of the model's content).
  if (uint32_t a = c.Alloc(v); a != 0 && type != D3D10DDI_HT_SHADERRESOURCEVIEW) {
    c.Emit(gpu::Command::Clear(a, type));
  }
}

template <bool kDc>
void APIENTRY ClearRenderTargetView(D3D10DDI_HDEVICE h, D3D10DDI_HRENDERTARGETVIEW v,
                                    const FLOAT*) {
  Clear<kDc>(h, "ClearRenderTargetView", v, D3D10DDI_HT_RENDERTARGETVIEW);
}
template <bool kDc>
void APIENTRY ClearDepthStencilView(D3D10DDI_HDEVICE h, D3D10DDI_HDEPTHSTENCILVIEW v,
                                    D3D10_DDI_CLEAR_FLAG, FLOAT, UINT8) {
  Clear<kDc>(h, "ClearDepthStencilView", v, D3D10DDI_HT_DEPTHSTENCILVIEW);
}
template <bool kDc>
void APIENTRY ClearUnorderedAccessViewUint(D3D10DDI_HDEVICE h, D3D11DDI_HUNORDEREDACCESSVIEW v,
                                           const UINT*) {
  Clear<kDc>(h, "ClearUnorderedAccessViewUint", v, D3D11DDI_HT_UNORDEREDACCESSVIEW);
}
template <bool kDc>
void APIENTRY ClearUnorderedAccessViewFloat(D3D10DDI_HDEVICE h, D3D11DDI_HUNORDEREDACCESSVIEW v,
                                            const FLOAT*) {
  Clear<kDc>(h, "ClearUnorderedAccessViewFloat", v, D3D11DDI_HT_UNORDEREDACCESSVIEW);
}
template <bool kDc>
void APIENTRY GenMips(D3D10DDI_HDEVICE h, D3D10DDI_HSHADERRESOURCEVIEW v) {
  Clear<kDc>(h, "GenMips", v, D3D10DDI_HT_SHADERRESOURCEVIEW);
}

// ---- queries ----

// QueryBegin/QueryEnd: on a DC the query joins the recording (building_queries tracks the ones
// begun and not ended); on the IC the query is begun (state 1) or ended (state 2, answered by
// the next submit's fence).
template <bool kDc, bool kEnd>
void MarkQuery(D3D10DDI_HDEVICE h, D3D10DDI_HQUERY q) {
  const char* fn = kEnd ? "QueryEnd" : "QueryBegin";
  PipeCall<kDc> c(h, fn, false, false);
  if (!c.ok()) return;
  IcObject* o = c.Ic(q.pDrvPrivate, D3D10DDI_HT_QUERY, fn);
  if (o == nullptr) return;
  if constexpr (kDc) {
    if constexpr (kEnd) {
      c.dc()->building_queries.erase(q.pDrvPrivate);
    } else {
      c.dc()->building_queries.insert(q.pDrvPrivate);
    }
    c.dc()->rec.queries.push_back(o);
  } else {
    o->ic_query_state = kEnd ? 2 : 1;
    if constexpr (kEnd) o->query_fence = c.dev()->submits + 1;
    MaybeReportRemoved(c.dev(), nullptr);
  }
  c.Generic(kEnd ? refcmd::kQueryEnd : refcmd::kQueryBegin, reinterpret_cast<uint64_t>(o));
}

template <bool kDc>
void APIENTRY QueryBegin(D3D10DDI_HDEVICE h, D3D10DDI_HQUERY q) {
  MarkQuery<kDc, /*kEnd=*/false>(h, q);
}

template <bool kDc>
void APIENTRY QueryEnd(D3D10DDI_HDEVICE h, D3D10DDI_HQUERY q) {
  MarkQuery<kDc, /*kEnd=*/true>(h, q);
}

// ---- dynamic maps (IC and DC) ----

template <bool kDc>
void DynamicMap(D3D10DDI_HDEVICE h, const char* fn, D3D10DDI_HRESOURCE r, D3D10_DDI_MAP type,
                D3D10DDI_MAPPED_SUBRESOURCE* out) {
  PipeCall<kDc> c(h, fn, false, false);
  if (!c.ok()) return;
  IcObject* o = c.Ic(r.pDrvPrivate, D3D10DDI_HT_RESOURCE, fn);
  if (o == nullptr) return;
  if (!ArgPresent(out, fn, "pMappedSubResource")) return;
  const uint64_t size = Backing(o);
  if constexpr (kDc) {
    DeferredContext* dc = c.dc();
    if (type != D3D10_DDI_MAP_WRITE_DISCARD && !dc->mapped_this_recording.contains(o)) {
      Report(rules::Rule::kR64, r.pDrvPrivate,
             absl::StrCat(fn, ": first map of resource #", o->id,
                          " in this recording is not a discard"));
    }
    dc->mapped_this_recording.insert(o);
    dc->mapped_resources.insert(r.pDrvPrivate);
    dc->rec.mapped.push_back(o);
    // Renaming: every discard on a DC gets its own alias, owned by the recording (MAPDC), and
    // its own allocation, which becomes the IC's current one when the list executes (R66).
    dc->rec.aliases.emplace_back(new uint8_t[size]());
    out->pData = dc->rec.aliases.back().get();
    c.Generic(refcmd::kRename, reinterpret_cast<uint64_t>(o), dc->rec.aliases.size());
    if (type == D3D10_DDI_MAP_WRITE_DISCARD && o->allocation != 0) {
      absl::StatusOr<D3DKMT_HALLOCATION> alias = c.dev()->umd->Allocate(o->byte_size);
      if (alias.ok()) {
        {
          std::lock_guard<std::mutex> lock(o->alias_mu);
          o->alias_allocations.push_back(alias->value);
        }
        dc->rec.gpu.RecordRename(o->id, alias->value);
        dc->rec.renamed[o] = {alias->value, dc->rec.aliases.back().get()};
      }
    } else if (auto it = dc->rec.renamed.find(o); it != dc->rec.renamed.end()) {
      out->pData = it->second.second;  // no-overwrite: keeps writing the current alias
    }
  } else {
    o->ic_mapped = true;
    out->pData = o->memory;
    // A discard on the IC leaves any alias a command list made current: the resource's own
    // allocation is written again (queued after the list's work on the GPU timeline).
    if (type == D3D10_DDI_MAP_WRITE_DISCARD) c.dev()->aliases.Erase(o->id);
  }
  out->RowPitch = o->row_pitch;
  out->DepthPitch = o->depth_pitch;
}

template <bool kDc>
void DynamicUnmap(D3D10DDI_HDEVICE h, const char* fn, D3D10DDI_HRESOURCE r) {
  PipeCall<kDc> c(h, fn, false, false);
  if (!c.ok()) return;
  IcObject* o = c.Ic(r.pDrvPrivate, D3D10DDI_HT_RESOURCE, fn);
  if (o == nullptr) return;
  uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(o->byte_size, Backing(o)));
  const uint8_t* written = o->memory;
  if constexpr (kDc) {
    c.dc()->mapped_resources.erase(r.pDrvPrivate);
    auto it = c.dc()->rec.renamed.find(o);
    written = it != c.dc()->rec.renamed.end() ? it->second.second : nullptr;
  } else {
    o->ic_mapped = false;
  }
  // The content written through the map reaches the GPU as an update at unmap.
  if (uint32_t a = c.Alloc(o); a != 0 && written != nullptr && n > 0) {
    c.Emit(gpu::Command::Update(a, 0, n, gpu::HashBytes(written, n)));
  }
}

#define CLTRACE_DYN_MAP(Name)                                                         \
  template <bool kDc>                                                                 \
  void APIENTRY Name(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE r, UINT, D3D10_DDI_MAP t, \
                     D3D10_DDI_MAP_FLAG, D3D10DDI_MAPPED_SUBRESOURCE* out) {          \
    DynamicMap<kDc>(h, #Name, r, t, out);                                             \
  }
#define CLTRACE_DYN_UNMAP(Name)                                        \
  template <bool kDc>                                                  \
  void APIENTRY Name(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE r, UINT) { \
    DynamicUnmap<kDc>(h, #Name, r);                                    \
  }
CLTRACE_DYN_MAP(DynamicIABufferMapDiscard)
CLTRACE_DYN_MAP(DynamicIABufferMapNoOverwrite)
CLTRACE_DYN_MAP(DynamicConstantBufferMapDiscard)
CLTRACE_DYN_MAP(DynamicResourceMapDiscard)
CLTRACE_DYN_UNMAP(DynamicIABufferUnmap)
CLTRACE_DYN_UNMAP(DynamicConstantBufferUnmap)
CLTRACE_DYN_UNMAP(DynamicResourceUnmap)

// ---- the D3D10-era and 11.0 slots the runtime model issues rarely ----

// Read-after-write hazards: the model GPU is in order, so there is nothing to flush; the
// handles are still validated like any other argument.
template <bool kDc>
void APIENTRY ShaderResourceViewReadAfterWriteHazard(D3D10DDI_HDEVICE h,
                                                     D3D10DDI_HSHADERRESOURCEVIEW v,
                                                     D3D10DDI_HRESOURCE r) {
  PipeCall<kDc> c(h, "ShaderResourceViewReadAfterWriteHazard", false, false);
  if (!c.ok()) return;
  (void)c.Ic(v.pDrvPrivate, D3D10DDI_HT_SHADERRESOURCEVIEW,
             "ShaderResourceViewReadAfterWriteHazard");
  (void)c.Ic(r.pDrvPrivate, D3D10DDI_HT_RESOURCE, "ShaderResourceViewReadAfterWriteHazard");
}

template <bool kDc>
void APIENTRY ResourceReadAfterWriteHazard(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE r) {
  PipeCall<kDc> c(h, "ResourceReadAfterWriteHazard", false, false);
  if (c.ok()) (void)c.Ic(r.pDrvPrivate, D3D10DDI_HT_RESOURCE, "ResourceReadAfterWriteHazard");
}

// A resolve and the format conversions move texels like a copy in this model (texels are
// 4 bytes whatever the format), so they are copies to the GPU model and the CPU backing.
template <bool kDc>
void APIENTRY ResourceResolveSubresource(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE dst, UINT,
                                         D3D10DDI_HRESOURCE src, UINT, DXGI_FORMAT) {
  PipeCall<kDc> c(h, "ResourceResolveSubresource", false, false);
  if (c.ok()) Copy(c, dst.pDrvPrivate, src.pDrvPrivate, "ResourceResolveSubresource");
}

template <bool kDc>
void APIENTRY ResourceConvert(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE dst, D3D10DDI_HRESOURCE src) {
  PipeCall<kDc> c(h, "ResourceConvert", false, false);
  if (c.ok()) Copy(c, dst.pDrvPrivate, src.pDrvPrivate, "ResourceConvert");
}

template <bool kDc>
void APIENTRY ResourceConvertRegion(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE dst, UINT, UINT, UINT,
                                    UINT, D3D10DDI_HRESOURCE src, UINT, const D3D10_DDI_BOX*) {
  PipeCall<kDc> c(h, "ResourceConvertRegion", false, false);
  if (c.ok()) Copy(c, dst.pDrvPrivate, src.pDrvPrivate, "ResourceConvertRegion");
}

// CopyStructureCount: the hidden counter of a structured UAV into a buffer, a copy from the
// view's resource in this model.
template <bool kDc>
void APIENTRY CopyStructureCount(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE dst, UINT,
                                 D3D11DDI_HUNORDEREDACCESSVIEW src) {
  PipeCall<kDc> c(h, "CopyStructureCount", false, false);
  if (!c.ok()) return;
  IcObject* view = c.Ic(src.pDrvPrivate, D3D11DDI_HT_UNORDEREDACCESSVIEW, "CopyStructureCount");
  IcObject* d = c.Ic(dst.pDrvPrivate, D3D10DDI_HT_RESOURCE, "CopyStructureCount");
  if (uint32_t da = c.Alloc(d), sa = c.Alloc(view); da != 0 && sa != 0 && da != sa) {
    c.Emit(gpu::Command::Copy(da, sa));
  }
  c.Generic(refcmd::kCopy, reinterpret_cast<uint64_t>(d), reinterpret_cast<uint64_t>(view));
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

#define CLTRACE_SLOT(t, dc, Name) t->pfn##Name = dc ? &Name<true> : &Name<false>;

void FillPipelineSlots(D3D11DDI_DEVICEFUNCS* t, bool dc) {
  CLTRACE_STAGE_SLOTS(t, dc, Vs, kVs)
  CLTRACE_STAGE_SLOTS(t, dc, Ps, kPs)
  CLTRACE_STAGE_SLOTS(t, dc, Gs, kGs)
  CLTRACE_STAGE_SLOTS(t, dc, Hs, kHs)
  CLTRACE_STAGE_SLOTS(t, dc, Ds, kDs)
  CLTRACE_STAGE_SLOTS(t, dc, Cs, kCs)
  CLTRACE_SLOT(t, dc, CsSetUnorderedAccessViews)
  CLTRACE_SLOT(t, dc, IaSetInputLayout)
  CLTRACE_SLOT(t, dc, IaSetVertexBuffers)
  CLTRACE_SLOT(t, dc, IaSetIndexBuffer)
  CLTRACE_SLOT(t, dc, IaSetTopology)
  CLTRACE_SLOT(t, dc, SetRenderTargets)
  CLTRACE_SLOT(t, dc, SetBlendState)
  CLTRACE_SLOT(t, dc, SetDepthStencilState)
  CLTRACE_SLOT(t, dc, SetRasterizerState)
  CLTRACE_SLOT(t, dc, SoSetTargets)
  CLTRACE_SLOT(t, dc, SetViewports)
  CLTRACE_SLOT(t, dc, SetScissorRects)
  CLTRACE_SLOT(t, dc, SetPredication)
  CLTRACE_SLOT(t, dc, Draw)
  CLTRACE_SLOT(t, dc, DrawIndexed)
  CLTRACE_SLOT(t, dc, DrawInstanced)
  CLTRACE_SLOT(t, dc, DrawIndexedInstanced)
  CLTRACE_SLOT(t, dc, DrawAuto)
  CLTRACE_SLOT(t, dc, DrawInstancedIndirect)
  CLTRACE_SLOT(t, dc, DrawIndexedInstancedIndirect)
  CLTRACE_SLOT(t, dc, Dispatch)
  CLTRACE_SLOT(t, dc, DispatchIndirect)
  CLTRACE_SLOT(t, dc, ResourceCopy)
  CLTRACE_SLOT(t, dc, ResourceCopyRegion)
  CLTRACE_SLOT(t, dc, ResourceUpdateSubresourceUP)
  CLTRACE_SLOT(t, dc, DefaultConstantBufferUpdateSubresourceUP)
  CLTRACE_SLOT(t, dc, ClearRenderTargetView)
  CLTRACE_SLOT(t, dc, ClearDepthStencilView)
  CLTRACE_SLOT(t, dc, ClearUnorderedAccessViewUint)
  CLTRACE_SLOT(t, dc, ClearUnorderedAccessViewFloat)
  CLTRACE_SLOT(t, dc, GenMips)
  CLTRACE_SLOT(t, dc, QueryBegin)
  CLTRACE_SLOT(t, dc, QueryEnd)
  CLTRACE_SLOT(t, dc, DynamicIABufferMapDiscard)
  CLTRACE_SLOT(t, dc, DynamicIABufferMapNoOverwrite)
  CLTRACE_SLOT(t, dc, DynamicConstantBufferMapDiscard)
  CLTRACE_SLOT(t, dc, DynamicResourceMapDiscard)
  CLTRACE_SLOT(t, dc, DynamicIABufferUnmap)
  CLTRACE_SLOT(t, dc, DynamicConstantBufferUnmap)
  CLTRACE_SLOT(t, dc, DynamicResourceUnmap)
  CLTRACE_SLOT(t, dc, ShaderResourceViewReadAfterWriteHazard)
  CLTRACE_SLOT(t, dc, ResourceReadAfterWriteHazard)
  CLTRACE_SLOT(t, dc, ResourceResolveSubresource)
  CLTRACE_SLOT(t, dc, ResourceConvert)
  CLTRACE_SLOT(t, dc, ResourceConvertRegion)
  CLTRACE_SLOT(t, dc, CopyStructureCount)
  CLTRACE_SLOT(t, dc, SetTextFilterSize)
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
