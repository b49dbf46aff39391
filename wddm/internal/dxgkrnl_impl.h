// Internal: the state and member functions of gpu::Dxgkrnl (the kernel side of the GPU model),
// shared by the three files that implement it along the kernel's own seams:
//   wddm/dxgkrnl.cc         the C tables (D3DDDI_DEVICECALLBACKS, DXGKRNL_INTERFACE) and the
//                          public gpu::Dxgkrnl API; every entry takes `mu`
//   wddm/dxgkrnl_thunks.cc  the kernel-thunk callbacks: allocations (VidMm), contexts and their
//                          user-mode buffers, pfnRenderCb / pfnPresentCb -> DMA buffers, locks,
//                          synchronization objects
//   wddm/dxgkrnl_vidsch.cc  VidSch (queueing, residency, split points, patch + submit, paging
//                          buffers, retirement) and the interrupt / DPC path
// Only those files include this header.
//
// Thread-safety: every member is guarded by `mu`, which the entry points in wddm/dxgkrnl.cc take;
// nothing here locks.
#ifndef CLTRACE_WDDM_INTERNAL_DXGKRNL_IMPL_H_
#define CLTRACE_WDDM_INTERNAL_DXGKRNL_IMPL_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ddi/ddi_abi.h"
#include "wddm/content_model.h"
#include "wddm/dxgkrnl.h"
#include "wddm/gpu_engine.h"
#include "wddm/internal/vidmm.h"
#include "wddm/kernel_abi.h"
#include "wddm/scheduler.h"
#include "wddm/violation.h"

namespace cltrace::gpu {

struct Dxgkrnl::Impl {
  static constexpr uint32_t kDeviceMagic = 0x4B444556;   // "KDEV"
  static constexpr uint64_t kDmaBase = 0x4000000000ull;  // physical addresses of DMA/paging buffers

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
    uint32_t primary = 0;                // from pfnSetDisplayModeCb
    bool async_callbacks = false;        // from pfnSetAsyncCallbacksCb
    uint32_t private_driver_format = 0;  // from pfnSetDisplayPrivateDriverFormatCb
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
  void Violation(rules::Rule rule, std::string message) {
    if (violations)
      violations->Report(
          gpu::Violation{.rule = rule, .time = sched.now(), .message = std::move(message)});
  }
  // Charges one kernel-thunk call of CPU time, running (at their due times) the events that
  // fall into it.
  void Tick() { sched.RunUntil(sched.now() + options.timing.cpu_per_call_ns); }
  static KDevice* Dev(HANDLE h) {
    auto* d = static_cast<KDevice*>(h);
    return (d != nullptr && d->magic == kDeviceMagic) ? d : nullptr;
  }
  KAllocation* Alloc(uint32_t id) {
    auto it = allocations.find(id);
    return (it == allocations.end() || it->second->zombie) ? nullptr : it->second.get();
  }
  // A kernel context's HANDLE (d3dumddi.h) carries its id.
  static HANDLE CtxHandle(uint32_t id) {
    return reinterpret_cast<HANDLE>(static_cast<uintptr_t>(id));
  }
  static uint32_t CtxId(HANDLE h) {
    const auto v = reinterpret_cast<uintptr_t>(h);
    return v > UINT32_MAX ? 0 : static_cast<uint32_t>(v);
  }
  KContext* Ctx(KDevice* d, HANDLE h) {
    auto it = contexts.find(CtxId(h));
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

  // ---- kernel-thunk callbacks (D3DDDI_DEVICECALLBACKS; wddm/dxgkrnl_thunks.cc) ----------
  HRESULT Allocate(KDevice* d, D3DDDICB_ALLOCATE* p);
  // Destroys `ids` now (kernel side and KMD). Callers made sure nothing references them.
  void Release(const std::vector<uint32_t>& ids);
  bool NamedAllocations(KDevice* d, HANDLE resource, const D3DKMT_HALLOCATION* list, UINT count,
                        std::vector<uint32_t>* ids);
  HRESULT Deallocate(KDevice* d, const D3DDDICB_DEALLOCATE* p);
  HRESULT SetPriority(KDevice* d, D3DDDICB_SETPRIORITY* p);
  HRESULT QueryResidency(KDevice* d, const D3DDDICB_QUERYRESIDENCY* p);
  HRESULT SetDisplayMode(KDevice* d, D3DDDICB_SETDISPLAYMODE* p);
  HRESULT CreateContext(KDevice* d, D3DDDICB_CREATECONTEXT* p);
  void HandOut(KContext* c, PVOID* cmd, UINT* cmd_size, PVOID* alloc, UINT* alloc_size,
               PVOID* patch, UINT* patch_size);
  // A free DMA buffer of at least `min_bytes` from the context's pool; waits (in virtual time)
  // for one to retire when the pool is at its limit.
  DmaBuf* GetDmaBuffer(KContext* c, uint32_t min_bytes);
  HRESULT Render(KDevice* d, D3DDDICB_RENDER* p);
  // The KMD's allocation-list entry for `a` (its segment and address now).
  DXGK_ALLOCATIONLIST KernelListEntry(const KAllocation* a, bool write);
  // Queues what the KMD wrote into `b` (up to dma_end and patches_end) as a packet of `c`.
  void QueueDmaPacket(KContext* c, DmaBuf* b, const void* dma_end, const void* patches_end,
                      std::vector<DXGK_ALLOCATIONLIST> kl, std::vector<uint32_t> ids, bool present);
  HRESULT BuildDma(KContext* c, const uint32_t* cmd, UINT length,
                   const UserAllocationListEntry* alist, UINT nalloc,
                   const D3DDDI_PATCHLOCATIONLIST* plist, UINT npatch);
  HRESULT Present(KDevice* d, const D3DDDICB_PRESENT* p);
  HRESULT Lock(KDevice* d, D3DDDICB_LOCK* p);
  HRESULT Unlock(KDevice* d, const D3DDDICB_UNLOCK* p);
  HRESULT Escape(KDevice* d, const D3DDDICB_ESCAPE* p);
  // The overlay callbacks: the model display has no overlay plane, so CreateOverlay answers
  // D3DDDIERR_NOTAVAILABLE and the others E_INVALIDARG (no overlay handle can exist).
  HRESULT CreateOverlay(KDevice* d, D3DDDICB_CREATEOVERLAY* p);
  HRESULT UpdateOverlay(KDevice* d, const D3DDDICB_UPDATEOVERLAY* p);
  HRESULT FlipOverlay(KDevice* d, const D3DDDICB_FLIPOVERLAY* p);
  HRESULT DestroyOverlay(KDevice* d, const D3DDDICB_DESTROYOVERLAY* p);
  HRESULT SetAsyncCallbacks(KDevice* d, BOOL enable);
  HRESULT SetDisplayPrivateDriverFormat(KDevice* d,
                                        const D3DDDICB_SETDISPLAYPRIVATEDRIVERFORMAT* p);
  void DrainContext(KContext* c);
  HRESULT DestroyContext(KDevice* d, const D3DDDICB_DESTROYCONTEXT* p);
  void DestroyContextNow(KContext* c);
  HRESULT CreateSync(KDevice* d, D3DDDICB_CREATESYNCHRONIZATIONOBJECT* p);
  HRESULT DestroySync(KDevice* d, const D3DDDICB_DESTROYSYNCHRONIZATIONOBJECT* p);
  HRESULT QueueSyncPacket(KDevice* d, HANDLE hc, UINT count, const D3DKMT_HSYNCOBJECT* handles,
                          Packet::Kind kind);

  // ---- VidSch, sync-object signalling, GPU -> ISR -> DPC (wddm/dxgkrnl_vidsch.cc) -------
  // Checks the output patch list of one DMA buffer (R78) and queues the packet.
  void QueuePacket(std::unique_ptr<Packet> pk);
  void KickVidSch(uint32_t node);
  void Signal(const std::vector<uint32_t>& objects);
  bool CanWait(const Packet& pk) const;
  void Schedule(uint32_t node);
  // Submits the next portion of `pk`. False if it must wait (memory pinned by work in flight);
  // sets `faulted` if it can never run (the caller retires it).
  bool SubmitPortion(uint32_t node, Packet* pk, bool* faulted);
  void BuildPaging(uint32_t node, const std::vector<internal::PagingOp>& ops);
  // DxgkDdiSubmitCommand of bytes [start, end) of `b` on `node` (context {}: a paging buffer).
  void SubmitToKmd(decltype(DXGKARG_SUBMITCOMMAND::hContext) context, const DmaBuf& b, UINT start,
                   UINT end, uint32_t fence, UINT flags, uint32_t node);
  DmaBuf* GetPagingBuffer();
  void RetirePacket(Packet* pk);
  void Retire();
  void OnInterruptAsserted();
  void NotifyInterrupt(const DXGKARGCB_NOTIFY_INTERRUPT_DATA* d);
  BOOL QueueDpc();
  void NotifyDpc();

  // ---- state ------------------------------------------------------------------------------
  DxgkrnlOptions options;
  ViolationSink* violations;
  // std::mutex, not absl::Mutex: Debian's Abseil is built without ThreadSanitizer
  // instrumentation, so TSAN cannot see absl::Mutex's happens-before edges and reports every
  // access the lock protects as a race (tests/runtime threads, scripts/tsan.sh).
  mutable std::mutex mu;
  Scheduler sched;
  ContentModel content;
  internal::VidMm vidmm;
  GpuEngine gpu;
  std::vector<Node> nodes;
  std::vector<bool> vidsch_pending;
  const DRIVER_INITIALIZATION_DATA* kmd = nullptr;
  DXGK_HADAPTER kmd_adapter{};
  const CLTRACE_GPU_OBSERVER* observer = nullptr;  // Dxgkrnl::SetGpuObserver
  std::map<uint32_t, std::unique_ptr<KDevice>> devices;
  std::map<uint32_t, std::unique_ptr<KContext>> contexts;
  std::map<uint32_t, std::unique_ptr<KAllocation>> allocations;
  std::map<uint32_t, std::vector<uint32_t>> resources;
  // The runtime resource handle (D3DDDICB_ALLOCATE::hResource) of each kernel resource, per
  // device: Deallocate, SetPriority and QueryResidency name a resource by it.
  std::map<std::pair<KDevice*, HANDLE>, uint32_t> rt_resources;
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

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_INTERNAL_DXGKRNL_IMPL_H_
