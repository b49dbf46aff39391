// LoadTrace: one loader for both formats (detected by content), salvage, progress, gaps.
#include "format/load_trace.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ddi/catalog.h"
#include "format/chunk.h"
#include "format/internal/trace_test_util.h"
#include "format/jsonl.h"
#include "format/testing/temp_file.h"
#include "format/trace_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

using testing::ChunkOffsets;
using ::testing::HasSubstr;
using testing::TempFile;
using testing::TestOptions;

Event Draw(uint64_t seq, uint64_t dev) {
  Event e = testing::MakeCall(CallId::kDrawIndexed, seq, seq + 1, {dev, 36, 108, 0});
  e.tid = 3;
  return e;
}

// The bytes of a .cltrace of DrawIndexed calls at entry seqs `seqs` (exits seq + 1), in many
// small chunks, written by `writer_name`.
std::string Trace(const std::vector<uint64_t>& seqs,
                  const std::string& writer_name = "cltrace-test", size_t chunk_bytes = 120) {
  TraceWriter::Options o = TestOptions();
  o.chunk_bytes = chunk_bytes;
  o.writer.set_name(writer_name);
  std::string bytes;
  auto w = TraceWriter::Open(std::make_unique<StringSink>(&bytes), o);
  EXPECT_TRUE(w.ok()) << w.status();
  const uint64_t dev = (*w)->InternHandleValue(0x5500);
  for (uint64_t seq : seqs) EXPECT_TRUE((*w)->Append(Draw(seq, dev)).ok());
  EXPECT_TRUE((*w)->Close().ok());
  return bytes;
}

std::vector<uint64_t> OddSeqs(int n) {
  std::vector<uint64_t> seqs;
  for (int i = 0; i < n; ++i) seqs.push_back(2 * i + 1);
  return seqs;
}

TEST(DetectTraceFormatTest, ByContentNotByName) {
  TempFile jsonl("a.cltrace", "\n  {\"seq\":1}\n");
  EXPECT_EQ(*DetectTraceFormat(jsonl.path()), TraceFileFormat::kJsonl);
  TempFile binary("b.jsonl", "CLTRACE\0...");
  EXPECT_EQ(*DetectTraceFormat(binary.path()), TraceFileFormat::kCltrace);
}

TEST(DetectTraceFormatTest, EmptyFiles) {
  TempFile empty_jsonl("e.jsonl", "");
  EXPECT_EQ(*DetectTraceFormat(empty_jsonl.path()), TraceFileFormat::kJsonl);
  TempFile empty_cltrace("e.cltrace", " \n");
  EXPECT_EQ(*DetectTraceFormat(empty_cltrace.path()), TraceFileFormat::kCltrace);
}

TEST(DetectTraceFormatTest, MissingFileAndDirectory) {
  EXPECT_EQ(DetectTraceFormat("/nonexistent/x.jsonl").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(LoadTrace("/nonexistent/x.jsonl").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(LoadTrace(::testing::TempDir()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LoadTraceTest, JsonlKeepsTheCallsAboveABadLine) {
  TempFile f("bad.jsonl",
             "{\"seq\":1,\"tid\":1,\"fn\":\"Flush\",\"args\":{\"hDevice\":\"d\"}}\n"
             "{\"seq\":2,\"tid\":1,\"fn\":\"Flush\",\"args\":{\"hDevice\":\"d\"}}\n"
             "{\"seq\":3,\"tid\":1,\"fn\":\"Flush\",\"args\":{\"hDevic\":\"d\"}}\n");
  absl::StatusOr<LoadedTrace> in = LoadTrace(f.path());
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->format, TraceFileFormat::kJsonl);
  ASSERT_EQ(in->events.size(), 2u);
  EXPECT_EQ(in->events[1].seq, 3u);  // 1..2, then 3..4: the ends were inferred at the error
  EXPECT_THAT(std::string(in->error.message()), HasSubstr("line 3: unknown argument \"hDevic\""));
  EXPECT_EQ(in->lines, 3);
  // All or nothing: the same damage is ReadAllSorted's error.
  EXPECT_THAT(std::string(ReadAllSorted(f.path()).status().message()), HasSubstr("line 3"));
}

TEST(LoadTraceTest, ContentOfBothFormatsIsRead) {
  const std::string line =
      R"({"seq":1,"tid":1,"fn":"ResourceUpdateSubresourceUP","args":{"hDevice":"d",)"
      R"("hDstResource":"r","pDstBox":null},"end":2,"content":"0a0b"})";
  TempFile jsonl("c.jsonl", line);
  absl::StatusOr<LoadedTrace> j = LoadTrace(jsonl.path());
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_EQ(j->events.size(), 1u);
  EXPECT_EQ(j->contents.Token(j->events[0].content), "\x0a\x0b");

  const std::string path = absl::StrCat(::testing::TempDir(), "/", getpid(), "_c.cltrace");
  {
    TraceWriter::Options o;
    o.background = false;
    auto w = TraceWriter::Open(path, o);
    ASSERT_TRUE(w.ok()) << w.status();
    Event e = j->events[0];
    e.args[0] = (*w)->InternHandleToken("d");
    e.args[1] = (*w)->InternHandleToken("r");
    e.content = (*w)->InternContent("\x0a\x0b");
    ASSERT_TRUE((*w)->Append(e).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  absl::StatusOr<LoadedTrace> b = LoadTrace(path);
  std::remove(path.c_str());
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->events.size(), 1u);
  EXPECT_EQ(b->contents.Token(b->events[0].content), "\x0a\x0b");
}

TEST(LoadTraceTest, BinaryEventsComeSortedBySeqWithHeaderAndStats) {
  // Appended out of call order (as a multi-threaded recording does).
  TempFile f("sorted.cltrace", Trace({5, 1, 3}));
  absl::StatusOr<LoadedTrace> t = LoadTrace(f.path());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, TraceFileFormat::kCltrace);
  EXPECT_TRUE(t->error.ok()) << t->error;
  ASSERT_EQ(t->events.size(), 3u);
  EXPECT_EQ(t->events[0].seq, 1u);
  EXPECT_EQ(t->events[1].seq, 3u);
  EXPECT_EQ(t->events[2].seq, 5u);
  EXPECT_EQ(t->header.writer().name(), "cltrace-test");
  EXPECT_EQ(t->stats.events, 3u);
  EXPECT_EQ(t->torn_tail, -1);
  EXPECT_EQ(t->handles.Token(t->events[0].args[0]), "0x5500");
  EXPECT_EQ(t->file_size, Trace({5, 1, 3}).size());
}

// The file name says one format, the bytes the other: the bytes win both ways.
TEST(LoadTraceTest, FormatIsDetectedByContentDespiteTheExtension) {
  TempFile binary("misnamed.jsonl", Trace({1, 3}));
  absl::StatusOr<LoadedTrace> b = LoadTrace(binary.path());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->format, TraceFileFormat::kCltrace);
  EXPECT_EQ(b->events.size(), 2u);
  TempFile jsonl("misnamed.cltrace",
                 "{\"seq\":1,\"tid\":1,\"fn\":\"Flush\",\"args\":{\"hDevice\":\"d\"},\"end\":2}\n");
  absl::StatusOr<LoadedTrace> j = LoadTrace(jsonl.path());
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->format, TraceFileFormat::kJsonl);
  ASSERT_EQ(j->events.size(), 1u);
  EXPECT_TRUE(j->error.ok()) << j->error;
}

TEST(LoadTraceTest, CorruptChunkStopsReadingUnlessSalvaging) {
  const std::vector<uint64_t> seqs = OddSeqs(60);
  std::string bytes = Trace(seqs);
  std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  ASSERT_GT(chunks.size(), 5u);
  bytes[chunks[2] + kChunkHeaderSize + 5] ^= 0x01;  // payload CRC mismatch in chunk 2
  TempFile f("corrupt.cltrace", bytes);

  absl::StatusOr<LoadedTrace> strict = LoadTrace(f.path());
  ASSERT_TRUE(strict.ok()) << strict.status();
  EXPECT_EQ(strict->error.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(strict->error.message()),
              HasSubstr(absl::StrFormat("offset %d", chunks[2])));
  EXPECT_GT(strict->events.size(), 0u);  // the chunks before the damage are kept
  EXPECT_EQ(ReadAllSorted(f.path()).status().code(), absl::StatusCode::kDataLoss);

  LoadOptions options;
  options.salvage = true;
  absl::StatusOr<LoadedTrace> salvaged = LoadTrace(f.path(), options);
  ASSERT_TRUE(salvaged.ok()) << salvaged.status();
  EXPECT_TRUE(salvaged->error.ok()) << salvaged->error;
  EXPECT_EQ(salvaged->stats.corrupt_chunks_skipped, 1u);
  EXPECT_GT(salvaged->events.size(), strict->events.size());  // reading went on past chunk 2
  EXPECT_LT(salvaged->events.size(), seqs.size());            // chunk 2's events are lost
  EXPECT_EQ(salvaged->events.back().seq, seqs.back());
  EXPECT_TRUE(ReadAllSorted(f.path(), {.salvage = true}).ok());
}

void ExpectProgressReachesTheEnd(const std::string& path) {
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  LoadOptions options;
  options.progress_every = 4;
  options.progress = [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
  absl::StatusOr<LoadedTrace> t = LoadTrace(path, options);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(t->error.ok()) << t->error;
  ASSERT_GT(calls.size(), 2u);  // along the way, not only at the end
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, t->file_size) << i;
    EXPECT_LE(calls[i].first, calls[i].second) << i;
    if (i > 0) {
      EXPECT_GE(calls[i].first, calls[i - 1].first) << i;
    }
  }
  EXPECT_LT(calls.front().first, t->file_size);
  EXPECT_EQ(calls.back().first, t->file_size);
}

TEST(LoadTraceTest, ProgressIsMonotonicAndReachesTheTotal) {
  TempFile binary("progress.cltrace", Trace(OddSeqs(200)));
  ExpectProgressReachesTheEnd(binary.path());
  std::string lines;
  for (int i = 0; i < 200; ++i) {
    absl::StrAppend(&lines, "{\"seq\":", 2 * i + 1,
                    ",\"tid\":1,\"fn\":\"Flush\",\"args\":{\"hDevice\":\"d\"},\"end\":", 2 * i + 2,
                    "}\n");
  }
  TempFile jsonl("progress.jsonl", lines);
  ExpectProgressReachesTheEnd(jsonl.path());
}

// Holes are lost calls only in a recording (dense positions); duplicates count everywhere.
TEST(LoadTraceTest, PositionGapsHolesOnlyForRecordings) {
  const std::vector<uint64_t> seqs = {1, 3, 7, 9, 9};  // 5..6 missing, 9 and 10 twice
  TempFile recorded("gaps_rec.cltrace", Trace(seqs, "cltrace-recorder"));
  absl::StatusOr<LoadedTrace> r = LoadTrace(recorded.path());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->dense_positions);
  EXPECT_EQ(r->gaps.missing, 2u);
  EXPECT_EQ(r->gaps.first_missing, 5u);
  ASSERT_EQ(r->gaps.holes.size(), 1u);
  EXPECT_EQ(r->gaps.holes[0], std::make_pair(uint64_t{5}, uint64_t{6}));
  EXPECT_EQ(r->gaps.duplicates, 2u);
  EXPECT_EQ(r->gaps.highest, 10u);

  TempFile other("gaps_other.cltrace", Trace(seqs, "cltrace-test"));
  absl::StatusOr<LoadedTrace> o = LoadTrace(other.path());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->dense_positions);
  EXPECT_EQ(o->gaps.missing, 0u);
  EXPECT_TRUE(o->gaps.holes.empty());
  EXPECT_EQ(o->gaps.duplicates, 2u);
}

}  // namespace
}  // namespace cltrace::format
