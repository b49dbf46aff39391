// `cltrace replay` on the streaming reader (cli/verb_replay.h): on a long recording the
// replayer's own bookkeeping stays bounded (segments, history tail, live-handle map), and
// --until reads only the chunks that hold the calls it needs.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/verb_replay.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string BuildDir() {
  const char* d = std::getenv("CLTRACE_BUILD_DIR");
  return d != nullptr ? d : "build";
}

// A recording of the small-command-list workload, 700 frames (about 1.2 M calls in some 30
// chunks), made once per test binary. In lockstep, as the corpus is recorded: a free-running
// recording on a loaded machine can keep some call in flight for longer stretches than the
// segment bound below allows (a segment ends only where no recorded call is in flight), which
// made the bound depend on the scheduler (16,800 and 19,160 events seen against 16,384).
const std::string& LongTrace() {
  static const std::string* path = [] {
    auto* p = new std::string(absl::StrCat(::testing::TempDir(), "/", getpid(), "_long.cltrace"));
    const std::string bin = BuildDir() + "/bin/";
    const std::string cmd =
        absl::StrCat(bin, "cltrace record -o ", *p, " -- ", bin,
                     "cltrace-workload smallcl --frames 700 --lockstep >/dev/null 2>&1");
    if (std::system(cmd.c_str()) != 0) p->clear();
    static const struct Remove {
      std::string path;
      ~Remove() { std::remove(path.c_str()); }
    } remove{*p};
    return p;
  }();
  return *path;
}

replay::ReplayOptions Options(replay::ThreadMode threads) {
  replay::ReplayOptions o;
  o.driver_path = BuildDir() + "/lib/libcltrace_refdriver.so";
  o.threads = threads;
  o.segment_events = 1024;
  o.history_events = 2048;
  return o;
}

class ReplayStreamedTest : public ::testing::TestWithParam<replay::ThreadMode> {
 protected:
  void SetUp() override {
    if (LongTrace().empty()) GTEST_SKIP() << "cannot record the workload";
  }
};

// The bookkeeping a replay keeps does not grow with the trace: events are held a segment and
// a history tail at a time, and a destroyed handle leaves the handle map (after the
// quarantine), so live handles and map entries stay far below the handles the trace creates.
TEST_P(ReplayStreamedTest, BookkeepingStaysBoundedOnALongTrace) {
  std::ostringstream out, err;
  ReplayStreamCounts c;
  const replay::ReplayOptions o = Options(GetParam());
  ASSERT_EQ(ReplayStreamed(o, LongTrace(), false, false, out, err, &c), 0)
      << out.str() << err.str();
  EXPECT_THAT(out.str(), StartsWith("replay: identical ("));
  const uint64_t events = c.replay.events_read;
  ASSERT_GE(events, 1'000'000u);
  EXPECT_GE(c.replay.segments, events / (8 * o.segment_events));
  // A segment ends at the first point after segment_events where no recorded call is in
  // flight: a few calls later in this workload.
  EXPECT_LE(c.replay.peak_segment_events, 16 * o.segment_events);
  EXPECT_LE(c.replay.peak_history_events, o.history_events + c.replay.peak_segment_events);
  EXPECT_LE(c.replay.peak_parent_tail, uint64_t{1} << 16);
  // The workload keeps a handful of objects alive and creates and destroys command lists,
  // queries and resources every frame.
  EXPECT_LE(c.replay.peak_live_handles, 256u);
  // Destroyed handles' memory waits in a quarantine of at most 2^16 blocks, then leaves the
  // map (the adapters' entries besides): 700 frames destroy more handles than that.
  EXPECT_LE(c.replay.peak_handle_map, c.replay.peak_live_handles + (uint64_t{1} << 16) + 8);
  EXPECT_LE(c.replay.peak_quarantined, uint64_t{1} << 16);
  EXPECT_LE(c.replay.peak_pending_async, 16u);
  EXPECT_LE(c.stream.peak_events_held, uint64_t{1} << 18);
  EXPECT_FALSE(c.replay.stopped_early);
}

INSTANTIATE_TEST_SUITE_P(Modes, ReplayStreamedTest,
                         ::testing::Values(replay::ThreadMode::kSingle,
                                           replay::ThreadMode::kRecorded));

// --until SEQ near the start reads the first chunks only; the full replay reads them all.
TEST(ReplayStreamedUntilTest, ReadsOnlyTheChunksItNeeds) {
  if (LongTrace().empty()) GTEST_SKIP() << "cannot record the workload";
  replay::ReplayOptions o = Options(replay::ThreadMode::kSingle);
  std::ostringstream all_out, all_err;
  ReplayStreamCounts all;
  ASSERT_EQ(ReplayStreamed(o, LongTrace(), false, false, all_out, all_err, &all), 0);
  ASSERT_GE(all.stream.chunks_decoded, 8u) << "the trace should span many chunks";

  o.until_seq = 5000;
  std::ostringstream out, err;
  ReplayStreamCounts until;
  ASSERT_EQ(ReplayStreamed(o, LongTrace(), false, false, out, err, &until), 0) << err.str();
  EXPECT_THAT(out.str(), StartsWith("replay: identical ("));
  EXPECT_THAT(out.str(), HasSubstr("note: replayed top-level calls up to seq 5000 (--until)"));
  EXPECT_TRUE(until.replay.stopped_early);
  EXPECT_LE(until.stream.chunks_decoded + until.stream.chunks_redecoded, 3u);
  EXPECT_LT(until.replay.events_read, all.replay.events_read / 8);
}

// Progress (issue #16 item 5): on a terminal (a pseudo-terminal from script(1);
// CLTRACE_PROGRESS_AFTER_MS=0 draws from the first update instead of after a second) replay
// draws its bar on standard error and erases it before the report; with --quiet, or when
// standard error is not a terminal, nothing is added; the report is the same either way.
TEST(ReplayProgressTest, BarOnlyOnATerminalAndNeverWithQuiet) {
  if (LongTrace().empty()) GTEST_SKIP() << "cannot record the workload";
  if (std::system("script --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  const std::string dir = absl::StrCat(::testing::TempDir(), "/", getpid(), "_progress");
  ASSERT_EQ(std::system(absl::StrCat("mkdir -p '", dir, "'").c_str()), 0);
  const std::string replay =
      absl::StrCat(BuildDir(), "/bin/cltrace replay ", LongTrace(), " --driver ", BuildDir(),
                   "/lib/libcltrace_refdriver.so --threads single --until 20000");
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  auto run = [&](const std::string& cmd) {
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  // Not a terminal: standard error stays empty.
  ASSERT_EQ(run(absl::StrCat("CLTRACE_PROGRESS_AFTER_MS=0 ", replay, " >'", dir, "/out' 2>'", dir,
                             "/err'")),
            0)
      << read(dir + "/err");
  EXPECT_EQ(read(dir + "/err"), "");
  const std::string report = read(dir + "/out");
  EXPECT_THAT(report, StartsWith("replay: identical ("));
  auto on_terminal = [&](const std::string& args) {
    EXPECT_EQ(run(absl::StrCat("CLTRACE_PROGRESS_AFTER_MS=0 script -qec \"", replay, args,
                               "\" /dev/null >'", dir, "/tty' 2>&1")),
              0);
    return read(dir + "/tty");
  };
  const std::string shown = on_terminal("");
  EXPECT_THAT(shown, HasSubstr("replay"));
  EXPECT_THAT(shown, HasSubstr("calls/s"));
  EXPECT_THAT(shown, HasSubstr(" / 20.0 k calls"));  // --until: the calls up to SEQ
  EXPECT_THAT(shown, HasSubstr("\r\x1b[K"));         // erased before the report
  EXPECT_THAT(shown, HasSubstr("replay: identical ("));
  const std::string quiet = on_terminal(" --quiet");
  EXPECT_THAT(quiet, Not(HasSubstr("calls/s")));
  EXPECT_THAT(quiet, HasSubstr("replay: identical ("));
  // --kernel model loads the trace (--until: up to SEQ) before the replay: the bar shows the
  // loading, then is erased.
  const std::string model = on_terminal(" --kernel model");
  EXPECT_THAT(model, HasSubstr("calls/s"));
  EXPECT_THAT(model, HasSubstr("\x1b[K\r\x1b[Kreplay: identical ("));
  EXPECT_THAT(on_terminal(" --kernel model --quiet"), Not(HasSubstr("calls/s")));
  const std::string bin = BuildDir() + "/bin/";
  const std::string small = dir + "/small.cltrace";
  ASSERT_EQ(run(absl::StrCat(bin, "cltrace record -o ", small, " -- ", bin,
                             "cltrace-workload smallcl --frames 60 >/dev/null 2>&1")),
            0);
  EXPECT_EQ(run(absl::StrCat("CLTRACE_PROGRESS_AFTER_MS=0 script -qec \"", bin, "cltrace replay ",
                             small, " --driver ", BuildDir(),
                             "/lib/libcltrace_refdriver.so --threads single --kernel model\" "
                             "/dev/null >'",
                             dir, "/tty' 2>&1")),
            0);
  const std::string loaded = read(dir + "/tty");  // the whole trace loaded
  EXPECT_THAT(loaded, HasSubstr("calls/s"));
  EXPECT_THAT(loaded, HasSubstr("\x1b[K\r\x1b[Kreplay: identical ("));
  std::system(absl::StrCat("rm -rf '", dir, "'").c_str());
}

// --kernel model holds the calls it replays in memory: a trace that would not fit in what the
// machine has available is refused up front (exit 2) with the figures and the way out, rather
// than killed by the kernel half-way; --until counts only the calls it needs.
TEST(ReplayKernelModelTest, RefusesATraceThatWouldNotFitInMemory) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/", getpid(), "_kernel_memory");
  ASSERT_EQ(std::system(absl::StrCat("mkdir -p '", dir, "'").c_str()), 0);
  const std::string replay =
      absl::StrCat(BuildDir(), "/bin/cltrace replay corpus/traces/smallcl.cltrace --driver ",
                   BuildDir(), "/lib/libcltrace_refdriver.so --kernel model --quiet");
  auto run = [&](const std::string& env, const std::string& args, std::string* err) {
    const int status =
        std::system(absl::StrCat(env, " ", replay, args, " >/dev/null 2>'", dir, "/err'").c_str());
    std::ifstream in(dir + "/err");
    std::stringstream text;
    text << in.rdbuf();
    *err = text.str();
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  std::string err;
  EXPECT_EQ(run("CLTRACE_MEMORY_AVAILABLE=100000", "", &err), 2);
  EXPECT_THAT(err, HasSubstr("--kernel model holds the calls it replays in memory"));
  EXPECT_THAT(err, HasSubstr("calls, more than the 0.0 GiB available"));
  EXPECT_THAT(err, HasSubstr("--kernel recorded"));
  // The same trace with the memory to hold it, and only its first calls in little memory.
  EXPECT_EQ(run("CLTRACE_MEMORY_AVAILABLE=1000000000", "", &err), 0) << err;
  EXPECT_EQ(run("CLTRACE_MEMORY_AVAILABLE=100000", " --until 100", &err), 0) << err;
  std::system(absl::StrCat("rm -rf '", dir, "'").c_str());
}

}  // namespace
}  // namespace cltrace::cli
