// `cltrace dump --from S --count N` in text form seeks through the index like --json: it
// reads the chunks that hold the calls it prints (and the chunk that created their contexts),
// not the trace before them, and still marks each device call's table (IC::/DC::) as a dump
// that reads the trace from its start does.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/verb.h"
#include "format/chunk.h"
#include "format/event_codec.h"
#include "format/load_trace.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"
#include "gtest/gtest.h"

namespace cltrace::cli {
namespace {

// A dump line without its column padding: seq, end, tid and the rest (indentation, call,
// arguments), which do not depend on the widths.
std::vector<std::string> Unpadded(const std::string& text) {
  static const std::regex kLine(R"(^ *(\d+) +(\S+) +(\d+)  (.*)$)");
  std::vector<std::string> lines;
  for (absl::string_view l : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::smatch m;
    std::string s(l);
    if (!std::regex_match(s, m, kLine)) continue;  // the header
    lines.push_back(absl::StrCat(m[1].str(), " ", m[2].str(), " ", m[3].str(), " ", m[4].str()));
  }
  return lines;
}

// The corpus's smallcl.cltrace repeated `times` times (seqs shifted), in many small chunks
// with an index that says which chunks hold definitions.
absl::Status WriteRepeated(const std::string& path, int times) {
  absl::StatusOr<format::LoadedTrace> in = format::ReadAllSorted("corpus/traces/smallcl.cltrace");
  if (!in.ok()) return in.status();
  format::TraceWriter::Options wo;
  wo.chunk_bytes = 16 << 10;
  wo.index_definitions = true;
  absl::StatusOr<std::unique_ptr<format::TraceWriter>> w = format::TraceWriter::Open(path, wo);
  if (!w.ok()) return w.status();
  std::vector<uint64_t> handles{0}, strings{0};
  for (size_t id = 1; id < in->handles.size(); ++id)
    handles.push_back((*w)->InternHandleToken(in->handles.Token(id)));
  for (size_t id = 1; id < in->strings.size(); ++id)
    strings.push_back((*w)->InternString(in->strings.Token(id)));
  uint64_t span = 0;
  for (const format::Event& e : in->events) span = std::max({span, e.seq, e.end});
  for (int rep = 0; rep < times; ++rep) {
    for (format::Event e : in->events) {
      format::VisitArgKinds(format::LayoutOf(e.call),
                            absl::MakeConstSpan(e.args.data(), e.args.size()),
                            [&](size_t i, format::FieldKind kind) {
                              if (kind == format::FieldKind::kHandle)
                                e.args[i] = handles[e.args[i]];
                              if (kind == format::FieldKind::kString)
                                e.args[i] = strings[e.args[i]];
                            });
      if (e.annotation != 0) e.annotation = strings[e.annotation];
      e.seq += rep * span;
      if (e.end != 0) e.end += rep * span;
      if (e.parent != 0) e.parent += rep * span;
      if (absl::Status st = (*w)->Append(e); !st.ok()) return st;
    }
  }
  return (*w)->Close();
}

TEST(DumpSeekTest, TextFromNearTheEndReadsFewChunksAndMarksTablesAsAFullRead) {
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/dump_seek_test_", getpid(), ".cltrace");
  ASSERT_TRUE(WriteRepeated(path, 150).ok());
  std::vector<format::ChunkSpan> spans;
  {
    auto r = format::TraceReader::Open(path);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE((*r)->ScanChunks(&spans).ok());
  }
  ASSERT_GE(spans.size(), 40u);
  uint64_t max_seq = 0;
  for (const format::ChunkSpan& s : spans) max_seq = std::max(max_seq, s.max_seq);

  std::ostringstream full, full_err;
  ASSERT_EQ(RunCli({"cltrace", "dump", path, "--quiet"}, full, full_err), kExitOk)
      << full_err.str();
  const std::vector<std::string> all = Unpadded(full.str());

  const uint64_t from = max_seq - max_seq / 20;
  constexpr int kCount = 300;
  std::ostringstream part, part_err;
  const uint64_t before = format::ChunkPayloadsRead();
  ASSERT_EQ(RunCli({"cltrace", "dump", path, "--from", absl::StrCat(from), "--count",
                    absl::StrCat(kCount), "--quiet"},
                   part, part_err),
            kExitOk)
      << part_err.str();
  const uint64_t read = format::ChunkPayloadsRead() - before;
  // The chunks holding the calls printed (and their parents), the one with the definitions
  // and the contexts' creations: a few, whatever the length of the trace.
  EXPECT_LE(read, 10u) << "of " << spans.size() << " chunks";

  const std::vector<std::string> seek = Unpadded(part.str());
  ASSERT_EQ(seek.size(), static_cast<size_t>(kCount));
  // The same lines as the full dump's from the first call at or after `from`.
  size_t first = 0;
  while (first < all.size() && std::stoull(all[first]) < from) ++first;
  ASSERT_LE(first + kCount, all.size());
  int dc = 0, ic = 0;
  for (int i = 0; i < kCount; ++i) {
    EXPECT_EQ(seek[i], all[first + i]);
    dc += seek[i].find(" DC::") != std::string::npos;
    ic += seek[i].find(" IC::") != std::string::npos;
  }
  // Both tables are marked in the calls compared.
  EXPECT_GT(dc, 0);
  EXPECT_GT(ic, 0);
  unlink(path.c_str());
}

}  // namespace
}  // namespace cltrace::cli
