// The reference driver's kernel side of the IC: the command buffer from pfnCreateContextCb /
// pfnRenderCb, submission with amortized processing (R71), deferred destruction drained in
// every Flush and before DestroyDevice returns (R67-R70), and the IC-only DDIs (Flush, generic
// and staging maps, QueryGetData, PresentDXGI).
#include <algorithm>
#include <cstring>

#include "refdriver/internal/common.h"
#include "refdriver/internal/ops.h"
#include "refdriver/internal/tables.h"

namespace cltrace::refdriver {
namespace {

// The D3DDDI_ALLOCATIONLIST layout (runtime/kernel.h AllocationListEntry).
struct AllocationListEntry {
  uint32_t hAllocation;
  uint32_t flags;
};

constexpr uint32_t kMagicSize = sizeof(refcmd::Generic);

D3DRTDEVICEHANDLE Rt(Device* dev) { return D3DRTDEVICEHANDLE{dev->rt_device.handle}; }

void StartBuffer(Device* dev) {
  CommandBuffer& cb = dev->cb;
  cb.used = 0;
  cb.allocation_count = 0;
  dev->pending_allocations.clear();
  if (cb.base != nullptr && cb.size >= kMagicSize) {
    refcmd::Generic magic{{refcmd::kNop, kMagicSize}, refcmd::kStreamMagic, 0, 0};
    std::memcpy(cb.base, &magic, kMagicSize);
    cb.used = kMagicSize;
  }
  cb.preamble_end = cb.used;
}

}  // namespace

bool HasCommands(Device* dev) { return dev->cb.used > dev->cb.preamble_end; }

namespace {

void Pump(Device* dev) {
  if (dev->config.Has(Bug::kR71)) return;  // planted bug R71: never pumps
  PFND3D11DDI_PERFORM_AMORTIZED_PROCESSING_CB pump =
      dev->config.Has(Bug::kR6) ? dev->cached_amortized
                                : dev->callbacks->pfnPerformAmortizedProcessingCb;
  pump(dev->rt_core_layer);
}

}  // namespace

HRESULT CreateGpuContext(Device* dev) {
  D3DDDICB_CREATECONTEXT cc{};
  HRESULT hr = dev->kt->pfnCreateContextCb(Rt(dev), &cc);
  if (hr != S_OK) return hr;
  dev->hcontext = cc.hContext.value;
  dev->cb.base = static_cast<uint8_t*>(cc.pCommandBuffer);
  dev->cb.size = cc.CommandBufferSize;
  dev->cb.allocation_list = cc.pAllocationList;
  dev->cb.allocation_list_size = cc.AllocationListSize;
  dev->cb.patch_list = cc.pPatchLocationList;
  dev->cb.patch_list_size = cc.PatchLocationListSize;
  dev->context_created = true;
  StartBuffer(dev);
  return S_OK;
}

void DestroyGpuContext(Device* dev) {
  if (!dev->context_created) return;
  D3DDDICB_DESTROYCONTEXT dc{};
  dc.hContext.value = dev->hcontext;
  dev->kt->pfnDestroyContextCb(Rt(dev), &dc);
  dev->context_created = false;
}

void IcSubmit(Device* dev) {
  if (!dev->context_created) return;
  CommandBuffer& cb = dev->cb;
  D3DDDICB_RENDER r{};
  r.CommandLength = cb.used;
  r.CommandOffset = 0;
  r.NumAllocations = cb.allocation_count;
  r.NumPatchLocations = 0;
  r.NewCommandBufferSize = cb.size;
  r.NewAllocationListSize = cb.allocation_list_size;
  r.NewPatchLocationListSize = cb.patch_list_size;
  r.hContext.value = dev->hcontext;
  HRESULT hr = dev->kt->pfnRenderCb(Rt(dev), &r);
  if (hr == S_OK) {
    // The returned buffers replace the current ones; sizes are re-read every time (R74).
    cb.base = static_cast<uint8_t*>(r.pNewCommandBuffer);
    cb.size = r.NewCommandBufferSize;
    cb.allocation_list = r.pNewAllocationList;
    cb.allocation_list_size = r.NewAllocationListSize;
    cb.patch_list = r.pNewPatchLocationList;
    cb.patch_list_size = r.NewPatchLocationListSize;
  }
  ++dev->submits;
  StartBuffer(dev);
  Pump(dev);
  RefreshPreamble(dev);
  dev->cb.preamble_end = dev->cb.used;  // state re-emitted, nothing to submit yet
}

void IcWrite(Device* dev, const void* record, uint32_t size) {
  CommandBuffer& cb = dev->cb;
  if (cb.base == nullptr) return;
  if (cb.used + size > cb.size) IcSubmit(dev);
  if (cb.used + size > cb.size) return;  // a record larger than a whole buffer: dropped
  std::memcpy(cb.base + cb.used, record, size);
  cb.used += size;
}

void IcWriteGeneric(Device* dev, uint32_t opcode, uint64_t a, uint64_t b, uint64_t c) {
  refcmd::Generic g{{opcode, sizeof(refcmd::Generic)}, a, b, c};
  IcWrite(dev, &g, sizeof(g));
}

void IcReference(Device* dev, uint32_t allocation) {
  if (allocation == 0 || dev->pending_allocations.contains(allocation)) return;
  CommandBuffer& cb = dev->cb;
  if (cb.allocation_count >= cb.allocation_list_size) IcSubmit(dev);
  if (cb.allocation_list == nullptr || cb.allocation_count >= cb.allocation_list_size) return;
  static_cast<AllocationListEntry*>(cb.allocation_list)[cb.allocation_count++] =
      AllocationListEntry{allocation, 1};
  dev->pending_allocations.insert(allocation);
}

void IcSplice(Device* dev, const Recording& content, uint64_t cl_id) {
  for (uint32_t a : content.allocations) IcReference(dev, a);
  IcWriteGeneric(dev, refcmd::kExecuteBegin, cl_id);
  size_t offset = 0;
  const std::vector<uint8_t>& s = content.stream;
  while (offset + sizeof(refcmd::Header) <= s.size()) {
    refcmd::Header h;
    std::memcpy(&h, s.data() + offset, sizeof(h));
    if (h.size < sizeof(h) || offset + h.size > s.size()) break;
    IcWrite(dev, s.data() + offset, h.size);
    offset += h.size;
  }
  IcWriteGeneric(dev, refcmd::kExecuteEnd, cl_id);
}

void QueueDeferred(Device* dev, DeferredDestruction item) {
  std::lock_guard<std::mutex> lock(dev->deferred_mu);
  dev->deferred.push_back(std::move(item));
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

BOOL APIENTRY Flush(D3D10DDI_HDEVICE hDevice, D3D11_1DDI_FLUSH_FLAGS flags) {
  CallScope scope("Flush");
  Device* dev = AsDevice(hDevice);
  IcDomainScope domain(dev);
  bool pending = HasCommands(dev);
  if (pending) IcSubmit(dev);
  (void)flags;  // FLUSH_UNLESS_NO_COMMANDS only skips an empty submit, which never happens here
  // Deferred destruction is processed on every Flush, commands or not (CD10, R68).
  if (!dev->config.Has(Bug::kR68)) DrainDeferred(dev);
  if (dev->config.Has(Bug::kR5) && !dev->r5_done) {
    // Planted bug R5: hot-swaps a pfnCreate* slot after CreateDevice.
    dev->r5_done = true;
    dev->ic_table->pfnCreateResource = &CreateResourceHotSwapped;
  }
  MaybeReportRemoved(dev, nullptr);
  return pending ? 1 : 0;
}

void MapIc(D3D10DDI_HDEVICE hDevice, const char* fn, D3D10DDI_HRESOURCE r,
           D3D10DDI_MAPPED_SUBRESOURCE* out) {
  CallScope scope(fn);
  Device* dev = AsDevice(hDevice);
  IcDomainScope domain(dev);
  IcObject* o = AsIc(r.pDrvPrivate);
  if (o == nullptr || out == nullptr) return;
  o->ic_mapped = true;
  out->pData = o->memory;
  out->RowPitch = static_cast<UINT>(std::min<uint64_t>(o->byte_size, 1u << 20));
  out->DepthPitch = out->RowPitch;
}

void UnmapIc(D3D10DDI_HDEVICE hDevice, const char* fn, D3D10DDI_HRESOURCE r) {
  CallScope scope(fn);
  Device* dev = AsDevice(hDevice);
  IcDomainScope domain(dev);
  if (IcObject* o = AsIc(r.pDrvPrivate)) o->ic_mapped = false;
}

void APIENTRY ResourceMap(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE r, UINT, D3D10_DDI_MAP,
                          D3D10_DDI_MAP_FLAGS, D3D10DDI_MAPPED_SUBRESOURCE* out) {
  MapIc(h, "ResourceMap", r, out);
}
void APIENTRY StagingResourceMap(D3D10DDI_HDEVICE h, D3D10DDI_HRESOURCE r, UINT, D3D10_DDI_MAP,
                                 D3D10_DDI_MAP_FLAGS, D3D10DDI_MAPPED_SUBRESOURCE* out) {
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
  IcDomainScope domain(AsDevice(hDevice));
  return 0;  // the model GPU finishes every submission at once
}

void APIENTRY SetResourceMinLOD(D3D10DDI_HDEVICE hDevice, D3D10DDI_HRESOURCE, FLOAT) {
  CallScope scope("SetResourceMinLOD");
  IcDomainScope domain(AsDevice(hDevice));
}

void APIENTRY QueryGetData(D3D10DDI_HDEVICE hDevice, D3D10DDI_HQUERY hQuery, UINT8* data, UINT size,
                           D3D10_DDI_GET_DATA_FLAGS flags) {
  CallScope scope("QueryGetData");
  Device* dev = AsDevice(hDevice);
  IcDomainScope domain(dev);
  IcObject* q = AsIc(hQuery.pDrvPrivate);
  if (q == nullptr) return;
  if (q->ic_query_state == 2 && q->query_fence > dev->submits &&
      (flags & D3D10_DDI_GET_DATA_DO_NOT_FLUSH) == 0) {
    IcSubmit(dev);  // the query's end must reach the GPU before its data can exist
  }
  if (q->ic_query_state != 2 || q->query_fence > dev->submits) {
    SetErrorIc(dev, static_cast<HRESULT>(DXGI_DDI_ERR_WASSTILLDRAWING));
    return;
  }
  if (data != nullptr && size > 0) {
    std::memset(data, 0, size);
    data[0] = 1;  // event: TRUE; counters: a small non-zero value
  }
}

HRESULT APIENTRY PresentDXGI(DXGI_DDI_ARG_PRESENT* p) {
  CallScope scope("PresentDXGI");
  Device* dev = static_cast<Device*>(p->hDevice.handle);
  IcDomainScope domain(dev);
  if (HasCommands(dev)) IcSubmit(dev);
  D3DDDICB_PRESENT present{};
  if (IcObject* surface = AsIc(p->hSurfaceToPresent.handle)) {
    present.hSrcAllocation.value = surface->allocation;
  }
  present.hContext.value = dev->hcontext;
  HRESULT hr = dev->kt->pfnPresentCb(Rt(dev), &present);
  MaybeReportRemoved(dev, nullptr);
  if (dev->removed.load()) return static_cast<HRESULT>(DXGI_ERROR_DEVICE_REMOVED);
  return hr;
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

void FillDxgiTable(DXGI_DDI_BASE_FUNCTIONS* t) { t->pfnPresent = &PresentDXGI; }

}  // namespace cltrace::refdriver
