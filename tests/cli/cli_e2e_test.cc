// End-to-end tests of build/bin/cltrace: import -> info -> dump -> export on the hand-written
// corpus, exact round trips, and the exit codes and messages for bad input and bad usage.
//
// Each scenario runs commands in a scratch directory (so outputs name files relatively) and
// compares a transcript (command, exit code, stdout, stderr) with tests/cli/golden/NAME.txt.
// CLTRACE_UPDATE_GOLDEN=1 (exactly; tests/testing/golden.h) rewrites the golden files instead.
//
// Ignored in the comparison (they follow from the binary encoder and the size of the
// catalog, which other components change; format/ tests cover them): byte counts, file
// offsets, chunk counts and ordinals, and CRC values. They are replaced by '#' before comparing.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "format/trace_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/command_test.h"
#include "tests/testing/golden.h"

namespace cltrace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

using ::cltrace::testing::ReadFile;
using Result = ::cltrace::testing::CommandResult;

class CliE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/cltrace_cli_", getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(std::system(absl::StrCat("rm -rf '", dir_, "' && mkdir -p '", dir_, "'").c_str()), 0);
  }
  void TearDown() override {
    if (!HasFailure()) std::system(absl::StrCat("rm -rf '", dir_, "'").c_str());
  }

  // Copies a source-tree file into the scratch directory under its base name.
  std::string Stage(const std::string& source_relative) {
    std::string name = source_relative.substr(source_relative.rfind('/') + 1);
    WriteFile(Path(name), ReadFile(absl::StrCat(CLTRACE_SOURCE_DIR, "/", source_relative)));
    return name;
  }
  std::string Path(const std::string& name) const { return absl::StrCat(dir_, "/", name); }

  // Runs `cltrace ARGS` in the scratch directory (standard input from the scratch file
  // `stdin_file`, else empty) and appends it to the transcript.
  Result Run(const std::string& args, const std::string& stdin_file = "") {
    std::string cmd =
        absl::StrCat("cd '", dir_, "' && '", CLTRACE_BIN, "' ", args, " >.stdout 2>.stderr <",
                     stdin_file.empty() ? "/dev/null" : stdin_file);
    int status = std::system(cmd.c_str());
    Result r;
    r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = ReadFile(Path(".stdout"));
    r.err = ReadFile(Path(".stderr"));
    absl::StrAppend(&transcript_, "$ cltrace ", args,
                    stdin_file.empty() ? "" : absl::StrCat(" < ", stdin_file), "\nexit ", r.exit,
                    "\n");
    if (!r.out.empty()) absl::StrAppend(&transcript_, "--- stdout\n", r.out);
    if (!r.err.empty()) absl::StrAppend(&transcript_, "--- stderr\n", r.err);
    absl::StrAppend(&transcript_, "\n");
    return r;
  }

  // The declared ignored fields (see the top of the file).
  static std::string Mask(std::string text) {
    static const std::pair<std::regex, const char*> kMasks[] = {
        {std::regex(R"(\b\d+(\.\d+)? (bytes?\b))"), "# $2"},
        {std::regex(R"(\boffset \d+)"), "offset #"},
        {std::regex(R"(\b\d+ (chunks?\b))"), "# $1"},
        {std::regex(R"(\bchunk \d+\b)"), "chunk #"},
        {std::regex(R"(\b(stored|computed) 0x[0-9a-f]+)"), "$1 0x#"},
    };
    for (const auto& [re, replacement] : kMasks) text = std::regex_replace(text, re, replacement);
    return text;
  }

  // Compares the transcript so far with tests/cli/golden/NAME.txt (tests/testing/golden.h).
  void ExpectGolden(const std::string& name) {
    EXPECT_TRUE(::cltrace::testing::MatchesGolden(
        absl::StrCat(CLTRACE_SOURCE_DIR, "/tests/cli/golden/", name, ".txt"), Mask(transcript_)));
  }

  std::string dir_;
  std::string transcript_;
};

// The verbs that read a trace stream it in seq order (format/seq_stream.h) instead of loading
// it, and replay --until reads only the calls up to it. Their output on every shipped trace is what
// it was when they loaded the whole trace: tests/cli/golden/corpus_digests.txt holds, per verb and
// trace, the exit code and digests of standard output and standard error recorded with the loading
// implementation (regenerate with CLTRACE_UPDATE_GOLDEN=1 after re-recording the corpus, and
// review: a changed line means a verb's output changed).
TEST_F(CliE2eTest, VerbOutputsOnTheCorpusAreUnchanged) {
  std::vector<std::string> traces;
  for (const char* dir : {"corpus/traces", "corpus/jsonl", "tests/cli/inputs"}) {
    std::string list = Path(".list");
    std::system(absl::StrCat("cd '", CLTRACE_SOURCE_DIR, "' && ls ", dir, "/*.cltrace ", dir,
                             "/*.jsonl 2>/dev/null >'", list, "'")
                    .c_str());
    for (absl::string_view line : absl::StrSplit(ReadFile(list), '\n', absl::SkipEmpty())) {
      traces.emplace_back(line);
    }
  }
  ASSERT_GT(traces.size(), 30u);
  const std::vector<std::string> verbs = {"info",
                                          "check",
                                          "stats",
                                          "lifecycle",
                                          "lifecycle --json",
                                          "lifecycle --at 300",
                                          "dump",
                                          "dump --json",
                                          "dump --from 40 --count 7",
                                          "export -o -",
                                          "replay --until 300"};
  std::string digests;
  for (const std::string& trace : traces) {
    for (const std::string& verb : verbs) {
      const std::string args = absl::StrCat(verb, " ", trace);
      std::string cmd = absl::StrCat("cd '", CLTRACE_SOURCE_DIR, "' && '", CLTRACE_BIN, "' ", args,
                                     " >'", Path(".out"), "' 2>'", Path(".err"), "'");
      int status = std::system(cmd.c_str());
      std::system(absl::StrCat("sha256sum <'", Path(".out"), "' | cut -c1-16 >'", Path(".d"),
                               "' && sha256sum <'", Path(".err"), "' | cut -c1-16 >>'", Path(".d"),
                               "'")
                      .c_str());
      std::vector<std::string> d = absl::StrSplit(ReadFile(Path(".d")), '\n', absl::SkipEmpty());
      ASSERT_EQ(d.size(), 2u);
      absl::StrAppend(&digests, args, ": exit ", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                      " out ", d[0], " err ", d[1], "\n");
    }
  }
  EXPECT_TRUE(::cltrace::testing::MatchesGolden(
      absl::StrCat(CLTRACE_SOURCE_DIR, "/tests/cli/golden/corpus_digests.txt"), digests));
}

// The full interchange cycle on the §4.5/4.6 command-list recycling trace.
TEST_F(CliE2eTest, ClRecycleImportInfoDumpExport) {
  std::string in = Stage("corpus/jsonl/cl_recycle.jsonl");
  Result imported = Run(absl::StrCat("import ", in, " -o cl_recycle.cltrace"));
  ASSERT_EQ(imported.exit, 0) << imported.err;
  EXPECT_EQ(Run("info cl_recycle.cltrace").exit, 0);
  EXPECT_EQ(Run("info cl_recycle.jsonl").exit, 0);
  Result dump = Run("dump cl_recycle.cltrace");
  EXPECT_EQ(dump.exit, 0);
  EXPECT_EQ(Run("dump cl_recycle.jsonl").out, dump.out);  // same calls either way
  EXPECT_EQ(Run("dump cl_recycle.cltrace --from 75 --count 3").exit, 0);
  Result exported = Run("export cl_recycle.cltrace -o -");
  EXPECT_EQ(exported.exit, 0);
  EXPECT_EQ(Run("dump --json cl_recycle.cltrace").out, exported.out);
  ExpectGolden("cl_recycle");

  // import o export is the identity on the exported JSON, byte for byte.
  WriteFile(Path("exported.jsonl"), exported.out);
  ASSERT_EQ(Run("import exported.jsonl -o again.cltrace").exit, 0);
  Result again = Run("export again.cltrace -o again.jsonl");
  EXPECT_EQ(again.exit, 0);
  EXPECT_EQ(ReadFile(Path("again.jsonl")), exported.out);
  // Exporting the JSONL itself normalises it to the same canonical text.
  EXPECT_EQ(Run("export cl_recycle.jsonl -o -").out, exported.out);
}

TEST_F(CliE2eTest, CrashInCallbackImportInfoDumpExport) {
  std::string in = Stage("corpus/jsonl/crash_in_callback.jsonl");
  ASSERT_EQ(Run(absl::StrCat("import ", in, " -o crash.cltrace")).exit, 0);
  EXPECT_EQ(Run("info crash.cltrace").exit, 0);
  EXPECT_EQ(Run("dump crash.cltrace").exit, 0);
  Result exported = Run("export crash.cltrace -o crash_out.jsonl");
  EXPECT_EQ(exported.exit, 0);
  ExpectGolden("crash_in_callback");
  WriteFile(Path("exported.jsonl"), ReadFile(Path("crash_out.jsonl")));
  ASSERT_EQ(Run("import exported.jsonl -o again.cltrace").exit, 0);
  EXPECT_EQ(Run("export again.cltrace -o -").out, ReadFile(Path("crash_out.jsonl")));
}

TEST_F(CliE2eTest, BadJsonlIsExitTwoWithTheLineNumber) {
  std::string bad = Stage("tests/cli/inputs/bad_json.jsonl");
  Result r = Run(absl::StrCat("import ", bad, " -o out.cltrace"));
  EXPECT_EQ(r.exit, 2);
  EXPECT_THAT(r.err, HasSubstr("line 3: column 55: malformed JSON"));
  EXPECT_FALSE(Exists(Path("out.cltrace")));  // nothing half-written
  // info and dump still show the calls above the bad line.
  r = Run(absl::StrCat("dump ", bad));
  EXPECT_EQ(r.exit, 2);
  EXPECT_THAT(r.out, HasSubstr("Flush(hDevice=ic)"));
  EXPECT_EQ(Run(absl::StrCat("info ", bad)).exit, 2);
  std::string unknown = Stage("tests/cli/inputs/unknown_fn.jsonl");
  r = Run(absl::StrCat("import ", unknown, " -o out.cltrace"));
  EXPECT_EQ(r.exit, 2);
  EXPECT_THAT(r.err, HasSubstr("line 2: unknown function \"pfnCommandListExecute\""));
  std::string nesting = Stage("tests/cli/inputs/nesting.jsonl");
  EXPECT_EQ(Run(absl::StrCat("export ", nesting, " -o -")).exit, 2);
  ExpectGolden("bad_jsonl");
}

// A .cltrace damaged in the chunk of its third call (--chunk-bytes 1: a call per chunk): the
// two calls before it are still shown, the error names the file offset, exit 2; --salvage skips the
// bad chunk (exit 1). A file cut in the middle of a chunk is a torn tail: the complete chunks are
// the trace (exit 0).
TEST_F(CliE2eTest, DamagedCltraceKeepsWhatIsReadable) {
  Stage("corpus/jsonl/cl_recycle.jsonl");
  ASSERT_EQ(Run("import cl_recycle.jsonl -o small_chunks.cltrace --chunk-bytes 1").exit, 0);
  std::string bytes = ReadFile(Path("small_chunks.cltrace"));
  auto reader = format::TraceReader::Open(Path("small_chunks.cltrace"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  const format::proto::TraceIndex* index = (*reader)->index();
  ASSERT_NE(index, nullptr);
  // The third call (a Draw at seq 30) defines no handle, so salvage loses exactly that call.
  const format::proto::ChunkIndexEntry* found = nullptr;
  for (const auto& chunk : index->chunks())
    if (chunk.events() > 0 && chunk.min_seq() == 30) found = &chunk;
  ASSERT_NE(found, nullptr) << "no chunk starts at seq 30";
  ASSERT_EQ(found->events(), 1u) << "one call per chunk expected";
  const format::proto::ChunkIndexEntry& third = *found;

  std::string corrupt = bytes;
  corrupt[third.offset() + third.stored_size() - 2] ^= 0x55;  // inside the payload
  WriteFile(Path("corrupt.cltrace"), corrupt);
  Result info = Run("info corrupt.cltrace");
  EXPECT_EQ(info.exit, 2);
  EXPECT_THAT(info.err, HasSubstr(absl::StrCat("offset")));
  Result dump = Run("dump corrupt.cltrace");
  EXPECT_EQ(dump.exit, 2);
  EXPECT_THAT(dump.out, HasSubstr("CalcPrivateDeferredContextSize"));  // from chunk 1
  EXPECT_EQ(Run("export corrupt.cltrace -o -").exit, 2);
  EXPECT_EQ(Run("info corrupt.cltrace --salvage").exit, 1);

  WriteFile(Path("torn.cltrace"), bytes.substr(0, third.offset() + third.stored_size() / 2));
  EXPECT_EQ(Run("info torn.cltrace").exit, 0);
  EXPECT_EQ(Run("dump torn.cltrace").exit, 0);

  WriteFile(Path("not_a_trace.cltrace"), "PK\x03\x04 this is a zip file\n");
  EXPECT_EQ(Run("info not_a_trace.cltrace").exit, 2);
  ExpectGolden("damaged_cltrace");
}

// Input the verbs cannot use: exit 2 with a message that says what is wrong, and nothing on
// stdout (check prints no verdict on a trace it could not read whole).
TEST_F(CliE2eTest, InputErrorsSayWhatIsWrong) {
  std::string bad = Stage("tests/cli/inputs/bad_json.jsonl");
  Result r = Run(absl::StrCat("check ", bad));
  EXPECT_EQ(r.exit, 2);
  EXPECT_EQ(r.out, "");
  WriteFile(Path("empty.jsonl"), "");
  r = Run("check empty.jsonl");
  EXPECT_EQ(r.exit, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(Run("replay empty.jsonl").exit, 2);
  WriteFile(Path("typos.jsonl"),
            "{\"seq\":1,\"tid\":1,\"fn\":\"Flsh\",\"args\":{\"hDevice\":\"ic\"}}\n");
  EXPECT_EQ(Run("check typos.jsonl").exit, 2);
  WriteFile(Path("typos.jsonl"),
            "{\"seq\":1,\"tid\":1,\"fn\":\"CommandListExecute\",\"args\":{\"hDevice\":\"ic\","
            "\"hComandList\":\"cl\"}}\n");
  EXPECT_EQ(Run("import typos.jsonl -o out.cltrace").exit, 2);
  ASSERT_EQ(mkdir(Path("adir").c_str(), 0755), 0);
  EXPECT_EQ(Run("import adir -o out.cltrace").exit, 2);
  EXPECT_EQ(Run("check adir").exit, 2);
  std::string recycle = Stage("corpus/jsonl/cl_recycle.jsonl");
  EXPECT_EQ(Run(absl::StrCat("import ", recycle, " -o adir")).exit, 2);
  EXPECT_EQ(Run(absl::StrCat("export ", recycle, " -o adir")).exit, 2);
  EXPECT_FALSE(Exists(Path("out.cltrace")));
  // `import -` reads standard input; the result is the same trace as from the file.
  ASSERT_EQ(Run(absl::StrCat("import - -o stdin.cltrace"), recycle).exit, 0);
  ASSERT_EQ(Run(absl::StrCat("import ", recycle, " -o file.cltrace")).exit, 0);
  const std::string from_stdin = Run("export stdin.cltrace -o -").out;
  EXPECT_EQ(from_stdin, Run("export file.cltrace -o -").out);
  EXPECT_EQ(Run("import - -o out.cltrace", "typos.jsonl").exit, 2);
  ExpectGolden("input_errors");
}

// Every JSONL repro shipped in corpus/ replays identically into the reference driver, unless
// its folder's README marks it **check-only** and says why.
TEST_F(CliE2eTest, ShippedReprosReplay) {
  int replayed = 0;
  for (const char* folder : {"corpus/jsonl", "corpus/check"}) {
    const std::string readme =
        ReadFile(absl::StrCat(CLTRACE_SOURCE_DIR, "/", folder, "/README.md"));
    ASSERT_FALSE(readme.empty()) << folder;
    ASSERT_EQ(std::system(absl::StrCat("ls '", CLTRACE_SOURCE_DIR, "/", folder, "' > '",
                                       Path("ls.txt"), "'")
                              .c_str()),
              0);
    for (absl::string_view name : absl::StrSplit(ReadFile(Path("ls.txt")), '\n')) {
      if (!absl::EndsWith(name, ".jsonl")) continue;
      // "- `NAME` — **check-only**: REASON"
      const std::string marker = absl::StrCat("- `", name, "` — **check-only**: ");
      const size_t at = readme.find(marker);
      if (at != std::string::npos) {
        const size_t reason = at + marker.size();
        EXPECT_GT(readme.find('\n', reason), reason + 10) << name << ": check-only, but why?";
        continue;
      }
      std::string staged = Stage(absl::StrCat(folder, "/", name));
      Result r = Run(absl::StrCat("replay ", staged));
      EXPECT_EQ(r.exit, 0) << folder << "/" << name << ": " << r.err;
      EXPECT_THAT(r.out, StartsWith("replay: identical")) << folder << "/" << name;
      ++replayed;
    }
  }
  EXPECT_GE(replayed, 1);
}

// Progress bars go to standard error only when it is a terminal (here a pseudo-terminal from
// script(1); CLTRACE_PROGRESS_AFTER_MS=0 draws from the first update instead of after a second),
// never with --quiet, never into a file; the verb's output is the same either way.
TEST_F(CliE2eTest, ProgressOnlyOnATerminalAndNeverWithQuiet) {
  if (std::system("script --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  std::string lines;
  for (int i = 1; i <= 20000; ++i)
    absl::StrAppend(&lines, "{\"seq\":", i,
                    ",\"tid\":1,\"fn\":\"Flush\",\"args\":{\"hDevice\":\"ic\"}}\n");
  WriteFile(Path("big.jsonl"), lines);
  ASSERT_EQ(Run("import big.jsonl -o big.cltrace --quiet").exit, 0);
  int tty_exit = 0;
  auto on_terminal = [&](const std::string& args) {
    std::string cmd = absl::StrCat("cd '", dir_, "' && CLTRACE_PROGRESS_AFTER_MS=0 script -qec \"'",
                                   CLTRACE_BIN, "' ", args, "\" /dev/null >.tty 2>&1");
    const int status = std::system(cmd.c_str());
    tty_exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return ReadFile(Path(".tty"));
  };
  for (const std::string verb :
       {"info big.cltrace", "dump big.cltrace", "export big.cltrace -o x.jsonl",
        "import big.jsonl -o y.cltrace", "check big.cltrace", "stats big.cltrace",
        "lifecycle big.cltrace"}) {
    // Not a terminal: nothing on standard error (check judges the calls: exit 0 or 1).
    std::string cmd = absl::StrCat("cd '", dir_, "' && CLTRACE_PROGRESS_AFTER_MS=0 '", CLTRACE_BIN,
                                   "' ", verb, " >/dev/null 2>.err");
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << verb;
    const int exit = WEXITSTATUS(status);
    EXPECT_LE(exit, 1) << verb;
    EXPECT_EQ(ReadFile(Path(".err")), "") << verb;
    const std::string shown = on_terminal(verb);
    EXPECT_EQ(tty_exit, exit) << verb;
    EXPECT_THAT(shown, HasSubstr("calls/s")) << verb;
    EXPECT_THAT(shown, HasSubstr("\r\x1b[K")) << verb;  // erased at the end
    EXPECT_THAT(on_terminal(absl::StrCat(verb, " --quiet")), Not(HasSubstr("calls/s"))) << verb;
    EXPECT_EQ(tty_exit, exit) << verb;
  }
  // The bar does not change what the verb prints.
  EXPECT_THAT(on_terminal("info big.cltrace"), HasSubstr("calls           20000 (20000 DDI calls"));
}

// A trace recorded with catalog version 2 (corpus/traces/smallcl.cltrace before catalog
// version 3 changed the layouts of CreateDevice, GetCaps and Flush; FORMAT.md §8.1) is read in
// this build's layouts: every verb sees Microsoft's field names, and check and replay give the
// verdict the version-2 build gave (tests/cli/inputs/catalog_v2_smallcl.verdict).
TEST_F(CliE2eTest, CatalogVersion2TraceIsReadInTheNewLayouts) {
  const std::string in = Stage("tests/cli/inputs/catalog_v2_smallcl.cltrace");
  Result info = Run(absl::StrCat("info ", in));
  ASSERT_EQ(info.exit, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("catalog version 2 (this tool: 4)"));
  Result exported = Run(absl::StrCat("export ", in, " -o -"));
  ASSERT_EQ(exported.exit, 0) << exported.err;
  // CreateDevice: the v2 pDXGIBaseDDI is DXGI_DDI_BASE_ARGS's function table.
  EXPECT_THAT(exported.out, HasSubstr(R"("DXGIBaseDDI.pDXGIDDIBaseFunctions":"0x7e0000009000")"));
  EXPECT_THAT(exported.out, Not(HasSubstr("pDXGIBaseDDI")));
  // GetCaps: the caps the driver wrote are the structure's pData (pData.pData since version 4).
  EXPECT_THAT(exported.out,
              HasSubstr(R"("pInfo":"0x7e0000004000","pData.pData":[5],"DataSize":4})"));
  // Flush: the 11.0 slot, no FlushFlags and no return value.
  EXPECT_THAT(exported.out, HasSubstr(R"("fn":"Flush","args":{"hDevice":"0x7e0000008000"},"end")"));
  EXPECT_THAT(exported.out, Not(HasSubstr("FlushFlags")));
  // CreateResource (catalog version 4): the sizes are pMipInfoList's, the primary the runtime
  // flagged with MiscFlags bit 0x80000000 has a pPrimaryDesc of its size, and the invented
  // members and bit are gone.
  EXPECT_THAT(exported.out,
              HasSubstr(R"("pMipInfoList":[{"TexelWidth":64,"TexelHeight":64,"TexelDepth":1,)"));
  EXPECT_THAT(exported.out, HasSubstr(R"("pPrimaryDesc":true,"pPrimaryDesc.ModeDesc.Width":64,)"
                                      R"("pPrimaryDesc.ModeDesc.Height":64,)"));
  EXPECT_THAT(exported.out, Not(HasSubstr(R"("Width":)")));
  EXPECT_THAT(exported.out, Not(HasSubstr("SampleCount")));
  EXPECT_THAT(exported.out, Not(HasSubstr("MISC_PRIMARY")));
  // The verdict of the version-2 build, verdict for verdict.
  std::string verdict;
  Result check = Run(absl::StrCat("check ", in));
  absl::StrAppend(&verdict, "$ cltrace check smallcl.cltrace\nexit ", check.exit, "\n", check.out);
  for (const char* threads : {"single", "recorded"}) {
    Result r = Run(absl::StrCat("replay --threads ", threads, " --history 0 ", in));
    absl::StrAppend(&verdict, "$ CLTRACE_REFDRIVER_CONFIG='' cltrace replay --threads ", threads,
                    " --history 0 smallcl.cltrace\nexit ", r.exit, "\n", r.out);
  }
  EXPECT_EQ(verdict, ReadFile(absl::StrCat(CLTRACE_SOURCE_DIR,
                                           "/tests/cli/inputs/catalog_v2_smallcl.verdict")));
}

// A version-3 recording (the golden corpus's present.cltrace before catalog version 4 gave
// the D3DDDICB_* structures Microsoft's layouts): its kernel-thunk calls read in the version-4
// layouts, and check and replay (the kernel model comparing every kernel-layer call) give the
// version-3 build's verdict.
TEST_F(CliE2eTest, CatalogVersion3TraceIsReadInTheNewLayouts) {
  const std::string in = Stage("tests/cli/inputs/catalog_v3_present.cltrace");
  Result info = Run(absl::StrCat("info ", in));
  ASSERT_EQ(info.exit, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("catalog version 3 (this tool: 4)"));
  Result exported = Run(absl::StrCat("export ", in, " -o -"));
  ASSERT_EQ(exported.exit, 0) << exported.err;
  // GetCaps(hAdapter, pData): the structure's own pData is pData.pData.
  EXPECT_THAT(exported.out, HasSubstr(R"("fn":"GetCaps","args":{"hAdapter":"0x7e0000003000",)"
                                      R"("pData":true,"Type":"D3D11DDICAPS_THREADING",)"
                                      R"("pData.pData":[5],"DataSize":4})"));
  EXPECT_THAT(exported.out, Not(HasSubstr("pCaps")));
  // The kernel context is a HANDLE now, still the same tracked handle.
  EXPECT_THAT(exported.out, HasSubstr(R"("PatchLocationListSize":512})"));
  std::string verdict;
  Result check = Run(absl::StrCat("check ", in));
  absl::StrAppend(&verdict, "$ cltrace check present.cltrace\nexit ", check.exit, "\n", check.out);
  // Recorded by the driver that freed DC map-discard aliases only with their resource
  // (refdriver/README.md, `aliases`): replayed into that driver.
  setenv("CLTRACE_REFDRIVER_CONFIG", "aliases=with_resource", 1);
  for (const char* kernel : {" --kernel model", ""}) {
    for (const char* threads : {"single", "recorded"}) {
      Result r = Run(absl::StrCat("replay --threads ", threads, kernel, " --history 0 ", in));
      absl::StrAppend(&verdict,
                      "$ CLTRACE_REFDRIVER_CONFIG=aliases=with_resource cltrace replay --threads ",
                      threads, kernel, " --history 0 present.cltrace\nexit ", r.exit, "\n", r.out);
    }
  }
  unsetenv("CLTRACE_REFDRIVER_CONFIG");
  EXPECT_EQ(verdict, ReadFile(absl::StrCat(CLTRACE_SOURCE_DIR,
                                           "/tests/cli/inputs/catalog_v3_present.verdict")));
}

TEST_F(CliE2eTest, UsageErrorsAreExitTwo) {
  EXPECT_EQ(Run("").exit, 2);
  EXPECT_EQ(Run("frobnicate x").exit, 2);
  EXPECT_EQ(Run("info").exit, 2);
  EXPECT_EQ(Run("info a.jsonl b.jsonl").exit, 2);
  EXPECT_EQ(Run("dump x.jsonl --count abc").exit, 2);
  EXPECT_EQ(Run("dump x.jsonl --bogus").exit, 2);
  EXPECT_EQ(Run("import x.jsonl").exit, 2);
  EXPECT_EQ(Run("export x.cltrace").exit, 2);
  EXPECT_EQ(Run("info missing.jsonl").exit, 2);
  ExpectGolden("usage_errors");
}

TEST_F(CliE2eTest, HelpOnTheToolAndEveryVerb) {
  Result version = Run("--version");
  EXPECT_EQ(version.exit, 0);
  EXPECT_THAT(version.out, StartsWith("cltrace 0."));  // CMake's project version
  Result tool = Run("--help");
  EXPECT_EQ(tool.exit, 0);
  EXPECT_THAT(tool.out, StartsWith("usage: cltrace VERB"));
  // Every verb the tool lists answers --help with its usage on stdout.
  bool in_verbs = false;
  int verbs = 0;
  for (absl::string_view line : absl::StrSplit(tool.out, '\n')) {
    if (line == "verbs:") {
      in_verbs = true;
      continue;
    }
    if (!in_verbs) continue;
    if (line.empty()) break;
    std::string verb(absl::StripLeadingAsciiWhitespace(line).substr(
        0, absl::StripLeadingAsciiWhitespace(line).find(' ')));
    Result r = Run(absl::StrCat(verb, " --help"));
    EXPECT_EQ(r.exit, 0) << verb;
    EXPECT_THAT(r.out, StartsWith(absl::StrCat("usage: cltrace ", verb))) << verb;
    EXPECT_EQ(r.err, "") << verb;
    ++verbs;
  }
  EXPECT_GE(verbs, 4);
}

// Issue #17 item 7: check lists the handles alive at the end of the trace between the findings
// and the last line, as no finding (exit 0); a trace that ends with everything torn down
// lists none.
TEST_F(CliE2eTest, CheckListsTheHandlesAliveAtTheEnd) {
  std::string in = Stage("corpus/jsonl/cl_recycle.jsonl");
  Result r = Run(absl::StrCat("check ", in));
  EXPECT_EQ(r.exit, 0) << r.out << r.err;
  EXPECT_EQ(r.out,
            "leak: immediate context ic #1 Alive since before the trace\n"
            "leak: command list cl1 #1 Valid since seq=120 by RecycleCreateCommandList (owner DC "
            "dc1)\n"
            "leak: deferred context dc1 #2 Recording since seq=130 by "
            "RecycleCreateDeferredContext\n"
            "# 3 handles alive at the end of the trace (not a violation)\n"
            "# 14 calls, 0 violations, 0 warnings\n");
  // --json keeps its shape.
  Result json = Run(absl::StrCat("check --json ", in));
  EXPECT_FALSE(absl::StrContains(json.out, "leak")) << json.out;
  // A recording whose workload destroyed everything it created.
  std::string clean = Stage("corpus/traces/smallcl.cltrace");
  Result c = Run(absl::StrCat("check ", clean));
  EXPECT_EQ(c.exit, 0) << c.out;
  EXPECT_FALSE(absl::StrContains(c.out, "leak:")) << c.out;
}

// lifecycle --at SEQ: every handle alive at SEQ in the state of the interval containing it.
TEST_F(CliE2eTest, LifecycleAtListsTheLiveHandlesAndTheirStates) {
  std::string in = Stage("corpus/jsonl/cl_recycle.jsonl");
  // At 105 cl1 is RecycleDestroyed (the application destroyed it): not alive.
  Result r = Run(absl::StrCat("lifecycle ", in, " --at 105"));
  EXPECT_EQ(r.exit, 0) << r.err;
  EXPECT_EQ(r.out,
            "immediate context ic #1 Alive since before the trace\n"
            "deferred context dc1 #2 Recording since seq=70 by RecycleCreateDeferredContext\n"
            "# 2 handles alive at seq 105\n");
  r = Run(absl::StrCat("lifecycle ", in, " --at 125 --handle cl1"));
  EXPECT_EQ(r.exit, 0) << r.err;
  EXPECT_EQ(r.out,
            "command list cl1 #1 Valid since seq=120 by RecycleCreateCommandList (owner DC dc1)\n"
            "# 1 handles alive at seq 125\n");
  r = Run(absl::StrCat("lifecycle ", in, " --at x"));
  EXPECT_EQ(r.exit, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--at")) << r.err;
}

}  // namespace
}  // namespace cltrace
