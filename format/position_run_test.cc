// Position runs (format version 2, FORMAT.md §3.7): ChunkEncoder::AppendRun and the
// decoder's reading of PositionRun packets, including every malformed case it rejects.
#include <algorithm>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "format/chunk.h"
#include "format/event_codec.h"
#include "format/internal/interleaved_recording.h"
#include "format/internal/trace_test_util.h"
#include "format/trace.pb.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

using testing::InterleavedOptions;
using testing::InterleavedRecording;
using testing::ThreadRun;

void AppendRunOf(ChunkEncoder& enc, const std::vector<Event>& events) {
  std::vector<ChunkEncoder::RunEvent> run;
  for (const Event& e : events) run.push_back({&e, &LayoutOf(e.call)});
  enc.AppendRun(run);
}

// Decodes every CallEvent; the first error stops it and is returned in *status.
std::vector<Event> DecodeAll(absl::string_view payload, absl::Status* status) {
  ChunkDecoder dec;
  dec.Reset(payload, 1, IdentityCallMap());
  std::vector<Event> out;
  Event e;
  DecodedPacket p;
  while (true) {
    *status = dec.Next(&e, &p);
    if (!status->ok() || p.kind == PacketKind::kEnd) break;
    if (p.kind == PacketKind::kCall) out.push_back(e);
  }
  return out;
}

std::vector<Event> Flatten(const std::vector<ThreadRun>& runs) {
  std::vector<Event> all;
  for (const ThreadRun& r : runs) all.insert(all.end(), r.begin(), r.end());
  return all;
}

size_t Compressed(absl::string_view raw) {
  ChunkCompressor zc(6);
  ChunkInfo info;
  info.type = ChunkType::kEvents;
  std::string out;
  EXPECT_TRUE(zc.BuildChunk(&info, raw, true, &out).ok());
  return out.size();
}

// Counts the PositionRun packets of a payload (through the generated classes).
int RunPackets(absl::string_view payload) {
  proto::ChunkBody body;
  EXPECT_TRUE(body.ParseFromArray(payload.data(), static_cast<int>(payload.size())));
  int runs = 0;
  for (const proto::Packet& p : body.packet()) runs += p.has_run();
  return runs;
}

TEST(PositionRunTest, InterleavedThreadsRoundTrip) {
  for (uint64_t seed : {1, 2, 3}) {
    std::vector<ThreadRun> runs = InterleavedRecording(seed, InterleavedOptions());
    ChunkEncoder enc(1);
    for (const ThreadRun& r : runs) AppendRunOf(enc, r);
    EXPECT_GT(RunPackets(enc.payload()), 0);
    absl::Status st;
    EXPECT_EQ(DecodeAll(enc.payload(), &st), Flatten(runs)) << seed;
    EXPECT_TRUE(st.ok()) << st;
  }
}

TEST(PositionRunTest, CallsLeftOpenRoundTrip) {
  InterleavedOptions o;
  o.leave_open = true;
  o.calls_per_thread = 40;
  std::vector<ThreadRun> runs = InterleavedRecording(7, o);
  ChunkEncoder enc(1);
  for (const ThreadRun& r : runs) AppendRunOf(enc, r);
  absl::Status st;
  std::vector<Event> decoded = DecodeAll(enc.payload(), &st);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(decoded, Flatten(runs));
  EXPECT_GT(
      std::count_if(decoded.begin(), decoded.end(), [](const Event& e) { return e.end == 0; }), 0);
}

// Runs and plain events mix in one chunk: the delta state after a run continues from its last
// event's global position.
TEST(PositionRunTest, PlainEventsAfterARunContinueFromItsLastPosition) {
  std::vector<ThreadRun> runs = InterleavedRecording(4, InterleavedOptions());
  ChunkEncoder enc(1);
  AppendRunOf(enc, runs[0]);
  std::vector<Event> expected = runs[0];
  for (const Event& e : runs[1]) {
    enc.AppendCall(e);
    expected.push_back(e);
  }
  AppendRunOf(enc, runs[2]);
  expected.insert(expected.end(), runs[2].begin(), runs[2].end());
  absl::Status st;
  EXPECT_EQ(DecodeAll(enc.payload(), &st), expected);
  EXPECT_TRUE(st.ok()) << st;
}

// What the runs are for: the interleaving of other threads' positions no longer makes every
// event's deltas irregular, so the chunk compresses much better.
TEST(PositionRunTest, InterleavedRunsCompressSmallerThanPlainDeltas) {
  InterleavedOptions o;
  o.calls_per_thread = 3000;
  std::vector<ThreadRun> runs = InterleavedRecording(5, o);
  ChunkEncoder with_runs(1), plain(1);
  for (const ThreadRun& r : runs) {
    AppendRunOf(with_runs, r);
    for (const Event& e : r) plain.AppendCall(e);
  }
  const size_t a = Compressed(with_runs.payload()), b = Compressed(plain.payload());
  EXPECT_LT(a * 10, b * 8) << "runs " << a << " bytes, plain " << b << " bytes";
}

// One thread's leaf calls back to back: positions are contiguous, the list would say nothing.
TEST(PositionRunTest, ContiguousPositionsAreWrittenAsPlainEvents) {
  std::vector<Event> events;
  for (uint64_t i = 0; i < 50; ++i) {
    Event e = testing::MakeCall(CallId::kFlush, 2 * i + 1, 2 * i + 2, {1, 0});
    e.tid = 9;
    events.push_back(e);
  }
  ChunkEncoder with_runs(1), plain(1);
  AppendRunOf(with_runs, events);
  for (const Event& e : events) plain.AppendCall(e);
  EXPECT_EQ(with_runs.payload(), plain.payload());
}

// A few irregular positions among many: plain deltas stay cheaper, no list is written.
TEST(PositionRunTest, RarelyInterleavedRunIsWrittenAsPlainEvents) {
  std::vector<Event> events;
  uint64_t pos = 1;
  for (uint64_t i = 0; i < 64; ++i) {
    Event e = testing::MakeCall(CallId::kFlush, pos, pos + 1, {});
    pos += i == 30 ? 5 : 2;  // one gap of 3 other positions
    e.tid = 9;
    e.args = {1, 0};
    events.push_back(e);
  }
  ChunkEncoder enc(1);
  AppendRunOf(enc, events);
  EXPECT_EQ(RunPackets(enc.payload()), 0);
  absl::Status st;
  EXPECT_EQ(DecodeAll(enc.payload(), &st), events);
}

// A callback whose DDI call entered before the run: its parent is no position of the run.
TEST(PositionRunTest, ParentOutsideTheRunIsCodedAbsolutely) {
  std::vector<Event> events;
  for (uint64_t i = 0; i < 16; ++i) {
    Event e;
    e.call = CallId::kStateOmRenderTargetsCb;
    e.seq = 1000 + 3 * i;  // another thread takes every third position
    e.end = e.seq + 1;
    e.parent = 7;
    e.tid = 9;
    e.args = {1};
    events.push_back(e);
  }
  ChunkEncoder enc(1);
  AppendRunOf(enc, events);
  proto::ChunkBody body;
  ASSERT_TRUE(body.ParseFromArray(enc.payload().data(), static_cast<int>(enc.payload().size())));
  ASSERT_TRUE(body.packet(0).has_run());
  EXPECT_EQ(body.packet(1).call().outer_dparent(), 1000u - 7u);
  EXPECT_EQ(body.packet(1).call().dparent(), 0u);
  absl::Status st;
  EXPECT_EQ(DecodeAll(enc.payload(), &st), events);
  EXPECT_TRUE(st.ok()) << st;
}

// The bytes are still ChunkBody in protobuf's wire format, fields in number order: the
// generated classes parse them (the run lists the events' positions) and write them back
// byte for byte.
TEST(PositionRunTest, GeneratedProtobufClassesParseTheSameBytes) {
  std::vector<ThreadRun> runs = InterleavedRecording(6, InterleavedOptions());
  ChunkEncoder enc(1);
  AppendRunOf(enc, runs[0]);
  proto::ChunkBody body;
  ASSERT_TRUE(body.ParseFromArray(enc.payload().data(), static_cast<int>(enc.payload().size())));
  ASSERT_TRUE(body.packet(0).has_run());
  const proto::PositionRun& run = body.packet(0).run();
  EXPECT_EQ(run.events(), runs[0].size());
  std::vector<uint64_t> positions = {run.first()};
  for (uint64_t g : run.gaps()) positions.push_back(positions.back() + 1 + g);
  std::vector<uint64_t> expected;
  for (const Event& e : runs[0]) {
    expected.push_back(e.seq);
    if (e.end != 0) expected.push_back(e.end);
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(positions, expected);
  EXPECT_EQ(body.SerializeAsString(), enc.payload());
}

// ---- Malformed runs: DataLoss naming what is wrong ----

std::string Bytes(const proto::ChunkBody& body) { return body.SerializeAsString(); }

proto::CallEvent* AddFlush(proto::ChunkBody* body) {
  proto::CallEvent* c = body->add_packet()->mutable_call();
  c->set_call(static_cast<uint32_t>(CallId::kFlush));
  c->add_args(1);
  c->add_args(0);
  return c;
}

proto::PositionRun* AddRun(proto::ChunkBody* body, uint64_t first, std::vector<uint64_t> gaps,
                           uint32_t events) {
  proto::PositionRun* r = body->add_packet()->mutable_run();
  r->set_first(first);
  for (uint64_t g : gaps) r->add_gaps(g);
  r->set_events(events);
  return r;
}

void ExpectDataLoss(const proto::ChunkBody& body, absl::string_view what) {
  absl::Status st;
  DecodeAll(Bytes(body), &st);
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << st;
  EXPECT_NE(st.message().find(what), absl::string_view::npos) << st;
}

TEST(PositionRunTest, ValidHandWrittenRunDecodes) {
  proto::ChunkBody body;
  AddRun(&body, 10, {0, 5, 0}, 2);  // positions 10 11 17 18
  AddFlush(&body);                  // seq index 1, end index 2: 10, 11
  AddFlush(&body)->set_dseq(0);     // 17, 18
  absl::Status st;
  std::vector<Event> out = DecodeAll(Bytes(body), &st);
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].seq, 10u);
  EXPECT_EQ(out[0].end, 11u);
  EXPECT_EQ(out[1].seq, 17u);
  EXPECT_EQ(out[1].end, 18u);
}

// A hand-written chunk body the decoder must reject as DataLoss, and what its message names.
struct HostileBody {
  const char* name;
  void (*build)(proto::ChunkBody* body);
  const char* what;
};

// Names the case in test listings (instead of the struct's bytes).
void PrintTo(const HostileBody& body, std::ostream* os) { *os << body.name; }

const HostileBody kHostileBodies[] = {
    {"RunOfZeroEvents", [](proto::ChunkBody* b) { AddRun(b, 10, {0}, 0); },
     "PositionRun (2 positions for 0 events)"},
    {"MorePositionsThanTwicePerEvent",
     [](proto::ChunkBody* b) {
       AddRun(b, 10, {0, 0, 0}, 1);
       AddFlush(b);
     },
     "PositionRun (4 positions for 1 events)"},
    {"PositionsPastTwoToThe64",
     [](proto::ChunkBody* b) {
       AddRun(b, ~uint64_t{0} - 3, {2, 5}, 2);
     },
     "past 2^64"},
    {"EntryIndexOutsideTheRun",
     [](proto::ChunkBody* b) {
       AddRun(b, 10, {0}, 1);
       AddFlush(b)->set_dseq(4);  // entry index 5 of 2
     },
     "CallEvent.dseq (outside its position run)"},
    {"ExitIndexOutsideTheRun",
     [](proto::ChunkBody* b) {
       AddRun(b, 10, {0}, 1);
       AddFlush(b)->set_dend(1);  // end index 3 of 2
     },
     "CallEvent.dend (outside its position run)"},
    {"ParentIndexOutsideTheRun",
     [](proto::ChunkBody* b) {
       AddRun(b, 10, {0}, 1);
       AddFlush(b)->set_dparent(1);  // index 0
     },
     "CallEvent.dparent (outside its position run)"},
    {"BothParentCodings",
     [](proto::ChunkBody* b) {
       AddRun(b, 10, {0, 0, 0}, 2);
       AddFlush(b);
       proto::CallEvent* c = AddFlush(b);
       c->set_dparent(2);
       c->set_outer_dparent(5);
     },
     "both dparent and outer_dparent"},
    {"OuterParentOutsideARun", [](proto::ChunkBody* b) { AddFlush(b)->set_outer_dparent(3); },
     "CallEvent.outer_dparent (outside a position run)"},
    {"RunBeforeThePreviousRunEnded",
     [](proto::ChunkBody* b) {
       AddRun(b, 10, {0, 0, 0}, 2);
       AddFlush(b);
       AddRun(b, 30, {0}, 1);
     },
     "PositionRun (the previous run lacks 1 events)"},
    {"ChunkEndingInsideARun",
     [](proto::ChunkBody* b) {
       AddRun(b, 10, {0, 0, 0}, 2);
       AddFlush(b);
     },
     "its last position run lacks 1 events"},
};

class PositionRunDataLossTest : public ::testing::TestWithParam<HostileBody> {};

TEST_P(PositionRunDataLossTest, IsDataLoss) {
  proto::ChunkBody body;
  GetParam().build(&body);
  ExpectDataLoss(body, GetParam().what);
}

INSTANTIATE_TEST_SUITE_P(PositionRunTest, PositionRunDataLossTest,
                         ::testing::ValuesIn(kHostileBodies),
                         [](const ::testing::TestParamInfo<HostileBody>& info) {
                           return std::string(info.param.name);
                         });

// Reset starts a chunk: a run left unfinished by a previous (corrupt) payload is forgotten.
TEST(PositionRunTest, ResetForgetsAnUnfinishedRun) {
  proto::ChunkBody broken;
  AddRun(&broken, 10, {0, 0, 0}, 2);
  AddFlush(&broken);
  const std::string a = Bytes(broken);
  proto::ChunkBody plain;
  AddFlush(&plain);
  const std::string b = Bytes(plain);
  ChunkDecoder dec;
  Event e;
  DecodedPacket p;
  dec.Reset(a, 1, IdentityCallMap());
  ASSERT_TRUE(dec.Next(&e, &p).ok());
  dec.Reset(b, 1, IdentityCallMap());
  ASSERT_TRUE(dec.Next(&e, &p).ok());
  EXPECT_EQ(p.kind, PacketKind::kCall);
  EXPECT_EQ(e.seq, 1u);
  ASSERT_TRUE(dec.Next(&e, &p).ok());
  EXPECT_EQ(p.kind, PacketKind::kEnd);
}

}  // namespace
}  // namespace cltrace::format
