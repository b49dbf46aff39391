// `cltrace diff` (format/trace_diff.h): equal traces, a trace against a modified copy (the first
// difference at the right seq), renamed handles and threads, and two recordings of one
// deterministic workload.
#include "format/trace_diff.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "cli/verb.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace cltrace::cli {
namespace {

constexpr char kTrace[] = "corpus/traces/smallcl.cltrace";

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/trace_diff_test_", getpid(), "_", name);
}

std::vector<std::string> ExportLines(const std::string& trace, bool normalize) {
  const std::string path = TempPath("export.jsonl");
  std::ostringstream out, err;
  std::vector<std::string> args = {"cltrace", "export", trace, "-o", path};
  if (normalize) args.push_back("--normalize");
  EXPECT_EQ(RunCli(args, out, err), kExitOk) << err.str();
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(f, line);) lines.push_back(line);
  std::remove(path.c_str());
  return lines;
}

void WriteLines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream f(path, std::ios::trunc);
  for (const std::string& l : lines) f << l << "\n";
}

struct DiffRun {
  int exit;
  std::string out, err;
};

DiffRun Diff(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"cltrace", "diff"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::ostringstream out, err;
  DiffRun r;
  r.exit = RunCli(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

TEST(TraceDiffTest, ATraceEqualsItselfAndItsNormalisedExport) {
  DiffRun r = Diff({kTrace, kTrace});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  EXPECT_TRUE(absl::StartsWith(r.out, "equal: ")) << r.out;
  // Every handle renamed, every thread renumbered: still the same calls.
  const std::string normalized = TempPath("normalized.jsonl");
  WriteLines(normalized, ExportLines(kTrace, /*normalize=*/true));
  r = Diff({kTrace, normalized});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  std::remove(normalized.c_str());
}

TEST(TraceDiffTest, AModifiedCopyDiffersAtTheModifiedSeq) {
  std::vector<std::string> lines = ExportLines(kTrace, /*normalize=*/false);
  ASSERT_GT(lines.size(), 400u);
  // Change one argument of a call in the middle of the trace.
  uint64_t changed_seq = 0;
  for (size_t i = lines.size() / 2; i < lines.size() && changed_seq == 0; ++i) {
    if (!absl::StrContains(lines[i], "\"UAVIndex\":8")) continue;
    lines[i] = absl::StrReplaceAll(lines[i], {{"\"UAVIndex\":8", "\"UAVIndex\":7"}});
    const size_t start = lines[i].find("\"seq\":") + 6;
    ASSERT_TRUE(absl::SimpleAtoi(lines[i].substr(start, lines[i].find(',') - start), &changed_seq));
  }
  ASSERT_NE(changed_seq, 0u);
  const std::string modified = TempPath("modified.jsonl");
  WriteLines(modified, lines);

  DiffRun r = Diff({kTrace, modified});
  EXPECT_EQ(r.exit, kExitProblems) << r.err;
  EXPECT_TRUE(absl::StrContains(
      r.out, absl::StrCat("(A seq ", changed_seq, ", B seq ", changed_seq, "): argument UAVIndex")))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "before it on thread")) << r.out;

  r = Diff({kTrace, modified, "--json"});
  EXPECT_EQ(r.exit, kExitProblems);
  rapidjson::Document doc;
  doc.Parse(r.out.c_str());
  ASSERT_FALSE(doc.HasParseError()) << r.out;
  EXPECT_FALSE(doc["equal"].GetBool());
  EXPECT_EQ(doc["first"]["seq_a"].GetUint64(), changed_seq);
  EXPECT_TRUE(doc["first"]["b"].IsObject());

  // A call missing from B: --all counts it with the changed argument.
  lines.pop_back();
  WriteLines(modified, lines);
  r = Diff({kTrace, modified, "--all"});
  EXPECT_EQ(r.exit, kExitProblems);
  EXPECT_TRUE(absl::StrContains(r.out, "only in A")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "\n2 differences;")) << r.out;
  std::remove(modified.c_str());
}

TEST(TraceDiffTest, HandlesAreComparedByIdentity) {
  std::vector<std::string> lines = ExportLines(kTrace, /*normalize=*/false);
  // Make a ResourceCopy copy from its destination: the same value, a different handle.
  uint64_t changed_seq = 0;
  for (size_t i = 0; i < lines.size() && changed_seq == 0; ++i) {
    if (!absl::StrContains(lines[i], "\"fn\":\"ResourceCopy\"")) continue;
    const size_t d = lines[i].find("\"hDstResource\":\"") + 16;
    const std::string dst = lines[i].substr(d, lines[i].find('"', d) - d);
    const size_t s = lines[i].find("\"hSrcResource\":\"") + 16;
    lines[i].replace(s, lines[i].find('"', s) - s, dst);
    const size_t start = lines[i].find("\"seq\":") + 6;
    ASSERT_TRUE(absl::SimpleAtoi(lines[i].substr(start, lines[i].find(',') - start), &changed_seq));
  }
  ASSERT_NE(changed_seq, 0u);
  const std::string modified = TempPath("handles.jsonl");
  WriteLines(modified, lines);
  DiffRun r = Diff({kTrace, modified});
  EXPECT_EQ(r.exit, kExitProblems);
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("(A seq ", changed_seq)) &&
              absl::StrContains(r.out, "argument hSrcResource") &&
              absl::StrContains(r.out, "not the same handle"))
      << r.out;
  std::remove(modified.c_str());
}

TEST(TraceDiffTest, BadInputIsExitTwo) {
  const std::string junk = TempPath("junk.cltrace");
  WriteLines(junk, {"not a trace"});
  EXPECT_EQ(Diff({kTrace, junk}).exit, kExitBadInput);
  EXPECT_EQ(Diff({kTrace, TempPath("missing.cltrace")}).exit, kExitBadInput);
  EXPECT_EQ(Diff({kTrace}).exit, kExitBadInput);
  std::remove(junk.c_str());
}

// Two recordings of the same deterministic workload (threads in lockstep) compare equal,
// although their addresses and thread ids differ.
TEST(TraceDiffTest, TwoRecordingsOfADeterministicWorkloadAreEqual) {
  const char* build = std::getenv("CLTRACE_BUILD_DIR");
  if (build == nullptr) GTEST_SKIP() << "CLTRACE_BUILD_DIR is not set";
  std::vector<std::string> traces;
  for (int i = 0; i < 2; ++i) {
    traces.push_back(TempPath(absl::StrCat("rec", i, ".cltrace")));
    const std::string cmd =
        absl::StrCat(build, "/bin/cltrace record -o ", traces.back(), " -- ", build,
                     "/bin/cltrace-workload scene --threads 3 --lockstep >/dev/null 2>&1");
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd;
  }
  DiffRun r = Diff({traces[0], traces[1]});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  // The raw JSONL of the two differs (addresses, thread ids); the normalised one only where
  // the allocator reused addresses differently, which diff's handle identity absorbs.
  EXPECT_NE(ExportLines(traces[0], false), ExportLines(traces[1], false));
  for (const std::string& t : traces) std::remove(t.c_str());
}

}  // namespace
}  // namespace cltrace::cli
