#include "inspector/loader.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "format/chunk.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inspector/internal/synthetic_trace.h"

namespace cltrace::inspector {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir ? dir : "/tmp", "/inspector_loader_", getpid(), "_", name);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Offsets of the whole chunks of a .cltrace file, first to last.
std::vector<uint64_t> ChunkOffsets(absl::string_view file) {
  std::vector<uint64_t> out;
  absl::StatusOr<format::ParsedFileHeader> h = format::ParseFileHeader(file);
  if (!h.ok()) return out;
  for (uint64_t off = h->size; off < file.size();) {
    format::ChunkProbe probe;
    absl::StatusOr<format::ChunkInfo> info =
        format::ParseChunkHeader(file.substr(off), off, &probe);
    if (!info.ok() || probe != format::ChunkProbe::kHeader) break;
    out.push_back(off);
    off += info->total_size();
  }
  return out;
}

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = TempPath("ok.cltrace");
    trace_ = testing::MakeSmallCommandListTrace({.calls = 5000, .dcs = 3});
    ASSERT_TRUE(testing::WriteCltrace(trace_, path_).ok());
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string path_;
  testing::SyntheticTrace trace_;
};

TEST_F(LoaderTest, ReadsACltraceFile) {
  absl::StatusOr<TraceData> d = ReadTraceFile(path_, {});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->format, TraceFileFormat::kCltrace);
  ASSERT_EQ(d->events.size(), trace_.events.size());
  EXPECT_EQ(d->events[100].seq, trace_.events[100].seq);
  EXPECT_EQ(d->handles.Token(d->events.back().args[1]), "cl2");
}

TEST_F(LoaderTest, EventsWrittenOutOfOrderAreSortedBySeq) {
  // Two threads appending through one writer interleave out of seq order.
  testing::SyntheticTrace t = testing::MakeSmallCommandListTrace({.calls = 200, .dcs = 2});
  std::swap(t.events[20], t.events[21]);
  std::swap(t.events[50], t.events[90]);
  const std::string path = TempPath("unsorted.cltrace");
  ASSERT_TRUE(testing::WriteCltrace(t, path).ok());
  absl::StatusOr<TraceData> d = ReadTraceFile(path, {});
  std::remove(path.c_str());
  ASSERT_TRUE(d.ok()) << d.status();
  for (size_t i = 1; i < d->events.size(); ++i) ASSERT_LT(d->events[i - 1].seq, d->events[i].seq);
}

TEST_F(LoaderTest, BackgroundLoadReportsProgressAndFinishes) {
  Loader loader;
  loader.Start(path_);
  EXPECT_TRUE(loader.started());
  for (int i = 0; i < 2000 && !loader.done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(loader.done());
  EXPECT_FLOAT_EQ(loader.progress(), 1.0f);
  absl::StatusOr<std::unique_ptr<TraceModel>> m = loader.Take();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->rows().size(), 9u);
}

TEST_F(LoaderTest, ProgressIsMonotonicAndReachesOne) {
  std::vector<float> seen;
  absl::StatusOr<std::unique_ptr<TraceModel>> m =
      LoadModel(path_, {}, [&](float f) { seen.push_back(f); });
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_FALSE(seen.empty());
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i], seen[i - 1]);
  EXPECT_FLOAT_EQ(seen.back(), 1.0f);
}

TEST_F(LoaderTest, CorruptChunkIsDataLossWithItsOffset) {
  std::string bytes = ReadFile(path_);
  ASSERT_GT(bytes.size(), 200u);
  bytes[bytes.size() / 2] ^= 0x5a;  // inside a compressed chunk: the CRC no longer matches
  const std::string bad = TempPath("corrupt.cltrace");
  WriteFile(bad, bytes);
  absl::StatusOr<std::unique_ptr<TraceModel>> m = LoadModel(bad, {}, {});
  std::remove(bad.c_str());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kDataLoss) << m.status();
  EXPECT_THAT(m.status().message(), HasSubstr("offset"));
  EXPECT_THAT(m.status().message(), HasSubstr(bad));
}

// --salvage: the same damage is skipped (format::LoadOptions::salvage) and the rest shown.
TEST_F(LoaderTest, CorruptChunkLoadsWhenSalvagingAndFailsOtherwise) {
  const std::string small = TempPath("small_chunks.cltrace");
  ASSERT_TRUE(testing::WriteCltrace(trace_, small, /*chunk_bytes=*/1024).ok());
  std::string bytes = ReadFile(small);
  std::remove(small.c_str());
  const std::vector<uint64_t> chunks = ChunkOffsets(bytes);
  ASSERT_GT(chunks.size(), 2u);
  // A payload byte of a chunk in the middle: its CRC no longer matches.
  bytes[chunks[chunks.size() / 2] + format::kChunkHeaderSize + 5] ^= 0x5a;
  const std::string bad = TempPath("salvage.cltrace");
  WriteFile(bad, bytes);
  absl::StatusOr<TraceData> strict = ReadTraceFile(bad, {});
  absl::StatusOr<TraceData> d = ReadTraceFile(bad, {}, /*salvage=*/true);
  BuildOptions options;
  options.salvage = true;
  absl::StatusOr<std::unique_ptr<TraceModel>> m = LoadModel(bad, options, {});
  std::remove(bad.c_str());
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), absl::StatusCode::kDataLoss) << strict.status();
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->stats.corrupt_chunks_skipped, 1u);
  EXPECT_GT(d->events.size(), 0u);
  EXPECT_LT(d->events.size(), trace_.events.size());
  ASSERT_TRUE(m.ok()) << m.status();
}

// Recorded content (Event::content) reaches the inspector's data.
TEST(LoaderContentTest, ContentIsKept) {
  const std::string path = TempPath("content.jsonl");
  WriteFile(path, R"({"seq":1,"tid":1,"fn":"ResourceUpdateSubresourceUP","args":{"hDevice":"d",)"
                  R"("hDstResource":"r","pDstBox":null},"end":2,"content":"0a0b"})"
                  "\n");
  absl::StatusOr<TraceData> d = ReadTraceFile(path, {});
  std::remove(path.c_str());
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->events.size(), 1u);
  EXPECT_EQ(d->contents.Token(d->events[0].content), "\x0a\x0b");
}

TEST_F(LoaderTest, NotATraceIsInvalidArgument) {
  const std::string bad = TempPath("garbage.cltrace");
  WriteFile(bad, std::string(4096, '\x07'));
  absl::StatusOr<TraceData> d = ReadTraceFile(bad, {});
  std::remove(bad.c_str());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << d.status();
}

TEST_F(LoaderTest, TruncatedFileLoadsTheCompleteChunks) {
  std::string bytes = ReadFile(path_);
  const std::string torn = TempPath("torn.cltrace");
  WriteFile(torn, bytes.substr(0, bytes.size() - 10));  // inside the trailer
  absl::StatusOr<TraceData> d = ReadTraceFile(torn, {});
  std::remove(torn.c_str());
  // A torn tail is the end of the file, never an error (format/trace_reader.h).
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_LE(d->events.size(), trace_.events.size());
}

TEST(LoaderJsonlTest, BadLineNamesTheLine) {
  const std::string bad = TempPath("bad.jsonl");
  WriteFile(bad,
            "{\"seq\":1,\"tid\":1,\"fn\":\"Flush\",\"args\":{\"hDevice\":\"ic\"}}\n"
            "{\"seq\":2,\"tid\":1,\"fn\":\"NoSuchCall\",\"args\":{}}\n");
  absl::StatusOr<TraceData> d = ReadTraceFile(bad, {});
  std::remove(bad.c_str());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(d.status().message(), HasSubstr("line 2"));
}

TEST(LoaderJsonlTest, MissingFileIsNotFound) {
  absl::StatusOr<TraceData> d = ReadTraceFile("/nonexistent/trace.cltrace", {});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
}

TEST(LoaderJsonlTest, FailedBackgroundLoadKeepsTheError) {
  Loader loader;
  loader.Start("/nonexistent/trace.jsonl");
  absl::StatusOr<std::unique_ptr<TraceModel>> m = loader.Take();
  EXPECT_TRUE(loader.done());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace cltrace::inspector
