// What the reader does with damaged files (FORMAT.md §5): one test per case, each asserting
// the specific status code and the offset the message names.
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "ddi/catalog.h"
#include "format/chunk.h"
#include "format/event_codec.h"
#include "format/internal/trace_test_util.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

using testing::ChunkOffsets;
using testing::FixChunkCrcs;
using testing::ReadAllBytes;
using testing::ReadResult;
using testing::TestOptions;

bool Contains(const absl::Status& st, absl::string_view what) {
  return st.message().find(what) != absl::string_view::npos;
}

// Reads `bytes` whole, expecting a DataLoss status whose message contains `what`; returns the
// result for the caller's further checks.
ReadResult ReadExpectingDataLoss(const std::string& bytes, absl::string_view what) {
  ReadResult r = ReadAllBytes(bytes);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(r.status, what)) << r.status;
  return r;
}

Event Draw(uint64_t seq, uint64_t dev, uint64_t count) {
  Event e = testing::MakeCall(
      CallId::kDrawIndexed, seq, seq + 1,
      {dev, count, 3 * count, static_cast<uint64_t>(-static_cast<int64_t>(count % 5))});
  e.tid = 3;
  e.timestamp_ns = static_cast<int64_t>(seq) * 150;
  return e;
}

// A small trace of `n` DrawIndexed calls in many chunks (every handle defined in chunk 0).
std::string SmallTrace(int n, std::vector<Event>* events, bool index = true,
                       size_t chunk_bytes = 120, bool compress = true) {
  TraceWriter::Options o = TestOptions();
  o.chunk_bytes = chunk_bytes;
  o.write_index = index;
  o.compress = compress;
  std::string bytes;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&bytes), o);
  EXPECT_TRUE(w.ok());
  uint64_t dev = (*w)->InternHandleValue(0x5500);
  for (int i = 0; i < n; ++i) {
    Event e = Draw(2 * i + 1, dev, 36 + 6 * i);
    EXPECT_TRUE((*w)->Append(e).ok());
    if (events != nullptr) events->push_back(e);
  }
  EXPECT_TRUE((*w)->Close().ok());
  return bytes;
}

// A file made of a catalog header and the given raw event-chunk payloads (each a chunk).
std::string BuildFile(const std::vector<std::string>& payloads,
                      proto::TraceHeader header = proto::TraceHeader()) {
  if (header.call_names_size() == 0) {
    header.set_format_version(kFormatVersion);
    for (const CallInfo& c : Calls()) header.add_call_names(&c == &Calls()[0] ? "" : c.name);
    header.set_timestamp_unit_ns(1);
  }
  std::string out = EncodeFileHeader(header);
  ChunkCompressor zc(1);
  for (const std::string& raw : payloads) {
    ChunkDecoder dec;
    dec.Reset(raw, 1, IdentityCallMap());
    Event e;
    DecodedPacket p;
    ChunkInfo info;
    bool first = true;
    while (dec.Next(&e, &p).ok() && p.kind != PacketKind::kEnd) {
      if (p.kind != PacketKind::kCall) continue;
      info.min_seq = first ? e.seq : std::min(info.min_seq, e.seq);
      info.max_seq = first ? e.seq : std::max(info.max_seq, e.seq);
      first = false;
    }
    info.packet_count = dec.packets();
    info.event_count = dec.events();
    EXPECT_TRUE(zc.BuildChunk(&info, raw, true, &out).ok());
  }
  return out;
}

uint64_t FirstChunk(absl::string_view bytes) { return ParseFileHeader(bytes)->size; }

// A chunk that defines handle id 1 (the device the Draws use) and then holds `call`.
ChunkEncoder DeviceThen(const Event& call) {
  ChunkEncoder enc(1);
  enc.AppendHandleDef(1, "0x1000");
  enc.AppendCall(call);
  return enc;
}

TEST(TraceCorruptionTest, EmptyFileIsDataLoss) {
  auto r = TraceReader::OpenBytes("");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(r.status(), "offset 0")) << r.status();
}

TEST(TraceCorruptionTest, NotACltraceFileIsInvalidArgument) {
  auto r = TraceReader::OpenBytes("{\"call\":\"DrawIndexed\"}\n");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TraceCorruptionTest, HeaderOnlyIsAnEmptyTrace) {
  std::string bytes = BuildFile({});
  ASSERT_EQ(bytes.size(), FirstChunk(bytes));
  ReadResult r = ReadAllBytes(bytes);
  EXPECT_TRUE(r.open_status.ok());
  EXPECT_TRUE(r.status.ok());
  EXPECT_TRUE(r.events.empty());
  EXPECT_EQ(r.torn_tail, -1);
}

TEST(TraceCorruptionTest, TruncatedFileHeaderIsDataLossAtEveryLength) {
  std::string bytes = SmallTrace(3, nullptr);
  const uint64_t header = FirstChunk(bytes);
  for (uint64_t n = 0; n < header; ++n) {
    auto r = TraceReader::OpenBytes(absl::string_view(bytes).substr(0, n));
    ASSERT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << n << " " << r.status();
  }
}

// Truncate a multi-chunk trace at every byte: the reader returns exactly the events of the
// whole chunks before the cut, reports where the partial chunk starts, and never fails.
TEST(TraceCorruptionTest, TornTailAtEveryOffset) {
  std::vector<Event> events;
  std::string bytes = SmallTrace(40, &events);
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  ASSERT_GT(chunks.size(), 5u);
  // Events before each chunk offset, and where the index chunk / footer are.
  std::vector<uint64_t> events_before;
  uint64_t total = 0;
  for (uint64_t off : chunks) {
    events_before.push_back(total);
    ChunkProbe probe;
    total += ParseChunkHeader(absl::string_view(bytes).substr(off), off, &probe)->event_count;
  }
  ASSERT_EQ(total, events.size());
  const uint64_t footer = bytes.size() - kFooterSize;
  for (bool salvage : {false, true}) {
    for (uint64_t cut = FirstChunk(bytes); cut <= bytes.size(); ++cut) {
      ReadResult r = ReadAllBytes(absl::string_view(bytes).substr(0, cut), {.salvage = salvage});
      ASSERT_TRUE(r.open_status.ok()) << cut;
      ASSERT_TRUE(r.status.ok()) << cut << " " << r.status;
      // The chunk the cut falls in (or starts at).
      size_t k = 0;
      while (k + 1 < chunks.size() && chunks[k + 1] <= cut) ++k;
      uint64_t want_events;
      int64_t want_torn;
      if (cut >= footer) {
        want_events = events.size();
        want_torn = cut == footer || cut == bytes.size() ? -1 : static_cast<int64_t>(footer);
      } else if (cut == chunks[k]) {
        want_events = events_before[k];
        want_torn = -1;
      } else {
        want_events = events_before[k];
        want_torn = static_cast<int64_t>(chunks[k]);
      }
      ASSERT_EQ(r.events.size(), want_events) << "cut " << cut;
      ASSERT_EQ(r.torn_tail, want_torn) << "cut " << cut;
      for (size_t i = 0; i < r.events.size(); ++i) ASSERT_EQ(r.events[i], events[i]);
      EXPECT_EQ(r.stats.corrupt_chunks_skipped, 0u);
    }
  }
}

TEST(TraceCorruptionTest, ZeroFilledTailIsTorn) {
  std::vector<Event> events;
  std::string bytes = SmallTrace(10, &events, /*index=*/false);
  const uint64_t end = bytes.size();
  bytes.append(4096, '\0');
  ReadResult r = ReadAllBytes(bytes);
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.events, events);
  EXPECT_EQ(r.torn_tail, static_cast<int64_t>(end));
}

TEST(TraceCorruptionTest, GarbageAfterTheLastChunkIsDataLoss) {
  std::vector<Event> events;
  std::string bytes = SmallTrace(10, &events, /*index=*/false);
  const uint64_t end = bytes.size();
  bytes += "this is not a chunk, and it is long enough to be more than a header";
  ReadResult r = ReadExpectingDataLoss(bytes, absl::StrFormat("no chunk magic at offset %d", end));
  EXPECT_EQ(r.events, events);
}

TEST(TraceCorruptionTest, PayloadCrcMismatchIsDataLossNamingTheChunk) {
  std::vector<Event> events;
  std::string bytes = SmallTrace(40, &events);
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  bytes[chunks[2] + kChunkHeaderSize + 5] ^= 0x01;
  ReadResult r =
      ReadExpectingDataLoss(bytes, absl::StrFormat("chunk 2: chunk payload CRC mismatch for the "
                                                   "chunk at offset %d",
                                                   chunks[2]));
  EXPECT_EQ(r.torn_tail, -1);
  // Everything before the bad chunk was returned.
  ChunkProbe probe;
  uint64_t before = 0;
  for (int k = 0; k < 2; ++k) {
    before += ParseChunkHeader(absl::string_view(bytes).substr(chunks[k]), chunks[k], &probe)
                  ->event_count;
  }
  EXPECT_EQ(r.events.size(), before);
}

TEST(TraceCorruptionTest, HeaderCrcMismatchIsDataLoss) {
  std::string bytes = SmallTrace(40, nullptr);
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  bytes[chunks[1] + 17] ^= 0x20;  // inside min_seq
  ReadExpectingDataLoss(bytes,
                        absl::StrFormat("chunk header CRC mismatch at offset %d", chunks[1]));
}

// A flipped bit in a size field must not read as a torn tail that silently drops the rest of
// the file: the header CRC catches it first.
TEST(TraceCorruptionTest, CorruptSizeFieldIsNotMistakenForATornTail) {
  std::string bytes = SmallTrace(40, nullptr);
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  bytes[chunks[1] + 10] ^= 0x40;  // stored_size += 4 MiB
  ReadResult r = ReadAllBytes(bytes);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(r.torn_tail, -1);
}

TEST(TraceCorruptionTest, GarbageZstdFrameWithMatchingCrcIsDataLoss) {
  std::string bytes = SmallTrace(40, nullptr);
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  ChunkProbe probe;
  ChunkInfo info = *ParseChunkHeader(absl::string_view(bytes).substr(chunks[1]), chunks[1], &probe);
  ASSERT_TRUE(info.flags & kFlagZstd);
  // Keep the frame header, scramble the blocks, repair both CRCs.
  for (uint32_t i = 6; i < info.stored_size; ++i) {
    bytes[chunks[1] + kChunkHeaderSize + i] = static_cast<char>(0xa5 ^ (i * 37));
  }
  FixChunkCrcs(&bytes, chunks[1]);
  ReadResult r =
      ReadExpectingDataLoss(bytes, absl::StrFormat("chunk 1: chunk at offset %d", chunks[1]));
  EXPECT_TRUE(Contains(r.status, "zstd")) << r.status;
}

TEST(TraceCorruptionTest, UnknownChunkTypeIsDataLoss) {
  std::string bytes = SmallTrace(40, nullptr);
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  bytes[chunks[3] + 4] = 9;
  FixChunkCrcs(&bytes, chunks[3]);
  ReadExpectingDataLoss(bytes,
                        absl::StrFormat("chunk 3 at offset %d: unknown chunk type 9", chunks[3]));
}

TEST(TraceCorruptionTest, IgnorableUnknownChunkTypeIsSkipped) {
  std::vector<Event> events;
  std::string bytes = SmallTrace(40, &events, /*index=*/false);
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  ChunkInfo info;
  info.type = static_cast<ChunkType>(42);
  info.flags = kFlagIgnorable;
  std::string extra;
  ChunkCompressor zc(1);
  ASSERT_TRUE(zc.BuildChunk(&info, "a future chunk's payload", true, &extra).ok());
  bytes.insert(chunks[2], extra);
  ReadResult r = ReadAllBytes(bytes);
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.events, events);
}

TEST(TraceCorruptionTest, NewerFormatVersionIsUnimplemented) {
  std::string bytes = SmallTrace(3, nullptr);
  PutU32(bytes.data() + 8, kFormatVersion + 1);
  auto r = TraceReader::OpenBytes(bytes);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(Contains(r.status(), "offset 8")) << r.status();
}

TEST(TraceCorruptionTest, OversizedFileHeaderLengthIsDataLoss) {
  std::string bytes = SmallTrace(3, nullptr);
  PutU32(bytes.data() + 12, 0xfffffff0u);
  auto r = TraceReader::OpenBytes(bytes);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(r.status(), "exceeds the limit")) << r.status();
}

// Chunk 1's header size field at `field_offset` set to `value` (its CRC repaired): DataLoss
// saying "<field> <value> at offset <file offset of the field> exceeds".
void ExpectOversizedChunkSizeIsDataLoss(size_t field_offset, uint32_t value,
                                        absl::string_view field) {
  std::string bytes = SmallTrace(10, nullptr);
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  PutU32(bytes.data() + chunks[1] + field_offset, value);
  FixChunkCrcs(&bytes, chunks[1]);
  ReadExpectingDataLoss(
      bytes, absl::StrFormat("%s %d at offset %d exceeds", field, value, chunks[1] + field_offset));
}

TEST(TraceCorruptionTest, OversizedChunkStoredSizeIsDataLoss) {
  ExpectOversizedChunkSizeIsDataLoss(8, 0xffffffffu, "stored size");
}

TEST(TraceCorruptionTest, OversizedChunkRawSizeIsDataLoss) {
  ExpectOversizedChunkSizeIsDataLoss(12, 0xfffffff0u, "raw size");
}

TEST(TraceCorruptionTest, HandleUsedBeforeItsDefinitionIsDataLoss) {
  ChunkEncoder enc(1);
  enc.AppendCall(Draw(1, /*dev=*/1, 36));  // no HandleDef for id 1
  std::string bytes = BuildFile({std::string(enc.payload())});
  ReadExpectingDataLoss(bytes, absl::StrFormat("chunk 0 at offset %d: event seq 1 (DrawIndexed) "
                                               "at payload offset 0: arg 0 uses handle id 1 "
                                               "before its definition",
                                               FirstChunk(bytes)));
}

TEST(TraceCorruptionTest, HandleDefinitionOutOfOrderIsDataLoss) {
  ChunkEncoder enc(1);
  enc.AppendHandleDef(2, "0x2000");
  enc.AppendHandleDef(1, "0x1000");
  std::string bytes = BuildFile({std::string(enc.payload())});
  ReadExpectingDataLoss(bytes,
                        "handle definition id 2 (\"0x2000\") at payload offset 0: out "
                        "of order: the next id to define is 1");
}

TEST(TraceCorruptionTest, HandleRedefinedDifferentlyIsDataLoss) {
  ChunkEncoder enc(1);
  enc.AppendHandleDef(1, "0x1000");
  enc.AppendHandleDef(1, "0x2000");
  std::string bytes = BuildFile({std::string(enc.payload())});
  ReadExpectingDataLoss(bytes, "already defined as \"0x1000\"");
}

TEST(TraceCorruptionTest, StringUsedBeforeItsDefinitionIsDataLoss) {
  Event e = Draw(1, 1, 36);
  e.annotation = 1;
  ChunkEncoder enc = DeviceThen(e);
  ReadExpectingDataLoss(BuildFile({std::string(enc.payload())}),
                        "annotation uses string id 1 before its definition");
}

TEST(TraceCorruptionTest, ContentUsedBeforeItsDefinitionIsDataLoss) {
  Event e = Draw(1, 1, 36);
  e.content = 1;
  ChunkEncoder enc = DeviceThen(e);
  enc.AppendContentDef(1, "late");
  ReadExpectingDataLoss(BuildFile({std::string(enc.payload())}),
                        "content id 1 before its definition");
}

TEST(TraceCorruptionTest, ContentDefinedTwiceIsDataLossShowingAnExcerpt) {
  ChunkEncoder enc(1);
  const std::string big(1000, '\x01');
  enc.AppendContentDef(1, big);
  enc.AppendContentDef(1, "other");
  ReadResult r =
      ReadExpectingDataLoss(BuildFile({std::string(enc.payload())}), "content definition id 1");
  EXPECT_TRUE(Contains(r.status, "already defined")) << r.status;
  // 64 bytes of the kilobyte, escaped (\001 is four characters each).
  EXPECT_LT(r.status.message().size(), 600u) << r.status;
}

TEST(TraceCorruptionTest, ContentIdBeyond32BitsIsDataLoss) {
  // CallEvent.content is a uint64 on the wire; Event::content holds 32 bits.
  ChunkEncoder enc = DeviceThen(Draw(1, 1, 36));
  std::string payload(enc.payload());
  // Append "content = 2^32" (field 12, varint) to the CallEvent: patch both length prefixes.
  proto::ChunkBody body;
  ASSERT_TRUE(body.ParseFromString(payload));
  body.mutable_packet(1)->mutable_call()->set_content(uint64_t{1} << 32);
  ReadExpectingDataLoss(BuildFile({body.SerializeAsString()}), "CallEvent.content");
}

TEST(TraceCorruptionTest, SalvageFillsLostContentWithPlaceholders) {
  // Content ids 1 and 2 were defined in a chunk that is gone; id 3 arrives: 1 and 2 become
  // placeholders so 3 still means what the writer meant.
  ChunkEncoder enc(1);
  enc.AppendContentDef(3, "kept");
  enc.AppendHandleDef(1, "0x1000");
  Event e = Draw(1, 1, 36);
  e.content = 3;
  enc.AppendCall(e);
  std::string file = BuildFile({std::string(enc.payload())});
  // Pretend bytes were skipped before the chunk (salvage accounts gaps against them).
  const uint64_t first = FirstChunk(file);
  file.insert(first, std::string(64, 'x'));
  TraceReader::Options salvage;
  salvage.salvage = true;
  ReadResult r = ReadAllBytes(file, salvage);
  ASSERT_EQ(r.events.size(), 1u) << r.status;
  EXPECT_EQ(r.events[0].content, 3u);
  EXPECT_EQ(r.contents.Token(3), "kept");
  EXPECT_EQ(r.contents.Token(1), "<lost content 1>");
}

TEST(TraceCorruptionTest, CallIdOutsideTheHeaderIsDataLoss) {
  ChunkEncoder enc(1);
  Event e = Draw(1, 0, 36);
  e.call = static_cast<CallId>(kCallIdCount - 1);
  e.args.clear();
  enc.AppendCall(e);
  proto::TraceHeader h;
  h.set_format_version(kFormatVersion);
  h.set_timestamp_unit_ns(1);
  h.add_call_names("");
  h.add_call_names("DrawIndexed");
  ReadExpectingDataLoss(BuildFile({std::string(enc.payload())}, h), "but the header names 2 calls");
}

TEST(TraceCorruptionTest, CallUnknownToThisCatalogIsInvalidArgumentOnlyWhenUsed) {
  ChunkEncoder enc = DeviceThen(Draw(1, 1, 36));  // file call id = our DrawIndexed id
  proto::TraceHeader h;
  h.set_format_version(kFormatVersion);
  h.set_timestamp_unit_ns(1);
  for (const CallInfo& c : Calls()) h.add_call_names(&c == &Calls()[0] ? "" : c.name);
  h.set_call_names(static_cast<int>(CallId::kDrawIndexed), "DrawIndexedFromTheFuture");
  h.set_call_names(static_cast<int>(CallId::kFlush), "AnotherUnusedUnknownCall");
  std::string bytes = BuildFile({std::string(enc.payload())}, h);
  ReadResult r = ReadAllBytes(bytes);
  ASSERT_TRUE(r.open_status.ok()) << r.open_status;  // unknown names alone are fine
  EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status, absl::StrFormat("chunk 0 at offset %d: event seq 1 at payload "
                                                 "offset 14 calls \"DrawIndexedFromTheFuture\"",
                                                 FirstChunk(bytes))))
      << r.status;
  ReadResult s = ReadAllBytes(bytes, {.salvage = true});
  EXPECT_TRUE(s.status.ok());
  EXPECT_TRUE(s.events.empty());
  EXPECT_EQ(s.stats.events_skipped, 1u);
}

TEST(TraceCorruptionTest, EventOutsideTheChunkSeqRangeIsDataLoss) {
  std::string bytes = SmallTrace(10, nullptr, /*index=*/false);
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  PutU64(bytes.data() + chunks[1] + 24, 1);  // max_seq below every event of the chunk
  PutU64(bytes.data() + chunks[1] + 16, 1);
  FixChunkCrcs(&bytes, chunks[1]);
  ReadExpectingDataLoss(bytes, "is outside the header's range [1, 1]");
}

TEST(TraceCorruptionTest, PacketCountMismatchIsDataLoss) {
  std::string bytes = SmallTrace(10, nullptr, /*index=*/false);
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  PutU32(bytes.data() + chunks[1] + 32, GetU32(bytes.data() + chunks[1] + 32) + 1);
  FixChunkCrcs(&bytes, chunks[1]);
  ReadExpectingDataLoss(bytes, absl::StrFormat("chunk 1 at offset %d: payload holds", chunks[1]));
}

TEST(TraceCorruptionTest, SalvageSkipsACorruptMiddleChunk) {
  std::vector<Event> events;
  std::string bytes = SmallTrace(40, &events);
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  ChunkProbe probe;
  ChunkInfo bad = *ParseChunkHeader(absl::string_view(bytes).substr(chunks[3]), chunks[3], &probe);
  bytes[chunks[3] + kChunkHeaderSize + 2] ^= 0x55;
  ReadResult strict = ReadAllBytes(bytes);
  EXPECT_EQ(strict.status.code(), absl::StatusCode::kDataLoss);
  ReadResult r = ReadAllBytes(bytes, {.salvage = true});
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.stats.corrupt_chunks_skipped, 1u);
  EXPECT_EQ(r.events.size(), events.size() - bad.event_count);
  std::vector<Event> want;
  for (const Event& e : events) {
    if (e.seq < bad.min_seq || e.seq > bad.max_seq) want.push_back(e);
  }
  EXPECT_EQ(r.events, want);
}

TEST(TraceCorruptionTest, SalvageResynchronisesAfterGarbageBetweenChunks) {
  std::vector<Event> events;
  std::string bytes = SmallTrace(40, &events, /*index=*/false);
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  const std::string garbage = "garbage CLCK with a fake magic inside and more garbage";
  bytes.insert(chunks[4], garbage);
  ReadResult strict = ReadAllBytes(bytes);
  EXPECT_EQ(strict.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(strict.status, absl::StrFormat("no chunk magic at offset %d", chunks[4])));
  ReadResult r = ReadAllBytes(bytes, {.salvage = true});
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.events, events);
  EXPECT_EQ(r.stats.corrupt_chunks_skipped, 1u);
  EXPECT_EQ(r.stats.bytes_skipped, garbage.size());
}

// The file of three chunks (the encoders' payloads) with the middle one's payload corrupted,
// read with salvage.
ReadResult SalvageWithTheMiddleChunkCorrupt(const ChunkEncoder& a, const ChunkEncoder& b,
                                            const ChunkEncoder& c) {
  std::string bytes =
      BuildFile({std::string(a.payload()), std::string(b.payload()), std::string(c.payload())});
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  EXPECT_EQ(chunks.size(), 3u);
  if (chunks.size() == 3) bytes[chunks[1] + kChunkHeaderSize + 1] ^= 0x7f;
  return ReadAllBytes(bytes, {.salvage = true});
}

TEST(TraceCorruptionTest, SalvageFillsDefinitionsLostWithASkippedChunk) {
  // Chunk 0 defines handle 1, chunk 1 (corrupted) defines handle 2, chunk 2 defines handle 3
  // and uses all three.
  ChunkEncoder a(1), b(1), c(1);
  a.AppendHandleDef(1, "0x1000");
  a.AppendCall(Draw(1, 1, 36));
  b.AppendHandleDef(2, "0x2000");
  b.AppendCall(Draw(3, 2, 36));
  c.AppendHandleDef(3, "0x3000");
  c.AppendCall(Draw(5, 1, 36));
  c.AppendCall(Draw(7, 2, 36));
  c.AppendCall(Draw(9, 3, 36));
  ReadResult r = SalvageWithTheMiddleChunkCorrupt(a, b, c);
  EXPECT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.events.size(), 4u);
  EXPECT_EQ(r.handles.Token(1), "0x1000");
  EXPECT_EQ(r.handles.Token(2), "<lost handle 2>");
  EXPECT_EQ(r.handles.Token(3), "0x3000");
}

// Found by trace_reader_fuzz: after a skipped chunk, a definition with an absurd id made
// salvage fill placeholders without bound.
TEST(TraceCorruptionTest, SalvageIgnoresADefinitionGapLargerThanWhatWasSkipped) {
  ChunkEncoder a(1), b(1), c(1);
  a.AppendHandleDef(1, "0x1000");
  a.AppendCall(Draw(1, 1, 36));
  b.AppendHandleDef(2, "0x2000");
  c.AppendHandleDef(uint64_t{1} << 60, "0x3000");
  c.AppendCall(Draw(5, 1, 36));
  ReadResult r = SalvageWithTheMiddleChunkCorrupt(a, b, c);
  EXPECT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.stats.definitions_skipped, 1u);
  EXPECT_EQ(r.handles.size(), 2u);  // NULL and 0x1000
}

}  // namespace
}  // namespace cltrace::format
