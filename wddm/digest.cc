#include "wddm/digest.h"

#include <cstring>

namespace cltrace::gpu {

uint64_t HashBytes(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0x6A09E667F3BCC908ull;  // fixed seed
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w = 0;
    // Explicit little-endian assembly keeps the value independent of the host byte order.
    for (int b = 7; b >= 0; --b) w = (w << 8) | p[i + b];
    h = DigestCombine(h, w);
  }
  if (i < size) {
    uint64_t w = 0;
    for (size_t b = size; b > i; --b) w = (w << 8) | p[b - 1];
    h = DigestCombine(h, w);
  }
  return DigestCombine(h, static_cast<uint64_t>(size));
}

}  // namespace cltrace::gpu
