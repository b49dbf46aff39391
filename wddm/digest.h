// Stable 64-bit digests for the GPU content model.
//
// The digest of an allocation's content is what replay compares after each Flush/Present, so
// the functions here are part of the project's contract: their exact definition is in
// wddm/README.md ("Content digests") and must never change silently (tests pin known values).
// They are not cryptographic; they only need to be stable across runs, builds and machines
// and to mix well.
//
// Thread-safety: pure functions.
//
// Example:
//   uint64_t d = HashBytes(data, size);
//   uint64_t e = DigestCombine(kDigestTagDraw, d);
#ifndef CLTRACE_WDDM_DIGEST_H_
#define CLTRACE_WDDM_DIGEST_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace cltrace::gpu {

// The splitmix64 finaliser: a bijective avalanche of one 64-bit word.
constexpr uint64_t DigestFinalize(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

// Folds `v` into the running digest `h` (order-sensitive).
constexpr uint64_t DigestCombine(uint64_t h, uint64_t v) {
  return DigestFinalize(h ^ (DigestFinalize(v) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2)));
}

// Folds every value of `vs` into `h`, left to right.
constexpr uint64_t DigestCombineAll(uint64_t h, std::initializer_list<uint64_t> vs) {
  for (uint64_t v : vs) h = DigestCombine(h, v);
  return h;
}

// Digest of a byte string: little-endian 64-bit words folded with DigestCombine, the tail
// zero-padded, the length folded last. HashBytes(nullptr, 0) is well defined.
uint64_t HashBytes(const void* data, size_t size);

// Tags that start every content-model digest (wddm/README.md lists the formulas).
inline constexpr uint64_t kDigestTagZero = 0x5A45524F;        // "ZERO"
inline constexpr uint64_t kDigestTagClear = 0x434C4541;       // "CLEA"
inline constexpr uint64_t kDigestTagUpdate = 0x55504441;      // "UPDA"
inline constexpr uint64_t kDigestTagCopyRegion = 0x434F5059;  // "COPY"
inline constexpr uint64_t kDigestTagDraw = 0x44524157;        // "DRAW"
inline constexpr uint64_t kDigestTagResize = 0x53495A45;      // "SIZE"

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_DIGEST_H_
