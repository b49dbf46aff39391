// `cltrace export --chrome / --sqlite / --normalize` (cli/export_chrome.h,
// cli/export_sqlite.h, format/stable_names.h) on a corpus trace, checked against what the
// checker, the lifecycle analysis and the stats compute from the same trace.
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "check/check_trace.h"
#include "check/lifecycle.h"
#include "check/stats.h"
#include "cli/export_chrome.h"
#include "cli/export_sqlite.h"
#include "cli/trace_input.h"
#include "cli/verb.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"
#include "format/load_trace.h"
#include "format/stable_names.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace cltrace::cli {
namespace {

// smallcl with planted bug R22 and an injected E_OUTOFMEMORY: command lists recycled on two
// deferred contexts, local handles, one finding.
constexpr char kTrace[] = "corpus/traces/smallcl_R22.cltrace";

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/export_test_", getpid(), "_", name);
}

std::unique_ptr<format::SeqStream> Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<format::SeqStream>> s = format::SeqStream::Open(path);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

// What the other analyses say about the trace.
struct Expected {
  format::LoadedTrace trace;
  check::Lifecycle lifecycle;
  check::CheckResult check;
  check::TraceStats stats;
  uint64_t lifetimes = 0;  // CL, DC and local lifetimes
  std::set<uint32_t> threads;
};

Expected Analyse(const std::string& path) {
  Expected x;
  absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(path);
  EXPECT_TRUE(t.ok()) << t.status();
  x.trace = *std::move(t);
  absl::StatusOr<check::Lifecycle> lc = check::AnalyzeLifecycle(x.trace.events, x.trace.handles);
  EXPECT_TRUE(lc.ok()) << lc.status();
  x.lifecycle = *std::move(lc);
  check::CheckOptions options;
  options.strings = &x.trace.strings;
  absl::StatusOr<check::CheckResult> r =
      check::CheckTrace(options, x.trace.events, x.trace.handles);
  EXPECT_TRUE(r.ok()) << r.status();
  x.check = *std::move(r);
  absl::StatusOr<check::TraceStats> st = check::ComputeStats(x.trace.events, x.trace.handles);
  EXPECT_TRUE(st.ok()) << st.status();
  x.stats = *std::move(st);
  for (const check::Lifetime& l : x.lifecycle.lifetimes)
    if (l.role == check::HandleRole::kCommandList ||
        l.role == check::HandleRole::kDeferredContext || l.role == check::HandleRole::kLocal)
      ++x.lifetimes;
  for (const format::Event& e : x.trace.events) x.threads.insert(e.tid);
  return x;
}

TEST(ExportChromeTest, TracksSlicesAndFindingsMatchTheTrace) {
  const Expected x = Analyse(kTrace);
  ASSERT_GT(x.lifetimes, 0u);
  ASSERT_FALSE(x.check.violations.empty());
  std::unique_ptr<format::SeqStream> in = Open(kTrace);
  ASSERT_NE(in, nullptr);
  std::ostringstream json;
  absl::StatusOr<WalkSummary> s =
      ExportChrome(*in, ReplayOf(kTrace, false), check::CheckOptions(), json);
  ASSERT_TRUE(s.ok()) << s.status();

  rapidjson::Document doc;
  doc.Parse(json.str().c_str());
  ASSERT_FALSE(doc.HasParseError()) << doc.GetParseError() << " at " << doc.GetErrorOffset();
  ASSERT_TRUE(doc.IsObject());
  const auto& events = doc["traceEvents"];
  ASSERT_TRUE(events.IsArray());
  uint64_t begins = 0, ends = 0, findings = 0, callbacks_nested = 0;
  std::set<uint64_t> threads, handle_tracks;
  std::set<std::string> finding_names;
  std::map<uint64_t, std::vector<uint64_t>> stacks;  // tid -> seqs of open slices
  std::set<std::string> state_names;
  for (const auto& e : events.GetArray()) {
    const std::string ph = e["ph"].GetString();
    const int pid = e["pid"].GetInt();
    const uint64_t tid = e["tid"].GetUint64();
    if (ph == "B") {
      ASSERT_EQ(pid, kChromeThreadsPid);
      ++begins;
      threads.insert(tid);
      const std::string name = e["name"].GetString();
      EXPECT_TRUE(absl::StrContains(name, "::")) << name;  // TABLE::DDI
      std::vector<uint64_t>& stack = stacks[tid];
      if (e["args"].HasMember("parent")) {
        // A callback (or a call made inside one) nests inside the call it was made in.
        ASSERT_FALSE(stack.empty()) << name;
        EXPECT_EQ(stack.back(), e["args"]["parent"].GetUint64()) << name;
        ++callbacks_nested;
      }
      stack.push_back(e["args"]["seq"].GetUint64());
    } else if (ph == "E") {
      ++ends;
      ASSERT_FALSE(stacks[tid].empty());
      stacks[tid].pop_back();
    } else if (ph == "M") {
      if (pid != kChromeThreadsPid && std::string(e["name"].GetString()) == "thread_name")
        handle_tracks.insert(pid * 1000000 + tid);
    } else if (ph == "X" || (ph == "i" && std::string(e["cat"].GetString()) == "state")) {
      EXPECT_NE(pid, kChromeThreadsPid);
      state_names.insert(e["name"].GetString());
      if (ph == "X") {
        EXPECT_GE(e["dur"].GetDouble(), 0.0);
      }
    } else if (ph == "i") {
      ASSERT_EQ(std::string(e["cat"].GetString()), "finding");
      ++findings;
      finding_names.insert(e["name"].GetString());
    }
  }
  EXPECT_EQ(begins, x.trace.events.size());
  EXPECT_EQ(ends, x.trace.events.size());
  EXPECT_GT(callbacks_nested, 0u);
  EXPECT_EQ(threads.size(), x.threads.size());
  EXPECT_EQ(handle_tracks.size(), x.lifetimes);
  EXPECT_EQ(findings, x.check.violations.size() + x.check.warnings.size());
  EXPECT_TRUE(finding_names.count(x.check.violations[0].id())) << "R22 in the name";
  for (const std::string& n : state_names) {
    bool known = false;
    for (int i = 0; i <= static_cast<int>(check::State::kDestroyed); ++i)
      known |= check::StateName(static_cast<check::State>(i)) == n;
    EXPECT_TRUE(known) << n;
  }
  EXPECT_TRUE(state_names.count("Recycled")) << "command lists recycled";
  // The corpus is normalised: its timestamps are seq x the unit, which the metadata says.
  const auto& meta = doc["metadata"];
  EXPECT_EQ(std::string(meta["timestamps"].GetString()), "positions");
  EXPECT_TRUE(meta["timestamps_derived"].GetBool());
  EXPECT_EQ(meta["calls"].GetUint64(), x.trace.events.size());
  EXPECT_EQ(meta["handle_tracks"].GetUint64(), x.lifetimes);
}

// A recording says where its timestamps come from (WriterInfo.timestamps), and the export
// passes it on.
TEST(ExportChromeTest, DerivedTimestampsAreSaidInTheMetadata) {
  absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(kTrace);
  ASSERT_TRUE(t.ok());
  // A trace whose timestamps are not seq x unit and whose writer does not say: "unknown".
  const std::string path = TempPath("jitter.jsonl");
  {
    std::ofstream f(path);
    f << R"({"seq":1,"tid":1,"fn":"Flush","args":{"hDevice":"d"},"end":2})"
      << "\n";
  }
  std::unique_ptr<format::SeqStream> in = Open(path);
  ASSERT_NE(in, nullptr);
  std::ostringstream json;
  ASSERT_TRUE(ExportChrome(*in, ReplayOf(path, false), check::CheckOptions(), json).ok());
  rapidjson::Document doc;
  doc.Parse(json.str().c_str());
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_EQ(std::string(doc["metadata"]["timestamps"].GetString()), "none");
  std::remove(path.c_str());
}

// Runs `sql` and returns its rows, columns joined by '|'.
std::vector<std::string> Query(sqlite3* db, const std::string& sql) {
  std::vector<std::string> rows;
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db) << "\n"
      << sql;
  if (st == nullptr) return rows;
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::vector<std::string> cols;
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      const unsigned char* t = sqlite3_column_text(st, i);
      cols.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
    }
    rows.push_back(absl::StrJoin(cols, "|"));
  }
  sqlite3_finalize(st);
  return rows;
}

// The three queries of README.md's "Querying a trace with SQL" (its first ```sql block).
std::vector<std::string> ReadmeQueries() {
  std::ifstream f("README.md");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string readme = ss.str();
  const size_t section = readme.find("## Querying a trace with SQL");
  EXPECT_NE(section, std::string::npos);
  const size_t begin = readme.find("```sql\n", section);
  const size_t end = readme.find("```\n", begin + 7);
  std::vector<std::string> queries;
  for (absl::string_view q :
       absl::StrSplit(readme.substr(begin + 7, end - begin - 7), ';', absl::SkipWhitespace())) {
    if (!absl::StripAsciiWhitespace(q).empty()) queries.emplace_back(q);
  }
  return queries;
}

TEST(ExportSqliteTest, ReadmeQueriesAgreeWithLifecycleStatsAndCheck) {
  const Expected x = Analyse(kTrace);
  const std::string db_path = TempPath("t.db");
  std::unique_ptr<format::SeqStream> in = Open(kTrace);
  ASSERT_NE(in, nullptr);
  absl::StatusOr<WalkSummary> s =
      ExportSqlite(*in, ReplayOf(kTrace, false), check::CheckOptions(), db_path);
  ASSERT_TRUE(s.ok()) << s.status();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);

  EXPECT_EQ(Query(db, "SELECT count(*) FROM calls"),
            std::vector<std::string>{absl::StrCat(x.trace.events.size())});
  EXPECT_EQ(Query(db, "SELECT count(*) FROM handles"),
            std::vector<std::string>{absl::StrCat(x.lifetimes)});
  EXPECT_EQ(
      Query(db, "SELECT count(*) FROM findings"),
      std::vector<std::string>{absl::StrCat(x.check.violations.size() + x.check.warnings.size())});
  EXPECT_EQ(Query(db, "SELECT rule, seq FROM findings LIMIT 1"),
            std::vector<std::string>{
                absl::StrCat(x.check.violations[0].id(), "|", x.check.violations[0].seq)});
  // Intervals: as many as the lifecycle analysis has for those roles.
  uint64_t intervals = 0;
  for (const check::Lifetime& l : x.lifecycle.lifetimes)
    if (l.role != check::HandleRole::kObject && l.role != check::HandleRole::kImmediateContext)
      intervals += l.intervals.size();
  EXPECT_EQ(Query(db, "SELECT count(*) FROM intervals"),
            std::vector<std::string>{absl::StrCat(intervals)});

  const std::vector<std::string> queries = ReadmeQueries();
  ASSERT_EQ(queries.size(), 3u);

  // 1. Command lists alive longer than 200 calls: from creation to destruction (or the end).
  std::vector<std::string> want1;
  const uint64_t last_seq = x.trace.events.back().seq;
  for (const check::Lifetime& l : x.lifecycle.lifetimes) {
    if (l.role != check::HandleRole::kCommandList) continue;
    const check::Interval& final_iv = l.intervals.back();
    const bool destroyed =
        final_iv.state == check::State::kDestroyed || final_iv.state == check::State::kCreateFailed;
    const uint64_t from = l.first_seq(), to = destroyed ? final_iv.from_seq : last_seq;
    uint64_t calls = 0;
    for (const format::Event& e : x.trace.events) calls += e.seq >= from && e.seq <= to;
    if (calls > 200)
      want1.push_back(absl::StrCat(x.trace.handles.Token(l.handle), "|", l.lifetime, "|", calls));
  }
  std::sort(want1.begin(), want1.end());
  std::vector<std::string> got1 = Query(db, queries[0]);
  std::sort(got1.begin(), got1.end());
  EXPECT_FALSE(want1.empty());
  EXPECT_EQ(got1, want1);

  // 2. Recycle hit rate per deferred context: the made and recycled counts add up to stats'.
  uint64_t made = 0, recycled = 0;
  for (const std::string& row : Query(db, queries[1])) {
    std::vector<std::string> cols = absl::StrSplit(row, '|');
    ASSERT_EQ(cols.size(), 4u) << row;
    made += std::stoull(cols[1]);
    recycled += std::stoull(cols[2]);
  }
  EXPECT_EQ(made, x.stats.creates + x.stats.recycle_creates);
  EXPECT_EQ(recycled, x.stats.recycle_creates);
  EXPECT_GT(recycled, 0u);

  // 3. Which DDI returned E_OUTOFMEMORY: the calls whose HRESULT is that, and the failed
  // recycle the lifecycle shows (RecycleCreateFailed).
  std::map<std::string, uint64_t> oom;
  const int32_t kOom = static_cast<int32_t>(0x8007000E);
  for (const format::Event& e : x.trace.events) {
    const format::CallInfo* ci = format::GetCall(e.call);
    if (ci->ret == format::ReturnKind::kHresult && e.end != 0 && e.ret == kOom) ++oom[ci->name];
  }
  uint64_t failed_recycles = 0;
  for (const check::Lifetime& l : x.lifecycle.lifetimes)
    for (const check::Interval& iv : l.intervals)
      failed_recycles += iv.state == check::State::kRecycleCreateFailed;
  ASSERT_EQ(failed_recycles, 1u);
  std::vector<std::string> want3;
  for (const auto& [fn, n] : oom) want3.push_back(absl::StrCat(fn, "|", n));
  std::vector<std::string> got3;
  for (const std::string& row : Query(db, queries[2])) {
    std::vector<std::string> cols = absl::StrSplit(row, '|');
    ASSERT_EQ(cols.size(), 3u) << row;
    got3.push_back(absl::StrCat(cols[1], "|", cols[2]));
  }
  std::sort(got3.begin(), got3.end());
  EXPECT_EQ(got3, want3);
  EXPECT_EQ(oom["RecycleCreateCommandList"], failed_recycles);

  // Arguments: the handle column names the handle.
  EXPECT_EQ(Query(db,
                  "SELECT count(*) > 0 FROM args WHERE name = 'hCommandList' AND handle = "
                  "value"),
            std::vector<std::string>{"1"});
  sqlite3_close(db);
  std::remove(db_path.c_str());
}

// A damaged trace: exit 2 with the offset, and what was read before the damage is still a
// valid JSON file / a database that says it is incomplete.
TEST(ExportChromeTest, DamagedTraceIsExitTwoAndTheOutputSaysIncomplete) {
  std::ifstream f(kTrace, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  bytes[bytes.size() / 2] ^= 0x5a;  // inside a chunk: its CRC no longer matches
  const std::string bad = TempPath("bad.cltrace");
  std::ofstream(bad, std::ios::binary | std::ios::trunc) << bytes;
  const std::string json_path = TempPath("bad.json");
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"cltrace", "export", bad, "--chrome", json_path}, out, err), kExitBadInput);
  EXPECT_TRUE(absl::StrContains(err.str(), "offset")) << err.str();
  std::ifstream j(json_path);
  std::string json((std::istreambuf_iterator<char>(j)), std::istreambuf_iterator<char>());
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  ASSERT_FALSE(doc.HasParseError()) << json.substr(0, 200);
  EXPECT_TRUE(doc["metadata"].HasMember("incomplete"));

  const std::string db_path = TempPath("bad.db");
  err.str("");
  EXPECT_EQ(RunCli({"cltrace", "export", bad, "--sqlite", db_path}, out, err), kExitBadInput);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  EXPECT_EQ(Query(db, "SELECT count(*) FROM meta WHERE key = 'incomplete'"),
            std::vector<std::string>{"1"});
  sqlite3_close(db);
  for (const std::string& p : {bad, json_path, db_path}) std::remove(p.c_str());
}

// docs/sql.md shows the schema the exporter creates.
TEST(ExportSqliteTest, DocsShowTheSchema) {
  std::ifstream f("docs/sql.md");
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_TRUE(absl::StrContains(ss.str(), kSqliteSchema));
  EXPECT_TRUE(absl::StrContains(ss.str(), kSqliteIndexes));
}

TEST(ExportNormalizeTest, HandlesGetKindNamesAndThreadsNumbers) {
  const std::string path = TempPath("n.jsonl");
  {
    std::ofstream f(path);
    f << R"({"seq":1,"tid":4242,"fn":"CreateCommandList","args":{"hDevice":"0x5500",)"
         R"("pCreateCommandList":true,"hDeferredContext":"0x9900","hCommandList":"0x7700",)"
         R"("hRTCommandList":"0x1234"},"end":2})"
      << "\n"
      << R"({"seq":3,"tid":77,"fn":"Flush","args":{"hDevice":"0x5500"},"end":4})"
      << "\n";
  }
  std::unique_ptr<format::SeqStream> in = Open(path);
  ASSERT_NE(in, nullptr);
  format::Normalizer n;
  std::vector<std::string> lines;
  format::Event e;
  while (in->Next(&e)) {
    n.Rewrite(&e, in->handles());
    lines.push_back(format::EventToJsonl(e, n.names(), in->strings()));
  }
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            R"({"seq":1,"tid":1,"fn":"CreateCommandList","args":{"hDevice":"dev#1",)"
            R"("pCreateCommandList":true,"hDeferredContext":"dc#1","hCommandList":"cl#1",)"
            R"("hRTCommandList":"rtcl#1"},"end":2})");
  EXPECT_EQ(lines[1], R"({"seq":3,"tid":2,"fn":"Flush","args":{"hDevice":"dev#1"},"end":4})");
  std::remove(path.c_str());
}

// Two exports of one trace with --normalize give the same bytes, and the verb refuses a
// normalised Chrome or SQLite export and two outputs at once.
TEST(ExportNormalizeTest, VerbFlags) {
  const std::string a = TempPath("a.jsonl");
  std::ostringstream out, err;
  ASSERT_EQ(RunCli({"cltrace", "export", kTrace, "--normalize", "-o", a}, out, err), kExitOk)
      << err.str();
  std::ifstream f(a);
  std::string first;
  std::getline(f, first);
  EXPECT_TRUE(absl::StrContains(first, "#1")) << first;
  EXPECT_EQ(RunCli({"cltrace", "export", kTrace, "--normalize", "--chrome", a}, out, err),
            kExitBadInput);
  EXPECT_EQ(RunCli({"cltrace", "export", kTrace, "-o", a, "--sqlite", a}, out, err), kExitBadInput);
  EXPECT_EQ(RunCli({"cltrace", "export", kTrace, "--sqlite", "-"}, out, err), kExitBadInput);
  std::remove(a.c_str());
}

}  // namespace
}  // namespace cltrace::cli
