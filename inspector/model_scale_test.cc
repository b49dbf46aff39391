// The model at scale (inspector/call_index.h): a trace opened by streaming it keeps compact
// call records and decodes events on demand; these must agree, field for field, with the
// whole trace read into memory, on the fine and on the coarse index.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "format/chunk.h"
#include "format/load_trace.h"
#include "gtest/gtest.h"
#include "inspector/internal/synthetic_trace.h"
#include "inspector/loader.h"
#include "inspector/model.h"

namespace cltrace::inspector {
namespace {

std::vector<std::string> CorpusTraces() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator("corpus/traces"))
    if (entry.path().extension() == ".cltrace") out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir ? dir : "/tmp", "/inspector_scale_", getpid(), "_", name);
}

std::vector<std::string> Labels(const TraceModel& m) {
  std::vector<std::string> out;
  for (const Row& r : m.rows()) out.push_back(r.label);
  return out;
}

// Every call of `m` equals the event LoadTrace read at the same index: the record's fields,
// the on-demand decode (every field of the Event), the seq look-ups.
void ExpectCallsMatch(const TraceModel& m, const std::vector<format::Event>& events,
                      const std::string& what) {
  ASSERT_EQ(m.call_count(), events.size()) << what;
  uint16_t depth_seen = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const format::Event& e = events[i];
    const CallRecord r = m.Call(i);
    ASSERT_EQ(r.seq, e.seq) << what << " call " << i;
    ASSERT_EQ(r.end, e.end) << what << " call " << i;
    ASSERT_EQ(r.parent, e.parent) << what << " call " << i;
    ASSERT_EQ(r.tid, e.tid) << what << " call " << i;
    ASSERT_EQ(r.call, e.call) << what << " call " << i;
    ASSERT_EQ(r.dc_table, m.ViaDcTable(i)) << what << " call " << i;
    if (e.parent == 0) {
      ASSERT_EQ(r.depth, 0) << what << " call " << i;
    } else {
      const int64_t p = m.EventAt(e.parent);
      ASSERT_EQ(r.depth, p >= 0 ? m.Call(static_cast<size_t>(p)).depth + 1 : 1)
          << what << " call " << i;
    }
    depth_seen = std::max(depth_seen, r.depth);
    absl::StatusOr<std::shared_ptr<const format::Event>> d = m.DecodeEvent(i);
    ASSERT_TRUE(d.ok()) << what << " call " << i << ": " << d.status();
    ASSERT_EQ(**d, e) << what << " call " << i;  // every field, arguments included
    ASSERT_EQ(m.EventAt(e.seq), static_cast<int64_t>(i)) << what;
    ASSERT_EQ(m.EventAtOrBefore(e.seq), static_cast<int64_t>(i)) << what;
    if (e.end != 0 && (i + 1 == events.size() || events[i + 1].seq > e.seq + 1)) {
      ASSERT_EQ(m.EventAt(e.seq + 1), -1) << what;
      ASSERT_EQ(m.EventAtOrBefore(e.seq + 1), static_cast<int64_t>(i)) << what;
    }
  }
  EXPECT_EQ(m.EventAtOrBefore(0), -1);
  EXPECT_FALSE(m.DecodeEvent(events.size()).ok());
}

void ExpectSameModel(const TraceModel& a, const TraceModel& b, const std::string& what) {
  EXPECT_EQ(Labels(a), Labels(b)) << what;
  ASSERT_EQ(a.rows().size(), b.rows().size()) << what;
  for (size_t r = 0; r < a.rows().size(); ++r) {
    ASSERT_EQ(a.rows()[r].spans.size(), b.rows()[r].spans.size()) << what << " row " << r;
    for (size_t s = 0; s < a.rows()[r].spans.size(); ++s) {
      const Span& x = a.rows()[r].spans[s];
      const Span& y = b.rows()[r].spans[s];
      ASSERT_EQ(std::tie(x.from, x.to, x.state, x.dc_table, x.cause, x.lifetime),
                std::tie(y.from, y.to, y.state, y.dc_table, y.cause, y.lifetime))
          << what << " row " << r << " span " << s;
    }
  }
  EXPECT_EQ(a.first_seq(), b.first_seq()) << what;
  EXPECT_EQ(a.end_seq(), b.end_seq()) << what;
  EXPECT_EQ(a.call_counts(), b.call_counts()) << what;
  EXPECT_EQ(a.thread_counts(), b.thread_counts()) << what;
  ASSERT_EQ(a.violations().size(), b.violations().size()) << what;
  for (size_t i = 0; i < a.violations().size(); ++i) {
    EXPECT_EQ(a.violations()[i].seq, b.violations()[i].seq) << what;
    EXPECT_EQ(a.violations()[i].message, b.violations()[i].message) << what;
  }
  EXPECT_EQ(a.error_count(), b.error_count()) << what;
  EXPECT_EQ(a.transitions().size(), b.transitions().size()) << what;
  EXPECT_EQ(a.dc_table_calls(), b.dc_table_calls()) << what;
  EXPECT_EQ(a.ic_executes(), b.ic_executes()) << what;
  EXPECT_EQ(a.handles().size(), b.handles().size()) << what;
}

TEST(ModelScaleTest, OnDemandDecodeEqualsTheFullDecodeOnTheCorpus) {
  const std::vector<std::string> traces = CorpusTraces();
  ASSERT_GT(traces.size(), 10u);
  for (const std::string& path : traces) {
    absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(path);
    ASSERT_TRUE(t.ok() && t->error.ok()) << path;
    absl::StatusOr<TraceData> data = ReadTraceFile(path, {});
    ASSERT_TRUE(data.ok()) << path;
    absl::StatusOr<std::unique_ptr<TraceModel>> whole = TraceModel::Build(*std::move(data));
    ASSERT_TRUE(whole.ok()) << path << ": " << whole.status();
    absl::StatusOr<std::unique_ptr<TraceModel>> streamed = TraceModel::Open(path);
    ASSERT_TRUE(streamed.ok()) << path << ": " << streamed.status();
    EXPECT_TRUE((*streamed)->fine_index());
    ExpectSameModel(**streamed, **whole, path);
    ExpectCallsMatch(**streamed, t->events, path);
  }
}

// The coarse index (forced with a small threshold and small blocks, so that blocks start
// inside nested calls and inside the overlapping chunks of several recording threads) gives
// the same calls as the fine one.
TEST(ModelScaleTest, CoarseIndexGivesTheSameCalls) {
  BuildOptions coarse;
  coarse.coarse_above = 0;
  coarse.coarse_block_calls = 7;
  for (const std::string& path : CorpusTraces()) {
    absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(path);
    ASSERT_TRUE(t.ok() && t->error.ok()) << path;
    absl::StatusOr<std::unique_ptr<TraceModel>> fine = TraceModel::Open(path);
    absl::StatusOr<std::unique_ptr<TraceModel>> m = TraceModel::Open(path, coarse);
    ASSERT_TRUE(fine.ok() && m.ok()) << path;
    EXPECT_FALSE((*m)->fine_index());
    ExpectSameModel(**m, **fine, path);
    ExpectCallsMatch(**m, t->events, path);
    for (size_t i = 0; i < (*m)->call_count(); ++i)
      ASSERT_EQ((*m)->Call(i), (*fine)->Call(i)) << path << " call " << i;
  }
}

TEST(ModelScaleTest, CoarseIndexOverEventsInMemory) {
  testing::SyntheticTrace t = testing::MakeSmallCommandListTrace({.calls = 3000, .dcs = 3});
  std::vector<format::Event> events = t.events;
  TraceData d;
  d.events = t.events;
  d.handles = t.handles;
  d.strings = t.strings;
  BuildOptions coarse;
  coarse.coarse_above = 100;
  coarse.coarse_block_calls = 64;
  absl::StatusOr<std::unique_ptr<TraceModel>> m = TraceModel::Build(std::move(d), coarse);
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE((*m)->fine_index());
  ExpectCallsMatch(**m, events, "synthetic");
}

// The model's own accounting of its call storage: 26 bytes a call (PackedCall) and a bit on the
// fine index, well under a byte a call on the coarse one; the lifelines' spans come on top and
// the whole stays within the 60 bytes a call.
TEST(ModelScaleTest, BytesPerCallOfTheCallStorage) {
  const std::string path = TempPath("bytes.cltrace");
  testing::SyntheticTrace t = testing::MakeSmallCommandListTrace({.calls = 200000, .dcs = 4});
  ASSERT_TRUE(testing::WriteCltrace(t, path, 64 << 10).ok());
  absl::StatusOr<std::unique_ptr<TraceModel>> m = TraceModel::Open(path);
  ASSERT_TRUE(m.ok()) << m.status();
  const double calls = static_cast<double>((*m)->call_count());
  ASSERT_GE(calls, 200000);
  const double fine = static_cast<double>((*m)->call_storage_bytes()) / calls;
  EXPECT_GE(fine, sizeof(PackedCall));
  EXPECT_LE(fine, sizeof(PackedCall) + 1.0);
  // Looking at calls fills the caches, which are bounded whatever the trace's length.
  for (size_t i = 0; i < (*m)->call_count(); i += 997) ASSERT_TRUE((*m)->DecodeEvent(i).ok());
  const uint64_t cache_bound = CallIndex::kCachedEvents * (sizeof(format::Event) + 4) +
                               (64 << 10) * sizeof(format::Event);  // one chunk over
  EXPECT_LE((*m)->call_storage_bytes(),
            static_cast<uint64_t>(calls * (sizeof(PackedCall) + 1.0)) + cache_bound);
  uint64_t spans = 0;
  for (const Row& r : (*m)->rows()) spans += r.spans.capacity() * sizeof(Span);
  EXPECT_LE((static_cast<double>(spans) + fine * calls) / calls, 60.0);

  BuildOptions coarse;
  coarse.coarse_above = 0;
  absl::StatusOr<std::unique_ptr<TraceModel>> c = TraceModel::Open(path, coarse);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_LE(static_cast<double>((*c)->call_storage_bytes()) / calls, 1.0);
  std::remove(path.c_str());
}

// --salvage: a corrupt chunk in the middle is skipped by the load, and the on-demand decode of
// the other calls (whose chunk ordinals count the skipped chunk) still finds each one, on the
// fine and the coarse index.
TEST(ModelScaleTest, OnDemandDecodeOfASalvagedTrace) {
  const std::string good = TempPath("salvage_good.cltrace");
  testing::SyntheticTrace t = testing::MakeSmallCommandListTrace({.calls = 5000, .dcs = 3});
  ASSERT_TRUE(testing::WriteCltrace(t, good, 1024).ok());
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::remove(good.c_str());
  // A payload byte of a chunk in the middle: its CRC no longer matches.
  std::vector<uint64_t> offsets;
  {
    absl::StatusOr<format::ParsedFileHeader> h = format::ParseFileHeader(bytes);
    ASSERT_TRUE(h.ok());
    for (uint64_t off = h->size; off < bytes.size();) {
      format::ChunkProbe probe;
      absl::StatusOr<format::ChunkInfo> info =
          format::ParseChunkHeader(absl::string_view(bytes).substr(off), off, &probe);
      if (!info.ok() || probe != format::ChunkProbe::kHeader) break;
      offsets.push_back(off);
      off += info->total_size();
    }
  }
  ASSERT_GT(offsets.size(), 4u);
  bytes[offsets[offsets.size() / 2] + format::kChunkHeaderSize + 5] ^= 0x5a;
  const std::string bad = TempPath("salvage_bad.cltrace");
  {
    std::ofstream out(bad, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  format::LoadOptions load;
  load.salvage = true;
  absl::StatusOr<format::LoadedTrace> whole = format::LoadTrace(bad, load);
  ASSERT_TRUE(whole.ok() && whole->error.ok());
  ASSERT_EQ(whole->stats.corrupt_chunks_skipped, 1u);
  for (uint64_t coarse_above : {uint64_t{1} << 40, uint64_t{0}}) {
    BuildOptions options;
    options.salvage = true;
    options.coarse_above = coarse_above;
    options.coarse_block_calls = 50;
    absl::StatusOr<std::unique_ptr<TraceModel>> m = TraceModel::Open(bad, options);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ((*m)->data().stats.corrupt_chunks_skipped, 1u);
    ExpectCallsMatch(**m, whole->events, absl::StrCat("salvaged, coarse_above ", coarse_above));
  }
  std::remove(bad.c_str());
}

// The checker refusing a call in the middle of a long stream (a seq used twice: a damaged
// file) ends the two-thread pass with its error, the decoding thread stopped, whatever the
// point the decoder reached; the model is not built.
TEST(ModelScaleTest, CheckerErrorMidStreamStopsTheLoad) {
  const std::string path = TempPath("repeated.cltrace");
  testing::SyntheticTrace t = testing::MakeSmallCommandListTrace({.calls = 60000, .dcs = 2});
  ASSERT_GT(t.events.size(), 30001u);
  const uint64_t repeated = t.events[29999].seq;
  t.events[30000].seq = repeated;
  t.events[30000].end = 0;
  ASSERT_TRUE(testing::WriteCltrace(t, path, 16 << 10).ok());
  for (int run = 0; run < 3; ++run) {
    absl::StatusOr<std::unique_ptr<TraceModel>> m = TraceModel::Open(path);
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.status().message().find(absl::StrCat(repeated)), absl::string_view::npos)
        << m.status();
  }
  std::remove(path.c_str());
}

// A file that changes under a loaded model: decoding says so, it does not crash.
TEST(ModelScaleTest, DecodeAfterTheFileChangedIsAnError) {
  const std::string path = TempPath("changed.cltrace");
  testing::SyntheticTrace t = testing::MakeSmallCommandListTrace({.calls = 5000, .dcs = 2});
  ASSERT_TRUE(testing::WriteCltrace(t, path, 16 << 10).ok());
  absl::StatusOr<std::unique_ptr<TraceModel>> m = TraceModel::Open(path);
  ASSERT_TRUE(m.ok());
  testing::SyntheticTrace other = testing::MakeSmallCommandListTrace({.calls = 100, .dcs = 1});
  ASSERT_TRUE(testing::WriteCltrace(other, path, 16 << 10).ok());
  absl::StatusOr<std::shared_ptr<const format::Event>> e =
      (*m)->DecodeEvent((*m)->call_count() - 1);
  EXPECT_FALSE(e.ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace cltrace::inspector
