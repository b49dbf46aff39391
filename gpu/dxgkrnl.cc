#include "gpu/dxgkrnl.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "gpu/command_stream.h"
#include "gpu/content_model.h"
#include "gpu/digest.h"
#include "gpu/internal/vidmm.h"
#include "gpu/kernel_abi.h"

namespace cltrace::gpu {
namespace {

constexpr uint32_t kDeviceMagic = 0x4B444556;   // "KDEV"
constexpr uint64_t kDmaBase = 0x4000000000ull;  // physical addresses of DMA/paging buffers
constexpr uint32_t kPagingBufferBytes = 4096;

thread_local const char* t_kernel_context = nullptr;

// Marks the kernel thread an event runs on (nests: an event never runs inside another, but a
// kernel-thunk call may run events).
class ScopedKernelContext {
 public:
  explicit ScopedKernelContext(const char* name) : saved_(t_kernel_context) {
    t_kernel_context = name;
  }
  ~ScopedKernelContext() { t_kernel_context = saved_; }

 private:
  const char* saved_;
};

HRESULT HresultFromNtstatus(NTSTATUS s) {
  switch (static_cast<uint32_t>(s)) {
    case STATUS_SUCCESS:
      return Hr(S_OK);
    case STATUS_NO_MEMORY:
      return Hr(E_OUTOFMEMORY);
    case STATUS_PRIVILEGED_INSTRUCTION:
      return Hr(D3DDDIERR_PRIVILEGEDINSTRUCTION);
    case STATUS_ILLEGAL_INSTRUCTION:
      return Hr(D3DDDIERR_INVALIDINSTRUCTION);
    case STATUS_INVALID_HANDLE:
      return Hr(D3DDDIERR_INVALIDHANDLE);
    case STATUS_GRAPHICS_INVALID_USER_BUFFER:
      return Hr(D3DDDIERR_INVALIDUSERBUFFER);
    case STATUS_GRAPHICS_GPU_EXCEPTION_ON_DEVICE:
      return Hr(D3DDDIERR_DEVICEREMOVED);
    default:
      return Hr(E_INVALIDARG);
  }
}

}  // namespace

const char* KernelExecutionContext() { return t_kernel_context; }

struct Dxgkrnl::Impl {
  struct KDevice;
  struct KContext;

  struct KAllocation {
    uint32_t id = 0;
    DXGK_HALLOCATION kmd{};
    uint64_t size = 0;
    uint32_t alignment = 0;
    KDevice* device = nullptr;
    uint32_t resource = 0;
    bool primary = false;
    uint32_t queued_refs = 0;  // DMA packets (queued or in flight) that reference it
    bool zombie = false;       // pfnDeallocateCb came while referenced
    bool locked = false, lock_write = false;
    std::vector<uint8_t> shadow;  // CPU view handed out by pfnLockCb
  };

  struct KSync {
    uint32_t id = 0;
    KDevice* device = nullptr;
    uint32_t type = 0;
    uint32_t count = 0, max_count = 0;
  };

  struct DmaBuf {
    std::vector<uint32_t> words;
    std::vector<D3DDDI_PATCHLOCATIONLIST> patches;
    uint64_t phys = 0;
    bool busy = false;
  };

  struct Packet {
    enum Kind { kDma, kSignal, kWait } kind = kDma;
    uint64_t seq = 0;
    KContext* ctx = nullptr;
    DmaBuf* dma = nullptr;
    uint32_t dma_bytes = 0;
    uint32_t num_patches = 0;
    std::vector<DXGK_ALLOCATIONLIST> allocs;
    std::vector<uint32_t> alloc_ids;  // parallel to allocs
    bool present = false;
    bool splittable = true;                    // R78 held for its patch list
    uint32_t next_patch = 0, next_offset = 0;  // progress through split portions
    std::vector<uint32_t> sync_objects;
  };

  struct InFlight {
    uint32_t fence = 0;
    Packet* packet = nullptr;  // DMA portion (nullptr for paging buffers)
    bool last_portion = false;
    std::vector<uint32_t> pinned;  // VidMm pins to drop at retirement
    DmaBuf* paging = nullptr;      // paging buffer to recycle
  };

  struct Node {
    uint32_t fence = 0;               // last fence handed out
    uint32_t notified_completed = 0;  // from DxgkCbNotifyInterrupt(DMA_COMPLETED)
    std::deque<InFlight> in_flight;
    std::vector<std::pair<uint32_t, std::vector<uint32_t>>> pending_signals;  // fence, objects
  };

  struct KContext {
    uint32_t id = 0;
    KDevice* device = nullptr;
    DXGK_HCONTEXT kmd{};
    uint32_t node = 0;
    DXGK_CONTEXTINFO info{};
    // User-mode buffers handed out in rotation (R74).
    std::vector<std::vector<uint32_t>> cmd;
    std::vector<std::vector<UserAllocationListEntry>> alloc_lists;
    std::vector<std::vector<D3DDDI_PATCHLOCATIONLIST>> patch_lists;
    uint32_t current = 0;
    std::vector<std::unique_ptr<DmaBuf>> dma_pool;
    std::deque<Packet*> queue;
    uint32_t outstanding = 0;  // DMA packets queued or in flight
    uint32_t last_fence = 0;   // fence of its last submitted portion
  };

  struct KDevice {
    uint32_t magic = kDeviceMagic;
    Impl* k = nullptr;
    uint32_t id = 0;
    DXGK_HDEVICE kmd{};
    DXGK_DEVICEINFO info{};
    uint32_t primary = 0;  // from pfnSetDisplayModeCb
  };

  Impl(DxgkrnlOptions o, ViolationSink* v)
      : options(o),
        violations(v),
        vidmm(o.video_memory_bytes),
        gpu(&sched, &content, &vidmm, o.num_nodes, o.gpu),
        nodes(gpu.num_nodes()),
        vidsch_pending(gpu.num_nodes(), false) {
    gpu.SetInterruptLine([this] { OnInterruptAsserted(); });
  }

  // ---- helpers ----------------------------------------------------------------------------
  void Violation(int rule, std::string message) {
    if (violations) violations->Report(gpu::Violation{rule, std::move(message), sched.now()});
  }
  // Charges one kernel-thunk call of CPU time, running (at their due times) the events that
  // fall into it.
  void Tick() { sched.RunUntil(sched.now() + options.timing.cpu_per_call_ns); }
  static KDevice* Dev(D3DRTDEVICEHANDLE h) {
    auto* d = static_cast<KDevice*>(h.handle);
    return (d != nullptr && d->magic == kDeviceMagic) ? d : nullptr;
  }
  KAllocation* Alloc(uint32_t id) {
    auto it = allocations.find(id);
    return (it == allocations.end() || it->second->zombie) ? nullptr : it->second.get();
  }
  KContext* Ctx(KDevice* d, D3DKMT_HCONTEXT h) {
    auto it = contexts.find(h.value);
    return (it == contexts.end() || it->second->device != d) ? nullptr : it->second.get();
  }
  uint64_t NextDmaPhys(uint64_t bytes) {
    uint64_t at = next_dma_phys;
    next_dma_phys += (bytes + 0xFFF) & ~0xFFFull;
    return at;
  }
  std::unique_ptr<DmaBuf> NewDmaBuf(uint32_t bytes, uint32_t patches) {
    auto b = std::make_unique<DmaBuf>();
    b->words.assign(bytes / 4, 0);
    b->patches.resize(patches);
    b->phys = NextDmaPhys(bytes);
    gpu.MapDmaMemory(b->phys, b->words);
    return b;
  }

  // ---- kernel-thunk callbacks (D3DDDI_DEVICECALLBACKS) ----------------------------------
  HRESULT Allocate(KDevice* d, D3DDDICB_ALLOCATE* p) {
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
    args.Flags = p->hResource.handle != nullptr ? DXGK_CREATEALLOCATIONFLAGS_RESOURCE : 0;
    NTSTATUS s = kmd->DxgkDdiCreateAllocation(kmd_adapter, &args);
    if (s != Nt(STATUS_SUCCESS)) return HresultFromNtstatus(s);
    uint32_t resource = 0;
    if (p->hResource.handle != nullptr) {
      resource = next_resource++;
      p->hKMResource.value = resource;
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
  void Release(const std::vector<uint32_t>& ids) {
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
        if (v.empty()) resources.erase(it->second->resource);
      }
      allocations.erase(it);
    }
    DXGKARG_DESTROYALLOCATION args{};
    args.NumAllocations = static_cast<UINT>(handles.size());
    args.pAllocationList = handles.data();
    kmd->DxgkDdiDestroyAllocation(kmd_adapter, &args);
  }

  HRESULT Deallocate(KDevice* d, const D3DDDICB_DEALLOCATE* p) {
    std::vector<uint32_t> ids;
    if (p->hResource.value != 0) {
      auto it = resources.find(p->hResource.value);
      if (it == resources.end()) return Hr(E_INVALIDARG);
      ids = it->second;
    }
    for (UINT i = 0; i < p->NumAllocations; ++i) ids.push_back(p->HandleList[i].value);
    for (uint32_t id : ids) {
      KAllocation* a = Alloc(id);
      if (a == nullptr || a->device != d) return Hr(E_INVALIDARG);
    }
    std::vector<uint32_t> now_ids;
    for (uint32_t id : ids) {
      KAllocation* a = Alloc(id);
      if (a == nullptr) continue;  // listed twice
      if (a->queued_refs > 0) {
        a->zombie = true;  // freed when the last DMA buffer using it retires
      } else {
        now_ids.push_back(id);
        a->zombie = true;
      }
    }
    Release(now_ids);
    return Hr(S_OK);
  }

  HRESULT SetPriority(KDevice* d, const D3DDDICB_SETPRIORITY* p) {
    std::vector<uint32_t> ids;
    if (p->hResource.value != 0) {
      auto it = resources.find(p->hResource.value);
      if (it == resources.end()) return Hr(E_INVALIDARG);
      ids = it->second;
    }
    for (UINT i = 0; i < p->NumAllocations; ++i) ids.push_back(p->pAllocationList[i].value);
    for (uint32_t id : ids) {
      KAllocation* a = Alloc(id);
      if (a == nullptr || a->device != d) return Hr(E_INVALIDARG);
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

  HRESULT QueryResidency(KDevice* d, const D3DDDICB_QUERYRESIDENCY* p) {
    for (UINT i = 0; i < p->NumAllocations; ++i) {
      KAllocation* a = Alloc(p->HandleList[i].value);
      if (a == nullptr || a->device != d) return Hr(E_INVALIDARG);
    }
    for (UINT i = 0; i < p->NumAllocations; ++i) {
      p->pResidencyStatus[i] = vidmm.VideoAddress(p->HandleList[i].value) != 0
                                   ? D3DDDI_RESIDENCYSTATUS_RESIDENTINGPUMEMORY
                                   : D3DDDI_RESIDENCYSTATUS_NOTRESIDENT;
    }
    return Hr(S_OK);
  }

  HRESULT SetDisplayMode(KDevice* d, D3DDDICB_SETDISPLAYMODE* p) {
    KAllocation* a = Alloc(p->hPrimaryAllocation.value);
    if (a == nullptr || a->device != d) return Hr(E_INVALIDARG);
    d->primary = a->id;
    p->PrivateDriverFormatAttribute = 0;
    return Hr(S_OK);
  }

  HRESULT CreateContext(KDevice* d, D3DDDICB_CREATECONTEXT* p) {
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
    p->hContext.value = c->id;
    HandOut(c.get(), &p->pCommandBuffer, &p->CommandBufferSize, &p->pAllocationList,
            &p->AllocationListSize, &p->pPatchLocationList, &p->PatchLocationListSize);
    p->CommandBuffer = 0;  // no GPU virtual addressing in the model
    contexts.emplace(c->id, std::move(c));
    return Hr(S_OK);
  }

  void HandOut(KContext* c, PVOID* cmd, UINT* cmd_size, PVOID* alloc, UINT* alloc_size,
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
  DmaBuf* GetDmaBuffer(KContext* c, uint32_t min_bytes) {
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

  // Checks the output patch list of one DMA buffer (R78) and queues the packet.
  void QueuePacket(std::unique_ptr<Packet> pk) {
    pk->splittable = true;
    for (uint32_t i = 1; i < pk->num_patches; ++i) {
      if (pk->dma->patches[i].SplitOffset < pk->dma->patches[i - 1].SplitOffset) {
        Violation(78, absl::StrFormat("%s output patch list of context %u: entry %u SplitOffset %u "
                                      "< entry %u SplitOffset %u",
                                      pk->present ? "DxgkDdiPresent" : "DxgkDdiRender", pk->ctx->id,
                                      i, pk->dma->patches[i].SplitOffset, i - 1,
                                      pk->dma->patches[i - 1].SplitOffset));
        pk->splittable = false;
        break;
      }
    }
    for (uint32_t id : pk->alloc_ids) {
      if (KAllocation* a = Alloc(id)) ++a->queued_refs;
    }
    pk->seq = next_seq++;
    ++pk->ctx->outstanding;
    ++stats.dma_buffers;
    const uint32_t node = pk->ctx->node;
    pk->ctx->queue.push_back(pk.release());
    KickVidSch(node);
  }

  void KickVidSch(uint32_t node) {
    if (vidsch_pending[node]) return;
    vidsch_pending[node] = true;
    sched.After(options.timing.vidsch_latency_ns, [this, node] {
      ScopedKernelContext scope("vidsch");
      vidsch_pending[node] = false;
      Schedule(node);
    });
  }

  HRESULT Render(KDevice* d, D3DDDICB_RENDER* p) {
    ++stats.renders;
    KContext* c = Ctx(d, p->hContext);
    if (c == nullptr) {
      Violation(
          74,
          absl::StrFormat(
              "pfnRenderCb on context %u that pfnCreateContextCb did not create for this device",
              p->hContext.value));
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
          74,
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
            74,
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

  HRESULT BuildDma(KContext* c, const uint32_t* cmd, UINT length,
                   const UserAllocationListEntry* alist, UINT nalloc,
                   const D3DDDI_PATCHLOCATIONLIST* plist, UINT npatch) {
    // Kernel allocation list from the user one.
    std::vector<DXGK_ALLOCATIONLIST> kl(nalloc);
    std::vector<uint32_t> ids(nalloc);
    for (UINT i = 0; i < nalloc; ++i) {
      KAllocation* a = Alloc(alist[i].hAllocation.value);
      if (a == nullptr || a->device != c->device) return Hr(D3DDDIERR_INVALIDHANDLE);
      if (a->locked) return Hr(D3DDDIERR_CANTRENDERLOCKEDALLOCATION);
      kl[i].hDeviceSpecificAllocation = a->kmd;
      kl[i].WriteOperation = (alist[i].Flags & kAllocationListWriteOperation) ? 1 : 0;
      kl[i].SegmentId = vidmm.SegmentOf(a->id);
      kl[i].PhysicalAddress = static_cast<PHYSICAL_ADDRESS>(vidmm.VideoAddress(a->id));
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
      auto pk = std::make_unique<Packet>();
      pk->ctx = c;
      pk->dma = b;
      pk->dma_bytes =
          static_cast<uint32_t>(static_cast<uint32_t*>(args.pDmaBuffer) - b->words.data()) * 4;
      pk->num_patches = static_cast<uint32_t>(
          static_cast<D3DDDI_PATCHLOCATIONLIST*>(args.pPatchLocationListOut) - b->patches.data());
      pk->allocs = kl;
      pk->alloc_ids = ids;
      QueuePacket(std::move(pk));
      if (!more) return Hr(S_OK);
      if (args.MultipassOffset <= offset || args.MultipassOffset > length) {
        return Hr(E_INVALIDARG);  // the KMD made no progress; avoid looping forever
      }
      offset = args.MultipassOffset;
      dma_bytes = c->info.DmaBufferSize;
    }
  }

  HRESULT Present(KDevice* d, const D3DDDICB_PRESENT* p) {
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
    for (int i = 0; i < 2; ++i) {
      kl[i].hDeviceSpecificAllocation = pair[i]->kmd;
      kl[i].WriteOperation = i == 1;
      kl[i].SegmentId = vidmm.SegmentOf(pair[i]->id);
      kl[i].PhysicalAddress = static_cast<PHYSICAL_ADDRESS>(vidmm.VideoAddress(pair[i]->id));
    }
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
    auto pk = std::make_unique<Packet>();
    pk->ctx = c;
    pk->dma = b;
    pk->dma_bytes =
        static_cast<uint32_t>(static_cast<uint32_t*>(args.pDmaBuffer) - b->words.data()) * 4;
    pk->num_patches = static_cast<uint32_t>(
        static_cast<D3DDDI_PATCHLOCATIONLIST*>(args.pPatchLocationList) - b->patches.data());
    pk->allocs = kl;
    pk->alloc_ids = {src->id, dst->id};
    pk->present = true;
    QueuePacket(std::move(pk));
    return Hr(S_OK);
  }

  HRESULT Lock(KDevice* d, D3DDDICB_LOCK* p) {
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

  HRESULT Unlock(KDevice* d, const D3DDDICB_UNLOCK* p) {
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

  HRESULT Escape(KDevice* d, const D3DDDICB_ESCAPE* p) {
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

  void DrainContext(KContext* c) {
    sched.RunUntilCondition([&] { return c->outstanding == 0 && c->queue.empty(); });
  }

  HRESULT DestroyContext(KDevice* d, const D3DDDICB_DESTROYCONTEXT* p) {
    KContext* c = Ctx(d, p->hContext);
    if (c == nullptr) return Hr(E_INVALIDARG);
    DrainContext(c);
    DestroyContextNow(c);
    return Hr(S_OK);
  }

  void DestroyContextNow(KContext* c) {
    for (Packet* pk : c->queue) {  // only blocked waits/signals can remain
      delete pk;
    }
    c->queue.clear();
    for (auto& b : c->dma_pool) gpu.UnmapDmaMemory(b->phys);
    kmd->DxgkDdiDestroyContext(c->kmd);
    contexts.erase(c->id);
  }

  HRESULT CreateSync(KDevice* d, D3DDDICB_CREATESYNCHRONIZATIONOBJECT* p) {
    if (p->hContext.value != 0 && Ctx(d, p->hContext) == nullptr) return Hr(E_INVALIDARG);
    auto s = std::make_unique<KSync>();
    s->id = next_sync++;
    s->device = d;
    s->type = p->Info.Type;
    switch (p->Info.Type) {
      case D3DDDI_SYNCHRONIZATION_MUTEX:
        s->max_count = 1;
        s->count = p->Info.InitialState ? 1 : 0;
        break;
      case D3DDDI_SEMAPHORE:
        if (p->Info.InitialCount > p->Info.MaxCount) return Hr(E_INVALIDARG);
        s->max_count = p->Info.MaxCount;
        s->count = p->Info.InitialCount;
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

  HRESULT DestroySync(KDevice* d, const D3DDDICB_DESTROYSYNCHRONIZATIONOBJECT* p) {
    auto it = syncs.find(p->hSyncObject.value);
    if (it == syncs.end() || it->second->device != d) return Hr(E_INVALIDARG);
    syncs.erase(it);
    return Hr(S_OK);
  }

  HRESULT QueueSyncPacket(KDevice* d, D3DKMT_HCONTEXT hc, UINT count,
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

  void Signal(const std::vector<uint32_t>& objects) {
    for (uint32_t id : objects) {
      auto it = syncs.find(id);
      if (it == syncs.end()) continue;
      KSync& s = *it->second;
      s.count = std::min(s.count + 1, s.max_count);
    }
    for (uint32_t n = 0; n < nodes.size(); ++n) KickVidSch(n);  // a wait may now proceed
  }

  bool CanWait(const Packet& pk) const {
    for (uint32_t id : pk.sync_objects) {
      auto it = syncs.find(id);
      if (it != syncs.end() && it->second->count == 0) return false;
    }
    return true;
  }

  // ---- VidSch -----------------------------------------------------------------------------
  void Schedule(uint32_t node) {
    Node& n = nodes[node];
    while (n.in_flight.size() < options.max_in_flight_per_node) {
      KContext* best = nullptr;
      for (auto& [id, c] : contexts) {  // std::map: deterministic order
        if (c->node != node || c->queue.empty()) continue;
        Packet* head = c->queue.front();
        if (head->kind == Packet::kWait && !CanWait(*head)) continue;
        if (best == nullptr || head->seq < best->queue.front()->seq) best = c.get();
      }
      if (best == nullptr) return;
      Packet* pk = best->queue.front();
      if (pk->kind == Packet::kWait) {
        for (uint32_t id : pk->sync_objects) {
          auto it = syncs.find(id);
          if (it != syncs.end() && it->second->type != D3DDDI_FENCE) --it->second->count;
        }
        best->queue.pop_front();
        delete pk;
        continue;
      }
      if (pk->kind == Packet::kSignal) {
        best->queue.pop_front();
        if (best->last_fence <= nodes[node].notified_completed) {
          Signal(pk->sync_objects);
        } else {
          n.pending_signals.emplace_back(best->last_fence, pk->sync_objects);
        }
        delete pk;
        continue;
      }
      bool faulted = false;
      if (!SubmitPortion(node, pk, &faulted)) return;  // waits for completions to free memory
      if (faulted) {
        best->queue.pop_front();
        RetirePacket(pk);
        continue;
      }
      if (pk->next_offset >= pk->dma_bytes) best->queue.pop_front();
    }
  }

  // Submits the next portion of `pk`. False if it must wait (memory pinned by work in flight);
  // sets `faulted` if it can never run (the caller retires it).
  bool SubmitPortion(uint32_t node, Packet* pk, bool* faulted) {
    Node& n = nodes[node];
    // Portion: [next_offset, end) with patch entries [next_patch, patch_end).
    uint32_t end = pk->dma_bytes, patch_end = pk->num_patches;
    std::vector<uint32_t> ids;
    auto ids_of = [&](uint32_t from, uint32_t to) {
      std::vector<uint32_t> out;
      for (uint32_t i = from; i < to; ++i)
        out.push_back(pk->alloc_ids[pk->dma->patches[i].AllocationIndex]);
      return out;
    };
    ids = ids_of(pk->next_patch, pk->num_patches);
    if (!vidmm.CanFitTogether(ids) && pk->splittable) {
      // Grow the portion one split point at a time while its allocations fit together.
      uint32_t i = pk->next_patch;
      std::vector<uint32_t> acc;
      while (i < pk->num_patches) {
        uint32_t j = i;
        const uint32_t split = pk->dma->patches[i].SplitOffset;
        while (j < pk->num_patches && pk->dma->patches[j].SplitOffset == split) ++j;
        std::vector<uint32_t> group = ids_of(i, j);
        std::vector<uint32_t> trial = acc;
        trial.insert(trial.end(), group.begin(), group.end());
        if (!vidmm.CanFitTogether(trial)) {
          if (acc.empty()) break;  // one command's allocations alone do not fit
          end = split;
          patch_end = i;
          break;
        }
        acc = std::move(trial);
        i = j;
      }
      if (end != pk->dma_bytes) {
        ids = acc;
        ++stats.splits;
      }
    }
    auto ops = vidmm.MakeResident(ids);
    if (!ops.ok()) {
      if (!n.in_flight.empty()) return false;  // retry after completions unpin memory
      // Nothing will ever free memory: the DMA buffer cannot run. Fault it (device error).
      ++stats.faults;
      fault_log.push_back(absl::StrCat("context ", pk->ctx->id, ": ", ops.status().message()));
      *faulted = true;
      return true;
    }
    if (!ops->empty()) BuildPaging(node, *ops);
    for (uint32_t i = pk->next_patch; i < patch_end; ++i) {
      const uint32_t slot = pk->dma->patches[i].AllocationIndex;
      pk->allocs[slot].SegmentId = vidmm.SegmentOf(pk->alloc_ids[slot]);
      pk->allocs[slot].PhysicalAddress =
          static_cast<PHYSICAL_ADDRESS>(vidmm.VideoAddress(pk->alloc_ids[slot]));
    }
    const uint32_t fence = ++n.fence;
    if (options.bug != PlantedBug::kR76SubmitUnpatched) {
      DXGKARG_PATCH patch{};
      patch.hContext = pk->ctx->kmd;
      patch.DmaBufferSegmentId = 0;
      patch.DmaBufferPhysicalAddress = static_cast<PHYSICAL_ADDRESS>(pk->dma->phys);
      patch.pDmaBuffer = pk->dma->words.data();
      patch.DmaBufferSize = static_cast<UINT>(pk->dma->words.size() * 4);
      patch.DmaBufferSubmissionStartOffset = pk->next_offset;
      patch.DmaBufferSubmissionEndOffset = end;
      patch.pAllocationList = pk->allocs.data();
      patch.AllocationListSize = static_cast<UINT>(pk->allocs.size());
      patch.pPatchLocationList = pk->dma->patches.data();
      patch.PatchLocationListSize = pk->num_patches;
      patch.PatchLocationListSubmissionStart = pk->next_patch;
      patch.PatchLocationListSubmissionLength = patch_end - pk->next_patch;
      patch.SubmissionFenceId = fence;
      patch.Flags = pk->present ? DXGK_PATCHFLAGS_PRESENT : 0;
      patch.EngineOrdinal = 0;
      kmd->DxgkDdiPatch(kmd_adapter, &patch);
    }
    // Planted R75: the ring gets a different id than the one patched into the buffer.
    const uint32_t submit_fence = options.bug == PlantedBug::kR75FenceMismatch ? fence + 1 : fence;
    n.fence = std::max(n.fence, submit_fence);
    DXGKARG_SUBMITCOMMAND sub{};
    sub.hContext = pk->ctx->kmd;
    sub.DmaBufferSegmentId = 0;
    sub.DmaBufferPhysicalAddress = static_cast<PHYSICAL_ADDRESS>(pk->dma->phys);
    sub.DmaBufferSize = static_cast<UINT>(pk->dma->words.size() * 4);
    sub.DmaBufferSubmissionStartOffset = pk->next_offset;
    sub.DmaBufferSubmissionEndOffset = end;
    sub.SubmissionFenceId = submit_fence;
    sub.Flags = pk->present ? DXGK_SUBMITCOMMANDFLAGS_PRESENT : 0;
    sub.EngineOrdinal = 0;
    sub.NodeOrdinal = node;
    kmd->DxgkDdiSubmitCommand(kmd_adapter, &sub);
    ++stats.submissions;
    InFlight f;
    f.fence = submit_fence;
    f.packet = pk;
    f.last_portion = end >= pk->dma_bytes;
    f.pinned = ids;
    vidmm.Pin(ids);
    n.in_flight.push_back(std::move(f));
    pk->ctx->last_fence = submit_fence;
    pk->next_offset = end;
    pk->next_patch = patch_end;
    return true;
  }

  void BuildPaging(uint32_t node, const std::vector<internal::PagingOp>& ops) {
    Node& n = nodes[node];
    DmaBuf* b = nullptr;
    uint32_t used = 0;
    auto flush = [&] {
      if (b == nullptr) return;
      if (used == 0) {
        b->busy = false;
        b = nullptr;
        return;
      }
      const uint32_t fence = ++n.fence;
      DXGKARG_SUBMITCOMMAND sub{};
      sub.DmaBufferSegmentId = 0;
      sub.DmaBufferPhysicalAddress = static_cast<PHYSICAL_ADDRESS>(b->phys);
      sub.DmaBufferSize = static_cast<UINT>(b->words.size() * 4);
      sub.DmaBufferSubmissionStartOffset = 0;
      sub.DmaBufferSubmissionEndOffset = used;
      sub.SubmissionFenceId = fence;
      sub.Flags = DXGK_SUBMITCOMMANDFLAGS_PAGINGBUFFER;  // hContext NULL: system paging work
      sub.NodeOrdinal = node;
      kmd->DxgkDdiSubmitCommand(kmd_adapter, &sub);
      ++stats.paging_buffers;
      InFlight f;
      f.fence = fence;
      f.paging = b;
      n.in_flight.push_back(std::move(f));
      b = nullptr;
      used = 0;
    };
    for (const internal::PagingOp& op : ops) {
      for (int attempt = 0; attempt < 2; ++attempt) {
        if (b == nullptr) {
          b = GetPagingBuffer();
          used = 0;
        }
        DXGKARG_BUILDPAGINGBUFFER args{};
        args.pDmaBuffer = reinterpret_cast<uint8_t*>(b->words.data()) + used;
        args.DmaSize = static_cast<UINT>(b->words.size() * 4 - used);
        args.Operation =
            op.kind == internal::PagingOp::kFill ? DXGK_OPERATION_FILL : DXGK_OPERATION_TRANSFER;
        args.hAllocation = allocations.at(op.id)->kmd;
        args.TransferOffset = 0;
        args.TransferSize = static_cast<SIZE_T>(op.size);
        args.SourceSegmentId = op.src_segment;
        args.SourceSegmentAddress = static_cast<PHYSICAL_ADDRESS>(op.src);
        args.DestinationSegmentId = op.dst_segment;
        args.DestinationSegmentAddress = static_cast<PHYSICAL_ADDRESS>(op.dst);
        args.FillPattern = 0;
        NTSTATUS s = kmd->DxgkDdiBuildPagingBuffer(kmd_adapter, &args);
        if (s == Nt(STATUS_SUCCESS)) {
          used = static_cast<uint32_t>(static_cast<uint8_t*>(args.pDmaBuffer) -
                                       reinterpret_cast<uint8_t*>(b->words.data()));
          ++stats.paging_operations;
          break;
        }
        if (s == Nt(STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER) && used > 0) {
          flush();  // submit what we have, retry in a fresh paging buffer
          continue;
        }
        fault_log.push_back(
            absl::StrFormat("DxgkDdiBuildPagingBuffer failed 0x%08x", static_cast<uint32_t>(s)));
        break;
      }
    }
    flush();
  }

  DmaBuf* GetPagingBuffer() {
    for (auto& b : paging_pool) {
      if (!b->busy) {
        b->busy = true;
        return b.get();
      }
    }
    paging_pool.push_back(NewDmaBuf(kPagingBufferBytes, 0));
    paging_pool.back()->busy = true;
    return paging_pool.back().get();
  }

  void RetirePacket(Packet* pk) {
    std::vector<uint32_t> release;
    for (uint32_t id : pk->alloc_ids) {
      auto it = allocations.find(id);
      if (it == allocations.end()) continue;
      KAllocation& a = *it->second;
      if (a.queued_refs > 0 && --a.queued_refs == 0 && a.zombie &&
          std::find(release.begin(), release.end(), id) == release.end()) {
        release.push_back(id);
      }
    }
    pk->dma->busy = false;
    --pk->ctx->outstanding;
    delete pk;
    Release(release);
  }

  void Retire() {
    for (uint32_t node = 0; node < nodes.size(); ++node) {
      Node& n = nodes[node];
      while (!n.in_flight.empty() && n.in_flight.front().fence <= n.notified_completed) {
        InFlight f = std::move(n.in_flight.front());
        n.in_flight.pop_front();
        vidmm.Unpin(f.pinned);
        if (f.paging != nullptr) f.paging->busy = false;
        if (f.packet != nullptr && f.last_portion) RetirePacket(f.packet);
      }
      auto& ps = n.pending_signals;
      for (size_t i = 0; i < ps.size();) {
        if (ps[i].first <= n.notified_completed) {
          std::vector<uint32_t> objs = std::move(ps[i].second);
          ps.erase(ps.begin() + static_cast<long>(i));
          Signal(objs);
        } else {
          ++i;
        }
      }
    }
    for (uint32_t node = 0; node < nodes.size(); ++node) Schedule(node);
  }

  // ---- interrupts (GPU -> ISR -> DPC) and the DXGKRNL_INTERFACE callbacks ---------------
  void OnInterruptAsserted() {
    if (isr_scheduled) return;
    isr_scheduled = true;
    sched.After(options.timing.isr_latency_ns, [this] {
      ScopedKernelContext scope("interrupt");
      isr_scheduled = false;
      ++stats.interrupts;
      isr = IsrState{};
      isr.active = true;
      BOOL claimed = kmd->DxgkDdiInterruptRoutine(kmd_adapter, 0);
      isr.active = false;
      if (claimed && isr.dma_notified && !isr.dpc_after_dma && !isr.reported) {
        Violation(77,
                  "DxgkDdiInterruptRoutine reported DMA completion but returned without "
                  "DxgkCbQueueDpc after DxgkCbNotifyInterrupt");
      }
    });
  }

  void NotifyInterrupt(const DXGKARGCB_NOTIFY_INTERRUPT_DATA* d) {
    if (!isr.active) {
      Violation(77,
                absl::StrFormat("DxgkCbNotifyInterrupt (type %u) outside DxgkDdiInterruptRoutine",
                                d->InterruptType));
    }
    switch (d->InterruptType) {
      case DXGK_INTERRUPT_DMA_COMPLETED:
      case DXGK_INTERRUPT_DMA_FAULTED:
      case DXGK_INTERRUPT_DMA_PREEMPTED: {
        if (isr.crtc_seen) {
          Violation(77,
                    "DxgkCbNotifyInterrupt: DMA-type notification after a CRTC-type one in "
                    "the same interrupt");
        }
        if (isr.dpc_queued && !isr.reported) {
          Violation(77, "DxgkCbQueueDpc before DxgkCbNotifyInterrupt(DMA) in the same interrupt");
          isr.reported = true;
        }
        isr.dma_notified = true;
        if (d->NodeOrdinal >= nodes.size()) {
          Violation(77, absl::StrFormat("DxgkCbNotifyInterrupt for node %u of %u", d->NodeOrdinal,
                                        nodes.size()));
          break;
        }
        Node& n = nodes[d->NodeOrdinal];
        if (d->InterruptType == DXGK_INTERRUPT_DMA_FAULTED) {
          ++stats.faults;
          fault_log.push_back(
              absl::StrFormat("node %u fence %u faulted", d->NodeOrdinal, d->SubmissionFenceId));
          break;
        }
        if (d->InterruptType == DXGK_INTERRUPT_DMA_COMPLETED) {
          if (d->SubmissionFenceId < n.notified_completed || d->SubmissionFenceId > n.fence) {
            Violation(77, absl::StrFormat("DxgkCbNotifyInterrupt(DMA_COMPLETED) node %u fence %u: "
                                          "last completed %u, last "
                                          "submitted %u",
                                          d->NodeOrdinal, d->SubmissionFenceId,
                                          n.notified_completed, n.fence));
          }
          n.notified_completed = std::max(n.notified_completed, d->SubmissionFenceId);
        }
        break;
      }
      case DXGK_INTERRUPT_CRTC_VSYNC:
        isr.crtc_seen = true;
        ++stats.vsyncs;
        break;
      default:
        break;
    }
  }

  BOOL QueueDpc() {
    if (!isr.active) {
      Violation(77, "DxgkCbQueueDpc outside DxgkDdiInterruptRoutine");
    } else {
      isr.dpc_queued = true;
      if (isr.dma_notified) isr.dpc_after_dma = true;
    }
    if (dpc_scheduled) return 0;
    dpc_scheduled = true;
    sched.After(options.timing.dpc_latency_ns, [this] {
      ScopedKernelContext scope("dpc");
      dpc_scheduled = false;
      ++stats.dpcs;
      dpc_active = true;
      dpc_notified = false;
      kmd->DxgkDdiDpcRoutine(kmd_adapter);
      dpc_active = false;
      if (!dpc_notified) {
        Violation(77, "DxgkDdiDpcRoutine returned without DxgkCbNotifyDpc");
        Retire();  // keep the model going
      }
    });
    return 1;
  }

  void NotifyDpc() {
    if (!dpc_active) Violation(77, "DxgkCbNotifyDpc outside DxgkDdiDpcRoutine");
    dpc_notified = true;
    Retire();
  }

  // ---- state ------------------------------------------------------------------------------
  DxgkrnlOptions options;
  ViolationSink* violations;
  mutable absl::Mutex mu;
  Scheduler sched;
  ContentModel content;
  internal::VidMm vidmm;
  GpuEngine gpu;
  std::vector<Node> nodes;
  std::vector<bool> vidsch_pending;
  const DRIVER_INITIALIZATION_DATA* kmd = nullptr;
  DXGK_HADAPTER kmd_adapter{};
  std::map<uint32_t, std::unique_ptr<KDevice>> devices;
  std::map<uint32_t, std::unique_ptr<KContext>> contexts;
  std::map<uint32_t, std::unique_ptr<KAllocation>> allocations;
  std::map<uint32_t, std::vector<uint32_t>> resources;
  std::map<uint32_t, std::unique_ptr<KSync>> syncs;
  std::vector<std::unique_ptr<DmaBuf>> paging_pool;
  std::vector<std::string> fault_log;
  uint32_t next_device = 1, next_context = 1, next_allocation = 1, next_resource = 1, next_sync = 1;
  uint64_t next_seq = 1;
  uint64_t next_dma_phys = kDmaBase;
  struct IsrState {
    bool active = false, dma_notified = false, crtc_seen = false, dpc_queued = false,
         dpc_after_dma = false, reported = false;
  } isr;
  bool isr_scheduled = false, dpc_scheduled = false, dpc_active = false, dpc_notified = false;
  Stats stats;
};

// ---- C entry points ------------------------------------------------------------------------
namespace {

using Impl = Dxgkrnl::Impl;

// Every kernel-thunk callback: validate the device handle, take the model lock, charge the
// call's virtual CPU time (running what became due), then do the work.
template <typename Fn>
HRESULT Enter(D3DRTDEVICEHANDLE h, const void* p, Fn fn) {
  Impl::KDevice* d = Impl::Dev(h);
  if (d == nullptr || p == nullptr) return Hr(E_INVALIDARG);
  Impl* k = d->k;
  absl::MutexLock lock(&k->mu);
  k->Tick();
  return fn(k, d);
}

HRESULT APIENTRY AllocateCb(D3DRTDEVICEHANDLE h, D3DDDICB_ALLOCATE* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->Allocate(d, p); });
}
HRESULT APIENTRY DeallocateCb(D3DRTDEVICEHANDLE h, const D3DDDICB_DEALLOCATE* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->Deallocate(d, p); });
}
HRESULT APIENTRY SetPriorityCb(D3DRTDEVICEHANDLE h, const D3DDDICB_SETPRIORITY* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->SetPriority(d, p); });
}
HRESULT APIENTRY QueryResidencyCb(D3DRTDEVICEHANDLE h, const D3DDDICB_QUERYRESIDENCY* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->QueryResidency(d, p); });
}
HRESULT APIENTRY SetDisplayModeCb(D3DRTDEVICEHANDLE h, D3DDDICB_SETDISPLAYMODE* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->SetDisplayMode(d, p); });
}
HRESULT APIENTRY PresentCb(D3DRTDEVICEHANDLE h, const D3DDDICB_PRESENT* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->Present(d, p); });
}
HRESULT APIENTRY RenderCb(D3DRTDEVICEHANDLE h, D3DDDICB_RENDER* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->Render(d, p); });
}
HRESULT APIENTRY LockCb(D3DRTDEVICEHANDLE h, D3DDDICB_LOCK* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->Lock(d, p); });
}
HRESULT APIENTRY UnlockCb(D3DRTDEVICEHANDLE h, const D3DDDICB_UNLOCK* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->Unlock(d, p); });
}
HRESULT APIENTRY EscapeCb(D3DRTDEVICEHANDLE h, const D3DDDICB_ESCAPE* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->Escape(d, p); });
}
HRESULT APIENTRY CreateContextCb(D3DRTDEVICEHANDLE h, D3DDDICB_CREATECONTEXT* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->CreateContext(d, p); });
}
HRESULT APIENTRY DestroyContextCb(D3DRTDEVICEHANDLE h, const D3DDDICB_DESTROYCONTEXT* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->DestroyContext(d, p); });
}
HRESULT APIENTRY CreateSynchronizationObjectCb(D3DRTDEVICEHANDLE h,
                                               D3DDDICB_CREATESYNCHRONIZATIONOBJECT* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->CreateSync(d, p); });
}
HRESULT APIENTRY DestroySynchronizationObjectCb(D3DRTDEVICEHANDLE h,
                                                const D3DDDICB_DESTROYSYNCHRONIZATIONOBJECT* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return k->DestroySync(d, p); });
}
HRESULT APIENTRY WaitForSynchronizationObjectCb(D3DRTDEVICEHANDLE h,
                                                const D3DDDICB_WAITFORSYNCHRONIZATIONOBJECT* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) {
    return k->QueueSyncPacket(d, p->hContext, p->ObjectCount, p->ObjectHandleArray,
                              Impl::Packet::kWait);
  });
}
HRESULT APIENTRY SignalSynchronizationObjectCb(D3DRTDEVICEHANDLE h,
                                               const D3DDDICB_SIGNALSYNCHRONIZATIONOBJECT* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) {
    return k->QueueSyncPacket(d, p->hContext, p->ObjectCount, p->ObjectHandleArray,
                              Impl::Packet::kSignal);
  });
}

const D3DDDI_DEVICECALLBACKS kDeviceCallbacks = {
    AllocateCb,
    DeallocateCb,
    SetPriorityCb,
    QueryResidencyCb,
    SetDisplayModeCb,
    PresentCb,
    RenderCb,
    LockCb,
    UnlockCb,
    EscapeCb,
    CreateContextCb,
    DestroyContextCb,
    CreateSynchronizationObjectCb,
    DestroySynchronizationObjectCb,
    WaitForSynchronizationObjectCb,
    SignalSynchronizationObjectCb,
};

// DXGKRNL_INTERFACE: called by the KMD from inside entry points Dxgkrnl made under its lock.
Impl* KernelOf(DXGKRNL_HADAPTER h) { return static_cast<Impl*>(h.handle); }

void APIENTRY DxgkCbNotifyInterrupt(DXGKRNL_HADAPTER h, const DXGKARGCB_NOTIFY_INTERRUPT_DATA* p) {
  if (Impl* k = KernelOf(h); k != nullptr && p != nullptr) k->NotifyInterrupt(p);
}
BOOL APIENTRY DxgkCbQueueDpc(DXGKRNL_HADAPTER h) {
  Impl* k = KernelOf(h);
  return k != nullptr ? k->QueueDpc() : 0;
}
void APIENTRY DxgkCbNotifyDpc(DXGKRNL_HADAPTER h) {
  if (Impl* k = KernelOf(h)) k->NotifyDpc();
}

const DXGKRNL_INTERFACE kDxgkrnlInterface = {DxgkCbNotifyInterrupt, DxgkCbQueueDpc,
                                             DxgkCbNotifyDpc};

}  // namespace

// ---- public API --------------------------------------------------------------------------
Dxgkrnl::Dxgkrnl(DxgkrnlOptions options, ViolationSink* violations)
    : impl_(std::make_unique<Impl>(options, violations)) {}

Dxgkrnl::~Dxgkrnl() {
  absl::MutexLock lock(&impl_->mu);
  Impl* k = impl_.get();
  // Like process teardown: whatever the UMD left is destroyed without waiting for the GPU
  // (the GPU and its memory go away with us).
  for (Impl::Node& n : k->nodes) {
    for (Impl::InFlight& f : n.in_flight) {
      if (f.packet != nullptr && f.last_portion) delete f.packet;
    }
    n.in_flight.clear();
  }
  for (auto& [id, c] : k->contexts) {
    // Queued packets (including one whose earlier split portions were in flight: only the
    // entry of a last portion owns its packet).
    for (Impl::Packet* pk : c->queue) delete pk;
    c->queue.clear();
  }
  if (k->kmd == nullptr) return;
  for (auto& [id, c] : k->contexts) k->kmd->DxgkDdiDestroyContext(c->kmd);
  k->contexts.clear();
  std::vector<uint32_t> left;
  for (auto& [id, a] : k->allocations) left.push_back(id);
  k->Release(left);
  for (auto& [id, d] : k->devices) {
    k->kmd->DxgkDdiDestroyDevice(d->kmd);
    d->magic = 0;
  }
  k->devices.clear();
}

GpuEngine& Dxgkrnl::hardware() { return impl_->gpu; }
const DXGKRNL_INTERFACE* Dxgkrnl::dxgkrnl_interface() const { return &kDxgkrnlInterface; }
DXGKRNL_HADAPTER Dxgkrnl::dxgkrnl_handle() { return DXGKRNL_HADAPTER{impl_.get()}; }
const D3DDDI_DEVICECALLBACKS* Dxgkrnl::device_callbacks() const { return &kDeviceCallbacks; }

void Dxgkrnl::StartAdapter(const DRIVER_INITIALIZATION_DATA* kmd, DXGK_HADAPTER adapter) {
  absl::MutexLock lock(&impl_->mu);
  impl_->kmd = kmd;
  impl_->kmd_adapter = adapter;
}

absl::StatusOr<D3DRTDEVICEHANDLE> Dxgkrnl::CreateDevice() {
  absl::MutexLock lock(&impl_->mu);
  Impl* k = impl_.get();
  if (k->kmd == nullptr) return absl::FailedPreconditionError("CreateDevice before StartAdapter");
  k->Tick();
  auto d = std::make_unique<Impl::KDevice>();
  d->k = k;
  d->id = k->next_device++;
  DXGKARG_CREATEDEVICE args{};
  args.Flags = 0;
  NTSTATUS s = k->kmd->DxgkDdiCreateDevice(k->kmd_adapter, &args);
  if (s != Nt(STATUS_SUCCESS)) {
    return absl::InternalError(
        absl::StrFormat("DxgkDdiCreateDevice failed: 0x%08x", static_cast<uint32_t>(s)));
  }
  if (args.pInfo == nullptr || args.pInfo->DmaBufferSize < 64 ||
      args.pInfo->DmaBufferSize % 4 != 0 || args.pInfo->AllocationListSize == 0 ||
      args.pInfo->PatchLocationListSize == 0) {
    return absl::InternalError("DxgkDdiCreateDevice returned unusable DXGK_DEVICEINFO");
  }
  d->kmd = args.hDevice;
  d->info = *args.pInfo;
  D3DRTDEVICEHANDLE h{d.get()};
  k->devices.emplace(d->id, std::move(d));
  return h;
}

absl::Status Dxgkrnl::DestroyDevice(D3DRTDEVICEHANDLE device) {
  absl::MutexLock lock(&impl_->mu);
  Impl* k = impl_.get();
  Impl::KDevice* d = Impl::Dev(device);
  if (d == nullptr || d->k != k) return absl::InvalidArgumentError("DestroyDevice: unknown device");
  k->Tick();
  std::vector<Impl::KContext*> mine;
  for (auto& [id, c] : k->contexts) {
    if (c->device == d) mine.push_back(c.get());
  }
  for (Impl::KContext* c : mine) k->DrainContext(c);
  for (Impl::KContext* c : mine) k->DestroyContextNow(c);
  std::vector<uint32_t> left;
  for (auto& [id, a] : k->allocations) {
    if (a->device == d) left.push_back(id);
  }
  k->Release(left);
  k->kmd->DxgkDdiDestroyDevice(d->kmd);
  d->magic = 0;
  k->devices.erase(d->id);
  return absl::OkStatus();
}

std::optional<DXGK_DEVICEINFO> Dxgkrnl::device_info(D3DRTDEVICEHANDLE device) const {
  absl::MutexLock lock(&impl_->mu);
  Impl::KDevice* d = Impl::Dev(device);
  if (d == nullptr || d->k != impl_.get()) return std::nullopt;
  return d->info;
}

VirtualTime Dxgkrnl::now() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->sched.now();
}

VirtualTime Dxgkrnl::NowForObserver() const ABSL_NO_THREAD_SAFETY_ANALYSIS {
  return impl_->sched.now();
}

void Dxgkrnl::RunFor(VirtualTime ns) {
  absl::MutexLock lock(&impl_->mu);
  impl_->sched.RunUntil(impl_->sched.now() + ns);
}

absl::Status Dxgkrnl::WaitIdle() {
  absl::MutexLock lock(&impl_->mu);
  Impl* k = impl_.get();
  k->sched.RunUntilIdle();
  for (auto& [id, c] : k->contexts) {
    if (!c->queue.empty() || c->outstanding != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "context ", id, " has ", c->queue.size(),
          " queued items that can never run (a wait on an unsignalled synchronization object?)"));
    }
  }
  return absl::OkStatus();
}

std::optional<uint64_t> Dxgkrnl::AllocationDigest(D3DKMT_HALLOCATION allocation) const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->content.Digest(allocation.value);
}

std::vector<std::pair<uint32_t, uint64_t>> Dxgkrnl::AllocationDigests() const {
  absl::MutexLock lock(&impl_->mu);
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (const auto& [id, a] : impl_->allocations) {
    out.emplace_back(id, impl_->content.Digest(id).value_or(0));
  }
  return out;
}

uint64_t Dxgkrnl::CombinedDigest() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->content.CombinedDigest();
}

std::optional<uint32_t> Dxgkrnl::AllocationSegment(D3DKMT_HALLOCATION allocation) const {
  absl::MutexLock lock(&impl_->mu);
  if (!impl_->vidmm.Contains(allocation.value)) return std::nullopt;
  return impl_->vidmm.SegmentOf(allocation.value);
}

Dxgkrnl::Stats Dxgkrnl::stats() const {
  absl::MutexLock lock(&impl_->mu);
  Stats s = impl_->stats;
  s.allocations = impl_->allocations.size();
  return s;
}

uint64_t Dxgkrnl::completed_fence(uint32_t node) const {
  absl::MutexLock lock(&impl_->mu);
  return node < impl_->nodes.size() ? impl_->nodes[node].notified_completed : 0;
}

}  // namespace cltrace::gpu
