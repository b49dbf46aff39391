// Byte-level framing of a cltrace v1 file (format/FORMAT.md §2–§4): the file header, the fixed
// chunk header, chunk payload compression, and the trailer footer. Knows nothing about events;
// format/event_codec.h encodes what goes inside an event chunk's payload.
//
// Thread-safety: free functions are pure. ChunkCompressor / ChunkDecompressor hold a zstd
// context each and are single-threaded (one per writer thread / reader).
//
// Example (writing one chunk):
//   ChunkCompressor zc(/*level=*/3);
//   ChunkInfo info{.type = ChunkType::kEvents, .min_seq = 1, .max_seq = 9,
//                  .packet_count = 12, .event_count = 9};
//   std::string bytes;
//   CLTRACE_RETURN_IF_ERROR(zc.BuildChunk(info, raw_payload, /*compress=*/true, &bytes));
// and reading it back:
//   auto header = ParseChunkHeader(file.substr(offset), offset);  // checks the header CRC
//   ... CheckPayload(*header, payload, offset) ... dz.Decompress(*header, payload, &raw, offset)
#ifndef CLTRACE_FORMAT_CHUNK_H_
#define CLTRACE_FORMAT_CHUNK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "format/trace.pb.h"

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace cltrace::format {

// Newest version of the byte grammar this code reads and writes. Readers reject larger
// values. Version 2 adds position runs (FORMAT.md §3.7); a writer that does not use them
// writes version 1 (kFormatVersionV1), which every reader reads.
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint32_t kFormatVersionV1 = 1;

// ---- File header (FORMAT.md §2.1) ----
inline constexpr char kFileMagic[8] = {'C', 'L', 'T', 'R', 'A', 'C', 'E', '\0'};
// magic(8) + format_version(4) + header_length(4); then TraceHeader bytes, then a u32 CRC.
inline constexpr size_t kFilePrefixSize = 16;
inline constexpr uint32_t kMaxTraceHeaderSize = 1u << 20;

// The serialized file header (prefix + TraceHeader + CRC). The prefix's format version is
// header.format_version() (the two must agree, FORMAT.md §2.1).
std::string EncodeFileHeader(const proto::TraceHeader& header);

struct ParsedFileHeader {
  proto::TraceHeader header;
  uint64_t size = 0;  // bytes taken by the file header = offset of the first chunk
};
// Parses the file header at the start of `file`. Errors: InvalidArgument (not a cltrace file:
// wrong magic), Unimplemented (format_version newer than kFormatVersion), DataLoss (empty,
// truncated, bad CRC, unparsable or inconsistent header), each naming the offset.
absl::StatusOr<ParsedFileHeader> ParseFileHeader(absl::string_view file);

// ---- Chunks (FORMAT.md §2.2) ----
enum class ChunkType : uint8_t { kEvents = 1, kIndex = 2 };

inline constexpr uint32_t kChunkMagic = 0x4b434c43u;  // bytes "CLCK" read as little-endian
inline constexpr uint8_t kFlagZstd = 1u << 0;
// A reader that does not know the chunk type skips it instead of failing (future additions
// that old readers may ignore set this bit).
inline constexpr uint8_t kFlagIgnorable = 1u << 1;
inline constexpr uint8_t kKnownFlags = kFlagZstd | kFlagIgnorable;

inline constexpr size_t kChunkHeaderSize = 48;      // what v1 writers write
inline constexpr size_t kMaxChunkHeaderSize = 256;  // readers skip extension bytes up to this
inline constexpr uint32_t kMaxStoredSize = 64u << 20;
inline constexpr uint32_t kMaxRawSize = 256u << 20;

struct ChunkInfo {
  ChunkType type = ChunkType::kEvents;
  uint8_t flags = 0;  // filled in by BuildChunk / read by ParseChunkHeader
  uint32_t header_size = kChunkHeaderSize;
  uint32_t stored_size = 0;  // payload bytes in the file
  uint32_t raw_size = 0;     // payload bytes after decompression
  uint64_t min_seq = 0;      // smallest / largest entry seq of the chunk's events (0 if none)
  uint64_t max_seq = 0;
  uint32_t packet_count = 0;
  uint32_t event_count = 0;
  uint32_t payload_crc = 0;  // unmasked CRC32C of the stored payload

  uint64_t total_size() const { return uint64_t{header_size} + stored_size; }
};

// Serializes a chunk header (kChunkHeaderSize bytes) with both CRCs; `info.payload_crc` must
// already hold the payload's CRC.
std::string EncodeChunkHeader(const ChunkInfo& info);

// What is at a chunk position.
enum class ChunkProbe {
  kHeader,  // a complete chunk header whose CRC matches (sizes checked against the limits)
  kTorn,    // the file ends inside what starts like a chunk header or its payload
};
// Parses the chunk header at the start of `rest` (the file from `offset` on). On success
// returns the header; `*probe` says whether the payload is entirely present (kHeader) or cut
// off by the end of the file (kTorn, a torn tail). Errors are DataLoss naming `offset`: no
// chunk magic, bad header CRC, header size or payload sizes over the limits, unknown flags.
absl::StatusOr<ChunkInfo> ParseChunkHeader(absl::string_view rest, uint64_t offset,
                                           ChunkProbe* probe);

// Verifies the payload CRC. DataLoss naming the offset on mismatch.
absl::Status CheckPayload(const ChunkInfo& info, absl::string_view payload, uint64_t offset);

// Move-only (it owns a zstd compression context).
class ChunkCompressor {
 public:
  explicit ChunkCompressor(int zstd_level);

  // Appends header + payload for `raw` to *out. Compresses with zstd when `compress` and it
  // saves space; otherwise stores the payload as is (flag bit 0 clear). Fills in the sizes,
  // flags and CRC of `*info`. Internal on zstd failure; InvalidArgument if raw is over
  // kMaxRawSize.
  absl::Status BuildChunk(ChunkInfo* info, absl::string_view raw, bool compress, std::string* out);

 private:
  struct FreeCCtx {
    void operator()(ZSTD_CCtx_s* cctx) const;
  };
  int level_;
  std::unique_ptr<ZSTD_CCtx_s, FreeCCtx> cctx_;
  std::string scratch_;
};

// Chunk payloads ChunkDecompressor::Decompress produced in this process so far (stored ones
// included): how many chunks every reader together read, for tests and benchmarks that check
// a reader reads only what it must.
uint64_t ChunkPayloadsRead();

// Move-only (it owns a zstd decompression context).
class ChunkDecompressor {
 public:
  ChunkDecompressor();

  // Produces the raw payload of a chunk whose payload CRC already checked out: for a zstd
  // chunk, exactly one zstd frame that must decompress to exactly info.raw_size bytes.
  // Sets *raw to point either at `payload` (stored chunks) or at an internal buffer valid
  // until the next call. DataLoss naming `offset` otherwise.
  absl::Status Decompress(const ChunkInfo& info, absl::string_view payload, absl::string_view* raw,
                          uint64_t offset);

 private:
  struct FreeDCtx {
    void operator()(ZSTD_DCtx_s* dctx) const;
  };
  std::unique_ptr<ZSTD_DCtx_s, FreeDCtx> dctx_;
  std::string buffer_;
};

// ---- Trailer (FORMAT.md §2.4) ----
inline constexpr char kFooterMagic[8] = {'C', 'L', 'I', 'N', 'D', 'E', 'X', '\0'};
inline constexpr size_t kFooterSize = 16;  // u64 index chunk offset + magic
std::string EncodeFooter(uint64_t index_chunk_offset);
// True if `tail` (the last kFooterSize bytes of a file) is a footer; sets *index_offset.
bool ParseFooter(absl::string_view tail, uint64_t* index_offset);

// ---- Little-endian helpers shared by the format code ----
inline void PutU16(char* p, uint16_t v) {
  p[0] = static_cast<char>(v);
  p[1] = static_cast<char>(v >> 8);
}
inline void PutU32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
inline void PutU64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
inline uint16_t GetU16(const char* p) {
  return static_cast<uint16_t>(static_cast<uint8_t>(p[0]) | (static_cast<uint8_t>(p[1]) << 8));
}
inline uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
inline uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_CHUNK_H_
