// The reference driver's work on resources for the IC and DC tables: copies and updates,
// clears, queries, the dynamic maps (R64 on a deferred context) and the rarely issued
// D3D10-era and 11.0 slots that act on resources (hazards, resolve, converts,
// CopyStructureCount). Validation and where the work goes: internal/pipe_call.h.
#include <algorithm>
#include <cstring>

#include "refdriver/internal/common.h"
#include "refdriver/internal/ops.h"
#include "refdriver/internal/pipe_call.h"
#include "refdriver/internal/refresh.h"
#include "refdriver/internal/tables.h"
#include "wddm/digest.h"

namespace cltrace::refdriver {
namespace {

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
    // its own allocation, which becomes the IC's current one when the list executes (R66),
    // freed once no list can execute it and it is not current (AliasBook).
    dc->rec.aliases.emplace_back(new uint8_t[size]());
    out->pData = dc->rec.aliases.back().get();
    c.Generic(refcmd::kRename, reinterpret_cast<uint64_t>(o), dc->rec.aliases.size());
    if (type == D3D10_DDI_MAP_WRITE_DISCARD && o->allocation != 0) {
      absl::StatusOr<D3DKMT_HALLOCATION> alias = c.dev()->umd->Allocate(o->byte_size);
      if (alias.ok()) {
        AliasMade(c.dev(), o->id, alias->value);
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
    if (type == D3D10_DDI_MAP_WRITE_DISCARD) {
      c.dev()->aliases.Erase(o->id);
      AliasCurrentDropped(c.dev(), o->id);
    }
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

// ---- the D3D10-era and 11.0 slots on resources the runtime model issues rarely ----

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

}  // namespace

void FillResourceWorkSlots(D3D11DDI_DEVICEFUNCS* t, bool dc) {
  CLTRACE_PIPE_SLOT(t, dc, ResourceCopy)
  CLTRACE_PIPE_SLOT(t, dc, ResourceCopyRegion)
  CLTRACE_PIPE_SLOT(t, dc, ResourceUpdateSubresourceUP)
  CLTRACE_PIPE_SLOT(t, dc, DefaultConstantBufferUpdateSubresourceUP)
  CLTRACE_PIPE_SLOT(t, dc, ClearRenderTargetView)
  CLTRACE_PIPE_SLOT(t, dc, ClearDepthStencilView)
  CLTRACE_PIPE_SLOT(t, dc, ClearUnorderedAccessViewUint)
  CLTRACE_PIPE_SLOT(t, dc, ClearUnorderedAccessViewFloat)
  CLTRACE_PIPE_SLOT(t, dc, GenMips)
  CLTRACE_PIPE_SLOT(t, dc, QueryBegin)
  CLTRACE_PIPE_SLOT(t, dc, QueryEnd)
  CLTRACE_PIPE_SLOT(t, dc, DynamicIABufferMapDiscard)
  CLTRACE_PIPE_SLOT(t, dc, DynamicIABufferMapNoOverwrite)
  CLTRACE_PIPE_SLOT(t, dc, DynamicConstantBufferMapDiscard)
  CLTRACE_PIPE_SLOT(t, dc, DynamicResourceMapDiscard)
  CLTRACE_PIPE_SLOT(t, dc, DynamicIABufferUnmap)
  CLTRACE_PIPE_SLOT(t, dc, DynamicConstantBufferUnmap)
  CLTRACE_PIPE_SLOT(t, dc, DynamicResourceUnmap)
  CLTRACE_PIPE_SLOT(t, dc, ShaderResourceViewReadAfterWriteHazard)
  CLTRACE_PIPE_SLOT(t, dc, ResourceReadAfterWriteHazard)
  CLTRACE_PIPE_SLOT(t, dc, ResourceResolveSubresource)
  CLTRACE_PIPE_SLOT(t, dc, ResourceConvert)
  CLTRACE_PIPE_SLOT(t, dc, ResourceConvertRegion)
  CLTRACE_PIPE_SLOT(t, dc, CopyStructureCount)
}

}  // namespace cltrace::refdriver
