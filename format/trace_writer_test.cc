// TraceWriter::AppendBatch and TraceWriter::AppendRun (with and without position runs, format
// version 2): same results as Append event by event, invalid events skipped, errors reported,
// and files that read back exactly.
#include "format/trace_writer.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ddi/catalog.h"
#include "format/chunk.h"
#include "format/internal/interleaved_recording.h"
#include "format/internal/trace_test_util.h"
#include "format/trace_reader.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

using testing::BudgetSink;
using testing::InterleavedOptions;
using testing::InterleavedRecording;
using testing::RandomArgs;
using testing::ReadAllBytes;
using testing::ReadResult;
using testing::TestOptions;
using testing::ThreadRun;
using testing::TornWriteSink;

// Events over every catalog call with ids valid for a writer that interned 3 handles and 2
// strings (TestWriter).
std::vector<Event> RandomEvents(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<Event> out;
  uint64_t seq = 1;
  for (int i = 0; i < n; ++i) {
    Event e = testing::MakeCall(static_cast<CallId>(1 + i % (kCallIdCount - 1)), seq,
                                i % 40 == 39 ? 0 : seq + 1, {});
    seq += 2 + rng() % 3;
    e.tid = 1 + static_cast<uint32_t>(rng() % 2);
    e.timestamp_ns = 100 * i;
    e.parent = i % 5 == 2 ? e.seq - 1 : 0;
    e.annotation = rng() % 3;
    RandomArgs(rng, *GetCall(e.call), 4, 3, &e);
    out.push_back(e);
  }
  return out;
}

// `n` DrawIndexed calls on handle id 1 (enough of them to fill several 512-byte chunks).
std::vector<Event> Draws(uint64_t n) {
  std::vector<Event> events;
  for (uint64_t i = 0; i < n; ++i) {
    Event e;
    e.call = CallId::kDrawIndexed;
    e.seq = 2 * i + 1;
    e.end = e.seq + 1;
    e.args = {1, i * 7919, 0, 0};
    events.push_back(e);
  }
  return events;
}

std::unique_ptr<TraceWriter> TestWriter(std::string* bytes, TraceWriter::Options o) {
  auto w = TraceWriter::Open(std::make_unique<StringSink>(bytes), std::move(o));
  EXPECT_TRUE(w.ok()) << w.status();
  for (uint64_t h : {0x5500, 0x5600, 0x5700}) (*w)->InternHandleValue(h);
  (*w)->InternString("ID3D11DeviceContext::Draw");
  (*w)->InternString("ID3D11DeviceContext::FinishCommandList");
  return *std::move(w);
}

TEST(TraceWriterTest, AppendBatchWritesTheBytesAppendWrites) {
  const std::vector<Event> events = RandomEvents(1, 3000);
  std::string one, batched;
  TraceWriter::Options o = TestOptions();
  o.chunk_bytes = 8192;  // several chunks: sealing inside a batch
  {
    auto w = TestWriter(&one, o);
    for (const Event& e : events) ASSERT_TRUE(w->Append(e).ok());
    ASSERT_TRUE(w->Close().ok());
  }
  {
    auto w = TestWriter(&batched, o);
    for (size_t i = 0; i < events.size(); i += 77) {
      const size_t n = std::min<size_t>(77, events.size() - i);
      ASSERT_TRUE(w->AppendBatch(absl::MakeConstSpan(events.data() + i, n)).ok());
    }
    ASSERT_TRUE(w->Close().ok());
  }
  EXPECT_EQ(one, batched);
}

// The file TestWriter makes of `runs`, each written with one call of `append`.
std::string WriteRuns(
    const TraceWriter::Options& o, const std::vector<ThreadRun>& runs,
    absl::Status (TraceWriter::*append)(absl::Span<const Event>) = &TraceWriter::AppendRun) {
  std::string bytes;
  auto w = TestWriter(&bytes, o);
  for (const ThreadRun& r : runs) EXPECT_TRUE(((*w).*append)(r).ok());
  EXPECT_TRUE(w->Close().ok());
  return bytes;
}

// Writes `events` with one call of `append` (AppendBatch or AppendRun); events[bad] is invalid:
// the call fails with InvalidArgument naming `what`, and the file holds every other event.
void ExpectInvalidEventSkipped(const TraceWriter::Options& o, std::vector<Event> events, size_t bad,
                               const std::string& what,
                               absl::Status (TraceWriter::*append)(absl::Span<const Event>)) {
  std::string bytes;
  auto w = TestWriter(&bytes, o);
  absl::Status st = ((*w).*append)(events);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find(what), absl::string_view::npos) << st;
  ASSERT_TRUE(w->Close().ok());
  events.erase(events.begin() + bad);
  ReadResult r = ReadAllBytes(bytes);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.events, events);
}

TEST(TraceWriterTest, AppendBatchSkipsAnInvalidEventAndWritesTheRest) {
  std::vector<Event> events = RandomEvents(2, 20);
  events[7].call = CallId::kFlush;
  events[7].args = {99, 0};  // handle id 99 was never handed out
  ExpectInvalidEventSkipped(TestOptions(), events, 7, absl::StrCat("seq ", events[7].seq),
                            &TraceWriter::AppendBatch);
}

TEST(TraceWriterTest, AppendBatchAfterCloseIsFailedPrecondition) {
  std::string bytes;
  auto w = TestWriter(&bytes, TestOptions());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ(w->AppendBatch(RandomEvents(3, 2)).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(w->AppendRun(RandomEvents(3, 2)).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(TraceWriterTest, AppendBatchReturnsTheWriteError) {
  TraceWriter::Options o = TestOptions();
  o.chunk_bytes = 512;
  auto w = TraceWriter::Open(std::make_unique<BudgetSink>(2048, /*header_free=*/true), o);
  ASSERT_TRUE(w.ok());
  (*w)->InternHandleValue(0x5500);
  EXPECT_EQ((*w)->AppendBatch(Draws(400)).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ((*w)->Close().code(), absl::StatusCode::kResourceExhausted);
}

// After a failed write the file must end there: a later chunk after the torn one would make
// the file corrupt in mid-file instead of torn at its end, and events_written counts exactly
// the events a reader finds.
TEST(TraceWriterTest, NothingIsWrittenAfterAFailedWrite) {
  std::string bytes;
  TraceWriter::Options o = TestOptions();
  o.chunk_bytes = 512;
  auto w = TraceWriter::Open(TornWriteSink::FailingWrite(&bytes, /*fail_at=*/3), o);
  ASSERT_TRUE(w.ok());
  (*w)->InternHandleValue(0x5500);
  for (const Event& e : Draws(400)) (void)(*w)->Append(e);
  EXPECT_EQ((*w)->Close().code(), absl::StatusCode::kResourceExhausted);
  ReadResult r = ReadAllBytes(bytes);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_GT(r.events.size(), 0u);
  EXPECT_EQ(r.events.size(), (*w)->events_written());
  EXPECT_GE(r.torn_tail, 0) << "the file ends in the torn chunk";
}

// Without Options::position_runs AppendRun is AppendBatch: version 1, the same bytes.
TEST(TraceWriterTest, AppendRunWithoutPositionRunsWritesVersion1) {
  std::vector<ThreadRun> runs = InterleavedRecording(1, InterleavedOptions());
  const std::string a = WriteRuns(TestOptions(), runs, &TraceWriter::AppendRun);
  const std::string b = WriteRuns(TestOptions(), runs, &TraceWriter::AppendBatch);
  EXPECT_EQ(a, b);
  auto header = ParseFileHeader(a);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->header.format_version(), kFormatVersionV1);
}

// The recorder's use: each run is one thread's segment, chunks small enough that runs end up
// on both sides of chunk boundaries. Everything reads back, in file order and sorted, through
// the index and without it.
TEST(TraceWriterTest, PositionRunsRoundTripThroughChunksAndIndex) {
  InterleavedOptions io;
  io.calls_per_thread = 1500;
  io.leave_open = true;
  std::vector<ThreadRun> runs = InterleavedRecording(2, io);
  std::vector<Event> all;
  for (const ThreadRun& r : runs) all.insert(all.end(), r.begin(), r.end());
  TraceWriter::Options o = TestOptions();
  o.position_runs = true;
  o.chunk_bytes = 4096;
  const std::string bytes = WriteRuns(o, runs);
  auto header = ParseFileHeader(bytes);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->header.format_version(), 2u);
  EXPECT_GT(testing::ChunkOffsets(bytes).size(), 10u);
  ReadResult r = ReadAllBytes(bytes);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.events, all);
  auto reader = TraceReader::OpenBytes(bytes);
  ASSERT_TRUE(reader.ok());
  ASSERT_NE((*reader)->index(), nullptr);
  for (size_t i = 0; i < all.size(); i += 97) {
    auto e = (*reader)->FindBySeq(all[i].seq);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(*e, all[i]);
  }
}

// Position runs make a recording of concurrent threads markedly smaller (FORMAT.md §3.7).
TEST(TraceWriterTest, PositionRunsShrinkAnInterleavedRecording) {
  InterleavedOptions io;
  io.calls_per_thread = 4000;
  std::vector<ThreadRun> runs = InterleavedRecording(3, io);
  size_t sizes[2];
  for (bool position_runs : {false, true}) {
    TraceWriter::Options o = TestOptions();
    o.position_runs = position_runs;
    o.zstd_level = 6;
    sizes[position_runs] = WriteRuns(o, runs).size();
  }
  EXPECT_LT(sizes[1] * 10, sizes[0] * 8) << sizes[1] << " vs " << sizes[0];
}

TEST(TraceWriterTest, AppendRunSkipsAnInvalidEventAndWritesTheRest) {
  std::vector<ThreadRun> runs = InterleavedRecording(4, InterleavedOptions());
  ThreadRun run = runs[0];
  run[3].parent = run[3].seq;  // its own parent: not representable
  TraceWriter::Options o = TestOptions();
  o.position_runs = true;
  ExpectInvalidEventSkipped(o, run, 3, "is its own parent", &TraceWriter::AppendRun);
}

// A run larger than the writer's piece size (and than a chunk) is split, still exact.
TEST(TraceWriterTest, HugeRunIsSplitAndReadsBack) {
  InterleavedOptions io;
  io.threads = 2;
  io.calls_per_thread = 6000;
  io.run_events = 100000;  // one run per thread
  std::vector<ThreadRun> runs = InterleavedRecording(5, io);
  ASSERT_GT(runs[0].size(), 4096u);
  TraceWriter::Options o = TestOptions();
  o.position_runs = true;
  o.chunk_bytes = 32 << 10;
  const std::string bytes = WriteRuns(o, runs);
  std::vector<Event> all;
  for (const ThreadRun& r : runs) all.insert(all.end(), r.begin(), r.end());
  ReadResult r = ReadAllBytes(bytes);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.events, all);
  // Chunks overshoot chunk_bytes by at most one piece (a quarter chunk).
  const std::vector<uint64_t> chunks = testing::ChunkOffsets(bytes);
  ASSERT_GT(chunks.size(), 4u);
  for (uint64_t off : chunks) {
    ChunkProbe probe;
    auto info = ParseChunkHeader(absl::string_view(bytes).substr(off), off, &probe);
    ASSERT_TRUE(info.ok());
    if (info->type == ChunkType::kEvents) {
      EXPECT_LE(info->raw_size, o.chunk_bytes * 5 / 4 + 1024);
    }
  }
}

}  // namespace
}  // namespace cltrace::format
