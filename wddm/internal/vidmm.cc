#include "wddm/internal/vidmm.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "wddm/free_ranges.h"

namespace cltrace::gpu::internal {
namespace {

constexpr uint64_t kPage = 4096;

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// The ids in the order the caller listed them, each once (its first occurrence).
std::vector<AllocationId> FirstOccurrences(absl::Span<const AllocationId> ids) {
  std::vector<AllocationId> order;
  absl::flat_hash_set<AllocationId> seen;
  for (AllocationId id : ids) {
    if (seen.insert(id).second) order.push_back(id);
  }
  return order;
}

}  // namespace

VidMm::VidMm(uint64_t video_segment_size) : video_size_(AlignUp(video_segment_size, kPage)) {
  if (video_size_ > 0) free_.emplace(kVideoSegmentBase, video_size_);
}

absl::Status VidMm::Create(AllocationId id, uint64_t size, uint64_t alignment) {
  if (size == 0) return absl::InvalidArgumentError(absl::StrCat("allocation ", id, ": size 0"));
  if (alignment == 0) alignment = kPage;
  if ((alignment & (alignment - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("allocation ", id, ": alignment ", alignment, " is not a power of two"));
  }
  Alloc a;
  a.size = size;
  a.alignment = std::max(alignment, kPage);
  a.system = next_system_;
  next_system_ += AlignUp(size, kPage);
  if (!allocs_.try_emplace(id, a).second) {
    return absl::AlreadyExistsError(absl::StrCat("allocation ", id, " exists"));
  }
  by_address_.emplace(a.system, id);
  return absl::OkStatus();
}

void VidMm::Unindex(AllocationId id, const Alloc& a) {
  if (a.video != 0 && a.pins == 0) evictable_.erase({a.priority, a.last_use, id});
}

void VidMm::Reindex(AllocationId id, const Alloc& a) {
  if (a.video != 0 && a.pins == 0) evictable_.insert({a.priority, a.last_use, id});
}

void VidMm::Release(AllocationId id) {
  auto it = allocs_.find(id);
  Alloc& a = it->second;
  Unindex(id, a);
  if (a.video != 0) {
    by_address_.erase(a.video);
    Free(a.video, AlignUp(a.size, kPage));
  }
  by_address_.erase(a.system);
  allocs_.erase(it);
}

absl::StatusOr<bool> VidMm::Destroy(AllocationId id) {
  auto it = allocs_.find(id);
  if (it == allocs_.end() || it->second.zombie) {
    return absl::NotFoundError(absl::StrCat("destroy of unknown allocation ", id));
  }
  if (it->second.pins > 0) {
    it->second.zombie = true;
    return false;
  }
  Release(id);
  return true;
}

std::optional<uint64_t> VidMm::Place(uint64_t size, uint64_t alignment) {
  for (auto& [start, len] : free_) {
    uint64_t at = AlignUp(start, alignment);
    if (at + size > start + len) continue;
    uint64_t s = start, l = len;
    free_.erase(s);
    if (at > s) free_.emplace(s, at - s);
    if (at + size < s + l) free_.emplace(at + size, s + l - (at + size));
    video_used_ += size;
    return at;
  }
  return std::nullopt;
}

void VidMm::Free(uint64_t address, uint64_t size) {
  video_used_ -= size;
  ReleaseRange(free_, address, size);
}

bool VidMm::CanFitTogether(absl::Span<const AllocationId> ids) const {
  absl::flat_hash_set<AllocationId> seen;
  uint64_t total = 0;
  for (AllocationId id : ids) {
    auto it = allocs_.find(id);
    if (it == allocs_.end() || !seen.insert(id).second) continue;
    total += AlignUp(it->second.size, it->second.alignment);
  }
  return total <= video_size_;
}

absl::StatusOr<std::vector<PagingOp>> VidMm::MakeResident(absl::Span<const AllocationId> ids) {
  auto ops = MakeResidentOnce(ids, /*compact=*/false);
  if (ops.ok() || ops.status().code() != absl::StatusCode::kResourceExhausted) return ops;
  // The set may fit but be fragmented by its own resident members: evict every unpinned
  // allocation (members too, they are transferred back) and place the set from scratch.
  return MakeResidentOnce(ids, /*compact=*/true);
}

// The transfer of a resident allocation back to its system memory.
PagingOp VidMm::EvictionOp(AllocationId id, const Alloc& a) {
  PagingOp op;
  op.kind = PagingOp::kTransferToSystem;
  op.id = id;
  op.size = a.size;
  op.src_segment = kVideoSegmentId;
  op.src = a.video;
  op.dst_segment = kSystemSegmentId;
  op.dst = a.system;
  return op;
}

// The page-in of an allocation to video address `at`: its content transferred from system
// memory when it was ever resident, else a fill.
PagingOp VidMm::PageInOp(AllocationId id, const Alloc& a, uint64_t at) {
  PagingOp op;
  op.id = id;
  op.size = a.size;
  op.dst_segment = kVideoSegmentId;
  op.dst = at;
  if (a.written) {
    op.kind = PagingOp::kTransferToVideo;
    op.src_segment = kSystemSegmentId;
    op.src = a.system;
  } else {
    op.kind = PagingOp::kFill;
  }
  return op;
}

// Lowest priority, then least recently used, unpinned, resident, outside the wanted set; ties
// by id. None when every resident allocation is pinned or wanted.
std::optional<AllocationId> VidMm::FindVictim(
    const absl::flat_hash_set<AllocationId>& wanted) const {
  for (const EvictionKey& key : evictable_) {
    if (wanted.contains(std::get<2>(key))) continue;
    return std::get<2>(key);
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<PagingOp>> VidMm::MakeResidentOnce(absl::Span<const AllocationId> ids,
                                                              bool compact) {
  absl::flat_hash_set<AllocationId> wanted;
  for (AllocationId id : ids) {
    auto it = allocs_.find(id);
    if (it == allocs_.end() || it->second.zombie) {
      return absl::NotFoundError(absl::StrCat("residency for unknown allocation ", id));
    }
    wanted.insert(id);
  }
  ++use_clock_;
  std::vector<PagingOp> evictions, page_ins;
  // Deterministic order: the order the caller listed them (first occurrence).
  const std::vector<AllocationId> order = FirstOccurrences(ids);
  // Undo log so a failure leaves nothing changed: the allocations touched, and each video
  // range placed or evicted, undone in reverse order. Never a copy of the maps: their size
  // grows with the allocations alive, and this runs for every submission.
  std::vector<std::pair<AllocationId, Alloc>> saved;
  struct Moved {
    bool placed;  // false: evicted
    AllocationId id;
    uint64_t video;
  };
  std::vector<Moved> moves;
  for (AllocationId id : order) saved.emplace_back(id, allocs_[id]);
  auto rollback = [&] {
    for (auto it = moves.rbegin(); it != moves.rend(); ++it) {
      const uint64_t size = AlignUp(allocs_[it->id].size, kPage);
      if (it->placed) {
        by_address_.erase(it->video);
        Free(it->video, size);
      } else {
        TakeRange(free_, it->video, size);  // free since the eviction: nothing placed it again
        video_used_ += size;
        by_address_.emplace(it->video, it->id);
      }
    }
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      Alloc& a = allocs_[it->first];
      Unindex(it->first, a);
      a = it->second;
      Reindex(it->first, a);
    }
  };
  auto evict = [&](AllocationId vid) {
    Alloc& v = allocs_[vid];
    saved.emplace_back(vid, v);
    moves.push_back({false, vid, v.video});
    Unindex(vid, v);
    evictions.push_back(EvictionOp(vid, v));
    by_address_.erase(v.video);
    Free(v.video, AlignUp(v.size, kPage));
    v.video = 0;
  };
  if (compact) {
    std::vector<AllocationId> resident;
    for (const EvictionKey& key : evictable_) resident.push_back(std::get<2>(key));
    std::sort(resident.begin(), resident.end());
    for (AllocationId vid : resident) evict(vid);
  }
  for (AllocationId id : order) {
    Alloc& a = allocs_[id];
    Unindex(id, a);
    a.last_use = use_clock_;
    Reindex(id, a);
    if (a.video != 0) continue;
    std::optional<uint64_t> at = Place(AlignUp(a.size, kPage), a.alignment);
    while (!at.has_value()) {
      const std::optional<AllocationId> victim = FindVictim(wanted);
      if (!victim.has_value()) {
        rollback();
        return absl::ResourceExhaustedError(
            absl::StrCat("cannot make ", order.size(), " allocations resident: the ", video_size_,
                         "-byte video segment is full of pinned or needed ones"));
      }
      evict(*victim);
      at = Place(AlignUp(a.size, kPage), a.alignment);
    }
    page_ins.push_back(PageInOp(id, a, *at));
    a.video = *at;
    a.written = true;
    Reindex(id, a);
    by_address_.emplace(*at, id);
    moves.push_back({true, id, *at});
  }
  evictions.insert(evictions.end(), page_ins.begin(), page_ins.end());
  return evictions;
}

void VidMm::SetPriority(AllocationId id, uint32_t priority) {
  auto it = allocs_.find(id);
  if (it == allocs_.end()) return;
  Unindex(id, it->second);
  it->second.priority = priority;
  Reindex(id, it->second);
}

void VidMm::Pin(absl::Span<const AllocationId> ids) {
  for (AllocationId id : ids) {
    auto it = allocs_.find(id);
    if (it == allocs_.end()) continue;
    Unindex(id, it->second);
    ++it->second.pins;
  }
}

std::vector<AllocationId> VidMm::Unpin(absl::Span<const AllocationId> ids) {
  std::vector<AllocationId> released;
  for (AllocationId id : ids) {
    auto it = allocs_.find(id);
    if (it == allocs_.end() || it->second.pins == 0) continue;
    if (--it->second.pins == 0 && it->second.zombie) {
      Release(id);
      released.push_back(id);
    } else {
      Reindex(id, it->second);
    }
  }
  return released;
}

uint64_t VidMm::VideoAddress(AllocationId id) const {
  auto it = allocs_.find(id);
  return it == allocs_.end() ? 0 : it->second.video;
}

uint32_t VidMm::SegmentOf(AllocationId id) const {
  return VideoAddress(id) != 0 ? kVideoSegmentId : kSystemSegmentId;
}

std::optional<ResolvedAddress> VidMm::Resolve(uint64_t address) const {
  auto it = by_address_.find(address);
  if (it == by_address_.end()) return std::nullopt;
  return ResolvedAddress{it->second, address >= kVideoSegmentBase && address < kSystemBase};
}

}  // namespace cltrace::gpu::internal
