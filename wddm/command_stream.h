// The command encoding of the GPU model: what a UMD writes into the command buffer it got from
// pfnCreateContextCb / pfnRenderCb ("user format"), and what the model KMD translates it into
// for the GPU ("DMA format"). wddm/README.md ("Command encoding") is the normative description;
// this header is its implementation.
//
// Both formats are sequences of little-endian 32-bit words. Every command starts with a header
// word: bits 0-7 opcode, bits 8-23 the command length in words (header included), bits 24-31
// zero. In the user format an allocation reference is one word, an index into the allocation
// list submitted with the buffer; in the DMA format it is two words, a GPU physical address
// (low word first) that DxgkDdiPatch fills in (0 until patched).
//
// Thread-safety: pure functions on caller-owned memory.
//
// Example:
//   Command c = Command::Clear(/*dst=*/0, 0xFF00FF00);
//   std::vector<uint32_t> words;
//   AppendCommand(c, CommandFormat::kUser, &words, nullptr);
//   Command back;
//   auto n = DecodeCommand(words, 0, CommandFormat::kUser, &back);   // *n == 4
#ifndef CLTRACE_WDDM_COMMAND_STREAM_H_
#define CLTRACE_WDDM_COMMAND_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace cltrace::gpu {

enum class Opcode : uint8_t {
  kNop = 0x01,
  kClear = 0x02,       // refs[0] = destination; value = 64-bit fill pattern
  kUpdate = 0x03,      // refs[0] = destination; offset, size; value = HashBytes of the data
  kCopy = 0x04,        // refs[0] = destination, refs[1] = source (whole resource)
  kCopyRegion = 0x05,  // refs[0] = dst, refs[1] = src; offset (dst), src_offset, size
  kDraw = 0x06,        // refs[0] = render target, refs[1..] = inputs; value = state digest
  kMarker = 0x07,      // value = caller-defined (frame numbers, splice boundaries)
  kPrivate = 0x08,     // payload = driver-private words; the GPU skips them (digest-neutral)
  // Kernel-only opcodes: a user command buffer containing them is rejected as privileged.
  kFence = 0x40,           // value = submission fence id (written by DxgkDdiPatch)
  kPresentBlt = 0x41,      // refs[0] = destination (primary), refs[1] = source (back buffer)
  kPagingTransfer = 0x80,  // refs[0] = destination, refs[1] = source; size (bytes moved)
  kPagingFill = 0x81,      // refs[0] = destination; size; value = fill pattern
};

enum class CommandFormat : uint8_t { kUser, kDma };

// Header word that the kernel writes into every command buffer it hands out, so that a UMD
// which keeps writing into a stale buffer (R74) is caught: it decodes as no valid opcode.
inline constexpr uint32_t kPoisonWord = 0xDEADBEEFu;

// Most inputs a draw may reference (keeps a command bounded).
inline constexpr uint32_t kMaxDrawInputs = 16;
// Most payload words of a kPrivate command (the header's 16-bit length field, minus itself).
inline constexpr uint32_t kMaxPrivateWords = 0xFFFE;

struct Command {
  Opcode op = Opcode::kNop;
  // Allocation references: allocation-list indices (user format) or GPU addresses (DMA).
  absl::InlinedVector<uint64_t, 4> refs;
  uint64_t value = 0;
  uint32_t offset = 0;
  uint32_t src_offset = 0;
  uint32_t size = 0;
  uint32_t vertex_count = 0;
  uint32_t start_vertex = 0;
  uint32_t instance_count = 0;
  std::vector<uint32_t> payload;  // kPrivate only

  static Command Nop() { return Command{}; }
  static Command Clear(uint64_t dst, uint64_t value);
  static Command Update(uint64_t dst, uint32_t offset, uint32_t size, uint64_t data_digest);
  static Command Copy(uint64_t dst, uint64_t src);
  static Command CopyRegion(uint64_t dst, uint32_t dst_offset, uint64_t src, uint32_t src_offset,
                            uint32_t size);
  static Command Draw(uint64_t target, absl::Span<const uint64_t> inputs, uint64_t state,
                      uint32_t vertex_count, uint32_t start_vertex, uint32_t instance_count);
  static Command Marker(uint64_t value);
  // Carries records the driver's own kernel-side partner reads (e.g. the reference driver's
  // refcmd records); at most kMaxPrivateWords words.
  static Command Private(absl::Span<const uint32_t> words);
  static Command Fence(uint64_t fence_id);
  static Command PresentBlt(uint64_t dst, uint64_t src);
  static Command PagingTransfer(uint64_t dst, uint64_t src, uint32_t size);
  static Command PagingFill(uint64_t dst, uint32_t size, uint64_t pattern);

  friend bool operator==(const Command&, const Command&) = default;
};

// True for the opcodes a user command buffer may contain.
bool IsUserOpcode(Opcode op);
// True for every opcode of the DMA format (user opcodes plus kernel-only ones).
bool IsKnownOpcode(uint8_t op);
// "clear", "update", ... ("op0x5c" for unknown values).
std::string OpcodeName(uint8_t op);

// Words `c` occupies in `format`.
uint32_t EncodedWords(const Command& c, CommandFormat format);

// Appends the encoding of `c`. If `ref_word_offsets` is non-null, the word index (from the
// start of `out`) of every allocation reference is appended to it, in refs order: the places
// a patch-location list points at.
void AppendCommand(const Command& c, CommandFormat format, std::vector<uint32_t>* out,
                   std::vector<uint32_t>* ref_word_offsets);
// Writes the encoding of `c` at `out[0..]`; false (nothing written) if it does not fit.
bool EncodeCommand(const Command& c, CommandFormat format, absl::Span<uint32_t> out,
                   std::vector<uint32_t>* ref_word_offsets);

// Decodes the command that starts at word `pos` of `words`; returns its length in words.
// Errors (messages carry the byte offset of the command):
//   PermissionDenied  - a kernel-only opcode in the user format (privileged instruction);
//   InvalidArgument   - an unknown opcode (illegal instruction);
//   OutOfRange        - the header's length disagrees with the opcode, the command runs past
//                       the end, or a draw has more than kMaxDrawInputs inputs.
absl::StatusOr<uint32_t> DecodeCommand(absl::Span<const uint32_t> words, size_t pos,
                                       CommandFormat format, Command* out);

// One-line human-readable form ("draw rt=@3 in=[@1,@2] vc=3 ..."); `@` marks references.
std::string FormatCommand(const Command& c);

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_COMMAND_STREAM_H_
