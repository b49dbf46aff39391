// End-to-end tests of `cltrace check`, `cltrace lifecycle` and `cltrace stats` (the built
// binary) on corpus/check, compared with tests/check/golden (CLTRACE_UPDATE_GOLDEN=1
// rewrites them), and of the whole pipeline: a runtime-model workload recorded through the
// recorder shim into a .cltrace, then judged. The workload's own detection (runtime model
// and reference driver) and the trace checker must agree on the planted bugs.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/command_test.h"
#include "tests/testing/golden.h"

namespace {

using ::testing::HasSubstr;

using ::cltrace::testing::ReadFile;
using Result = ::cltrace::testing::CommandResult;

class CheckE2eTest : public ::cltrace::testing::CommandTest {
 protected:
  Result Cltrace(const std::string& args) { return Run(absl::StrCat(CLTRACE_BIN, " ", args)); }
  static std::string Corpus(const std::string& name) {
    return absl::StrCat(CLTRACE_SOURCE_DIR, "/corpus/check/", name);
  }
  // tests/check/golden/NAME (tests/testing/golden.h: only CLTRACE_UPDATE_GOLDEN=1 rewrites).
  void ExpectGolden(const std::string& name, const std::string& actual) {
    EXPECT_TRUE(::cltrace::testing::MatchesGolden(
        absl::StrCat(CLTRACE_SOURCE_DIR, "/tests/check/golden/", name), actual));
  }
  // Records `scenario` with planted bug or misuse `rule` (*trace, the workload's output *wl):
  // the workload reports it live, and check --rules `rule` (*check) finds it (exit 1, the first
  // line one of its findings).
  void RecordAndCheck(const char* scenario, const char* rule, std::string* trace, Result* wl,
                      Result* check);
};

TEST_F(CheckE2eTest, LegalTraceIsClean) {
  Result r = Cltrace("check " + Corpus("small_cl.jsonl"));
  EXPECT_EQ(r.exit, 0) << r.err;
  // The fragment ends with its device, objects and recycled command list alive: a leak summary,
  // no finding.
  EXPECT_EQ(r.out,
            "leak: immediate context ic #1 Alive since seq=1 by CreateDevice\n"
            "leak: object vb #1 Alive since seq=3 by CreateResource\n"
            "leak: command list cl1 #1 Valid since seq=31 by RecycleCreateCommandList (owner DC "
            "dc1)\n"
            "leak: deferred context dc1 #2 Recording since seq=33 by "
            "RecycleCreateDeferredContext\n"
            "# 4 handles alive at the end of the trace (not a violation)\n"
            "# 18 calls, 0 violations, 0 warnings\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(CheckE2eTest, ViolationsTextJsonAndFilter) {
  Result text = Cltrace("check " + Corpus("released_list_executed.jsonl"));
  EXPECT_EQ(text.exit, 1) << text.err;
  ExpectGolden("released_list_executed.check.txt", text.out);
  Result json = Cltrace("check --json " + Corpus("released_list_executed.jsonl"));
  EXPECT_EQ(json.exit, 1);
  ExpectGolden("released_list_executed.check.json", json.out);
  Result only = Cltrace("check " + Corpus("released_list_executed.jsonl") + " --rules R44");
  EXPECT_EQ(only.exit, 1);
  EXPECT_THAT(only.out, ::testing::StartsWith("R44 seq="));
  EXPECT_THAT(only.out, HasSubstr("1 violations"));
}

TEST_F(CheckE2eTest, BadInputAndUsage) {
  Result missing = Cltrace("check " + dir_ + "/none.jsonl");
  EXPECT_EQ(missing.exit, 2);
  Result rule = Cltrace("check " + Corpus("small_cl.jsonl") + " --rules R99");
  EXPECT_EQ(rule.exit, 2);
  EXPECT_THAT(rule.err, HasSubstr("unknown rule \"R99\""));
  std::ofstream(dir_ + "/bad.jsonl") << "{\"seq\":1,\"tid\":1,\"fn\":\"NoSuchCall\",\"args\":{}}\n";
  Result bad = Cltrace("check " + dir_ + "/bad.jsonl");
  EXPECT_EQ(bad.exit, 2);
}

TEST_F(CheckE2eTest, LifecycleAndStats) {
  Result lc = Cltrace("lifecycle " + Corpus("small_cl.jsonl"));
  EXPECT_EQ(lc.exit, 0) << lc.err;
  ExpectGolden("small_cl.lifecycle.txt", lc.out);
  Result one = Cltrace("lifecycle " + Corpus("small_cl.jsonl") + " --handle vb");
  EXPECT_EQ(one.exit, 0) << one.err;
  ExpectGolden("small_cl.lifecycle_vb.txt", one.out);
  Result stats = Cltrace("stats " + Corpus("small_cl.jsonl"));
  EXPECT_EQ(stats.exit, 0) << stats.err;
  ExpectGolden("small_cl.stats.txt", stats.out);
}

#ifdef CLTRACE_WORKLOAD_BIN
// Records `scenario` (optionally with a planted bug) through the shim; returns the trace path.
std::string Record(CheckE2eTest* t, const std::string& dir, const std::string& scenario,
                   const std::string& bug, Result* workload) {
  (void)t;
  std::string trace = absl::StrCat(dir, "/", scenario, bug.empty() ? "" : "_", bug, ".cltrace");
  std::string cmd =
      absl::StrCat("CLTRACE_SHIM_OUTPUT='", trace, "' ", CLTRACE_WORKLOAD_BIN, " ", scenario,
                   " --frames 6 --driver ", CLTRACE_SHIM_LIB, bug.empty() ? "" : " --bug ", bug);
  std::string out = dir + "/wl.txt";
  int status = std::system(absl::StrCat(cmd, " >'", out, "' 2>&1").c_str());
  workload->exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  workload->out = ReadFile(out);
  return trace;
}

void CheckE2eTest::RecordAndCheck(const char* scenario, const char* rule, std::string* trace,
                                  Result* wl, Result* check) {
  *trace = Record(this, dir_, scenario, rule, wl);
  ASSERT_THAT(wl->out, HasSubstr(absl::StrCat(rule, " "))) << "the workload itself missed it";
  *check = Cltrace(absl::StrCat("check ", *trace, " --rules ", rule));
  EXPECT_EQ(check->exit, 1) << check->out << check->err;
  EXPECT_THAT(check->out, ::testing::StartsWith(absl::StrCat(rule, " seq="))) << check->out;
}

TEST_F(CheckE2eTest, RecordedSmallClWorkloadIsClean) {
  Result wl;
  std::string trace = Record(this, dir_, "smallcl", "", &wl);
  ASSERT_EQ(wl.exit, 0) << wl.out;
  Result r = Cltrace("check " + trace);
  EXPECT_EQ(r.exit, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(" 0 violations, 0 warnings"));
}

// (seq, fn) of every line of `text` that starts with `rule` ("R40 seq=167 fn=X ...", as the
// workload and check print them).
std::vector<std::pair<int64_t, std::string>> RuleSeqs(const std::string& text,
                                                      absl::string_view rule) {
  std::vector<std::pair<int64_t, std::string>> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, absl::StrCat(rule, " seq="))) continue;
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
    int64_t seq = 0;
    if (words.size() < 2 || !absl::SimpleAtoi(words[0], &seq)) continue;
    absl::string_view fn = words[1].size() > 3 && absl::StartsWith(words[1], "fn=")
                               ? words[1].substr(3)
                               : absl::string_view();
    out.emplace_back(seq, std::string(fn));
  }
  return out;
}

// Every call in `cltrace dump` output ("  167  170  12  IC::Name(..."), by seq.
struct DumpedCall {
  int64_t end = 0;
  std::string tid;
  std::string fn;
};
std::map<int64_t, DumpedCall> CallsBySeq(const std::string& dump) {
  std::map<int64_t, DumpedCall> calls;
  for (absl::string_view line : absl::StrSplit(dump, '\n')) {
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int64_t seq = 0, end = 0;
    if (words.size() < 4 || !absl::SimpleAtoi(words[0], &seq) || !absl::SimpleAtoi(words[1], &end))
      continue;
    // The call's name follows its table mark (IC::, DC::, KernelCb:: ...).
    absl::string_view fn = words[3].substr(0, words[3].find('('));
    if (size_t colon = fn.find("::"); colon != absl::string_view::npos) fn.remove_prefix(colon + 2);
    calls[seq] = {end, std::string(words[2]), std::string(fn)};
  }
  return calls;
}

// True when the call at `seq`, or a call of its thread it is nested in, is `fn`: a report made
// while the driver is inside a callback names the DDI call, and carries the callback's seq.
bool CallOrCallerIs(const std::map<int64_t, DumpedCall>& calls, int64_t seq,
                    const std::string& fn) {
  auto at = calls.find(seq);
  if (at == calls.end()) return false;
  for (auto it = calls.begin(); it != calls.end() && it->first <= seq; ++it) {
    if (it->second.fn == fn && it->second.tid == at->second.tid && it->second.end > seq) {
      return true;
    }
  }
  return at->second.fn == fn;
}

// Planted runtime misuse and driver bugs: the trace checker reports the same rule the
// runtime model / reference driver detected while running. Recorded, the workload's
// violation lines carry trace positions (runtime/annotation.h, CltraceTraceSeq), not the
// model's or the driver's own call counts: each names a call of the trace by its seq and
// function, and where the live run and the checker judge the same call (all of these rules
// but R67, which the live GPU model sees at the submission that references the freed
// allocation and the checker at the pfnDeallocateCb before it), at the same seq.
TEST_F(CheckE2eTest, RecordedPlantedBugsAreDetectedAtTheirTraceSeq) {
  struct Case {
    const char* scenario;
    const char* rule;
    bool same_call;
  };
  for (const Case& c :
       {Case{"smallcl", "R40", true}, Case{"smallcl", "R41", true}, Case{"smallcl", "R44", true},
        Case{"smallcl", "R45", true}, Case{"smallcl", "R46", true}, Case{"smallcl", "R16", true},
        Case{"smallcl", "R22", true}, Case{"smallcl", "R33", true}, Case{"smallcl", "R36", true},
        Case{"smallcl", "R67", false}, Case{"smallcl", "R70", true}, Case{"scene", "R52", true},
        Case{"scene", "R61", true}, Case{"present", "R75", true}}) {
    SCOPED_TRACE(c.rule);
    Result wl, r;
    std::string trace;
    ASSERT_NO_FATAL_FAILURE(RecordAndCheck(c.scenario, c.rule, &trace, &wl, &r));
    const auto live = RuleSeqs(wl.out, c.rule);
    const auto judged = RuleSeqs(r.out, c.rule);
    ASSERT_FALSE(live.empty()) << wl.out;
    Result dump = Cltrace("dump " + trace);
    ASSERT_EQ(dump.exit, 0) << dump.err;
    const std::map<int64_t, DumpedCall> calls = CallsBySeq(dump.out);
    for (const auto& [seq, fn] : live) {
      ASSERT_TRUE(calls.contains(seq))
          << "the workload printed seq=" << seq << ", which is no call's seq in the trace";
      // The GPU model's reports (R75-R78) name the kernel, not a call.
      if (fn != "kernel") {
        EXPECT_TRUE(CallOrCallerIs(calls, seq, fn))
            << "seq=" << seq << " is " << calls.at(seq).fn << ", not (inside) " << fn;
      }
      if (!c.same_call) continue;
      bool found = false;
      for (const auto& j : judged) found = found || j.first == seq;
      EXPECT_TRUE(found) << "the workload reported seq=" << seq << ", check did not:\n" << r.out;
    }
  }
}

// Planted driver bugs whose evidence is not a call sequence of the DDI proper: R5 from the
// recorder's table-rewrite notes, R74 from the kernel's answer to pfnRenderCb, R68 (a
// non-shared resource) from the kernel-layer calls that show the GPU retired the work.
TEST_F(CheckE2eTest, RecordedPlantedBugsSeenThroughNotesAndKernelCalls) {
  struct Case {
    const char* scenario;
    const char* rule;
  };
  for (const Case& c : {Case{"smallcl", "R5"}, Case{"smallcl", "R74"}, Case{"scene", "R68"}}) {
    SCOPED_TRACE(c.rule);
    Result wl, r;
    std::string trace;
    ASSERT_NO_FATAL_FAILURE(RecordAndCheck(c.scenario, c.rule, &trace, &wl, &r));
    // The same scenario without the bug is clean under that rule.
    Result clean_wl;
    std::string clean = Record(this, dir_, c.scenario, "", &clean_wl);
    ASSERT_EQ(clean_wl.exit, 0) << clean_wl.out;
    Result ok = Cltrace("check " + clean + " --rules " + c.rule);
    EXPECT_EQ(ok.exit, 0) << ok.out << ok.err;
  }
}

TEST_F(CheckE2eTest, DumpShowsTheTableRewriteNote) {
  Result wl;
  std::string trace = Record(this, dir_, "smallcl", "R5", &wl);
  Result dump = Cltrace("dump " + trace);
  EXPECT_EQ(dump.exit, 0) << dump.err;
  // The note follows '#' on the line of the Flush that made the rewrite (after the API call
  // the runtime model annotated it with).
  bool found = false;
  for (absl::string_view line : absl::StrSplit(dump.out, '\n')) {
    if (absl::StrContains(line, " IC::Flush(") &&
        absl::StrContains(line,
                          "# Flush | table-rewrite (R5): "
                          "D3D11DDI_DEVICEFUNCS.pfnCreateResource of immediate context")) {
      found = true;
    }
  }
  EXPECT_TRUE(found) << "no Flush line with the R5 note in the dump of " << trace;
}
#endif

}  // namespace
