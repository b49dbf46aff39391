// `cltrace record` end to end: the workload program under the recorder shim with the reference
// driver.
//
// - Count in == count out: for T = 1, 2, 8, 64 threads the trace holds exactly the calls the
//   workload reports on its `calls: N` line (the driver's entry point OpenAdapter10_2 is not a
//   catalog call: the runtime does not count it and `cltrace record` reports it apart), every
//   call once
//   (positions 1..2N each used once), each thread's calls in its own order, properly nested.
// - Programs killed by SIGSEGV / SIGABRT (after the work, or from a watchdog thread mid-run)
//   leave a trace `cltrace info` reads, with every call made before a crash outside a call.
// - A full disk (/dev/full) or an unwritable output never stops the program; a trace that
//   cannot be created, or a program that never loads a driver, makes record fail after it.
// - SIGKILL, SIGBUS after the work leave every call (the service drains the region).
// - After a write failure, recorded = written + not written exactly.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ddi/catalog.h"
#include "format/load_trace.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"
#include "gtest/gtest.h"
#include "tests/testing/command_test.h"

namespace cltrace {
namespace {

using ::cltrace::testing::ReadFile;
using Result = ::cltrace::testing::CommandResult;

class RecordE2eTest : public ::cltrace::testing::CommandTest {
 public:
  Result Record(const std::string& trace, const std::string& program) {
    return Run(absl::StrCat(CLTRACE_BIN, " record -o ", trace, " -- ", program));
  }
  std::string Trace(const std::string& name) { return dir_ + "/" + name; }
};

// The number the first match of `re` (one group of digits) captures in `text`; 0 if none.
uint64_t CapturedNumber(const std::string& text, const std::regex& re) {
  std::smatch m;
  uint64_t n = 0;
  if (std::regex_search(text, m, re)) {
    EXPECT_TRUE(absl::SimpleAtoi(m[1].str(), &n));
  }
  return n;
}

// The `calls: N` line of the runtime-model program.
uint64_t CallsLine(const std::string& out) {
  static const std::regex re("calls: ([0-9]+)");
  return CapturedNumber(out, re);
}

// The OpenAdapter10_2 calls `cltrace record` reports beside the recorded calls.
uint64_t AdapterOpens(const std::string& err) {
  static const std::regex re("\\+([0-9]+) OpenAdapter10_2");
  return CapturedNumber(err, re);
}

// Every position used once; per thread, calls in increasing order that nest like a stack
// (a call's parent is the innermost open call of its thread, and it returns first).
void ExpectWellFormed(const std::vector<format::Event>& events, bool allow_incomplete) {
  std::vector<uint64_t> positions;
  for (const format::Event& e : events) {
    positions.push_back(e.seq);
    if (e.end != 0) positions.push_back(e.end);
    if (!allow_incomplete) {
      EXPECT_NE(e.end, 0u) << "seq " << e.seq << " never returned";
    }
  }
  std::sort(positions.begin(), positions.end());
  EXPECT_TRUE(std::adjacent_find(positions.begin(), positions.end()) == positions.end())
      << "a position is used twice";
  if (!allow_incomplete) {
    for (size_t i = 0; i < positions.size(); ++i) {
      ASSERT_EQ(positions[i], i + 1) << "position " << i + 1 << " missing";
    }
  }
  std::set<uint64_t> seqs;
  for (const format::Event& e : events) seqs.insert(e.seq);
  std::map<uint32_t, std::vector<const format::Event*>> by_thread;
  for (const format::Event& e : events) by_thread[e.tid].push_back(&e);
  for (auto& [tid, list] : by_thread) {
    std::vector<const format::Event*> open;
    for (const format::Event* e : list) {  // events are sorted by seq
      while (!open.empty() && open.back()->end != 0 && open.back()->end < e->seq) open.pop_back();
      if (allow_incomplete && e->parent != 0 && seqs.count(e->parent) == 0) {
        // Its parent was still running on a thread other than the crashing one when the
        // process died: a call inside it that returned is there, the parent is not.
        open.clear();
        open.push_back(e);
        continue;
      }
      const uint64_t expected_parent = open.empty() ? 0 : open.back()->seq;
      if (e->parent != expected_parent) {
        const format::Event* p = nullptr;
        for (const format::Event& q : events) {
          if (q.seq == e->parent) p = &q;
        }
        FAIL() << "thread " << tid << " seq " << e->seq << " end " << e->end << " "
               << format::GetCall(e->call)->name << ": parent " << e->parent
               << (p == nullptr ? std::string(" (not in the trace)")
                                : absl::StrCat(" = ", format::GetCall(p->call)->name, " tid ",
                                               p->tid, " end ", p->end))
               << ", innermost open call of the thread " << expected_parent;
      }
      if (!open.empty() && e->end != 0 && open.back()->end != 0) {
        ASSERT_LT(e->end, open.back()->end) << "seq " << e->seq << " returns after its parent";
      }
      open.push_back(e);
    }
  }
}

class CountTest : public RecordE2eTest, public ::testing::WithParamInterface<int> {};

TEST_P(CountTest, SceneTraceHoldsExactlyTheCallsTheWorkloadMade) {
  const int threads = GetParam();
  const std::string trace = Trace("scene.cltrace");
  Result r = Record(trace, absl::StrCat(CLTRACE_WORKLOAD_BIN, " scene --threads ", threads));
  ASSERT_EQ(r.exit, 0) << r.out << r.err;
  const uint64_t calls = CallsLine(r.out);
  const uint64_t adapters = AdapterOpens(r.err);
  ASSERT_GT(calls, 0u) << r.out;
  EXPECT_EQ(adapters, 1u) << r.err;
  absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->events.size(), calls) << r.err;
  EXPECT_TRUE(t->stats.has_index);
  EXPECT_EQ(t->torn_tail, -1);
  ExpectWellFormed(t->events, /*allow_incomplete=*/false);
  // Callbacks made inside DDI calls, and the runtime's API annotations.
  size_t callbacks = 0, annotated = 0;
  for (const format::Event& e : t->events) {
    const format::Layer layer = format::GetCall(e.call)->layer;
    if (layer == format::Layer::kCoreLayer || layer == format::Layer::kKernelCb) {
      ++callbacks;
      EXPECT_NE(e.parent, 0u) << format::GetCall(e.call)->name << " outside a DDI call";
    }
    if (e.annotation != 0) ++annotated;
  }
  EXPECT_GT(callbacks, 0u);
  EXPECT_GT(annotated, 0u);
  std::set<uint32_t> tids;
  for (const format::Event& e : t->events) tids.insert(e.tid);
  EXPECT_GE(tids.size(), static_cast<size_t>(std::min(threads, 2)));
  Result info = Run(absl::StrCat(CLTRACE_BIN, " info ", trace));
  EXPECT_EQ(info.exit, 0) << info.err;
}

INSTANTIATE_TEST_SUITE_P(Threads, CountTest, ::testing::Values(1, 2, 8, 64));

TEST_F(RecordE2eTest, SmallCommandListTraceHoldsExactlyTheCallsTheWorkloadMade) {
  const std::string trace = Trace("smallcl.cltrace");
  Result r = Record(trace, absl::StrCat(CLTRACE_WORKLOAD_BIN, " smallcl --threads 4"));
  ASSERT_EQ(r.exit, 0) << r.out << r.err;
  absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(AdapterOpens(r.err), 1u) << r.err;
  EXPECT_EQ(t->events.size(), CallsLine(r.out));
  ExpectWellFormed(t->events, false);
}

// Issue #16 item 7: `long` (smallcl's shape with lists of draws) on four threads at once, the
// shape whose recording throughput is measured, loses and duplicates no call.
TEST_F(RecordE2eTest, LongMultiThreadedTraceHoldsExactlyTheCallsTheWorkloadMade) {
  const std::string trace = Trace("long.cltrace");
  Result r = Record(trace, absl::StrCat(CLTRACE_WORKLOAD_BIN, " long --threads 4 --frames 40"));
  ASSERT_EQ(r.exit, 0) << r.out << r.err;
  const uint64_t calls = CallsLine(r.out);
  ASSERT_GT(calls, 10000u) << r.out;
  absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(AdapterOpens(r.err), 1u) << r.err;
  EXPECT_EQ(t->events.size(), calls) << r.err;
  EXPECT_EQ(t->torn_tail, -1);
  ExpectWellFormed(t->events, /*allow_incomplete=*/false);
  std::set<uint32_t> tids;
  for (const format::Event& e : t->events) tids.insert(e.tid);
  EXPECT_GE(tids.size(), 4u);
}

// The DX6 path (ddi-spec §7) has no D3D11 device: the workload hands the DX6 driver's tables to
// the driver library's CltraceWrapKernelTable hook, so the shim records them as their own layer.
TEST_F(RecordE2eTest, Dx6DriverCallsAreRecordedAsTheirOwnLayer) {
  const std::string trace = Trace("dp2.cltrace");
  Result r = Record(trace, absl::StrCat(CLTRACE_WORKLOAD_BIN, " dp2"));
  ASSERT_EQ(r.exit, 0) << r.out << r.err;
  absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->events.size(), CallsLine(r.out));
  ExpectWellFormed(t->events, false);
  std::map<std::string, int> dx6;
  for (const format::Event& e : t->events) {
    const format::CallInfo* ci = format::GetCall(e.call);
    if (ci->layer == format::Layer::kDx6) ++dx6[ci->name];
  }
  EXPECT_GT(dx6["D3dDrawPrimitives2"], 0);
  EXPECT_GT(dx6["CreateD3DBuffer"], 0);
  EXPECT_EQ(dx6["CreateD3DBuffer"], dx6["DestroyD3DBuffer"]) << "every buffer torn down";
  EXPECT_GT(dx6["LockD3DBuffer"], 0);
  // A driver that reports a wrong dwErrorOffset (planted R80): the checker finds it in the trace.
  const std::string bug = Trace("dp2_r80.cltrace");
  Result b = Record(bug, absl::StrCat(CLTRACE_WORKLOAD_BIN, " dp2 --bug R80"));
  EXPECT_EQ(b.exit, 1) << b.out << b.err;
  Result check = Run(absl::StrCat(CLTRACE_BIN, " check ", bug));
  EXPECT_EQ(check.exit, 1) << check.out;
  EXPECT_TRUE(absl::StrContains(check.out, "R80 seq=")) << check.out;
}

TEST_F(RecordE2eTest, ExitStatusOfTheProgramIsPropagated) {
  Result r = Record(Trace("t.cltrace"),
                    absl::StrCat("sh -c '", CLTRACE_WORKLOAD_BIN, " smallcl; exit 7'"));
  EXPECT_EQ(r.exit, 7) << r.err;
  EXPECT_GT(CallsLine(r.out), 0u) << r.out;
  // A planted driver bug makes the workload report violations and exit 1.
  r = Record(Trace("bug.cltrace"), absl::StrCat(CLTRACE_WORKLOAD_BIN, " smallcl --bug R22"));
  EXPECT_EQ(r.exit, 1) << r.out << r.err;
}

// The violation lines of a report (record --check's stderr, check's stdout): `R<n> seq=...`
// lines without the warnings, in order.
std::vector<std::string> ViolationLines(const std::string& text) {
  static const std::regex re("^R[0-9]+ seq=[0-9]+ tid=[0-9]+ fn=");
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, re) && !absl::StrContains(line, ": warning: ")) {
      lines.push_back(line);
    }
  }
  return lines;
}

// record --check (issue #17 item 6): the planted R22 is printed while the program runs, as the
// line `cltrace check` prints for the written trace; a program that succeeded then makes
// record exit 1, one that failed keeps its own status.
TEST_F(RecordE2eTest, CheckPrintsTheViolationsCheckFindsInTheTrace) {
  const std::string trace = Trace("r22.cltrace");
  // The workload judges itself and exits 1 on a planted bug: `exit 0` makes it a program that
  // succeeded, so the 1 is record's.
  Result r = Run(absl::StrCat(CLTRACE_BIN, " record --check -o ", trace, " -- sh -c '",
                              CLTRACE_WORKLOAD_BIN, " smallcl --threads 2 --bug R22; exit 0'"));
  EXPECT_EQ(r.exit, 1) << r.err;
  const std::vector<std::string> live = ViolationLines(r.err);
  ASSERT_FALSE(live.empty()) << r.err;
  EXPECT_TRUE(std::any_of(live.begin(), live.end(), [](const std::string& l) {
    return absl::StartsWith(l, "R22 seq=");
  })) << r.err;
  // Printed before record's report of the recording.
  EXPECT_LT(r.err.find(live.front()), r.err.find(" calls recorded")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, absl::StrCat("cltrace record: check: ", CallsLine(r.out),
                                                    " calls, ", live.size(), " violations")))
      << r.err;
  Result check = Run(absl::StrCat(CLTRACE_BIN, " check ", trace));
  EXPECT_EQ(check.exit, 1) << check.out;
  EXPECT_EQ(live, ViolationLines(check.out)) << r.err << "\n---\n" << check.out;

  // The program's own failure status wins.
  Result failed =
      Run(absl::StrCat(CLTRACE_BIN, " record --check -o ", Trace("r22_7.cltrace"), " -- sh -c '",
                       CLTRACE_WORKLOAD_BIN, " smallcl --bug R22; exit 7'"));
  EXPECT_EQ(failed.exit, 7) << failed.err;
  EXPECT_FALSE(ViolationLines(failed.err).empty()) << failed.err;
}

TEST_F(RecordE2eTest, CheckOfACleanProgramPrintsNoViolation) {
  const std::string trace = Trace("clean.cltrace");
  Result r = Run(absl::StrCat(CLTRACE_BIN, " record --check -o ", trace, " -- ",
                              CLTRACE_WORKLOAD_BIN, " smallcl --threads 2"));
  EXPECT_EQ(r.exit, 0) << r.err;
  EXPECT_TRUE(ViolationLines(r.err).empty()) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, " 0 violations")) << r.err;
  Result check = Run(absl::StrCat(CLTRACE_BIN, " check ", trace));
  EXPECT_EQ(check.exit, 0) << check.out;
}

// A program killed mid-run leaves holes: --check judges what was committed as check does (a
// finding across a hole withheld) and record keeps the 128 + signal status.
TEST_F(RecordE2eTest, CheckOfAProgramKilledMidRunAgreesWithCheck) {
  const std::string trace = Trace("abort_mid.cltrace");
  Result r = Run(absl::StrCat(CLTRACE_BIN, " record --check -o ", trace, " -- ",
                              CLTRACE_CRASH_APP_BIN, " during abort"));
  EXPECT_EQ(r.exit, 128 + SIGABRT) << r.err;
  Result check = Run(absl::StrCat(CLTRACE_BIN, " check ", trace));
  EXPECT_NE(check.exit, 2) << check.out << check.err;
  EXPECT_EQ(ViolationLines(r.err), ViolationLines(check.out)) << r.err << "\n---\n" << check.out;
  EXPECT_TRUE(absl::StrContains(r.err, "cltrace record: check: ")) << r.err;
}

// A program that never loads a driver records nothing: that is no success, whatever the
// program's own status (which the message gives).
TEST_F(RecordE2eTest, ProgramThatNeverLoadedADriverIsAnError) {
  Result r = Record(Trace("t.cltrace"), "/bin/true");
  EXPECT_EQ(r.exit, 2) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "never loaded a driver")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "exit status 0")) << r.err;
  EXPECT_FALSE(absl::StrContains(r.err, "written to")) << r.err;
  r = Record(Trace("t7.cltrace"), "sh -c 'exit 7'");
  EXPECT_EQ(r.exit, 2) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "never loaded a driver")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "exit status 7")) << r.err;
}

TEST_F(RecordE2eTest, UsageErrors) {
  Result r = Run(absl::StrCat(CLTRACE_BIN, " record -- true"));
  EXPECT_EQ(r.exit, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "-o OUT.cltrace is required")) << r.err;
  r = Run(absl::StrCat(CLTRACE_BIN, " record -o ", Trace("t.cltrace")));
  EXPECT_EQ(r.exit, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "no program")) << r.err;
  r = Run(absl::StrCat(CLTRACE_BIN, " record -o ", Trace("t.cltrace"), " -- ", dir_,
                       "/no-such-program"));
  EXPECT_EQ(r.exit, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "cannot run")) << r.err;
}

// How the crash app dies (its argument) and the signal that kills it.
struct SignalCase {
  const char* how;
  int sig;
};

std::string SignalName(const ::testing::TestParamInfo<SignalCase>& info) { return info.param.how; }

class CrashAfterTheWorkTest : public RecordE2eTest,
                              public ::testing::WithParamInterface<SignalCase> {};

TEST_P(CrashAfterTheWorkTest, LeavesEveryCall) {
  const std::string how = GetParam().how;
  const int sig = GetParam().sig;
  const std::string trace = Trace(how + ".cltrace");
  Result r = Record(trace, absl::StrCat(CLTRACE_CRASH_APP_BIN, " after ", how));
  EXPECT_EQ(r.exit, 128 + sig) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "killed by signal")) << r.err;
  const uint64_t calls = CallsLine(r.out);
  ASSERT_GT(calls, 0u) << r.out;
  absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  // The crash happened between calls: every call is there, complete.
  EXPECT_EQ(t->events.size(), calls);
  ExpectWellFormed(t->events, false);
  Result info = Run(absl::StrCat(CLTRACE_BIN, " info ", trace));
  EXPECT_EQ(info.exit, 0) << info.err;
  EXPECT_TRUE(absl::StrContains(info.out, absl::StrCat("calls           ", t->events.size())))
      << info.out;
}

// `cltrace record` drains the program's region itself: SIGKILL, which no handler sees, loses
// nothing either.
INSTANTIATE_TEST_SUITE_P(Signals, CrashAfterTheWorkTest,
                         ::testing::Values(SignalCase{"segv", SIGSEGV},
                                           SignalCase{"abort", SIGABRT}, SignalCase{"bus", SIGBUS},
                                           SignalCase{"kill", SIGKILL}),
                         SignalName);

class CrashMidRunTest : public RecordE2eTest, public ::testing::WithParamInterface<SignalCase> {};

INSTANTIATE_TEST_SUITE_P(Signals, CrashMidRunTest,
                         ::testing::Values(SignalCase{"segv", SIGSEGV},
                                           SignalCase{"abort", SIGABRT}, SignalCase{"bus", SIGBUS}),
                         SignalName);

// The figures of record's report: recorded, written, calls in flight, calls lost.
struct Figures {
  uint64_t recorded = 0, written = 0, in_flight = 0, lost = 0;
};
Figures ReportedFigures(const std::string& err) {
  Figures f;
  f.recorded = CapturedNumber(err, std::regex("([0-9]+) calls recorded"));
  f.written = CapturedNumber(err, std::regex(", ([0-9]+) written to"));
  f.in_flight = CapturedNumber(err, std::regex("calls in flight at the end ([0-9]+)"));
  f.lost = CapturedNumber(err, std::regex("calls lost: ([0-9]+)"));
  return f;
}

TEST_P(CrashMidRunTest, LeavesAReadableTrace) {
  const std::string how = GetParam().how;
  const int sig = GetParam().sig;
  const std::string trace = Trace(how + "_mid.cltrace");
  Result r = Record(trace, absl::StrCat(CLTRACE_CRASH_APP_BIN, " during ", how));
  EXPECT_EQ(r.exit, 128 + sig) << r.err;
  Result info = Run(absl::StrCat(CLTRACE_BIN, " info ", trace));
  EXPECT_EQ(info.exit, 0) << info.out << info.err;
  absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_GT(t->events.size(), 100u);
  // Calls still running on other threads when the process died are not in the trace; what is
  // there is consistent.
  ExpectWellFormed(t->events, /*allow_incomplete=*/true);
  // What was committed is written; what was in flight on the other threads is counted lost.
  const Figures f = ReportedFigures(r.err);
  EXPECT_EQ(f.recorded, f.written + f.lost) << r.err;
  EXPECT_EQ(f.lost, f.in_flight) << r.err;
  EXPECT_EQ(t->events.size(), f.written);
}

// SIGKILL, which no handler sees, at 20 seeded random moments of a 4-thread scene: every
// committed call is in the trace. The calls lost are exactly the ones in flight (recorded =
// written + lost), and the trace's missing positions are theirs: each in-flight call took an
// entry position and perhaps an exit position, so at most two per lost call; a committed call
// missing from the trace would leave two more.
TEST_F(RecordE2eTest, SigkillAtRandomMomentsLosesNoCommittedCall) {
  std::mt19937 rng(15);
  std::uniform_int_distribution<int> delay_ms(5, 150);
  for (int run = 0; run < 20; ++run) {
    const int delay = delay_ms(rng);
    SCOPED_TRACE(absl::StrCat("run ", run, ", SIGKILL after ", delay, " ms"));
    const std::string trace = Trace(absl::StrCat("kill", run, ".cltrace"));
    Result r = Record(trace, absl::StrCat(CLTRACE_CRASH_APP_BIN, " during kill ", delay));
    ASSERT_EQ(r.exit, 128 + SIGKILL) << r.err;
    const Figures f = ReportedFigures(r.err);
    ASSERT_GT(f.recorded, 0u) << r.err;
    EXPECT_EQ(f.recorded, f.written + f.lost) << r.err;
    EXPECT_EQ(f.lost, f.in_flight) << r.err;
    absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted(trace);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->events.size(), f.written);
    ExpectWellFormed(t->events, /*allow_incomplete=*/true);
    uint64_t used = 0, highest = 0;
    for (const format::Event& e : t->events) {
      used += e.end != 0 ? 2 : 1;
      highest = std::max({highest, e.seq, e.end});
    }
    EXPECT_LE(highest - used, 2 * f.in_flight) << r.err;
  }
}

// Attach mode: a program that loads the shim without `cltrace record` starts the service
// itself; the trace is complete when the program's exit status is known.
TEST_F(RecordE2eTest, ShimWithoutRecordStartsTheServiceItself) {
  const std::string trace = Trace("attached.cltrace"), stats = Trace("attached.stats");
  Result r = Run(absl::StrCat("CLTRACE_DRIVER=", CLTRACE_SHIM_SO, " CLTRACE_SHIM_OUTPUT=", trace,
                              " CLTRACE_SHIM_STATS=", stats, " ", CLTRACE_WORKLOAD_BIN,
                              " scene --threads 2"));
  ASSERT_EQ(r.exit, 0) << r.err;
  const uint64_t calls = CallsLine(r.out);
  ASSERT_GT(calls, 0u);
  absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->events.size(), calls);
  ExpectWellFormed(t->events, /*allow_incomplete=*/false);
  const std::string text = ReadFile(stats);
  EXPECT_TRUE(absl::StrContains(text, absl::StrCat("calls ", calls, "\n"))) << text;
  EXPECT_TRUE(absl::StrContains(text, "lost 0\n")) << text;
}

// Attach mode with SIGKILL: the service (no longer waited for) sees the program's end and
// still writes every committed call.
TEST_F(RecordE2eTest, AttachedServiceOutlivesASigkilledProgram) {
  const std::string trace = Trace("attached_kill.cltrace"), stats = Trace("attached_kill.stats");
  Result r = Run(absl::StrCat("CLTRACE_DRIVER=", CLTRACE_SHIM_SO, " CLTRACE_SHIM_OUTPUT=", trace,
                              " CLTRACE_SHIM_STATS=", stats, " ", CLTRACE_CRASH_APP_BIN,
                              " during kill 60"));
  ASSERT_EQ(r.exit, 128 + SIGKILL) << r.err;
  // The service finishes on its own after the program died: wait for its statistics (bounded).
  for (int i = 0; i < 600 && ReadFile(stats).find("lost ") == std::string::npos; ++i) {
    usleep(50 * 1000);
  }
  const std::string text = ReadFile(stats);
  ASSERT_TRUE(absl::StrContains(text, "lost ")) << "no statistics from the service";
  absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_GT(t->events.size(), 100u);
  ExpectWellFormed(t->events, /*allow_incomplete=*/true);
  const uint64_t events = CapturedNumber(text, std::regex("events ([0-9]+)"));
  const uint64_t calls = CapturedNumber(text, std::regex("calls ([0-9]+)"));
  const uint64_t lost = CapturedNumber(text, std::regex("lost ([0-9]+)"));
  EXPECT_EQ(events, t->events.size());
  EXPECT_EQ(calls, events + lost) << text;
}

TEST_F(RecordE2eTest, FullDiskDoesNotStopTheProgram) {
  // /dev/full: the very first write (the file header) fails with ENOSPC: no trace could be
  // created, the program ran unrecorded, record fails after it.
  Result r = Record("/dev/full", absl::StrCat(CLTRACE_WORKLOAD_BIN, " scene --threads 2"));
  EXPECT_EQ(r.exit, 2) << r.err;
  EXPECT_GT(CallsLine(r.out), 0u) << "the program ran to its end";
  EXPECT_TRUE(absl::StrContains(r.err, "the trace could not be created")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "/dev/full: No space left on device")) << r.err;
}

TEST_F(RecordE2eTest, WriteFailingMidRunDoesNotStopTheProgram) {
  // A file-size limit makes a later chunk write fail (EFBIG) after some chunks were written.
  // 1000 blocks of 512 bytes (sh): more than any one chunk takes (a chunk holds at most 1 MiB
  // before compression, ~160 KB after), less than the whole trace (1.3 MB at the least, in
  // 1 MiB chunks). With 200 blocks a drainer starved for ~50 ms on a loaded machine sealed a
  // first chunk over the limit, and nothing was written at all.
  const std::string trace = Trace("limited.cltrace");
  Result r = Run(absl::StrCat("ulimit -f 1000; ", CLTRACE_BIN, " record --flush-ms 2 -o ", trace,
                              " -- ", CLTRACE_WORKLOAD_BIN, " scene --threads 8 --frames 200"));
  EXPECT_EQ(r.exit, 0) << r.err;
  const uint64_t calls = CallsLine(r.out);
  EXPECT_GT(calls, 0u) << "the program ran to its end";
  EXPECT_TRUE(absl::StrContains(r.err, "write failures 1")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "File too large")) << r.err;
  // The part written before the failure is a readable trace.
  absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_GT(t->events.size(), 0u);
  EXPECT_LT(t->events.size(), calls);
  // Every recorded call is counted once: recorded = written + not written, and written is
  // what the file holds.
  std::smatch m;
  const std::string err = r.err;
  ASSERT_TRUE(std::regex_search(err, m, std::regex("([0-9]+) calls recorded .*, ([0-9]+) written")))
      << err;
  uint64_t recorded = 0, written = 0, not_written = 0;
  ASSERT_TRUE(absl::SimpleAtoi(m[1].str(), &recorded));
  ASSERT_TRUE(absl::SimpleAtoi(m[2].str(), &written));
  ASSERT_TRUE(std::regex_search(err, m, std::regex("calls not written ([0-9]+)"))) << err;
  ASSERT_TRUE(absl::SimpleAtoi(m[1].str(), &not_written));
  EXPECT_EQ(recorded, calls);
  EXPECT_EQ(recorded, written + not_written) << err;
  EXPECT_EQ(written, t->events.size()) << err;
}

TEST_F(RecordE2eTest, UnwritableOutputDoesNotStopTheProgramButIsAnError) {
  const std::string path = dir_ + "/no-such-dir/t.cltrace";
  Result r = Record(path, absl::StrCat(CLTRACE_WORKLOAD_BIN, " scene --threads 2"));
  EXPECT_EQ(r.exit, 2) << r.err;
  EXPECT_GT(CallsLine(r.out), 0u) << "the program ran to its end";
  EXPECT_TRUE(
      absl::StrContains(r.err, absl::StrCat("cannot create ", path, ": No such file or directory")))
      << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "ran without recording (it ended with exit status 0)"))
      << r.err;
  EXPECT_FALSE(absl::StrContains(r.err, "written to")) << r.err;
}

// Writes `events` (ids of `from`'s tables) as a trace whose writer is `writer_name`.
void WriteCopy(const format::LoadedTrace& from, const std::vector<format::Event>& events,
               const std::string& writer_name, const std::string& path) {
  format::TraceWriter::Options o;
  o.background = false;
  o.writer.set_name(writer_name);
  absl::StatusOr<std::unique_ptr<format::TraceWriter>> w = format::TraceWriter::Open(path, o);
  ASSERT_TRUE(w.ok()) << w.status();
  // Interned in order, every token keeps its id.
  for (uint64_t i = 1; i < from.handles.size(); ++i) {
    ASSERT_EQ((*w)->InternHandleToken(from.handles.Token(i)), i);
  }
  for (uint64_t i = 1; i < from.strings.size(); ++i) {
    ASSERT_EQ((*w)->InternString(from.strings.Token(i)), i);
  }
  for (uint64_t i = 1; i < from.contents.size(); ++i) {
    ASSERT_EQ((*w)->InternContent(from.contents.Token(i)), i);
  }
  for (const format::Event& e : events) ASSERT_TRUE((*w)->Append(e).ok()) << "seq " << e.seq;
  ASSERT_TRUE((*w)->Close().ok());
}

// A recording with a hole (the calls of one RecycleCreateCommandList lost, as a killed
// program loses unwritten buffers): `info` shows the gap, and `check` does not judge the
// handles whose history crosses it: no R40/R41 about the command list whose re-creation is
// missing, one GAPS warning instead. The same events written as a non-recording (where
// missing positions are not holes) show the false findings the hole causes.
TEST_F(RecordE2eTest, CheckDoesNotJudgeAcrossAHoleOfARecording) {
  const std::string trace = Trace("smallcl.cltrace");
  Result r = Record(trace, absl::StrCat(CLTRACE_WORKLOAD_BIN, " smallcl --threads 2 --frames 20"));
  ASSERT_EQ(r.exit, 0) << r.err;
  absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->gaps.complete());
  Result info = Run(absl::StrCat(CLTRACE_BIN, " info ", trace));
  EXPECT_TRUE(absl::StrContains(info.out, "\ngaps            none\n")) << info.out;
  Result clean = Run(absl::StrCat(CLTRACE_BIN, " check ", trace));
  ASSERT_EQ(clean.exit, 0) << clean.out;

  // The first RecycleCreateCommandList after the middle of the trace, with every call in it.
  const format::Event* victim = nullptr;
  for (const format::Event& e : t->events) {
    if (e.call == format::CallId::kRecycleCreateCommandList && e.seq > t->gaps.highest / 2) {
      victim = &e;
      break;
    }
  }
  ASSERT_NE(victim, nullptr);
  std::set<uint64_t> removed{victim->seq};  // the call and every call made inside it
  std::vector<uint64_t> lost_positions;     // their entry and exit positions
  std::vector<format::Event> kept;
  for (const format::Event& e : t->events) {
    if (removed.count(e.seq) != 0 || removed.count(e.parent) != 0) {
      removed.insert(e.seq);
      lost_positions.push_back(e.seq);
      lost_positions.push_back(e.end);
    } else {
      kept.push_back(e);
    }
  }
  std::sort(lost_positions.begin(), lost_positions.end());
  const uint64_t first = lost_positions.front(), last = lost_positions.back();
  const uint64_t lost = lost_positions.size();
  size_t holes = 1;  // runs of consecutive lost positions
  for (size_t i = 1; i < lost_positions.size(); ++i) {
    if (lost_positions[i] != lost_positions[i - 1] + 1) ++holes;
  }
  ASSERT_GT(removed.size(), 1u) << "the re-creation makes calls inside it (state refresh)";

  const std::string holey = Trace("holey.cltrace");
  WriteCopy(*t, kept, "cltrace-recorder", holey);
  const std::string sparse = Trace("sparse.cltrace");
  WriteCopy(*t, kept, "hand-written", sparse);
  ASSERT_FALSE(HasFailure());

  info = Run(absl::StrCat(CLTRACE_BIN, " info ", holey));
  EXPECT_EQ(info.exit, 0) << info.err;
  EXPECT_TRUE(absl::StrContains(
      info.out,
      absl::StrCat("\ngaps            ", lost, " (first missing seq ", first, ")",
                   holes > 1 ? absl::StrCat(", in ", holes, " holes") : std::string(), "\n")))
      << info.out;
  Result sparse_info = Run(absl::StrCat(CLTRACE_BIN, " info ", sparse));
  EXPECT_TRUE(absl::StrContains(sparse_info.out, "\ngaps            not checked"))
      << sparse_info.out;

  // Without the hole's protection the checker reports the command list as recycled-destroyed.
  Result unprotected = Run(absl::StrCat(CLTRACE_BIN, " check ", sparse));
  EXPECT_EQ(unprotected.exit, 1) << unprotected.out;
  EXPECT_TRUE(std::regex_search(unprotected.out, std::regex("(^|\n)R4[01] seq=")))
      << unprotected.out;

  Result check = Run(absl::StrCat(CLTRACE_BIN, " check ", holey));
  EXPECT_EQ(check.exit, 0) << check.out;
  EXPECT_FALSE(std::regex_search(check.out, std::regex("(^|\n)R4[01] seq="))) << check.out;
  std::vector<std::string> gaps_lines;
  std::istringstream lines(check.out);
  for (std::string line; std::getline(lines, line);) {
    if (absl::StartsWith(line, "GAPS ")) gaps_lines.push_back(line);
  }
  ASSERT_EQ(gaps_lines.size(), 1u) << check.out;
  EXPECT_TRUE(absl::StartsWith(gaps_lines[0], absl::StrCat("GAPS seq=", first, " tid=0 fn=- ")))
      << gaps_lines[0];
  EXPECT_TRUE(absl::StrContains(
      gaps_lines[0], absl::StrCat(lost, " positions missing in ", holes,
                                  holes == 1 ? " hole" : " holes", ", seq ", first, " .. ", last)))
      << gaps_lines[0];
  EXPECT_TRUE(absl::StrContains(gaps_lines[0], "findings about handles whose history crosses"))
      << gaps_lines[0];
  Result json = Run(absl::StrCat(CLTRACE_BIN, " check --json ", holey));
  EXPECT_EQ(json.exit, 0) << json.out;
  EXPECT_TRUE(absl::StrContains(json.out, "\"rule\": \"GAPS\"")) << json.out;

  // Replay refuses to cross the hole (it would judge the driver by a history it never had) and
  // says how to replay what comes before it; up to there the replay is faithful.
  Result replay = Run(absl::StrCat(CLTRACE_BIN, " replay ", holey));
  EXPECT_EQ(replay.exit, 2) << replay.out << replay.err;
  EXPECT_TRUE(absl::StrContains(
      replay.err, absl::StrCat("the recording has ", lost, " missing positions (first missing seq ",
                               first, ", in ", holes, holes == 1 ? " hole" : " holes",
                               "): calls lost when the recorded program died; replay the calls "
                               "before the first hole with --until ",
                               first - 1)))
      << replay.err;
  Result before = Run(absl::StrCat(CLTRACE_BIN, " replay --until ", first - 1, " ", holey));
  EXPECT_EQ(before.exit, 0) << before.out << before.err;
  EXPECT_TRUE(absl::StartsWith(before.out, "replay: identical (")) << before.out;
}

// A position used twice is corruption (FORMAT.md §5.5): info says which and exits 2.
TEST_F(RecordE2eTest, InfoRejectsAPositionUsedTwice) {
  const std::string trace = Trace("smallcl.cltrace");
  Result r = Record(trace, absl::StrCat(CLTRACE_WORKLOAD_BIN, " smallcl --threads 1 --frames 2"));
  ASSERT_EQ(r.exit, 0) << r.err;
  absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_GT(t->events.size(), 10u);
  std::vector<format::Event> events = t->events;
  format::Event twice = events[5];
  events.push_back(twice);  // its seq and its end are used twice
  const std::string damaged = Trace("damaged.cltrace");
  WriteCopy(*t, events, "cltrace-recorder", damaged);
  ASSERT_FALSE(HasFailure());
  Result info = Run(absl::StrCat(CLTRACE_BIN, " info ", damaged));
  EXPECT_EQ(info.exit, 2) << info.out << info.err;
  EXPECT_TRUE(absl::StrContains(
      info.err, absl::StrCat("position ", twice.seq, " is used by more than one call")))
      << info.err;
  EXPECT_TRUE(absl::StrContains(info.out, "2 positions used twice")) << info.out;
}

}  // namespace
}  // namespace cltrace
