#include "wddm/gpu_engine.h"

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "wddm/command_stream.h"

namespace cltrace::gpu {

bool GpuEngine::InterruptStatus::Any() const {
  if (vsync) return true;
  for (const NodeStatus& n : nodes) {
    if (n.dma_completed || n.dma_faulted) return true;
  }
  return false;
}

GpuEngine::GpuEngine(Scheduler* scheduler, ContentModel* content, const GpuMemoryMap* memory,
                     uint32_t num_nodes, GpuTiming timing)
    : scheduler_(scheduler),
      content_(content),
      memory_(memory),
      timing_(timing),
      nodes_(num_nodes == 0 ? 1 : num_nodes) {}

bool GpuEngine::idle() const {
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    if (busy(n)) return false;
  }
  return true;
}

void GpuEngine::MapDmaMemory(uint64_t physical, absl::Span<const uint32_t> words) {
  dma_memory_[physical] = words;
}

void GpuEngine::UnmapDmaMemory(uint64_t physical) { dma_memory_.erase(physical); }

void GpuEngine::Submit(uint32_t node, uint64_t physical, uint32_t bytes, uint64_t fence,
                       bool paging) {
  if (node >= nodes_.size()) node = 0;  // the KMD validated the ordinal; stay defined anyway
  Entry e;
  e.fence = fence;
  e.paging = paging;
  auto it = dma_memory_.upper_bound(physical);
  bool mapped = false;
  if (it != dma_memory_.begin() && physical % 4 == 0 && bytes % 4 == 0) {
    --it;
    uint64_t first = (physical - it->first) / 4;
    if (first <= it->second.size() && bytes / 4 <= it->second.size() - first) {
      e.dma = it->second.subspan(first, bytes / 4);
      mapped = true;
    }
  }
  if (!mapped) {
    e.fetch_fault = absl::StrFormat("DMA fetch of %u bytes at 0x%x: not mapped", bytes, physical);
  }
  nodes_[node].ring.push_back(std::move(e));
  if (!nodes_[node].running) Kick(node);
}

void GpuEngine::Kick(uint32_t node) {
  Node& n = nodes_[node];
  if (n.running || n.ring.empty()) return;
  n.running = true;
  // The cost is known from a decode-only pass; the effects land at completion time, so nobody
  // observes the results of work the GPU has not finished.
  const Entry& e = n.ring.front();
  VirtualTime cost = timing_.per_entry_ns;
  size_t pos = 0;
  while (pos < e.dma.size()) {
    Command c;
    auto len = DecodeCommand(e.dma, pos, CommandFormat::kDma, &c);
    if (!len.ok()) break;  // the fault is found again (and reported) when executing
    cost += timing_.per_command_ns;
    if (c.op == Opcode::kDraw) {
      cost += timing_.per_vertex_ns * static_cast<VirtualTime>(c.vertex_count) *
              (c.instance_count ? c.instance_count : 1);
    } else if (c.op == Opcode::kPagingTransfer || c.op == Opcode::kPagingFill) {
      cost += timing_.per_kib_paged_ns * ((static_cast<VirtualTime>(c.size) + 1023) / 1024);
    }
    pos += *len;
  }
  scheduler_->After(cost, [this, node] {
    Node& nn = nodes_[node];
    Entry done = nn.ring.front();
    nn.ring.pop_front();
    std::string fault = done.fetch_fault;
    std::vector<AllocationId> written;
    if (fault.empty()) Execute(node, done, &fault, &written);
    Complete(node, done, std::move(fault), written);
    nn.running = false;
    Kick(node);
  });
}

void GpuEngine::Execute(uint32_t node, const Entry& e, std::string* fault,
                        std::vector<AllocationId>* written) {
  ++stats_.entries;
  if (e.paging) ++stats_.paging_entries;
  size_t pos = 0;
  while (pos < e.dma.size()) {
    Command c;
    auto len = DecodeCommand(e.dma, pos, CommandFormat::kDma, &c);
    if (!len.ok()) {
      *fault = std::string(len.status().message());
      return;
    }
    ++stats_.commands;
    // Resolve every reference of a render command to a video-resident allocation. Paging
    // commands are not resolved: content is tracked per allocation, so moving it between
    // segments changes no digest, and VidMm may already have re-planned the source range for
    // later work when the transfer runs.
    const bool paging_cmd = c.op == Opcode::kPagingTransfer || c.op == Opcode::kPagingFill;
    absl::InlinedVector<AllocationId, 4> ids;
    for (uint64_t address : c.refs) {
      if (paging_cmd) break;
      std::optional<ResolvedAddress> r = memory_->Resolve(address);
      if (!r.has_value() || !r->video) {
        *fault = absl::StrFormat("%s at DMA byte offset %u: no resident allocation at address 0x%x",
                                 OpcodeName(static_cast<uint8_t>(c.op)), pos * 4, address);
        return;
      }
      ids.push_back(r->allocation);
    }
    absl::Status s;
    switch (c.op) {
      case Opcode::kNop:
      case Opcode::kMarker:
      case Opcode::kPrivate:
        break;
      case Opcode::kClear:
        s = content_->Clear(ids[0], c.value);
        break;
      case Opcode::kUpdate:
        s = content_->Update(ids[0], c.offset, c.size, c.value);
        break;
      case Opcode::kCopy:
        s = content_->Copy(ids[0], ids[1]);
        break;
      case Opcode::kCopyRegion:
        s = content_->CopyRegion(ids[0], c.offset, ids[1], c.src_offset, c.size);
        break;
      case Opcode::kDraw:
        s = content_->Draw(ids[0], c.value, c.vertex_count, c.start_vertex, c.instance_count,
                           absl::MakeConstSpan(ids).subspan(1));
        break;
      case Opcode::kFence:
        nodes_[node].last_dma_fence = c.value;
        break;
      case Opcode::kPresentBlt:
        s = content_->Copy(ids[0], ids[1]);
        vsync_pending_ = true;
        break;
      case Opcode::kPagingTransfer:
      case Opcode::kPagingFill:
        // Fills only ever initialise a never-written allocation, whose digest is already the
        // zero digest (wddm/README.md); transfers keep the per-allocation digest.
        break;
    }
    // Every content-changing command writes its first reference (the destination).
    const bool writes = c.op == Opcode::kClear || c.op == Opcode::kUpdate ||
                        c.op == Opcode::kCopy || c.op == Opcode::kCopyRegion ||
                        c.op == Opcode::kDraw || c.op == Opcode::kPresentBlt;
    if (s.ok() && writes) written->push_back(ids[0]);
    if (!s.ok()) {
      *fault = absl::StrCat(OpcodeName(static_cast<uint8_t>(c.op)), " at DMA byte offset ", pos * 4,
                            ": ", s.message());
      return;
    }
    pos += *len;
  }
}

void GpuEngine::Complete(uint32_t node, const Entry& e, std::string fault,
                         absl::Span<const AllocationId> written) {
  Node& n = nodes_[node];
  if (!fault.empty()) {
    ++stats_.faults;
    n.pending.dma_faulted = true;
    n.pending.faulted_fence = e.fence;
    n.pending.fault = std::move(fault);
  }
  // The ring writes the fence even after a fault, so the scheduler can retire the entry.
  n.completed_fence = e.fence;
  // What this entry's own work left: the allocations it wrote, as they are now. Not the whole
  // content model: allocations other threads created, destroyed or wrote meanwhile (whose
  // place relative to this completion in virtual time a recording cannot pin down) stay out.
  n.completion_digests.emplace_back(e.fence, content_->SubsetDigest(written));
  n.pending.dma_completed = true;
  n.pending.completed_fence = e.fence;
  Latch();
}

void GpuEngine::Latch() {
  if (line_asserted_) return;  // level-triggered: one pending interrupt covers all causes
  line_asserted_ = true;
  if (assert_interrupt_) assert_interrupt_();
}

std::optional<uint64_t> GpuEngine::TakeCompletionDigest(uint32_t node, uint64_t fence) {
  if (node >= nodes_.size()) return std::nullopt;
  auto& q = nodes_[node].completion_digests;
  // Ring entries complete in submission order and fences increase along a ring, so the one
  // asked for is at the front unless an earlier one was never taken.
  while (!q.empty() && q.front().first != fence) {
    if (q.front().first > fence) return std::nullopt;
    q.pop_front();
  }
  if (q.empty()) return std::nullopt;
  const uint64_t digest = q.front().second;
  q.pop_front();
  return digest;
}

GpuEngine::InterruptStatus GpuEngine::ReadInterruptStatus() {
  InterruptStatus s;
  s.nodes.reserve(nodes_.size());
  for (Node& n : nodes_) {
    s.nodes.push_back(n.pending);
    n.pending = NodeStatus{};
  }
  s.vsync = vsync_pending_;
  vsync_pending_ = false;
  line_asserted_ = false;
  return s;
}

}  // namespace cltrace::gpu
