// gpu::Dxgkrnl's VidSch and interrupt path (ddi-spec §6): queued DMA packets are made
// resident (VidMm paging operations -> DxgkDdiBuildPagingBuffer + DxgkDdiSubmitCommand of the
// paging buffer), split at patch-list split points when their allocations do not fit together
// (R78), patched (DxgkDdiPatch) and submitted (DxgkDdiSubmitCommand) with the same fence id
// (planted R75/R76 break that); the GPU's interrupt runs DxgkDdiInterruptRoutine, whose
// DxgkCbNotifyInterrupt / DxgkCbQueueDpc order is checked (R77), then DxgkDdiDpcRoutine ->
// DxgkCbNotifyDpc -> retirement, which tells the GPU observer (GpuFenceRetired with the
// content digest of each retired fence), frees zombie allocations and signals sync objects.
// Everything runs as virtual-time events of the Scheduler with Dxgkrnl::Impl::mu held.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "wddm/internal/dxgkrnl_impl.h"

namespace cltrace::gpu {
namespace {

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

}  // namespace

const char* KernelExecutionContext() { return t_kernel_context; }

// Checks the output patch list of one DMA buffer (R78) and queues the packet.
void Dxgkrnl::Impl::QueuePacket(std::unique_ptr<Packet> pk) {
  pk->splittable = true;
  for (uint32_t i = 1; i < pk->num_patches; ++i) {
    if (pk->dma->patches[i].SplitOffset < pk->dma->patches[i - 1].SplitOffset) {
      Violation(rules::Rule::kR78,
                absl::StrFormat("%s output patch list of context %u: entry %u SplitOffset %u "
                                "< entry %u SplitOffset %u",
                                pk->present ? "DxgkDdiPresent" : "DxgkDdiRender", pk->ctx->id, i,
                                pk->dma->patches[i].SplitOffset, i - 1,
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

void Dxgkrnl::Impl::KickVidSch(uint32_t node) {
  if (vidsch_pending[node]) return;
  vidsch_pending[node] = true;
  sched.After(options.timing.vidsch_latency_ns, [this, node] {
    ScopedKernelContext scope("vidsch");
    vidsch_pending[node] = false;
    Schedule(node);
  });
}

void Dxgkrnl::Impl::Signal(const std::vector<uint32_t>& objects) {
  for (uint32_t id : objects) {
    auto it = syncs.find(id);
    if (it == syncs.end()) continue;
    KSync& s = *it->second;
    s.count = std::min(s.count + 1, s.max_count);
  }
  for (uint32_t n = 0; n < nodes.size(); ++n) KickVidSch(n);  // a wait may now proceed
}

bool Dxgkrnl::Impl::CanWait(const Packet& pk) const {
  for (uint32_t id : pk.sync_objects) {
    auto it = syncs.find(id);
    if (it != syncs.end() && it->second->count == 0) return false;
  }
  return true;
}

void Dxgkrnl::Impl::Schedule(uint32_t node) {
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
bool Dxgkrnl::Impl::SubmitPortion(uint32_t node, Packet* pk, bool* faulted) {
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
  SubmitToKmd(pk->ctx->kmd, *pk->dma, pk->next_offset, end, submit_fence,
              pk->present ? DXGK_SUBMITCOMMANDFLAGS_PRESENT : 0, node);
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

void Dxgkrnl::Impl::SubmitToKmd(decltype(DXGKARG_SUBMITCOMMAND::hContext) context, const DmaBuf& b,
                                UINT start, UINT end, uint32_t fence, UINT flags, uint32_t node) {
  DXGKARG_SUBMITCOMMAND sub{};
  sub.hContext = context;
  sub.DmaBufferSegmentId = 0;
  sub.DmaBufferPhysicalAddress = static_cast<PHYSICAL_ADDRESS>(b.phys);
  sub.DmaBufferSize = static_cast<UINT>(b.words.size() * 4);
  sub.DmaBufferSubmissionStartOffset = start;
  sub.DmaBufferSubmissionEndOffset = end;
  sub.SubmissionFenceId = fence;
  sub.Flags = flags;
  sub.EngineOrdinal = 0;
  sub.NodeOrdinal = node;
  kmd->DxgkDdiSubmitCommand(kmd_adapter, &sub);
}

void Dxgkrnl::Impl::BuildPaging(uint32_t node, const std::vector<internal::PagingOp>& ops) {
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
    // hContext NULL: system paging work.
    SubmitToKmd({}, *b, 0, used, fence, DXGK_SUBMITCOMMANDFLAGS_PAGINGBUFFER, node);
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

Dxgkrnl::Impl::DmaBuf* Dxgkrnl::Impl::GetPagingBuffer() {
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

void Dxgkrnl::Impl::RetirePacket(Packet* pk) {
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

void Dxgkrnl::Impl::Retire() {
  for (uint32_t node = 0; node < nodes.size(); ++node) {
    Node& n = nodes[node];
    while (!n.in_flight.empty() && n.in_flight.front().fence <= n.notified_completed) {
      InFlight f = std::move(n.in_flight.front());
      n.in_flight.pop_front();
      // The content the entry's own work left (taken at completion, over what it wrote, so it
      // depends neither on how late this DPC runs nor on other threads' calls); the digest of
      // no allocation if the engine has no record of it, which a fence it completed always has.
      const uint64_t digest =
          gpu.TakeCompletionDigest(node, f.fence).value_or(content.SubsetDigest({}));
      if (observer != nullptr) {
        observer->pfnGpuFenceRetired(DXGKRNL_HADAPTER{this}, node, f.fence, digest,
                                     f.paging != nullptr ? 1 : 0);
      }
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

void Dxgkrnl::Impl::OnInterruptAsserted() {
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
      Violation(rules::Rule::kR77,
                "DxgkDdiInterruptRoutine reported DMA completion but returned without "
                "DxgkCbQueueDpc after DxgkCbNotifyInterrupt");
    }
  });
}

void Dxgkrnl::Impl::NotifyInterrupt(const DXGKARGCB_NOTIFY_INTERRUPT_DATA* d) {
  if (!isr.active) {
    Violation(rules::Rule::kR77,
              absl::StrFormat("DxgkCbNotifyInterrupt (type %u) outside DxgkDdiInterruptRoutine",
                              d->InterruptType));
  }
  switch (d->InterruptType) {
    case DXGK_INTERRUPT_DMA_COMPLETED:
    case DXGK_INTERRUPT_DMA_FAULTED:
    case DXGK_INTERRUPT_DMA_PREEMPTED: {
      if (isr.crtc_seen) {
        Violation(rules::Rule::kR77,
                  "DxgkCbNotifyInterrupt: DMA-type notification after a CRTC-type one in "
                  "the same interrupt");
      }
      if (isr.dpc_queued && !isr.reported) {
        Violation(rules::Rule::kR77,
                  "DxgkCbQueueDpc before DxgkCbNotifyInterrupt(DMA) in the same interrupt");
        isr.reported = true;
      }
      isr.dma_notified = true;
      if (d->NodeOrdinal >= nodes.size()) {
        Violation(rules::Rule::kR77, absl::StrFormat("DxgkCbNotifyInterrupt for node %u of %u",
                                                     d->NodeOrdinal, nodes.size()));
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
          Violation(
              rules::Rule::kR77,
              absl::StrFormat("DxgkCbNotifyInterrupt(DMA_COMPLETED) node %u fence %u: "
                              "last completed %u, last "
                              "submitted %u",
                              d->NodeOrdinal, d->SubmissionFenceId, n.notified_completed, n.fence));
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

BOOL Dxgkrnl::Impl::QueueDpc() {
  if (!isr.active) {
    Violation(rules::Rule::kR77, "DxgkCbQueueDpc outside DxgkDdiInterruptRoutine");
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
      Violation(rules::Rule::kR77, "DxgkDdiDpcRoutine returned without DxgkCbNotifyDpc");
      Retire();  // keep the model going
    }
  });
  return 1;
}

void Dxgkrnl::Impl::NotifyDpc() {
  if (!dpc_active) Violation(rules::Rule::kR77, "DxgkCbNotifyDpc outside DxgkDdiDpcRoutine");
  dpc_notified = true;
  Retire();
}
}  // namespace cltrace::gpu
