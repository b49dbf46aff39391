// The golden corpus (corpus/traces, corpus/README.md): every trace of manifest.txt is judged by
// `cltrace check` and replayed by `cltrace replay` as its replay column says, and the outputs
// are compared with NAME.verdict through tests/testing/golden.h (CLTRACE_UPDATE_GOLDEN=1
// rewrites them; scripts/make-corpus.sh does after re-recording). Independently of the
// goldens: clean traces replay identically in both thread modes, misuse modes are reported by
// the driver on replay, planted driver bugs replay identically into the buggy driver and
// diverge from the fixed one where the rule is replay-visible, kernel bugs diverge on the
// kernel model. And scripts/make-corpus.sh gives the committed bytes, wherever the build lives.
#include <sys/stat.h>

#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/command_test.h"
#include "tests/testing/golden.h"

namespace cltrace::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Entry {
  std::string name;
  std::string rule;    // "" for a clean run
  std::string replay;  // the manifest's replay column
  std::string args;    // cltrace-workload arguments
};

void PrintTo(const Entry& e, std::ostream* os) { *os << e.name; }

std::string TracesDir() { return absl::StrCat(CLTRACE_SOURCE_DIR, "/corpus/traces"); }

std::vector<Entry> Manifest() {
  std::vector<Entry> entries;
  const std::string text = ReadFile(TracesDir() + "/manifest.txt");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols = absl::StrSplit(line, '|');
    if (cols.size() != 4) {
      entries.push_back({"bad_manifest_line", "", "", std::string(line)});
      continue;
    }
    for (std::string& c : cols) c = std::string(absl::StripAsciiWhitespace(c));
    entries.push_back({cols[0], cols[1] == "-" ? "" : cols[1], cols[2], cols[3]});
  }
  return entries;
}

class CorpusTest : public CommandTest, public ::testing::WithParamInterface<Entry> {
 protected:
  // Runs `cltrace ARGS` (ARGS naming the trace by its base name) and appends it to the
  // transcript; `env` is a shell prefix (VAR=VALUE).
  CommandResult Cltrace(const std::string& env, const std::string& args) {
    const Entry& e = GetParam();
    const std::string trace = absl::StrCat(TracesDir(), "/", e.name, ".cltrace");
    std::string full = absl::StrReplaceAll(args, {{"TRACE", trace}});
    CommandResult r = Run(absl::StrCat(env, env.empty() ? "" : " ", CLTRACE_BIN, " ", full));
    absl::StrAppend(&transcript_, "$ ", env, env.empty() ? "" : " ", "cltrace ",
                    absl::StrReplaceAll(args, {{"TRACE", e.name + ".cltrace"}}), "\nexit ", r.exit,
                    "\n", r.out);
    if (!r.err.empty()) absl::StrAppend(&transcript_, "--- stderr\n", r.err);
    return r;
  }

  std::string transcript_;
};

// "bug=R22;oom:RecycleCreateCommandList=2" -> " --inject oom:RecycleCreateCommandList:2": the
// faults the buggy run had, injected into the fixed driver so only the bug differs.
std::string InjectFlags(absl::string_view config) {
  std::string flags;
  for (absl::string_view part : absl::StrSplit(config, ';')) {
    if (!absl::ConsumePrefix(&part, "oom:")) continue;
    std::vector<std::string> fn_n = absl::StrSplit(part, '=');
    if (fn_n.size() == 2) absl::StrAppend(&flags, " --inject oom:", fn_n[0], ":", fn_n[1]);
  }
  return flags;
}

TEST_P(CorpusTest, Verdict) {
  const Entry& e = GetParam();
  ASSERT_NE(e.name, "bad_manifest_line") << e.args;
  struct stat st;
  const std::string trace = absl::StrCat(TracesDir(), "/", e.name, ".cltrace");
  ASSERT_EQ(stat(trace.c_str(), &st), 0) << trace << " is missing: run scripts/make-corpus.sh";
  EXPECT_LE(st.st_size, 1 << 20) << "corpus traces stay at most 1 MB";

  CommandResult check = Cltrace("", "check TRACE");
  if (e.rule.empty()) {
    EXPECT_EQ(check.exit, 0) << check.out << check.err;
    EXPECT_THAT(check.out, HasSubstr(" 0 violations")) << "a clean run judged with findings";
  } else {
    EXPECT_NE(check.exit, 2) << check.err;
    // The planted rule is what check reports, unless the manifest marks it as one no trace can
    // show (`R6*`: docs/rules.md says why per rule). Heuristic rules (R71, R72) report as
    // warnings, still under their rule.
    if (!absl::EndsWith(e.rule, "*")) {
      EXPECT_THAT("\n" + check.out, HasSubstr(absl::StrCat("\n", e.rule, " seq=")))
          << "check does not report the planted " << e.rule << "\n"
          << check.out;
    }
  }

  absl::string_view replay = e.replay;
  const bool model = absl::ConsumePrefix(&replay, "model") &&
                     (replay.empty() || absl::ConsumePrefix(&replay, "-"));
  std::string config;
  bool hidden = false;
  if (absl::ConsumePrefix(&replay, "bug:")) {
    config = std::string(replay);
  } else if (absl::ConsumePrefix(&replay, "hidden:")) {
    config = std::string(replay);
    hidden = true;
  } else if (replay == "none") {
    // Not replayable (corpus/README.md says why): the verdict is the check alone.
    EXPECT_TRUE(MatchesGolden(absl::StrCat(TracesDir(), "/", e.name, ".verdict"), transcript_));
    return;
  } else {
    ASSERT_TRUE(replay.empty() || replay == "plain") << "unknown replay column " << e.replay;
  }
  const std::string kernel = model ? " --kernel model" : "";
  const std::string env = absl::StrCat("CLTRACE_REFDRIVER_CONFIG='", config, "'");
  for (const char* mode : {"single", "recorded"}) {
    SCOPED_TRACE(mode);
    CommandResult r =
        Cltrace(env, absl::StrCat("replay --threads ", mode, kernel, " --history 0 TRACE"));
    if (model && !e.rule.empty() && config.empty()) {
      // A kernel bug (R75-R78): the model kernel does not repeat it.
      EXPECT_EQ(r.exit, 3) << r.out << r.err;
      EXPECT_THAT(r.out, StartsWith("replay: divergence at seq "));
      continue;
    }
    EXPECT_EQ(r.exit, 0) << r.out << r.err;
    EXPECT_THAT(r.out, StartsWith("replay: identical ("));
    // The DX6 workload's calls go to the DX6 model driver, not around it.
    if (absl::StartsWith(e.args, "dp2 ")) {
      EXPECT_THAT(r.out, HasSubstr("\ndx6: "))
          << "the DX6-layer calls of " << e.name << " were not replayed\n"
          << r.out;
    }
    // Runtime misuse: the driver reports it again on every replay.
    if (!e.rule.empty() && config.empty()) {
      EXPECT_THAT(r.out, HasSubstr(absl::StrCat("\ndriver: ", absl::StripSuffix(e.rule, "*"), " ")))
          << r.out;
    }
  }
  if (model && config.empty()) {
    // On the recorded kernel answers the driver sees what it saw: identical (a clean trace in
    // both modes; a kernel bug's too, the recorded kernel's answers being what they were).
    for (const char* mode : {"single", "recorded"}) {
      SCOPED_TRACE(mode);
      CommandResult r = Cltrace(env, absl::StrCat("replay --threads ", mode, " --history 0 TRACE"));
      EXPECT_EQ(r.exit, 0) << r.out << r.err;
      EXPECT_THAT(r.out, StartsWith("replay: identical ("));
      if (!e.rule.empty()) break;
    }
  }
  if (!config.empty()) {
    // The driver without the planted bug (its faults still injected).
    CommandResult fixed = Cltrace("CLTRACE_REFDRIVER_CONFIG=",
                                  absl::StrCat("replay --threads single", kernel, " --history 0",
                                               InjectFlags(config), " TRACE"));
    if (hidden) {
      EXPECT_EQ(fixed.exit, 0) << "replay now shows " << e.rule
                               << ": make the manifest say bug: instead of hidden:\n"
                               << fixed.out;
    } else {
      EXPECT_EQ(fixed.exit, 3) << fixed.out << fixed.err;
    }
  }
  EXPECT_TRUE(MatchesGolden(absl::StrCat(TracesDir(), "/", e.name, ".verdict"), transcript_));
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTest, ::testing::ValuesIn(Manifest()),
                         [](const ::testing::TestParamInfo<Entry>& info) {
                           return info.param.name;
                         });

// scripts/make-corpus.sh itself (the procedure that made corpus/traces), run on the binaries
// this build made, from `build_dir` (a directory holding them as bin/ and lib/), into `out`.
class RegenerationTest : public CommandTest {
 protected:
  // `env`: more VAR=VALUE settings for the script (which must not pass them on).
  void MakeCorpus(const std::string& build_dir, const std::string& out,
                  const std::string& env = "") {
    CommandResult r =
        Run(absl::StrCat(env, " CLTRACE_BUILD_DIR='", build_dir, "' ", CLTRACE_SOURCE_DIR,
                         "/scripts/make-corpus.sh --no-build '", out, "'"));
    ASSERT_EQ(r.exit, 0) << r.out << r.err;
  }
  // Every trace of the manifest in `out` has the bytes of the committed one.
  void ExpectCommittedBytes(const std::string& out) {
    for (const Entry& e : Manifest()) {
      SCOPED_TRACE(e.name);
      const std::string committed = ReadFile(absl::StrCat(TracesDir(), "/", e.name, ".cltrace"));
      const std::string made = ReadFile(absl::StrCat(out, "/", e.name, ".cltrace"));
      ASSERT_FALSE(made.empty());
      EXPECT_TRUE(made == committed)
          << "scripts/make-corpus.sh made other bytes than corpus/traces/" << e.name
          << ".cltrace for '" << e.args
          << "': the recording depends on where it runs, or the corpus is stale "
             "(scripts/make-corpus.sh; corpus/README.md)";
    }
  }
};

// scripts/make-corpus.sh gives the committed bytes for every line of the manifest, from this
// build directory and from a copy of its binaries under a much longer path, there with more
// and longer environment variables (a driver configuration among them): where the checkout and
// the build live, and the user's environment, must not show in the bytes (path strings on the
// heap once changed which addresses malloc reused, and so the normalised handles of scene_R52
// and scene_R72, in a build directory of 18 characters or more). A few seconds.
TEST_F(RegenerationTest, MakeCorpusGivesTheCommittedBytesFromAnyBuildPath) {
  const std::string bin = CLTRACE_BIN;
  const std::string build = bin.substr(0, bin.rfind("/bin/"));
  MakeCorpus(build, Path("here"));
  ExpectCommittedBytes(Path("here"));

  const std::string far =
      Path("a/build-directory-with-a-much-longer-name-than-any-checkout-would-use/build");
  CommandResult cp = Run(absl::StrCat(
      "mkdir -p '", far, "/bin' '", far, "/lib' && cp '", build, "/bin/cltrace' '", build,
      "/bin/cltrace-workload' '", build, "/bin/cltrace-normalize' '", far, "/bin/' && cp '", build,
      "/lib/libcltrace_shim.so' '", build, "/lib/libcltrace_refdriver.so' '", far, "/lib/'"));
  ASSERT_EQ(cp.exit, 0) << cp.err;
  MakeCorpus(far, Path("far"),
             absl::StrCat("CLTRACE_REFDRIVER_CONFIG=bug=R40 CLTRACE_SHIM_FLUSH_MS=1 "
                          "CLTRACE_PADDING_FOR_THE_ENVIRONMENT=",
                          std::string(300, 'x')));
  ExpectCommittedBytes(Path("far"));
}

}  // namespace
}  // namespace cltrace::testing
