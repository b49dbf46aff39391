#include "format/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define CLTRACE_CRC32C_X86 1
#else
#define CLTRACE_CRC32C_X86 0
#endif

namespace cltrace::format::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82f63b78u;  // Castagnoli, bit-reversed

// tables[k][b]: CRC of byte b followed by k zero bytes (slicing-by-8).
struct Tables {
  uint32_t t[8][256];
};

constexpr Tables MakeTables() {
  Tables tb{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    tb.t[0][b] = c;
  }
  for (uint32_t b = 0; b < 256; ++b) {
    for (int k = 1; k < 8; ++k) tb.t[k][b] = (tb.t[k - 1][b] >> 8) ^ tb.t[0][tb.t[k - 1][b] & 0xff];
  }
  return tb;
}

constexpr Tables kTables = MakeTables();

inline uint64_t LoadLE64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // x86 and every platform we build for are little-endian
}

#if CLTRACE_CRC32C_X86
__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t crc, const char* p, size_t n) {
  uint64_t c = ~crc;
  // Byte steps until p is 8-aligned, then 8 bytes per instruction.
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), static_cast<uint8_t>(*p++));
    --n;
  }
  while (n >= 8) {
    c = _mm_crc32_u64(c, LoadLE64(p));
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), static_cast<uint8_t>(*p++));
    --n;
  }
  return ~static_cast<uint32_t>(c);
}

bool DetectSse42() { return __builtin_cpu_supports("sse4.2"); }
#endif

}  // namespace

namespace internal {

uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n) {
  const auto& t = kTables.t;
  uint32_t c = ~crc;
  const char* p = data;
  while (n >= 8) {
    uint64_t v = LoadLE64(p) ^ c;
    c = t[7][v & 0xff] ^ t[6][(v >> 8) & 0xff] ^ t[5][(v >> 16) & 0xff] ^ t[4][(v >> 24) & 0xff] ^
        t[3][(v >> 32) & 0xff] ^ t[2][(v >> 40) & 0xff] ^ t[1][(v >> 48) & 0xff] ^ t[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = t[0][(c ^ static_cast<uint8_t>(*p++)) & 0xff] ^ (c >> 8);
    --n;
  }
  return ~c;
}

bool HardwareAvailable() {
#if CLTRACE_CRC32C_X86
  static const bool available = DetectSse42();
  return available;
#else
  return false;
#endif
}

uint32_t ExtendHardware(uint32_t crc, const char* data, size_t n) {
#if CLTRACE_CRC32C_X86
  return ExtendSse42(crc, data, n);
#else
  return ExtendPortable(crc, data, n);
#endif
}

}  // namespace internal

uint32_t Extend(uint32_t crc, const char* data, size_t n) {
  return internal::HardwareAvailable() ? internal::ExtendHardware(crc, data, n)
                                       : internal::ExtendPortable(crc, data, n);
}

}  // namespace cltrace::format::crc32c
