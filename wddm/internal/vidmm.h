// VidMm of the model: where every allocation lives (a video-memory segment with first-fit
// placement and LRU eviction, plus a system-memory backing address per allocation), which
// allocations queued GPU work pins, and the paging operations residency needs.
//
// It is also the GPU's view of memory (GpuMemoryMap): an address resolves to the allocation
// whose range starts there, in video memory if resident, else at its system backing address.
//
// Thread-safety: none; used under gpu::Dxgkrnl's lock.
#ifndef CLTRACE_WDDM_INTERNAL_VIDMM_H_
#define CLTRACE_WDDM_INTERNAL_VIDMM_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "wddm/content_model.h"
#include "wddm/gpu_engine.h"

namespace cltrace::gpu::internal {

inline constexpr uint32_t kSystemSegmentId = 0;  // DXGK segment ids: 0 = system memory
inline constexpr uint32_t kVideoSegmentId = 1;
inline constexpr uint64_t kVideoSegmentBase = 0x100000000ull;
inline constexpr uint64_t kSystemBase = 0x8000000000ull;

struct PagingOp {
  enum Kind { kFill, kTransferToVideo, kTransferToSystem } kind = kFill;
  AllocationId id = 0;
  uint64_t size = 0;
  uint32_t src_segment = 0, dst_segment = 0;
  uint64_t src = 0, dst = 0;  // addresses (src unused for fills)
};

class VidMm : public GpuMemoryMap {
 public:
  explicit VidMm(uint64_t video_segment_size);

  // Starts tracking an allocation (not resident, never written). AlreadyExists / InvalidArgument.
  absl::Status Create(AllocationId id, uint64_t size, uint64_t alignment);
  // Forgets `id` once nothing pins it: returns true if it was released now, false if it is
  // pinned (released by the Unpin that drops the last pin). NotFound if unknown.
  absl::StatusOr<bool> Destroy(AllocationId id);

  // Makes every allocation of `ids` video-resident, evicting unpinned least-recently-used
  // ones outside the set, and returns the paging operations in execution order (evictions
  // first). ResourceExhausted (nothing changed) if the set cannot fit even after eviction.
  absl::StatusOr<std::vector<PagingOp>> MakeResident(absl::Span<const AllocationId> ids);
  // True if `ids` could be resident at the same time (total size fits the segment).
  bool CanFitTogether(absl::Span<const AllocationId> ids) const;

  // Eviction prefers lower priorities (pfnSetPriorityCb); default 0.
  void SetPriority(AllocationId id, uint32_t priority);

  // Queued GPU work references these (no eviction, destruction deferred). Duplicates allowed.
  void Pin(absl::Span<const AllocationId> ids);
  // Returns the allocations whose deferred destruction completed.
  std::vector<AllocationId> Unpin(absl::Span<const AllocationId> ids);

  // Video address if resident, else 0.
  uint64_t VideoAddress(AllocationId id) const;
  uint32_t SegmentOf(AllocationId id) const;
  bool Contains(AllocationId id) const { return allocs_.contains(id); }
  uint64_t video_used() const { return video_used_; }
  uint64_t video_size() const { return video_size_; }

  std::optional<ResolvedAddress> Resolve(uint64_t address) const override;

 private:
  struct Alloc {
    uint64_t size = 0;
    uint64_t alignment = 0;
    uint64_t video = 0;  // 0 = not resident
    uint64_t system = 0;
    bool written = false;  // ever resident (its content must be transferred back on page-in)
    uint32_t pins = 0;
    bool zombie = false;  // destroyed while pinned
    uint64_t last_use = 0;
    uint32_t priority = 0;
  };
  absl::StatusOr<std::vector<PagingOp>> MakeResidentOnce(absl::Span<const AllocationId> ids,
                                                         bool compact);
  std::optional<uint64_t> Place(uint64_t size, uint64_t alignment);
  void Free(uint64_t address, uint64_t size);
  void Release(AllocationId id);
  // The eviction order: (priority, last use, id) of every resident, unpinned allocation.
  // Unindex before changing an allocation's residency, pins, priority or last use; Reindex
  // after.
  using EvictionKey = std::tuple<uint32_t, uint64_t, AllocationId>;
  void Unindex(AllocationId id, const Alloc& a);
  void Reindex(AllocationId id, const Alloc& a);
  // MakeResidentOnce's steps: the paging operations of an eviction and of a page-in, and the
  // next allocation to evict to make room for `wanted`.
  static PagingOp EvictionOp(AllocationId id, const Alloc& a);
  static PagingOp PageInOp(AllocationId id, const Alloc& a, uint64_t at);
  std::optional<AllocationId> FindVictim(const absl::flat_hash_set<AllocationId>& wanted) const;

  uint64_t video_size_;
  uint64_t video_used_ = 0;
  uint64_t next_system_ = kSystemBase;
  uint64_t use_clock_ = 0;
  std::map<uint64_t, uint64_t> free_;  // video start -> size, coalesced
  absl::flat_hash_map<AllocationId, Alloc> allocs_;
  std::map<uint64_t, AllocationId> by_address_;
  // Eviction candidates in eviction order (a scan of every allocation per eviction made a
  // submission's cost grow with the allocations alive).
  std::set<EvictionKey> evictable_;
};

}  // namespace cltrace::gpu::internal

#endif  // CLTRACE_WDDM_INTERNAL_VIDMM_H_
