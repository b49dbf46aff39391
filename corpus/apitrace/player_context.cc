// The apitrace player: the ID3D11DeviceContext methods: maps, setters, draws, copies, clears,
// queries, command lists.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "corpus/apitrace/internal/d3d11_names.h"
#include "corpus/apitrace/internal/player_impl.h"
#include "ddi/catalog.h"
#include "runtime/runtime.h"

namespace cltrace::apitrace::internal {

// ---- ID3D11DeviceContext ----------------------------------------------------------------------

namespace {

// A subresource index of `r`, and a box inside it (D3D11 drops such a call; the player refuses
// the capture, so no driver reads past what the program handed it).
absl::Status CheckSubresource(const Call& call, const runtime::Resource* r, uint32_t sub,
                              const D3D10_DDI_BOX* box) {
  const runtime::ResourceDesc& d = r->desc();
  const uint64_t mips = std::max(1u, d.mip_levels);
  const uint64_t count =
      mips * std::max(1u, d.array_size) * (d.dimension == D3D10DDIRESOURCE_TEXTURECUBE ? 6 : 1);
  if (sub >= count) {
    return Bad(call, absl::StrCat("subresource ", sub, " of a resource with ", count));
  }
  if (box == nullptr) return absl::OkStatus();
  const uint32_t mip = static_cast<uint32_t>(sub % mips);
  const bool buffer = d.dimension == D3D10DDIRESOURCE_BUFFER;
  const int64_t w = buffer ? d.width : std::max(1u, d.width >> mip);
  const int64_t h = buffer ? 1 : std::max(1u, d.height >> mip);
  const int64_t z = buffer ? 1 : std::max(1u, d.depth >> mip);
  if (box->left < 0 || box->top < 0 || box->front < 0 || box->right < box->left ||
      box->bottom < box->top || box->back < box->front || box->right > w || box->bottom > h ||
      box->back > z) {
    return Bad(call, "the box is not inside the subresource");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Player::MapCall(const Call& call, Obj* self) {
  absl::StatusOr<Obj*> res = Lookup(call, call.Arg("pResource"), ObjKind::kResource, false);
  if (!res.ok()) return res.status();
  runtime::Resource* r = As<runtime::Resource>(*res);
  absl::StatusOr<uint64_t> sub = Uint(call, "Subresource");
  if (!sub.ok()) return sub.status();
  if (absl::Status st = CheckSubresource(call, r, static_cast<uint32_t>(*sub), nullptr); !st.ok()) {
    return st;
  }
  if (call.Method() == "Unmap") {
    for (auto it = mappings_.begin(); it != mappings_.end();) {
      if (it->second.ctx == self->ctx && it->second.resource == r &&
          it->second.subresource == *sub) {
        it = mappings_.erase(it);
      } else {
        ++it;
      }
    }
    self->ctx->Unmap(r, static_cast<uint32_t>(*sub));
    return absl::OkStatus();
  }
  absl::StatusOr<uint32_t> type = Enum(call, call.Arg("MapType"), "MapType");
  if (!type.ok()) return type.status();
  absl::StatusOr<uint32_t> flags = Enum(call, call.Arg("MapFlags"), "MapFlags");
  if (!flags.ok()) return flags.status();
  if (*type < 1 || *type > 5) return Bad(call, "MapType out of range");
  runtime::MappedSubresource m;
  HRESULT hr =
      self->ctx->Map(r, static_cast<uint32_t>(*sub), static_cast<D3D10_DDI_MAP>(*type), *flags, &m);
  if (call.ret && call.ret->kind == Kind::kName && call.ret->text != "S_OK") {
    // The capture's Map failed (DXGI_ERROR_WAS_STILL_DRAWING with DO_NOT_WAIT...): no memcpy
    // or Unmap follows, so a map that succeeded here ends at once.
    if (hr == S_OK) {
      self->ctx->Unmap(r, static_cast<uint32_t>(*sub));
      Substitute(call, absl::StrCat("failed in the capture (", call.ret->text,
                                    "): the model's map succeeded and is unmapped at once"));
    }
    return absl::OkStatus();
  }
  const Value* out = Deref(call.Arg("pMappedResource"));
  const Value* p = FindField(out, "pData");
  std::optional<uint64_t> at = p == nullptr ? std::nullopt : Deref(p)->AsUint();
  if (!at || *at == 0) return absl::OkStatus();  // failed in the capture (no memcpy follows)
  const runtime::ResourceDesc& d = r->desc();
  Mapping mapping;
  mapping.size = d.width;
  mapping.capture_size = d.width;
  if (d.dimension != D3D10DDIRESOURCE_BUFFER) {
    const uint32_t mip = static_cast<uint32_t>(*sub % std::max(1u, d.mip_levels));
    uint64_t rows = std::max(1u, d.height >> mip);
    if (IsBlockCompressed(d.format)) rows = (rows + 3) / 4;  // rows of 4x4 blocks
    const uint64_t slices = std::max(1u, d.depth >> mip);
    mapping.row = m.row_pitch;
    mapping.depth = m.depth_pitch != 0 ? m.depth_pitch : static_cast<uint32_t>(m.row_pitch * rows);
    mapping.size = hr == S_OK ? uint64_t{mapping.depth} * slices : 0;
    absl::StatusOr<uint32_t> row = FieldEnum(call, out, "RowPitch", 0);
    absl::StatusOr<uint32_t> depth = FieldEnum(call, out, "DepthPitch", 0);
    if (!row.ok()) return row.status();
    if (!depth.ok()) return depth.status();
    mapping.capture_row = *row;
    mapping.capture_depth = *depth != 0 ? *depth : static_cast<uint32_t>(*row * rows);
    mapping.capture_size = uint64_t{mapping.capture_depth} * slices;
  }
  mapping.data = hr == S_OK ? static_cast<uint8_t*>(m.data) : nullptr;
  mapping.context = self;
  mapping.resource_obj = *res;
  mapping.ctx = self->ctx;
  mapping.resource = r;
  mapping.subresource = static_cast<uint32_t>(*sub);
  mappings_[*at] = mapping;
  return absl::OkStatus();
}

absl::Status Player::Setter(const Call& call, Obj* self, Stage stage, absl::string_view what) {
  runtime::DeviceContext* c = self->ctx;
  if (what == "SetShader") {
    const char* name = stage == Stage::kVS   ? "pVertexShader"
                       : stage == Stage::kPS ? "pPixelShader"
                       : stage == Stage::kGS ? "pGeometryShader"
                       : stage == Stage::kHS ? "pHullShader"
                       : stage == Stage::kDS ? "pDomainShader"
                                             : "pComputeShader";
    absl::StatusOr<Obj*> s = Lookup(call, call.Arg(name), ObjKind::kShader, true);
    if (!s.ok()) return s.status();
    std::vector<const Value*> instances = Elements(call.Arg("ppClassInstances"));
    if (instances.empty()) {
      c->SetShader(stage, As<runtime::Shader>(*s));
      return absl::OkStatus();
    }
    // Set*ShaderWithIfaces: the shader's interface slots take the instances in order (the
    // model reads no reflection: slot i uses function table i), and each instance's pointer
    // data says where its data is (CreateClassInstance's offsets; zero for GetClassInstance).
    if (instances.size() > 256) return Bad(call, "too many class instances");
    std::vector<uint32_t> interfaces(instances.size());
    std::vector<D3D11DDIARG_POINTERDATA> pointers(instances.size());
    for (size_t i = 0; i < instances.size(); ++i) {
      CLTRACE_TRY(inst, Lookup(call, instances[i], ObjKind::kClassInstance, true));
      interfaces[i] = static_cast<uint32_t>(i);
      pointers[i].Bits = *inst == nullptr ? 0 : (*inst)->pointer_data;
    }
    c->SetShaderWithInterfaces(stage, As<runtime::Shader>(*s),
                               static_cast<uint32_t>(instances.size()), interfaces.data(),
                               pointers.data());
    return absl::OkStatus();
  }
  absl::StatusOr<uint64_t> start = Uint(call, "StartSlot");
  if (!start.ok()) return start.status();
  auto objects = [&](const char* arg,
                     ObjKind kind) -> absl::StatusOr<std::vector<runtime::Object*>> {
    std::vector<runtime::Object*> out;
    for (const Value* e : Elements(call.Arg(arg))) {
      absl::StatusOr<Obj*> o = Lookup(call, e, kind, true);
      if (!o.ok()) return o.status();
      out.push_back(*o == nullptr ? nullptr : (*o)->rt);
    }
    if (out.size() > 128) return Bad(call, "too many slots");
    return out;
  };
  if (what == "SetConstantBuffers") {
    if (!Elements(call.Arg("pFirstConstant")).empty()) {
      return Skip(call, "constant-buffer offsets (11.1)");
    }
    auto list = objects("ppConstantBuffers", ObjKind::kResource);
    if (!list.ok()) return list.status();
    std::vector<runtime::Resource*> v;
    for (runtime::Object* o : *list) v.push_back(static_cast<runtime::Resource*>(o));
    c->SetConstantBuffers(stage, static_cast<uint32_t>(*start), static_cast<uint32_t>(v.size()),
                          v.data());
  } else if (what == "SetShaderResources") {
    auto list = objects("ppShaderResourceViews", ObjKind::kView);
    if (!list.ok()) return list.status();
    std::vector<runtime::View*> v;
    for (runtime::Object* o : *list) v.push_back(static_cast<runtime::View*>(o));
    c->SetShaderResources(stage, static_cast<uint32_t>(*start), static_cast<uint32_t>(v.size()),
                          v.data());
  } else {  // SetSamplers
    auto list = objects("ppSamplers", ObjKind::kSamplerState);
    if (!list.ok()) return list.status();
    std::vector<runtime::SamplerState*> v;
    for (runtime::Object* o : *list) v.push_back(static_cast<runtime::SamplerState*>(o));
    c->SetSamplers(stage, static_cast<uint32_t>(*start), static_cast<uint32_t>(v.size()), v.data());
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> Player::ArgEnum(const Call& call, const char* arg) {
  absl::StatusOr<const Value*> v = Arg(call, arg);
  if (!v.ok()) return v.status();
  return Enum(call, *v, arg);
}

absl::StatusOr<int32_t> Player::ArgInt(const Call& call, const char* arg) {
  absl::StatusOr<uint32_t> v = ArgEnum(call, arg);
  if (!v.ok()) return v.status();
  return static_cast<int32_t>(*v);
}

absl::StatusOr<Obj*> Player::ArgResource(const Call& call, const char* arg, bool null_ok) {
  return Lookup(call, call.Arg(arg), ObjKind::kResource, null_ok);
}

absl::StatusOr<Obj*> Player::ArgView(const Call& call, const char* arg) {
  return Lookup(call, call.Arg(arg), ObjKind::kView, false);
}

// Evaluates `expr` (an absl::StatusOr) into `var`; returns its status when it failed.

absl::Status Player::ArgBox(const Call& call, const char* arg, D3D10_DDI_BOX* box, bool* has_box) {
  const Value* b = Deref(call.Arg(arg));
  *has_box = b != nullptr && b->kind == Kind::kStruct;
  if (*has_box) {
    INT* fields[] = {&box->left, &box->top, &box->front, &box->right, &box->bottom, &box->back};
    const char* names[] = {"left", "top", "front", "right", "bottom", "back"};
    for (int k = 0; k < 6; ++k) {
      CLTRACE_TRY(v, FieldEnum(call, b, names[k], 0));
      *fields[k] = static_cast<INT>(*v);
    }
  }
  return absl::OkStatus();
}

absl::Status Player::ContextCall(const Call& call, Obj* self) {
  absl::string_view method = call.Method();
  // Per-stage methods: VSSetShader, PSSetConstantBuffers1, CSSetSamplers...
  static const std::pair<const char*, Stage> kStages[] = {{"VS", Stage::kVS}, {"PS", Stage::kPS},
                                                          {"GS", Stage::kGS}, {"HS", Stage::kHS},
                                                          {"DS", Stage::kDS}, {"CS", Stage::kCS}};
  for (const auto& [prefix, stage] : kStages) {
    absl::string_view rest = method;
    if (!absl::ConsumePrefix(&rest, prefix)) continue;
    absl::ConsumeSuffix(&rest, "1");
    if (rest == "SetShader" || rest == "SetConstantBuffers" || rest == "SetShaderResources" ||
        rest == "SetSamplers") {
      return Setter(call, self, stage, rest);
    }
    if (absl::StartsWith(rest, "Get")) {
      for (const Value::Member& m : call.args) {
        if (absl::StartsWith(m.name, "pp")) AddRefOutputs(&m.value);
      }
      return absl::OkStatus();
    }
  }
  if (absl::StartsWith(method, "IAGet") || absl::StartsWith(method, "OMGet") ||
      absl::StartsWith(method, "RSGet") || absl::StartsWith(method, "SOGet") ||
      method == "GetPredication") {
    for (const Value::Member& m : call.args) {
      if (absl::StartsWith(m.name, "pp")) AddRefOutputs(&m.value);
    }
    return absl::OkStatus();
  }
  using Handler = absl::Status (Player::*)(const Call& call, Obj* self);
  static const auto* const kHandlers = new absl::flat_hash_map<absl::string_view, Handler>{
      {"IASetInputLayout", &Player::ContextInputAssembly},
      {"IASetVertexBuffers", &Player::ContextInputAssembly},
      {"IASetIndexBuffer", &Player::ContextInputAssembly},
      {"IASetPrimitiveTopology", &Player::ContextInputAssembly},
      {"SOSetTargets", &Player::ContextInputAssembly},
      {"CSSetUnorderedAccessViews", &Player::ContextInputAssembly},
      {"OMSetRenderTargets", &Player::ContextOutputMerger},
      {"OMSetRenderTargetsAndUnorderedAccessViews", &Player::ContextOutputMerger},
      {"OMSetBlendState", &Player::ContextOutputMerger},
      {"OMSetDepthStencilState", &Player::ContextOutputMerger},
      {"RSSetState", &Player::ContextRasterizer},
      {"RSSetViewports", &Player::ContextRasterizer},
      {"RSSetScissorRects", &Player::ContextRasterizer},
      {"SetPredication", &Player::ContextRasterizer},
      {"Draw", &Player::ContextDraw},
      {"DrawIndexed", &Player::ContextDraw},
      {"DrawInstanced", &Player::ContextDraw},
      {"DrawIndexedInstanced", &Player::ContextDraw},
      {"DrawAuto", &Player::ContextDraw},
      {"DrawInstancedIndirect", &Player::ContextDraw},
      {"DrawIndexedInstancedIndirect", &Player::ContextDraw},
      {"DispatchIndirect", &Player::ContextDraw},
      {"Dispatch", &Player::ContextDraw},
      {"CopyResource", &Player::ContextCopy},
      {"CopySubresourceRegion", &Player::ContextCopy},
      {"CopySubresourceRegion1", &Player::ContextCopy},
      {"CopyStructureCount", &Player::ContextCopy},
      {"ResolveSubresource", &Player::ContextCopy},
      {"UpdateSubresource", &Player::ContextUpdate},
      {"UpdateSubresource1", &Player::ContextUpdate},
      {"ClearRenderTargetView", &Player::ContextClear},
      {"ClearDepthStencilView", &Player::ContextClear},
      {"ClearUnorderedAccessViewUint", &Player::ContextClear},
      {"ClearUnorderedAccessViewFloat", &Player::ContextClear},
      {"GenerateMips", &Player::ContextClear},
      {"Map", &Player::MapCall},
      {"Unmap", &Player::MapCall},
      {"Begin", &Player::ContextQuery},
      {"End", &Player::ContextQuery},
      {"GetData", &Player::ContextQuery},
      {"ClearState", &Player::ContextCommandList},
      {"Flush", &Player::ContextCommandList},
      {"FinishCommandList", &Player::ContextCommandList},
      {"ExecuteCommandList", &Player::ContextCommandList},
  };
  auto it = kHandlers->find(method);
  if (it == kHandlers->end()) return Skip(call, "not implemented");
  return (this->*(it->second))(call, self);
}

absl::Status Player::ContextInputAssembly(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  if (method == "IASetInputLayout") {
    CLTRACE_TRY(l, Lookup(call, call.Arg("pInputLayout"), ObjKind::kInputLayout, true));
    c->IASetInputLayout(As<runtime::InputLayout>(*l));
  } else if (method == "IASetVertexBuffers") {
    CLTRACE_TRY(start, ArgEnum(call, "StartSlot"));
    std::vector<runtime::Resource*> buffers;
    std::vector<uint32_t> strides, offsets;
    for (const Value* e : Elements(call.Arg("ppVertexBuffers"))) {
      CLTRACE_TRY(b, Lookup(call, e, ObjKind::kResource, true));
      buffers.push_back(As<runtime::Resource>(*b));
    }
    for (const Value* e : Elements(call.Arg("pStrides"))) {
      CLTRACE_TRY(s, U32(call, e, "pStrides"));
      strides.push_back(*s);
    }
    for (const Value* e : Elements(call.Arg("pOffsets"))) {
      CLTRACE_TRY(s, U32(call, e, "pOffsets"));
      offsets.push_back(*s);
    }
    if (buffers.size() > 32) return Bad(call, "too many vertex buffers");
    strides.resize(buffers.size());
    offsets.resize(buffers.size());
    c->IASetVertexBuffers(*start, static_cast<uint32_t>(buffers.size()), buffers.data(),
                          strides.data(), offsets.data());
  } else if (method == "IASetIndexBuffer") {
    CLTRACE_TRY(b, ArgResource(call, "pIndexBuffer", true));
    CLTRACE_TRY(format, ArgEnum(call, "Format"));
    CLTRACE_TRY(offset, ArgEnum(call, "Offset"));
    c->IASetIndexBuffer(As<runtime::Resource>(*b), *format, *offset);
  } else if (method == "IASetPrimitiveTopology") {
    CLTRACE_TRY(t, ArgEnum(call, "Topology"));
    c->IASetPrimitiveTopology(static_cast<D3D10_DDI_PRIMITIVE_TOPOLOGY>(*t));
  } else if (method == "SOSetTargets") {
    std::vector<runtime::Resource*> buffers;
    std::vector<uint32_t> offsets;
    for (const Value* e : Elements(call.Arg("ppSOTargets"))) {
      CLTRACE_TRY(b, Lookup(call, e, ObjKind::kResource, true));
      buffers.push_back(As<runtime::Resource>(*b));
    }
    for (const Value* e : Elements(call.Arg("pOffsets"))) {
      CLTRACE_TRY(n, U32(call, e, "pOffsets"));
      offsets.push_back(*n);
    }
    if (buffers.size() > 4) return Bad(call, "more than 4 stream-output targets");
    offsets.resize(buffers.size(), 0);
    c->SOSetTargets(static_cast<uint32_t>(buffers.size()), buffers.data(), offsets.data());
  } else if (method == "CSSetUnorderedAccessViews") {
    CLTRACE_TRY(start, ArgEnum(call, "StartSlot"));
    std::vector<runtime::View*> views;
    std::vector<uint32_t> counts;
    for (const Value* e : Elements(call.Arg("ppUnorderedAccessViews"))) {
      CLTRACE_TRY(v, Lookup(call, e, ObjKind::kView, true));
      views.push_back(As<runtime::View>(*v));
    }
    for (const Value* e : Elements(call.Arg("pUAVInitialCounts"))) {
      CLTRACE_TRY(n, U32(call, e, "pUAVInitialCounts"));
      counts.push_back(*n);
    }
    if (views.size() > 64) return Bad(call, "too many views");
    counts.resize(views.size(), 0xffffffffu);
    c->CSSetUnorderedAccessViews(*start, static_cast<uint32_t>(views.size()), views.data(),
                                 counts.data());
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

absl::Status Player::ContextOutputMerger(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  auto views = [&](const char* arg, size_t max) -> absl::StatusOr<std::vector<runtime::View*>> {
    std::vector<runtime::View*> out;
    for (const Value* e : Elements(call.Arg(arg))) {
      CLTRACE_TRY(v, Lookup(call, e, ObjKind::kView, true));
      out.push_back(As<runtime::View>(*v));
    }
    if (out.size() > max) return Bad(call, absl::StrCat("more than ", max, " views in ", arg));
    return out;
  };
  if (method == "OMSetRenderTargetsAndUnorderedAccessViews") {
    CLTRACE_TRY(rtv_count, ArgEnum(call, "NumRTVs"));
    CLTRACE_TRY(uav_count, ArgEnum(call, "NumUAVs"));
    CLTRACE_TRY(rtvs, views("ppRenderTargetViews", 8));
    CLTRACE_TRY(dsv, Lookup(call, call.Arg("pDepthStencilView"), ObjKind::kView, true));
    CLTRACE_TRY(uavs, views("ppUnorderedAccessViews", 8));
    uint32_t start = 0;
    std::vector<uint32_t> counts;
    const bool keep_uavs = *uav_count == runtime::DeviceContext::kKeepUnorderedAccessViews;
    if (!keep_uavs) {
      CLTRACE_TRY(s, ArgEnum(call, "UAVStartSlot"));
      start = *s;
      for (const Value* e : Elements(call.Arg("pUAVInitialCounts"))) {
        CLTRACE_TRY(n, U32(call, e, "pUAVInitialCounts"));
        counts.push_back(*n);
      }
      if (start > 8 || *uav_count > 8 - start) return Bad(call, "UAV slots past slot 7");
      uavs->resize(*uav_count, nullptr);  // NULL entries (or no array) unbind
      if (!counts.empty()) counts.resize(*uav_count, 0xffffffffu);
    }
    const bool keep_rtvs = *rtv_count == runtime::DeviceContext::kKeepRenderTargets;
    c->OMSetRenderTargetsAndUnorderedAccessViews(
        keep_rtvs ? *rtv_count : static_cast<uint32_t>(rtvs->size()), rtvs->data(),
        As<runtime::View>(*dsv), start,
        keep_uavs ? *uav_count : static_cast<uint32_t>(uavs->size()), uavs->data(),
        counts.empty() ? nullptr : counts.data());
  } else if (method == "OMSetRenderTargets") {
    CLTRACE_TRY(rtvs, views("ppRenderTargetViews", 8));
    CLTRACE_TRY(dsv, Lookup(call, call.Arg("pDepthStencilView"), ObjKind::kView, true));
    c->OMSetRenderTargets(static_cast<uint32_t>(rtvs->size()), rtvs->data(),
                          As<runtime::View>(*dsv));
  } else if (method == "OMSetBlendState") {
    CLTRACE_TRY(s, Lookup(call, call.Arg("pBlendState"), ObjKind::kBlendState, true));
    float factor[4] = {1, 1, 1, 1};
    std::vector<const Value*> f = Elements(call.Arg("BlendFactor"));
    for (size_t i = 0; i < 4 && i < f.size(); ++i) {
      CLTRACE_TRY(v, Float(call, f[i], "BlendFactor"));
      factor[i] = static_cast<float>(*v);
    }
    CLTRACE_TRY(mask, ArgEnum(call, "SampleMask"));
    c->OMSetBlendState(As<runtime::BlendState>(*s), factor, *mask);
  } else if (method == "OMSetDepthStencilState") {
    CLTRACE_TRY(s, Lookup(call, call.Arg("pDepthStencilState"), ObjKind::kDepthStencilState, true));
    CLTRACE_TRY(ref, ArgEnum(call, "StencilRef"));
    c->OMSetDepthStencilState(As<runtime::DepthStencilState>(*s), *ref);
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

absl::Status Player::ContextRasterizer(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  if (method == "RSSetState") {
    CLTRACE_TRY(s, Lookup(call, call.Arg("pRasterizerState"), ObjKind::kRasterizerState, true));
    c->RSSetState(As<runtime::RasterizerState>(*s));
  } else if (method == "RSSetViewports") {
    std::vector<D3D10_DDI_VIEWPORT> vps;
    for (const Value* e : Elements(call.Arg("pViewports"))) {
      D3D10_DDI_VIEWPORT vp{};
      float* fields[] = {&vp.TopLeftX, &vp.TopLeftY, &vp.Width,
                         &vp.Height,   &vp.MinDepth, &vp.MaxDepth};
      const char* names[] = {"TopLeftX", "TopLeftY", "Width", "Height", "MinDepth", "MaxDepth"};
      for (int k = 0; k < 6; ++k) {
        const Value* f = FindField(e, names[k]);
        if (f == nullptr) continue;
        CLTRACE_TRY(v, Float(call, f, names[k]));
        *fields[k] = static_cast<float>(*v);
      }
      vps.push_back(vp);
    }
    if (vps.size() > 16) return Bad(call, "more than 16 viewports");
    c->RSSetViewports(static_cast<uint32_t>(vps.size()), vps.data());
  } else if (method == "RSSetScissorRects") {
    std::vector<D3D10_DDI_RECT> rects;
    for (const Value* e : Elements(call.Arg("pRects"))) {
      D3D10_DDI_RECT r{};
      LONG* fields[] = {&r.left, &r.top, &r.right, &r.bottom};
      const char* names[] = {"left", "top", "right", "bottom"};
      for (int k = 0; k < 4; ++k) {
        const Value* f = FindField(e, names[k]);
        if (f == nullptr) continue;
        CLTRACE_TRY(v, U32(call, f, names[k]));
        *fields[k] = static_cast<LONG>(static_cast<int32_t>(*v));
      }
      rects.push_back(r);
    }
    if (rects.size() > 16) return Bad(call, "more than 16 rectangles");
    c->RSSetScissorRects(static_cast<uint32_t>(rects.size()), rects.data());
  } else if (method == "SetPredication") {
    CLTRACE_TRY(q, Lookup(call, call.Arg("pPredicate"), ObjKind::kQuery, true));
    CLTRACE_TRY(value, ArgEnum(call, "PredicateValue"));
    c->SetPredication(As<runtime::Query>(*q), *value ? TRUE : FALSE);
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

absl::Status Player::ContextDraw(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  if (method == "Draw") {
    CLTRACE_TRY(n, ArgEnum(call, "VertexCount"));
    CLTRACE_TRY(start, ArgEnum(call, "StartVertexLocation"));
    c->Draw(*n, *start);
  } else if (method == "DrawIndexed") {
    CLTRACE_TRY(n, ArgEnum(call, "IndexCount"));
    CLTRACE_TRY(start, ArgEnum(call, "StartIndexLocation"));
    CLTRACE_TRY(base, ArgInt(call, "BaseVertexLocation"));
    c->DrawIndexed(*n, *start, *base);
  } else if (method == "DrawInstanced") {
    CLTRACE_TRY(n, ArgEnum(call, "VertexCountPerInstance"));
    CLTRACE_TRY(instances, ArgEnum(call, "InstanceCount"));
    CLTRACE_TRY(start, ArgEnum(call, "StartVertexLocation"));
    CLTRACE_TRY(first, ArgEnum(call, "StartInstanceLocation"));
    c->DrawInstanced(*n, *instances, *start, *first);
  } else if (method == "DrawIndexedInstanced") {
    CLTRACE_TRY(n, ArgEnum(call, "IndexCountPerInstance"));
    CLTRACE_TRY(instances, ArgEnum(call, "InstanceCount"));
    CLTRACE_TRY(start, ArgEnum(call, "StartIndexLocation"));
    CLTRACE_TRY(base, ArgInt(call, "BaseVertexLocation"));
    CLTRACE_TRY(first, ArgEnum(call, "StartInstanceLocation"));
    c->DrawIndexedInstanced(*n, *instances, *start, *base, *first);
  } else if (method == "DrawAuto") {
    c->DrawAuto();
  } else if (method == "DrawInstancedIndirect" || method == "DrawIndexedInstancedIndirect" ||
             method == "DispatchIndirect") {
    CLTRACE_TRY(b, ArgResource(call, "pBufferForArgs", false));
    CLTRACE_TRY(offset, ArgEnum(call, "AlignedByteOffsetForArgs"));
    runtime::Resource* r = As<runtime::Resource>(*b);
    if (method == "DrawInstancedIndirect")
      c->DrawInstancedIndirect(r, *offset);
    else if (method == "DrawIndexedInstancedIndirect")
      c->DrawIndexedInstancedIndirect(r, *offset);
    else
      c->DispatchIndirect(r, *offset);
  } else if (method == "Dispatch") {
    CLTRACE_TRY(x, ArgEnum(call, "ThreadGroupCountX"));
    CLTRACE_TRY(y, ArgEnum(call, "ThreadGroupCountY"));
    CLTRACE_TRY(z, ArgEnum(call, "ThreadGroupCountZ"));
    c->Dispatch(*x, *y, *z);
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

absl::Status Player::ContextCopy(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  if (method == "CopyResource") {
    CLTRACE_TRY(dst, ArgResource(call, "pDstResource", false));
    CLTRACE_TRY(src, ArgResource(call, "pSrcResource", false));
    c->CopyResource(As<runtime::Resource>(*dst), As<runtime::Resource>(*src));
  } else if (method == "CopySubresourceRegion" || method == "CopySubresourceRegion1") {
    if (method == "CopySubresourceRegion1") {
      CLTRACE_TRY(flags, ArgEnum(call, "CopyFlags"));
      if (*flags != 0) return Skip(call, "copy flags (11.1)");
    }
    CLTRACE_TRY(dst, ArgResource(call, "pDstResource", false));
    CLTRACE_TRY(dst_sub, ArgEnum(call, "DstSubresource"));
    CLTRACE_TRY(x, ArgEnum(call, "DstX"));
    CLTRACE_TRY(y, ArgEnum(call, "DstY"));
    CLTRACE_TRY(z, ArgEnum(call, "DstZ"));
    CLTRACE_TRY(src, ArgResource(call, "pSrcResource", false));
    CLTRACE_TRY(src_sub, ArgEnum(call, "SrcSubresource"));
    D3D10_DDI_BOX box{};
    bool has_box = false;
    if (absl::Status st = ArgBox(call, "pSrcBox", &box, &has_box); !st.ok()) return st;
    if (absl::Status st = CheckSubresource(call, As<runtime::Resource>(*dst), *dst_sub, nullptr);
        !st.ok()) {
      return st;
    }
    if (absl::Status st =
            CheckSubresource(call, As<runtime::Resource>(*src), *src_sub, has_box ? &box : nullptr);
        !st.ok()) {
      return st;
    }
    c->CopySubresourceRegion(As<runtime::Resource>(*dst), *dst_sub, *x, *y, *z,
                             As<runtime::Resource>(*src), *src_sub, has_box ? &box : nullptr);
  } else if (method == "CopyStructureCount") {
    CLTRACE_TRY(dst, ArgResource(call, "pDstBuffer", false));
    CLTRACE_TRY(offset, ArgEnum(call, "DstAlignedByteOffset"));
    CLTRACE_TRY(src, ArgView(call, "pSrcView"));
    c->CopyStructureCount(As<runtime::Resource>(*dst), *offset, As<runtime::View>(*src));
  } else if (method == "ResolveSubresource") {
    CLTRACE_TRY(dst, ArgResource(call, "pDstResource", false));
    CLTRACE_TRY(dst_sub, ArgEnum(call, "DstSubresource"));
    CLTRACE_TRY(src, ArgResource(call, "pSrcResource", false));
    CLTRACE_TRY(src_sub, ArgEnum(call, "SrcSubresource"));
    CLTRACE_TRY(format, ArgEnum(call, "Format"));
    c->ResolveSubresource(As<runtime::Resource>(*dst), *dst_sub, As<runtime::Resource>(*src),
                          *src_sub, static_cast<DXGI_FORMAT>(*format));
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

absl::Status Player::ContextUpdate(const Call& call, Obj* self) {
  if (call.Method() == "UpdateSubresource1") {
    CLTRACE_TRY(flags, ArgEnum(call, "CopyFlags"));
    if (*flags != 0) return Skip(call, "copy flags (11.1)");
  }
  CLTRACE_TRY(dst, ArgResource(call, "pDstResource", false));
  CLTRACE_TRY(sub, ArgEnum(call, "DstSubresource"));
  CLTRACE_TRY(pitch, ArgEnum(call, "SrcRowPitch"));
  CLTRACE_TRY(slice, ArgEnum(call, "SrcDepthPitch"));
  runtime::Resource* r = As<runtime::Resource>(*dst);
  D3D10_DDI_BOX box{};
  bool has_box = false;
  if (absl::Status st = ArgBox(call, "pDstBox", &box, &has_box); !st.ok()) return st;
  if (absl::Status st = CheckSubresource(call, r, *sub, has_box ? &box : nullptr); !st.ok()) {
    return st;
  }
  // What the driver may read: the whole subresource at the given pitches (an upper bound).
  const runtime::ResourceDesc& d = r->desc();
  const uint64_t need =
      d.dimension == D3D10DDIRESOURCE_BUFFER
          ? d.width
          : uint64_t{d.depth} *
                std::max<uint64_t>(
                    *slice, uint64_t{d.height} * std::max<uint64_t>(*pitch, d.width * 16ull));
  if (need > (uint64_t{1} << 30)) return Bad(call, "update larger than 1 GiB");
  CLTRACE_TRY(bytes, Bytes(call, call.Arg("pSrcData"), need));
  self->ctx->UpdateSubresource(r, *sub, has_box ? &box : nullptr, bytes->data(), *pitch, *slice);
  return absl::OkStatus();
}

absl::Status Player::ContextClear(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  if (method == "ClearRenderTargetView") {
    CLTRACE_TRY(v, ArgView(call, "pRenderTargetView"));
    float color[4] = {};
    std::vector<const Value*> f = Elements(call.Arg("ColorRGBA"));
    for (size_t i = 0; i < 4 && i < f.size(); ++i) {
      CLTRACE_TRY(x, Float(call, f[i], "ColorRGBA"));
      color[i] = static_cast<float>(*x);
    }
    c->ClearRenderTargetView(As<runtime::View>(*v), color);
  } else if (method == "ClearDepthStencilView") {
    CLTRACE_TRY(v, ArgView(call, "pDepthStencilView"));
    CLTRACE_TRY(flags, ArgEnum(call, "ClearFlags"));
    CLTRACE_TRY(depth, Float(call, call.Arg("Depth"), "Depth"));
    CLTRACE_TRY(stencil, ArgEnum(call, "Stencil"));
    c->ClearDepthStencilView(As<runtime::View>(*v), *flags, static_cast<float>(*depth),
                             static_cast<uint8_t>(*stencil));
  } else if (method == "ClearUnorderedAccessViewUint") {
    CLTRACE_TRY(v, ArgView(call, "pUnorderedAccessView"));
    std::vector<const Value*> f = Elements(call.Arg("Values"));
    uint32_t values[4] = {};
    for (size_t i = 0; i < 4 && i < f.size(); ++i) {
      CLTRACE_TRY(x, U32(call, f[i], "Values"));
      values[i] = *x;
    }
    c->ClearUnorderedAccessViewUint(As<runtime::View>(*v), values);
  } else if (method == "ClearUnorderedAccessViewFloat") {
    CLTRACE_TRY(v, ArgView(call, "pUnorderedAccessView"));
    std::vector<const Value*> f = Elements(call.Arg("Values"));
    float values[4] = {};
    for (size_t i = 0; i < 4 && i < f.size(); ++i) {
      CLTRACE_TRY(x, Float(call, f[i], "Values"));
      values[i] = static_cast<float>(*x);
    }
    c->ClearUnorderedAccessViewFloat(As<runtime::View>(*v), values);
  } else if (method == "GenerateMips") {
    CLTRACE_TRY(v, ArgView(call, "pShaderResourceView"));
    c->GenerateMips(As<runtime::View>(*v));
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

absl::Status Player::ContextQuery(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  CLTRACE_TRY(q, Lookup(call, call.Arg("pAsync"), ObjKind::kQuery, false));
  runtime::Query* query = As<runtime::Query>(*q);
  if (method == "Begin") {
    c->Begin(query);
  } else if (method == "End") {
    c->End(query);
  } else {
    CLTRACE_TRY(size, ArgEnum(call, "DataSize"));
    CLTRACE_TRY(flags, ArgEnum(call, "GetDataFlags"));
    uint64_t data[32] = {};
    if (*size > sizeof(data)) return Bad(call, "DataSize larger than any query's data");
    const Value* out = call.Arg("pData");
    const bool null = out == nullptr || out->kind == Kind::kNull;
    c->GetData(query, null ? nullptr : data, null ? 0 : *size, *flags);
  }
  return absl::OkStatus();
}

absl::Status Player::ContextCommandList(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::DeviceContext* c = self->ctx;
  if (method == "ClearState") {
    c->ClearState();
  } else if (method == "Flush") {
    c->Flush();
  } else if (method == "FinishCommandList") {
    CLTRACE_TRY(restore, ArgEnum(call, "RestoreDeferredContextState"));
    CLTRACE_TRY(key, OutKey(call, "ppCommandList"));
    runtime::CommandList* cl = nullptr;
    HRESULT hr = c->FinishCommandList(*restore ? TRUE : FALSE, *key == 0 ? nullptr : &cl);
    if (hr != S_OK || cl == nullptr) return absl::OkStatus();
    auto obj = std::make_shared<Obj>();
    obj->kind = ObjKind::kCommandList;
    obj->dev = self->dev;
    obj->rt = cl;
    if (absl::Status s = BindNew(call, call.Arg("ppCommandList"), std::move(obj)); !s.ok()) {
      cl->Release();
      return s;
    }
  } else if (method == "ExecuteCommandList") {
    if (const Value* v = call.Arg("pCommandList");
        r40_armed_ && v != nullptr && Deref(v)->AsUint() == r40_key_ && !keys_.contains(r40_key_) &&
        R40Executes() > r40_before_) {
      r40_armed_ = false;
      Substitute(call,
                 absl::StrCat("executes the command list released at line ", r40_release_line_,
                              ": issued at that Release by the runtime model's R40 "
                              "misuse mode"));
      return absl::OkStatus();
    }
    CLTRACE_TRY(l, Lookup(call, call.Arg("pCommandList"), ObjKind::kCommandList, false));
    CLTRACE_TRY(restore, ArgEnum(call, "RestoreContextState"));
    c->ExecuteCommandList(As<runtime::CommandList>(*l), *restore ? TRUE : FALSE);
  } else {
    return Skip(call, "not implemented");
  }
  return absl::OkStatus();
}

#undef CLTRACE_TRY

}  // namespace cltrace::apitrace::internal
