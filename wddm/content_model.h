// The content model: one stable 64-bit digest per allocation, changed by the operations the
// GPU executes (clear, update, copy, draw) and by CPU writes through Lock/Map.
//
// Why digests instead of bytes: replay only needs to know whether two runs produced the same
// contents after each Flush/Present, and resources can be large. The formulas (wddm/README.md,
// "Content digests") are content-based where that is cheap to get right: a full copy gives the
// destination exactly the source's digest, a clear depends only on size and value, a fresh
// allocation is "zero" whatever its handle. Everything else folds the previous digest.
//
// Thread-safety: none; owned by the GPU engine model, which runs under gpu::Dxgkrnl's lock.
//
// Example:
//   ContentModel m;
//   m.Create(1, 256);  m.Create(2, 256);
//   m.Clear(1, 0xFF);  m.Copy(2, 1);   // m.Digest(2) == m.Digest(1)
#ifndef CLTRACE_WDDM_CONTENT_MODEL_H_
#define CLTRACE_WDDM_CONTENT_MODEL_H_

#include <cstdint>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace cltrace::gpu {

// Allocations are named by their kernel handle value (D3DKMT_HALLOCATION.value).
using AllocationId = uint32_t;

// Digest of a freshly created (zero-filled) allocation of `size` bytes.
uint64_t ZeroDigest(uint64_t size);

class ContentModel {
 public:
  // Starts tracking `id` as a zero-filled allocation of `size` bytes. AlreadyExists if known.
  absl::Status Create(AllocationId id, uint64_t size);
  // Forgets `id`. NotFound if unknown.
  absl::Status Destroy(AllocationId id);

  // Fills the whole allocation with the 64-bit pattern `value`.
  absl::Status Clear(AllocationId dst, uint64_t value);
  // Writes `size` bytes whose own digest is `data_digest` (HashBytes of the bytes) at `offset`.
  // A write covering the whole allocation replaces the content (the previous digest is not
  // folded in). OutOfRange if the range does not fit.
  absl::Status Update(AllocationId dst, uint64_t offset, uint64_t size, uint64_t data_digest);
  // Whole-resource copy. Equal sizes: dst takes src's digest. Otherwise a region copy of
  // min(sizes) bytes at offset 0.
  absl::Status Copy(AllocationId dst, AllocationId src);
  // Copies `size` bytes from src+src_offset to dst+dst_offset.
  absl::Status CopyRegion(AllocationId dst, uint64_t dst_offset, AllocationId src,
                          uint64_t src_offset, uint64_t size);
  // A draw writing `target`, reading `inputs` in order, with pipeline-state digest `state`.
  absl::Status Draw(AllocationId target, uint64_t state, uint32_t vertex_count,
                    uint32_t start_vertex, uint32_t instance_count,
                    absl::Span<const AllocationId> inputs);

  bool Contains(AllocationId id) const { return entries_.contains(id); }
  std::optional<uint64_t> Digest(AllocationId id) const;
  std::optional<uint64_t> Size(AllocationId id) const;
  size_t size() const { return entries_.size(); }
  // Order-independent summary of every allocation (id, size, digest): equal for equal models.
  // O(1): the order-independent sum it is built on is kept up to date by every change.
  uint64_t CombinedDigest() const;
  // The same summary over the allocations `ids` only (duplicates and unknown ids ignored):
  // what CombinedDigest would be for a model holding just those. The GPU takes it over the
  // allocations a ring entry wrote (GpuEngine, per-fence digests).
  uint64_t SubsetDigest(absl::Span<const AllocationId> ids) const;

 private:
  struct Entry {
    uint64_t size = 0;
    uint64_t digest = 0;
  };
  absl::StatusOr<Entry*> Find(AllocationId id, const char* what);
  // Gives allocation `id` (whose entry is `e`) the digest `digest`, keeping sum_ in step.
  void SetDigest(AllocationId id, Entry& e, uint64_t digest);
  absl::flat_hash_map<AllocationId, Entry> entries_;
  // Sum (64-bit wrap-around) over entries_ of EntryTerm(id, size, digest).
  uint64_t sum_ = 0;
};

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_CONTENT_MODEL_H_
