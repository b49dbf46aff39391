// Object DDIs of the reference driver: IC CalcPrivate/Create/Destroy (free-threaded, deferred
// destruction for resources) and the context-local opens/closes of the DC table (ddi-spec §3.3:
// R54, R55, R56, R57, R58).
#include <algorithm>
#include <cstring>
#include <new>

#include "refdriver/internal/common.h"
#include "refdriver/internal/ops.h"
#include "refdriver/internal/tables.h"

namespace cltrace::refdriver {
namespace {

IcObject* NewIcObject(Device* dev, void* memory, uint32_t type) {
  auto* o = new (memory) IcObject();
  o->type = type;
  o->id = dev->next_id.fetch_add(1);
  return o;
}

// The common start of an IC create: the device (NULL: nothing to do), its call count and the
// handle's memory (R39). Returns the device when the create may go on.
Device* StartIcCreate(D3D10DDI_HDEVICE hDevice, void* handle, const char* fn, const char* what) {
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return nullptr;
  CountCall(dev);
  if (!CreatableAt(handle, fn, what)) return nullptr;
  return dev;
}

// StartIcCreate, then a new IcObject of `type` in the handle's memory; nullptr when the
// create stops there.
IcObject* CreateIcObject(D3D10DDI_HDEVICE hDevice, void* handle, uint32_t type, const char* fn,
                         const char* what) {
  Device* dev = StartIcCreate(hDevice, handle, fn, what);
  return dev == nullptr ? nullptr : NewIcObject(dev, handle, type);
}

bool Blank(const void* p, size_t size) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < size; ++i) {
    if (b[i] != 0) return false;
  }
  return true;
}

// IC destroy of any object: the handle must be a live IC object of `type` (R39/R57), R54, then
// the object's deferred destruction.
void DestroyIcObject(Device* dev, void* handle, uint32_t type, const char* fn, const char* what) {
  if (handle == nullptr) {
    Report(rules::Rule::kR39, nullptr, absl::StrCat(fn, " with a NULL handle"));
    return;
  }
  IcObject* o = IcArg(handle, type, fn);
  if (o == nullptr) return;
  if (o->local_open.load() > 0) {
    Report(rules::Rule::kR54, handle,
           absl::StrCat(what, " #", o->id, " destroyed while ", o->local_open.load(),
                        " context-local handle(s) of it are still open"));
  }
  if (o->type == D3D10DDI_HT_RESOURCE) {
    DeferredDestruction item;
    item.object_id = o->id;
    item.memory = o->memory;
    if (o->allocation != 0 && (o->primary || dev->config.Has(Bug::kR67))) {
      // Primaries are freed inside DestroyResource (R69). Planted bug R67 does the same for
      // every resource, although the IC's pending commands may still reference it.
      D3DKMT_HALLOCATION alloc{o->allocation};
      D3DDDICB_DEALLOCATE d{};
      d.NumAllocations = 1;
      d.HandleList = &alloc;
      dev->kt->pfnDeallocateCb(dev->rt_device.handle, &d);
    } else {
      item.allocation = o->allocation;
    }
    QueueDeferred(dev, std::move(item));
    // Map-discard aliases of deferred contexts (R66) still alive go with the resource, after
    // the flush that submitted their last use like the resource's own allocation (R67).
    for (uint32_t alias : TakeObjectAliases(dev, o->id)) {
      DeferredDestruction alias_item;
      alias_item.object_id = o->id;
      alias_item.allocation = alias;
      QueueDeferred(dev, std::move(alias_item));
    }
  }
  o->magic = 0;  // a second destroy (or any later call) of this handle is reported, R39
  o->~IcObject();
}

// The common part of a context-local open (DC::pfnCreate*).
void OpenOnDc(D3D10DDI_HDEVICE hDevice, uint32_t type, const char* fn, bool args_blank,
              void* dependency_local, void* local, void* ic) {
  CallScope scope(fn);
  DcCallScope call(hDevice, rules::Rule::kR53);
  if (!call.ok()) return;
  DeferredContext* dc = call.dc();
  if (!HandleMemoryPresent(local, fn, "the context-local handle")) return;
  if (const char* kind = ObjectKind(local);
      kind != nullptr && *static_cast<const uint32_t*>(local) != kLocalObjectMagic) {
    // Opening would overwrite a live driver object with a LocalObject.
    Report(rules::Rule::kR57, local,
           absl::StrCat(fn, ": context-local open into the memory of ", kind));
    return;
  }
  if (!args_blank) {
    Report(rules::Rule::kR56, local,
           "context-local open must pass NULL arguments (views: only the dependency handle)");
  }
  if (ic == nullptr) {
    Report(rules::Rule::kR56, local, "context-local open without the IC handle in the HRT slot");
    return;
  }
  if (IcArg(ic, type, absl::StrCat(fn, " (HRT slot of a context-local open)").c_str()) == nullptr) {
    return;
  }
  if (call.state() != DcState::kRecording) {
    Report(rules::Rule::kR53, local,
           absl::StrCat("context-local open on a deferred context in state ",
                        rules::StateName(call.state())));
  }
  LocalOpen(dc, type, local, ic, dependency_local);
}

void CloseOnDc(D3D10DDI_HDEVICE hDevice, uint32_t type, const char* fn, void* local) {
  CallScope scope(fn);
  DcCallScope call(hDevice, rules::Rule::kR53);
  if (!call.ok()) return;
  LocalClose(call.dc(), type, local);
}

}  // namespace

// ---- local-handle bookkeeping (ops.h) ----

bool LocalOpen(DeferredContext* dc, uint32_t type, void* local, void* ic, void* dependency_local) {
  // L1/L4 of the §3.3 table (a closed handle is N again here: its entry is gone).
  if (!IsLocalEdge(dc->locals.contains(local), rules::State::kOpen)) {
    Report(rules::Rule::kR58, local, "context-local handle memory opened twice without a close");
    return false;
  }
  if (auto it = dc->ic_to_local.find(ic); it != dc->ic_to_local.end()) {
    Report(rules::Rule::kR58, local,
           absl::StrCat("second context-local open of the same object in one recording (already "
                        "open as ",
                        HandleText(it->second), ")"));
  }
  LocalEntry entry;
  entry.type = type;
  entry.ic = ic;
  if (type != D3D11DDI_HT_COMMANDLIST) {
    IcObject* o = AsIc(ic);
    if (o->dependency != nullptr) {
      auto dep = dependency_local == nullptr ? dc->locals.end() : dc->locals.find(dependency_local);
      if (dep == dc->locals.end()) {
        Report(rules::Rule::kR55, local,
               "view opened before (or without) the context-local handle of its resource");
      } else if (dep->second.ic != o->dependency) {
        Report(rules::Rule::kR55, local,
               "view opened with the local handle of a different resource");
      } else {
        ++dep->second.open_dependents;
        entry.dependency_local = dependency_local;
      }
    }
    o->local_open.fetch_add(1);
  }
  auto* lo = new (local) LocalObject();
  lo->type = type;
  lo->ic = ic;
  lo->dependency = static_cast<LocalObject*>(entry.dependency_local);
  dc->locals.emplace(local, entry);
  dc->ic_to_local[ic] = local;
  return true;
}

bool LocalClose(DeferredContext* dc, uint32_t type, void* local) {
  auto it = dc->locals.find(local);
  // L3 of the §3.3 table; a handle that is not open has no close edge.
  if (!IsLocalEdge(it != dc->locals.end(), rules::State::kClosedLocal)) {
    Report(rules::Rule::kR57, local, "close of a handle that is not open on this deferred context");
    return false;
  }
  if (it->second.type != type) {
    Report(rules::Rule::kR57, local,
           absl::StrCat("closed as handle type ", type, " but opened as ", it->second.type));
  }
  if (it->second.open_dependents > 0) {
    Report(rules::Rule::kR55, local,
           absl::StrCat("resource closed while ", it->second.open_dependents,
                        " local view(s) of it are still open"));
  }
  if (it->second.dependency_local != nullptr) {
    auto dep = dc->locals.find(it->second.dependency_local);
    if (dep != dc->locals.end()) --dep->second.open_dependents;
  }
  if (it->second.type != D3D11DDI_HT_COMMANDLIST) {
    // Not if the IC object was already destroyed (R54, reported then): its memory is the
    // runtime's again.
    IcObject* o = AsIc(it->second.ic);
    if (o->magic == kIcObjectMagic) o->local_open.fetch_sub(1);
  }
  dc->ic_to_local.erase(it->second.ic);
  dc->locals.erase(it);
  dc->closing_started = true;
  return true;
}

void* LocalToIc(DeferredContext* dc, void* local, uint32_t type, const char* what) {
  if (local == nullptr) return nullptr;
  auto it = dc->locals.find(local);
  if (it == dc->locals.end()) {
    Report(rules::Rule::kR57, local,
           absl::StrCat(what,
                        ": handle is not open on this deferred context (an IC handle, a "
                        "closed handle, or another context's handle)"));
    return nullptr;
  }
  if (it->second.type != type) {
    Report(rules::Rule::kR57, local,
           absl::StrCat(what, ": handle of type ", it->second.type, ", expected ", type));
  }
  if (it->second.type != D3D11DDI_HT_COMMANDLIST && AsIc(it->second.ic)->magic != kIcObjectMagic) {
    Report(rules::Rule::kR54, local,
           absl::StrCat(what,
                        ": the IC object of this context-local handle was destroyed while "
                        "the handle is open"));
    return nullptr;
  }
  dc->last_used_local = local;
  return it->second.ic;
}

namespace {

// ---- resources ----

// The size does not depend on the device; an invalid one is reported and the size returned.
SIZE_T APIENTRY CalcPrivateResourceSize(D3D10DDI_HDEVICE hDevice,
                                        const D3D11DDIARG_CREATERESOURCE*) {
  CallScope scope("CalcPrivateResourceSize");
  if (Device* dev = IcDevice(hDevice)) CountCall(dev);
  return sizeof(IcObject);
}

SIZE_T APIENTRY CalcPrivateOpenedResourceSize(D3D10DDI_HDEVICE hDevice,
                                              const D3D10DDIARG_OPENRESOURCE*) {
  CallScope scope("CalcPrivateOpenedResourceSize");
  if (Device* dev = IcDevice(hDevice)) CountCall(dev);
  return sizeof(IcObject);
}

// The initial data of subresource 0 (pInitialDataUP[0]: rows SysMemPitch apart, slices
// SysMemSlicePitch apart) into the backing, as far as both reach. The source is read no
// further than kMaxInitialDataSpan bytes (what a replay's stand-in for the application's
// memory holds).
constexpr uint64_t kMaxInitialDataSpan = uint64_t{64} << 20;

void CopyInitialData(const D3D11DDIARG_CREATERESOURCE* a, IcObject* o, uint64_t backing) {
  if (a->pInitialDataUP == nullptr || a->MipLevels == 0 || a->ArraySize == 0) return;
  const D3D10_DDIARG_SUBRESOURCE_UP& s = a->pInitialDataUP[0];
  if (s.pSysMem == nullptr) return;
  const auto* src = static_cast<const uint8_t*>(s.pSysMem);
  if (a->ResourceDimension == D3D10DDIRESOURCE_BUFFER) {
    std::memcpy(o->memory, src, std::min({backing, o->byte_size, kMaxInitialDataSpan}));
    return;
  }
  const uint64_t rows =
      o->row_pitch == 0 ? 0
                        : std::min<uint64_t>(o->depth_pitch / o->row_pitch, backing / o->row_pitch);
  for (uint64_t r = 0; r < rows; ++r) {
    if (r * s.SysMemPitch + o->row_pitch > kMaxInitialDataSpan) break;
    std::memcpy(o->memory + r * o->row_pitch, src + r * s.SysMemPitch, o->row_pitch);
  }
}

void APIENTRY CreateResource(D3D10DDI_HDEVICE hDevice, const D3D11DDIARG_CREATERESOURCE* a,
                             D3D10DDI_HRESOURCE hResource, D3D10DDI_HRTRESOURCE hRTResource) {
  CallScope scope("CreateResource");
  Device* dev = StartIcCreate(hDevice, hResource.pDrvPrivate, "CreateResource", "hResource");
  if (dev == nullptr) return;
  // A removal reported here fails the create: the runtime frees the handle without a
  // DestroyResource, so nothing may be allocated for it (R70).
  if (MaybeReportRemoved(dev, nullptr)) return;
  IcObject* o = NewIcObject(dev, hResource.pDrvPrivate, D3D10DDI_HT_RESOURCE);
  if (!ArgPresent(a, "CreateResource", "pCreateResource")) {
    // Nothing to size it by: an empty resource without a GPU allocation, so that later calls
    // on the handle (and its DestroyResource) stay consistent.
    o->memory = new uint8_t[16]();
    o->row_pitch = o->depth_pitch = 16;
    return;
  }
  o->usage = a->Usage;
  o->bind_flags = a->BindFlags;
  o->misc_flags = a->MiscFlags;
  o->primary = a->pPrimaryDesc != nullptr;
  // The most detailed mip's size (pMipInfoList[0]); a structure without one sizes nothing.
  D3D10DDI_MIPINFO top{};
  if (a->pMipInfoList != nullptr && a->MipLevels > 0) top = a->pMipInfoList[0];
  const uint64_t width = top.TexelWidth, height = top.TexelHeight ? top.TexelHeight : 1;
  const uint64_t texels = width * height * (top.TexelDepth ? top.TexelDepth : 1);
  o->byte_size = a->ResourceDimension == D3D10DDIRESOURCE_BUFFER ? width : texels * 4;
  const uint64_t backing = Backing(o);
  o->memory = new uint8_t[backing]();
  if (a->ResourceDimension == D3D10DDIRESOURCE_BUFFER) {
    o->row_pitch = o->depth_pitch = static_cast<uint32_t>(backing);
  } else {
    o->row_pitch = static_cast<uint32_t>(std::min<uint64_t>(width * 4, backing));
    o->depth_pitch = static_cast<uint32_t>(std::min<uint64_t>(o->row_pitch * height, backing));
  }
  CopyInitialData(a, o, backing);
  // The GPU model's allocation (gpu::UmdDevice: pfnAllocateCb with the model's private data).
  uint32_t flags = o->primary ? gpu::kAllocationDescPrimary : 0;
  absl::StatusOr<D3DKMT_HALLOCATION> allocation =
      dev->umd->Allocate(std::max<uint64_t>(o->byte_size, 16), flags, hRTResource);
  if (!allocation.ok()) {
    delete[] o->memory;
    o->magic = 0;  // the handle is dead (no destroy follows a failed create)
    o->~IcObject();
    SetErrorIc(dev, static_cast<HRESULT>(E_OUTOFMEMORY));
    return;
  }
  o->allocation = allocation->value;
}

void APIENTRY OpenResource(D3D10DDI_HDEVICE hDevice, const D3D10DDIARG_OPENRESOURCE* a,
                           D3D10DDI_HRESOURCE hResource, D3D10DDI_HRTRESOURCE) {
  CallScope scope("OpenResource");
  IcObject* o = CreateIcObject(hDevice, hResource.pDrvPrivate, D3D10DDI_HT_RESOURCE, "OpenResource",
                               "hResource");
  if (o == nullptr) return;
  o->misc_flags = D3D10_DDI_RESOURCE_MISC_SHARED;
  o->memory = new uint8_t[16]();
  o->row_pitch = o->depth_pitch = 16;
  if (a != nullptr && a->NumAllocations > 0 && a->pOpenAllocationInfo != nullptr) {
    o->allocation = a->pOpenAllocationInfo[0].hAllocation.value;
  }
}

void APIENTRY DestroyResource(D3D10DDI_HDEVICE hDevice, D3D10DDI_HRESOURCE hResource) {
  CallScope scope("DestroyResource");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  CountCall(dev);
  DestroyIcObject(dev, hResource.pDrvPrivate, D3D10DDI_HT_RESOURCE, "DestroyResource", "resource");
  MaybeReportRemoved(dev, nullptr);
}

// ---- every other object kind: an IcObject with an optional dependency ----

#define CLTRACE_IC_CALC(Name, ArgT)                             \
  SIZE_T APIENTRY Name(D3D10DDI_HDEVICE hDevice, const ArgT*) { \
    CallScope scope(#Name);                                     \
    if (Device* dev = IcDevice(hDevice)) CountCall(dev);        \
    return sizeof(IcObject);                                    \
  }

#define CLTRACE_IC_DESTROY(Name, HandleT, type, what)       \
  void APIENTRY Name(D3D10DDI_HDEVICE hDevice, HandleT h) { \
    CallScope scope(#Name);                                 \
    Device* dev = IcDevice(hDevice);                        \
    if (dev == nullptr) return;                             \
    CountCall(dev);                                         \
    DestroyIcObject(dev, h.pDrvPrivate, type, #Name, what); \
  }

CLTRACE_IC_CALC(CalcPrivateShaderResourceViewSize, D3D11DDIARG_CREATESHADERRESOURCEVIEW)
CLTRACE_IC_CALC(CalcPrivateRenderTargetViewSize, D3D10DDIARG_CREATERENDERTARGETVIEW)
CLTRACE_IC_CALC(CalcPrivateDepthStencilViewSize, D3D11DDIARG_CREATEDEPTHSTENCILVIEW)
CLTRACE_IC_CALC(CalcPrivateUnorderedAccessViewSize, D3D11DDIARG_CREATEUNORDEREDACCESSVIEW)
CLTRACE_IC_CALC(CalcPrivateElementLayoutSize, D3D10DDIARG_CREATEELEMENTLAYOUT)
CLTRACE_IC_CALC(CalcPrivateBlendStateSize, D3D10_1_DDI_BLEND_DESC)
CLTRACE_IC_CALC(CalcPrivateDepthStencilStateSize, D3D10_DDI_DEPTH_STENCIL_DESC)
CLTRACE_IC_CALC(CalcPrivateRasterizerStateSize, D3D10_DDI_RASTERIZER_DESC)
CLTRACE_IC_CALC(CalcPrivateSamplerSize, D3D10_DDI_SAMPLER_DESC)
CLTRACE_IC_CALC(CalcPrivateQuerySize, D3D10DDIARG_CREATEQUERY)

SIZE_T APIENTRY CalcPrivateShaderSize(D3D10DDI_HDEVICE hDevice, const UINT*,
                                      const D3D10DDIARG_STAGE_IO_SIGNATURES*) {
  CallScope scope("CalcPrivateShaderSize");
  if (Device* dev = IcDevice(hDevice)) CountCall(dev);
  return sizeof(IcObject);
}

SIZE_T APIENTRY CalcPrivateTessellationShaderSize(D3D10DDI_HDEVICE hDevice, const UINT*,
                                                  const D3D11DDIARG_TESSELLATION_IO_SIGNATURES*) {
  CallScope scope("CalcPrivateTessellationShaderSize");
  if (Device* dev = IcDevice(hDevice)) CountCall(dev);
  return sizeof(IcObject);
}

SIZE_T APIENTRY CalcPrivateGeometryShaderWithStreamOutput(
    D3D10DDI_HDEVICE hDevice, const D3D11DDIARG_CREATEGEOMETRYSHADERWITHSTREAMOUTPUT*,
    const D3D10DDIARG_STAGE_IO_SIGNATURES*) {
  CallScope scope("CalcPrivateGeometryShaderWithStreamOutput");
  if (Device* dev = IcDevice(hDevice)) CountCall(dev);
  return sizeof(IcObject);
}

// A view without arguments or with an invalid resource is reported and created without a
// dependency (later calls on the handle, and its destroy, stay consistent).
#define CLTRACE_IC_CREATE_VIEW(Name, ArgT, HandleT, RtT, type)                            \
  void APIENTRY Name(D3D10DDI_HDEVICE hDevice, const ArgT* a, HandleT h, RtT) {           \
    CallScope scope(#Name);                                                               \
    IcObject* o = CreateIcObject(hDevice, h.pDrvPrivate, type, #Name, "the view handle"); \
    if (o == nullptr) return;                                                             \
    if (!ArgPresent(a, #Name, "the view description")) return;                            \
    o->dependency = IcArg(a->hDrvResource.pDrvPrivate, D3D10DDI_HT_RESOURCE, #Name);      \
    if (o->dependency == nullptr && a->hDrvResource.pDrvPrivate == nullptr) {             \
      Report(rules::Rule::kR39, h.pDrvPrivate, #Name ": hDrvResource is NULL");           \
    }                                                                                     \
  }

// The views: each depends on a resource (hDrvResource).
#define CLTRACE_VIEW_KINDS(X)                                                                     \
  X(CreateShaderResourceView, D3D11DDIARG_CREATESHADERRESOURCEVIEW, D3D10DDI_HSHADERRESOURCEVIEW, \
    D3D10DDI_HRTSHADERRESOURCEVIEW, D3D10DDI_HT_SHADERRESOURCEVIEW)                               \
  X(CreateRenderTargetView, D3D10DDIARG_CREATERENDERTARGETVIEW, D3D10DDI_HRENDERTARGETVIEW,       \
    D3D10DDI_HRTRENDERTARGETVIEW, D3D10DDI_HT_RENDERTARGETVIEW)                                   \
  X(CreateDepthStencilView, D3D11DDIARG_CREATEDEPTHSTENCILVIEW, D3D10DDI_HDEPTHSTENCILVIEW,       \
    D3D10DDI_HRTDEPTHSTENCILVIEW, D3D10DDI_HT_DEPTHSTENCILVIEW)                                   \
  X(CreateUnorderedAccessView, D3D11DDIARG_CREATEUNORDEREDACCESSVIEW,                             \
    D3D11DDI_HUNORDEREDACCESSVIEW, D3D11DDI_HRTUNORDEREDACCESSVIEW,                               \
    D3D11DDI_HT_UNORDEREDACCESSVIEW)

CLTRACE_VIEW_KINDS(CLTRACE_IC_CREATE_VIEW)

#define CLTRACE_IC_CREATE_PLAIN(Name, ArgT, HandleT, RtT, type)               \
  void APIENTRY Name(D3D10DDI_HDEVICE hDevice, const ArgT*, HandleT h, RtT) { \
    CallScope scope(#Name);                                                   \
    CreateIcObject(hDevice, h.pDrvPrivate, type, #Name, "the object handle"); \
  }

// The state objects and element layouts: nothing to check in their descriptions.
#define CLTRACE_STATE_KINDS(X)                                                              \
  X(CreateElementLayout, D3D10DDIARG_CREATEELEMENTLAYOUT, D3D10DDI_HELEMENTLAYOUT,          \
    D3D10DDI_HRTELEMENTLAYOUT, D3D10DDI_HT_ELEMENTLAYOUT)                                   \
  X(CreateBlendState, D3D10_1_DDI_BLEND_DESC, D3D10DDI_HBLENDSTATE, D3D10DDI_HRTBLENDSTATE, \
    D3D10DDI_HT_BLENDSTATE)                                                                 \
  X(CreateDepthStencilState, D3D10_DDI_DEPTH_STENCIL_DESC, D3D10DDI_HDEPTHSTENCILSTATE,     \
    D3D10DDI_HRTDEPTHSTENCILSTATE, D3D10DDI_HT_DEPTHSTENCILSTATE)                           \
  X(CreateRasterizerState, D3D10_DDI_RASTERIZER_DESC, D3D10DDI_HRASTERIZERSTATE,            \
    D3D10DDI_HRTRASTERIZERSTATE, D3D10DDI_HT_RASTERIZERSTATE)                               \
  X(CreateSampler, D3D10_DDI_SAMPLER_DESC, D3D10DDI_HSAMPLER, D3D10DDI_HRTSAMPLER,          \
    D3D10DDI_HT_SAMPLERSTATE)

CLTRACE_STATE_KINDS(CLTRACE_IC_CREATE_PLAIN)

void APIENTRY CreateQuery(D3D10DDI_HDEVICE hDevice, const D3D10DDIARG_CREATEQUERY* a,
                          D3D10DDI_HQUERY h, D3D10DDI_HRTQUERY) {
  CallScope scope("CreateQuery");
  IcObject* o = CreateIcObject(hDevice, h.pDrvPrivate, D3D10DDI_HT_QUERY, "CreateQuery", "hQuery");
  if (o == nullptr) return;
  if (ArgPresent(a, "CreateQuery", "pCreateQuery")) o->query_type = a->Query;
}

#define CLTRACE_IC_CREATE_SHADER(Name, SigT)                                      \
  void APIENTRY Name(D3D10DDI_HDEVICE hDevice, const UINT*, D3D10DDI_HSHADER h,   \
                     D3D10DDI_HRTSHADER, const SigT*) {                           \
    CallScope scope(#Name);                                                       \
    CreateIcObject(hDevice, h.pDrvPrivate, D3D10DDI_HT_SHADER, #Name, "hShader"); \
  }

// The shaders with IO signatures (CreateComputeShader has none).
#define CLTRACE_SHADER_KINDS(X)                               \
  X(CreateVertexShader, D3D10DDIARG_STAGE_IO_SIGNATURES)      \
  X(CreateGeometryShader, D3D10DDIARG_STAGE_IO_SIGNATURES)    \
  X(CreatePixelShader, D3D10DDIARG_STAGE_IO_SIGNATURES)       \
  X(CreateHullShader, D3D11DDIARG_TESSELLATION_IO_SIGNATURES) \
  X(CreateDomainShader, D3D11DDIARG_TESSELLATION_IO_SIGNATURES)

CLTRACE_SHADER_KINDS(CLTRACE_IC_CREATE_SHADER)

void APIENTRY CreateComputeShader(D3D10DDI_HDEVICE hDevice, const UINT*, D3D10DDI_HSHADER h,
                                  D3D10DDI_HRTSHADER) {
  CallScope scope("CreateComputeShader");
  CreateIcObject(hDevice, h.pDrvPrivate, D3D10DDI_HT_SHADER, "CreateComputeShader", "hShader");
}

// A geometry shader with stream output is a shader like any other to the model GPU.
void APIENTRY CreateGeometryShaderWithStreamOutput(
    D3D10DDI_HDEVICE hDevice, const D3D11DDIARG_CREATEGEOMETRYSHADERWITHSTREAMOUTPUT* a,
    D3D10DDI_HSHADER h, D3D10DDI_HRTSHADER, const D3D10DDIARG_STAGE_IO_SIGNATURES*) {
  CallScope scope("CreateGeometryShaderWithStreamOutput");
  IcObject* o = CreateIcObject(hDevice, h.pDrvPrivate, D3D10DDI_HT_SHADER,
                               "CreateGeometryShaderWithStreamOutput", "hShader");
  if (o == nullptr) return;
  (void)ArgPresent(a, "CreateGeometryShaderWithStreamOutput",
                   "pCreateGeometryShaderWithStreamOutput");
}

CLTRACE_IC_DESTROY(DestroyShaderResourceView, D3D10DDI_HSHADERRESOURCEVIEW,
                   D3D10DDI_HT_SHADERRESOURCEVIEW, "shader-resource view")
CLTRACE_IC_DESTROY(DestroyRenderTargetView, D3D10DDI_HRENDERTARGETVIEW,
                   D3D10DDI_HT_RENDERTARGETVIEW, "render-target view")
CLTRACE_IC_DESTROY(DestroyDepthStencilView, D3D10DDI_HDEPTHSTENCILVIEW,
                   D3D10DDI_HT_DEPTHSTENCILVIEW, "depth-stencil view")
CLTRACE_IC_DESTROY(DestroyUnorderedAccessView, D3D11DDI_HUNORDEREDACCESSVIEW,
                   D3D11DDI_HT_UNORDEREDACCESSVIEW, "unordered-access view")
CLTRACE_IC_DESTROY(DestroyElementLayout, D3D10DDI_HELEMENTLAYOUT, D3D10DDI_HT_ELEMENTLAYOUT,
                   "element layout")
CLTRACE_IC_DESTROY(DestroyBlendState, D3D10DDI_HBLENDSTATE, D3D10DDI_HT_BLENDSTATE, "blend state")
CLTRACE_IC_DESTROY(DestroyDepthStencilState, D3D10DDI_HDEPTHSTENCILSTATE,
                   D3D10DDI_HT_DEPTHSTENCILSTATE, "depth-stencil state")
CLTRACE_IC_DESTROY(DestroyRasterizerState, D3D10DDI_HRASTERIZERSTATE, D3D10DDI_HT_RASTERIZERSTATE,
                   "rasterizer state")
CLTRACE_IC_DESTROY(DestroySampler, D3D10DDI_HSAMPLER, D3D10DDI_HT_SAMPLERSTATE, "sampler")
CLTRACE_IC_DESTROY(DestroyShader, D3D10DDI_HSHADER, D3D10DDI_HT_SHADER, "shader")
CLTRACE_IC_DESTROY(DestroyQuery, D3D10DDI_HQUERY, D3D10DDI_HT_QUERY, "query")

// ---- context-local opens and closes (DC table) ----

void APIENTRY DcCreateResource(D3D10DDI_HDEVICE h, const D3D11DDIARG_CREATERESOURCE* a,
                               D3D10DDI_HRESOURCE hl, D3D10DDI_HRTRESOURCE rt) {
  OpenOnDc(h, D3D10DDI_HT_RESOURCE, "CreateResource", a == nullptr, nullptr, hl.pDrvPrivate,
           rt.handle);
}

#define CLTRACE_DC_OPEN_VIEW(Name, ArgT, HandleT, RtT, type)                      \
  void APIENTRY Dc##Name(D3D10DDI_HDEVICE h, const ArgT* a, HandleT hl, RtT rt) { \
    bool blank = false;                                                           \
    void* dep = nullptr;                                                          \
    if (a != nullptr) {                                                           \
      dep = a->hDrvResource.pDrvPrivate;                                          \
      ArgT rest = *a;                                                             \
      rest.hDrvResource.pDrvPrivate = nullptr;                                    \
      blank = dep != nullptr && Blank(&rest, sizeof(rest));                       \
    }                                                                             \
    OpenOnDc(h, type, #Name, blank, dep, hl.pDrvPrivate, rt.handle);              \
  }

CLTRACE_VIEW_KINDS(CLTRACE_DC_OPEN_VIEW)

#define CLTRACE_DC_OPEN_PLAIN(Name, ArgT, HandleT, RtT, type)                     \
  void APIENTRY Dc##Name(D3D10DDI_HDEVICE h, const ArgT* a, HandleT hl, RtT rt) { \
    OpenOnDc(h, type, #Name, a == nullptr, nullptr, hl.pDrvPrivate, rt.handle);   \
  }

CLTRACE_STATE_KINDS(CLTRACE_DC_OPEN_PLAIN)
CLTRACE_DC_OPEN_PLAIN(CreateQuery, D3D10DDIARG_CREATEQUERY, D3D10DDI_HQUERY, D3D10DDI_HRTQUERY,
                      D3D10DDI_HT_QUERY)

#define CLTRACE_DC_OPEN_SHADER(Name, SigT)                                             \
  void APIENTRY Dc##Name(D3D10DDI_HDEVICE h, const UINT* code, D3D10DDI_HSHADER hl,    \
                         D3D10DDI_HRTSHADER rt, const SigT* sig) {                     \
    OpenOnDc(h, D3D10DDI_HT_SHADER, #Name, code == nullptr && sig == nullptr, nullptr, \
             hl.pDrvPrivate, rt.handle);                                               \
  }

CLTRACE_SHADER_KINDS(CLTRACE_DC_OPEN_SHADER)

void APIENTRY DcCreateComputeShader(D3D10DDI_HDEVICE h, const UINT* code, D3D10DDI_HSHADER hl,
                                    D3D10DDI_HRTSHADER rt) {
  OpenOnDc(h, D3D10DDI_HT_SHADER, "CreateComputeShader", code == nullptr, nullptr, hl.pDrvPrivate,
           rt.handle);
}

void APIENTRY DcCreateGeometryShaderWithStreamOutput(
    D3D10DDI_HDEVICE h, const D3D11DDIARG_CREATEGEOMETRYSHADERWITHSTREAMOUTPUT* a,
    D3D10DDI_HSHADER hl, D3D10DDI_HRTSHADER rt, const D3D10DDIARG_STAGE_IO_SIGNATURES* sig) {
  OpenOnDc(h, D3D10DDI_HT_SHADER, "CreateGeometryShaderWithStreamOutput",
           a == nullptr && sig == nullptr, nullptr, hl.pDrvPrivate, rt.handle);
}

#define CLTRACE_DC_CLOSE(Name, HandleT, type)              \
  void APIENTRY Dc##Name(D3D10DDI_HDEVICE h, HandleT hl) { \
    CloseOnDc(h, type, #Name, hl.pDrvPrivate);             \
  }

CLTRACE_DC_CLOSE(DestroyResource, D3D10DDI_HRESOURCE, D3D10DDI_HT_RESOURCE)
CLTRACE_DC_CLOSE(DestroyShaderResourceView, D3D10DDI_HSHADERRESOURCEVIEW,
                 D3D10DDI_HT_SHADERRESOURCEVIEW)
CLTRACE_DC_CLOSE(DestroyRenderTargetView, D3D10DDI_HRENDERTARGETVIEW, D3D10DDI_HT_RENDERTARGETVIEW)
CLTRACE_DC_CLOSE(DestroyDepthStencilView, D3D10DDI_HDEPTHSTENCILVIEW, D3D10DDI_HT_DEPTHSTENCILVIEW)
CLTRACE_DC_CLOSE(DestroyUnorderedAccessView, D3D11DDI_HUNORDEREDACCESSVIEW,
                 D3D11DDI_HT_UNORDEREDACCESSVIEW)
CLTRACE_DC_CLOSE(DestroyElementLayout, D3D10DDI_HELEMENTLAYOUT, D3D10DDI_HT_ELEMENTLAYOUT)
CLTRACE_DC_CLOSE(DestroyBlendState, D3D10DDI_HBLENDSTATE, D3D10DDI_HT_BLENDSTATE)
CLTRACE_DC_CLOSE(DestroyDepthStencilState, D3D10DDI_HDEPTHSTENCILSTATE,
                 D3D10DDI_HT_DEPTHSTENCILSTATE)
CLTRACE_DC_CLOSE(DestroyRasterizerState, D3D10DDI_HRASTERIZERSTATE, D3D10DDI_HT_RASTERIZERSTATE)
CLTRACE_DC_CLOSE(DestroySampler, D3D10DDI_HSAMPLER, D3D10DDI_HT_SAMPLERSTATE)
CLTRACE_DC_CLOSE(DestroyShader, D3D10DDI_HSHADER, D3D10DDI_HT_SHADER)
CLTRACE_DC_CLOSE(DestroyQuery, D3D10DDI_HQUERY, D3D10DDI_HT_QUERY)

// The object slots a DC table fills too, with its context-local open/close (§2.3).
// clang-format off
#define CLTRACE_CONTEXT_LOCAL_SLOTS(X) \
  X(CreateResource) \
  X(DestroyResource) \
  X(CreateShaderResourceView) \
  X(DestroyShaderResourceView) \
  X(CreateRenderTargetView) \
  X(DestroyRenderTargetView) \
  X(CreateDepthStencilView) \
  X(DestroyDepthStencilView) \
  X(CreateUnorderedAccessView) \
  X(DestroyUnorderedAccessView) \
  X(CreateElementLayout) \
  X(DestroyElementLayout) \
  X(CreateBlendState) \
  X(DestroyBlendState) \
  X(CreateDepthStencilState) \
  X(DestroyDepthStencilState) \
  X(CreateRasterizerState) \
  X(DestroyRasterizerState) \
  X(CreateSampler) \
  X(DestroySampler) \
  X(CreateQuery) \
  X(DestroyQuery) \
  X(CreateVertexShader) \
  X(CreateGeometryShader) \
  X(CreatePixelShader) \
  X(CreateHullShader) \
  X(CreateDomainShader) \
  X(CreateComputeShader) \
  X(CreateGeometryShaderWithStreamOutput) \
  X(DestroyShader)
// clang-format on

// The IC-only object slots: the sizes and OpenResource (the DC table leaves them NULL, §2.3).
// clang-format off
#define CLTRACE_IC_ONLY_OBJECT_SLOTS(X) \
  X(CalcPrivateResourceSize) \
  X(CalcPrivateOpenedResourceSize) \
  X(OpenResource) \
  X(CalcPrivateShaderResourceViewSize) \
  X(CalcPrivateRenderTargetViewSize) \
  X(CalcPrivateDepthStencilViewSize) \
  X(CalcPrivateUnorderedAccessViewSize) \
  X(CalcPrivateElementLayoutSize) \
  X(CalcPrivateBlendStateSize) \
  X(CalcPrivateDepthStencilStateSize) \
  X(CalcPrivateRasterizerStateSize) \
  X(CalcPrivateShaderSize) \
  X(CalcPrivateTessellationShaderSize) \
  X(CalcPrivateGeometryShaderWithStreamOutput) \
  X(CalcPrivateSamplerSize) \
  X(CalcPrivateQuerySize)
// clang-format on

}  // namespace

void APIENTRY CreateResourceHotSwapped(D3D10DDI_HDEVICE hDevice,
                                       const D3D11DDIARG_CREATERESOURCE* a,
                                       D3D10DDI_HRESOURCE hResource,
                                       D3D10DDI_HRTRESOURCE hRTResource) {
  CreateResource(hDevice, a, hResource, hRTResource);
}

void FillObjectSlots(D3D11DDI_DEVICEFUNCS* t, bool dc) {
#define CLTRACE_IC_SLOT(Name) t->pfn##Name = &Name;
#define CLTRACE_DC_SLOT(Name) t->pfn##Name = &Dc##Name;
  if (dc) {
    CLTRACE_CONTEXT_LOCAL_SLOTS(CLTRACE_DC_SLOT)
  } else {
    CLTRACE_CONTEXT_LOCAL_SLOTS(CLTRACE_IC_SLOT)
    CLTRACE_IC_ONLY_OBJECT_SLOTS(CLTRACE_IC_SLOT)
  }
#undef CLTRACE_IC_SLOT
#undef CLTRACE_DC_SLOT
}

}  // namespace cltrace::refdriver
