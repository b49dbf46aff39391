// The reference driver's kernel side of the IC: the command buffer from pfnCreateContextCb /
// pfnRenderCb, submission with amortized processing (R71), deferred destruction drained in
// every Flush and before DestroyDevice returns (R67-R70), and the IC-only DDIs (Flush, generic
// and staging maps, QueryGetData, PresentDXGI).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "refdriver/internal/common.h"
#include "refdriver/internal/ops.h"
#include "refdriver/internal/tables.h"

namespace cltrace::refdriver {
namespace {

HANDLE Rt(Device* dev) { return dev->rt_device.handle; }

void Pump(Device* dev) {
  if (dev->config.Has(Bug::kR71)) return;  // planted bug R71: never pumps
  PFND3D11DDI_PERFORM_AMORTIZED_PROCESSING_CB pump =
      dev->config.Has(Bug::kR6) ? dev->cached_amortized
                                : dev->callbacks->pfnPerformAmortizedProcessingCb;
  pump(dev->rt_core_layer);
}

// Everything that follows a pfnRenderCb, whether Flush asked for it or gpu::UmdContext made it
// because the buffer was full: amortized processing (R71), then the new buffer's preamble
// (the current bindings, through state refresh).
void AfterSubmit(Device* dev) {
  ++dev->submits;
  dev->app_pending = false;
  Pump(dev);
  bool was = dev->in_preamble;
  dev->in_preamble = true;
  RefreshPreamble(dev);
  dev->in_preamble = was;
}

}  // namespace

bool HasCommands(Device* dev) { return dev->context_created && dev->app_pending; }

gpu::Command PrivateRecord(const void* record, uint32_t size) {
  std::vector<uint32_t> words(2 + (size + 3) / 4, 0);
  words[0] = static_cast<uint32_t>(refcmd::kStreamMagic);
  words[1] = static_cast<uint32_t>(refcmd::kStreamMagic >> 32);
  std::memcpy(words.data() + 2, record, size);
  return gpu::Command::Private(words);
}

HRESULT CreateGpuContext(Device* dev) {
  gpu::PlantedBug bug =
      dev->config.Has(Bug::kR74) ? gpu::PlantedBug::kR74StaleCommandBuffer : gpu::PlantedBug::kNone;
  dev->umd = std::make_unique<gpu::UmdDevice>(dev->kt, Rt(dev), bug);
  absl::StatusOr<std::unique_ptr<gpu::UmdContext>> ctx = dev->umd->CreateContext(/*node=*/0);
  if (!ctx.ok()) {
    dev->umd.reset();
    return static_cast<HRESULT>(E_OUTOFMEMORY);
  }
  dev->gpu_ctx = *std::move(ctx);
  dev->hcontext = dev->gpu_ctx->handle();
  dev->context_created = true;
  dev->app_pending = false;
  return S_OK;
}

void DestroyGpuContext(Device* dev) {
  if (!dev->context_created) return;
  if (dev->front_buffer != 0) {
    (void)dev->umd->Deallocate(D3DKMT_HALLOCATION{dev->front_buffer});
    dev->front_buffer = 0;
  }
  (void)dev->gpu_ctx->Destroy();
  dev->context_created = false;
}

void IcSubmit(Device* dev) {
  if (!dev->context_created) return;
  // Errors were reported by the kernel (and the runtime); the context continues in the buffers
  // the kernel handed back either way.
  (void)dev->gpu_ctx->Flush();
  AfterSubmit(dev);
}

void IcEmit(Device* dev, const gpu::Command& c) {
  if (!dev->context_created) return;
  const uint64_t renders = dev->gpu_ctx->render_calls();
  // A refused command (the kernel failed a submit that made room) is dropped, as a full
  // hardware queue would drop it; the kernel reported why.
  (void)dev->gpu_ctx->Emit(c);
  if (dev->gpu_ctx->render_calls() != renders) AfterSubmit(dev);
  if (!dev->in_preamble) dev->app_pending = true;
}

void IcWrite(Device* dev, const void* record, uint32_t size) {
  IcEmit(dev, PrivateRecord(record, size));
}

void IcWriteGeneric(Device* dev, uint32_t opcode, uint64_t a, uint64_t b, uint64_t c) {
  refcmd::Generic g{{opcode, sizeof(refcmd::Generic)}, a, b, c};
  IcWrite(dev, &g, sizeof(g));
}

uint32_t IcAllocationOf(Device* dev, const IcObject* o) {
  if (o == nullptr) return 0;
  if (std::optional<gpu::AllocationId> alias = dev->aliases.Get(o->id)) {
    return static_cast<uint32_t>(*alias);
  }
  return o->allocation;
}

void IcSplice(Device* dev, const Recording& content, uint64_t cl_id) {
  IcWriteGeneric(dev, refcmd::kExecuteBegin, cl_id);
  // gpu::UmdContext::Splice, one command at a time so that every submit the splice causes is
  // followed by amortized processing like any other (R71).
  for (const gpu::Command& c : content.gpu.commands()) IcEmit(dev, c);
  content.gpu.ApplyRenames(&dev->aliases);
  AliasesMadeCurrent(dev, content);
  IcWriteGeneric(dev, refcmd::kExecuteEnd, cl_id);
}

void QueueDeferred(Device* dev, DeferredDestruction item) {
  std::lock_guard<std::mutex> lock(dev->deferred_mu);
  dev->deferred.push_back(std::move(item));
}

namespace {

struct AliasBook {
  struct Entry {
    uint64_t object_id = 0;
    uint32_t holds = 0;
  };
  absl::flat_hash_map<uint32_t, Entry> aliases;                            // by allocation
  absl::flat_hash_map<uint64_t, absl::flat_hash_set<uint32_t>> of_object;  // resource id ->
  absl::flat_hash_map<uint64_t, uint32_t> current;  // resource id -> the IC's current alias
};

// Every device's book, under one lock (alias bookkeeping is rare: discards on DCs, executes,
// command lists going away).
struct AliasBooks {
  std::mutex mu;
  absl::flat_hash_map<const Device*, AliasBook> of;
};
AliasBooks& Books() {
  static AliasBooks* books = new AliasBooks();
  return *books;
}

// Map-discard aliases alive in this process, and the most alive at once since the last reset
// (CltraceRefDriverPeakAliases).
std::atomic<uint64_t> g_live_aliases{0};
std::atomic<uint64_t> g_peak_aliases{0};

// Adds one hold of `alias` (if it is still alive and still `object_id`'s).
void Hold(AliasBook& book, uint64_t object_id, uint32_t alias) {
  auto it = book.aliases.find(alias);
  if (it != book.aliases.end() && it->second.object_id == object_id) ++it->second.holds;
}

// Drops one hold; true when that was the last (the caller frees the allocation). A hold of an
// alias freed with its resource (and its value perhaps reused since) is ignored.
bool Release(AliasBook& book, uint64_t object_id, uint32_t alias) {
  auto it = book.aliases.find(alias);
  if (it == book.aliases.end() || it->second.object_id != object_id) return false;
  if (--it->second.holds != 0) return false;
  book.aliases.erase(it);
  auto of = book.of_object.find(object_id);
  if (of != book.of_object.end()) {
    of->second.erase(alias);
    if (of->second.empty()) book.of_object.erase(of);
  }
  return true;
}

// Deferred destruction of aliases nobody holds any more: (resource id, allocation).
void FreeAliases(Device* dev, const std::vector<std::pair<uint64_t, uint32_t>>& freed) {
  for (const auto& [object_id, alias] : freed) {
    DeferredDestruction item;
    item.object_id = object_id;
    item.allocation = alias;
    QueueDeferred(dev, std::move(item));
  }
  g_live_aliases.fetch_sub(freed.size(), std::memory_order_relaxed);
}

}  // namespace

void AliasMade(Device* dev, uint64_t object_id, uint32_t alias) {
  {
    std::lock_guard<std::mutex> lock(Books().mu);
    AliasBook& book = Books().of[dev];
    // aliases=with_resource: one more hold nobody drops, so only the resource frees it.
    book.aliases[alias] = AliasBook::Entry{object_id, dev->config.aliases_with_resource ? 2u : 1u};
    book.of_object[object_id].insert(alias);
  }
  const uint64_t live = g_live_aliases.fetch_add(1, std::memory_order_relaxed) + 1;
  uint64_t peak = g_peak_aliases.load(std::memory_order_relaxed);
  while (peak < live && !g_peak_aliases.compare_exchange_weak(peak, live)) {
  }
}

void AliasesHeldToo(Device* dev, const Recording& from) {
  if (from.gpu.renames().empty()) return;
  std::lock_guard<std::mutex> lock(Books().mu);
  AliasBook& book = Books().of[dev];
  for (const auto& [object_id, alias] : from.gpu.renames())
    Hold(book, object_id, static_cast<uint32_t>(alias));
}

void ReleaseRecordingAliases(Device* dev, const Recording& r) {
  if (r.gpu.renames().empty()) return;
  std::vector<std::pair<uint64_t, uint32_t>> freed;
  {
    std::lock_guard<std::mutex> lock(Books().mu);
    AliasBook& book = Books().of[dev];
    for (const auto& [object_id, a] : r.gpu.renames()) {
      const uint32_t alias = static_cast<uint32_t>(a);
      if (Release(book, object_id, alias)) freed.emplace_back(object_id, alias);
    }
  }
  FreeAliases(dev, freed);
}

void AliasesMadeCurrent(Device* dev, const Recording& content) {
  if (content.gpu.renames().empty()) return;
  std::vector<std::pair<uint64_t, uint32_t>> freed;
  {
    std::lock_guard<std::mutex> lock(Books().mu);
    AliasBook& book = Books().of[dev];
    for (const auto& [key, unused] : content.gpu.renames()) {
      std::optional<gpu::AllocationId> now = dev->aliases.Get(key);
      if (!now) continue;
      const uint32_t alias = static_cast<uint32_t>(*now);
      auto [it, inserted] = book.current.try_emplace(key, alias);
      if (!inserted && it->second == alias) continue;
      const uint32_t before = inserted ? 0 : it->second;
      it->second = alias;
      Hold(book, key, alias);
      if (before != 0 && Release(book, key, before)) freed.emplace_back(key, before);
    }
  }
  FreeAliases(dev, freed);
}

void AliasCurrentDropped(Device* dev, uint64_t object_id) {
  std::vector<std::pair<uint64_t, uint32_t>> freed;
  {
    std::lock_guard<std::mutex> lock(Books().mu);
    auto b = Books().of.find(dev);
    if (b == Books().of.end()) return;
    AliasBook& book = b->second;
    auto it = book.current.find(object_id);
    if (it == book.current.end()) return;
    const uint32_t alias = it->second;
    book.current.erase(it);
    if (Release(book, object_id, alias)) freed.emplace_back(object_id, alias);
  }
  FreeAliases(dev, freed);
}

std::vector<uint32_t> TakeObjectAliases(Device* dev, uint64_t object_id) {
  std::vector<uint32_t> out;
  {
    std::lock_guard<std::mutex> lock(Books().mu);
    auto b = Books().of.find(dev);
    if (b == Books().of.end()) return out;
    AliasBook& book = b->second;
    book.current.erase(object_id);
    auto of = book.of_object.find(object_id);
    if (of != book.of_object.end()) {
      out.assign(of->second.begin(), of->second.end());
      book.of_object.erase(of);
    }
    for (uint32_t alias : out) book.aliases.erase(alias);
  }
  std::sort(out.begin(), out.end());  // a fixed order, not the set's
  g_live_aliases.fetch_sub(out.size(), std::memory_order_relaxed);
  return out;
}

void ForgetAliases(Device* dev) {
  std::lock_guard<std::mutex> lock(Books().mu);
  auto b = Books().of.find(dev);
  if (b == Books().of.end()) return;
  g_live_aliases.fetch_sub(b->second.aliases.size(), std::memory_order_relaxed);
  Books().of.erase(b);
}

void DrainDeferred(Device* dev) {
  std::vector<DeferredDestruction> items;
  {
    std::lock_guard<std::mutex> lock(dev->deferred_mu);
    items.swap(dev->deferred);
  }
  // Everything queued was referenced at most by work submitted before this point, and the
  // model GPU has finished it: all of it can go (R68), pfnRenderCb came first (R67).
  for (DeferredDestruction& item : items) {
    if (item.allocation != 0) {
      D3DKMT_HALLOCATION alloc{item.allocation};
      D3DDDICB_DEALLOCATE d{};
      d.NumAllocations = 1;
      d.HandleList = &alloc;
      dev->kt->pfnDeallocateCb(Rt(dev), &d);
    }
    delete[] item.memory;
    if (item.stale_handle != nullptr) {
      // Planted bug R39: "marks" the destroyed command list in memory the runtime owns again.
      static_cast<CommandList*>(item.stale_handle)->magic = 0xdeadu;
    }
  }
}

// ---- IC-only DDIs ----

namespace {

void APIENTRY Flush(D3D10DDI_HDEVICE hDevice) {
  CallScope scope("Flush");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  IcDomainScope domain(dev);
  if (HasCommands(dev)) IcSubmit(dev);
  // Deferred destruction is processed on every Flush, commands or not (CD10, R68).
  if (!dev->config.Has(Bug::kR68)) DrainDeferred(dev);
  if (dev->config.Has(Bug::kR5) && !dev->r5_done) {
    // Planted bug R5: hot-swaps a pfnCreate* slot after CreateDevice.
    dev->r5_done = true;
    dev->ic_table->pfnCreateResource = &CreateResourceHotSwapped;
  }
  MaybeReportRemoved(dev, nullptr);
}

void MapIc(D3D10DDI_HDEVICE hDevice, const char* fn, D3D10DDI_HRESOURCE r,
           D3D10DDI_MAPPED_SUBRESOURCE* out) {
  CallScope scope(fn);
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  IcDomainScope domain(dev);
  IcObject* o = IcArg(r.pDrvPrivate, D3D10DDI_HT_RESOURCE, fn);
  if (o == nullptr || !ArgPresent(out, fn, "pMappedSubResource")) return;
  o->ic_mapped = true;
  out->pData = o->memory;
  out->RowPitch = o->row_pitch;
  out->DepthPitch = o->depth_pitch;
}

void UnmapIc(D3D10DDI_HDEVICE hDevice, const char* fn, D3D10DDI_HRESOURCE r) {
  CallScope scope(fn);
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  IcDomainScope domain(dev);
  if (IcObject* o = IcArg(r.pDrvPrivate, D3D10DDI_HT_RESOURCE, fn)) o->ic_mapped = false;
}

void APIENTRY ResourceMap(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE r, UINT, D3D10_DDI_MAP,
                          D3D10_DDI_MAP_FLAG, D3D10DDI_MAPPED_SUBRESOURCE* out) {
  MapIc(h, "ResourceMap", r, out);
}
void APIENTRY StagingResourceMap(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE r, UINT, D3D10_DDI_MAP,
                                 D3D10_DDI_MAP_FLAG, D3D10DDI_MAPPED_SUBRESOURCE* out) {
  MapIc(h, "StagingResourceMap", r, out);
}
void APIENTRY ResourceUnmap(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE r, UINT) {
  UnmapIc(h, "ResourceUnmap", r);
}
void APIENTRY StagingResourceUnmap(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE r, UINT) {
  UnmapIc(h, "StagingResourceUnmap", r);
}

BOOL APIENTRY ResourceIsStagingBusy(D3D10DDI_HDEVICE hDevice, D3D10DDI_HRESOURCE) {
  CallScope scope("ResourceIsStagingBusy");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return 0;
  IcDomainScope domain(dev);
  return 0;  // the model GPU finishes every submission at once
}

void APIENTRY SetResourceMinLOD(D3D10DDI_HDEVICE hDevice, D3D10DDI_HRESOURCE, FLOAT) {
  CallScope scope("SetResourceMinLOD");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  IcDomainScope domain(dev);
}

void APIENTRY QueryGetData(D3D10DDI_HDEVICE hDevice, D3D10DDI_HQUERY hQuery, VOID* pData, UINT size,
                           UINT flags) {
  CallScope scope("QueryGetData");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  IcDomainScope domain(dev);
  IcObject* q = IcArg(hQuery.pDrvPrivate, D3D10DDI_HT_QUERY, "QueryGetData");
  if (q == nullptr) return;
  if (q->ic_query_state == 2 && q->query_fence > dev->submits &&
      (flags & D3D10_DDI_GET_DATA_DO_NOT_FLUSH) == 0) {
    IcSubmit(dev);  // the query's end must reach the GPU before its data can exist
  }
  if (q->ic_query_state != 2 || q->query_fence > dev->submits) {
    SetErrorIc(dev, static_cast<HRESULT>(DXGI_DDI_ERR_WASSTILLDRAWING));
    return;
  }
  if (pData != nullptr && size > 0) {
    auto* data = static_cast<UINT8*>(pData);
    std::memset(data, 0, size);
    data[0] = 1;  // event: TRUE; counters: a small non-zero value
  }
}

HRESULT APIENTRY PresentDXGI(DXGI_DDI_ARG_PRESENT* p) {
  CallScope scope("PresentDXGI");
  if (!ArgPresent(p, "PresentDXGI", "pPresentData")) return static_cast<HRESULT>(E_INVALIDARG);
  Device* dev = IcDevice(p->hDevice.handle);
  if (dev == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  IcDomainScope domain(dev);
  if (dev->context_created && dev->gpu_ctx->has_pending()) IcSubmit(dev);
  IcObject* surface = IcArg(p->hSurfaceToPresent.handle, D3D10DDI_HT_RESOURCE, "PresentDXGI");
  uint32_t src = IcAllocationOf(dev, surface);
  if (dev->context_created && dev->front_buffer == 0 && src != 0) {
    // The scan-out surface a blt-model present copies into (created at the first present,
    // with the presented surface's size).
    absl::StatusOr<D3DKMT_HALLOCATION> front =
        dev->umd->Allocate(std::max<uint64_t>(surface->byte_size, 16), gpu::kAllocationDescPrimary);
    if (front.ok()) dev->front_buffer = front->value;
  }
  D3DDDICB_PRESENT present{};
  present.hSrcAllocation.value = src;
  present.hDstAllocation.value = dev->front_buffer;
  present.hContext = dev->hcontext;
  HRESULT hr = dev->kt->pfnPresentCb(Rt(dev), &present);
  MaybeReportRemoved(dev, nullptr);
  if (dev->removed.load()) return static_cast<HRESULT>(DXGI_ERROR_DEVICE_REMOVED);
  return hr;
}

// The other DXGI base functions: IC-domain calls with hDevice in their argument structure.
// `what` names the argument structure for reports.
Device* DxgiDevice(const void* p, const void* handle, const char* fn, const char* what) {
  if (!ArgPresent(p, fn, what)) return nullptr;
  return IcDevice(handle);
}

IcObject* DxgiResource(Device*, DXGI_DDI_HRESOURCE r, const char* fn) {
  return IcArg(r.handle, D3D10DDI_HT_RESOURCE, fn);
}

// A gamma ramp of 256 evenly spaced control points over [0, 1], no scale and offset.
HRESULT APIENTRY GetGammaCapsDXGI(DXGI_DDI_ARG_GET_GAMMA_CONTROL_CAPS* p) {
  CallScope scope("GetGammaCapsDXGI");
  Device* dev =
      DxgiDevice(p, p != nullptr ? p->hDevice.handle : nullptr, "GetGammaCapsDXGI", "pGammaData");
  if (dev == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  IcDomainScope domain(dev);
  DXGI_GAMMA_CONTROL_CAPABILITIES* caps = p->pGammaCapabilities;
  if (!ArgPresent(caps, "GetGammaCapsDXGI", "pGammaCapabilities")) {
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  *caps = DXGI_GAMMA_CONTROL_CAPABILITIES{};
  caps->ScaleAndOffsetSupported = 0;
  caps->MaxConvertedValue = 1.0f;
  caps->MinConvertedValue = 0.0f;
  caps->NumGammaControlPoints = 256;
  for (UINT i = 0; i < caps->NumGammaControlPoints; ++i) {
    caps->ControlPointPositions[i] = static_cast<FLOAT>(i) / 255.0f;
  }
  return S_OK;
}

// Scans out the primary: its allocation goes to the kernel through pfnSetDisplayModeCb, the one
// place that callback is legal (R17).
HRESULT APIENTRY SetDisplayModeDXGI(DXGI_DDI_ARG_SETDISPLAYMODE* p) {
  CallScope scope("SetDisplayModeDXGI");
  Device* dev = DxgiDevice(p, p != nullptr ? p->hDevice.handle : nullptr, "SetDisplayModeDXGI",
                           "pDisplayModeData");
  if (dev == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  IcDomainScope domain(dev);
  IcObject* primary = DxgiResource(dev, p->hResource, "SetDisplayModeDXGI");
  const uint32_t allocation = primary != nullptr ? primary->allocation : 0;
  if (allocation == 0) return static_cast<HRESULT>(E_INVALIDARG);
  D3DDDICB_SETDISPLAYMODE mode{};
  mode.hPrimaryAllocation.value = allocation;
  HRESULT hr = dev->kt->pfnSetDisplayModeCb(Rt(dev), &mode);
  if (hr >= 0) dev->front_buffer = allocation;
  return hr;
}

HRESULT APIENTRY SetResourcePriorityDXGI(DXGI_DDI_ARG_SETRESOURCEPRIORITY* p) {
  CallScope scope("SetResourcePriorityDXGI");
  Device* dev = DxgiDevice(p, p != nullptr ? p->hDevice.handle : nullptr, "SetResourcePriorityDXGI",
                           "pPriorityData");
  if (dev == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  IcDomainScope domain(dev);
  IcObject* r = DxgiResource(dev, p->hResource, "SetResourcePriorityDXGI");
  if (r == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  if (r->allocation == 0) return S_OK;  // nothing in video memory to prioritize
  D3DDDICB_SETPRIORITY prio{};
  D3DKMT_HALLOCATION allocation{r->allocation};
  UINT priority = p->Priority;
  prio.NumAllocations = 1;
  prio.HandleList = &allocation;
  prio.pPriorities = &priority;
  return dev->kt->pfnSetPriorityCb(Rt(dev), &prio);
}

// Residency of each resource, from pfnQueryResidencyCb on its allocation.
HRESULT APIENTRY QueryResourceResidencyDXGI(DXGI_DDI_ARG_QUERYRESOURCERESIDENCY* p) {
  CallScope scope("QueryResourceResidencyDXGI");
  Device* dev = DxgiDevice(p, p != nullptr ? p->hDevice.handle : nullptr,
                           "QueryResourceResidencyDXGI", "pResidencyData");
  if (dev == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  IcDomainScope domain(dev);
  if (p->Resources > 0 && (!ArgPresent(p->pResources, "QueryResourceResidencyDXGI", "pResources") ||
                           !ArgPresent(p->pStatus, "QueryResourceResidencyDXGI", "pStatus"))) {
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  for (SIZE_T i = 0; i < p->Resources; ++i) {
    IcObject* r = DxgiResource(dev, p->pResources[i], "QueryResourceResidencyDXGI");
    if (r == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
    p->pStatus[i] = DXGI_DDI_RESIDENCY_FULLY_RESIDENT;  // system-memory resources count as such
    if (r->allocation == 0) continue;
    D3DKMT_HALLOCATION allocation{r->allocation};
    D3DDDI_RESIDENCYSTATUS status = D3DDDI_RESIDENCYSTATUS_NOTRESIDENT;
    D3DDDICB_QUERYRESIDENCY q{};
    q.NumAllocations = 1;
    q.HandleList = &allocation;
    q.pResidencyStatus = &status;
    HRESULT hr = dev->kt->pfnQueryResidencyCb(Rt(dev), &q);
    if (hr < 0) return hr;
    p->pStatus[i] = status == D3DDDI_RESIDENCYSTATUS_RESIDENTINGPUMEMORY
                        ? DXGI_DDI_RESIDENCY_FULLY_RESIDENT
                    : status == D3DDDI_RESIDENCYSTATUS_RESIDENTINSHAREDMEMORY
                        ? DXGI_DDI_RESIDENCY_RESIDENT_IN_SHARED_MEMORY
                        : DXGI_DDI_RESIDENCY_EVICTED_TO_DISK;
  }
  return S_OK;
}

// The swap chain's buffers trade places: resource i takes the storage (allocation and CPU
// backing) of resource i+1, the last takes the first's. Work already recorded keeps the
// allocations it named.
HRESULT APIENTRY RotateResourceIdentitiesDXGI(DXGI_DDI_ARG_ROTATE_RESOURCE_IDENTITIES* p) {
  CallScope scope("RotateResourceIdentitiesDXGI");
  Device* dev = DxgiDevice(p, p != nullptr ? p->hDevice.handle : nullptr,
                           "RotateResourceIdentitiesDXGI", "pRotateData");
  if (dev == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  IcDomainScope domain(dev);
  if (p->Resources == 0) return S_OK;
  if (!ArgPresent(p->pResources, "RotateResourceIdentitiesDXGI", "pResources")) {
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  std::vector<IcObject*> rs;
  for (UINT i = 0; i < p->Resources; ++i) {
    IcObject* r = DxgiResource(dev, p->pResources[i], "RotateResourceIdentitiesDXGI");
    if (r == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
    // Only buffers of one size can trade storage.
    if (!rs.empty() && r->byte_size != rs.front()->byte_size) {
      return static_cast<HRESULT>(E_INVALIDARG);
    }
    rs.push_back(r);
  }
  const uint32_t first_allocation = rs.front()->allocation;
  uint8_t* first_memory = rs.front()->memory;
  for (size_t i = 0; i + 1 < rs.size(); ++i) {
    rs[i]->allocation = rs[i + 1]->allocation;
    rs[i]->memory = rs[i + 1]->memory;
  }
  rs.back()->allocation = first_allocation;
  rs.back()->memory = first_memory;
  return S_OK;
}

// A blt between two resources (a present's copy, a resolve, a conversion or a stretch): a
// copy for the model GPU, like ResourceCopy.
HRESULT APIENTRY BltDXGI(DXGI_DDI_ARG_BLT* p) {
  CallScope scope("BltDXGI");
  Device* dev = DxgiDevice(p, p != nullptr ? p->hDevice.handle : nullptr, "BltDXGI", "pBltData");
  if (dev == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  IcDomainScope domain(dev);
  IcObject* dst = DxgiResource(dev, p->hDstResource, "BltDXGI");
  IcObject* src = DxgiResource(dev, p->hSrcResource, "BltDXGI");
  if (dst == nullptr || src == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  if (uint32_t da = IcAllocationOf(dev, dst), sa = IcAllocationOf(dev, src);
      da != 0 && sa != 0 && da != sa) {
    IcEmit(dev, gpu::Command::Copy(da, sa));
  }
  if (dst->memory != nullptr && src->memory != nullptr && dst != src) {
    std::memmove(dst->memory, src->memory,
                 std::min<uint64_t>({dst->byte_size, src->byte_size, 16}));
  }
  IcWriteGeneric(dev, refcmd::kCopy, reinterpret_cast<uint64_t>(dst),
                 reinterpret_cast<uint64_t>(src));
  MaybeReportRemoved(dev, nullptr);
  if (dev->removed.load()) return static_cast<HRESULT>(DXGI_ERROR_DEVICE_REMOVED);
  return S_OK;
}

}  // namespace

void FillSubmitSlots(D3D11DDI_DEVICEFUNCS* t) {
  t->pfnFlush = &Flush;
  t->pfnResourceMap = &ResourceMap;
  t->pfnResourceUnmap = &ResourceUnmap;
  t->pfnStagingResourceMap = &StagingResourceMap;
  t->pfnStagingResourceUnmap = &StagingResourceUnmap;
  t->pfnResourceIsStagingBusy = &ResourceIsStagingBusy;
  t->pfnSetResourceMinLOD = &SetResourceMinLOD;
  t->pfnQueryGetData = &QueryGetData;
}

void FillDxgiTable(DXGI_DDI_BASE_FUNCTIONS* t) {
  t->pfnPresent = &PresentDXGI;
  t->pfnGetGammaCaps = &GetGammaCapsDXGI;
  t->pfnSetDisplayMode = &SetDisplayModeDXGI;
  t->pfnSetResourcePriority = &SetResourcePriorityDXGI;
  t->pfnQueryResourceResidency = &QueryResourceResidencyDXGI;
  t->pfnRotateResourceIdentities = &RotateResourceIdentitiesDXGI;
  t->pfnBlt = &BltDXGI;
}

}  // namespace cltrace::refdriver

extern "C" __attribute__((visibility("default"))) uint64_t CltraceRefDriverPeakAliases(int reset) {
  const uint64_t peak = cltrace::refdriver::g_peak_aliases.load();
  if (reset != 0)
    cltrace::refdriver::g_peak_aliases.store(cltrace::refdriver::g_live_aliases.load());
  return peak;
}
