// End-to-end tests of `cltrace dump`'s filters and its decoded text (issue #17 item 8): every
// printed call matches the filters, and the calls printed are exactly those a direct scan of
// the loaded trace selects.
#include <cstdint>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ddi/catalog.h"
#include "format/load_trace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "tests/testing/command_test.h"

namespace cltrace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kScene[] = CLTRACE_SOURCE_DIR "/corpus/traces/scene.cltrace";
constexpr char kSmallcl[] = CLTRACE_SOURCE_DIR "/corpus/traces/smallcl.cltrace";

// The one JSON document `out` must be (nothing else on standard output).
rapidjson::Document ParseJson(const std::string& out) {
  rapidjson::Document d;
  d.Parse(out.c_str(), out.size());
  EXPECT_FALSE(d.HasParseError()) << "not one JSON document: " << out.substr(0, 200);
  EXPECT_TRUE(d.IsObject());
  return d;
}

// The first line of `text` starting with `prefix` (after leading blanks), "" if none.
std::string LineWith(const std::string& text, absl::string_view prefix) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), prefix)) return std::string(line);
  }
  return "";
}

class DumpE2eTest : public ::cltrace::testing::CommandTest {
 protected:
  ::cltrace::testing::CommandResult Dump(const std::string& args) {
    return Run(absl::StrCat(CLTRACE_BIN, " dump ", args));
  }
  // The seq column of dump's text (header skipped).
  static std::vector<uint64_t> Seqs(const std::string& text) {
    std::vector<uint64_t> seqs;
    for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
      std::vector<absl::string_view> cols =
          absl::StrSplit(absl::StripLeadingAsciiWhitespace(line), ' ', absl::SkipEmpty());
      uint64_t seq = 0;
      if (!cols.empty() && absl::SimpleAtoi(cols[0], &seq)) seqs.push_back(seq);
    }
    return seqs;
  }
};

// The handle ids in any handle field of `e` (array elements included), walked here from the
// catalog independently of the tool.
std::set<uint64_t> HandlesOf(const format::Event& e) {
  std::set<uint64_t> out;
  const format::CallInfo* call = format::GetCall(e.call);
  if (call == nullptr) return out;
  auto fields = format::Fields(*call);
  size_t tail = fields.size();
  for (size_t i = 0; i < fields.size() && i < e.args.size(); ++i) {
    if (fields[i].kind == format::FieldKind::kHandle) out.insert(e.args[i]);
    if (fields[i].kind != format::FieldKind::kArray || e.args[i] == 0) continue;
    auto elems = format::ElementFields(fields[i]);
    for (uint64_t k = 0; k + 1 < e.args[i]; ++k) {
      for (const format::FieldInfo& f : elems) {
        if (tail < e.args.size() && f.kind == format::FieldKind::kHandle) out.insert(e.args[tail]);
        ++tail;
      }
    }
  }
  out.erase(0);
  return out;
}

TEST_F(DumpE2eTest, FiltersPrintExactlyTheCallsADirectScanSelects) {
  absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(kScene);
  ASSERT_TRUE(t.ok()) << t.status();
  // A DC's DrawIndexed: its thread and its device handle (the DC) drive the filters.
  const format::Event* draw = nullptr;
  for (const format::Event& e : t->events)
    if (e.call == format::CallId::kDrawIndexed && e.tid != t->events[0].tid) draw = &e;
  ASSERT_NE(draw, nullptr);
  const uint32_t tid = draw->tid;
  const uint64_t dc = draw->args[0];
  const std::string dc_token(t->handles.Token(dc));
  const uint64_t from = 100, to = 2000;

  struct Case {
    std::string args;
    bool want_tid, want_fn, want_handle, want_range;
  };
  const std::vector<Case> cases = {
      {absl::StrCat("--tid ", tid), true, false, false, false},
      {"--fn DrawIndexed", false, true, false, false},
      {absl::StrCat("--handle ", dc_token), false, false, true, false},
      {absl::StrCat("--from ", from, " --to ", to), false, false, false, true},
      {absl::StrCat("--tid ", tid, " --fn DrawIndexed --handle ", dc_token, " --from ", from,
                    " --to ", to),
       true, true, true, true},
      {absl::StrCat("--handle ", dc_token, " --to ", to), false, false, true, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const bool to_only = absl::StrContains(c.args, "--to") && !c.want_range;
    std::vector<uint64_t> want;
    for (const format::Event& e : t->events) {
      if (c.want_tid && e.tid != tid) continue;
      if (c.want_fn && e.call != format::CallId::kDrawIndexed) continue;
      if (c.want_handle && HandlesOf(e).count(dc) == 0) continue;
      if (c.want_range && (e.seq < from || e.seq > to)) continue;
      if (to_only && e.seq > to) continue;
      want.push_back(e.seq);
    }
    ASSERT_FALSE(want.empty());
    auto text = Dump(absl::StrCat(kScene, " ", c.args));
    ASSERT_EQ(text.exit, 0) << text.err;
    EXPECT_EQ(Seqs(text.out), want);
    for (absl::string_view line : absl::StrSplit(text.out, '\n', absl::SkipEmpty())) {
      if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "seq")) continue;
      if (c.want_fn) {
        EXPECT_THAT(line, HasSubstr("::DrawIndexed("));
      }
      if (c.want_handle) {
        EXPECT_THAT(line, HasSubstr(dc_token));
      }
    }
    // The JSONL form selects the same calls (a .cltrace is then read from --from by its index).
    auto json = Dump(absl::StrCat(kScene, " --json ", c.args));
    ASSERT_EQ(json.exit, 0) << json.err;
    std::vector<uint64_t> json_seqs;
    for (absl::string_view line : absl::StrSplit(json.out, '\n', absl::SkipEmpty())) {
      const size_t at = line.find("\"seq\":");
      ASSERT_NE(at, absl::string_view::npos);
      uint64_t seq = 0;
      absl::string_view rest = line.substr(at + 6);
      ASSERT_TRUE(absl::SimpleAtoi(rest.substr(0, rest.find_first_of(",}")), &seq)) << line;
      json_seqs.push_back(seq);
    }
    EXPECT_EQ(json_seqs, want);
    // --count keeps the first N of the calls the filters keep.
    auto first = Dump(absl::StrCat(kScene, " ", c.args, " --count 3"));
    ASSERT_EQ(first.exit, 0) << first.err;
    EXPECT_EQ(Seqs(first.out),
              std::vector<uint64_t>(want.begin(), want.begin() + std::min<size_t>(3, want.size())));
  }
}

TEST_F(DumpE2eTest, FnWithATableKeepsTheCallsThroughThatTable) {
  absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(kScene);
  ASSERT_TRUE(t.ok()) << t.status();
  size_t all = 0;
  for (const format::Event& e : t->events) all += e.call == format::CallId::kDrawIndexed;
  auto dc = Dump(absl::StrCat(kScene, " --fn DC::DrawIndexed"));
  auto ic = Dump(absl::StrCat(kScene, " --fn IC::DrawIndexed"));
  ASSERT_EQ(dc.exit, 0) << dc.err;
  ASSERT_EQ(ic.exit, 0) << ic.err;
  EXPECT_GT(Seqs(dc.out).size(), 0u);
  EXPECT_EQ(Seqs(dc.out).size() + Seqs(ic.out).size(), all);
  for (absl::string_view line : absl::StrSplit(dc.out, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "seq")) {
      EXPECT_THAT(line, HasSubstr("DC::DrawIndexed("));
    }
  }
}

TEST_F(DumpE2eTest, BadFiltersAreExitTwo) {
  auto fn = Dump(absl::StrCat(kScene, " --fn NoSuchCall"));
  EXPECT_EQ(fn.exit, 2);
  EXPECT_THAT(fn.err, HasSubstr("NoSuchCall"));
  auto handle = Dump(absl::StrCat(kScene, " --handle nosuchhandle"));
  EXPECT_EQ(handle.exit, 2);
  EXPECT_THAT(handle.err, HasSubstr("nosuchhandle"));
  EXPECT_EQ(Dump(absl::StrCat(kScene, " --from 10 --to 5")).exit, 2);
  EXPECT_EQ(Dump(absl::StrCat(kScene, " --tid x")).exit, 2);
}

// Enums by name (DXGI_FORMAT fields among them, named by their catalog type), the table marked,
// annotations shown, shader bytecode as a digest of its dwords.
TEST_F(DumpE2eTest, TextDecodesFormatsMarksTablesAndDigestsShaders) {
  absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(kScene);
  ASSERT_TRUE(t.ok()) << t.status();
  const format::Event* vs = nullptr;
  for (const format::Event& e : t->events)
    if (e.call == format::CallId::kCreateVertexShader && vs == nullptr) vs = &e;
  ASSERT_NE(vs, nullptr);
  // pCode is the first array: its elements follow the fixed fields.
  const format::CallInfo* ci = format::GetCall(vs->call);
  const int code = format::FieldIndex(*ci, "pCode");
  ASSERT_GE(code, 0);
  const uint64_t dwords = vs->args[code] - 1;
  uint32_t hash = 2166136261u;
  for (uint64_t k = 0; k < dwords; ++k) {
    const uint32_t dword = static_cast<uint32_t>(vs->args[format::Fields(*ci).size() + k]);
    for (int b = 0; b < 4; ++b) {
      hash ^= (dword >> (8 * b)) & 0xff;
      hash *= 16777619u;
    }
  }
  auto shader = Dump(absl::StrCat(kScene, " --from ", vs->seq, " --count 1"));
  ASSERT_EQ(shader.exit, 0) << shader.err;
  EXPECT_THAT(shader.out, HasSubstr(absl::StrFormat("IC::CreateVertexShader(hDevice=")));
  EXPECT_THAT(shader.out,
              HasSubstr(absl::StrFormat("pCode=<%d dwords, fnv1a 0x%08x>", dwords, hash)));
  EXPECT_THAT(shader.out, HasSubstr("  # CreateShader"));

  auto res = Dump(absl::StrCat(kScene, " --fn CreateResource --count 1"));
  ASSERT_EQ(res.exit, 0) << res.err;
  EXPECT_THAT(res.out, HasSubstr("IC::CreateResource("));
  EXPECT_THAT(res.out, HasSubstr("Format=DXGI_FORMAT_R8G8B8A8_UNORM"));
  EXPECT_THAT(res.out, HasSubstr("ResourceDimension=D3D10DDIRESOURCE_TEXTURE2D"));
  EXPECT_THAT(res.out, Not(HasSubstr("Format=28")));
  auto ib = Dump(absl::StrCat(kScene, " --fn IaSetIndexBuffer --count 1"));
  ASSERT_EQ(ib.exit, 0) << ib.err;
  EXPECT_THAT(ib.out, HasSubstr("Format=DXGI_FORMAT_R16_UINT"));
  auto layout = Dump(absl::StrCat(kScene, " --fn CreateElementLayout --count 1"));
  ASSERT_EQ(layout.exit, 0) << layout.err;
  EXPECT_THAT(layout.out, HasSubstr("{Format=DXGI_FORMAT_R32G32B32_FLOAT}"));

  // Flags as A|B, named from the catalog.
  const std::string dp2 = CLTRACE_SOURCE_DIR "/corpus/traces/dp2.cltrace";
  absl::StatusOr<format::LoadedTrace> t2 = format::LoadTrace(dp2);
  ASSERT_TRUE(t2.ok()) << t2.status();
  bool checked = false;
  for (const format::Event& e : t2->events) {
    const format::CallInfo* call = format::GetCall(e.call);
    if (call == nullptr || checked) continue;
    auto fields = format::Fields(*call);
    for (size_t i = 0; i < fields.size() && !checked; ++i) {
      const uint64_t v = e.args[i];
      if (fields[i].kind != format::FieldKind::kFlags || (v & (v - 1)) == 0) continue;
      std::optional<std::string> name =
          format::NameOfValue(format::Enums()[fields[i].type_index], v);
      if (!name || !absl::StrContains(*name, "|")) continue;
      auto line = Dump(absl::StrCat(dp2, " --from ", e.seq, " --count 1"));
      EXPECT_THAT(line.out, HasSubstr(absl::StrCat(fields[i].name, "=", *name)));
      checked = true;
    }
  }
  EXPECT_TRUE(checked) << "no multi-bit flags value in " << dp2;

  // Callbacks and kernel calls carry their layer's table.
  auto cb = Dump(absl::StrCat(kScene, " --fn AllocateCb --count 1"));
  EXPECT_THAT(cb.out, HasSubstr("KernelCb::AllocateCb("));
}

// --json on info, stats, lifecycle and replay: one document with the text's figures.
TEST_F(DumpE2eTest, InfoJsonHasTheFiguresOfTheText) {
  for (const char* trace :
       {kScene, kSmallcl, CLTRACE_SOURCE_DIR "/corpus/jsonl/cl_recycle.jsonl"}) {
    SCOPED_TRACE(trace);
    auto text = Run(absl::StrCat(CLTRACE_BIN, " info ", trace));
    auto json = Run(absl::StrCat(CLTRACE_BIN, " info --json ", trace));
    ASSERT_EQ(json.exit, text.exit) << json.err;
    rapidjson::Document d = ParseJson(json.out);
    ASSERT_TRUE(d.IsObject());
    EXPECT_EQ(LineWith(text.out, "calls "),
              absl::StrFormat(
                  "calls           %d (%d DDI call%s, %d callback%s, %d never returned)",
                  d["calls"].GetUint64(), d["ddi_calls"].GetUint64(),
                  d["ddi_calls"].GetUint64() == 1 ? "" : "s", d["callbacks"].GetUint64(),
                  d["callbacks"].GetUint64() == 1 ? "" : "s", d["never_returned"].GetUint64()));
    EXPECT_EQ(LineWith(text.out, "threads"),
              absl::StrFormat("threads         %d", d["threads"].GetUint64()));
    EXPECT_EQ(LineWith(text.out, "seq range"),
              absl::StrFormat("seq range       %d .. %d", d["seq_range"][0].GetUint64(),
                              d["seq_range"][1].GetUint64()));
    // Every function and thread row of the text, with its count.
    uint64_t rows = 0;
    for (const auto& m : d["calls_per_function"].GetObject()) {
      const std::string name = m.name.GetString();
      const std::string line = LineWith(text.out, name + " ");
      std::vector<absl::string_view> cols = absl::StrSplit(line, ' ', absl::SkipEmpty());
      ASSERT_EQ(cols.size(), 2u) << name;
      EXPECT_EQ(cols[1], absl::StrCat(m.value.GetUint64())) << name;
      rows += m.value.GetUint64();
    }
    EXPECT_EQ(rows, d["calls"].GetUint64());
    for (const auto& m : d["calls_per_thread"].GetObject()) {
      const std::string line = LineWith(text.out, absl::StrCat("tid ", m.name.GetString(), " "));
      EXPECT_TRUE(absl::EndsWith(line, absl::StrCat(" ", m.value.GetUint64()))) << line;
    }
  }
}

TEST_F(DumpE2eTest, StatsJsonHasTheFiguresOfTheText) {
  for (const char* trace : {kScene, kSmallcl}) {
    SCOPED_TRACE(trace);
    auto text = Run(absl::StrCat(CLTRACE_BIN, " stats ", trace));
    auto json = Run(absl::StrCat(CLTRACE_BIN, " stats ", trace, " --json"));
    ASSERT_EQ(text.exit, 0) << text.err;
    ASSERT_EQ(json.exit, 0) << json.err;
    rapidjson::Document d = ParseJson(json.out);
    ASSERT_TRUE(d.IsObject());
    const auto& cl = d["command_lists"];
    EXPECT_EQ(LineWith(text.out, "calls:"), absl::StrCat("calls: ", d["calls"].GetUint64()));
    EXPECT_EQ(LineWith(text.out, "command lists:"),
              absl::StrFormat("command lists: %d created, %d recycle-created (%d failed), recycle "
                              "hit rate %.1f%%",
                              cl["created"].GetUint64(), cl["recycle_created"].GetUint64(),
                              cl["recycle_create_failures"].GetUint64(),
                              100.0 * cl["recycle_hit_rate"].GetDouble()));
    EXPECT_EQ(LineWith(text.out, "finishes:"),
              absl::StrFormat("finishes: %d (%d failed), abandons: %d", d["finishes"].GetUint64(),
                              d["failed_finishes"].GetUint64(), d["abandons"].GetUint64()));
    EXPECT_THAT(LineWith(text.out, "peak:"),
                HasSubstr(absl::StrFormat("peak: %d command lists (seq %d)",
                                          d["peak"]["command_lists"].GetUint64(),
                                          d["peak"]["seq"].GetUint64())));
    // One text row per callback count.
    for (const auto& c : d["callbacks"].GetArray()) {
      EXPECT_THAT(text.out,
                  HasSubstr(absl::StrFormat("\n  %-40s %-36s %d\n", c["ddi"].GetString(),
                                            c["callback"].GetString(), c["count"].GetUint64())));
    }
    EXPECT_GT(d["callbacks"].Size(), 0u);
  }
}

TEST_F(DumpE2eTest, LifecycleJsonHasTheLifetimesOfTheText) {
  // --handle: the trace's first deferred context (handle values follow the corpus' heap).
  const std::string all = Run(absl::StrCat(CLTRACE_BIN, " lifecycle ", kSmallcl)).out;
  const std::string dc = LineWith(all, "deferred context ");
  ASSERT_FALSE(dc.empty()) << all;
  const absl::string_view rest = absl::StripPrefix(dc, "deferred context ");
  const std::string handle(rest.substr(0, rest.find(' ')));
  for (const std::string& args :
       {std::string(kSmallcl), std::string(kScene), absl::StrCat(kSmallcl, " --handle ", handle)}) {
    SCOPED_TRACE(args);
    auto text = Run(absl::StrCat(CLTRACE_BIN, " lifecycle ", args));
    auto json = Run(absl::StrCat(CLTRACE_BIN, " lifecycle --json ", args));
    ASSERT_EQ(text.exit, 0) << text.err;
    ASSERT_EQ(json.exit, 0) << json.err;
    rapidjson::Document d = ParseJson(json.out);
    ASSERT_TRUE(d.IsObject());
    EXPECT_EQ(LineWith(text.out, "# "), absl::StrCat("# ", d["shown"].GetUint64(), " lifetimes, ",
                                                     d["calls"].GetUint64(), " calls"));
    ASSERT_EQ(d["lifetimes"].Size(), d["shown"].GetUint64());
    // The text, rebuilt from the JSON: a header per lifetime, a line per interval.
    uint64_t intervals = 0, text_intervals = 0;
    for (const auto& l : d["lifetimes"].GetArray()) {
      std::string head = absl::StrCat(l["role"].GetString(), " ", l["handle"].GetString(), " #",
                                      l["lifetime"].GetUint64());
      if (l.HasMember("owner_dc"))
        absl::StrAppend(&head, " (owner DC ", l["owner_dc"].GetString(), ")");
      if (l.HasMember("for"))
        absl::StrAppend(&head, " (for ", l["for"].GetString(), " on DC ", l["dc"].GetString(),
                        ", recording ", l["recording"].GetUint64(), ")");
      EXPECT_THAT(text.out, HasSubstr(head + "\n"));
      for (const auto& iv : l["intervals"].GetArray()) {
        ++intervals;
        const std::string range = absl::StrCat(
            "[", iv["from"].GetUint64(), ", ",
            iv["to"].IsNull() ? std::string("end") : absl::StrCat(iv["to"].GetUint64()), ")");
        EXPECT_THAT(text.out, HasSubstr(absl::StrFormat(
                                  "  %-16s %-20s %s", range, iv["state"].GetString(),
                                  iv["by"].IsNull() ? std::string("(before the trace)")
                                                    : absl::StrCat("by ", iv["by"].GetString()))));
      }
    }
    for (absl::string_view line : absl::StrSplit(text.out, '\n'))
      text_intervals += absl::StartsWith(line, "  [");
    EXPECT_EQ(intervals, text_intervals);
  }
}

TEST_F(DumpE2eTest, ReplayJsonHasTheOutcomeOfTheText) {
  struct Case {
    std::string args;
    int exit;
  };
  for (const Case& c :
       {Case{kSmallcl, 0},
        Case{absl::StrCat(kSmallcl, " --inject oom:RecycleCreateCommandList:1"), 3}}) {
    SCOPED_TRACE(c.args);
    auto text = Run(absl::StrCat(CLTRACE_BIN, " replay ", c.args));
    auto json = Run(absl::StrCat(CLTRACE_BIN, " replay --json ", c.args));
    ASSERT_EQ(text.exit, c.exit) << text.err;
    ASSERT_EQ(json.exit, c.exit) << json.err;
    rapidjson::Document d = ParseJson(json.out);
    ASSERT_TRUE(d.IsObject());
    const auto& k = d["kernel"];
    EXPECT_EQ(LineWith(text.out, "kernel:"),
              absl::StrFormat("kernel: %d submissions, %d command bytes",
                              k["submissions"].GetUint64(), k["command_bytes"].GetUint64()));
    if (c.exit == 0) {
      EXPECT_STREQ(d["outcome"].GetString(), "identical");
      EXPECT_EQ(LineWith(text.out, "replay:"),
                absl::StrCat("replay: identical (", d["calls"].GetUint64(), " calls)"));
      EXPECT_EQ(d["divergences"].Size(), 0u);
    } else {
      EXPECT_STREQ(d["outcome"].GetString(), "divergent");
      ASSERT_GE(d["divergences"].Size(), 1u);
      const auto& first = d["divergences"][0];
      EXPECT_EQ(LineWith(text.out, "replay:"),
                absl::StrFormat("replay: divergence at seq %d (fn %s, tid %d): expected %s, "
                                "actual %s",
                                first["seq"].GetUint64(), first["fn"].GetString(),
                                first["tid"].GetUint64(), first["expected"].GetString(),
                                first["actual"].GetString()));
    }
  }
}

TEST_F(DumpE2eTest, DiffJsonIsOneDocument) {
  auto same = Run(absl::StrCat(CLTRACE_BIN, " diff --json ", kSmallcl, " ", kSmallcl));
  EXPECT_EQ(same.exit, 0) << same.err;
  rapidjson::Document d = ParseJson(same.out);
  ASSERT_TRUE(d.IsObject());
  EXPECT_TRUE(d["equal"].GetBool());
}

// export keeps each call's entry time and annotation, and import reads them back: the
// round trip gives the recording's times and annotations (R5 notes included) call by call.
TEST_F(DumpE2eTest, ExportImportKeepsTimestampsAndAnnotations) {
  const std::string trace = CLTRACE_SOURCE_DIR "/corpus/traces/smallcl_R5.cltrace";
  absl::StatusOr<format::LoadedTrace> original = format::LoadTrace(trace);
  ASSERT_TRUE(original.ok()) << original.status();
  auto exported = Run(absl::StrCat(CLTRACE_BIN, " export ", trace, " -o ", Path("a.jsonl")));
  ASSERT_EQ(exported.exit, 0) << exported.err;
  auto imported =
      Run(absl::StrCat(CLTRACE_BIN, " import ", Path("a.jsonl"), " -o ", Path("b.cltrace")));
  ASSERT_EQ(imported.exit, 0) << imported.err;
  for (const std::string& name : {std::string("a.jsonl"), std::string("b.cltrace")}) {
    SCOPED_TRACE(name);
    absl::StatusOr<format::LoadedTrace> back = format::LoadTrace(Path(name));
    ASSERT_TRUE(back.ok()) << back.status();
    ASSERT_EQ(back->events.size(), original->events.size());
    size_t timed = 0, annotated = 0, r5 = 0;
    for (size_t i = 0; i < original->events.size(); ++i) {
      const format::Event& a = original->events[i];
      const format::Event& b = back->events[i];
      ASSERT_EQ(a.seq, b.seq);
      EXPECT_EQ(a.timestamp_ns, b.timestamp_ns) << "seq " << a.seq;
      EXPECT_EQ(original->strings.Token(a.annotation), back->strings.Token(b.annotation))
          << "seq " << a.seq;
      timed += a.timestamp_ns != 0;
      annotated += a.annotation != 0;
      r5 += absl::StrContains(original->strings.Token(a.annotation), "table-rewrite (R5)");
    }
    EXPECT_GT(timed, original->events.size() / 2);
    EXPECT_GT(annotated, 0u);
    EXPECT_GT(r5, 0u);
  }
  // Exported again, byte for byte the same JSONL.
  auto again = Run(absl::StrCat(CLTRACE_BIN, " export ", Path("b.cltrace"), " -o -"));
  ASSERT_EQ(again.exit, 0) << again.err;
  EXPECT_EQ(again.out, ::cltrace::testing::ReadFile(Path("a.jsonl")));
  // A bad "ts_ns" or "annotation" is a clear error with its line.
  std::ofstream(Path("bad.jsonl"))
      << "{\"seq\":1,\"tid\":1,\"fn\":\"Flush\",\"args\":{\"hDevice\":\"ic\"},\"end\":2,"
         "\"annotation\":5}\n";
  auto bad =
      Run(absl::StrCat(CLTRACE_BIN, " import ", Path("bad.jsonl"), " -o ", Path("bad.cltrace")));
  EXPECT_EQ(bad.exit, 2);
  EXPECT_THAT(bad.err, HasSubstr("\"annotation\" must be a string"));
}

}  // namespace
}  // namespace cltrace
