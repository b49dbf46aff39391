// CRC32C (Castagnoli polynomial, reflected 0x82F63B78) for the trace format's chunk and header
// checksums (format/FORMAT.md §2), plus leveldb-style masking.
//
// Debian's Abseil has no absl/crc, so this is our own: SSE4.2's crc32 instruction when the CPU
// has it (checked once at run time), otherwise a slicing-by-8 table implementation.
//
// Thread-safety: all functions are pure and safe from any thread.
//
// Example:
//   uint32_t crc = crc32c::Value("123456789");          // 0xE3069283
//   uint32_t stored = crc32c::Mask(crc);                 // what the file holds
//   bool ok = crc32c::Unmask(stored) == crc32c::Value(bytes);
#ifndef CLTRACE_FORMAT_CRC32C_H_
#define CLTRACE_FORMAT_CRC32C_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace cltrace::format::crc32c {

// Returns the CRC32C of data[0, n) continued from `crc` (the CRC of the bytes before).
// Extend(Extend(0, a), b) == Value(a + b).
uint32_t Extend(uint32_t crc, const char* data, size_t n);

inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(absl::string_view s) { return Extend(0, s.data(), s.size()); }

// Masking (as leveldb does): a CRC stored in data that is itself later CRC'd (a chunk header
// holding the payload CRC, or a trace embedded in another file) makes for a weak check, so
// the stored form is rotated and offset.
inline constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

namespace internal {
// Both implementations, exposed so tests can check they agree on every input.
uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n);
// Precondition: HardwareAvailable().
uint32_t ExtendHardware(uint32_t crc, const char* data, size_t n);
bool HardwareAvailable();
}  // namespace internal

}  // namespace cltrace::format::crc32c

#endif  // CLTRACE_FORMAT_CRC32C_H_
