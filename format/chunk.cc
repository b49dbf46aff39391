#include "format/chunk.h"

#include <zstd.h>

#include <atomic>
#include <cstring>

#include "absl/strings/str_format.h"
#include "format/crc32c.h"

namespace cltrace::format {
namespace {

constexpr char kChunkMagicBytes[4] = {'C', 'L', 'C', 'K'};

bool IsPrefixOf(absl::string_view part, const char* whole, size_t whole_size) {
  return part.size() <= whole_size && std::memcmp(part.data(), whole, part.size()) == 0;
}

}  // namespace

std::string EncodeFileHeader(const proto::TraceHeader& header) {
  std::string body = header.SerializeAsString();
  std::string out(kFilePrefixSize, '\0');
  std::memcpy(out.data(), kFileMagic, sizeof(kFileMagic));
  PutU32(out.data() + 8, header.format_version());
  PutU32(out.data() + 12, static_cast<uint32_t>(body.size()));
  out += body;
  char crc[4];
  PutU32(crc, crc32c::Mask(crc32c::Value(out.data() + 8, out.size() - 8)));
  out.append(crc, 4);
  return out;
}

absl::StatusOr<ParsedFileHeader> ParseFileHeader(absl::string_view file) {
  if (file.empty()) {
    return absl::DataLossError("empty file at offset 0: no cltrace file header");
  }
  if (!IsPrefixOf(file.substr(0, sizeof(kFileMagic)), kFileMagic, sizeof(kFileMagic))) {
    return absl::InvalidArgumentError(
        "not a cltrace file: bad magic at offset 0 (expected \"CLTRACE\\0\")");
  }
  if (file.size() < 12) {
    return absl::DataLossError(absl::StrFormat(
        "truncated file header: file ends at offset %d before the format version", file.size()));
  }
  uint32_t version = GetU32(file.data() + 8);
  if (version > kFormatVersion) {
    return absl::UnimplementedError(
        absl::StrFormat("format version %d at offset 8 is newer than this reader (reads up to %d)",
                        version, kFormatVersion));
  }
  if (version == 0) {
    return absl::DataLossError("format version 0 at offset 8 is invalid");
  }
  if (file.size() < kFilePrefixSize) {
    return absl::DataLossError(absl::StrFormat(
        "truncated file header: file ends at offset %d before the header length", file.size()));
  }
  uint32_t length = GetU32(file.data() + 12);
  if (length > kMaxTraceHeaderSize) {
    return absl::DataLossError(
        absl::StrFormat("header length %d at offset 12 exceeds the limit of %d bytes", length,
                        kMaxTraceHeaderSize));
  }
  uint64_t total = kFilePrefixSize + uint64_t{length} + 4;
  if (file.size() < total) {
    return absl::DataLossError(
        absl::StrFormat("truncated file header: file ends at offset %d, header needs %d bytes",
                        file.size(), total));
  }
  uint32_t stored = GetU32(file.data() + kFilePrefixSize + length);
  uint32_t actual = crc32c::Value(file.data() + 8, kFilePrefixSize - 8 + length);
  if (crc32c::Unmask(stored) != actual) {
    return absl::DataLossError(
        absl::StrFormat("file header CRC mismatch at offset %d (stored 0x%08x, computed 0x%08x)",
                        kFilePrefixSize + length, crc32c::Unmask(stored), actual));
  }
  ParsedFileHeader parsed;
  if (!parsed.header.ParseFromArray(file.data() + kFilePrefixSize, static_cast<int>(length))) {
    return absl::DataLossError(
        absl::StrFormat("unparsable TraceHeader at offset %d", kFilePrefixSize));
  }
  if (parsed.header.format_version() != version) {
    return absl::DataLossError(absl::StrFormat(
        "TraceHeader.format_version %d at offset %d disagrees with the file prefix (%d)",
        parsed.header.format_version(), kFilePrefixSize, version));
  }
  if (parsed.header.timestamp_unit_ns() == 0) {
    return absl::DataLossError(
        absl::StrFormat("TraceHeader.timestamp_unit_ns is 0 at offset %d", kFilePrefixSize));
  }
  parsed.size = total;
  return parsed;
}

std::string EncodeChunkHeader(const ChunkInfo& info) {
  std::string h(kChunkHeaderSize, '\0');
  char* p = h.data();
  std::memcpy(p, kChunkMagicBytes, 4);
  p[4] = static_cast<char>(info.type);
  p[5] = static_cast<char>(info.flags);
  PutU16(p + 6, static_cast<uint16_t>(kChunkHeaderSize));
  PutU32(p + 8, info.stored_size);
  PutU32(p + 12, info.raw_size);
  PutU64(p + 16, info.min_seq);
  PutU64(p + 24, info.max_seq);
  PutU32(p + 32, info.packet_count);
  PutU32(p + 36, info.event_count);
  PutU32(p + 40, crc32c::Mask(info.payload_crc));
  PutU32(p + 44, crc32c::Mask(crc32c::Value(p, 44)));
  return h;
}

absl::StatusOr<ChunkInfo> ParseChunkHeader(absl::string_view rest, uint64_t offset,
                                           ChunkProbe* probe) {
  if (!IsPrefixOf(rest.substr(0, 4), kChunkMagicBytes, 4)) {
    return absl::DataLossError(absl::StrFormat("no chunk magic at offset %d", offset));
  }
  ChunkInfo info;
  if (rest.size() < 8) {
    *probe = ChunkProbe::kTorn;
    return info;
  }
  const char* p = rest.data();
  info.header_size = GetU16(p + 6);
  if (info.header_size < kChunkHeaderSize || info.header_size > kMaxChunkHeaderSize) {
    return absl::DataLossError(
        absl::StrFormat("chunk header size %d at offset %d is outside [%d, %d]", info.header_size,
                        offset + 6, kChunkHeaderSize, kMaxChunkHeaderSize));
  }
  if (rest.size() < info.header_size) {
    *probe = ChunkProbe::kTorn;
    return info;
  }
  uint32_t stored_crc = crc32c::Unmask(GetU32(p + info.header_size - 4));
  uint32_t actual_crc = crc32c::Value(p, info.header_size - 4);
  if (stored_crc != actual_crc) {
    return absl::DataLossError(
        absl::StrFormat("chunk header CRC mismatch at offset %d (stored 0x%08x, computed 0x%08x)",
                        offset, stored_crc, actual_crc));
  }
  info.type = static_cast<ChunkType>(static_cast<uint8_t>(p[4]));
  info.flags = static_cast<uint8_t>(p[5]);
  info.stored_size = GetU32(p + 8);
  info.raw_size = GetU32(p + 12);
  info.min_seq = GetU64(p + 16);
  info.max_seq = GetU64(p + 24);
  info.packet_count = GetU32(p + 32);
  info.event_count = GetU32(p + 36);
  info.payload_crc = crc32c::Unmask(GetU32(p + 40));
  if ((info.flags & ~kKnownFlags) != 0) {
    return absl::DataLossError(
        absl::StrFormat("unknown chunk flags 0x%02x at offset %d", info.flags, offset + 5));
  }
  if (info.stored_size > kMaxStoredSize) {
    return absl::DataLossError(
        absl::StrFormat("chunk stored size %d at offset %d exceeds the limit of %d bytes",
                        info.stored_size, offset + 8, kMaxStoredSize));
  }
  if (info.raw_size > kMaxRawSize) {
    return absl::DataLossError(
        absl::StrFormat("chunk raw size %d at offset %d exceeds the limit of %d bytes",
                        info.raw_size, offset + 12, kMaxRawSize));
  }
  if ((info.flags & kFlagZstd) == 0 && info.stored_size != info.raw_size) {
    return absl::DataLossError(
        absl::StrFormat("uncompressed chunk at offset %d has stored size %d != raw size %d", offset,
                        info.stored_size, info.raw_size));
  }
  // Every packet takes at least 2 bytes (tag + length) and every event is a packet.
  if (info.packet_count > info.raw_size / 2 || info.event_count > info.packet_count) {
    return absl::DataLossError(
        absl::StrFormat("chunk at offset %d claims %d packets / %d events in %d raw bytes", offset,
                        info.packet_count, info.event_count, info.raw_size));
  }
  if (info.min_seq > info.max_seq) {
    return absl::DataLossError(absl::StrFormat("chunk at offset %d has min_seq %d > max_seq %d",
                                               offset, info.min_seq, info.max_seq));
  }
  *probe =
      rest.size() - info.header_size < info.stored_size ? ChunkProbe::kTorn : ChunkProbe::kHeader;
  return info;
}

absl::Status CheckPayload(const ChunkInfo& info, absl::string_view payload, uint64_t offset) {
  uint32_t actual = crc32c::Value(payload);
  if (actual != info.payload_crc) {
    return absl::DataLossError(absl::StrFormat(
        "chunk payload CRC mismatch for the chunk at offset %d (payload at offset %d: stored "
        "0x%08x, computed 0x%08x)",
        offset, offset + info.header_size, info.payload_crc, actual));
  }
  return absl::OkStatus();
}

ChunkCompressor::ChunkCompressor(int zstd_level) : level_(zstd_level), cctx_(ZSTD_createCCtx()) {
  if (cctx_ != nullptr) {
    ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_compressionLevel, level_);
    // Our own CRC covers the payload; the frame stores its content size for a sanity check.
    ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_checksumFlag, 0);
    ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_contentSizeFlag, 1);
  }
}

void ChunkCompressor::FreeCCtx::operator()(ZSTD_CCtx_s* cctx) const { ZSTD_freeCCtx(cctx); }

absl::Status ChunkCompressor::BuildChunk(ChunkInfo* info, absl::string_view raw, bool compress,
                                         std::string* out) {
  if (raw.size() > kMaxRawSize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "chunk payload of %d bytes exceeds the limit of %d bytes", raw.size(), kMaxRawSize));
  }
  absl::string_view payload = raw;
  info->flags &= static_cast<uint8_t>(~kFlagZstd);
  if (compress && !raw.empty()) {
    if (cctx_ == nullptr) return absl::InternalError("ZSTD_createCCtx failed");
    size_t bound = ZSTD_compressBound(raw.size());
    if (scratch_.size() < bound) scratch_.resize(bound);
    size_t n =
        ZSTD_compress2(cctx_.get(), scratch_.data(), scratch_.size(), raw.data(), raw.size());
    if (ZSTD_isError(n)) {
      return absl::InternalError(
          absl::StrFormat("zstd compression failed: %s", ZSTD_getErrorName(n)));
    }
    if (n < raw.size() && n <= kMaxStoredSize) {
      payload = absl::string_view(scratch_.data(), n);
      info->flags |= kFlagZstd;
    }
  }
  if (payload.size() > kMaxStoredSize) {
    return absl::InvalidArgumentError(
        absl::StrFormat("chunk payload of %d bytes exceeds the stored limit of %d bytes",
                        payload.size(), kMaxStoredSize));
  }
  info->header_size = kChunkHeaderSize;
  info->stored_size = static_cast<uint32_t>(payload.size());
  info->raw_size = static_cast<uint32_t>(raw.size());
  info->payload_crc = crc32c::Value(payload);
  out->append(EncodeChunkHeader(*info));
  out->append(payload.data(), payload.size());
  return absl::OkStatus();
}

namespace {
std::atomic<uint64_t> payloads_read{0};
}  // namespace

uint64_t ChunkPayloadsRead() { return payloads_read.load(std::memory_order_relaxed); }

ChunkDecompressor::ChunkDecompressor() : dctx_(ZSTD_createDCtx()) {}
void ChunkDecompressor::FreeDCtx::operator()(ZSTD_DCtx_s* dctx) const { ZSTD_freeDCtx(dctx); }

absl::Status ChunkDecompressor::Decompress(const ChunkInfo& info, absl::string_view payload,
                                           absl::string_view* raw, uint64_t offset) {
  payloads_read.fetch_add(1, std::memory_order_relaxed);
  if ((info.flags & kFlagZstd) == 0) {
    *raw = payload;
    return absl::OkStatus();
  }
  const uint64_t at = offset + info.header_size;
  size_t frame = ZSTD_findFrameCompressedSize(payload.data(), payload.size());
  if (ZSTD_isError(frame) || frame != payload.size()) {
    return absl::DataLossError(absl::StrFormat(
        "chunk at offset %d: payload at offset %d is not exactly one zstd frame (%s)", offset, at,
        ZSTD_isError(frame) ? ZSTD_getErrorName(frame) : "trailing bytes"));
  }
  unsigned long long content = ZSTD_getFrameContentSize(payload.data(), payload.size());
  if (content == ZSTD_CONTENTSIZE_ERROR ||
      (content != ZSTD_CONTENTSIZE_UNKNOWN && content != info.raw_size)) {
    return absl::DataLossError(
        absl::StrFormat("chunk at offset %d: zstd frame content size disagrees with raw size %d",
                        offset, info.raw_size));
  }
  if (dctx_ == nullptr) return absl::InternalError("ZSTD_createDCtx failed");
  if (buffer_.size() < info.raw_size) buffer_.resize(info.raw_size);
  size_t n = ZSTD_decompressDCtx(dctx_.get(), buffer_.data(), info.raw_size, payload.data(),
                                 payload.size());
  if (ZSTD_isError(n)) {
    return absl::DataLossError(
        absl::StrFormat("chunk at offset %d: zstd frame at offset %d does not decompress: %s",
                        offset, at, ZSTD_getErrorName(n)));
  }
  if (n != info.raw_size) {
    return absl::DataLossError(absl::StrFormat(
        "chunk at offset %d decompresses to %d bytes, header says %d", offset, n, info.raw_size));
  }
  *raw = absl::string_view(buffer_.data(), n);
  return absl::OkStatus();
}

std::string EncodeFooter(uint64_t index_chunk_offset) {
  std::string f(kFooterSize, '\0');
  PutU64(f.data(), index_chunk_offset);
  std::memcpy(f.data() + 8, kFooterMagic, sizeof(kFooterMagic));
  return f;
}

bool ParseFooter(absl::string_view tail, uint64_t* index_offset) {
  if (tail.size() != kFooterSize ||
      std::memcmp(tail.data() + 8, kFooterMagic, sizeof(kFooterMagic)) != 0) {
    return false;
  }
  *index_offset = GetU64(tail.data());
  return true;
}

}  // namespace cltrace::format
