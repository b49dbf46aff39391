// `cltrace replay` end to end (the tool, as a user runs it):
// - the hand-written tests/replay/small_cl.jsonl replays identically in both thread modes, and a
//   copy edited to expect a different return value diverges (exit 3);
// - every hostile input of tests/replay/inputs is bad input (exit 2) with a clear message;
// - with the workload program: a recorded smallcl trace replays identically in both modes and
//   the reports of repeated replays are byte-identical; a trace recorded from the planted-bug
//   driver (--bug R22) reproduces the bug on every replay and `cltrace check` names R22 on it;
//   a replay into a fixed driver shows the divergence; a runtime-misuse recording (--bug R40)
//   makes the reference driver report R40 again on every replay;
// - --kernel model: recordings of the present and scene workloads replay with the GPU/kernel
//   model reproducing every kernel-layer call; a recording of a misbehaving kernel (R75) and
//   of a driver that breaks R74 show where;
// - GPU content digests: fresh recordings hold one GpuFenceRetired per retired fence, which
//   --kernel model compares; a recorded digest altered with the format library diverges at its
//   event; recordings without those events (the committed ones) compare none; every other verb
//   takes the new events; 60 fresh multi-thread recordings all reproduce their digests;
// - determinism: without --keep-going the first divergence reported is the lowest one, on every
//   replay (never a kernel call let in out of turn); --threads single --kernel model refuses a
//   recording whose kernel calls overlapped across threads (exit 2) instead of diverging.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "ddi/catalog.h"
#include "format/load_trace.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/command_test.h"

namespace cltrace {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

using ::cltrace::testing::ReadFile;
using Result = ::cltrace::testing::CommandResult;

class ReplayE2eTest : public ::cltrace::testing::CommandTest {
 public:
  Result Replay(const std::string& args, std::string env = "") {
    // The saved scene4_* recordings were made by the driver that freed DC map-discard aliases
    // only with their resource (refdriver/README.md, `aliases`): replay into that driver.
    if (env.empty() && absl::StrContains(args, "/tests/replay/scene4_"))
      env = "CLTRACE_REFDRIVER_CONFIG=aliases=with_resource";
    return Run(absl::StrCat(env, env.empty() ? "" : " ", CLTRACE_BIN, " replay --driver ",
                            CLTRACE_REFDRIVER_LIB, " ", args));
  }
  static std::string Input(const std::string& name) {
    return absl::StrCat(CLTRACE_SOURCE_DIR, "/tests/replay/", name);
  }
};

TEST_F(ReplayE2eTest, HandWrittenTraceIsIdenticalInBothModes) {
  for (const char* mode : {"single", "recorded"}) {
    Result r = Replay(absl::StrCat("--threads ", mode, " ", Input("small_cl.jsonl")));
    EXPECT_EQ(r.exit, 0) << r.out << r.err;
    EXPECT_THAT(r.out, StartsWith("replay: identical (107 calls)\nkernel: 1 submissions, "));
  }
}

TEST_F(ReplayE2eTest, EditedReturnValueDiverges) {
  std::string trace = ReadFile(Input("small_cl.jsonl"));
  // CalcPrivateCommandListSize (seq 210) now claims 1000 bytes.
  const size_t at = trace.find("{\"seq\":210,");
  ASSERT_NE(at, std::string::npos);
  const size_t ret = trace.find("\"ret\":", at);
  const size_t end = trace.find('}', ret);
  trace.replace(ret, end - ret, "\"ret\":1000");
  std::ofstream(Path("edited.jsonl")) << trace;
  Result r = Replay(Path("edited.jsonl"));
  EXPECT_EQ(r.exit, 3) << r.out << r.err;
  EXPECT_THAT(r.out, StartsWith("replay: divergence at seq 210 (fn CalcPrivateCommandListSize, "
                                "tid 2): expected ret 1000, actual ret "));
  EXPECT_THAT(r.out, HasSubstr("\n  recent calls on dc1:\n"));
}

TEST_F(ReplayE2eTest, HostileInputsAreBadInput) {
  struct Case {
    const char* file;
    const char* out;  // first line of the report ("" when the reader rejects the file)
    const char* err;
  };
  const Case cases[] = {
      {"bad_handle.jsonl",
       "replay: bad input at seq 60 (fn ResourceCopy, tid 1): handle ghost (hDstResource) is used "
       "before any call created it\n",
       ""},
      {"unknown_device.jsonl",
       "replay: bad input at seq 60 (fn Draw, tid 1): hDevice dc9 is not a device or deferred "
       "context created earlier\n",
       ""},
      {"huge_size.jsonl",
       "replay: bad input at seq 40 (fn CreateContextCb, tid 1): impossible size: "
       "CommandBufferSize = 4294967295 asks for a 4294967295-byte kernel buffer (limit "
       "67108864)\n",
       ""},
      {"nested_ddi.jsonl",
       "replay: bad input at seq 70 (fn Flush, tid 1): a DDI call made directly inside DDI call "
       "seq 60 (Flush); only callbacks run inside a DDI call\n",
       ""},
      {"unknown_fn.jsonl", "", "line 6: unknown function \"FrobnicateCommandList\""},
  };
  for (const Case& c : cases) {
    for (const char* mode : {"single", "recorded"}) {
      Result r = Replay(absl::StrCat("--threads ", mode, " ", Input("inputs/") + c.file));
      EXPECT_EQ(r.exit, 2) << c.file;
      EXPECT_EQ(r.out, c.out) << c.file;
      EXPECT_THAT(r.err, HasSubstr(c.err)) << c.file;
    }
  }
}

TEST_F(ReplayE2eTest, KernelModeMustBeRecordedOrModel) {
  Result r = Replay("--kernel bogus " + Input("small_cl.jsonl"));
  EXPECT_EQ(r.exit, 2);
  EXPECT_THAT(r.err, HasSubstr("--kernel must be recorded or model, not bogus"));
  // A hand-written trace whose kernel is not the model (it handed out 64 KiB command
  // buffers): the model answers the driver, and the first answer that differs is shown.
  Result m = Replay("--kernel model --history 0 " + Input("small_cl.jsonl"));
  EXPECT_EQ(m.exit, 3) << m.out << m.err;
  EXPECT_THAT(m.out, HasSubstr("(fn CreateContextCb, tid 1): expected the kernel answers "
                               "CommandBufferSize=65536, actual kernel model: "
                               "CommandBufferSize=16384"));
  EXPECT_THAT(m.out, HasSubstr("kernel model: 0 kernel-layer calls compared"));
}

TEST_F(ReplayE2eTest, UsageErrors) {
  EXPECT_EQ(Replay("--threads sometimes " + Input("small_cl.jsonl")).exit, 2);
  Result r = Replay("--inject oom:Draw:1 " + Input("small_cl.jsonl"));
  EXPECT_EQ(r.exit, 2);
  EXPECT_THAT(r.err, HasSubstr("oom can fail RecycleCreateCommandList"));
  EXPECT_EQ(Replay("--until 0 " + Input("small_cl.jsonl")).exit, 2);
  EXPECT_EQ(Run(absl::StrCat(CLTRACE_BIN, " replay --driver /nonexistent/driver.so ",
                             Input("small_cl.jsonl")))
                .exit,
            2);
}

#ifdef CLTRACE_WORKLOAD_BIN

// Records `cltrace-workload ARGS` through the shim with the reference driver.
class WorkloadReplayTest : public ReplayE2eTest {
 public:
  // `expected_exit`: the workload exits 1 when it detected the violation its --bug mode plants.
  std::string Record(const std::string& name, const std::string& args, int expected_exit = 0) {
    const std::string trace = Path(name);
    Result r = Run(absl::StrCat(CLTRACE_BIN, " record -o ", trace, " --driver ",
                                CLTRACE_REFDRIVER_LIB, " -- ", CLTRACE_WORKLOAD_BIN, " ", args));
    EXPECT_EQ(r.exit, expected_exit) << r.out << r.err;
    return trace;
  }
  // How many lines of `cltrace dump TRACE` contain `text`.
  int DumpLinesWith(const std::string& trace, const std::string& text) {
    Result r = Run(absl::StrCat(CLTRACE_BIN, " dump ", trace, " | grep -c '", text, "'"));
    return std::atoi(r.out.c_str());
  }
};

TEST_F(WorkloadReplayTest, SmallClReplaysIdenticallyAndDeterministically) {
  const std::string trace = Record("smallcl.cltrace", "smallcl");
  std::vector<std::string> reports;
  for (const char* mode : {"single", "recorded"}) {
    for (int i = 0; i < 2; ++i) {
      Result r = Replay(absl::StrCat("--threads ", mode, " ", trace));
      EXPECT_EQ(r.exit, 0) << r.out << r.err;
      EXPECT_THAT(r.out, StartsWith("replay: identical ("));
      reports.push_back(r.out);
    }
  }
  for (const std::string& report : reports) EXPECT_EQ(report, reports[0]);
  // The submitted-command digest is stable in single mode (in recorded mode a driver that
  // numbers its objects in arrival order may vary it where recorded calls overlapped).
  Result a = Replay(absl::StrCat("--digest --threads single ", trace));
  Result b = Replay(absl::StrCat("--digest --threads single ", trace));
  EXPECT_THAT(a.out, HasSubstr(", digest 0x"));
  EXPECT_EQ(a.out, b.out);
}

// Issue #14: the rarely used slots of the full tables (capability checks, the DXGI functions
// beside Present, resolves, structure counts, shaders with interfaces or stream output, the
// callbacks they make) are recorded and play back identically, the callbacks answered.
TEST_F(WorkloadReplayTest, FullTableSlotsReplayIdentically) {
  const std::string trace = Record("tables.cltrace", "tables --frames 2");
  for (const char* fn :
       {"CheckFormatSupport", "CheckMultisampleQualityLevels", "CheckCounterInfo",
        "CreateGeometryShaderWithStreamOutput", "GsSetShaderWithIfaces", "PsSetShaderWithIfaces",
        "ResourceResolveSubresource", "CopyStructureCount", "GetGammaCapsDXGI",
        "SetDisplayModeDXGI", "SetDisplayModeCb", "SetResourcePriorityDXGI",
        "QueryResourceResidencyDXGI", "QueryResidencyCb", "RotateResourceIdentitiesDXGI",
        "BltDXGI"}) {
    EXPECT_GT(DumpLinesWith(trace, fn), 0) << fn << " not in the trace";
  }
  for (const char* mode : {"single", "recorded"}) {
    Result r = Replay(absl::StrCat("--threads ", mode, " ", trace));
    EXPECT_EQ(r.exit, 0) << r.out << r.err;
    EXPECT_THAT(r.out, StartsWith("replay: identical (")) << r.err;
  }
}

TEST_F(WorkloadReplayTest, PlantedDriverBugReproducesOnEveryReplay) {
  // Lockstep, as the corpus records it: the driver fails the 2nd RecycleCreateCommandList in
  // the order the calls reach its fault counter, and the replay (which issues fault sites one
  // after the other in seq order) fails the 2nd in seq order. A free-running recording lets
  // two threads' RecycleCreateCommandList overlap, and where they did, those two orders can
  // differ: the recording then holds the failure at another call than the replay makes it,
  // and every replay diverges there (exit 3) -- rarely, more often on a loaded machine.
  const std::string trace = Record("r22.cltrace", "smallcl --lockstep --bug R22", 1);
  Result check = Run(absl::StrCat(CLTRACE_BIN, " check ", trace));
  EXPECT_EQ(check.exit, 1);
  EXPECT_THAT(check.out, HasSubstr("R22 seq="));
  // The same driver with the same bug: the SetErrorCb it should not make is made again, at the
  // same place, every time.
  const std::string bug_env = "CLTRACE_REFDRIVER_CONFIG='bug=R22;oom:RecycleCreateCommandList=2'";
  std::string first;
  for (int i = 0; i < 3; ++i) {
    Result r = Replay(trace, bug_env);
    EXPECT_EQ(r.exit, 0) << r.out << r.err;
    if (i == 0) first = r.out;
    EXPECT_EQ(r.out, first);
  }
  // A driver without the bug, given the same out-of-memory: the divergence is the SetErrorCb.
  Result fixed = Replay(absl::StrCat("--inject oom:RecycleCreateCommandList:2 ", trace),
                        "CLTRACE_REFDRIVER_CONFIG=");
  EXPECT_EQ(fixed.exit, 3) << fixed.out << fixed.err;
  EXPECT_THAT(fixed.out, HasSubstr("(fn SetErrorCb, tid "));
  EXPECT_THAT(fixed.out, HasSubstr("hResult=E_OUTOFMEMORY), actual no callback (the driver "
                                   "returned from RecycleCreateCommandList"));
}

TEST_F(WorkloadReplayTest, RuntimeMisuseIsReportedByTheDriverOnEveryReplay) {
  const std::string trace = Record("r40.cltrace", "smallcl --bug R40", 1);
  std::string first;
  for (const char* mode : {"single", "recorded", "single"}) {
    Result r = Replay(absl::StrCat("--threads ", mode, " ", trace));
    EXPECT_EQ(r.exit, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("\ndriver: R40 fn=CommandListExecute "));
    EXPECT_THAT(r.out, Not(HasSubstr("0x5"))) << "replay addresses leaked into the report";
    if (first.empty()) first = r.out;
    EXPECT_EQ(r.out, first);
  }
}

TEST_F(WorkloadReplayTest, InjectedOutOfMemoryShowsTheDriversReaction) {
  const std::string trace = Record("smallcl.cltrace", "smallcl");
  Result r =
      Replay(absl::StrCat("--threads single --keep-going --history 0 "
                          "--inject oom:RecycleCreateCommandList:3 ",
                          trace));
  EXPECT_EQ(r.exit, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("(fn RecycleCreateCommandList, tid "));
  EXPECT_THAT(r.out, HasSubstr("expected ret S_OK, actual ret E_OUTOFMEMORY"));
  // The recorded runtime carried on as if the list had been re-created: the driver reports it.
  EXPECT_THAT(r.out, HasSubstr("\ndriver: R40 fn=CommandListExecute "));
}

// --kernel model: the recording's kernel layer (DxgkDdi*/DxgkCb*) is reproduced call for call
// by the GPU/kernel model, the reports are byte-identical, and the count of compared calls is
// the count of kernel-layer events in the trace.
class KernelModelReplayTest : public WorkloadReplayTest {
 public:
  int KernelLayerEvents(const std::string& trace) { return DumpLinesWith(trace, "::Dxgk"); }
  static std::string ComparedLine(int n) {
    return absl::StrCat("kernel model: ", n, " kernel-layer calls compared, ");
  }
  // A replay with `args` that is identical, the kernel model having compared all `n`
  // kernel-layer calls of the recording.
  Result IdenticalReplay(const std::string& args, int n) {
    Result r = Replay(args);
    EXPECT_EQ(r.exit, 0) << r.out << r.err;
    EXPECT_THAT(r.out, StartsWith("replay: identical ("));
    EXPECT_THAT(r.out, HasSubstr(ComparedLine(n)));
    return r;
  }
};

TEST_F(KernelModelReplayTest, PresentFramesReproduceTheRecordedKernelLayer) {
  const std::string trace = Record("present.cltrace", "present --frames 2");
  const int n = KernelLayerEvents(trace);
  ASSERT_GT(n, 50);
  std::vector<std::string> reports;
  for (const char* mode : {"single", "recorded", "single", "recorded"}) {
    Result r =
        IdenticalReplay(absl::StrCat("--kernel model --digest --threads ", mode, " ", trace), n);
    // A GPU content digest after every Flush and Present, the same on every replay.
    EXPECT_THAT(r.out, HasSubstr("\nkernel model: after PresentDXGI seq "));
    EXPECT_THAT(r.out, HasSubstr("\nkernel model: after Flush seq "));
    reports.push_back(r.out);
  }
  for (const std::string& report : reports) EXPECT_EQ(report, reports[0]);
  // Without --kernel model the recorded kernel answers and nothing is said about the model.
  Result recorded = Replay(trace);
  EXPECT_EQ(recorded.exit, 0) << recorded.out;
  EXPECT_THAT(recorded.out, Not(HasSubstr("kernel model")));
}

// tests/replay/scene4_kernel.cltrace: `cltrace record -- cltrace-workload scene --threads 4
// --frames 3` (see README.md to regenerate it). Four deferred-context threads renamed dynamic
// buffers (AllocateCb) while the immediate context flushed: several threads were inside the
// kernel at once, and the kernel took them in an order entry positions do not show. A
// committed recording, because which order a live run produces is up to the scheduler, and
// some orders are not recoverable from a trace (see replayer/internal/kernel_model.h).
TEST_F(KernelModelReplayTest, ConcurrentKernelCallsReplayInTheRecordedKernelOrder) {
  const std::string trace = Input("scene4_kernel.cltrace");
  // The recording really has kernel-thunk calls of different threads that overlapped.
  Result dump = Run(absl::StrCat(CLTRACE_BIN, " dump ", trace));
  ASSERT_EQ(dump.exit, 0) << dump.err;
  struct Span {
    uint64_t seq, end;
    std::string tid;
  };
  std::vector<Span> thunks;
  for (absl::string_view line : absl::StrSplit(dump.out, '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 4) continue;
    // The call follows its table mark (KernelCb::AllocateCb).
    if (!absl::StartsWith(f[3], "KernelCb::AllocateCb(") &&
        !absl::StartsWith(f[3], "KernelCb::RenderCb(") &&
        !absl::StartsWith(f[3], "KernelCb::DeallocateCb(")) {
      continue;
    }
    Span sp;
    ASSERT_TRUE(absl::SimpleAtoi(f[0], &sp.seq) && absl::SimpleAtoi(f[1], &sp.end)) << line;
    sp.tid = std::string(f[2]);
    thunks.push_back(sp);
  }
  int overlapping = 0;
  for (size_t a = 0; a < thunks.size(); ++a) {
    for (size_t b = a + 1; b < thunks.size(); ++b) {
      if (thunks[a].tid != thunks[b].tid && thunks[b].seq < thunks[a].end &&
          thunks[a].seq < thunks[b].end) {
        ++overlapping;
      }
    }
  }
  EXPECT_GT(overlapping, 10);
  const int n = KernelLayerEvents(trace);
  ASSERT_GT(n, 300);
  std::string first;
  for (int i = 0; i < 3; ++i) {
    Result r =
        IdenticalReplay(absl::StrCat("--kernel model --digest --threads recorded ", trace), n);
    // The GPU content after each Flush is the same whatever the replay threads' timing.
    if (first.empty()) first = r.out;
    EXPECT_EQ(r.out, first);
  }
}

// The same recording with one replay thread: the model would see the kernel calls in another
// order than the recorded kernel took them and diverge at a handle on a clean trace (a false
// alarm), so the mode refuses it up front as bad input, naming the reason and the remedy.
// Recordings whose kernel calls never overlapped still replay identically that way
// (PresentFramesReproduceTheRecordedKernelLayer).
TEST_F(KernelModelReplayTest, SingleThreadModeRefusesARecordingWithConcurrentKernelCalls) {
  const std::string trace = Input("scene4_kernel.cltrace");
  for (int i = 0; i < 2; ++i) {
    Result r = Replay(absl::StrCat("--kernel model --threads single ", trace));
    EXPECT_EQ(r.exit, 2) << r.out << r.err;
    EXPECT_THAT(r.out, StartsWith("replay: bad input at seq "));
    EXPECT_THAT(r.out, HasSubstr("--threads single --kernel model cannot replay this recording"));
    EXPECT_THAT(r.out, HasSubstr("several threads were inside the kernel at once"));
    EXPECT_THAT(r.out, HasSubstr("replay it with --threads recorded"));
    EXPECT_THAT(r.out, Not(HasSubstr("divergence")));
  }
  // The recorded kernel answers do not depend on the order: single mode replays it.
  Result recorded_kernel = Replay(absl::StrCat("--threads single ", trace));
  EXPECT_EQ(recorded_kernel.exit, 0) << recorded_kernel.out << recorded_kernel.err;
}

// Without --keep-going the replay stops at its first divergence, and what it reports must be
// the true first one, the same on every replay: the lowest divergence a --keep-going replay
// finds. The driver is removed mid-run (--inject removed:N), so threads stop making the kernel
// calls the recording shows while other threads wait for their kernel turns behind them. Those
// waits once timed out after a second and went into the model out of turn, where a handle
// numbered differently made a divergence at a lower seq than the real one, and it won.
TEST_F(KernelModelReplayTest, FirstDivergenceIsTheTrueFirstOnEveryReplay) {
  const std::string trace = Input("scene4_kernel.cltrace");
  for (const char* at : {"200", "800"}) {
    SCOPED_TRACE(absl::StrCat("removed:", at));
    const std::string args =
        absl::StrCat("--kernel model --history 0 --threads recorded --inject removed:", at, " ");
    Result all = Replay(absl::StrCat(args, "--keep-going ", trace));
    ASSERT_EQ(all.exit, 3) << all.out << all.err;
    const std::string lowest(absl::string_view(all.out).substr(0, all.out.find('\n') + 1));
    ASSERT_THAT(lowest, StartsWith("replay: divergence at seq "));
    for (int i = 0; i < 3; ++i) {
      Result r = Replay(absl::StrCat(args, trace));
      EXPECT_EQ(r.exit, 3) << r.out << r.err;
      EXPECT_THAT(r.out, StartsWith(lowest)) << "the reported first divergence is not the lowest";
      // Never a kernel answer taken out of turn.
      EXPECT_THAT(r.out, Not(HasSubstr("expected the kernel answers")));
    }
  }
}

// tests/replay/scene4_reorder.cltrace: a live `scene --threads 4` recording in which the IC
// thread's DeallocateCb (seq 15796..16399, no kernel-layer call of its own) took the kernel's
// lock long before it returned; placed at its exit, the model ran one kernel call behind and
// departed at seq 16095 (DxgkDdiInterruptRoutine). The replay finds the placement that
// reproduces the recorded kernel layer.
TEST_F(KernelModelReplayTest, AKernelThunkTheTraceDoesNotPlaceIsPlacedWhereTheKernelLayerAgrees) {
  const std::string trace = Input("scene4_reorder.cltrace");
  const int n = KernelLayerEvents(trace);
  std::string first;
  for (int i = 0; i < 2; ++i) {
    Result r = IdenticalReplay(absl::StrCat("--kernel model --threads recorded ", trace), n);
    if (first.empty()) first = r.out;
    EXPECT_EQ(r.out, first);
  }
}

TEST_F(KernelModelReplayTest, ARecordingOfAMisbehavingKernelDivergesWhereItMisbehaved) {
  // The recorded kernel (planted R75) submitted with a fence id other than the one it patched
  // with; the model does not.
  const std::string trace = Record("r75.cltrace", "present --frames 1 --bug R75", 1);
  Result r = Replay(absl::StrCat("--kernel model --history 0 ", trace));
  EXPECT_EQ(r.exit, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("(fn DxgkDdiSubmitCommand, tid "));
  EXPECT_THAT(r.out, HasSubstr("expected kernel layer: DxgkDdiSubmitCommand("));
  EXPECT_THAT(r.out, HasSubstr("(SubmissionFenceId differs)"));
  // The recorded kernel answers: the driver sees what it saw, nothing diverges.
  EXPECT_EQ(Replay(trace).exit, 0);
}

TEST_F(KernelModelReplayTest, TheModelReportsTheDriversKernelViolationsOnEveryReplay) {
  // A driver that keeps writing into the previous command buffer (R74): the recording's kernel
  // reported it, and so does the model on replay of the same driver, every time.
  const std::string trace = Record("r74.cltrace", "present --frames 1 --bug R74", 1);
  std::string first;
  for (const char* mode : {"single", "recorded"}) {
    Result r = Replay(absl::StrCat("--kernel model --threads ", mode, " ", trace),
                      "CLTRACE_REFDRIVER_CONFIG=bug=R74");
    EXPECT_EQ(r.exit, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("\ndriver: kernel model: R74: pfnRenderCb on context 1"));
    if (first.empty()) first = r.out;
    EXPECT_EQ(r.out, first);
  }
  // The fixed driver writes where the kernel said: the model's answer differs from the
  // recorded kernel's (which refused the buffer).
  Result fixed = Replay(absl::StrCat("--kernel model --threads single --history 0 ", trace),
                        "CLTRACE_REFDRIVER_CONFIG=");
  EXPECT_EQ(fixed.exit, 3) << fixed.out;
  EXPECT_THAT(fixed.out, HasSubstr("(fn RenderCb, tid "));
  EXPECT_THAT(fixed.out, HasSubstr("expected the kernel answers "));
}

// ---- GPU content digests (GpuFenceRetired) ----------------------------------------------------

// The model GPU's observer (wddm/dxgkrnl.h) reports the content digest of every retired fence;
// a recording holds those events and --kernel model compares them with the model's.
class FenceDigestReplayTest : public KernelModelReplayTest {
 public:
  int FenceDigestEvents(const std::string& trace) {
    return DumpLinesWith(trace, "::GpuFenceRetired(");
  }
  static std::string FenceDigestsLine(int n) {
    return absl::StrCat(", fence digests: ", n, " compared\n");
  }
  // Replays `trace` with --kernel model in each thread mode and expects it identical, with
  // every recorded fence digest compared.
  void ExpectEveryFenceDigestReproduced(const std::string& trace,
                                        std::initializer_list<const char*> modes) {
    const int n = FenceDigestEvents(trace);
    ASSERT_GT(n, 0) << "the recording holds no GpuFenceRetired";
    for (const char* mode : modes) {
      Result r = Replay(absl::StrCat("--kernel model --history 0 --threads ", mode, " ", trace));
      EXPECT_EQ(r.exit, 0) << mode << "\n" << r.out << r.err;
      EXPECT_THAT(r.out, StartsWith("replay: identical (")) << mode;
      EXPECT_THAT(r.out, HasSubstr(FenceDigestsLine(n))) << mode << "\n" << r.out;
    }
  }
};

// `present` writes non-zero bytes (UpdateSubresourceUP constants, a mapped vertex buffer): the
// recorded digests are reproduced only when the replay hands the driver the recorded bytes.
TEST_F(FenceDigestReplayTest, PresentRecordingReproducesEveryFenceDigest) {
  ExpectEveryFenceDigestReproduced(Record("present.cltrace", "present --frames 2"),
                                   {"single", "recorded"});
}

TEST_F(FenceDigestReplayTest, SceneRecordingReproducesEveryFenceDigest) {
  ExpectEveryFenceDigestReproduced(Record("scene.cltrace", "scene --threads 4"), {"recorded"});
}

// Two saved `scene --threads 4` recordings (default frames) in which a DC thread's AllocateCb
// (a map-discard) and the GPU's completion of a fence raced: the recorded kernel completed
// fence 51 (resp. 67) before another DC thread's AllocateCb created its allocation, and the
// replay after (where a thunk that made no kernel-layer call took the lock, which sets the
// virtual time later calls run at, is not in the trace: tests/replay/README.md). The fence
// digest was the whole content model, the new allocation included, so these replays diverged
// at that GpuFenceRetired on every run; it is now what the fence's own work wrote.
TEST_F(FenceDigestReplayTest, SavedRecordingsWithACompletionRaceReproduceEveryFenceDigest) {
  for (const char* name : {"scene4_fence_race_a.cltrace", "scene4_fence_race_b.cltrace"}) {
    SCOPED_TRACE(name);
    ExpectEveryFenceDigestReproduced(Input(name), {"recorded"});
  }
}

// Many fresh multi-thread recordings, each replayed with --kernel model: every one reproduces
// every recorded fence digest. The draws' state digests once folded the driver's object serial
// numbers, taken from one counter in whatever order the threads created objects (a command
// list took its number after its state refresh, while the IC thread created a buffer), so
// about one recording in fifty replayed to a different GpuFenceRetired digest; and the fence
// digest once covered every allocation, so an allocation another thread created around a
// completion (about one default-frame recording in 250) did too. A third of the recordings use
// the default frame count, where that race shows. Bounded to a few seconds of recording and
// replay.
TEST_F(FenceDigestReplayTest, FreshMultiThreadRecordingsAllReproduceTheirFenceDigests) {
  constexpr int kRecordings = 60;
  int diverged = 0;
  for (int i = 0; i < kRecordings; ++i) {
    const std::string frames = i % 3 == 2 ? "" : " --frames 6";
    const std::string trace = Record(absl::StrCat("scene", i, ".cltrace"),
                                     absl::StrCat("scene --threads 4", frames, " --seed ", i + 1));
    const int n = FenceDigestEvents(trace);
    ASSERT_GT(n, 0) << "the recording holds no GpuFenceRetired";
    Result r = Replay(absl::StrCat("--kernel model --history 0 --threads recorded ", trace));
    if (r.exit != 0 || !absl::StartsWith(r.out, "replay: identical (") ||
        !absl::StrContains(r.out, FenceDigestsLine(n))) {
      ++diverged;
      ADD_FAILURE() << "recording " << i << " (exit " << r.exit << "):\n" << r.out << r.err;
    }
    std::remove(trace.c_str());
  }
  EXPECT_EQ(diverged, 0) << "of " << kRecordings << " recordings";
}

// `smallcl` writes no bytes of its own (copies between zero-filled buffers): its digests do not
// depend on the bytes the replay hands the driver.
TEST_F(FenceDigestReplayTest, AWorkloadWritingNoBytesReproducesEveryFenceDigest) {
  ExpectEveryFenceDigestReproduced(Record("smallcl.cltrace", "smallcl --threads 1"),
                                   {"single", "recorded"});
}

// One recorded ContentDigest altered (read with the format library, the field changed, the
// events written to a new trace with the same handle, string and content ids): the model's
// digest differs there and only there.
TEST_F(FenceDigestReplayTest, AnAlteredRecordedDigestDivergesAtItsEvent) {
  const std::string trace = Record("smallcl.cltrace", "smallcl --threads 1");
  absl::StatusOr<format::LoadedTrace> loaded = format::ReadAllSorted(trace);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const format::CallInfo& ci = *format::GetCall(format::CallId::kGpuFenceRetired);
  const int node = format::FieldIndex(ci, "NodeOrdinal");
  const int fence = format::FieldIndex(ci, "FenceId");
  const int digest = format::FieldIndex(ci, "ContentDigest");
  ASSERT_GE(node, 0);
  ASSERT_GE(fence, 0);
  ASSERT_GE(digest, 0);
  std::vector<size_t> retired;
  for (size_t i = 0; i < loaded->events.size(); ++i) {
    if (loaded->events[i].call == format::CallId::kGpuFenceRetired) retired.push_back(i);
  }
  ASSERT_GT(retired.size(), 4u);
  format::Event& altered = loaded->events[retired[retired.size() / 2]];
  const uint64_t recorded = altered.args[digest];
  altered.args[digest] = recorded ^ 0x5A5A0000F00Dull;

  const std::string edited = Path("edited.cltrace");
  format::TraceWriter::Options options;
  options.writer = loaded->header.writer();
  options.process = loaded->header.process();
  absl::StatusOr<std::unique_ptr<format::TraceWriter>> w =
      format::TraceWriter::Open(edited, options);
  ASSERT_TRUE(w.ok()) << w.status();
  // Ids are handed out densely in definition order: defining every token in id order keeps
  // the events' ids valid as they are.
  for (uint64_t id = 1; id < loaded->handles.size(); ++id) {
    ASSERT_EQ((*w)->InternHandleToken(loaded->handles.Token(id)), id);
  }
  for (uint64_t id = 1; id < loaded->strings.size(); ++id) {
    ASSERT_EQ((*w)->InternString(loaded->strings.Token(id)), id);
  }
  for (uint64_t id = 1; id < loaded->contents.size(); ++id) {
    ASSERT_EQ((*w)->InternContent(loaded->contents.Token(id)), id);
  }
  ASSERT_TRUE((*w)->AppendBatch(loaded->events).ok());
  ASSERT_TRUE((*w)->Close().ok());

  Result r = Replay(absl::StrCat("--kernel model --history 0 --threads single ", edited));
  EXPECT_EQ(r.exit, 3) << r.out << r.err;
  EXPECT_THAT(r.out,
              StartsWith(absl::StrFormat(
                  "replay: divergence at seq %d (fn GpuFenceRetired, tid %d): expected kernel "
                  "layer: GpuFenceRetired node %d fence %d: GPU content digest 0x%016x recorded, "
                  "actual kernel model: 0x%016x replayed\n",
                  altered.seq, altered.tid, altered.args[node], altered.args[fence],
                  altered.args[digest], recorded)))
      << r.out;
  // The recorded kernel answers by default: kernel-layer events are not compared.
  Result recorded_kernel = Replay(edited);
  EXPECT_EQ(recorded_kernel.exit, 0) << recorded_kernel.out << recorded_kernel.err;
}

// A recording made before the GPU observer existed holds no GpuFenceRetired: the model's are
// not compared, and the summary says so.
TEST_F(FenceDigestReplayTest, RecordingsWithoutFenceDigestsCompareNone) {
  const std::string trace = Input("scene4_kernel.cltrace");
  ASSERT_EQ(FenceDigestEvents(trace), 0);
  Result r = Replay(absl::StrCat("--kernel model --threads recorded ", trace));
  EXPECT_EQ(r.exit, 0) << r.out << r.err;
  EXPECT_THAT(r.out, StartsWith("replay: identical ("));
  EXPECT_THAT(r.out, HasSubstr(", fence digests: not recorded\n"));
}

// The other verbs read GpuFenceRetired like any kernel-layer call.
TEST_F(FenceDigestReplayTest, EveryVerbTakesTheNewEvents) {
  const std::string trace = Record("present.cltrace", "present --frames 2");
  ASSERT_GT(FenceDigestEvents(trace), 0);
  Result check = Run(absl::StrCat(CLTRACE_BIN, " check ", trace));
  EXPECT_EQ(check.exit, 0) << check.out << check.err;
  EXPECT_THAT(check.out, HasSubstr(" 0 violations"));
  Result stats = Run(absl::StrCat(CLTRACE_BIN, " stats ", trace));
  EXPECT_EQ(stats.exit, 0) << stats.err;
  EXPECT_THAT(stats.out, HasSubstr("GpuFenceRetired"));
  for (const char* verb : {"lifecycle", "info", "dump"}) {
    Result r = Run(absl::StrCat(CLTRACE_BIN, " ", verb, " ", trace));
    EXPECT_EQ(r.exit, 0) << verb << ": " << r.err;
  }
  Result recorded_kernel = Replay(trace);
  EXPECT_EQ(recorded_kernel.exit, 0) << recorded_kernel.out << recorded_kernel.err;
  EXPECT_THAT(recorded_kernel.out, StartsWith("replay: identical ("));
}

#endif  // CLTRACE_WORKLOAD_BIN

}  // namespace
}  // namespace cltrace
