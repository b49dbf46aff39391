// The apitrace player: device, swap chain, resource, view, shader and state creation: the methods
// of ID3D11Device and IDXGISwapChain.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "corpus/apitrace/internal/d3d11_names.h"
#include "corpus/apitrace/internal/player_impl.h"
#include "ddi/catalog.h"
#include "format/content.h"
#include "runtime/runtime.h"

namespace cltrace::apitrace::internal {

absl::Status Player::CreateDevice(const Call& call, bool with_swap_chain) {
  if (call.ret && call.ret->kind == Kind::kName && call.ret->text != "S_OK" &&
      call.ret->text != "S_FALSE") {
    return absl::OkStatus();  // it failed in the capture: the program went on without it
  }
  absl::StatusOr<uint64_t> device_key = OutKey(call, "ppDevice");
  if (!device_key.ok()) return device_key.status();
  if (*device_key == 0) return absl::OkStatus();  // a feature-level probe
  runtime::RuntimeOptions ro = options_.runtime;
  if (const Value* flags = call.Arg("Flags")) {
    absl::StatusOr<uint32_t> f = Enum(call, flags, "Flags");
    if (!f.ok()) return f.status();
    ro.create_device_flags |= *f & D3D11DDI_CREATEDEVICE_FLAG_SINGLETHREADED;
  }
  if (r40_key_ != 0 && devices_.empty()) {
    ro.misuse = runtime::Misuse::kR40;
    r40_armed_ = true;
  }
  auto rec = std::make_unique<DeviceRec>();
  HRESULT hr = runtime::Device::Create(ro, &rec->device);
  if (hr != S_OK || rec->device == nullptr) {
    return absl::InternalError(absl::StrCat("line ", call.line,
                                            ": the runtime model cannot create a device (0x",
                                            absl::Hex(static_cast<uint32_t>(hr)), ")"));
  }
  DeviceRec* d = rec.get();
  devices_.push_back(std::move(rec));
  auto device = std::make_shared<Obj>();
  device->kind = ObjKind::kDevice;
  device->dev = d;
  d->device_obj = device.get();
  Obj* device_obj = device.get();
  if (absl::Status s = BindNew(call, call.Arg("ppDevice"), std::move(device)); !s.ok()) return s;

  auto ic = std::make_shared<Obj>();
  ic->kind = ObjKind::kContext;
  ic->dev = d;
  ic->ctx = d->device->GetImmediateContext();
  d->ic_obj = ic.get();
  const Value* ic_out = call.Arg("ppImmediateContext");
  if (ic_out != nullptr && Deref(ic_out)->AsUint().value_or(0) != 0) {
    if (absl::Status s = BindNew(call, ic_out, ic); !s.ok()) return s;
  } else {
    ic->refs = 0;  // reachable later through GetImmediateContext
    objects_.push_back(ic);
  }
  if (with_swap_chain) {
    return CreateSwapChain(call, device_obj, call.Arg("pSwapChainDesc"), call.Arg("ppSwapChain"));
  }
  return absl::OkStatus();
}

absl::Status Player::CreateSwapChain(const Call& call, Obj* device, const Value* desc,
                                     const Value* out) {
  if (call.ret && call.ret->kind == Kind::kName && call.ret->text != "S_OK") {
    return absl::OkStatus();
  }
  if (out == nullptr || Deref(out)->AsUint().value_or(0) == 0) return absl::OkStatus();
  desc = Deref(desc);
  if (desc == nullptr || desc->kind != Kind::kStruct) return Bad(call, "no swap-chain description");
  const Value* mode = desc->Field("BufferDesc");
  const Value* geometry = mode != nullptr ? mode : desc;  // DXGI_SWAP_CHAIN_DESC1: flat
  runtime::ResourceDesc rd;
  rd.dimension = D3D10DDIRESOURCE_TEXTURE2D;
  absl::StatusOr<uint32_t> width = FieldEnum(call, geometry, "Width", 0);
  absl::StatusOr<uint32_t> height = FieldEnum(call, geometry, "Height", 0);
  absl::StatusOr<uint32_t> format = FieldEnum(call, geometry, "Format", 28);
  absl::StatusOr<uint32_t> count = FieldEnum(call, desc, "BufferCount", 1);
  absl::StatusOr<uint32_t> usage = FieldEnum(call, desc, "BufferUsage", 0x20);
  for (const auto* s : {&width, &height, &format, &count, &usage}) {
    if (!s->ok()) return s->status();
  }
  if (*count == 0 || *count > 16) return Bad(call, "BufferCount out of range");
  rd.width = *width == 0 ? 64 : *width;  // 0: the window's size, which the capture does not hold
  rd.height = *height == 0 ? 64 : *height;
  rd.format = *format;
  rd.bind_flags = (*usage & (D3D10_DDI_BIND_SHADER_RESOURCE | D3D10_DDI_BIND_RENDER_TARGET |
                             D3D11_DDI_BIND_UNORDERED_ACCESS)) |
                  D3D10_DDI_BIND_PRESENT;
  auto chain = std::make_shared<Obj>();
  chain->kind = ObjKind::kSwapChain;
  chain->dev = device->dev;
  chain->buffer_desc = rd;
  if (absl::Status s = MakeBackBuffers(call, chain.get(), *count); !s.ok()) return s;
  return BindNew(call, out, std::move(chain));
}

absl::Status Player::MakeBackBuffers(const Call& call, Obj* chain, uint32_t count) {
  for (runtime::Resource* r : chain->buffers) r->Release();
  chain->buffers.clear();
  for (uint32_t i = 0; i < count; ++i) {
    runtime::Resource* r = nullptr;
    if (HRESULT hr = chain->dev->device->CreateResource(chain->buffer_desc, &r); hr != S_OK) {
      for (runtime::Resource* b : chain->buffers) b->Release();
      chain->buffers.clear();
      return Bad(call, absl::StrCat("the runtime model refused the back buffer (0x",
                                    absl::Hex(static_cast<uint32_t>(hr)), ")"));
    }
    chain->buffers.push_back(r);
  }
  return absl::OkStatus();
}

absl::Status Player::SwapChainCall(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::Device* device = self->dev->device;
  if (method == "GetBuffer") {
    absl::StatusOr<uint64_t> index = Uint(call, "Buffer");
    if (!index.ok()) return index.status();
    absl::StatusOr<uint64_t> key = OutKey(call, "ppSurface");
    if (!key.ok()) return key.status();
    if (*key == 0) return absl::OkStatus();
    // DISCARD / SEQUENTIAL chains hand out buffer 0 only; flip chains any.
    if (*index >= self->buffers.size()) return Bad(call, "Buffer out of range");
    auto it = keys_.find(*key);
    if (it != keys_.end()) {
      AddRef(it->second.get());
      return absl::OkStatus();
    }
    auto surface = std::make_shared<Obj>();
    surface->kind = ObjKind::kResource;
    surface->dev = self->dev;
    surface->rt = self->buffers[*index];
    surface->rt->AddRef();
    return BindNew(call, call.Arg("ppSurface"), std::move(surface));
  }
  if (method == "Present" || method == "Present1") {
    HRESULT hr = device->Present(self->buffers[0]);
    if (hr == S_OK && self->buffers.size() > 1) {
      device->RotateResourceIdentities(self->buffers.data(),
                                       static_cast<uint32_t>(self->buffers.size()));
    }
    return absl::OkStatus();
  }
  if (method == "ResizeBuffers" || method == "ResizeBuffers1") {
    if (call.ret && call.ret->kind == Kind::kName && call.ret->text != "S_OK") {
      return absl::OkStatus();  // refused in the capture (back buffers still referenced)
    }
    absl::StatusOr<uint64_t> count = Uint(call, "BufferCount");
    absl::StatusOr<uint64_t> width = Uint(call, "Width");
    absl::StatusOr<uint64_t> height = Uint(call, "Height");
    absl::StatusOr<uint32_t> format = Enum(call, call.Arg("NewFormat"), "NewFormat");
    for (const auto* st : {&count, &width, &height}) {
      if (!st->ok()) return st->status();
    }
    if (!format.ok()) return format.status();
    if (*count > 16 || *width > 16384 || *height > 16384) return Bad(call, "size out of range");
    // Zero keeps the current value (the window's size, the buffer count, the format).
    if (*width != 0) self->buffer_desc.width = static_cast<uint32_t>(*width);
    if (*height != 0) self->buffer_desc.height = static_cast<uint32_t>(*height);
    if (*format != 0) self->buffer_desc.format = *format;
    const uint32_t n =
        *count != 0 ? static_cast<uint32_t>(*count) : static_cast<uint32_t>(self->buffers.size());
    return MakeBackBuffers(call, self, n);
  }
  if (method == "ResizeTarget" || method == "GetDesc1" || method == "GetFullscreenDesc" ||
      method == "SetMaximumFrameLatency" || method == "GetMaximumFrameLatency" ||
      method == "GetFrameLatencyWaitableObject" || method == "SetSourceSize" ||
      method == "GetSourceSize" || method == "GetRestrictToOutput" || method == "SetColorSpace1" ||
      method == "CheckColorSpaceSupport" || method == "GetFullscreenState" ||
      method == "GetContainingOutput" || method == "GetFrameStatistics" ||
      method == "GetLastPresentCount" || method == "GetHwnd" || method == "GetBackgroundColor" ||
      method == "GetRotation" || method == "SetBackgroundColor" ||
      method == "GetCurrentBackBufferIndex") {
    return absl::OkStatus();
  }
  return Skip(call, "not implemented");
}

absl::Status Player::Memcpy(const Call& call) {
  absl::StatusOr<const Value*> dest = Arg(call, "dest");
  if (!dest.ok()) return dest.status();
  absl::StatusOr<const Value*> src = Arg(call, "src");
  if (!src.ok()) return src.status();
  absl::StatusOr<uint64_t> n = Uint(call, "n");
  if (!n.ok()) return n.status();
  std::optional<uint64_t> at = Deref(*dest)->AsUint();
  if (!at) return Bad(call, "dest is not a pointer");
  auto it = mappings_.upper_bound(*at);
  if (it == mappings_.begin()) return Bad(call, "dest is in no mapped range");
  --it;
  const Mapping& m = it->second;
  const uint64_t offset = *at - it->first;
  if (offset > m.capture_size || *n > m.capture_size - offset) {
    return Bad(call, absl::StrCat("copies ", *n, " bytes at offset ", offset, " of a ",
                                  m.capture_size, "-byte mapping"));
  }
  if (m.data == nullptr) return Skip(call, "the Map it writes into failed here");
  absl::StatusOr<std::string> bytes = Bytes(call, *src, *n);
  if (!bytes.ok()) return bytes.status();
  if (m.capture_row == m.row && m.capture_depth == m.depth) {
    std::memcpy(m.data + offset, bytes->data(), *n);  // same layout (and every buffer)
    return absl::OkStatus();
  }
  // Another driver's pitches: row by row into the model driver's layout; the padding past the
  // shorter row is dropped.
  for (uint64_t pos = offset, end = offset + *n; pos < end;) {
    const uint64_t slice = m.capture_depth != 0 ? pos / m.capture_depth : 0;
    const uint64_t in_slice = m.capture_depth != 0 ? pos % m.capture_depth : pos;
    const uint64_t row = m.capture_row != 0 ? in_slice / m.capture_row : 0;
    const uint64_t column = m.capture_row != 0 ? in_slice % m.capture_row : in_slice;
    const uint64_t chunk =
        std::min(end - pos, m.capture_row != 0 ? m.capture_row - column : end - pos);
    const uint64_t to = slice * m.depth + row * m.row + column;
    const uint64_t fits = column < m.row ? std::min<uint64_t>(chunk, m.row - column) : 0;
    if (row * m.row < m.depth && to < m.size) {
      std::memcpy(m.data + to, bytes->data() + (pos - offset), std::min(fits, m.size - to));
    }
    pos += chunk;
  }
  return absl::OkStatus();
}

// ---- ID3D11Device -------------------------------------------------------------------------

absl::Status Player::InitialData(const Call& call, const runtime::ResourceDesc& rd,
                                 std::vector<std::string>* bytes,
                                 std::vector<D3D10_DDIARG_SUBRESOURCE_UP>* up) {
  const std::vector<const Value*> initial = Elements(call.Arg("pInitialData"));
  if (initial.empty()) return absl::OkStatus();
  const uint32_t subresources =
      rd.mip_levels * rd.array_size * (rd.dimension == D3D10DDIRESOURCE_TEXTURECUBE ? 6 : 1);
  if (initial.size() < subresources) {
    return Bad(call, absl::StrCat("pInitialData has ", initial.size(), " entries for ",
                                  subresources, " subresources"));
  }
  format::ResourceShape shape;
  shape.dimension = rd.dimension;
  shape.format = rd.format;
  shape.width = rd.width;
  shape.height = rd.height;
  shape.depth = rd.depth;
  shape.mip_levels = rd.mip_levels;
  shape.array_size = rd.array_size;
  bytes->reserve(subresources);
  up->resize(subresources);
  for (uint32_t i = 0; i < subresources; ++i) {
    const Value* data = Deref(initial[i]);
    absl::StatusOr<uint32_t> pitch = FieldEnum(call, data, "SysMemPitch", 0);
    absl::StatusOr<uint32_t> slice = FieldEnum(call, data, "SysMemSlicePitch", 0);
    if (!pitch.ok()) return pitch.status();
    if (!slice.ok()) return slice.status();
    // The bytes the subresource's region spans at these pitches (format/content.h), or a
    // generous bound where the format has no known texel size.
    absl::StatusOr<format::RegionLayout> l =
        format::UploadLayout(shape, i, nullptr, *pitch, *slice);
    const uint64_t need =
        l.ok() ? l->Bytes()
               : uint64_t{rd.depth} *
                     std::max<uint64_t>(*slice, uint64_t{rd.height} *
                                                    std::max<uint64_t>(*pitch, rd.width * 16ull));
    if (need > (uint64_t{1} << 30)) return Bad(call, "initial data larger than 1 GiB");
    absl::StatusOr<std::string> region = Bytes(call, FindField(data, "pSysMem"), need);
    if (!region.ok()) return region.status();
    bytes->push_back(*std::move(region));
    (*up)[i].pSysMem = bytes->back().data();
    (*up)[i].SysMemPitch = *pitch;
    (*up)[i].SysMemSlicePitch = *slice;
  }
  return absl::OkStatus();
}

absl::Status Player::CreateResource(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  absl::StatusOr<const Value*> desc_arg = Arg(call, "pDesc");
  if (!desc_arg.ok()) {
    desc_arg = Arg(call, "pDesc1");
    if (!desc_arg.ok()) return desc_arg.status();
  }
  const Value* desc = Deref(*desc_arg);
  if (desc == nullptr || desc->kind != Kind::kStruct) return Bad(call, "pDesc is no structure");
  runtime::ResourceDesc rd;
  absl::StatusOr<uint32_t> usage = FieldEnum(call, desc, "Usage", 0);
  absl::StatusOr<uint32_t> bind = FieldEnum(call, desc, "BindFlags", 0);
  absl::StatusOr<uint32_t> cpu = FieldEnum(call, desc, "CPUAccessFlags", 0);
  absl::StatusOr<uint32_t> misc = FieldEnum(call, desc, "MiscFlags", 0);
  for (const auto* s : {&usage, &bind, &cpu, &misc}) {
    if (!s->ok()) return s->status();
  }
  rd.usage = static_cast<D3D10_DDI_RESOURCE_USAGE>(*usage & 3);
  // A number the capture printed for the bind flags is D3D11's: its UNORDERED_ACCESS is 0x80.
  rd.bind_flags = *bind;
  const Value* bind_value = FindField(desc, "BindFlags");
  if (bind_value != nullptr && Deref(bind_value)->kind == Kind::kInt && (*bind & 0x80)) {
    rd.bind_flags = (*bind & ~0x80u) | D3D11_DDI_BIND_UNORDERED_ACCESS;
  }
  rd.map_flags =
      (*cpu & 0x30000) ? ((*cpu & 0x20000) ? 1u : 0u) | ((*cpu & 0x10000) ? 2u : 0u) : *cpu;
  rd.misc_flags = *misc & 0x73;
  bool cube = (*misc & 0x4) != 0 && Deref(FindField(desc, "MiscFlags"))->kind == Kind::kInt;
  if (const Value* m = Deref(FindField(desc, "MiscFlags")); m != nullptr) {
    for (const std::string& n : m->names) cube = cube || absl::EndsWith(n, "TEXTURECUBE");
    cube = cube || (m->kind == Kind::kName && absl::EndsWith(m->text, "TEXTURECUBE"));
  }
  if (method == "CreateBuffer") {
    rd.dimension = D3D10DDIRESOURCE_BUFFER;
    absl::StatusOr<uint32_t> width = FieldEnum(call, desc, "ByteWidth", 0);
    absl::StatusOr<uint32_t> stride = FieldEnum(call, desc, "StructureByteStride", 0);
    if (!width.ok()) return width.status();
    if (!stride.ok()) return stride.status();
    rd.width = *width;
    rd.byte_stride = *stride;
  } else {
    rd.dimension = absl::StartsWith(method, "CreateTexture1D")   ? D3D10DDIRESOURCE_TEXTURE1D
                   : absl::StartsWith(method, "CreateTexture3D") ? D3D10DDIRESOURCE_TEXTURE3D
                   : cube                                        ? D3D10DDIRESOURCE_TEXTURECUBE
                                                                 : D3D10DDIRESOURCE_TEXTURE2D;
    absl::StatusOr<uint32_t> w = FieldEnum(call, desc, "Width", 1);
    absl::StatusOr<uint32_t> h = FieldEnum(call, desc, "Height", 1);
    absl::StatusOr<uint32_t> d = FieldEnum(call, desc, "Depth", 1);
    absl::StatusOr<uint32_t> mips = FieldEnum(call, desc, "MipLevels", 1);
    absl::StatusOr<uint32_t> array = FieldEnum(call, desc, "ArraySize", 1);
    absl::StatusOr<uint32_t> format = FieldEnum(call, desc, "Format", 0);
    for (const auto* s : {&w, &h, &d, &mips, &array, &format}) {
      if (!s->ok()) return s->status();
    }
    if (*w == 0 || *h == 0 || *d == 0 || *w > 16384 || *h > 16384 || *d > 2048 || *array > 2048) {
      return Bad(call, "texture size out of range");
    }
    rd.width = *w;
    rd.height = *h;
    rd.depth = *d;
    rd.mip_levels = *mips == 0 ? MipCount(*w, *h, *d) : *mips;
    rd.array_size = *array == 0 ? 1 : *array;
    if (cube) rd.array_size = std::max(1u, rd.array_size / 6);
    rd.format = *format;
  }
  runtime::Device* device = self->dev->device;
  absl::StatusOr<uint64_t> key =
      OutKey(call, method == "CreateBuffer"                      ? "ppBuffer"
                   : absl::StartsWith(method, "CreateTexture1D") ? "ppTexture1D"
                   : absl::StartsWith(method, "CreateTexture3D") ? "ppTexture3D"
                                                                 : "ppTexture2D");
  if (!key.ok()) return key.status();
  if (*key == 0) return absl::OkStatus();  // a parameter check (NULL output): no object
  // Initial data: one D3D11_SUBRESOURCE_DATA per subresource, handed to the driver as
  // CreateResource's pInitialDataUP (the bytes stay alive until the call returned).
  std::vector<std::string> initial_bytes;
  std::vector<D3D10_DDIARG_SUBRESOURCE_UP> initial_up;
  if (absl::Status s = InitialData(call, rd, &initial_bytes, &initial_up); !s.ok()) return s;
  runtime::Resource* r = nullptr;
  if (HRESULT hr = device->CreateResource(rd, initial_up.empty() ? nullptr : initial_up.data(), &r);
      hr != S_OK) {
    return Skip(call, "the runtime model refused the resource");
  }
  auto obj = std::make_shared<Obj>();
  obj->kind = ObjKind::kResource;
  obj->dev = self->dev;
  obj->rt = r;
  const Value* out = call.Arg(method == "CreateBuffer"                      ? "ppBuffer"
                              : absl::StartsWith(method, "CreateTexture1D") ? "ppTexture1D"
                              : absl::StartsWith(method, "CreateTexture3D") ? "ppTexture3D"
                                                                            : "ppTexture2D");
  if (absl::Status s = BindNew(call, out, obj); !s.ok()) {
    r->Release();
    return s;
  }
  return absl::OkStatus();
}

absl::Status Player::CreateView(const Call& call, Obj* self, ViewKind kind) {
  absl::StatusOr<const Value*> res_arg = Arg(call, "pResource");
  if (!res_arg.ok()) return res_arg.status();
  absl::StatusOr<Obj*> res = Lookup(call, *res_arg, ObjKind::kResource, false);
  if (!res.ok()) return res.status();
  runtime::Resource* r = As<runtime::Resource>(*res);
  const char* out_name = kind == ViewKind::kShaderResource ? "ppSRView"
                         : kind == ViewKind::kRenderTarget ? "ppRTView"
                         : kind == ViewKind::kDepthStencil ? "ppDepthStencilView"
                                                           : "ppUAView";
  const Value* out = call.Arg(out_name);
  if (out == nullptr) return Bad(call, absl::StrCat("argument ", out_name, " is missing"));
  if (Deref(out)->AsUint().value_or(0) == 0) return absl::OkStatus();
  runtime::ViewDesc vd;
  vd.format = r->desc().format;
  vd.dimension = r->desc().dimension;
  vd.num_elements = r->desc().width;
  const Value* desc = Deref(call.Arg("pDesc"));
  if (desc != nullptr && desc->kind == Kind::kStruct) {
    absl::StatusOr<uint32_t> format = FieldEnum(call, desc, "Format", 0);
    if (!format.ok()) return format.status();
    if (*format != 0) vd.format = *format;
    for (const char* f : {"FirstElement", "ElementOffset"}) {
      absl::StatusOr<uint32_t> v = FieldEnum(call, desc, f, 0);
      if (!v.ok()) return v.status();
      if (FindField(desc, f) != nullptr) vd.first_element = *v;
    }
    for (const char* f : {"NumElements", "ElementWidth"}) {
      absl::StatusOr<uint32_t> v = FieldEnum(call, desc, f, 0);
      if (!v.ok()) return v.status();
      if (FindField(desc, f) != nullptr) vd.num_elements = *v;
    }
    for (const char* f : {"MipSlice", "MostDetailedMip"}) {
      absl::StatusOr<uint32_t> v = FieldEnum(call, desc, f, 0);
      if (!v.ok()) return v.status();
      if (FindField(desc, f) != nullptr) vd.mip_slice = *v;
    }
  }
  runtime::View* v = nullptr;
  if (HRESULT hr = self->dev->device->CreateView(kind, r, vd, &v); hr != S_OK) {
    return Skip(call, "the runtime model refused the view");
  }
  auto obj = std::make_shared<Obj>();
  obj->kind = ObjKind::kView;
  obj->dev = self->dev;
  obj->rt = v;
  if (absl::Status s = BindNew(call, out, std::move(obj)); !s.ok()) {
    v->Release();
    return s;
  }
  return absl::OkStatus();
}

absl::Status Player::CreateShader(const Call& call, Obj* self, Stage stage) {
  static const char* const kOut[] = {"ppVertexShader", "ppPixelShader",  "ppGeometryShader",
                                     "ppHullShader",   "ppDomainShader", "ppComputeShader"};
  const Value* out = call.Arg(kOut[static_cast<int>(stage)]);
  if (out == nullptr)
    return Bad(call, absl::StrCat("argument ", kOut[static_cast<int>(stage)], " is missing"));
  if (Deref(out)->AsUint().value_or(0) == 0) return absl::OkStatus();
  if (const Value* linkage = call.Arg("pClassLinkage");
      linkage != nullptr && Deref(linkage)->AsUint().value_or(0) != 0) {
    // The linkage only collects the shader's class instances (D3D11 keeps them itself): the
    // shader is created as without one.
    CLTRACE_TRY(l, Lookup(call, linkage, ObjKind::kPlain, false));
    (void)l;
  }
  absl::StatusOr<const Value*> code_arg = Arg(call, "pShaderBytecode");
  if (!code_arg.ok()) return code_arg.status();
  absl::StatusOr<std::string> bytes = Bytes(call, *code_arg, 0);
  if (!bytes.ok()) return bytes.status();
  // The DDI takes the token stream of the DXBC container's SHDR/SHEX chunk.
  std::vector<uint32_t> tokens;
  const std::string& b = *bytes;
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, b.data() + at, 4);
    return v;
  };
  if (b.size() >= 32 && b.compare(0, 4, "DXBC") == 0) {
    const uint32_t chunks = u32(28);
    for (uint32_t i = 0; i < chunks && 32 + 4ull * i + 4 <= b.size(); ++i) {
      const uint32_t at = u32(32 + 4 * i);
      if (at > b.size() || b.size() - at < 8) break;
      const std::string fourcc = b.substr(at, 4);
      const uint32_t size = u32(at + 4);
      if ((fourcc != "SHDR" && fourcc != "SHEX") || size > b.size() - at - 8 || size < 8) continue;
      const uint32_t length = u32(at + 12);
      if (length < 2 || length * 4ull > size) return Bad(call, "malformed shader chunk");
      tokens.resize(length);
      std::memcpy(tokens.data(), b.data() + at + 8, length * 4ull);
      break;
    }
    if (tokens.empty()) return Bad(call, "bytecode without a SHDR/SHEX chunk");
  } else {
    // The bytes are not in the dump: a minimal program of the stage.
    tokens = {0x00050000u | static_cast<uint32_t>(stage), 2u};
  }
  runtime::Shader* shader = nullptr;
  HRESULT hr = S_OK;
  if (call.Method() == "CreateGeometryShaderWithStreamOutput") {
    // The declaration's entries in order: the register of an entry is its position (the output
    // signature is not parsed); a gap (no semantic name) writes no register.
    std::vector<D3D11DDIARG_STREAM_OUTPUT_DECLARATION_ENTRY> entries;
    for (const Value* e : Elements(call.Arg("pSODeclaration"))) {
      absl::StatusOr<uint32_t> stream = FieldEnum(call, e, "Stream", 0);
      absl::StatusOr<uint32_t> slot = FieldEnum(call, e, "OutputSlot", 0);
      absl::StatusOr<uint32_t> start = FieldEnum(call, e, "StartComponent", 0);
      absl::StatusOr<uint32_t> count = FieldEnum(call, e, "ComponentCount", 4);
      for (const auto* st : {&stream, &slot, &start, &count}) {
        if (!st->ok()) return st->status();
      }
      if (*start > 3 || *count > 4 - *start || *slot > 3 || *stream > 3) {
        return Bad(call, "a stream-output entry out of range");
      }
      const Value* semantic = FindField(e, "SemanticName");
      const bool gap = semantic == nullptr || Deref(semantic)->kind == Kind::kNull;
      D3D11DDIARG_STREAM_OUTPUT_DECLARATION_ENTRY entry{};
      entry.Stream = *stream;
      entry.OutputSlot = *slot;
      entry.RegisterIndex = gap ? 0xffffffffu : static_cast<UINT>(entries.size());
      entry.RegisterMask = static_cast<BYTE>(((1u << *count) - 1) << *start);
      entries.push_back(entry);
    }
    std::vector<uint32_t> strides;
    for (const Value* e : Elements(call.Arg("pBufferStrides"))) {
      absl::StatusOr<uint32_t> v = U32(call, e, "pBufferStrides");
      if (!v.ok()) return v.status();
      strides.push_back(*v);
    }
    absl::StatusOr<uint32_t> rasterized =
        call.Arg("RasterizedStream") == nullptr
            ? absl::StatusOr<uint32_t>(0u)
            : Enum(call, call.Arg("RasterizedStream"), "RasterizedStream");
    if (!rasterized.ok()) return rasterized.status();
    if (entries.size() > 128 || strides.size() > 4) return Bad(call, "too many entries");
    hr = self->dev->device->CreateGeometryShaderWithStreamOutput(
        tokens.data(), entries.data(), static_cast<uint32_t>(entries.size()), strides.data(),
        static_cast<uint32_t>(strides.size()), *rasterized, &shader);
  } else {
    hr = self->dev->device->CreateShader(stage, tokens.data(), &shader);
  }
  if (hr != S_OK || shader == nullptr) return Skip(call, "the runtime model refused the shader");
  auto obj = std::make_shared<Obj>();
  obj->kind = ObjKind::kShader;
  obj->dev = self->dev;
  obj->rt = shader;
  if (absl::Status s = BindNew(call, out, std::move(obj)); !s.ok()) {
    shader->Release();
    return s;
  }
  return absl::OkStatus();
}

uint32_t Player::DescReader::Get(const Value* s, absl::string_view name, uint32_t fallback) {
  absl::StatusOr<uint32_t> v = player->FieldEnum(call, s, name, fallback);
  if (!v.ok()) {
    if (bad.ok()) bad = v.status();
    return fallback;
  }
  return *v;
}

float Player::DescReader::GetF(const Value* s, absl::string_view name, float fallback) {
  const Value* f = FindField(s, name);
  if (f == nullptr) return fallback;
  absl::StatusOr<double> v = player->Float(call, f, name);
  if (!v.ok()) {
    if (bad.ok()) bad = v.status();
    return fallback;
  }
  return static_cast<float>(*v);
}

namespace {

// Whether the capture passed no place (or NULL) for the created object: nothing to create.
bool NoOutput(const Call& call, const char* out_name) {
  return Deref(call.Arg(out_name)) == nullptr ||
         Deref(call.Arg(out_name))->AsUint().value_or(0) == 0;
}

}  // namespace

absl::Status Player::BindCreated(const Call& call, Obj* self, HRESULT hr, runtime::Object* created,
                                 ObjKind kind, const char* out_name) {
  if (hr != S_OK || created == nullptr) {
    return Skip(call, absl::StrCat("the runtime model refused it (0x",
                                   absl::Hex(static_cast<uint32_t>(hr)), ")"));
  }
  auto obj = std::make_shared<Obj>();
  obj->kind = kind;
  obj->dev = self->dev;
  obj->rt = created;
  const Value* out = call.Arg(out_name);
  if (absl::Status s = BindNew(call, out, std::move(obj)); !s.ok()) {
    created->Release();
    return s;
  }
  return absl::OkStatus();
}

absl::Status Player::CreateState(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  // D3D11 hands out the existing state object for an identical description, without a DDI
  // call: the capture shows the same pointer again, which means one more reference.
  static const std::pair<const char*, ObjKind> kShared[] = {
      {"ppBlendState", ObjKind::kBlendState},
      {"ppDepthStencilState", ObjKind::kDepthStencilState},
      {"ppRasterizerState", ObjKind::kRasterizerState},
      {"ppSamplerState", ObjKind::kSamplerState}};
  for (const auto& [arg, shared_kind] : kShared) {
    const Value* v = call.Arg(arg);
    std::optional<uint64_t> key = v == nullptr ? std::nullopt : Deref(v)->AsUint();
    if (!key || *key == 0) continue;
    auto it = keys_.find(*key);
    if (it != keys_.end() && it->second->kind == shared_kind) {
      AddRef(it->second.get());
      return absl::OkStatus();
    }
  }
  if (method == "CreateInputLayout") return MakeInputLayout(call, self);
  if (absl::StartsWith(method, "CreateBlendState")) return MakeBlendState(call, self);
  if (method == "CreateDepthStencilState") return MakeDepthStencilState(call, self);
  if (absl::StartsWith(method, "CreateRasterizerState")) return MakeRasterizerState(call, self);
  if (method == "CreateSamplerState") return MakeSamplerState(call, self);
  if (method == "CreateQuery" || method == "CreatePredicate") return MakeQuery(call, self);
  if (absl::StartsWith(method, "CreateDeferredContext")) return MakeDeferredContext(call, self);
  return BindCreated(call, self, S_OK, nullptr, ObjKind::kPlain, "");
}

absl::Status Player::MakeInputLayout(const Call& call, Obj* self) {
  const char* out_name = "ppInputLayout";
  DescReader r{this, call};
  std::vector<D3D10DDIARG_INPUT_ELEMENT_DESC> elements;
  uint32_t next_offset[32] = {};
  for (const Value* e : Elements(call.Arg("pInputElementDescs"))) {
    D3D10DDIARG_INPUT_ELEMENT_DESC el{};
    el.InputSlot = r.Get(e, "InputSlot", 0) & 31;
    el.Format = r.Get(e, "Format", 0);
    el.AlignedByteOffset = r.Get(e, "AlignedByteOffset", 0xffffffffu);
    if (el.AlignedByteOffset == 0xffffffffu) el.AlignedByteOffset = next_offset[el.InputSlot];
    next_offset[el.InputSlot] = el.AlignedByteOffset + FormatBytes(el.Format);
    el.InputSlotClass = static_cast<D3D10_DDI_INPUT_CLASSIFICATION>(r.Get(e, "InputSlotClass", 0));
    el.InstanceDataStepRate = r.Get(e, "InstanceDataStepRate", 0);
    el.InputRegister = static_cast<UINT>(elements.size());
    elements.push_back(el);
  }
  if (!r.bad.ok()) return r.bad;
  if (elements.size() > 32) return Bad(call, "more than 32 input elements");
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::InputLayout* l = nullptr;
  HRESULT hr = self->dev->device->CreateInputLayout(elements.data(),
                                                    static_cast<uint32_t>(elements.size()), &l);
  return BindCreated(call, self, hr, l, ObjKind::kInputLayout, out_name);
}

absl::Status Player::MakeBlendState(const Call& call, Obj* self) {
  const char* out_name = "ppBlendState";
  DescReader r{this, call};
  const Value* d = Deref(call.Arg("pBlendStateDesc"));
  if (d == nullptr) d = Deref(call.Arg("pBlendDesc"));
  if (d == nullptr) return Bad(call, "no blend description");
  D3D10_1_DDI_BLEND_DESC bd{};
  bd.AlphaToCoverageEnable = r.Get(d, "AlphaToCoverageEnable", 0);
  bd.IndependentBlendEnable = r.Get(d, "IndependentBlendEnable", 0);
  std::vector<const Value*> targets = Elements(FindField(d, "RenderTarget"));
  for (size_t i = 0; i < 8; ++i) {
    const Value* t = i < targets.size() ? targets[i] : nullptr;
    auto& rt = bd.RenderTarget[i];
    if (t == nullptr) {
      rt = D3D10_DDI_RENDER_TARGET_BLEND_DESC1{FALSE,
                                               static_cast<D3D10_DDI_BLEND>(2),
                                               static_cast<D3D10_DDI_BLEND>(1),
                                               static_cast<D3D10_DDI_BLEND_OP>(1),
                                               static_cast<D3D10_DDI_BLEND>(2),
                                               static_cast<D3D10_DDI_BLEND>(1),
                                               static_cast<D3D10_DDI_BLEND_OP>(1),
                                               15};
      continue;
    }
    if (r.Get(t, "LogicOpEnable", 0) != 0) return Skip(call, "logic operations (11.1)");
    rt.BlendEnable = r.Get(t, "BlendEnable", 0);
    rt.SrcBlend = static_cast<D3D10_DDI_BLEND>(r.Get(t, "SrcBlend", 2));
    rt.DestBlend = static_cast<D3D10_DDI_BLEND>(r.Get(t, "DestBlend", 1));
    rt.BlendOp = static_cast<D3D10_DDI_BLEND_OP>(r.Get(t, "BlendOp", 1));
    rt.SrcBlendAlpha = static_cast<D3D10_DDI_BLEND>(r.Get(t, "SrcBlendAlpha", 2));
    rt.DestBlendAlpha = static_cast<D3D10_DDI_BLEND>(r.Get(t, "DestBlendAlpha", 1));
    rt.BlendOpAlpha = static_cast<D3D10_DDI_BLEND_OP>(r.Get(t, "BlendOpAlpha", 1));
    rt.RenderTargetWriteMask = static_cast<UINT8>(r.Get(t, "RenderTargetWriteMask", 15));
  }
  if (!r.bad.ok()) return r.bad;
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::BlendState* s = nullptr;
  HRESULT hr = self->dev->device->CreateBlendState(bd, &s);
  return BindCreated(call, self, hr, s, ObjKind::kBlendState, out_name);
}

absl::Status Player::MakeDepthStencilState(const Call& call, Obj* self) {
  const char* out_name = "ppDepthStencilState";
  DescReader r{this, call};
  const Value* d = Deref(call.Arg("pDepthStencilDesc"));
  if (d == nullptr) return Bad(call, "no depth-stencil description");
  D3D10_DDI_DEPTH_STENCIL_DESC dd{};
  dd.DepthEnable = r.Get(d, "DepthEnable", 1);
  dd.DepthWriteMask = static_cast<D3D10_DDI_DEPTH_WRITE_MASK>(r.Get(d, "DepthWriteMask", 1));
  dd.DepthFunc = static_cast<D3D10_DDI_COMPARISON_FUNC>(r.Get(d, "DepthFunc", 2));
  dd.StencilEnable = r.Get(d, "StencilEnable", 0);
  dd.FrontEnable = dd.StencilEnable;
  dd.BackEnable = dd.StencilEnable;
  dd.StencilReadMask = static_cast<UINT8>(r.Get(d, "StencilReadMask", 0xff));
  dd.StencilWriteMask = static_cast<UINT8>(r.Get(d, "StencilWriteMask", 0xff));
  for (auto [name, face] : {std::pair{"FrontFace", &dd.FrontFace}, {"BackFace", &dd.BackFace}}) {
    const Value* f = FindField(d, name);
    face->StencilFailOp = static_cast<D3D10_DDI_STENCIL_OP>(r.Get(f, "StencilFailOp", 1));
    face->StencilDepthFailOp = static_cast<D3D10_DDI_STENCIL_OP>(r.Get(f, "StencilDepthFailOp", 1));
    face->StencilPassOp = static_cast<D3D10_DDI_STENCIL_OP>(r.Get(f, "StencilPassOp", 1));
    face->StencilFunc = static_cast<D3D10_DDI_COMPARISON_FUNC>(r.Get(f, "StencilFunc", 8));
  }
  if (!r.bad.ok()) return r.bad;
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::DepthStencilState* s = nullptr;
  HRESULT hr = self->dev->device->CreateDepthStencilState(dd, &s);
  return BindCreated(call, self, hr, s, ObjKind::kDepthStencilState, out_name);
}

absl::Status Player::MakeRasterizerState(const Call& call, Obj* self) {
  const char* out_name = "ppRasterizerState";
  DescReader r{this, call};
  const Value* d = Deref(call.Arg("pRasterizerDesc"));
  if (d == nullptr) return Bad(call, "no rasterizer description");
  D3D10_DDI_RASTERIZER_DESC rd{};
  rd.FillMode = static_cast<D3D10_DDI_FILL_MODE>(r.Get(d, "FillMode", 3));
  rd.CullMode = static_cast<D3D10_DDI_CULL_MODE>(r.Get(d, "CullMode", 3));
  rd.FrontCounterClockwise = r.Get(d, "FrontCounterClockwise", 0);
  rd.DepthBias = static_cast<INT>(r.Get(d, "DepthBias", 0));
  rd.DepthBiasClamp = r.GetF(d, "DepthBiasClamp", 0);
  rd.SlopeScaledDepthBias = r.GetF(d, "SlopeScaledDepthBias", 0);
  rd.DepthClipEnable = r.Get(d, "DepthClipEnable", 1);
  rd.ScissorEnable = r.Get(d, "ScissorEnable", 0);
  rd.MultisampleEnable = r.Get(d, "MultisampleEnable", 0);
  rd.AntialiasedLineEnable = r.Get(d, "AntialiasedLineEnable", 0);
  if (r.Get(d, "ForcedSampleCount", 0) != 0) return Skip(call, "ForcedSampleCount (11.1)");
  if (!r.bad.ok()) return r.bad;
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::RasterizerState* s = nullptr;
  HRESULT hr = self->dev->device->CreateRasterizerState(rd, &s);
  return BindCreated(call, self, hr, s, ObjKind::kRasterizerState, out_name);
}

absl::Status Player::MakeSamplerState(const Call& call, Obj* self) {
  const char* out_name = "ppSamplerState";
  DescReader r{this, call};
  const Value* d = Deref(call.Arg("pSamplerDesc"));
  if (d == nullptr) return Bad(call, "no sampler description");
  D3D10_DDI_SAMPLER_DESC sd{};
  sd.Filter = static_cast<D3D10_DDI_FILTER>(r.Get(d, "Filter", 0x15));
  sd.AddressU = static_cast<D3D10_DDI_TEXTURE_ADDRESS_MODE>(r.Get(d, "AddressU", 3));
  sd.AddressV = static_cast<D3D10_DDI_TEXTURE_ADDRESS_MODE>(r.Get(d, "AddressV", 3));
  sd.AddressW = static_cast<D3D10_DDI_TEXTURE_ADDRESS_MODE>(r.Get(d, "AddressW", 3));
  sd.MipLODBias = r.GetF(d, "MipLODBias", 0);
  sd.MaxAnisotropy = r.Get(d, "MaxAnisotropy", 1);
  sd.ComparisonFunc = static_cast<D3D10_DDI_COMPARISON_FUNC>(r.Get(d, "ComparisonFunc", 1));
  std::vector<const Value*> border = Elements(FindField(d, "BorderColor"));
  for (size_t i = 0; i < 4 && i < border.size(); ++i) {
    absl::StatusOr<double> c = Float(call, border[i], "BorderColor");
    if (!c.ok()) return c.status();
    sd.BorderColor[i] = static_cast<float>(*c);
  }
  sd.MinLOD = r.GetF(d, "MinLOD", 0);
  sd.MaxLOD = r.GetF(d, "MaxLOD", 3.402823466e+38f);
  if (!r.bad.ok()) return r.bad;
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::SamplerState* s = nullptr;
  HRESULT hr = self->dev->device->CreateSamplerState(sd, &s);
  return BindCreated(call, self, hr, s, ObjKind::kSamplerState, out_name);
}

absl::Status Player::MakeQuery(const Call& call, Obj* self) {
  const bool query = call.Method() == "CreateQuery";
  const char* out_name = query ? "ppQuery" : "ppPredicate";
  DescReader r{this, call};
  const Value* d = Deref(call.Arg(query ? "pQueryDesc" : "pPredicateDesc"));
  if (d == nullptr) return Bad(call, "no query description");
  uint32_t type = r.Get(d, "Query", 0);
  if (!r.bad.ok()) return r.bad;
  if (type > 7) return Skip(call, "per-stream stream-output queries");
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::Query* q = nullptr;
  HRESULT hr = self->dev->device->CreateQuery(static_cast<D3D10DDI_QUERY>(type), &q);
  return BindCreated(call, self, hr, q, ObjKind::kQuery, out_name);
}

absl::Status Player::MakeDeferredContext(const Call& call, Obj* self) {
  const char* out_name = "ppDeferredContext";
  absl::StatusOr<uint64_t> flags = Uint(call, "ContextFlags");
  if (!flags.ok()) return flags.status();
  if (NoOutput(call, out_name)) return absl::OkStatus();
  runtime::DeviceContext* dc = nullptr;
  HRESULT hr = self->dev->device->CreateDeferredContext(0, &dc);
  if (hr != S_OK) return BindCreated(call, self, hr, dc, ObjKind::kContext, out_name);
  auto obj = std::make_shared<Obj>();
  obj->kind = ObjKind::kContext;
  obj->dev = self->dev;
  obj->rt = dc;
  obj->ctx = dc;
  if (absl::Status s = BindNew(call, call.Arg(out_name), std::move(obj)); !s.ok()) {
    dc->Release();
    return s;
  }
  return absl::OkStatus();
}

absl::Status Player::DeviceCall(const Call& call, Obj* self) {
  const absl::string_view method = call.Method();
  runtime::Device* device = self->dev->device;
  if (method == "CreateBuffer" || absl::StartsWith(method, "CreateTexture")) {
    if (method == "CreateTexture2D1" || method == "CreateTexture3D1") {
      return Skip(call, "11.3 texture descriptions");
    }
    return CreateResource(call, self);
  }
  if (method == "CreateShaderResourceView")
    return CreateView(call, self, ViewKind::kShaderResource);
  if (method == "CreateRenderTargetView") return CreateView(call, self, ViewKind::kRenderTarget);
  if (method == "CreateDepthStencilView") return CreateView(call, self, ViewKind::kDepthStencil);
  if (method == "CreateUnorderedAccessView") {
    return CreateView(call, self, ViewKind::kUnorderedAccess);
  }
  static const std::pair<const char*, Stage> kShaders[] = {
      {"CreateVertexShader", Stage::kVS},   {"CreatePixelShader", Stage::kPS},
      {"CreateGeometryShader", Stage::kGS}, {"CreateHullShader", Stage::kHS},
      {"CreateDomainShader", Stage::kDS},   {"CreateComputeShader", Stage::kCS}};
  for (const auto& [name, stage] : kShaders) {
    if (method == name) return CreateShader(call, self, stage);
  }
  if (method == "CreateGeometryShaderWithStreamOutput") return CreateShader(call, self, Stage::kGS);
  if (method == "CreateInputLayout" || method == "CreateBlendState" ||
      method == "CreateBlendState1" || method == "CreateDepthStencilState" ||
      method == "CreateRasterizerState" || method == "CreateRasterizerState1" ||
      method == "CreateSamplerState" || method == "CreateQuery" || method == "CreatePredicate" ||
      method == "CreateDeferredContext" || method == "CreateDeferredContext1") {
    return CreateState(call, self);
  }
  if (method == "CreateClassLinkage") {
    auto obj = std::make_shared<Obj>();
    obj->kind = ObjKind::kPlain;
    return BindNew(call, call.Arg("ppLinkage"), std::move(obj));
  }
  if (method == "CheckFormatSupport") {
    absl::StatusOr<uint32_t> format = Enum(call, call.Arg("Format"), "Format");
    if (!format.ok()) return format.status();
    uint32_t support = 0;
    device->CheckFormatSupport(static_cast<DXGI_FORMAT>(*format), &support);
    return absl::OkStatus();
  }
  if (method == "CheckMultisampleQualityLevels") {
    absl::StatusOr<uint32_t> format = Enum(call, call.Arg("Format"), "Format");
    if (!format.ok()) return format.status();
    absl::StatusOr<uint64_t> samples = Uint(call, "SampleCount");
    if (!samples.ok()) return samples.status();
    uint32_t levels = 0;
    device->CheckMultisampleQualityLevels(static_cast<DXGI_FORMAT>(*format),
                                          static_cast<uint32_t>(*samples), &levels);
    return absl::OkStatus();
  }
  if (method == "CreateCounter" || method == "CheckCounter") return CounterCall(call, self);
  if (method == "CheckCounterInfo") {
    D3D10DDI_COUNTER_INFO info{};
    device->CheckCounterInfo(&info);
    return absl::OkStatus();
  }
  return Skip(call, "not implemented");
}

absl::Status Player::CounterCall(const Call& call, Obj* self) {
  runtime::Device* device = self->dev->device;
  const bool create = call.Method() == "CreateCounter";
  CLTRACE_TRY(desc, Arg(call, create ? "pCounterDesc" : "pDesc"));
  const Value* counter_field = FindField(*desc, "Counter");
  if (counter_field == nullptr) return Bad(call, "the description has no Counter");
  CLTRACE_TRY(counter, Enum(call, counter_field, "Counter"));
  const auto id = static_cast<D3D10DDI_QUERY>(*counter);
  if (!create) {
    D3D10DDI_COUNTER_TYPE type{};
    uint32_t active = 0;
    std::string name, units, description;
    device->CheckCounter(id, &type, &active, &name, &units, &description);
    return absl::OkStatus();
  }
  runtime::Query* query = nullptr;
  const HRESULT hr = device->CreateCounter(id, &query);
  const bool capture_ok = !call.ret || call.ret->text == "S_OK";
  if (hr != S_OK && !capture_ok) return absl::OkStatus();  // refused here as there
  if (hr == S_OK && !capture_ok) {
    query->Release();
    Substitute(call, "the capture's device refused the counter, the model's created it");
    return absl::OkStatus();
  }
  return BindCreated(call, self, hr, query, ObjKind::kQuery, "ppCounter");
}

}  // namespace cltrace::apitrace::internal
