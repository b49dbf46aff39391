// The DX6 replay path (replayer/internal/dx6_replay.h) on the golden dp2 traces, into the DX6
// model driver `cltrace replay` uses (cli/dx6_model_driver.h): identical in both thread modes,
// a divergence at the seq of a hand-edited call, the R80 planted bug reproduced into the DX6
// driver with the bug and not into the one without, and the configuration split between the
// D3D11 and the DX6 driver.
#include "replayer/internal/dx6_replay.h"

#include <cstdlib>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/dx6_model_driver.h"
#include "format/catalog.h"
#include "format/load_trace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "replayer/internal/call_meta.h"
#include "replayer/replay.h"

namespace cltrace::replay {
namespace {

using ::testing::HasSubstr;

format::LoadedTrace Load(const std::string& name) {
  absl::StatusOr<format::LoadedTrace> t =
      format::LoadTrace(absl::StrCat(CLTRACE_SOURCE_DIR, "/corpus/traces/", name, ".cltrace"));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : format::LoadedTrace();
}

// Sets CLTRACE_REFDRIVER_CONFIG for one scope ("" unsets it).
class ScopedConfig {
 public:
  explicit ScopedConfig(const std::string& config) {
    if (const char* old = std::getenv("CLTRACE_REFDRIVER_CONFIG")) old_ = old, had_ = true;
    if (config.empty()) {
      unsetenv("CLTRACE_REFDRIVER_CONFIG");
    } else {
      setenv("CLTRACE_REFDRIVER_CONFIG", config.c_str(), 1);
    }
  }
  ~ScopedConfig() {
    if (had_) {
      setenv("CLTRACE_REFDRIVER_CONFIG", old_.c_str(), 1);
    } else {
      unsetenv("CLTRACE_REFDRIVER_CONFIG");
    }
  }

 private:
  std::string old_;
  bool had_ = false;
};

struct Dx6Run {
  ReplayResult result;
  std::string report;
  int exit = -1;
};

Dx6Run ReplayTrace(const format::LoadedTrace& t, ThreadMode threads) {
  ReplayOptions options;
  options.driver_path = CLTRACE_REFDRIVER_LIB;
  options.dx6_driver = cli::Dx6ModelDriverFactory();
  options.threads = threads;
  Dx6Run run;
  absl::StatusOr<ReplayResult> r = Replay(options, t.events, t.handles, t.strings, t.contents);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return run;
  run.result = *r;
  run.report = FormatReport(*r, t.events, t.handles, t.strings, options);
  std::ostringstream out, err;
  run.exit = RunReplay(options, t.events, t.handles, t.strings, t.contents, out, err);
  return run;
}

uint64_t Dx6Calls(const format::LoadedTrace& t) {
  uint64_t n = 0;
  for (const format::Event& e : t.events) {
    if (internal::CallMetaFor(e.call).role == internal::Role::kDx6) ++n;
  }
  return n;
}

// Index of the `nth` (0-based) D3dDrawPrimitives2 event.
size_t NthDrawPrimitives2(const format::LoadedTrace& t, int nth) {
  for (size_t i = 0; i < t.events.size(); ++i) {
    if (t.events[i].call == format::CallId::kD3dDrawPrimitives2 && nth-- == 0) return i;
  }
  ADD_FAILURE() << "too few D3dDrawPrimitives2 calls";
  return 0;
}

int Field(const format::Event& e, const char* name) {
  return format::FieldIndex(*format::GetCall(e.call), name);
}

TEST(Dx6ReplayTest, Dp2ReplaysIdenticallyInBothThreadModes) {
  ScopedConfig config("");
  const format::LoadedTrace t = Load("dp2");
  ASSERT_GT(Dx6Calls(t), 0u);
  const Dx6Run single = ReplayTrace(t, ThreadMode::kSingle);
  const Dx6Run recorded = ReplayTrace(t, ThreadMode::kRecorded);
  EXPECT_EQ(single.exit, kExitIdentical) << single.report;
  EXPECT_EQ(single.result.dx6_calls, Dx6Calls(t));
  EXPECT_GT(single.result.content.dx6_draws, 0u);
  EXPECT_TRUE(single.result.content.notes.empty()) << single.report;
  EXPECT_EQ(single.report, recorded.report);
  EXPECT_EQ(recorded.exit, kExitIdentical);
}

TEST(Dx6ReplayTest, AnEditedCommandStreamDivergesAtItsCall) {
  ScopedConfig config("");
  format::LoadedTrace t = Load("dp2");
  // The third DrawPrimitives2 succeeded in the recording; its first command becomes an opcode
  // the driver does not know.
  format::Event& e = t.events[NthDrawPrimitives2(t, 2)];
  ASSERT_EQ(e.args[Field(e, "ddrval")], 0u);
  ASSERT_GT(e.args[Field(e, "dwCommandLength")], 0u);
  std::string bytes(t.contents.Token(e.content));
  bytes[0] = static_cast<char>(0x77);
  e.content = t.contents.Intern(bytes);
  const Dx6Run r = ReplayTrace(t, ThreadMode::kSingle);
  EXPECT_EQ(r.exit, kExitDivergent);
  ASSERT_EQ(r.result.divergences.size(), 1u) << r.report;
  EXPECT_EQ(r.result.divergences[0].seq, e.seq);
  EXPECT_THAT(r.report, HasSubstr(absl::StrCat("replay: divergence at seq ", e.seq,
                                               " (fn D3dDrawPrimitives2, tid 1): expected "
                                               "ddrval=S_OK, actual ddrval=E_FAIL\n")));
}

TEST(Dx6ReplayTest, ABufferTheDriverDidNotHandBackDivergesOnTheHandle) {
  ScopedConfig config("");
  format::LoadedTrace t = Load("dp2");
  // The first swap is recorded as handing back the (live) implicit vertex buffer instead of a
  // fresh command buffer: the replay's driver hands back a buffer of its own. (The trace ends
  // there: the calls after it use the buffer the edit took out.)
  const size_t at = NthDrawPrimitives2(t, 0);
  t.events.resize(at + 1);
  format::Event& e = t.events[at];
  e.args[Field(e, "lpDDCommandsOut")] = e.args[Field(e, "lpDDVertex")];
  const Dx6Run r = ReplayTrace(t, ThreadMode::kRecorded);
  EXPECT_EQ(r.exit, kExitDivergent);
  ASSERT_EQ(r.result.divergences.size(), 1u) << r.report;
  EXPECT_EQ(r.result.divergences[0].seq, e.seq);
  EXPECT_THAT(r.result.divergences[0].actual,
              HasSubstr("lpDDCommandsOut=a handle the recording does not know"));
}

TEST(Dx6ReplayTest, WithoutContentTheDriverReadsZerosAndTheReportSaysSo) {
  ScopedConfig config("");
  format::LoadedTrace t = Load("dp2");
  for (format::Event& e : t.events) e.content = 0;
  const size_t first = NthDrawPrimitives2(t, 0);
  const Dx6Run r = ReplayTrace(t, ThreadMode::kSingle);
  EXPECT_EQ(r.exit, kExitDivergent);
  ASSERT_FALSE(r.result.divergences.empty());
  EXPECT_EQ(r.result.divergences[0].seq, t.events[first].seq);
  EXPECT_THAT(r.report, HasSubstr(absl::StrCat("content: seq ", t.events[first].seq,
                                               ": D3dDrawPrimitives2 has no content")));
}

TEST(Dx6ReplayTest, ACommandLengthBeyondTheBufferWritesOnlyWhatFits) {
  ScopedConfig config("");
  format::LoadedTrace t = Load("dp2");
  // A hand-edited 1 GiB dwCommandLength at an offset near the end of the 4 KiB buffer: the
  // replay writes what fits (and says so), the driver refuses the call.
  format::Event& e = t.events[NthDrawPrimitives2(t, 0)];
  e.content = 0;
  e.args[Field(e, "dwCommandOffset")] = 4000;
  e.args[Field(e, "dwCommandLength")] = uint64_t{1} << 30;
  const Dx6Run r = ReplayTrace(t, ThreadMode::kSingle);
  EXPECT_EQ(r.exit, kExitDivergent) << r.report;
  ASSERT_FALSE(r.result.divergences.empty());
  EXPECT_EQ(r.result.divergences[0].seq, e.seq);
  EXPECT_THAT(r.report, HasSubstr("96 of the 1073741824 command bytes fit the 4096-byte buffer"));
}

TEST(Dx6ReplayTest, TheR80BugReproducesOnlyInTheDriverWithIt) {
  const format::LoadedTrace t = Load("dp2_R80");
  {
    ScopedConfig config("bug=R80");
    for (ThreadMode mode : {ThreadMode::kSingle, ThreadMode::kRecorded}) {
      const Dx6Run r = ReplayTrace(t, mode);
      EXPECT_EQ(r.exit, kExitIdentical) << r.report;
    }
  }
  ScopedConfig config("");
  const Dx6Run fixed = ReplayTrace(t, ThreadMode::kSingle);
  EXPECT_EQ(fixed.exit, kExitDivergent);
  ASSERT_FALSE(fixed.result.divergences.empty());
  // The first DrawPrimitives2 the buggy driver failed (past dwCommandLength).
  const format::Event& first = t.events[NthDrawPrimitives2(t, 0)];
  ASSERT_NE(first.args[Field(first, "ddrval")], 0u);
  EXPECT_EQ(fixed.result.divergences[0].seq, first.seq);
  EXPECT_EQ(fixed.result.divergences[0].expected, "ddrval=E_FAIL");
}

TEST(Dx6ReplayTest, WithoutADx6DriverTheReplayCannotRun) {
  const format::LoadedTrace t = Load("dp2");
  ReplayOptions options;
  options.driver_path = CLTRACE_REFDRIVER_LIB;
  absl::StatusOr<ReplayResult> r = Replay(options, t.events, t.handles, t.strings, t.contents);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("no DX6 driver"));
}

TEST(Dx6ReplayTest, TheConfigurationSplitsBetweenTheDrivers) {
  std::string rest;
  bool dx6 = false;
  EXPECT_EQ(internal::Dx6BugFromConfig("bug=R22,R80; oom:RecycleCreateCommandList=2", &rest, &dx6),
            gpu::PlantedBug::kR80BadErrorOffset);
  EXPECT_TRUE(dx6);
  EXPECT_EQ(rest, "bug=R22;oom:RecycleCreateCommandList=2");
  EXPECT_EQ(internal::Dx6BugFromConfig("bug=R79", &rest, &dx6),
            gpu::PlantedBug::kR79ImplicitVbInVidmem);
  EXPECT_EQ(rest, "");
  EXPECT_EQ(internal::Dx6BugFromConfig("bug=R16", &rest, &dx6), gpu::PlantedBug::kNone);
  EXPECT_FALSE(dx6);
  EXPECT_EQ(rest, "bug=R16");
}

}  // namespace
}  // namespace cltrace::replay
