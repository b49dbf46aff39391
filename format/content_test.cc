// Content captured with a call (Event::content, FORMAT.md §3.8): the chunk encoding, the
// writer's interning, the reader's table and the JSONL "content" key.
#include "format/content.h"

#include <cstring>
#include <string>
#include <vector>

#include "format/event_codec.h"
#include "format/internal/trace_test_util.h"
#include "format/jsonl.h"
#include "format/trace.pb.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

using testing::ReadAllBytes;
using testing::ReadResult;
using testing::TestOptions;

Event Update(uint64_t seq, uint64_t dev, uint64_t res, uint32_t content) {
  Event e;
  e.call = CallId::kResourceUpdateSubresourceUP;
  e.seq = seq;
  e.end = seq + 1;
  e.tid = 1;
  e.args.assign(LayoutOf(e.call).fixed.size(), 0);
  e.args[0] = dev;
  e.args[1] = res;
  e.content = content;
  return e;
}

bool Contains(const absl::Status& st, absl::string_view what) {
  return st.message().find(what) != absl::string_view::npos;
}

TEST(ContentTest, ContentDefAndCallEventContentAreProtobufWireFormat) {
  ChunkEncoder enc(1);
  const std::string bytes("\x00\x01\xff\x00 binary", 10);
  enc.AppendContentDef(1, bytes);
  enc.AppendCall(Update(1, 0, 0, 1));
  proto::ChunkBody body;
  ASSERT_TRUE(body.ParseFromArray(enc.payload().data(), static_cast<int>(enc.payload().size())));
  ASSERT_EQ(body.packet_size(), 2);
  EXPECT_EQ(body.packet(0).content().id(), 1u);
  EXPECT_EQ(body.packet(0).content().data(), bytes);
  EXPECT_EQ(body.packet(1).call().content(), 1u);
  EXPECT_EQ(body.SerializeAsString(), enc.payload());

  ChunkDecoder dec;
  dec.Reset(enc.payload(), 1, IdentityCallMap());
  Event e;
  DecodedPacket p;
  ASSERT_TRUE(dec.Next(&e, &p).ok());
  EXPECT_EQ(p.kind, PacketKind::kContentDef);
  EXPECT_EQ(p.def_id, 1u);
  EXPECT_EQ(p.def_value, bytes);
  ASSERT_TRUE(dec.Next(&e, &p).ok());
  EXPECT_EQ(p.kind, PacketKind::kCall);
  EXPECT_EQ(e, Update(1, 0, 0, 1));
}

TEST(ContentTest, WriterInternsEqualBytesOnceAndReaderReturnsThem) {
  std::string file;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&file), TestOptions());
  ASSERT_TRUE(w.ok());
  const uint64_t dev = (*w)->InternHandleValue(0x5500);
  const uint64_t res = (*w)->InternHandleValue(0x6600);
  const std::string a(300, 'a'), b("\0\0\0\x7f", 4);
  const uint32_t ida = (*w)->InternContent(a);
  const uint32_t idb = (*w)->InternContent(b);
  EXPECT_EQ((*w)->InternContent(std::string(300, 'a')), ida);  // deduplicated
  EXPECT_NE(ida, idb);
  EXPECT_EQ((*w)->InternContent(""), 0u);  // nothing to store
  ASSERT_TRUE((*w)->Append(Update(1, dev, res, ida)).ok());
  ASSERT_TRUE((*w)->Append(Update(3, dev, res, idb)).ok());
  ASSERT_TRUE((*w)->Append(Update(5, dev, res, ida)).ok());
  ASSERT_TRUE((*w)->Append(Update(7, dev, res, 0)).ok());
  ASSERT_TRUE((*w)->Close().ok());

  ReadResult r = ReadAllBytes(file);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.events.size(), 4u);
  EXPECT_EQ(r.contents.size(), 3u);  // id 0 plus the two distinct contents
  EXPECT_EQ(r.contents.Token(r.events[0].content), a);
  EXPECT_EQ(r.contents.Token(r.events[1].content), b);
  EXPECT_EQ(r.events[2].content, r.events[0].content);
  EXPECT_EQ(r.events[3].content, 0u);
}

TEST(ContentTest, AppendRejectsContentIdTheWriterDidNotHandOut) {
  std::string file;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&file), TestOptions());
  ASSERT_TRUE(w.ok());
  absl::Status st = (*w)->Append(Update(1, 0, 0, 1));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(st, "content id 1, not interned by this writer")) << st;
}

TEST(ContentTest, ContentLargerThanAChunkGetsAChunkOfItsOwn) {
  TraceWriter::Options o = TestOptions();
  o.chunk_bytes = 4096;
  std::string file;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&file), o);
  ASSERT_TRUE(w.ok());
  std::string big(1 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + i / 251);
  const uint32_t id = (*w)->InternContent(big);
  ASSERT_TRUE((*w)->Append(Update(1, 0, 0, id)).ok());
  ASSERT_TRUE((*w)->Close().ok());
  ReadResult r = ReadAllBytes(file);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.contents.Token(r.events[0].content), big);
}

TEST(ContentTest, JsonlContentRoundTripsAsHex) {
  const std::string line =
      R"({"seq":1,"tid":1,"fn":"ResourceUpdateSubresourceUP","args":{"hDevice":"dev",)"
      R"("hDstResource":"r","pDstBox":null},"end":2,"content":"00ff10Ab"})";
  absl::StatusOr<JsonlTrace> t = ParseJsonl(line);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->events.size(), 1u);
  EXPECT_EQ(t->contents.Token(t->events[0].content), std::string("\x00\xff\x10\xab", 4));
  const std::string out = EventToJsonl(t->events[0], t->handles, t->strings, &t->contents);
  EXPECT_NE(out.find(R"("content":"00ff10ab")"), std::string::npos) << out;
  // Without the table the line simply has no content.
  EXPECT_EQ(EventToJsonl(t->events[0], t->handles, t->strings).find("content"), std::string::npos);
  absl::StatusOr<JsonlTrace> again = ParseJsonl(out);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->contents.Token(again->events[0].content), std::string("\x00\xff\x10\xab", 4));
}

TEST(ContentTest, JsonlEmptyOrNullContentIsNone) {
  for (const char* v : {R"("")", "null"}) {
    absl::StatusOr<JsonlTrace> t = ParseJsonl(absl::StrCat(
        R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":"d"},"end":2,"content":)", v, "}"));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->events[0].content, 0u) << v;
  }
}

TEST(ContentTest, JsonlBadContentNamesTheProblem) {
  struct Case {
    const char* value;
    const char* message;
  } cases[] = {
      {R"("abc")", "odd number of hex digits (3)"},
      {R"("0g")", "non-hex character at index 1"},
      {"12", "must be a hex string, not a number"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<JsonlTrace> t = ParseJsonl(
        absl::StrCat(R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":"d"},"end":2,"content":)",
                     c.value, "}"));
    ASSERT_FALSE(t.ok()) << c.value;
    EXPECT_TRUE(Contains(t.status(), "line 1")) << t.status();
    EXPECT_TRUE(Contains(t.status(), c.message)) << t.status();
  }
}

TEST(ContentTest, RolesComeFromTheCatalogsPrototypes) {
  EXPECT_EQ(ContentRoleOf(CallId::kResourceUpdateSubresourceUP), ContentRole::kUploadSource);
  EXPECT_EQ(ContentRoleOf(CallId::kDefaultConstantBufferUpdateSubresourceUP),
            ContentRole::kUploadSource);
  EXPECT_EQ(ContentRoleOf(CallId::kDynamicIABufferMapDiscard), ContentRole::kMap);
  EXPECT_EQ(ContentRoleOf(CallId::kStagingResourceMap), ContentRole::kMap);
  EXPECT_EQ(ContentRoleOf(CallId::kDynamicResourceUnmap), ContentRole::kUnmap);
  EXPECT_EQ(ContentRoleOf(CallId::kResourceUnmap), ContentRole::kUnmap);
  EXPECT_EQ(ContentRoleOf(CallId::kCreateResource), ContentRole::kInitialData);
  EXPECT_EQ(ContentRoleOf(CallId::kDrawIndexed), ContentRole::kNone);
  EXPECT_EQ(ContentRoleOf(CallId::kInvalid), ContentRole::kNone);
}

TEST(ContentTest, ShapeOfCreateReadsTheArgumentStructure) {
  Event e;
  e.call = CallId::kCreateResource;
  e.args.assign(LayoutOf(e.call).fixed.size(), 0);
  const CallInfo& ci = *GetCall(e.call);
  auto set = [&](const char* name, uint64_t v) { e.args[FieldIndex(ci, name)] = v; };
  set("ResourceDimension", 3);
  set("Format", 28);
  set("MipLevels", 2);
  set("ArraySize", 1);
  EXPECT_FALSE(ShapeOfCreate(e.call, e.args).has_value());  // pCreateResource NULL
  set("pCreateResource", 1);
  // pMipInfoList NULL: nothing gives the sizes.
  std::optional<ResourceShape> unsized = ShapeOfCreate(e.call, e.args);
  ASSERT_TRUE(unsized.has_value());
  EXPECT_EQ(unsized->width, 0u);
  // The sizes are those of pMipInfoList[0] (its elements follow the fixed fields).
  set("pMipInfoList", 1 + 2);
  for (uint64_t v : {64, 32, 1, 64, 32, 1, 32, 16, 1, 32, 16, 1}) e.args.push_back(v);
  std::optional<ResourceShape> s = ShapeOfCreate(e.call, e.args);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->dimension, 3u);
  EXPECT_EQ(s->format, 28u);
  EXPECT_EQ(s->width, 64u);
  EXPECT_EQ(s->height, 32u);
  EXPECT_EQ(s->depth, 1u);
  EXPECT_EQ(s->mip_levels, 2u);
  EXPECT_FALSE(ShapeOfCreate(CallId::kDrawIndexed, e.args).has_value());
}

// pInitialDataUP's pitches follow both arrays' elements: pMipInfoList's first (FORMAT.md §3.3).
TEST(ContentTest, InitialDataOfCreateReadsPInitialDataUP) {
  Event e;
  e.call = CallId::kCreateResource;
  e.args.assign(LayoutOf(e.call).fixed.size(), 0);
  const CallInfo& ci = *GetCall(e.call);
  auto set = [&](const char* name, uint64_t v) { e.args[FieldIndex(ci, name)] = v; };
  set("ResourceDimension", 3);
  set("MipLevels", 2);
  set("ArraySize", 1);
  set("pCreateResource", 1);
  set("pMipInfoList", 1 + 2);
  for (uint64_t v : {8, 4, 1, 8, 4, 1, 4, 2, 1, 4, 2, 1}) e.args.push_back(v);
  EXPECT_FALSE(InitialDataOfCreate(e.call, e.args).has_value());  // pInitialDataUP NULL
  set("pInitialDataUP", 1 + 2);
  // {pSysMem, SysMemPitch, SysMemSlicePitch} per subresource.
  for (uint64_t v : {0x1000, 32, 128, 0x2000, 16, 0}) e.args.push_back(v);
  std::optional<std::vector<SubresourcePitches>> p = InitialDataOfCreate(e.call, e.args);
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].row_pitch, 32u);
  EXPECT_EQ((*p)[0].depth_pitch, 128u);
  EXPECT_EQ((*p)[1].row_pitch, 16u);
  EXPECT_EQ((*p)[1].depth_pitch, 0u);
  EXPECT_FALSE(InitialDataOfCreate(CallId::kDrawIndexed, e.args).has_value());
  set("pCreateResource", 0);
  EXPECT_FALSE(InitialDataOfCreate(e.call, e.args).has_value());
}

TEST(ContentTest, InitialDataIsEverySubresourceInOrder) {
  // A buffer: its ByteWidth, whatever the pitches say.
  ResourceShape b{1, 0, 48, 1, 1, 1, 1};
  absl::StatusOr<InitialData> buf = InitialDataLayout(b, {{0, 0}});
  ASSERT_TRUE(buf.ok()) << buf.status();
  EXPECT_EQ(buf->bytes, 48u);
  // An 8x4 RGBA8 array of 2 slices with 3 mips (8x4, 4x2, 2x1): subresource = mip + 3 x slice,
  // each at its own SysMemPitch (mip 0 padded to 40 bytes a row).
  ResourceShape t{3, 28, 8, 4, 1, 3, 2};
  const std::vector<SubresourcePitches> pitches = {{40, 0}, {16, 0}, {8, 0},
                                                   {32, 0}, {16, 0}, {8, 0}};
  absl::StatusOr<InitialData> d = InitialDataLayout(t, pitches);
  ASSERT_TRUE(d.ok()) << d.status();
  const std::vector<uint64_t> sizes = {3 * 40 + 32, 16 + 16, 8, 4 * 32, 32, 8};
  ASSERT_EQ(d->regions.size(), 6u);
  uint64_t at = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(d->offsets[i], at) << i;
    EXPECT_EQ(d->regions[i].Bytes(), sizes[i]) << i;
    at += sizes[i];
  }
  EXPECT_EQ(d->bytes, at);
  // A 3D texture: slices by SysMemSlicePitch.
  ResourceShape v{4, 28, 4, 4, 2, 1, 1};
  EXPECT_EQ(InitialDataLayout(v, {{16, 80}})->bytes, 80u + 64);
}

TEST(ContentTest, InitialDataRejectsWhatCannotBeSized) {
  ResourceShape t{3, 28, 8, 4, 1, 2, 1};
  EXPECT_TRUE(Contains(InitialDataLayout(t, {{32, 0}}).status(), "1 pInitialDataUP entries"));
  EXPECT_TRUE(Contains(InitialDataLayout(t, {{32, 0}, {4, 0}}).status(),
                       "initial data of subresource 1: RowPitch 4 is smaller"));
  ResourceShape nv12{3, 103, 64, 32, 1, 1, 1};
  EXPECT_TRUE(Contains(InitialDataLayout(nv12, {{64, 0}}).status(), "DXGI format 103"));
}

TEST(ContentTest, BufferUploadIsItsBoxOrTheWholeBuffer) {
  ResourceShape b{1, 0, 256, 1, 1, 1, 1};
  absl::StatusOr<RegionLayout> whole = UploadLayout(b, 0, nullptr, 256, 0);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->Bytes(), 256u);
  Box box{16, 0, 0, 48, 1, 1};
  absl::StatusOr<RegionLayout> part = UploadLayout(b, 0, &box, 0, 0);
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_EQ(part->Bytes(), 32u);
  Box outside{200, 0, 0, 300, 1, 1};
  EXPECT_TRUE(Contains(UploadLayout(b, 0, &outside, 0, 0).status(), "outside the 256-byte"));
  EXPECT_TRUE(Contains(UploadLayout(b, 1, nullptr, 0, 0).status(), "subresource 1 of a buffer"));
}

TEST(ContentTest, TextureUploadCountsBlocksRowsAndSlices) {
  // 64x32 RGBA8, mip 1 is 32x16: a box of 8x4 texels at RowPitch 256 spans 3 rows of 256
  // and one of 32 bytes.
  ResourceShape t{3, 28, 64, 32, 1, 2, 1};
  Box box{0, 0, 0, 8, 4, 1};
  absl::StatusOr<RegionLayout> l = UploadLayout(t, 1, &box, 256, 0);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->row_bytes, 32u);
  EXPECT_EQ(l->rows, 4u);
  EXPECT_EQ(l->Bytes(), 3 * 256u + 32);
  // BC1 (8 bytes per 4x4 block): the whole 64x32 mip 0 is 16 x 8 blocks.
  ResourceShape bc{3, 71, 64, 32, 1, 1, 1};
  l = UploadLayout(bc, 0, nullptr, 128, 0);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->rows, 8u);
  EXPECT_EQ(l->Bytes(), 8 * 128u);
  // A 3D texture: slices by DepthPitch.
  ResourceShape v{4, 28, 4, 4, 4, 1, 1};
  l = UploadLayout(v, 0, nullptr, 16, 64);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->Bytes(), 4 * 64u);
}

TEST(ContentTest, TextureUploadRejectsWhatCannotBeSized) {
  ResourceShape t{3, 28, 64, 32, 1, 1, 1};
  EXPECT_TRUE(Contains(UploadLayout(t, 0, nullptr, 16, 0).status(), "RowPitch 16 is smaller"));
  EXPECT_TRUE(Contains(UploadLayout(t, 1, nullptr, 256, 0).status(), "subresource 1 does not"));
  Box empty{4, 4, 0, 4, 8, 1};
  EXPECT_TRUE(Contains(UploadLayout(t, 0, &empty, 256, 0).status(), "is empty or outside"));
  ResourceShape nv12{3, 103, 64, 32, 1, 1, 1};
  EXPECT_TRUE(Contains(UploadLayout(nv12, 0, nullptr, 64, 0).status(), "DXGI format 103"));
}

TEST(ContentTest, MappedBufferIsBoundedByTheDriversDepthPitch) {
  ResourceShape b{1, 0, 4096, 1, 1, 1, 1};
  EXPECT_EQ(MappedLayout(b, 0, 4096, 4096)->Bytes(), 4096u);
  EXPECT_EQ(MappedLayout(b, 0, 0, 0)->Bytes(), 4096u);
  EXPECT_EQ(MappedLayout(b, 0, 1024, 1024)->Bytes(), 1024u);
}

TEST(ContentTest, CopyRegionRepitchesRowByRow) {
  RegionLayout src;
  src.row_bytes = 3;
  src.rows = 2;
  src.slices = 2;
  src.row_pitch = 4;
  src.depth_pitch = 8;
  const uint8_t in[] = {1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0, 10, 11, 12};
  ASSERT_EQ(src.Bytes(), sizeof(in));
  uint8_t out[2 * 16] = {};
  CopyRegion(src, in, 5, 16, out);
  const uint8_t want[] = {1, 2, 3, 0, 0, 4, 5, 6, 0, 0,  0,  0,
                          0, 0, 0, 0, 7, 8, 9, 0, 0, 10, 11, 12};
  EXPECT_EQ(std::memcmp(out, want, sizeof(want)), 0);
}

}  // namespace
}  // namespace cltrace::format
