// gpu::Dxgkrnl's kernel-thunk callbacks (D3DDDI_DEVICECALLBACKS, ddi-spec §6): allocations
// (DxgkDdiCreateAllocation, VidMm, the content model), contexts and the user-mode command
// buffer / allocation list / patch-location list they hand out in rotation (R74), pfnRenderCb
// and pfnPresentCb building DMA buffers (DxgkDdiRender multipass, DxgkDdiPresent), locks,
// escapes and synchronization objects. Called with Dxgkrnl::Impl::mu held (wddm/dxgkrnl.cc).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "wddm/command_stream.h"
#include "wddm/digest.h"
#include "wddm/internal/dxgkrnl_impl.h"

namespace cltrace::gpu {
namespace {

// What a kernel-thunk callback answers for the KMD's status; E_INVALIDARG for any other.
HRESULT HresultFromNtstatus(NTSTATUS s) {
  struct Mapping {
    uint32_t status;
    uint32_t hr;
  };
  static constexpr Mapping kMappings[] = {
      {STATUS_SUCCESS, S_OK},
      {STATUS_NO_MEMORY, E_OUTOFMEMORY},
      {STATUS_PRIVILEGED_INSTRUCTION, D3DDDIERR_PRIVILEGEDINSTRUCTION},
      {STATUS_ILLEGAL_INSTRUCTION, D3DDDIERR_INVALIDINSTRUCTION},
      {STATUS_INVALID_HANDLE, D3DDDIERR_INVALIDHANDLE},
      {STATUS_INVALID_USER_BUFFER, D3DDDIERR_INVALIDUSERBUFFER},
      {STATUS_GRAPHICS_GPU_EXCEPTION_ON_DEVICE, D3DDDIERR_DEVICEREMOVED},
  };
  for (const Mapping& m : kMappings) {
    if (m.status == static_cast<uint32_t>(s)) return Hr(m.hr);
  }
  return Hr(E_INVALIDARG);
}

}  // namespace

HRESULT Dxgkrnl::Impl::Allocate(KDevice* d, D3DDDICB_ALLOCATE* p) {
  if (p->NumAllocations == 0 || p->pAllocationInfo == nullptr) return Hr(E_INVALIDARG);
  std::vector<DXGK_ALLOCATIONINFO> infos(p->NumAllocations);
  for (UINT i = 0; i < p->NumAllocations; ++i) {
    infos[i].pPrivateDriverData = p->pAllocationInfo[i].pPrivateDriverData;
    infos[i].PrivateDriverDataSize = p->pAllocationInfo[i].PrivateDriverDataSize;
  }
  DXGKARG_CREATEALLOCATION args{};
  args.pPrivateDriverData = p->pPrivateDriverData;
  args.PrivateDriverDataSize = p->PrivateDriverDataSize;
  args.NumAllocations = p->NumAllocations;
  args.pAllocationInfo = infos.data();
  args.Flags = p->hResource != nullptr ? DXGK_CREATEALLOCATIONFLAGS_RESOURCE : 0;
  NTSTATUS s = kmd->DxgkDdiCreateAllocation(kmd_adapter, &args);
  if (s != Nt(STATUS_SUCCESS)) return HresultFromNtstatus(s);
  uint32_t resource = 0;
  if (p->hResource != nullptr) {
    resource = next_resource++;
    p->hKMResource.value = resource;
    rt_resources[{d, p->hResource}] = resource;
  }
  for (UINT i = 0; i < p->NumAllocations; ++i) {
    auto a = std::make_unique<KAllocation>();
    a->id = next_allocation++;
    a->kmd = infos[i].hAllocation;
    a->size = infos[i].Size;
    a->alignment = infos[i].Alignment;
    a->device = d;
    a->resource = resource;
    a->primary = (p->pAllocationInfo[i].Flags & D3DDDI_ALLOCATIONINFO_FLAG_PRIMARY) != 0;
    (void)vidmm.Create(a->id, a->size, a->alignment);  // sizes validated by the KMD
    (void)content.Create(a->id, a->size);
    p->pAllocationInfo[i].hAllocation.value = a->id;
    if (resource != 0) resources[resource].push_back(a->id);
    allocations.emplace(a->id, std::move(a));
  }
  return Hr(S_OK);
}

// Destroys `ids` now (kernel side and KMD). Callers made sure nothing references them.
void Dxgkrnl::Impl::Release(const std::vector<uint32_t>& ids) {
  if (ids.empty()) return;
  std::vector<DXGK_HALLOCATION> handles;
  for (uint32_t id : ids) {
    auto it = allocations.find(id);
    if (it == allocations.end()) continue;
    handles.push_back(it->second->kmd);
    (void)vidmm.Destroy(id);
    (void)content.Destroy(id);
    if (it->second->resource != 0) {
      auto& v = resources[it->second->resource];
      v.erase(std::remove(v.begin(), v.end(), id), v.end());
      if (v.empty()) {
        std::erase_if(rt_resources,
                      [&](const auto& kv) { return kv.second == it->second->resource; });
        resources.erase(it->second->resource);
      }
    }
    allocations.erase(it);
  }
  DXGKARG_DESTROYALLOCATION args{};
  args.NumAllocations = static_cast<UINT>(handles.size());
  args.pAllocationList = handles.data();
  kmd->DxgkDdiDestroyAllocation(kmd_adapter, &args);
}

// The allocations a Deallocate/SetPriority names: every allocation of hResource (the runtime's
// resource handle that Allocate associated them with, if given) followed by the listed
// handles. Empty with false if one is unknown or another device's.
bool Dxgkrnl::Impl::NamedAllocations(KDevice* d, HANDLE resource, const D3DKMT_HALLOCATION* list,
                                     UINT count, std::vector<uint32_t>* ids) {
  ids->clear();
  if (resource != nullptr) {
    auto rt = rt_resources.find({d, resource});
    if (rt == rt_resources.end()) return false;
    auto it = resources.find(rt->second);
    if (it == resources.end()) return false;
    *ids = it->second;
  }
  for (UINT i = 0; i < count; ++i) ids->push_back(list[i].value);
  for (uint32_t id : *ids) {
    KAllocation* a = Alloc(id);
    if (a == nullptr || a->device != d) return false;
  }
  return true;
}

HRESULT Dxgkrnl::Impl::Deallocate(KDevice* d, const D3DDDICB_DEALLOCATE* p) {
  std::vector<uint32_t> ids;
  if (!NamedAllocations(d, p->hResource, p->HandleList, p->NumAllocations, &ids)) {
    return Hr(E_INVALIDARG);
  }
  std::vector<uint32_t> now_ids;
  for (uint32_t id : ids) {
    KAllocation* a = Alloc(id);
    if (a == nullptr || a->zombie) continue;  // listed twice
    a->zombie = true;  // one still queued is freed when the last DMA buffer using it retires
    if (a->queued_refs == 0) now_ids.push_back(id);
  }
  Release(now_ids);
  return Hr(S_OK);
}

HRESULT Dxgkrnl::Impl::SetPriority(KDevice* d, D3DDDICB_SETPRIORITY* p) {
  std::vector<uint32_t> ids;
  if (!NamedAllocations(d, p->hResource, p->HandleList, p->NumAllocations, &ids)) {
    return Hr(E_INVALIDARG);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    UINT prio =
        p->pPriorities == nullptr
            ? 0
            : p->pPriorities[std::min<size_t>(i, p->NumAllocations ? p->NumAllocations - 1 : 0)];
    vidmm.SetPriority(ids[i], prio);
  }
  return Hr(S_OK);
}

HRESULT Dxgkrnl::Impl::QueryResidency(KDevice* d, const D3DDDICB_QUERYRESIDENCY* p) {
  auto status = [&](uint32_t id) {
    return vidmm.VideoAddress(id) != 0 ? D3DDDI_RESIDENCYSTATUS_RESIDENTINGPUMEMORY
                                       : D3DDDI_RESIDENCYSTATUS_NOTRESIDENT;
  };
  if (p->hResource != nullptr) {  // the resource's lowest residency, in the first element
    std::vector<uint32_t> ids;
    if (!NamedAllocations(d, p->hResource, nullptr, 0, &ids) || p->pResidencyStatus == nullptr)
      return Hr(E_INVALIDARG);
    D3DDDI_RESIDENCYSTATUS lowest = D3DDDI_RESIDENCYSTATUS_RESIDENTINGPUMEMORY;
    for (uint32_t id : ids) lowest = std::max(lowest, status(id));
    p->pResidencyStatus[0] = lowest;
    return Hr(S_OK);
  }
  for (UINT i = 0; i < p->NumAllocations; ++i) {
    KAllocation* a = Alloc(p->HandleList[i].value);
    if (a == nullptr || a->device != d) return Hr(E_INVALIDARG);
  }
  for (UINT i = 0; i < p->NumAllocations; ++i) {
    p->pResidencyStatus[i] = status(p->HandleList[i].value);
  }
  return Hr(S_OK);
}

HRESULT Dxgkrnl::Impl::SetDisplayMode(KDevice* d, D3DDDICB_SETDISPLAYMODE* p) {
  KAllocation* a = Alloc(p->hPrimaryAllocation.value);
  if (a == nullptr || a->device != d) return Hr(E_INVALIDARG);
  d->primary = a->id;
  p->PrivateDriverFormatAttribute = 0;
  return Hr(S_OK);
}

HRESULT Dxgkrnl::Impl::CreateContext(KDevice* d, D3DDDICB_CREATECONTEXT* p) {
  DXGKARG_CREATECONTEXT args{};
  args.NodeOrdinal = p->NodeOrdinal;
  args.EngineAffinity = p->EngineAffinity;
  args.Flags = 0;
  args.pPrivateDriverData = p->pPrivateDriverData;
  args.PrivateDriverDataSize = p->PrivateDriverDataSize;
  NTSTATUS s = kmd->DxgkDdiCreateContext(d->kmd, &args);
  if (s != Nt(STATUS_SUCCESS)) return HresultFromNtstatus(s);
  auto c = std::make_unique<KContext>();
  c->id = next_context++;
  c->device = d;
  c->kmd = args.hContext;
  c->node = p->NodeOrdinal;
  c->info = args.ContextInfo;
  const uint32_t n = std::max<uint32_t>(1, options.command_buffers_per_context);
  c->cmd.resize(n);
  c->alloc_lists.resize(n);
  c->patch_lists.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    c->cmd[i].assign(c->info.DmaBufferSize / 4, kPoisonWord);
    c->alloc_lists[i].resize(c->info.AllocationListSize);
    c->patch_lists[i].resize(c->info.PatchLocationListSize);
  }
  p->hContext = CtxHandle(c->id);
  HandOut(c.get(), &p->pCommandBuffer, &p->CommandBufferSize, &p->pAllocationList,
          &p->AllocationListSize, &p->pPatchLocationList, &p->PatchLocationListSize);
  p->CommandBuffer = 0;  // no GPU virtual addressing in the model
  contexts.emplace(c->id, std::move(c));
  return Hr(S_OK);
}

void Dxgkrnl::Impl::HandOut(KContext* c, PVOID* cmd, UINT* cmd_size, PVOID* alloc, UINT* alloc_size,
                            PVOID* patch, UINT* patch_size) {
  auto& buf = c->cmd[c->current];
  std::fill(buf.begin(), buf.end(), kPoisonWord);  // R74: unwritten words decode as poison
  *cmd = buf.data();
  *cmd_size = static_cast<UINT>(buf.size() * 4);
  *alloc = c->alloc_lists[c->current].data();
  *alloc_size = static_cast<UINT>(c->alloc_lists[c->current].size());
  *patch = c->patch_lists[c->current].data();
  *patch_size = static_cast<UINT>(c->patch_lists[c->current].size());
}

// A free DMA buffer of at least `min_bytes` from the context's pool; waits (in virtual time)
// for one to retire when the pool is at its limit.
Dxgkrnl::Impl::DmaBuf* Dxgkrnl::Impl::GetDmaBuffer(KContext* c, uint32_t min_bytes) {
  auto free_buf = [&]() -> DmaBuf* {
    for (auto& b : c->dma_pool) {
      if (!b->busy && b->words.size() * 4 >= min_bytes) return b.get();
    }
    return nullptr;
  };
  DmaBuf* b = free_buf();
  if (b == nullptr && c->dma_pool.size() >= options.dma_buffers_per_context) {
    sched.RunUntilCondition([&] { return free_buf() != nullptr; });  // virtual-time wait
    b = free_buf();
  }
  if (b == nullptr) {
    c->dma_pool.push_back(NewDmaBuf(min_bytes, c->info.PatchLocationListSize));
    b = c->dma_pool.back().get();
  }
  b->busy = true;
  return b;
}

HRESULT Dxgkrnl::Impl::Render(KDevice* d, D3DDDICB_RENDER* p) {
  ++stats.renders;
  KContext* c = Ctx(d, p->hContext);
  if (c == nullptr) {
    Violation(
        rules::Rule::kR74,
        absl::StrFormat(
            "pfnRenderCb on context %u that pfnCreateContextCb did not create for this device",
            CtxId(p->hContext)));
    return Hr(E_INVALIDARG);
  }
  const auto& cmd = c->cmd[c->current];
  const auto& alist = c->alloc_lists[c->current];
  const auto& plist = c->patch_lists[c->current];
  const uint64_t cmd_bytes = cmd.size() * 4;
  HRESULT hr = Hr(S_OK);
  if (static_cast<uint64_t>(p->CommandOffset) + p->CommandLength > cmd_bytes ||
      p->NumAllocations > alist.size() || p->NumPatchLocations > plist.size()) {
    Violation(
        rules::Rule::kR74,
        absl::StrFormat(
            "pfnRenderCb on context %u: CommandOffset %u + CommandLength %u / NumAllocations %u "
            "/ "
            "NumPatchLocations %u exceed the buffers handed out last (%u bytes, %u, %u entries)",
            c->id, p->CommandOffset, p->CommandLength, p->NumAllocations, p->NumPatchLocations,
            cmd_bytes, alist.size(), plist.size()));
    hr = Hr(D3DDDIERR_INVALIDUSERBUFFER);
  } else if (p->CommandOffset % 4 != 0 || p->CommandLength % 4 != 0) {
    hr = Hr(D3DDDIERR_INVALIDUSERBUFFER);
  } else if (p->CommandLength > 0) {
    const size_t first = p->CommandOffset / 4;
    if (cmd[first] == kPoisonWord) {
      Violation(
          rules::Rule::kR74,
          absl::StrFormat(
              "pfnRenderCb on context %u: the %u command bytes at offset %u were not written in "
              "the command buffer the last pfnCreateContextCb/pfnRenderCb returned",
              c->id, p->CommandLength, p->CommandOffset));
      hr = Hr(D3DDDIERR_INVALIDUSERBUFFER);
    } else {
      hr = BuildDma(c, cmd.data() + first, p->CommandLength, alist.data(), p->NumAllocations,
                    plist.data(), p->NumPatchLocations);
    }
  }
  // The next buffers, with the resizes asked for (R74: the UMD must re-read the sizes).
  c->current = (c->current + 1) % c->cmd.size();
  auto want = [&](uint32_t flag, UINT requested, UINT dflt, UINT max) -> UINT {
    if ((p->Flags & flag) == 0 || requested == 0) return dflt;
    return requested <= max ? requested : dflt;
  };
  UINT cmd_size = want(D3DDDICB_RENDERFLAGS_RESIZECOMMANDBUFFER, p->NewCommandBufferSize,
                       c->info.DmaBufferSize, options.max_command_buffer_size);
  UINT al_size = want(D3DDDICB_RENDERFLAGS_RESIZEALLOCATIONLIST, p->NewAllocationListSize,
                      c->info.AllocationListSize, 4 * c->info.AllocationListSize);
  UINT pl_size = want(D3DDDICB_RENDERFLAGS_RESIZEPATCHLOCATIONLIST, p->NewPatchLocationListSize,
                      c->info.PatchLocationListSize, 4 * c->info.PatchLocationListSize);
  c->cmd[c->current].resize((cmd_size + 3) / 4);
  c->alloc_lists[c->current].resize(al_size);
  c->patch_lists[c->current].resize(pl_size);
  HandOut(c, &p->pNewCommandBuffer, &p->NewCommandBufferSize, &p->pNewAllocationList,
          &p->NewAllocationListSize, &p->pNewPatchLocationList, &p->NewPatchLocationListSize);
  p->NewCommandBuffer = 0;
  p->QueuedBufferCount = c->outstanding;
  return hr;
}

DXGK_ALLOCATIONLIST Dxgkrnl::Impl::KernelListEntry(const KAllocation* a, bool write) {
  DXGK_ALLOCATIONLIST e{};
  e.hDeviceSpecificAllocation = a->kmd;
  e.WriteOperation = write ? 1 : 0;
  e.SegmentId = vidmm.SegmentOf(a->id);
  e.PhysicalAddress = static_cast<PHYSICAL_ADDRESS>(vidmm.VideoAddress(a->id));
  return e;
}

void Dxgkrnl::Impl::QueueDmaPacket(KContext* c, DmaBuf* b, const void* dma_end,
                                   const void* patches_end, std::vector<DXGK_ALLOCATIONLIST> kl,
                                   std::vector<uint32_t> ids, bool present) {
  auto pk = std::make_unique<Packet>();
  pk->ctx = c;
  pk->dma = b;
  pk->dma_bytes =
      static_cast<uint32_t>(static_cast<const uint32_t*>(dma_end) - b->words.data()) * 4;
  pk->num_patches = static_cast<uint32_t>(
      static_cast<const D3DDDI_PATCHLOCATIONLIST*>(patches_end) - b->patches.data());
  pk->allocs = std::move(kl);
  pk->alloc_ids = std::move(ids);
  pk->present = present;
  QueuePacket(std::move(pk));
}

HRESULT Dxgkrnl::Impl::BuildDma(KContext* c, const uint32_t* cmd, UINT length,
                                const UserAllocationListEntry* alist, UINT nalloc,
                                const D3DDDI_PATCHLOCATIONLIST* plist, UINT npatch) {
  // Kernel allocation list from the user one.
  std::vector<DXGK_ALLOCATIONLIST> kl(nalloc);
  std::vector<uint32_t> ids(nalloc);
  for (UINT i = 0; i < nalloc; ++i) {
    KAllocation* a = Alloc(alist[i].hAllocation.value);
    if (a == nullptr || a->device != c->device) return Hr(D3DDDIERR_INVALIDHANDLE);
    if (a->locked) return Hr(D3DDDIERR_CANTRENDERLOCKEDALLOCATION);
    kl[i] = KernelListEntry(a, (alist[i].Flags & kAllocationListWriteOperation) != 0);
    ids[i] = a->id;
  }
  UINT offset = 0;
  uint32_t dma_bytes = c->info.DmaBufferSize;
  for (;;) {
    DmaBuf* b = GetDmaBuffer(c, dma_bytes);
    DXGKARG_RENDER args{};
    args.pCommand = const_cast<uint32_t*>(cmd);
    args.CommandLength = length;
    args.pDmaBuffer = b->words.data();
    args.DmaSize = static_cast<UINT>(b->words.size() * 4);
    args.pAllocationList = kl.data();
    args.AllocationListSize = nalloc;
    args.pPatchLocationListIn = plist;
    args.PatchLocationListInSize = npatch;
    args.pPatchLocationListOut = b->patches.data();
    args.PatchLocationListOutSize = static_cast<UINT>(b->patches.size());
    args.MultipassOffset = offset;
    args.DmaBufferSegmentId = 0;
    args.DmaBufferPhysicalAddress = static_cast<PHYSICAL_ADDRESS>(b->phys);
    NTSTATUS s = kmd->DxgkDdiRender(c->kmd, &args);
    const bool more = s == Nt(STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER);
    if (s == Nt(STATUS_NO_MEMORY) && dma_bytes < 4 * options.max_command_buffer_size) {
      // One command does not fit an empty DMA buffer: retry with a larger one.
      b->busy = false;
      dma_bytes *= 2;
      continue;
    }
    if (s != Nt(STATUS_SUCCESS) && !more) {
      b->busy = false;
      return HresultFromNtstatus(s);
    }
    QueueDmaPacket(c, b, args.pDmaBuffer, args.pPatchLocationListOut, kl, ids,
                   /*present=*/false);
    if (!more) return Hr(S_OK);
    if (args.MultipassOffset <= offset || args.MultipassOffset > length) {
      return Hr(E_INVALIDARG);  // the KMD made no progress; avoid looping forever
    }
    offset = args.MultipassOffset;
    dma_bytes = c->info.DmaBufferSize;
  }
}

HRESULT Dxgkrnl::Impl::Present(KDevice* d, const D3DDDICB_PRESENT* p) {
  ++stats.presents;
  KContext* c = Ctx(d, p->hContext);
  if (c == nullptr) return Hr(E_INVALIDARG);
  KAllocation* src = Alloc(p->hSrcAllocation.value);
  uint32_t dst_id = p->hDstAllocation.value != 0 ? p->hDstAllocation.value : d->primary;
  KAllocation* dst = Alloc(dst_id);
  if (src == nullptr || dst == nullptr || src->device != d || dst->device != d) {
    return Hr(E_INVALIDARG);
  }
  std::vector<DXGK_ALLOCATIONLIST> kl(2);
  const KAllocation* pair[2] = {src, dst};
  for (int i = 0; i < 2; ++i) kl[i] = KernelListEntry(pair[i], /*write=*/i == 1);
  DmaBuf* b = GetDmaBuffer(c, c->info.DmaBufferSize);
  DXGKARG_PRESENT args{};
  args.pDmaBuffer = b->words.data();
  args.DmaSize = static_cast<UINT>(b->words.size() * 4);
  args.pAllocationList = kl.data();
  args.AllocationListSize = 2;
  args.pPatchLocationList = b->patches.data();
  args.PatchLocationListSize = static_cast<UINT>(b->patches.size());
  args.Flags = DXGK_PRESENTFLAGS_BLT;
  NTSTATUS s = kmd->DxgkDdiPresent(c->kmd, &args);
  if (s != Nt(STATUS_SUCCESS)) {
    b->busy = false;
    return HresultFromNtstatus(s);
  }
  QueueDmaPacket(c, b, args.pDmaBuffer, args.pPatchLocationList, std::move(kl), {src->id, dst->id},
                 /*present=*/true);
  return Hr(S_OK);
}

HRESULT Dxgkrnl::Impl::Lock(KDevice* d, D3DDDICB_LOCK* p) {
  KAllocation* a = Alloc(p->hAllocation.value);
  if (a == nullptr || a->device != d || a->locked) return Hr(E_INVALIDARG);
  if (a->queued_refs > 0) {
    if (p->Flags & D3DDDICB_LOCKFLAGS_DONOTWAIT) return Hr(D3DDDIERR_WASSTILLDRAWING);
    const uint32_t id = a->id;
    sched.RunUntilCondition([&] { return allocations.at(id)->queued_refs == 0; });
    if (a->queued_refs > 0) return Hr(D3DDDIERR_WASSTILLDRAWING);  // blocked forever
  }
  if (a->shadow.size() != a->size) a->shadow.assign(a->size, 0);
  a->locked = true;
  a->lock_write = (p->Flags & D3DDDICB_LOCKFLAGS_READONLY) == 0;
  p->pData = a->shadow.data();
  return Hr(S_OK);
}

HRESULT Dxgkrnl::Impl::Unlock(KDevice* d, const D3DDDICB_UNLOCK* p) {
  for (UINT i = 0; i < p->NumAllocations; ++i) {
    KAllocation* a = Alloc(p->phAllocations[i].value);
    if (a == nullptr || a->device != d || !a->locked) return Hr(E_INVALIDARG);
  }
  for (UINT i = 0; i < p->NumAllocations; ++i) {
    KAllocation* a = Alloc(p->phAllocations[i].value);
    // The CPU wrote through the mapping: the content becomes what the shadow holds.
    if (a->lock_write)
      (void)content.Update(a->id, 0, a->size, HashBytes(a->shadow.data(), a->size));
    a->locked = false;
  }
  return Hr(S_OK);
}

HRESULT Dxgkrnl::Impl::Escape(KDevice* d, const D3DDDICB_ESCAPE* p) {
  if (p->pPrivateDriverData == nullptr || p->PrivateDriverDataSize != sizeof(EscapeData)) {
    return Hr(E_INVALIDARG);
  }
  auto* e = static_cast<EscapeData*>(p->pPrivateDriverData);
  KAllocation* a = Alloc(e->hAllocation);
  if (a == nullptr || a->device != d) return Hr(E_INVALIDARG);
  switch (e->code) {
    case kEscapeQueryDigest:
      e->result = content.Digest(a->id).value_or(0);
      return Hr(S_OK);
    case kEscapeQueryResidency:
      e->result = vidmm.SegmentOf(a->id);
      return Hr(S_OK);
  }
  return Hr(E_INVALIDARG);
}

HRESULT Dxgkrnl::Impl::CreateOverlay(KDevice*, D3DDDICB_CREATEOVERLAY* p) {
  // One video present source (0); its display has no overlay plane.
  if (p->VidPnSourceId != 0) return Hr(E_INVALIDARG);
  if (Alloc(p->OverlayInfo.hAllocation.value) == nullptr) return Hr(E_INVALIDARG);
  p->hKernelOverlay = 0;
  return Hr(D3DDDIERR_NOTAVAILABLE);
}

HRESULT Dxgkrnl::Impl::UpdateOverlay(KDevice*, const D3DDDICB_UPDATEOVERLAY*) {
  return Hr(E_INVALIDARG);  // no overlay was ever created
}

HRESULT Dxgkrnl::Impl::FlipOverlay(KDevice*, const D3DDDICB_FLIPOVERLAY*) {
  return Hr(E_INVALIDARG);
}

HRESULT Dxgkrnl::Impl::DestroyOverlay(KDevice*, const D3DDDICB_DESTROYOVERLAY*) {
  return Hr(E_INVALIDARG);
}

HRESULT Dxgkrnl::Impl::SetAsyncCallbacks(KDevice* d, BOOL enable) {
  d->async_callbacks = enable != 0;
  return Hr(S_OK);
}

HRESULT Dxgkrnl::Impl::SetDisplayPrivateDriverFormat(
    KDevice* d, const D3DDDICB_SETDISPLAYPRIVATEDRIVERFORMAT* p) {
  if (p->VidPnSourceId != 0) return Hr(E_INVALIDARG);
  d->private_driver_format = p->PrivateDriverFormatAttribute;
  return Hr(S_OK);
}

void Dxgkrnl::Impl::DrainContext(KContext* c) {
  sched.RunUntilCondition([&] { return c->outstanding == 0 && c->queue.empty(); });
}

HRESULT Dxgkrnl::Impl::DestroyContext(KDevice* d, const D3DDDICB_DESTROYCONTEXT* p) {
  KContext* c = Ctx(d, p->hContext);
  if (c == nullptr) return Hr(E_INVALIDARG);
  DrainContext(c);
  DestroyContextNow(c);
  return Hr(S_OK);
}

void Dxgkrnl::Impl::DestroyContextNow(KContext* c) {
  for (Packet* pk : c->queue) {  // only blocked waits/signals can remain
    delete pk;
  }
  c->queue.clear();
  for (auto& b : c->dma_pool) gpu.UnmapDmaMemory(b->phys);
  kmd->DxgkDdiDestroyContext(c->kmd);
  contexts.erase(c->id);
}

HRESULT Dxgkrnl::Impl::CreateSync(KDevice* d, D3DDDICB_CREATESYNCHRONIZATIONOBJECT* p) {
  auto s = std::make_unique<KSync>();
  s->id = next_sync++;
  s->device = d;
  s->type = p->Info.Type;
  switch (p->Info.Type) {
    case D3DDDI_SYNCHRONIZATION_MUTEX:
      s->max_count = 1;
      s->count = p->Info.SynchronizationMutex.InitialState ? 1 : 0;
      break;
    case D3DDDI_SEMAPHORE:
      if (p->Info.Semaphore.InitialCount > p->Info.Semaphore.MaxCount) return Hr(E_INVALIDARG);
      s->max_count = p->Info.Semaphore.MaxCount;
      s->count = p->Info.Semaphore.InitialCount;
      break;
    case D3DDDI_FENCE:
      s->max_count = 1;
      s->count = 0;
      break;
    default:
      return Hr(E_INVALIDARG);  // CPU notifications / monitored fences: not modelled
  }
  p->hSyncObject.value = s->id;
  syncs.emplace(s->id, std::move(s));
  return Hr(S_OK);
}

HRESULT Dxgkrnl::Impl::DestroySync(KDevice* d, const D3DDDICB_DESTROYSYNCHRONIZATIONOBJECT* p) {
  auto it = syncs.find(p->hSyncObject.value);
  if (it == syncs.end() || it->second->device != d) return Hr(E_INVALIDARG);
  syncs.erase(it);
  return Hr(S_OK);
}

HRESULT Dxgkrnl::Impl::QueueSyncPacket(KDevice* d, HANDLE hc, UINT count,
                                       const D3DKMT_HSYNCOBJECT* handles, Packet::Kind kind) {
  KContext* c = Ctx(d, hc);
  if (c == nullptr || count == 0 || count > 32) return Hr(E_INVALIDARG);
  auto pk = std::make_unique<Packet>();
  pk->kind = kind;
  pk->ctx = c;
  for (UINT i = 0; i < count; ++i) {
    auto it = syncs.find(handles[i].value);
    if (it == syncs.end() || it->second->device != d) return Hr(E_INVALIDARG);
    pk->sync_objects.push_back(handles[i].value);
  }
  pk->seq = next_seq++;
  c->queue.push_back(pk.release());
  KickVidSch(c->node);
  return Hr(S_OK);
}
}  // namespace cltrace::gpu
