#include "format/chunk.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "format/crc32c.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

proto::TraceHeader SmallHeader() {
  proto::TraceHeader h;
  h.set_format_version(kFormatVersion);
  h.set_catalog_version(1);
  h.add_call_names("");
  h.add_call_names("Flush");
  h.set_timestamp_unit_ns(100);
  return h;
}

std::string OneChunk(absl::string_view raw, bool compress, ChunkInfo* info) {
  ChunkCompressor zc(3);
  std::string out;
  EXPECT_TRUE(zc.BuildChunk(info, raw, compress, &out).ok());
  return out;
}

TEST(FileHeaderTest, RoundTrip) {
  std::string bytes = EncodeFileHeader(SmallHeader());
  auto parsed = ParseFileHeader(bytes + "trailing chunks");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->size, bytes.size());
  EXPECT_EQ(parsed->header.call_names(1), "Flush");
  EXPECT_EQ(bytes.substr(0, 8), std::string("CLTRACE\0", 8));
}

TEST(FileHeaderTest, WrongMagicIsInvalidArgument) {
  auto parsed = ParseFileHeader("PK\x03\x04 this is a zip");
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("offset 0"), absl::string_view::npos);
}

TEST(FileHeaderTest, NewerVersionIsUnimplemented) {
  std::string bytes = EncodeFileHeader(SmallHeader());
  PutU32(bytes.data() + 8, kFormatVersion + 1);
  auto parsed = ParseFileHeader(bytes);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(parsed.status().message().find(absl::StrCat("format version ", kFormatVersion + 1)),
            absl::string_view::npos);
}

TEST(FileHeaderTest, HeaderLengthOverLimitIsDataLoss) {
  std::string bytes = EncodeFileHeader(SmallHeader());
  PutU32(bytes.data() + 12, 0x7fffffff);
  auto parsed = ParseFileHeader(bytes);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(parsed.status().message().find("offset 12"), absl::string_view::npos);
}

TEST(FileHeaderTest, CrcMismatchIsDataLoss) {
  std::string bytes = EncodeFileHeader(SmallHeader());
  bytes[20] ^= 0x40;
  auto parsed = ParseFileHeader(bytes);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(parsed.status().message().find("CRC"), absl::string_view::npos);
}

TEST(FileHeaderTest, ZeroTimestampUnitIsDataLoss) {
  proto::TraceHeader h = SmallHeader();
  h.set_timestamp_unit_ns(0);
  auto parsed = ParseFileHeader(EncodeFileHeader(h));
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss);
}

TEST(ChunkTest, HeaderRoundTripCompressed) {
  std::string raw(5000, 'x');
  ChunkInfo info;
  info.min_seq = 3;
  info.max_seq = 99;
  info.packet_count = 7;
  info.event_count = 5;
  std::string chunk = OneChunk(raw, /*compress=*/true, &info);
  ASSERT_EQ(info.flags & kFlagZstd, kFlagZstd);
  ChunkProbe probe;
  auto parsed = ParseChunkHeader(chunk, 1000, &probe);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(probe, ChunkProbe::kHeader);
  EXPECT_EQ(parsed->type, ChunkType::kEvents);
  EXPECT_EQ(parsed->min_seq, 3u);
  EXPECT_EQ(parsed->max_seq, 99u);
  EXPECT_EQ(parsed->packet_count, 7u);
  EXPECT_EQ(parsed->event_count, 5u);
  EXPECT_EQ(parsed->raw_size, raw.size());
  EXPECT_EQ(parsed->total_size(), chunk.size());
  absl::string_view payload = absl::string_view(chunk).substr(kChunkHeaderSize);
  EXPECT_TRUE(CheckPayload(*parsed, payload, 1000).ok());
  ChunkDecompressor dz;
  absl::string_view out;
  ASSERT_TRUE(dz.Decompress(*parsed, payload, &out, 1000).ok());
  EXPECT_EQ(out, raw);
}

TEST(ChunkTest, IncompressiblePayloadIsStored) {
  std::string raw = "ab";
  ChunkInfo info;
  info.packet_count = 1;
  std::string chunk = OneChunk(raw, /*compress=*/true, &info);
  EXPECT_EQ(info.flags & kFlagZstd, 0);
  EXPECT_EQ(chunk.substr(kChunkHeaderSize), raw);
}

TEST(ChunkTest, TornHeaderAndTornPayload) {
  ChunkInfo info;
  info.packet_count = 1;
  std::string chunk = OneChunk(std::string(100, 'y'), true, &info);
  for (size_t n = 1; n < chunk.size(); ++n) {
    ChunkProbe probe = ChunkProbe::kHeader;
    auto parsed = ParseChunkHeader(absl::string_view(chunk).substr(0, n), 0, &probe);
    ASSERT_TRUE(parsed.ok()) << n << " " << parsed.status();
    EXPECT_EQ(probe, ChunkProbe::kTorn) << n;
  }
}

TEST(ChunkTest, NoMagicIsDataLossWithOffset) {
  ChunkProbe probe;
  auto parsed = ParseChunkHeader("CLCX and more bytes", 4242, &probe);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(parsed.status().message().find("offset 4242"), absl::string_view::npos);
}

TEST(ChunkTest, HeaderCrcMismatchIsDataLoss) {
  ChunkInfo info;
  std::string chunk = OneChunk(std::string(64, 'z'), true, &info);
  chunk[20] ^= 1;  // min_seq
  ChunkProbe probe;
  auto parsed = ParseChunkHeader(chunk, 77, &probe);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(parsed.status().message().find("header CRC mismatch at offset 77"),
            absl::string_view::npos);
}

// `info`'s encoded header (followed by `payload`), parsed at offset 0, is DataLoss naming
// `what`.
void ExpectHeaderIsDataLoss(const ChunkInfo& info, absl::string_view what,
                            const std::string& payload = "") {
  ChunkProbe probe;
  auto parsed = ParseChunkHeader(EncodeChunkHeader(info) + payload, 0, &probe);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(parsed.status().message().find(what), absl::string_view::npos) << parsed.status();
}

// Sizes are checked after the header CRC, so a hostile header needs a matching CRC to get
// there; it must still never cause a large allocation.
TEST(ChunkTest, OversizedStoredSizeIsDataLoss) {
  ChunkInfo info;
  info.flags = kFlagZstd;
  info.stored_size = kMaxStoredSize + 1;
  info.raw_size = 10;
  ExpectHeaderIsDataLoss(info, "stored size");
}

TEST(ChunkTest, OversizedRawSizeIsDataLoss) {
  ChunkInfo info;
  info.flags = kFlagZstd;
  info.stored_size = 10;
  info.raw_size = kMaxRawSize + 1;
  ExpectHeaderIsDataLoss(info, "raw size");
}

TEST(ChunkTest, UnknownFlagIsDataLoss) {
  ChunkInfo info;
  info.flags = 0x80;
  ExpectHeaderIsDataLoss(info, "flags 0x80 at offset 5");
}

TEST(ChunkTest, ImpossiblePacketCountIsDataLoss) {
  ChunkInfo info;
  info.stored_size = info.raw_size = 10;
  info.packet_count = 6;  // at least 2 bytes per packet
  ExpectHeaderIsDataLoss(info, "claims 6 packets", /*payload=*/std::string(10, '\0'));
}

TEST(ChunkTest, PayloadCrcMismatchIsDataLoss) {
  ChunkInfo info;
  std::string chunk = OneChunk(std::string(300, 'q'), true, &info);
  chunk[kChunkHeaderSize + 3] ^= 0x10;
  ChunkProbe probe;
  auto parsed = ParseChunkHeader(chunk, 500, &probe);
  ASSERT_TRUE(parsed.ok());
  absl::Status st = CheckPayload(*parsed, absl::string_view(chunk).substr(kChunkHeaderSize), 500);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(st.message().find("payload at offset 548"), absl::string_view::npos) << st;
}

TEST(ChunkTest, ZstdFrameThatDecompressesLargerThanRawSizeIsDataLoss) {
  ChunkInfo info;
  std::string chunk = OneChunk(std::string(1000, 'r'), true, &info);
  ChunkProbe probe;
  auto parsed = ParseChunkHeader(chunk, 0, &probe);
  ASSERT_TRUE(parsed.ok());
  ChunkInfo lying = *parsed;
  lying.raw_size = 999;
  ChunkDecompressor dz;
  absl::string_view out;
  absl::Status st =
      dz.Decompress(lying, absl::string_view(chunk).substr(kChunkHeaderSize), &out, 0);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
}

TEST(ChunkTest, TwoZstdFramesAreDataLoss) {
  ChunkInfo info;
  std::string chunk = OneChunk(std::string(1000, 'r'), true, &info);
  std::string frame = chunk.substr(kChunkHeaderSize);
  ChunkInfo doubled = info;
  doubled.stored_size = static_cast<uint32_t>(2 * frame.size());
  doubled.raw_size = 2000;
  ChunkDecompressor dz;
  absl::string_view out;
  absl::Status st = dz.Decompress(doubled, frame + frame, &out, 0);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(st.message().find("exactly one zstd frame"), absl::string_view::npos);
}

TEST(FooterTest, RoundTripAndRejectsOtherBytes) {
  uint64_t off = 0;
  EXPECT_TRUE(ParseFooter(EncodeFooter(123456789), &off));
  EXPECT_EQ(off, 123456789u);
  EXPECT_FALSE(ParseFooter(std::string(16, 'x'), &off));
  EXPECT_FALSE(ParseFooter(EncodeFooter(1).substr(1), &off));
}

}  // namespace
}  // namespace cltrace::format
