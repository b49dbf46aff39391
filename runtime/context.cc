// The DeviceContext API for both context kinds: pipeline Set* calls, draws, copies, maps,
// queries, ClearState and Flush. Command-list production and execution live in deferred.cc.
//
// Every call enters the context's domain (R10) and, on a deferred context, opens the
// context-local handles it needs on first use (§4.4).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "runtime/internal/access.h"
#include "runtime/internal/common.h"
#include "runtime/internal/send.h"
#include "runtime/runtime.h"

namespace cltrace::runtime {

using internal::Assign;
using internal::ContextCall;
using internal::ContextState;
using internal::SendMode;

namespace {

constexpr SendMode kCur = SendMode::kCurrent;

// A deferred context whose recycle failed records nothing more (D9e).
bool Dropped(ContextState* c) { return c->deferred && c->lost; }

void Touch(ContextState* c) {
  if (c->deferred) c->has_commands = true;
}

template <typename T, size_t N>
void SetRange(T* (&slots)[N], uint32_t* hw, uint32_t start, uint32_t count, T* const* values) {
  for (uint32_t i = 0; i < count && start + i < N; ++i) {
    Assign(slots[start + i], values != nullptr ? values[i] : nullptr);
  }
  uint32_t h = std::max(*hw, std::min<uint32_t>(start + count, N));
  while (h > 0 && slots[h - 1] == nullptr) --h;
  *hw = h;
}

// OMSetRenderTargets*: binds the first `count` of `rtvs` (the rest of the slots empty) and
// `dsv`; returns the render targets bound (at most kRtvSlots).
uint32_t BindRenderTargets(ContextState* c, uint32_t count, View* const* rtvs, View* dsv) {
  count = std::min(count, internal::kRtvSlots);
  for (uint32_t i = 0; i < internal::kRtvSlots; ++i) {
    Assign(c->bindings.rtv[i], i < count && rtvs != nullptr ? rtvs[i] : nullptr);
  }
  c->bindings.num_rtvs = count;
  Assign(c->bindings.dsv, dsv);
  return count;
}

// Records the draw-state expectation before the draw DDI (the driver may submit inside it).
void ExpectDraw(ContextState* c) {
  internal::DrawExpectation e = internal::CurrentDrawState(c);
  if (c->deferred) {
    c->rec->draws.push_back(e);
  } else {
    c->dev->expected_draws.push_back(e);
  }
}

template <typename H>
H Hnd(ContextState* c, DeviceChild* o) {
  return H{internal::HandleFor(c, o)};
}

bool IsIa(const Resource* r) {
  return (r->desc().bind_flags & (D3D10_DDI_BIND_VERTEX_BUFFER | D3D10_DDI_BIND_INDEX_BUFFER)) != 0;
}
bool IsCb(const Resource* r) {
  return (r->desc().bind_flags & D3D10_DDI_BIND_CONSTANT_BUFFER) != 0;
}

}  // namespace

DeviceContext::DeviceContext(Device* device, bool deferred)
    : device_(device), state_(std::make_unique<ContextState>()) {
  state_->self = this;
  state_->dev = internal::Access::State(device);
  state_->deferred = deferred;
}

DeviceContext::~DeviceContext() = default;

bool DeviceContext::IsDeferred() const { return state_->deferred; }

void DeviceContext::IASetInputLayout(InputLayout* layout) {
  ContextState* c = state_.get();
  ContextCall call(c, "IASetInputLayout");
  if (Dropped(c)) return;
  Assign(c->bindings.input_layout, layout);
  internal::SendInputLayout(c, kCur);
  Touch(c);
}

void DeviceContext::IASetVertexBuffers(uint32_t start, uint32_t count, Resource* const* buffers,
                                       const uint32_t* strides, const uint32_t* offsets) {
  ContextState* c = state_.get();
  ContextCall call(c, "IASetVertexBuffers");
  if (Dropped(c)) return;
  SetRange(c->bindings.vb, &c->bindings.vb_hw, start, count, buffers);
  for (uint32_t i = 0; i < count && start + i < internal::kVbSlots; ++i) {
    c->bindings.vb_stride[start + i] = strides != nullptr ? strides[i] : 0;
    c->bindings.vb_offset[start + i] = offsets != nullptr ? offsets[i] : 0;
  }
  internal::SendVertexBuffers(c, start, count, kCur);
  Touch(c);
}

void DeviceContext::IASetIndexBuffer(Resource* buffer, uint32_t format, uint32_t offset) {
  ContextState* c = state_.get();
  ContextCall call(c, "IASetIndexBuffer");
  if (Dropped(c)) return;
  Assign(c->bindings.ib, buffer);
  c->bindings.ib_format = format;
  c->bindings.ib_offset = offset;
  internal::SendIndexBuffer(c, kCur);
  Touch(c);
}

void DeviceContext::IASetPrimitiveTopology(D3D10_DDI_PRIMITIVE_TOPOLOGY topology) {
  ContextState* c = state_.get();
  ContextCall call(c, "IASetPrimitiveTopology");
  if (Dropped(c)) return;
  c->bindings.topology = topology;
  internal::SendTopology(c, kCur);
  Touch(c);
}

void DeviceContext::SetShader(Stage stage, Shader* shader) {
  ContextState* c = state_.get();
  ContextCall call(c, "SetShader");
  if (Dropped(c)) return;
  Assign(c->bindings.shader[static_cast<int>(stage)], shader);
  internal::SendShader(c, stage, kCur);
  Touch(c);
}

void DeviceContext::SetShaderWithInterfaces(Stage stage, Shader* shader, uint32_t count,
                                            const uint32_t* interfaces,
                                            const D3D11DDIARG_POINTERDATA* pointer_data) {
  ContextState* c = state_.get();
  ContextCall call(c, "SetShaderWithInterfaces");
  if (Dropped(c)) return;
  Assign(c->bindings.shader[static_cast<int>(stage)], shader);
  internal::SendShaderWithIfaces(c, stage, count, interfaces, pointer_data);
  Touch(c);
}

void DeviceContext::SetConstantBuffers(Stage stage, uint32_t start, uint32_t count,
                                       Resource* const* buffers) {
  ContextState* c = state_.get();
  ContextCall call(c, "SetConstantBuffers");
  if (Dropped(c)) return;
  int s = static_cast<int>(stage);
  SetRange(c->bindings.cb[s], &c->bindings.cb_hw[s], start, count, buffers);
  internal::SendConstantBuffers(c, stage, start, count, kCur);
  Touch(c);
}

void DeviceContext::SetShaderResources(Stage stage, uint32_t start, uint32_t count,
                                       View* const* views) {
  ContextState* c = state_.get();
  ContextCall call(c, "SetShaderResources");
  if (Dropped(c)) return;
  int s = static_cast<int>(stage);
  SetRange(c->bindings.srv[s], &c->bindings.srv_hw[s], start, count, views);
  internal::SendShaderResources(c, stage, start, count, kCur);
  Touch(c);
}

void DeviceContext::SetSamplers(Stage stage, uint32_t start, uint32_t count,
                                SamplerState* const* samplers) {
  ContextState* c = state_.get();
  ContextCall call(c, "SetSamplers");
  if (Dropped(c)) return;
  int s = static_cast<int>(stage);
  SetRange(c->bindings.sampler[s], &c->bindings.sampler_hw[s], start, count, samplers);
  internal::SendSamplers(c, stage, start, count, kCur);
  Touch(c);
}

void DeviceContext::CSSetUnorderedAccessViews(uint32_t start, uint32_t count, View* const* views,
                                              const uint32_t* /*initial_counts*/) {
  ContextState* c = state_.get();
  ContextCall call(c, "CSSetUnorderedAccessViews");
  if (Dropped(c)) return;
  SetRange(c->bindings.cs_uav, &c->bindings.cs_uav_hw, start, count, views);
  internal::SendCsUavs(c, start, count, kCur);
  Touch(c);
}

void DeviceContext::OMSetRenderTargets(uint32_t count, View* const* rtvs, View* dsv) {
  ContextState* c = state_.get();
  ContextCall call(c, "OMSetRenderTargets");
  if (Dropped(c)) return;
  count = BindRenderTargets(c, count, rtvs, dsv);
  // The new render targets take their slots from pixel-stage UAVs (they share them).
  const uint32_t old_uavs = c->bindings.om_uav_hw;
  SetRange(c->bindings.om_uav, &c->bindings.om_uav_hw, 0, count,
           static_cast<View* const*>(nullptr));
  internal::SendRenderTargets(c, kCur, old_uavs > count ? c->bindings.om_uav_hw : 0, nullptr);
  Touch(c);
}

void DeviceContext::OMSetRenderTargetsAndUnorderedAccessViews(uint32_t num_rtvs, View* const* rtvs,
                                                              View* dsv, uint32_t uav_start,
                                                              uint32_t num_uavs, View* const* uavs,
                                                              const uint32_t* initial_counts) {
  ContextState* c = state_.get();
  ContextCall call(c, "OMSetRenderTargetsAndUnorderedAccessViews");
  if (Dropped(c)) return;
  if (num_rtvs != kKeepRenderTargets) BindRenderTargets(c, num_rtvs, rtvs, dsv);
  const uint32_t before = c->bindings.om_uav_hw;
  UINT counts[internal::kUavSlots];
  std::fill(counts, counts + internal::kUavSlots, UINT_MAX);
  if (num_uavs != kKeepUnorderedAccessViews) {
    // D3D11 unbinds every UAV outside the new range (and those under the render targets).
    uav_start = std::max(uav_start, c->bindings.num_rtvs);
    std::vector<View*> slots(internal::kUavSlots, nullptr);
    for (uint32_t i = 0; i < num_uavs && uav_start + i < internal::kUavSlots; ++i) {
      slots[uav_start + i] = uavs != nullptr ? uavs[i] : nullptr;
      if (initial_counts != nullptr) counts[uav_start + i] = initial_counts[i];
    }
    SetRange(c->bindings.om_uav, &c->bindings.om_uav_hw, 0, internal::kUavSlots, slots.data());
  } else {
    SetRange(c->bindings.om_uav, &c->bindings.om_uav_hw, 0, c->bindings.num_rtvs,
             static_cast<View* const*>(nullptr));
  }
  internal::SendRenderTargets(c, kCur, std::max(before, c->bindings.om_uav_hw), counts);
  Touch(c);
}

void DeviceContext::OMSetBlendState(BlendState* state, const float factor[4],
                                    uint32_t sample_mask) {
  ContextState* c = state_.get();
  ContextCall call(c, "OMSetBlendState");
  if (Dropped(c)) return;
  Assign(c->bindings.blend, state);
  for (int i = 0; i < 4; ++i) c->bindings.blend_factor[i] = factor != nullptr ? factor[i] : 1.0f;
  c->bindings.sample_mask = sample_mask;
  internal::SendBlendState(c, kCur);
  Touch(c);
}

void DeviceContext::OMSetDepthStencilState(DepthStencilState* state, uint32_t stencil_ref) {
  ContextState* c = state_.get();
  ContextCall call(c, "OMSetDepthStencilState");
  if (Dropped(c)) return;
  Assign(c->bindings.depth_stencil, state);
  c->bindings.stencil_ref = stencil_ref;
  internal::SendDepthStencilState(c, kCur);
  Touch(c);
}

void DeviceContext::RSSetState(RasterizerState* state) {
  ContextState* c = state_.get();
  ContextCall call(c, "RSSetState");
  if (Dropped(c)) return;
  Assign(c->bindings.rasterizer, state);
  internal::SendRasterizerState(c, kCur);
  Touch(c);
}

void DeviceContext::RSSetViewports(uint32_t count, const D3D10_DDI_VIEWPORT* viewports) {
  ContextState* c = state_.get();
  ContextCall call(c, "RSSetViewports");
  if (Dropped(c)) return;
  count = std::min(count, internal::kViewportSlots);
  std::copy(viewports, viewports + count, c->bindings.viewports);
  c->bindings.num_viewports = count;
  internal::SendViewports(c, kCur);
  Touch(c);
}

void DeviceContext::RSSetScissorRects(uint32_t count, const D3D10_DDI_RECT* rects) {
  ContextState* c = state_.get();
  ContextCall call(c, "RSSetScissorRects");
  if (Dropped(c)) return;
  count = std::min(count, internal::kViewportSlots);
  std::copy(rects, rects + count, c->bindings.scissors);
  c->bindings.num_scissors = count;
  internal::SendScissorRects(c, kCur);
  Touch(c);
}

void DeviceContext::SOSetTargets(uint32_t count, Resource* const* buffers,
                                 const uint32_t* offsets) {
  ContextState* c = state_.get();
  ContextCall call(c, "SOSetTargets");
  if (Dropped(c)) return;
  count = std::min(count, internal::kSoSlots);
  for (uint32_t i = 0; i < internal::kSoSlots; ++i) {
    Assign(c->bindings.so[i], i < count && buffers != nullptr ? buffers[i] : nullptr);
    c->bindings.so_offset[i] = i < count && offsets != nullptr ? offsets[i] : 0;
  }
  c->bindings.num_so = count;
  internal::SendSoTargets(c, kCur);
  Touch(c);
}

void DeviceContext::SetPredication(Query* predicate, BOOL value) {
  ContextState* c = state_.get();
  ContextCall call(c, "SetPredication");
  if (Dropped(c)) return;
  Assign(c->bindings.predicate, predicate);
  c->bindings.predicate_value = value;
  internal::SendPredication(c, kCur);
  Touch(c);
}

// ---- work ----

void DeviceContext::Draw(uint32_t vertex_count, uint32_t start_vertex) {
  ContextState* c = state_.get();
  ContextCall call(c, "Draw");
  if (Dropped(c)) return;
  ExpectDraw(c);
  CLTRACE_CTX_DDI(c, Draw, vertex_count, start_vertex);
  Touch(c);
}

void DeviceContext::DrawIndexed(uint32_t index_count, uint32_t start_index, int32_t base_vertex) {
  ContextState* c = state_.get();
  ContextCall call(c, "DrawIndexed");
  if (Dropped(c)) return;
  ExpectDraw(c);
  CLTRACE_CTX_DDI(c, DrawIndexed, index_count, start_index, base_vertex);
  Touch(c);
}

void DeviceContext::DrawInstanced(uint32_t vertex_count, uint32_t instance_count,
                                  uint32_t start_vertex, uint32_t start_instance) {
  ContextState* c = state_.get();
  ContextCall call(c, "DrawInstanced");
  if (Dropped(c)) return;
  ExpectDraw(c);
  CLTRACE_CTX_DDI(c, DrawInstanced, vertex_count, instance_count, start_vertex, start_instance);
  Touch(c);
}

void DeviceContext::DrawIndexedInstanced(uint32_t index_count, uint32_t instance_count,
                                         uint32_t start_index, int32_t base_vertex,
                                         uint32_t start_instance) {
  ContextState* c = state_.get();
  ContextCall call(c, "DrawIndexedInstanced");
  if (Dropped(c)) return;
  ExpectDraw(c);
  CLTRACE_CTX_DDI(c, DrawIndexedInstanced, index_count, instance_count, start_index, base_vertex,
                  start_instance);
  Touch(c);
}

void DeviceContext::DrawAuto() {
  ContextState* c = state_.get();
  ContextCall call(c, "DrawAuto");
  if (Dropped(c)) return;
  ExpectDraw(c);
  CLTRACE_CTX_DDI(c, DrawAuto);
  Touch(c);
}

void DeviceContext::DrawInstancedIndirect(Resource* args, uint32_t offset) {
  ContextState* c = state_.get();
  ContextCall call(c, "DrawInstancedIndirect");
  if (Dropped(c)) return;
  auto h = Hnd<D3D10DDI_HRESOURCE>(c, args);
  ExpectDraw(c);
  CLTRACE_CTX_DDI(c, DrawInstancedIndirect, h, offset);
  Touch(c);
}

void DeviceContext::DrawIndexedInstancedIndirect(Resource* args, uint32_t offset) {
  ContextState* c = state_.get();
  ContextCall call(c, "DrawIndexedInstancedIndirect");
  if (Dropped(c)) return;
  auto h = Hnd<D3D10DDI_HRESOURCE>(c, args);
  ExpectDraw(c);
  CLTRACE_CTX_DDI(c, DrawIndexedInstancedIndirect, h, offset);
  Touch(c);
}

void DeviceContext::Dispatch(uint32_t x, uint32_t y, uint32_t z) {
  ContextState* c = state_.get();
  ContextCall call(c, "Dispatch");
  if (Dropped(c)) return;
  CLTRACE_CTX_DDI(c, Dispatch, x, y, z);
  Touch(c);
}

void DeviceContext::DispatchIndirect(Resource* args, uint32_t offset) {
  ContextState* c = state_.get();
  ContextCall call(c, "DispatchIndirect");
  if (Dropped(c)) return;
  auto h = Hnd<D3D10DDI_HRESOURCE>(c, args);
  CLTRACE_CTX_DDI(c, DispatchIndirect, h, offset);
  Touch(c);
}

// ---- copies and updates ----

void DeviceContext::ResolveSubresource(Resource* dst, uint32_t dst_sub, Resource* src,
                                       uint32_t src_sub, DXGI_FORMAT format) {
  ContextState* c = state_.get();
  ContextCall call(c, "ResolveSubresource");
  if (Dropped(c)) return;
  auto d = Hnd<D3D10DDI_HRESOURCE>(c, dst);
  auto s = Hnd<D3D10DDI_HRESOURCE>(c, src);
  CLTRACE_CTX_DDI(c, ResourceResolveSubresource, d, dst_sub, s, src_sub, format);
  Touch(c);
}

void DeviceContext::CopyStructureCount(Resource* dst, uint32_t dst_offset, View* src_uav) {
  ContextState* c = state_.get();
  ContextCall call(c, "CopyStructureCount");
  if (Dropped(c)) return;
  auto d = Hnd<D3D10DDI_HRESOURCE>(c, dst);
  auto v = Hnd<D3D11DDI_HUNORDEREDACCESSVIEW>(c, src_uav);
  CLTRACE_CTX_DDI(c, CopyStructureCount, d, dst_offset, v);
  Touch(c);
}

void DeviceContext::CopyResource(Resource* dst, Resource* src) {
  ContextState* c = state_.get();
  ContextCall call(c, "CopyResource");
  if (Dropped(c)) return;
  auto d = Hnd<D3D10DDI_HRESOURCE>(c, dst);
  auto s = Hnd<D3D10DDI_HRESOURCE>(c, src);
  CLTRACE_CTX_DDI(c, ResourceCopy, d, s);
  Touch(c);
}

void DeviceContext::CopySubresourceRegion(Resource* dst, uint32_t dst_sub, uint32_t x, uint32_t y,
                                          uint32_t z, Resource* src, uint32_t src_sub,
                                          const D3D10_DDI_BOX* src_box) {
  ContextState* c = state_.get();
  ContextCall call(c, "CopySubresourceRegion");
  if (Dropped(c)) return;
  auto d = Hnd<D3D10DDI_HRESOURCE>(c, dst);
  auto s = Hnd<D3D10DDI_HRESOURCE>(c, src);
  CLTRACE_CTX_DDI(c, ResourceCopyRegion, d, dst_sub, x, y, z, s, src_sub, src_box);
  Touch(c);
}

void DeviceContext::UpdateSubresource(Resource* dst, uint32_t dst_sub, const D3D10_DDI_BOX* box,
                                      const void* data, uint32_t row_pitch, uint32_t depth_pitch) {
  ContextState* c = state_.get();
  ContextCall call(c, "UpdateSubresource");
  if (Dropped(c)) return;
  auto d = Hnd<D3D10DDI_HRESOURCE>(c, dst);
  void* bytes = const_cast<void*>(data);
  if (IsCb(dst) && box == nullptr) {
    CLTRACE_CTX_DDI(c, DefaultConstantBufferUpdateSubresourceUP, d, dst_sub, box, bytes, row_pitch,
                    depth_pitch);
  } else {
    CLTRACE_CTX_DDI(c, ResourceUpdateSubresourceUP, d, dst_sub, box, bytes, row_pitch, depth_pitch);
  }
  Touch(c);
}

void DeviceContext::ClearRenderTargetView(View* rtv, const float color[4]) {
  ContextState* c = state_.get();
  ContextCall call(c, "ClearRenderTargetView");
  if (Dropped(c)) return;
  auto h = Hnd<D3D10DDI_HRENDERTARGETVIEW>(c, rtv);
  CLTRACE_CTX_DDI(c, ClearRenderTargetView, h, internal::MakeArr(color, 4u));
  Touch(c);
}

void DeviceContext::ClearDepthStencilView(View* dsv, uint32_t flags, float depth, uint8_t stencil) {
  ContextState* c = state_.get();
  ContextCall call(c, "ClearDepthStencilView");
  if (Dropped(c)) return;
  auto h = Hnd<D3D10DDI_HDEPTHSTENCILVIEW>(c, dsv);
  CLTRACE_CTX_DDI(c, ClearDepthStencilView, h, flags, depth, stencil);
  Touch(c);
}

void DeviceContext::ClearUnorderedAccessViewUint(View* uav, const uint32_t values[4]) {
  ContextState* c = state_.get();
  ContextCall call(c, "ClearUnorderedAccessViewUint");
  if (Dropped(c)) return;
  auto h = Hnd<D3D11DDI_HUNORDEREDACCESSVIEW>(c, uav);
  CLTRACE_CTX_DDI(c, ClearUnorderedAccessViewUint, h, internal::MakeArr(values, 4u));
  Touch(c);
}

void DeviceContext::ClearUnorderedAccessViewFloat(View* uav, const float values[4]) {
  ContextState* c = state_.get();
  ContextCall call(c, "ClearUnorderedAccessViewFloat");
  if (Dropped(c)) return;
  auto h = Hnd<D3D11DDI_HUNORDEREDACCESSVIEW>(c, uav);
  CLTRACE_CTX_DDI(c, ClearUnorderedAccessViewFloat, h, internal::MakeArr(values, 4u));
  Touch(c);
}

void DeviceContext::GenerateMips(View* srv) {
  ContextState* c = state_.get();
  ContextCall call(c, "GenerateMips");
  if (Dropped(c)) return;
  auto h = Hnd<D3D10DDI_HSHADERRESOURCEVIEW>(c, srv);
  CLTRACE_CTX_DDI(c, GenMips, h);
  Touch(c);
}

// ---- maps ----

HRESULT DeviceContext::Map(Resource* r, uint32_t sub, D3D10_DDI_MAP map_type, uint32_t flags,
                           MappedSubresource* mapped) {
  ContextState* c = state_.get();
  ContextCall call(c, "Map");
  if (Dropped(c)) return static_cast<HRESULT>(E_OUTOFMEMORY);
  internal::DeviceState* dev = c->dev;
  bool dynamic = r->desc().usage == D3D10_DDI_USAGE_DYNAMIC;
  bool discard = map_type == D3D10_DDI_MAP_WRITE_DISCARD;
  if (c->deferred) {
    // Application rules for deferred maps (R64), reported and refused.
    if (!dynamic || (!discard && map_type != D3D10_DDI_MAP_WRITE_NOOVERWRITE)) {
      internal::Report(
          dev, rules::Rule::kR64, "Map",
          absl::StrCat("application: ", c->name, " maps ", r->debug_name(), " with map type ",
                       map_type, " (deferred contexts: dynamic + WRITE_DISCARD/NO_OVERWRITE)"));
      return static_cast<HRESULT>(E_INVALIDARG);
    }
    if (!discard && !c->mapped_this_recording.contains(r)) {
      internal::Report(dev, rules::Rule::kR64, "Map",
                       absl::StrCat("application: first map of ", r->debug_name(), " on ", c->name,
                                    " in this recording is not WRITE_DISCARD"));
      return static_cast<HRESULT>(E_INVALIDARG);
    }
  }
  auto h = Hnd<D3D10DDI_HRESOURCE>(c, r);
  D3D10DDI_MAPPED_SUBRESOURCE out{};
  internal::ErrorCapture capture;
  if (dynamic && discard) {
    if (IsIa(r)) {
      CLTRACE_CTX_DDI(c, DynamicIABufferMapDiscard, h, sub, map_type, flags, &out);
    } else if (IsCb(r)) {
      CLTRACE_CTX_DDI(c, DynamicConstantBufferMapDiscard, h, sub, map_type, flags, &out);
    } else {
      CLTRACE_CTX_DDI(c, DynamicResourceMapDiscard, h, sub, map_type, flags, &out);
    }
  } else if (dynamic && map_type == D3D10_DDI_MAP_WRITE_NOOVERWRITE && IsIa(r)) {
    CLTRACE_CTX_DDI(c, DynamicIABufferMapNoOverwrite, h, sub, map_type, flags, &out);
  } else if (c->deferred) {
    // NO_OVERWRITE of a non-IA dynamic resource on a DC goes through the discard slot's type.
    CLTRACE_CTX_DDI(c, DynamicResourceMapDiscard, h, sub, map_type, flags, &out);
  } else if (r->desc().usage == D3D10_DDI_USAGE_STAGING) {
    CLTRACE_CTX_DDI(c, StagingResourceMap, h, sub, map_type, flags, &out);
  } else {
    CLTRACE_CTX_DDI(c, ResourceMap, h, sub, map_type, flags, &out);
  }
  if (capture.failed()) {
    return static_cast<uint32_t>(capture.error()) == DXGI_DDI_ERR_WASSTILLDRAWING
               ? static_cast<HRESULT>(DXGI_DDI_ERR_WASSTILLDRAWING)
               : capture.error();
  }
  c->mapped[r] = sub;
  if (c->deferred) {
    c->mapped_this_recording.insert(r);
    c->rec->mapped.push_back(r);
    c->has_commands = true;
  }
  if (mapped != nullptr) {
    mapped->data = out.pData;
    mapped->row_pitch = out.RowPitch;
    mapped->depth_pitch = out.DepthPitch;
  }
  return S_OK;
}

namespace internal {

// The unmap DDI matching how `r` was mapped on `c`.
void SendUnmap(ContextState* c, Resource* r, uint32_t sub) {
  D3D10DDI_HRESOURCE h{HandleFor(c, r)};
  bool dynamic = r->desc().usage == D3D10_DDI_USAGE_DYNAMIC;
  if (dynamic && IsIa(r)) {
    CLTRACE_CTX_DDI(c, DynamicIABufferUnmap, h, sub);
  } else if (dynamic && IsCb(r)) {
    CLTRACE_CTX_DDI(c, DynamicConstantBufferUnmap, h, sub);
  } else if (dynamic) {
    CLTRACE_CTX_DDI(c, DynamicResourceUnmap, h, sub);
  } else if (r->desc().usage == D3D10_DDI_USAGE_STAGING) {
    CLTRACE_CTX_DDI(c, StagingResourceUnmap, h, sub);
  } else {
    CLTRACE_CTX_DDI(c, ResourceUnmap, h, sub);
  }
}

}  // namespace internal

void DeviceContext::Unmap(Resource* r, uint32_t sub) {
  ContextState* c = state_.get();
  ContextCall call(c, "Unmap");
  if (Dropped(c)) return;
  auto it = c->mapped.find(r);
  if (it == c->mapped.end()) {
    internal::Report(c->dev, rules::Rule::kR64, "Unmap",
                     absl::StrCat("application: ", r->debug_name(), " is not mapped on ", c->name));
    return;
  }
  c->mapped.erase(it);
  internal::SendUnmap(c, r, sub);
}

// ---- queries ----

void DeviceContext::Begin(Query* q) {
  ContextState* c = state_.get();
  ContextCall call(c, "Begin");
  if (Dropped(c)) return;
  auto h = Hnd<D3D10DDI_HQUERY>(c, q);
  CLTRACE_CTX_DDI(c, QueryBegin, h);
  c->building.insert(q);
  if (c->deferred) {
    c->rec->queries.push_back(q);
    c->has_commands = true;
  }
}

void DeviceContext::End(Query* q) {
  ContextState* c = state_.get();
  ContextCall call(c, "End");
  if (Dropped(c)) return;
  auto h = Hnd<D3D10DDI_HQUERY>(c, q);
  CLTRACE_CTX_DDI(c, QueryEnd, h);
  c->building.erase(q);
  if (c->deferred) {
    c->rec->queries.push_back(q);
    c->has_commands = true;
  }
}

HRESULT DeviceContext::GetData(Query* q, void* data, uint32_t size, uint32_t flags) {
  ContextState* c = state_.get();
  ContextCall call(c, "GetData");
  if (c->deferred) {
    internal::Report(c->dev, rules::Rule::kR65, "GetData",
                     absl::StrCat("application: GetData on deferred context ", c->name));
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  internal::ErrorCapture capture;
  CLTRACE_CTX_DDI(c, QueryGetData, D3D10DDI_HQUERY{q->ic_handle()}, data, size, flags);
  if (static_cast<uint32_t>(capture.error()) == DXGI_DDI_ERR_WASSTILLDRAWING) return S_FALSE;
  return capture.failed() ? capture.error() : S_OK;
}

// ---- state and submission ----

void DeviceContext::ClearState() {
  ContextState* c = state_.get();
  ContextCall call(c, "ClearState");
  if (Dropped(c)) return;
  internal::SendAllBound(c, SendMode::kNull);
  Touch(c);
}

int DeviceContext::BeginEvent(const std::string& name) {
  ContextState* c = state_.get();
  ContextCall call(c, "BeginEvent");
  if (c->dev->driver.annotate_marker != nullptr) {
    c->dev->driver.annotate_marker(absl::StrCat("BeginEvent: ", name).c_str());
  }
  return c->event_depth++;
}

int DeviceContext::EndEvent() {
  ContextState* c = state_.get();
  ContextCall call(c, "EndEvent");
  if (c->event_depth == 0) return -1;
  if (c->dev->driver.annotate_marker != nullptr) c->dev->driver.annotate_marker("EndEvent");
  return --c->event_depth;
}

void DeviceContext::SetMarker(const std::string& name) {
  ContextState* c = state_.get();
  ContextCall call(c, "SetMarker");
  if (c->dev->driver.annotate_marker != nullptr) {
    c->dev->driver.annotate_marker(absl::StrCat("SetMarker: ", name).c_str());
  }
}

void DeviceContext::Flush() {
  ContextState* c = state_.get();
  ContextCall call(c, "Flush");
  internal::DeviceState* dev = c->dev;
  if (c->deferred) {
    internal::Report(dev, rules::Rule::kR65, "Flush",
                     absl::StrCat("application: Flush on ", c->name));
    return;
  }
  uint64_t epoch = dev->flushes.fetch_add(1) + 1;
  CLTRACE_CTX_DDI(c, Flush);
  internal::CheckFixedSlots(dev, "Flush");
  // R68: everything destroyed before this Flush began whose work the (infinitely fast) GPU
  // has finished must have been freed by it.
  {
    std::lock_guard<std::mutex> lock(dev->alloc_mu);
    for (const auto& [alloc, info] : dev->allocations) {
      if (dev->destroyed_not_deallocated == 0) break;  // nothing to find
      if (info.destroyed && !info.deallocated && info.destroyed_at_flush < epoch) {
        internal::ReportOnce(dev, absl::StrCat("R68-", alloc), rules::Rule::kR68, "Flush",
                             absl::StrCat("allocation ", alloc, " of ", info.owner,
                                          " destroyed before this Flush is still allocated "
                                          "after it (deferred-destruction queue not processed)"));
      }
    }
  }
  dev->quarantine.Check(dev, false);
}

}  // namespace cltrace::runtime
