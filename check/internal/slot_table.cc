#include "check/internal/slot_table.h"

namespace cltrace::check::internal {

void SlotTable::Reset() {
  pages_.clear();
  resident_pages_ = 0;
  index_.clear();
  away_count_ = 0;
  epoch_ = 0;
}

SlotTable::Page& SlotTable::PageOf(uint64_t id) {
  const uint64_t p = id >> kPageBits;
  if (p >= pages_.size()) pages_.resize(p + 1);
  if (pages_[p] == nullptr) {
    pages_[p] = std::make_unique<Page>();
    ++resident_pages_;
    Page& page = *pages_[p];
    for (uint64_t i = 0; i < kPageSize; ++i) {
      page.touched[i] = epoch_;
      if (Away((p << kPageBits) | i) != 0) page.away |= uint64_t{1} << i;
    }
  }
  return *pages_[p];
}

HandleSlot& SlotTable::GetSlow(uint64_t id) {
  Page& page = PageOf(id);
  const uint64_t i = id & (kPageSize - 1);
  if (((page.away >> i) & 1) != 0 && restorer_ != nullptr) restorer_->Restore(id);
  // Restore brings the slot back through Raw and ClearAway (the page stays allocated).
  page.touched[i] = epoch_;
  return page.slots[i];
}

HandleSlot& SlotTable::Raw(uint64_t id) { return PageOf(id).slots[id & (kPageSize - 1)]; }

HandleSlot* SlotTable::Find(uint64_t id) {
  const uint64_t p = id >> kPageBits;
  if (p >= pages_.size() || pages_[p] == nullptr) return nullptr;
  Page& page = *pages_[p];
  const uint64_t i = id & (kPageSize - 1);
  return ((page.away >> i) & 1) != 0 ? nullptr : &page.slots[i];
}

void SlotTable::SetAway(uint64_t id, uint32_t where) {
  const uint64_t p = id >> kIndexBits;
  if (p >= index_.size()) index_.resize(p + 1);
  if (index_[p] == nullptr) index_[p] = std::make_unique<uint32_t[]>(kIndexPage);  // zeroed
  uint32_t& at = index_[p][id & (kIndexPage - 1)];
  if (at == 0) ++away_count_;
  at = where;
  Page& page = PageOf(id);
  page.slots[id & (kPageSize - 1)] = HandleSlot();
  page.away |= uint64_t{1} << (id & (kPageSize - 1));
}

void SlotTable::ClearAway(uint64_t id) {
  const uint64_t p = id >> kIndexBits;
  if (p < index_.size() && index_[p] != nullptr) {
    uint32_t& at = index_[p][id & (kIndexPage - 1)];
    if (at != 0) --away_count_;
    at = 0;
  }
  Page& page = PageOf(id);
  page.away &= ~(uint64_t{1} << (id & (kPageSize - 1)));
  page.touched[id & (kPageSize - 1)] = epoch_;
}

void SlotTable::FreeEmptyPages() {
  for (std::unique_ptr<Page>& page : pages_) {
    if (page == nullptr) continue;
    bool empty = true;
    for (const HandleSlot& s : page->slots) {
      if (!s.empty()) {
        empty = false;
        break;
      }
    }
    if (!empty) continue;
    page.reset();  // moved-out bits live on in the index (PageOf rebuilds them)
    --resident_pages_;
  }
}

size_t SlotTable::bytes() const {
  size_t index_pages = 0;
  for (const auto& p : index_) index_pages += p != nullptr;
  return resident_pages_ * sizeof(Page) + pages_.capacity() * sizeof(pages_[0]) +
         index_.capacity() * sizeof(index_[0]) + index_pages * kIndexPage * sizeof(uint32_t);
}

}  // namespace cltrace::check::internal
