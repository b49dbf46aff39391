#include "format/seq_stream.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "format/internal/interleaved_recording.h"
#include "format/internal/trace_test_util.h"
#include "format/load_trace.h"
#include "format/testing/temp_file.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

using ::testing::HasSubstr;
using testing::InterleavedOptions;
using testing::InterleavedRecording;
using testing::TempFile;
using testing::ThreadRun;

// Writes `runs` in the given order, one chunk per run (as a recorder that flushes each
// thread's segment), with a recorder's writer name (positions are dense).
std::string WriteRuns(const std::vector<ThreadRun>& runs, bool index = true,
                      bool index_definitions = false, size_t runs_per_chunk = 1) {
  std::string bytes;
  TraceWriter::Options o = testing::TestOptions();
  o.index_definitions = index_definitions;
  o.writer.set_name("cltrace-recorder");
  o.write_index = index;
  o.position_runs = true;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&bytes), o);
  EXPECT_TRUE(w.ok()) << w.status();
  EXPECT_EQ((*w)->InternHandleValue(0x5500), 1u);
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_TRUE((*w)->AppendRun(runs[i]).ok());
    if ((i + 1) % runs_per_chunk == 0) {
      EXPECT_TRUE((*w)->Flush().ok());
    }
  }
  EXPECT_TRUE((*w)->Close().ok());
  return bytes;
}

struct Streamed {
  std::vector<Event> events;
  absl::Status status;
  PositionGaps gaps;
  SeqStream::Stats stats;
  int64_t torn_tail = -1;
};

Streamed StreamAll(const std::string& path, SeqStreamOptions options = {},
                   uint64_t count = UINT64_MAX) {
  Streamed out;
  auto s = SeqStream::Open(path, options);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return out;
  Event e;
  while (out.events.size() < count && (*s)->Next(&e)) out.events.push_back(e);
  out.status = (*s)->status();
  out.gaps = (*s)->gaps();
  out.stats = (*s)->stats();
  out.torn_tail = (*s)->torn_tail();
  return out;
}

void ExpectSameGaps(const PositionGaps& a, const PositionGaps& b) {
  EXPECT_EQ(a.highest, b.highest);
  EXPECT_EQ(a.missing, b.missing);
  EXPECT_EQ(a.first_missing, b.first_missing);
  EXPECT_EQ(a.duplicates, b.duplicates);
  EXPECT_EQ(a.first_duplicate, b.first_duplicate);
  EXPECT_EQ(a.holes, b.holes);
}

// Adversarial file orders of a 4-thread recording: runs displaced at random within a
// distance, and one thread's early runs held back to the end of the file (a thread whose
// buffer is written late). The stream delivers exactly what LoadTrace's sort does.
TEST(SeqStreamTest, MatchesLoadTraceOnAdversarialInterleavings) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    InterleavedOptions io;
    io.run_events = 9 + seed * 5;
    io.leave_open = seed % 2 == 0;
    std::vector<ThreadRun> runs = InterleavedRecording(seed, io);
    std::mt19937_64 rng(seed);
    for (size_t i = 0; i + 1 < runs.size(); ++i) {
      std::swap(runs[i], runs[std::min(runs.size() - 1, i + rng() % 6)]);
    }
    // Two early runs go last.
    std::rotate(runs.begin() + 1, runs.begin() + 3, runs.end());
    for (size_t prefetch : {size_t{0}, size_t{1} << 20}) {
      TempFile f("adversarial.cltrace", WriteRuns(runs, /*index=*/seed % 2 == 1));
      absl::StatusOr<LoadedTrace> loaded = LoadTrace(f.path());
      ASSERT_TRUE(loaded.ok()) << loaded.status();
      SeqStreamOptions o;
      o.prefetch_events = prefetch;
      Streamed s = StreamAll(f.path(), o);
      ASSERT_TRUE(s.status.ok()) << s.status;
      EXPECT_EQ(s.events, loaded->events) << "seed " << seed;
      ExpectSameGaps(s.gaps, loaded->gaps);
      EXPECT_GT(s.stats.peak_chunks_merged, 1u);
      // The held-back runs overlap every chunk in between; with no prefetch allowance those
      // chunks are decoded once for their definitions and again in their turn.
      if (prefetch == 0) {
        EXPECT_GT(s.stats.chunks_redecoded, 0u);
      } else {
        EXPECT_EQ(s.stats.chunks_redecoded, 0u);
      }
    }
  }
}

// A chunk holding several runs, of several threads and out of order, is a few ascending
// stretches of seqs that the stream merges: 1 to 7 runs a chunk (odd and even counts of
// stretches), in seq order as LoadTrace's sort has them.
TEST(SeqStreamTest, ChunksOfManyRunsAreDeliveredInSeqOrder) {
  InterleavedOptions io;
  io.run_events = 11;
  std::vector<ThreadRun> runs = InterleavedRecording(7, io);
  std::mt19937_64 rng(7);
  for (size_t i = 0; i + 1 < runs.size(); ++i)
    std::swap(runs[i], runs[std::min(runs.size() - 1, i + rng() % 4)]);
  for (size_t per_chunk = 1; per_chunk <= 7; ++per_chunk) {
    TempFile f("many_runs.cltrace", WriteRuns(runs, /*index=*/true, false, per_chunk));
    absl::StatusOr<LoadedTrace> loaded = LoadTrace(f.path());
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    Streamed s = StreamAll(f.path());
    ASSERT_TRUE(s.status.ok()) << s.status;
    EXPECT_EQ(s.events, loaded->events) << per_chunk << " runs a chunk";
  }
}

TEST(SeqStreamTest, OverlapBeyondTheWindowIsAnErrorNamingTheChunkAfterTheCallsBeforeIt) {
  std::vector<ThreadRun> runs = InterleavedRecording(5, InterleavedOptions());
  std::rotate(runs.begin(), runs.begin() + 1, runs.end());  // the first run is written last
  TempFile f("window.cltrace", WriteRuns(runs));
  absl::StatusOr<LoadedTrace> loaded = LoadTrace(f.path());
  ASSERT_TRUE(loaded.ok());
  SeqStreamOptions o;
  o.window_events = 3 * InterleavedOptions().run_events;
  Streamed s = StreamAll(f.path(), o);
  EXPECT_EQ(s.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.status.message(), HasSubstr("at offset "));
  EXPECT_THAT(s.status.message(), HasSubstr("reorder window of 600 events"));
  ASSERT_LT(s.events.size(), loaded->events.size());
  // What was delivered is the sorted trace's beginning.
  EXPECT_TRUE(std::equal(s.events.begin(), s.events.end(), loaded->events.begin()));
}

TEST(SeqStreamTest, SeekDecodesOnlyTheChunksItNeeds) {
  InterleavedOptions io;
  io.threads = 2;
  io.calls_per_thread = 2000;
  io.run_events = 100;
  std::vector<ThreadRun> runs = InterleavedRecording(9, io);
  TempFile f("seek.cltrace", WriteRuns(runs));
  absl::StatusOr<LoadedTrace> loaded = LoadTrace(f.path());
  ASSERT_TRUE(loaded.ok());
  const uint64_t chunks = loaded->stats.chunks;
  ASSERT_GT(chunks, 50u);
  const size_t at = loaded->events.size() * 3 / 4;
  SeqStreamOptions o;
  o.from_seq = loaded->events[at].seq;
  Streamed s = StreamAll(f.path(), o, /*count=*/5);
  ASSERT_TRUE(s.status.ok()) << s.status;
  ASSERT_EQ(s.events.size(), 5u);
  EXPECT_TRUE(std::equal(s.events.begin(), s.events.end(), loaded->events.begin() + at));
  // Two threads: the chunk holding from_seq and its neighbours overlapping it.
  EXPECT_LE(s.stats.chunks_decoded, 4u);
  EXPECT_EQ(s.stats.chunks_redecoded, 0u);
  // The earlier chunks were read for their definitions only; the later ones not at all.
  EXPECT_LT(s.stats.chunks_definitions + s.stats.chunks_decoded, chunks);
  EXPECT_GT(s.stats.chunks_definitions, chunks / 2);
  EXPECT_EQ(s.stats.chunks_skipped, 0u);

  // When the index says which chunks define something, the others are not read at all: only
  // the first chunk (the handle's definition) is read before the ones that hold the calls.
  TempFile g("seek_defs.cltrace", WriteRuns(runs, /*index=*/true, /*index_definitions=*/true));
  Streamed t = StreamAll(g.path(), o, /*count=*/5);
  ASSERT_TRUE(t.status.ok()) << t.status;
  EXPECT_EQ(t.events, s.events);
  EXPECT_LE(t.stats.chunks_decoded, 4u);
  EXPECT_EQ(t.stats.chunks_definitions, 1u);
  EXPECT_GT(t.stats.chunks_skipped, chunks / 2);
}

// The resident pages (smaps "Rss") of this process's mappings of `path`, in bytes.
uint64_t MappedResidentBytes(const std::string& path) {
  const std::string name = std::filesystem::canonical(path).string();  // as the kernel shows it
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_file = false;
  uint64_t kb = 0;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
        line.find(' ') < line.find(':')) {
      in_file = absl::EndsWith(line, " " + name);  // a mapping's first line names its file
    } else if (in_file && absl::StartsWith(line, "Rss:")) {
      kb += std::strtoull(line.c_str() + 4, nullptr, 10);
    }
  }
  return kb << 10;
}

// Walking the chunk headers of a mapped file touches a page per chunk, and the kernel maps the
// pages around each touched one too: without giving the walked range back, ScanChunks left
// the whole file resident (a 100M-call trace's 250 MB before a verb had read one chunk).
TEST(SeqStreamTest, ScanningTheChunksKeepsLittleOfTheMappedFileResident) {
  InterleavedOptions io;
  io.threads = 2;
  io.calls_per_thread = 300000;
  io.run_events = 100;
  std::vector<ThreadRun> runs = InterleavedRecording(5, io);
  TempFile f("scan.cltrace", WriteRuns(runs));
  const uint64_t size = std::filesystem::file_size(f.path());
  ASSERT_GT(size, uint64_t{5} << 19);
  absl::StatusOr<std::unique_ptr<TraceReader>> r = TraceReader::Open(f.path());
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<ChunkSpan> spans;
  ASSERT_TRUE((*r)->ScanChunks(&spans).ok());
  ASSERT_GT(spans.size(), 2000u);
  // At most the last 256 KiB walked and the pages around, the header and the index.
  EXPECT_LE(MappedResidentBytes(f.path()), uint64_t{768} << 10) << "of " << size << " bytes";
}

TEST(SeqStreamTest, TornTailAndDamageStopWhereLoadTraceStops) {
  std::vector<ThreadRun> runs = InterleavedRecording(11, InterleavedOptions());
  std::rotate(runs.begin(), runs.begin() + 2, runs.end());
  const std::string whole = WriteRuns(runs, /*index=*/false);
  std::vector<uint64_t> offsets = testing::ChunkOffsets(whole);
  ASSERT_GT(offsets.size(), 6u);
  std::string torn = whole.substr(0, offsets[5] + 30);
  std::string damaged = whole;
  damaged[offsets[4] + 60] ^= 0x10;  // a payload byte: CRC mismatch in chunk 4
  for (bool salvage : {false, true}) {
    for (const std::string* file : {&torn, &damaged}) {
      const std::string& bytes = *file;
      TempFile f("damaged.cltrace", bytes);
      LoadOptions lo;
      lo.salvage = salvage;
      absl::StatusOr<LoadedTrace> loaded = LoadTrace(f.path(), lo);
      ASSERT_TRUE(loaded.ok());
      SeqStreamOptions o;
      o.salvage = salvage;
      Streamed s = StreamAll(f.path(), o);
      EXPECT_EQ(s.status, loaded->error);
      if (file == &damaged && !salvage) {
        EXPECT_EQ(s.status.code(), absl::StatusCode::kDataLoss);
      }
      if (file == &torn) {
        EXPECT_GE(s.torn_tail, 0);
      }
      EXPECT_EQ(s.events, loaded->events);
      EXPECT_EQ(s.torn_tail, loaded->torn_tail);
      ExpectSameGaps(s.gaps, loaded->gaps);
    }
  }
}

TEST(PositionGapFinderTest, MatchesFindPositionGaps) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 50; ++round) {
    std::vector<Event> events;
    uint64_t seq = 0;
    for (int i = 0; i < 200; ++i) {
      Event e;
      seq += 1 + rng() % 3;           // holes
      if (rng() % 40 == 0) seq -= 1;  // a duplicate entry position now and then
      e.seq = seq;
      const uint64_t r = rng() % 10;
      e.end = r == 0 ? 0 : seq + 1 + rng() % 12;  // ends may collide with anything
      events.push_back(e);
    }
    PositionGapFinder finder;
    for (const Event& e : events) finder.Add(e);
    ExpectSameGaps(finder.Finish(), FindPositionGaps(events));
  }
}

}  // namespace
}  // namespace cltrace::format
