#include "recorder/internal/content.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "format/content.h"
#include "recorder/internal/core.h"

namespace cltrace::recorder::internal {
namespace {

struct Mapping {
  const void* data = nullptr;
  UINT row_pitch = 0, depth_pitch = 0;
};

struct ContentState {
  std::mutex mu;
  // (Standard containers, not Abseil's hash tables: the shim links no hash table that needs
  // thread-local seeds, which a shared object cannot take from a static archive.)
  std::unordered_map<const void*, format::ResourceShape> shapes;
  // (device or deferred context, resource, subresource) -> the driver's mapping.
  std::map<std::tuple<const void*, const void*, UINT>, Mapping> maps;
  // DX6 surface (DD_HSURFACE value) -> where the runtime writes its bytes.
  std::unordered_map<const void*, const void*> d3d_buffers;
  ContentStats stats;
};

ContentState& S() {
  static ContentState* s = new ContentState();
  return *s;
}

// The figures go to the recording region too, where the drainer (maybe `cltrace record`, in
// another process) reads them.
void PublishLocked(ContentState& s) {
  if (Region* r = G().region) {
    RegionHeader* h = r->header();
    h->contents.store(s.stats.captured, std::memory_order_relaxed);
    h->content_bytes.store(s.stats.bytes, std::memory_order_relaxed);
    h->contents_skipped.store(s.stats.skipped, std::memory_order_relaxed);
    if (!s.stats.first_skip.empty()) {
      r->SetText(h->first_content_skip, sizeof(h->first_content_skip), s.stats.first_skip.c_str(),
                 /*only_first=*/true);
    }
  }
}

void SkipLocked(ContentState& s, std::string why) {
  ++s.stats.skipped;
  if (s.stats.first_skip.empty()) s.stats.first_skip = std::move(why);
  PublishLocked(s);
}

// "<what>: N bytes, more than the M captured per call" (snprintf: the shim links no Abseil
// library).
std::string TooLarge(const char* what, uint64_t n) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%s: %llu bytes, more than the %llu captured per call", what,
                static_cast<unsigned long long>(n),
                static_cast<unsigned long long>(format::kMaxContentBytes));
  return buf;
}

// Copies the `layout.Bytes()` bytes at `src` (when `ok`), or counts why not (`why`).
std::string* CopyLocked(ContentState& s, const char* what, bool ok,
                        const format::RegionLayout& layout, const std::string& why,
                        const void* src) {
  if (!ok) {
    SkipLocked(s, std::string(what) + ": " + why);
    return nullptr;
  }
  const uint64_t n = layout.Bytes();
  if (n == 0) return nullptr;
  if (n > format::kMaxContentBytes) {
    SkipLocked(s, TooLarge(what, n));
    return nullptr;
  }
  ++s.stats.captured;
  s.stats.bytes += n;
  PublishLocked(s);
  return new std::string(static_cast<const char*>(src), n);
}

}  // namespace

void ContentOnCreateResource(const void* resource, const D3D11DDIARG_CREATERESOURCE* a,
                             const void* rt_resource) {
  if (resource == nullptr) return;
  if (a == nullptr) {
    ContentState& s = S();
    std::lock_guard<std::mutex> l(s.mu);
    if (auto it = s.shapes.find(rt_resource); it != s.shapes.end()) {
      const format::ResourceShape ic_shape = it->second;  // rehash-safe copy
      s.shapes[resource] = ic_shape;
    }
    return;
  }
  format::ResourceShape shape;
  shape.dimension = static_cast<uint32_t>(a->ResourceDimension);
  shape.format = a->Format;
  if (a->pMipInfoList != nullptr && a->MipLevels > 0) {  // the most detailed mip's size
    shape.width = a->pMipInfoList[0].TexelWidth;
    shape.height = a->pMipInfoList[0].TexelHeight;
    shape.depth = a->pMipInfoList[0].TexelDepth;
  }
  shape.mip_levels = a->MipLevels;
  shape.array_size = a->ArraySize;
  ContentState& s = S();
  std::lock_guard<std::mutex> l(s.mu);
  s.shapes[resource] = shape;
}

void ContentOnDestroyResource(const void* resource) {
  ContentState& s = S();
  std::lock_guard<std::mutex> l(s.mu);
  s.shapes.erase(resource);
}

void ContentOnMap(const void* device, const void* resource, UINT subresource, D3D10_DDI_MAP type,
                  const D3D10DDI_MAPPED_SUBRESOURCE* out) {
  ContentState& s = S();
  std::lock_guard<std::mutex> l(s.mu);
  const auto key = std::make_tuple(device, resource, subresource);
  // A read-only map leaves nothing to capture; a failed map (no pointer) neither.
  if (type == D3D10_DDI_MAP_READ || out == nullptr || out->pData == nullptr) {
    s.maps.erase(key);
    return;
  }
  s.maps[key] = Mapping{out->pData, out->RowPitch, out->DepthPitch};
}

std::string* ContentAtUnmap(const void* device, const void* resource, UINT subresource) {
  ContentState& s = S();
  std::lock_guard<std::mutex> l(s.mu);
  auto it = s.maps.find(std::make_tuple(device, resource, subresource));
  if (it == s.maps.end()) return nullptr;  // not mapped for writing (or not by this device)
  const Mapping m = it->second;
  s.maps.erase(it);
  if (!Recording()) return nullptr;
  auto shape = s.shapes.find(resource);
  if (shape == s.shapes.end()) {
    SkipLocked(s, "Unmap: the resource was created before recording began");
    return nullptr;
  }
  format::RegionLayout layout;
  std::string why;
  const bool ok = format::ComputeMappedLayout(shape->second, subresource, m.row_pitch,
                                              m.depth_pitch, &layout, &why);
  return CopyLocked(s, "Unmap", ok, layout, why, m.data);
}

std::string* ContentOfUpload(const void* resource, UINT subresource, const D3D10_DDI_BOX* box,
                             const void* sys_mem, UINT row_pitch, UINT depth_pitch) {
  if (sys_mem == nullptr || !Recording()) return nullptr;
  ContentState& s = S();
  std::lock_guard<std::mutex> l(s.mu);
  auto shape = s.shapes.find(resource);
  if (shape == s.shapes.end()) {
    SkipLocked(s, "UpdateSubresourceUP: the resource was created before recording began");
    return nullptr;
  }
  std::optional<format::Box> b;
  if (box != nullptr) {
    b = format::Box{box->left, box->top, box->front, box->right, box->bottom, box->back};
  }
  format::RegionLayout layout;
  std::string why;
  const bool ok = format::ComputeUploadLayout(shape->second, subresource, b ? &*b : nullptr,
                                              row_pitch, depth_pitch, &layout, &why);
  return CopyLocked(s, "UpdateSubresourceUP", ok, layout, why, sys_mem);
}

std::string* ContentOfInitialData(const D3D11DDIARG_CREATERESOURCE* a) {
  // NULL structure: a context-local open (R56); NULL pInitialDataUP: no initial data.
  if (a == nullptr || a->pInitialDataUP == nullptr || !Recording()) return nullptr;
  format::ResourceShape shape;
  shape.dimension = static_cast<uint32_t>(a->ResourceDimension);
  shape.format = a->Format;
  if (a->pMipInfoList != nullptr && a->MipLevels > 0) {
    shape.width = a->pMipInfoList[0].TexelWidth;
    shape.height = a->pMipInfoList[0].TexelHeight;
    shape.depth = a->pMipInfoList[0].TexelDepth;
  }
  shape.mip_levels = a->MipLevels;
  shape.array_size = a->ArraySize;
  const size_t count = static_cast<size_t>(a->MipLevels) * a->ArraySize;
  ContentState& s = S();
  std::lock_guard<std::mutex> l(s.mu);
  std::vector<format::SubresourcePitches> pitches(count);
  for (size_t i = 0; i < count; ++i) {
    if (a->pInitialDataUP[i].pSysMem == nullptr) {
      SkipLocked(s, "CreateResource: an initial-data entry has a NULL pSysMem");
      return nullptr;
    }
    pitches[i] = {a->pInitialDataUP[i].SysMemPitch, a->pInitialDataUP[i].SysMemSlicePitch};
  }
  format::InitialData layout;
  std::string why;
  if (!format::ComputeInitialDataLayout(shape, pitches.data(), count, &layout, &why)) {
    SkipLocked(s, "CreateResource: " + why);
    return nullptr;
  }
  if (layout.bytes == 0) return nullptr;
  if (layout.bytes > format::kMaxContentBytes) {
    SkipLocked(s, TooLarge("CreateResource", layout.bytes));
    return nullptr;
  }
  ++s.stats.captured;
  s.stats.bytes += layout.bytes;
  PublishLocked(s);
  auto* out = new std::string();
  out->reserve(layout.bytes);
  for (size_t i = 0; i < count; ++i) {
    out->append(static_cast<const char*>(a->pInitialDataUP[i].pSysMem), layout.regions[i].Bytes());
  }
  return out;
}

void ContentOnD3DBuffer(const void* surface, const void* data) {
  if (surface == nullptr) return;
  ContentState& s = S();
  std::lock_guard<std::mutex> l(s.mu);
  if (data == nullptr) {
    s.d3d_buffers.erase(surface);
  } else {
    s.d3d_buffers[surface] = data;
  }
}

void ContentOnDestroyD3DBuffer(const void* surface) { ContentOnD3DBuffer(surface, nullptr); }

std::string* ContentOfDrawPrimitives2(const D3DHAL_DRAWPRIMITIVES2DATA* d) {
  if (d == nullptr || !Recording()) return nullptr;
  ContentState& s = S();
  std::lock_guard<std::mutex> l(s.mu);
  const uint64_t commands = d->dwCommandLength;
  const bool user = (d->dwFlags & D3DHALDP2_USERMEMVERTICES) != 0;
  const void* vertex_source = user ? d->lpVertices : nullptr;
  if (!user && d->lpDDVertex.handle != nullptr) {
    auto it = s.d3d_buffers.find(d->lpDDVertex.handle);
    if (it != s.d3d_buffers.end()) {
      vertex_source = static_cast<const char*>(it->second) + d->dwVertexOffset;
    }
  }
  const uint64_t vertices =
      !user && d->lpDDVertex.handle == nullptr
          ? 0
          : format::Dp2VertexBytes(d->dwVertexType, d->dwVertexSize, d->dwVertexLength);
  const void* command_source = nullptr;
  if (auto it = s.d3d_buffers.find(d->lpDDCommands.handle); it != s.d3d_buffers.end()) {
    command_source = static_cast<const char*>(it->second) + d->dwCommandOffset;
  }
  if ((commands != 0 && command_source == nullptr) || (vertices != 0 && vertex_source == nullptr)) {
    SkipLocked(s,
               "D3dDrawPrimitives2: a buffer it names was never locked or created while "
               "recording");
    return nullptr;
  }
  if (commands + vertices == 0) return nullptr;
  if (commands + vertices > format::kMaxContentBytes) {
    SkipLocked(s, TooLarge("D3dDrawPrimitives2", commands + vertices));
    return nullptr;
  }
  ++s.stats.captured;
  s.stats.bytes += commands + vertices;
  PublishLocked(s);
  auto* out = new std::string(static_cast<const char*>(command_source), commands);
  out->append(static_cast<const char*>(vertex_source), vertices);
  return out;
}

ContentStats GetContentStats() {
  ContentState& s = S();
  std::lock_guard<std::mutex> l(s.mu);
  return s.stats;
}

void ResetContentStats() {
  ContentState& s = S();
  std::lock_guard<std::mutex> l(s.mu);
  s.stats = ContentStats();
}

}  // namespace cltrace::recorder::internal
