// SlotTable: the checker's per-handle-id slots (HandleSlot: which record holds each role's
// current lifetime of a handle id), in pages of 64 ids allocated on first use and freed when
// none of their slots names anything. Each slot remembers the compaction epoch in which a
// call last named it; a slot whose lifetimes are over and that no call named for a while can
// be moved out of memory (HandleSpill, check/internal/handle_spill.h) and is brought back,
// through the Restorer, the first time anything looks it up again.
//
// Why pages rather than a hash map: a lookup is an index and a pointer, on every handle of
// every call; why not one flat array: handle ids grow with the trace (a value never reused
// gets a new id), and a flat array would keep a slot per id ever seen.
//
// Thread-safety: none (one per CheckEnv, single-threaded).
//
// Example:
//   SlotTable slots;
//   slots.Get(id).obj = o;                     // allocates id's page if needed
//   slots.ForEachResident([](uint64_t id, HandleSlot& s, uint32_t touched) { ... });
#ifndef CLTRACE_CHECK_INTERNAL_SLOT_TABLE_H_
#define CLTRACE_CHECK_INTERNAL_SLOT_TABLE_H_

#include <cstdint>
#include <memory>
#include <vector>

namespace cltrace::check::internal {

// Per handle id: the current lifetime of each role the id has had (indexes into the
// trackers' records, -1 none).
struct HandleSlot {
  int32_t ctx = -1;
  int32_t core = -1;  // context whose hRTCoreLayer this is
  int32_t cl = -1;
  int32_t obj = -1;
  int32_t local = -1;
  int32_t rtobj = -1;    // IC object whose hRT* handle this is
  int32_t alloc = -1;    // allocation (pfnAllocateCb hAllocation)
  int32_t surface = -1;  // DX6 buffer surface
  bool empty() const { return (ctx & core & cl & obj & local & rtobj & alloc & surface) == -1; }
};

class SlotTable {
 public:
  // Brings the slot of a moved-out id back (and every slot moved out with it).
  class Restorer {
   public:
    virtual ~Restorer() = default;
    virtual void Restore(uint64_t id) = 0;
  };

  static constexpr int kPageBits = 6;
  static constexpr uint64_t kPageSize = uint64_t{1} << kPageBits;

  void Reset();
  void set_restorer(Restorer* r) { restorer_ = r; }

  // The slot of `id`, marked as used now; brought back first if it was moved out.
  HandleSlot& Get(uint64_t id) {
    const uint64_t p = id >> kPageBits;
    if (p < pages_.size()) {
      Page* page = pages_[p].get();
      if (page != nullptr && page->away == 0) {
        page->touched[id & (kPageSize - 1)] = epoch_;
        return page->slots[id & (kPageSize - 1)];
      }
    }
    return GetSlow(id);
  }
  // The slot of `id` as it is (no restore, no touch): for HandleSpill itself.
  HandleSlot& Raw(uint64_t id);

  // Compaction epochs: a slot's `touched` is the epoch of the last lookup.
  uint32_t epoch() const { return epoch_; }
  void NextEpoch() { ++epoch_; }
  // Marks `id` as looked up now (a call still in flight names it).
  void Touch(uint64_t id) {
    if (Find(id) != nullptr) pages_[id >> kPageBits]->touched[id & (kPageSize - 1)] = epoch_;
  }
  // The resident slot of `id`, or nullptr (no page, or moved out).
  HandleSlot* Find(uint64_t id);

  // Moved-out ids: where their record is (an opaque non-zero position), 0 = in memory.
  void SetAway(uint64_t id, uint32_t where);
  uint32_t Away(uint64_t id) const {
    const uint64_t p = id >> kIndexBits;
    return p < index_.size() && index_[p] ? index_[p][id & (kIndexPage - 1)] : 0;
  }
  // `id` is back in memory (its slot is then set by the caller through Raw).
  void ClearAway(uint64_t id);
  uint64_t away_count() const { return away_count_; }

  // Every slot in memory that is not moved out: f(id, slot, touched epoch).
  template <typename F>
  void ForEachResident(F f) {
    for (size_t p = 0; p < pages_.size(); ++p) {
      Page* page = pages_[p].get();
      if (page == nullptr) continue;
      for (uint64_t i = 0; i < kPageSize; ++i) {
        if ((page->away >> i) & 1) continue;
        f((p << kPageBits) | i, page->slots[i], page->touched[i]);
      }
    }
  }
  // Frees the pages none of whose slots names anything.
  void FreeEmptyPages();
  // Slots in memory (resident pages times their size).
  size_t resident() const { return resident_pages_ * kPageSize; }
  // Bytes held: pages, the page directory and the moved-out index.
  size_t bytes() const;

 private:
  struct Page {
    HandleSlot slots[kPageSize];
    uint32_t touched[kPageSize] = {};
    uint64_t away = 0;  // bit i: slot i is moved out (its fields are all -1)
  };
  static constexpr int kIndexBits = 12;
  static constexpr uint64_t kIndexPage = uint64_t{1} << kIndexBits;
  HandleSlot& GetSlow(uint64_t id);
  Page& PageOf(uint64_t id);

  std::vector<std::unique_ptr<Page>> pages_;
  size_t resident_pages_ = 0;
  // Moved-out index, in pages of 4,096 ids allocated when the first id of the page moves out.
  std::vector<std::unique_ptr<uint32_t[]>> index_;
  uint64_t away_count_ = 0;
  uint32_t epoch_ = 0;
  Restorer* restorer_ = nullptr;
};

}  // namespace cltrace::check::internal

#endif  // CLTRACE_CHECK_INTERNAL_SLOT_TABLE_H_
