// Free-range bookkeeping shared by the kernel model's video-memory manager (wddm/internal/
// vidmm.h) and the DX6 model driver's video heap (dx6/dx6_driver.h): the free space is a map
// from range start to range length, kept coalesced (no two ranges touch).
//
// Thread-safety: none; the owner serializes access.
//
// Example:
//   std::map<uint64_t, uint64_t> free = {{0, 64}};
//   free.clear();                 // everything allocated
//   ReleaseRange(free, 16, 16);   // {16: 16}
//   ReleaseRange(free, 0, 16);    // {0: 32}, merged with the range after it
//   TakeRange(free, 8, 8);        // {0: 8, 16: 16}, the exact inverse of a release
#ifndef CLTRACE_WDDM_FREE_RANGES_H_
#define CLTRACE_WDDM_FREE_RANGES_H_

#include <iterator>

namespace cltrace::gpu {

// Returns [start, start + size) to `free` (a std::map start -> length, coalesced), merging it
// with the free ranges it touches. The range must not overlap a free one.
template <typename RangeMap>
void ReleaseRange(RangeMap& free, typename RangeMap::key_type start,
                  typename RangeMap::mapped_type size) {
  auto it = free.emplace(start, size).first;
  auto next = std::next(it);
  if (next != free.end() && it->first + it->second == next->first) {
    it->second += next->second;
    free.erase(next);
  }
  if (it != free.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      free.erase(it);
    }
  }
}

// Takes [start, start + size) out of `free`: the range must lie inside one free range. The
// inverse of ReleaseRange (the coalesced form of a set of free bytes is unique, so releasing
// and then taking a range, or the reverse, leaves the map as it was). Returns false, changing
// nothing, if the range is not free.
template <typename RangeMap>
bool TakeRange(RangeMap& free, typename RangeMap::key_type start,
               typename RangeMap::mapped_type size) {
  auto it = free.upper_bound(start);
  if (it == free.begin()) return false;
  --it;
  const auto range_start = it->first;
  const auto range_end = it->first + it->second;
  if (start + size > range_end) return false;
  free.erase(it);
  if (start > range_start) free.emplace(range_start, start - range_start);
  if (start + size < range_end) free.emplace(start + size, range_end - (start + size));
  return true;
}

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_FREE_RANGES_H_
