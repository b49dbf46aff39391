#include "format/event_codec.h"

#include <random>
#include <string>
#include <vector>

#include "ddi/catalog.h"
#include "format/internal/trace_test_util.h"
#include "format/trace.pb.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

using testing::RandomArgs;

// Random events over every catalog call, in a shape a recorder produces: increasing seqs,
// callbacks nested in calls, a few threads, some failures and annotations.
std::vector<Event> RandomEvents(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<Event> events;
  uint64_t seq = 1;
  int64_t ts = 1000;
  for (int i = 0; i < n; ++i) {
    Event e;
    e.call = static_cast<CallId>(1 + rng() % (kCallIdCount - 1));
    e.seq = seq;
    const int shape = static_cast<int>(rng() % 10);
    e.end = shape == 0 ? 0 : seq + 1 + (shape == 1 ? rng() % 5 : 0);
    seq = (e.end != 0 ? e.end : e.seq) + 1 + (rng() % 7 == 0 ? rng() % 3 : 0);
    if (rng() % 5 == 0) seq -= std::min<uint64_t>(seq - 1, rng() % 4);  // out of order
    e.parent = rng() % 4 == 0 && e.seq > 1 ? e.seq - 1 - rng() % (e.seq - 1) : 0;
    e.tid = 100 + static_cast<uint32_t>(rng() % 3);
    ts += static_cast<int64_t>(rng() % 5000) - 200;  // mostly forward, sometimes back
    e.timestamp_ns = ts;
    e.ret = rng() % 3 == 0 ? static_cast<int32_t>(0x8007000e) : static_cast<int64_t>(rng() % 2);
    e.annotation = rng() % 6 == 0 ? 1 + rng() % 3 : 0;
    RandomArgs(rng, *GetCall(e.call), /*handles=*/50, /*strings=*/4, &e);
    events.push_back(e);
  }
  return events;
}

std::vector<Event> DecodeAll(absl::string_view payload, uint32_t unit) {
  ChunkDecoder dec;
  dec.Reset(payload, unit, IdentityCallMap());
  std::vector<Event> out;
  Event e;
  DecodedPacket p;
  while (true) {
    absl::Status st = dec.Next(&e, &p);
    EXPECT_TRUE(st.ok()) << st;
    if (!st.ok() || p.kind == PacketKind::kEnd) break;
    if (p.kind == PacketKind::kCall) out.push_back(e);
  }
  return out;
}

TEST(EventCodecTest, RoundTripRandomEventsOverAllCalls) {
  std::vector<Event> events = RandomEvents(1, 5000);
  ChunkEncoder enc(1);
  for (const Event& e : events) enc.AppendCall(e);
  EXPECT_EQ(enc.event_count(), events.size());
  EXPECT_EQ(DecodeAll(enc.payload(), 1), events);
}

TEST(EventCodecTest, EveryCallIsCovered) {
  std::vector<Event> events = RandomEvents(1, 5000);
  std::vector<bool> seen(kCallIdCount, false);
  for (const Event& e : events) seen[static_cast<int>(e.call)] = true;
  for (int i = 1; i < kCallIdCount; ++i)
    EXPECT_TRUE(seen[i]) << GetCall(static_cast<uint32_t>(i))->name;
}

// The bytes are ChunkBody in protobuf's wire format: the generated classes read the same
// values, and serialize them back to the same bytes.
TEST(EventCodecTest, GeneratedProtobufClassesParseTheSameBytes) {
  std::vector<Event> events = RandomEvents(2, 2000);
  ChunkEncoder enc(1);
  enc.AppendHandleDef(1, "0x5500");
  enc.AppendStringDef(1, "ID3D11DeviceContext::FinishCommandList");
  for (const Event& e : events) enc.AppendCall(e);

  proto::ChunkBody body;
  ASSERT_TRUE(body.ParseFromArray(enc.payload().data(), static_cast<int>(enc.payload().size())));
  ASSERT_EQ(body.packet_size(), static_cast<int>(events.size()) + 2);
  EXPECT_EQ(body.packet(0).handle().id(), 1u);
  EXPECT_EQ(body.packet(0).handle().token(), "0x5500");
  EXPECT_EQ(body.packet(1).string().value(), "ID3D11DeviceContext::FinishCommandList");

  uint64_t prev_end = 0;
  int64_t prev_ts = 0;
  uint32_t prev_tid = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const proto::Packet& pk = body.packet(static_cast<int>(i) + 2);
    ASSERT_TRUE(pk.has_call());
    const proto::CallEvent& c = pk.call();
    Event e;
    e.call = static_cast<CallId>(c.call());
    e.seq = prev_end + 1 + static_cast<uint64_t>(c.dseq());
    e.end = c.incomplete() ? 0 : e.seq + 1 + c.dend();
    e.tid = c.has_tid() ? c.tid() : prev_tid;
    e.timestamp_ns = prev_ts + c.dts();
    e.parent = c.dparent() == 0 ? 0 : e.seq - c.dparent();
    e.ret = c.ret();
    e.annotation = c.annotation();
    for (uint64_t a : c.args()) e.args.push_back(a);
    VisitArgKinds(LayoutOf(e.call), absl::MakeConstSpan(e.args.data(), e.args.size()),
                  [&](size_t k, FieldKind kind) {
                    if (IsSignedKind(kind)) e.args[k] = static_cast<uint64_t>(UnZigZag(e.args[k]));
                  });
    ASSERT_EQ(e, events[i]) << "event " << i;
    prev_end = e.end != 0 ? e.end : e.seq;
    prev_ts = e.timestamp_ns;
    prev_tid = e.tid;
  }
  EXPECT_EQ(body.SerializeAsString(), enc.payload());
}

TEST(EventCodecTest, SequentialLeafCallOmitsSeqFields) {
  ChunkEncoder enc(1);
  Event e = testing::MakeCall(CallId::kDrawIndexed, 1, 2, {1, 36, 0, 0});
  enc.AppendCall(e);
  // 0a <len> 0a <len> 08 <call> 3a 04 01 24 00 00
  const std::string call = std::string(1, static_cast<char>(CallId::kDrawIndexed));
  const std::string body = "\x08" + call + std::string("\x3a\x04\x01\x24\x00\x00", 6);
  EXPECT_EQ(enc.payload(), "\x0a" + std::string(1, static_cast<char>(body.size() + 2)) + "\x0a" +
                               std::string(1, static_cast<char>(body.size())) + body);
}

TEST(EventCodecTest, SignedArgumentsAreZigZag) {
  ChunkEncoder enc(1);
  Event e;
  e.call = CallId::kDrawIndexed;  // BaseVertexLocation is INT
  e.seq = 1;
  e.end = 2;
  e.args = {0, 0, 0, static_cast<uint64_t>(int64_t{-1})};
  enc.AppendCall(e);
  // The packed args are 00 00 00 01: -1 takes one byte, not ten.
  EXPECT_NE(enc.payload().find(std::string("\x3a\x04\x00\x00\x00\x01", 6)),
            absl::string_view::npos);
  EXPECT_EQ(DecodeAll(enc.payload(), 1), std::vector<Event>{e});
}

TEST(EventCodecTest, IncompleteCallRoundTripsAndAnchorsTheNextSeq) {
  ChunkEncoder enc(1);
  Event a;
  a.call = CallId::kFlush;
  a.seq = 10;
  a.end = 0;  // the process died inside it... as seen by this thread
  a.args = {1, 0};
  Event b = a;
  b.seq = 11;  // right after a's entry
  b.end = 12;
  enc.AppendCall(a);
  enc.AppendCall(b);
  std::vector<Event> out = DecodeAll(enc.payload(), 1);
  EXPECT_EQ(out, (std::vector<Event>{a, b}));
}

TEST(EventCodecTest, TimestampsAreStoredInUnitsRoundedDown) {
  ChunkEncoder enc(100);
  Event e = testing::MakeCall(CallId::kFlush, 1, 2, {0, 0});
  std::vector<int64_t> ts = {0, 99, 100, 250, -1, -100, -101};
  for (int64_t t : ts) {
    e.timestamp_ns = t;
    enc.AppendCall(e);
    e.seq += 2;
    e.end += 2;
  }
  std::vector<Event> out = DecodeAll(enc.payload(), 100);
  ASSERT_EQ(out.size(), ts.size());
  std::vector<int64_t> want = {0, 0, 100, 200, -100, -100, -200};
  for (size_t i = 0; i < ts.size(); ++i) EXPECT_EQ(out[i].timestamp_ns, want[i]) << ts[i];
}

TEST(EventCodecTest, ResetRestartsTheDeltaState) {
  Event e = testing::MakeCall(CallId::kFlush, 1000, 1001, {1, 0});
  e.tid = 5;
  e.timestamp_ns = 77;
  ChunkEncoder enc(1);
  enc.AppendCall(e);
  const std::string first(enc.payload());
  enc.Reset();
  enc.AppendCall(e);
  EXPECT_EQ(enc.payload(), first);
  EXPECT_EQ(DecodeAll(enc.payload(), 1), std::vector<Event>{e});
}

TEST(EventCodecTest, UnknownFieldsAndPacketKindsAreSkipped) {
  proto::ChunkBody body;
  proto::CallEvent* c = body.add_packet()->mutable_call();
  c->set_call(static_cast<uint32_t>(CallId::kFlush));
  c->add_args(1);
  c->add_args(0);
  c->GetReflection()->MutableUnknownFields(c)->AddVarint(20, 12345);  // a future field
  body.add_packet()
      ->GetReflection()
      ->MutableUnknownFields(body.mutable_packet(1))
      ->AddLengthDelimited(9, "a future packet kind");
  std::string bytes = body.SerializeAsString();
  ChunkDecoder dec;
  dec.Reset(bytes, 1, IdentityCallMap());
  Event e;
  DecodedPacket p;
  ASSERT_TRUE(dec.Next(&e, &p).ok());
  ASSERT_EQ(p.kind, PacketKind::kCall);
  EXPECT_EQ(e.call, CallId::kFlush);
  EXPECT_EQ(e.seq, 1u);
  ASSERT_TRUE(dec.Next(&e, &p).ok());
  EXPECT_EQ(p.kind, PacketKind::kUnknown);
  ASSERT_TRUE(dec.Next(&e, &p).ok());
  EXPECT_EQ(p.kind, PacketKind::kEnd);
  EXPECT_EQ(dec.packets(), 2u);
  EXPECT_EQ(dec.events(), 1u);
}

TEST(EventCodecTest, UnpackedArgsAreAccepted) {
  // 0a 08 0a 06 | 08 0d (call Flush=13?) 38 01 38 00 -- built with the real call id.
  std::string body;
  body += '\x08';
  body += static_cast<char>(CallId::kFlush);
  body += std::string("\x38\x01\x38\x00", 4);
  std::string bytes = "\x0a" + std::string(1, static_cast<char>(body.size() + 2)) + "\x0a" +
                      std::string(1, static_cast<char>(body.size())) + body;
  std::vector<Event> out = DecodeAll(bytes, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].args, (absl::InlinedVector<uint64_t, 8>{1, 0}));
}

TEST(EventCodecTest, TruncatedPacketIsDataLossWithPayloadOffset) {
  ChunkEncoder enc(1);
  Event e = testing::MakeCall(CallId::kFlush, 1, 2, {1, 0});
  enc.AppendCall(e);
  const size_t first = enc.size();
  enc.AppendCall(e);
  std::string bytes(enc.payload().substr(0, enc.size() - 1));
  ChunkDecoder dec;
  dec.Reset(bytes, 1, IdentityCallMap());
  Event out;
  DecodedPacket p;
  ASSERT_TRUE(dec.Next(&out, &p).ok());
  absl::Status st = dec.Next(&out, &p);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(st.message().find(absl::StrFormat("payload offset %d", first)), absl::string_view::npos)
      << st;
}

TEST(EventCodecTest, OverlongVarintIsDataLoss) {
  std::string bytes = "\x0a\x0d\x0a\x0b\x08" + std::string(10, '\xff');
  ChunkDecoder dec;
  dec.Reset(bytes, 1, IdentityCallMap());
  Event e;
  DecodedPacket p;
  EXPECT_EQ(dec.Next(&e, &p).code(), absl::StatusCode::kDataLoss);
}

TEST(EventCodecTest, PacketWithTwoKindsIsDataLoss) {
  proto::HandleDef h;
  h.set_id(1);
  h.set_token("0x1");
  std::string def = h.SerializeAsString();
  std::string packet = "\x0a" + std::string(1, '\x02') + std::string("\x08\x01", 2) + "\x12" +
                       std::string(1, static_cast<char>(def.size())) + def;
  std::string bytes = "\x0a" + std::string(1, static_cast<char>(packet.size())) + packet;
  ChunkDecoder dec;
  dec.Reset(bytes, 1, IdentityCallMap());
  Event e;
  DecodedPacket p;
  absl::Status st = dec.Next(&e, &p);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(st.message().find("more than one kind"), absl::string_view::npos);
}

TEST(EventCodecTest, UnmappedCallKeepsRawArgs) {
  ChunkEncoder enc(1);
  Event e =
      testing::MakeCall(CallId::kDrawIndexed, 1, 2, {0, 0, 0, static_cast<uint64_t>(int64_t{-1})});
  enc.AppendCall(e);
  std::vector<CallId> none(kCallIdCount, CallId::kInvalid);
  ChunkDecoder dec;
  dec.Reset(enc.payload(), 1, none);
  Event out;
  DecodedPacket p;
  ASSERT_TRUE(dec.Next(&out, &p).ok());
  EXPECT_EQ(out.call, CallId::kInvalid);
  EXPECT_EQ(p.file_call, static_cast<uint32_t>(CallId::kDrawIndexed));
  EXPECT_EQ(out.args[3], 1u);  // still zigzag: no catalog to say it is signed
}

TEST(EventCodecTest, ArrayElementsFollowTheCatalogLayout) {
  const CallInfo* ci = FindCall("CheckDeferredContextHandleSizes");
  ASSERT_NE(ci, nullptr);
  const CallLayout& l = LayoutOf(IdOf(*ci));
  ASSERT_EQ(l.arrays.size(), 1u);
  std::vector<uint64_t> args = {1, 2, 2, 3, 11, 64, 12, 32, 99};
  std::vector<FieldKind> kinds;
  VisitArgKinds(l, absl::MakeConstSpan(args), [&](size_t, FieldKind k) { kinds.push_back(k); });
  ASSERT_EQ(kinds.size(), args.size());
  EXPECT_EQ(kinds[4], FieldKind::kEnum);  // element 0 HandleType
  EXPECT_EQ(kinds[6], FieldKind::kEnum);  // element 1 HandleType
  EXPECT_EQ(kinds[8], FieldKind::kU64);   // past the layout
}

TEST(EventCodecTest, HostileArrayCountDoesNotLoop) {
  const CallInfo* ci = FindCall("CheckDeferredContextHandleSizes");
  std::vector<uint64_t> args = {1, 2, 2, ~uint64_t{0}, 5};
  size_t visited = 0;
  VisitArgKinds(LayoutOf(IdOf(*ci)), absl::MakeConstSpan(args),
                [&](size_t, FieldKind) { ++visited; });
  EXPECT_EQ(visited, args.size());
}

TEST(EventCodecTest, BuildCallMapRemapsByName) {
  proto::TraceHeader h;
  h.add_call_names("");
  h.add_call_names("Flush");
  h.add_call_names("NoSuchDdiInThisCatalog");
  h.add_call_names("DrawIndexed");
  std::vector<CallId> map = BuildCallMap(h);
  EXPECT_EQ(map, (std::vector<CallId>{CallId::kInvalid, CallId::kFlush, CallId::kInvalid,
                                      CallId::kDrawIndexed}));
}

}  // namespace
}  // namespace cltrace::format
