// End-to-end tests of TraceWriter + TraceReader: round trips, threads, index, write errors,
// and the worked example of FORMAT.md §6.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "ddi/catalog.h"
#include "format/chunk.h"
#include "format/internal/trace_test_util.h"
#include "format/load_trace.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

using testing::BudgetSink;
using testing::ChunkOffsets;
using testing::RandomArgs;
using testing::ReadAllBytes;
using testing::TestOptions;

// Writes `n` random events over every catalog call (interning handles and annotations
// through the writer) and returns them.
std::vector<Event> WriteRandom(TraceWriter& w, uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> handles = {0};
  for (int i = 0; i < 40; ++i) handles.push_back(w.InternHandleValue(0x10000 + 0x40 * i));
  std::vector<uint64_t> strings = {0, w.InternString("ID3D11Device::CreateDeferredContext"),
                                   w.InternString("ID3D11DeviceContext::FinishCommandList")};
  std::vector<Event> out;
  uint64_t seq = 1;
  for (int i = 0; i < n; ++i) {
    Event e = testing::MakeCall(static_cast<CallId>(1 + i % (kCallIdCount - 1)), seq,
                                i % 50 == 49 ? 0 : seq + 1, {});
    seq += 2;
    e.tid = 1 + static_cast<uint32_t>(rng() % 2);
    e.timestamp_ns = 100 * i + static_cast<int64_t>(rng() % 50);
    e.parent = i % 7 == 3 ? e.seq - 1 : 0;
    e.ret = i % 11 == 0 ? static_cast<int32_t>(0x887a0005) : 0;
    e.annotation = strings[rng() % strings.size()];
    RandomArgs(rng, *GetCall(e.call), handles.size(), strings.size(), &e);
    EXPECT_TRUE(w.Append(e).ok());
    out.push_back(e);
  }
  return out;
}

std::string WriteToString(TraceWriter::Options options, uint64_t seed, int n,
                          std::vector<Event>* events) {
  std::string bytes;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&bytes), std::move(options));
  EXPECT_TRUE(w.ok()) << w.status();
  *events = WriteRandom(**w, seed, n);
  EXPECT_TRUE((*w)->Close().ok());
  return bytes;
}

TEST(TraceIoTest, RoundTripRandomEventsOverAllCalls) {
  TraceWriter::Options o = TestOptions();
  o.chunk_bytes = 4096;  // many chunks
  std::vector<Event> events;
  std::string bytes = WriteToString(o, 1, 3000, &events);
  testing::ReadResult r = ReadAllBytes(bytes);
  ASSERT_TRUE(r.open_status.ok()) << r.open_status;
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.torn_tail, -1);
  EXPECT_EQ(r.events, events);
  EXPECT_GT(r.stats.chunks, 10u);
  EXPECT_EQ(r.stats.events, events.size());
  EXPECT_TRUE(r.stats.has_index);
  EXPECT_EQ(r.handles.Token(1), "0x10000");
  EXPECT_EQ(r.strings.Token(2), "ID3D11DeviceContext::FinishCommandList");
}

TEST(TraceIoTest, RoundTripThroughBackgroundThreadAndFile) {
  const std::string path = ::testing::TempDir() + "/roundtrip.cltrace";
  TraceWriter::Options o = TestOptions();
  o.background = true;
  o.chunk_bytes = 2048;
  std::vector<Event> events;
  {
    auto w = TraceWriter::Open(path, o);
    ASSERT_TRUE(w.ok()) << w.status();
    events = WriteRandom(**w, 2, 2000);
    ASSERT_TRUE((*w)->Close().ok());
    EXPECT_EQ((*w)->events_written(), events.size());
  }
  auto loaded = ReadAllSorted(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->events, events);  // already in seq order
  EXPECT_EQ(loaded->header.writer().name(), "cltrace-test");
  EXPECT_EQ(loaded->header.start_unix_ns(), 1700000000000000000);
  EXPECT_EQ(loaded->header.call_names(static_cast<int>(CallId::kDrawIndexed)), "DrawIndexed");
  std::remove(path.c_str());
}

// Recordings made before output pointers had their presence captured at exit hold
// DXGKARG_CREATEDEVICE.pInfo = 0 beside the outputs read through it: readers see the
// pointer as present (FORMAT.md §9.1), so a replay compares it with what the KMD returned.
TEST(TraceIoTest, OutputPointerRecordedNullWithOutputsReadsAsPresent) {
  const testing::CreateDeviceInfoFields create_device = testing::FindCreateDeviceInfo();
  ASSERT_GE(create_device.present, 0);
  ASSERT_GE(create_device.size, 0);
  const int present = create_device.present, size = create_device.size;
  std::string bytes;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&bytes), TestOptions());
  ASSERT_TRUE(w.ok()) << w.status();
  Event e = create_device.BlankEvent();
  e.tid = 1;
  e.args[0] = (*w)->InternHandleToken("0x40");
  e.args[1] = 1;
  Event untouched = e;  // no outputs: stays NULL
  untouched.seq = 3;
  untouched.end = 4;
  e.args[size] = 16384;
  ASSERT_TRUE((*w)->Append(e).ok());
  ASSERT_TRUE((*w)->Append(untouched).ok());
  ASSERT_TRUE((*w)->Close().ok());
  testing::ReadResult r = ReadAllBytes(bytes);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].args[present], 1u);
  EXPECT_EQ(r.events[0].args[size], 16384u);
  EXPECT_EQ(r.events[1].args[present], 0u);
}

TEST(TraceIoTest, UncompressedChunksRoundTrip) {
  TraceWriter::Options o = TestOptions();
  o.compress = false;
  o.chunk_bytes = 3000;
  std::vector<Event> events;
  std::string bytes = WriteToString(o, 3, 500, &events);
  testing::ReadResult r = ReadAllBytes(bytes);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.events, events);
}

TEST(TraceIoTest, HeaderOnlyTraceHasNoEvents) {
  std::string bytes;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&bytes), TestOptions());
  ASSERT_TRUE(w.ok());
  // Before Close: the header alone is on the sink and is a valid, empty trace.
  testing::ReadResult r = ReadAllBytes(bytes);
  ASSERT_TRUE(r.open_status.ok()) << r.open_status;
  EXPECT_TRUE(r.status.ok());
  EXPECT_TRUE(r.events.empty());
  EXPECT_EQ(r.torn_tail, -1);
  EXPECT_FALSE(r.stats.has_index);
  ASSERT_TRUE((*w)->Close().ok());
  r = ReadAllBytes(bytes);  // header + index of nothing + footer
  EXPECT_TRUE(r.status.ok());
  EXPECT_TRUE(r.events.empty());
  EXPECT_TRUE(r.stats.has_index);
}

TEST(TraceIoTest, MultiThreadedAppendKeepsEveryEventExactlyOnce) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 5000;
  for (bool background : {false, true}) {
    TraceWriter::Options o = TestOptions();
    o.background = background;
    o.chunk_bytes = 8192;
    o.max_queued_bytes = 16384;  // small: appenders block on the worker
    std::string bytes;
    auto w = TraceWriter::Open(std::make_unique<StringSink>(&bytes), o);
    ASSERT_TRUE(w.ok());
    std::atomic<uint64_t> next_seq{1};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          Event e;
          e.call = CallId::kDrawIndexed;
          e.seq = next_seq.fetch_add(2);
          e.end = e.seq + 1;
          e.tid = 1000 + t;
          e.timestamp_ns = static_cast<int64_t>(e.seq) * 10;
          // Each thread interns its own device handle; all share one.
          e.args = {(*w)->InternHandleValue(0xd000 + 0x10 * (i % 3 == 0 ? 0 : t + 1)),
                    static_cast<uint64_t>(i), static_cast<uint64_t>(t), 0};
          ASSERT_TRUE((*w)->Append(e).ok());
          if (i % 1000 == 999 && t == 0) {
            ASSERT_TRUE((*w)->Flush().ok());
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    ASSERT_TRUE((*w)->Close().ok());
    auto r = ReadAllBytes(bytes);
    ASSERT_TRUE(r.status.ok()) << r.status;
    ASSERT_EQ(r.events.size(), size_t{kThreads * kPerThread});
    std::set<uint64_t> seqs;
    std::map<uint32_t, int> per_thread_next;
    for (const Event& e : r.events) {
      EXPECT_TRUE(seqs.insert(e.seq).second) << "duplicate seq " << e.seq;
      // Events of one thread are in its Append order.
      EXPECT_EQ(static_cast<int>(e.args[1]), per_thread_next[e.tid]++) << e.tid;
      EXPECT_EQ(
          r.handles.Token(e.args[0]),
          absl::StrFormat("0x%x", e.args[1] % 3 == 0 ? 0xd000 : 0xd000 + 0x10 * (e.tid - 999)));
    }
    EXPECT_EQ(*seqs.begin(), 1u);
    EXPECT_EQ(*seqs.rbegin(), uint64_t{2 * kThreads * kPerThread - 1});
  }
}

TEST(TraceIoTest, IndexPresentOrAbsentGivesTheSameFindBySeqAnswers) {
  TraceWriter::Options o = TestOptions();
  o.chunk_bytes = 2000;
  std::vector<Event> events;
  std::string with_index = WriteToString(o, 4, 1500, &events);
  o.write_index = false;
  std::vector<Event> again;
  std::string without_index = WriteToString(o, 4, 1500, &again);
  ASSERT_EQ(events, again);
  auto a = TraceReader::OpenBytes(with_index);
  auto b = TraceReader::OpenBytes(without_index);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_NE((*a)->index(), nullptr);
  EXPECT_EQ((*b)->index(), nullptr);
  EXPECT_EQ((*a)->index()->total_events(), events.size());
  EXPECT_EQ((*a)->index()->call_counts(static_cast<int>(CallId::kDrawIndexed)),
            static_cast<uint64_t>(std::count_if(events.begin(), events.end(), [](const Event& e) {
              return e.call == CallId::kDrawIndexed;
            })));
  for (uint64_t seq = 0; seq <= 3005; seq += 1) {
    auto x = (*a)->FindBySeq(seq);
    auto y = (*b)->FindBySeq(seq);
    ASSERT_EQ(x.status().code(), y.status().code()) << seq;
    if (x.ok()) {
      EXPECT_EQ(*x, *y);
      EXPECT_EQ(*x, events[(seq - 1) / 2]);
    } else {
      EXPECT_EQ(x.status().code(), absl::StatusCode::kNotFound) << seq;
    }
  }
}

TEST(TraceIoTest, FindBySeqDoesNotDisturbIteration) {
  TraceWriter::Options o = TestOptions();
  o.chunk_bytes = 1000;
  std::vector<Event> events;
  std::string bytes = WriteToString(o, 5, 300, &events);
  auto r = TraceReader::OpenBytes(bytes);
  ASSERT_TRUE(r.ok());
  Event e;
  for (size_t i = 0; i < events.size(); ++i) {
    ASSERT_TRUE((*r)->Next(&e));
    EXPECT_EQ(e, events[i]);
    auto f = (*r)->FindBySeq(events[events.size() - 1 - i].seq);
    ASSERT_TRUE(f.ok());
  }
  EXPECT_FALSE((*r)->Next(&e));
  EXPECT_TRUE((*r)->status().ok());
}

TEST(TraceIoTest, ReadAllSortedOrdersBySeq) {
  const std::string path = ::testing::TempDir() + "/sorted.cltrace";
  auto w = TraceWriter::Open(path, TestOptions());
  ASSERT_TRUE(w.ok());
  uint64_t dev = (*w)->InternHandleValue(0x5500);
  // A callback (seq 2..3) is appended before the DDI call that made it (seq 1..4).
  Event cb =
      testing::MakeCall(FindCall("Flush") ? CallId::kFlush : CallId::kInvalid, 2, 3, {dev, 0});
  cb.parent = 1;
  Event outer = cb;
  outer.seq = 1;
  outer.end = 4;
  outer.parent = 0;
  ASSERT_TRUE((*w)->Append(cb).ok());
  ASSERT_TRUE((*w)->Append(outer).ok());
  ASSERT_TRUE((*w)->Close().ok());
  auto loaded = ReadAllSorted(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->events.size(), 2u);
  EXPECT_EQ(loaded->events[0], outer);
  EXPECT_EQ(loaded->events[1], cb);
  std::remove(path.c_str());
}

TEST(TraceIoTest, HeaderWriteErrorFailsOpen) {
  auto w = TraceWriter::Open(std::make_unique<BudgetSink>(10), TestOptions());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(TraceIoTest, ChunkWriteErrorIsReturnedByAppendAndClose) {
  for (bool background : {false, true}) {
    TraceWriter::Options o = TestOptions();
    o.background = background;
    o.chunk_bytes = 512;
    auto w = TraceWriter::Open(std::make_unique<BudgetSink>(4096, /*header_free=*/true), o);
    ASSERT_TRUE(w.ok());
    const uint64_t header = (*w)->bytes_written();  // only the file header so far
    uint64_t dev = (*w)->InternHandleValue(0x5500);
    absl::Status first_error;
    for (int i = 0; i < 2000; ++i) {
      Event e;
      e.call = CallId::kDrawIndexed;
      e.seq = 2 * i + 1;
      e.end = e.seq + 1;
      e.args = {dev, static_cast<uint64_t>(i) * 7919, 0, 0};
      absl::Status st = (*w)->Append(e);  // keeps accepting events (the recorder goes on)
      if (!st.ok() && first_error.ok()) first_error = st;
    }
    EXPECT_EQ(first_error.code(), absl::StatusCode::kResourceExhausted) << background;
    EXPECT_EQ((*w)->Flush().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ((*w)->Close().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_LE((*w)->bytes_written(), header + 4096u);
    EXPECT_LT((*w)->events_written(), 2000u);
  }
}

TEST(TraceIoTest, AppendAfterCloseIsFailedPrecondition) {
  std::string bytes;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&bytes), TestOptions());
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Close().ok());
  Event e;
  e.call = CallId::kFlush;
  e.args = {0, 0};
  EXPECT_EQ((*w)->Append(e).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(TraceIoTest, AppendRejectsUninternedHandle) {
  std::string bytes;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&bytes), TestOptions());
  ASSERT_TRUE(w.ok());
  Event e = testing::MakeCall(CallId::kDrawIndexed, 1, 2, {7, 1, 2, 3});
  absl::Status st = (*w)->Append(e);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("hDevice"), absl::string_view::npos) << st;
}

TEST(TraceIoTest, AppendRejectsInvalidCallAndSelfParent) {
  std::string bytes;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&bytes), TestOptions());
  ASSERT_TRUE(w.ok());
  Event e;
  e.seq = 5;
  EXPECT_EQ((*w)->Append(e).code(), absl::StatusCode::kInvalidArgument);
  e.call = CallId::kFlush;
  e.args = {0, 0};
  e.parent = 5;
  EXPECT_EQ((*w)->Append(e).code(), absl::StatusCode::kInvalidArgument);
}

TEST(TraceIoTest, ZeroTimestampUnitIsInvalidArgument) {
  TraceWriter::Options o = TestOptions();
  o.timestamp_unit_ns = 0;
  std::string bytes;
  EXPECT_EQ(TraceWriter::Open(std::make_unique<StringSink>(&bytes), o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TraceIoTest, OpenMissingFileIsNotFound) {
  EXPECT_EQ(TraceReader::Open("/nonexistent/dir/x.cltrace").status().code(),
            absl::StatusCode::kNotFound);
}

// ---- FORMAT.md §6 worked example ----

std::string HexDump(absl::string_view bytes, uint64_t base) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 16) {
    out += absl::StrFormat("%08x ", base + i);
    for (size_t j = i; j < i + 16 && j < bytes.size(); ++j) {
      out += absl::StrFormat(" %02x", static_cast<uint8_t>(bytes[j]));
    }
    out += "\n";
  }
  return out;
}

std::string WorkedExample() {
  TraceWriter::Options o = TestOptions();
  o.compress = false;  // so the payload can be read in the example
  o.timestamp_unit_ns = 100;
  o.writer.set_name("example");
  o.writer.set_version("1");
  o.process.set_pid(4242);
  std::string bytes;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&bytes), o);
  EXPECT_TRUE(w.ok());
  uint64_t dev = (*w)->InternHandleValue(0x5500);
  Event e = testing::MakeCall(CallId::kDrawIndexed, 1, 2,
                              {dev, 36, 0, static_cast<uint64_t>(int64_t{-4})});
  e.tid = 7;
  e.timestamp_ns = 1000;
  EXPECT_TRUE((*w)->Append(e).ok());
  e.seq = 3;
  e.end = 4;
  e.timestamp_ns = 1200;
  e.args = {dev, 36, 36, 0};
  EXPECT_TRUE((*w)->Append(e).ok());
  Event f = testing::MakeCall(CallId::kFlush, 5, 6, {dev});
  f.tid = 7;
  f.timestamp_ns = 1500;
  EXPECT_TRUE((*w)->Append(f).ok());
  EXPECT_TRUE((*w)->Close().ok());
  return bytes;
}

// The event chunk of the worked example, as printed in FORMAT.md §6. If the catalog's call
// ids change, regenerate: CLTRACE_PRINT_EXAMPLE=1 build-*/bin/format_test
// --gtest_filter=*WorkedExample* and paste the dump into FORMAT.md and here.
constexpr char kExampleChunkHex[] =
    "434c434b010030003700000037000000010000000000000005000000000000000400000003000000"
    "55021e85743a94a30a0c120a080112063078353530300a0e0a0c080c200728143a04012400070a0c"
    "0a0a080c28043a04012424000a090a07083628063a0101";

TEST(TraceIoTest, WorkedExampleMatchesFormatMd) {
  std::string bytes = WorkedExample();
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  ASSERT_EQ(chunks.size(), 2u);  // the event chunk and the index chunk
  absl::string_view chunk = absl::string_view(bytes).substr(chunks[0], chunks[1] - chunks[0]);
  if (std::getenv("CLTRACE_PRINT_EXAMPLE") != nullptr) {
    std::printf("file header (%d bytes):\n%s", static_cast<int>(chunks[0]),
                HexDump(absl::string_view(bytes).substr(0, chunks[0]), 0).c_str());
    std::printf("event chunk:\n%s", HexDump(chunk, chunks[0]).c_str());
    std::printf("index chunk + footer:\n%s",
                HexDump(absl::string_view(bytes).substr(chunks[1]), chunks[1]).c_str());
  }
  std::string hex;
  for (char c : chunk) hex += absl::StrFormat("%02x", static_cast<uint8_t>(c));
  EXPECT_EQ(hex, kExampleChunkHex);
  testing::ReadResult r = ReadAllBytes(bytes);
  ASSERT_TRUE(r.status.ok());
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0].args[3], static_cast<uint64_t>(int64_t{-4}));
  EXPECT_EQ(r.events[2].timestamp_ns, 1500);
}

}  // namespace
}  // namespace cltrace::format

namespace cltrace::format {
namespace {

// Writes the fuzzing seeds of tests/fuzz/trace_reader_fuzz.cc. Only with an explicit flag:
//   CLTRACE_WRITE_FUZZ_SEEDS=corpus/fuzz/trace_reader build-format/bin/format_test
//     --gtest_filter=*WriteFuzzSeeds*   (one command line)
TEST(TraceIoTest, WriteFuzzSeeds) {
  const char* dir = std::getenv("CLTRACE_WRITE_FUZZ_SEEDS");
  if (dir == nullptr) GTEST_SKIP() << "set CLTRACE_WRITE_FUZZ_SEEDS=<dir> to write the seeds";
  struct Seed {
    const char* name;
    int events;
    bool compress, index, background;
    size_t chunk_bytes;
    int64_t cut;  // bytes to drop from the end (a torn tail)
  };
  const Seed seeds[] = {
      {"all_calls_compressed", 60, true, true, false, 700, 0},
      {"all_calls_stored", 40, false, true, false, 600, 0},
      {"stored_no_index", 30, false, false, false, 400, 0},
      {"compressed_no_index", 60, true, false, false, 500, 0},
      {"stored_torn_tail", 30, false, false, false, 400, 37},
      {"one_big_chunk", 80, true, true, true, 1 << 20, 0},
      {"header_only", 0, true, false, false, 400, 0},
  };
  for (const Seed& s : seeds) {
    TraceWriter::Options o = TestOptions();
    o.compress = s.compress;
    o.write_index = s.index;
    o.background = s.background;
    o.chunk_bytes = s.chunk_bytes;
    std::vector<Event> events;
    std::string bytes = WriteToString(o, 99, s.events, &events);
    bytes.resize(bytes.size() - static_cast<size_t>(s.cut));
    ASSERT_TRUE(ReadAllBytes(bytes).status.ok()) << s.name;
    const std::string path = absl::StrFormat("%s/%s.cltrace", dir, s.name);
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr) << path;
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
  }
}

// FORMAT.md §5.5: missing positions below the highest one present, their runs, duplicates.
TEST(PositionGapsTest, FindsHolesAndDuplicates) {
  auto call = [](uint64_t seq, uint64_t end) {
    Event e;
    e.seq = seq;
    e.end = end;
    return e;
  };
  // Positions 1 2 | 3 missing | 4 7 (5 6 inside: a nested call 5..6) | 8..9 missing | 10 and
  // an incomplete call at 11 (no exit position).
  std::vector<Event> events = {call(4, 7), call(1, 2), call(5, 6), call(10, 0), call(11, 0)};
  PositionGaps g = FindPositionGaps(events);
  EXPECT_EQ(g.highest, 11u);
  EXPECT_EQ(g.missing, 3u);
  EXPECT_EQ(g.first_missing, 3u);
  ASSERT_EQ(g.holes.size(), 2u);
  EXPECT_EQ(g.holes[0], std::make_pair(uint64_t{3}, uint64_t{3}));
  EXPECT_EQ(g.holes[1], std::make_pair(uint64_t{8}, uint64_t{9}));
  EXPECT_EQ(g.duplicates, 0u);
  EXPECT_FALSE(g.complete());
  // MissingBetween(lo, hi): a missing p with lo < p < hi.
  EXPECT_TRUE(g.MissingBetween(0, 4));
  EXPECT_FALSE(g.MissingBetween(3, 8));
  EXPECT_TRUE(g.MissingBetween(3, 9));
  EXPECT_TRUE(g.MissingBetween(8, 10));
  EXPECT_FALSE(g.MissingBetween(9, 100));
  EXPECT_FALSE(g.MissingBetween(0, 3));

  EXPECT_TRUE(FindPositionGaps({call(1, 4), call(2, 3)}).complete());
  PositionGaps dup = FindPositionGaps({call(1, 3), call(2, 3), call(4, 5)});
  EXPECT_EQ(dup.duplicates, 1u);
  EXPECT_EQ(dup.first_duplicate, 3u);
  EXPECT_EQ(dup.missing, 0u);
  EXPECT_FALSE(dup.complete());
}

// Only a recording promises dense positions.
TEST(PositionGapsTest, OnlyRecordingsAreDense) {
  proto::TraceHeader h;
  h.mutable_writer()->set_name("cltrace-recorder");
  EXPECT_TRUE(PositionsAreDense(h));
  h.mutable_writer()->set_name("cltrace import");
  EXPECT_FALSE(PositionsAreDense(h));
}

}  // namespace
}  // namespace cltrace::format
