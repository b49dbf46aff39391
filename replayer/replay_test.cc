// Replays of hand-written JSONL traces into the reference driver (and into the empty test
// driver of replayer/testing/null_driver.cc): identical replays in both thread modes, byte-
// identical reports, each kind of divergence with its exact report line, hostile inputs as bad
// input with the seq, --until, a recording that ends inside a call, and fault injection.
#include "replayer/replay.h"

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "format/jsonl.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::replay {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string SmallCl() { return ReadFile(CLTRACE_SOURCE_DIR "/tests/replay/small_cl.jsonl"); }

// The JSONL line with "seq":N (for targeted edits).
std::string Line(const std::string& text, uint64_t seq) {
  const std::string key = absl::StrCat("{\"seq\":", seq, ",");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, key)) return std::string(line);
  }
  ADD_FAILURE() << "no line with seq " << seq;
  return "";
}

// Replaces the line with seq N by `replacement` (empty: deletes it).
std::string EditLine(const std::string& text, uint64_t seq, const std::string& replacement) {
  std::string out;
  const std::string key = absl::StrCat("{\"seq\":", seq, ",");
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, key)) {
      if (!replacement.empty()) absl::StrAppend(&out, replacement, "\n");
    } else {
      absl::StrAppend(&out, line, "\n");
    }
  }
  return out;
}

// The integer value of `"key":N` in a JSONL line.
uint64_t Field(const std::string& line, const std::string& key) {
  const std::string k = absl::StrCat("\"", key, "\":");
  const size_t at = line.find(k);
  EXPECT_NE(at, std::string::npos) << key << " not in " << line;
  if (at == std::string::npos) return 0;
  return std::stoull(line.substr(at + k.size()));
}

// The line with seq N with `"key":old` replaced by `"key":value`.
std::string WithField(const std::string& text, uint64_t seq, const std::string& key,
                      uint64_t value) {
  const std::string line = Line(text, seq);
  const std::string old = absl::StrCat("\"", key, "\":", Field(line, key));
  return EditLine(text, seq,
                  absl::StrReplaceAll(line, {{old, absl::StrCat("\"", key, "\":", value)}}));
}

// Recorded values of tests/replay/small_cl.jsonl the assertions below refer to (the reference
// driver's answers; tests/replay/make_small_cl.py regenerates the trace when they change).
constexpr uint64_t kCalcClSizeSeq = 210;  // CalcPrivateCommandListSize
constexpr uint64_t kRenderSeq = 720;      // RenderCb inside Flush

struct Replayed {
  ReplayResult result;
  std::string report;
  int exit = -1;
};

class ReplayTest : public ::testing::Test {
 protected:
  Replayed Run(const std::string& jsonl, ReplayOptions options = {}) {
    Replayed o;
    absl::StatusOr<format::JsonlTrace> trace = format::ParseJsonl(jsonl);
    EXPECT_TRUE(trace.ok()) << trace.status();
    if (!trace.ok()) return o;
    if (options.driver_path.empty()) options.driver_path = CLTRACE_REFDRIVER_LIB;
    absl::StatusOr<ReplayResult> r = Replay(options, trace->events, trace->handles, trace->strings);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return o;
    o.result = *r;
    o.report = FormatReport(*r, trace->events, trace->handles, trace->strings, options);
    std::ostringstream out, err;
    o.exit = RunReplay(options, trace->events, trace->handles, trace->strings, out, err);
    EXPECT_EQ(out.str(), o.report) << "RunReplay and Replay+FormatReport disagree";
    return o;
  }
  static ReplayOptions Single() {
    ReplayOptions o;
    o.threads = ThreadMode::kSingle;
    return o;
  }
  static std::string FirstLine(const std::string& report) {
    return report.substr(0, report.find('\n'));
  }
};

TEST_F(ReplayTest, SmallClIsIdenticalInBothThreadModes) {
  for (ThreadMode mode : {ThreadMode::kSingle, ThreadMode::kRecorded}) {
    ReplayOptions options;
    options.threads = mode;
    Replayed o = Run(SmallCl(), options);
    EXPECT_EQ(o.result.outcome, Outcome::kIdentical) << o.report;
    EXPECT_EQ(o.exit, kExitIdentical);
    EXPECT_EQ(o.report, absl::StrCat("replay: identical (107 calls)\nkernel: 1 submissions, ",
                                     Field(Line(SmallCl(), kRenderSeq), "CommandLength"),
                                     " command bytes\n"));
  }
}

TEST_F(ReplayTest, ReportsAreByteIdenticalAcrossRunsAndModes) {
  ReplayOptions options;
  options.digest = true;
  options.keep_going = true;
  const std::string edited = WithField(SmallCl(), kCalcClSizeSeq, "ret", 1000);
  for (const std::string& trace : {SmallCl(), edited}) {
    std::vector<std::string> reports;
    for (ThreadMode mode : {ThreadMode::kSingle, ThreadMode::kRecorded}) {
      options.threads = mode;
      for (int i = 0; i < 2; ++i) reports.push_back(Run(trace, options).report);
    }
    for (const std::string& r : reports) EXPECT_EQ(r, reports[0]);
    EXPECT_THAT(reports[0], HasSubstr(", digest 0x"));
  }
}

TEST_F(ReplayTest, EditedReturnValueIsADivergence) {
  // The recording claims CalcPrivateCommandListSize answered 1000 bytes; the driver does not.
  const uint64_t size = Field(Line(SmallCl(), kCalcClSizeSeq), "ret");
  const std::string trace = WithField(SmallCl(), kCalcClSizeSeq, "ret", 1000);
  Replayed o = Run(trace, Single());
  EXPECT_EQ(o.result.outcome, Outcome::kDivergent);
  EXPECT_EQ(o.exit, kExitDivergent);
  EXPECT_EQ(FirstLine(o.report),
            absl::StrCat("replay: divergence at seq 210 (fn CalcPrivateCommandListSize, tid 2): "
                         "expected ret 1000, actual ret ",
                         size));
  // The recent history of the handles involved (ic, dc1), from the recording.
  EXPECT_THAT(o.report,
              HasSubstr("  recent calls on dc1:\n    seq 170 tid 2 CreateDeferredContext("));
  EXPECT_THAT(o.report, HasSubstr("    seq 200 tid 2 ResourceCopy(hDevice=dc1, "
                                  "hDstResource=dc1.dst, hSrcResource=dc1.src)\n"));
  ASSERT_EQ(o.result.divergences.size(), 1u);
  EXPECT_EQ(o.result.divergences[0].seq, 210u);
}

TEST_F(ReplayTest, KeepGoingReportsEveryDivergenceInSeqOrder) {
  std::string trace = WithField(SmallCl(), kCalcClSizeSeq, "ret", 1000);
  trace = WithField(trace, kRenderSeq, "CommandLength", 7);
  ReplayOptions options = Single();
  options.keep_going = true;
  options.history = 0;
  Replayed o = Run(trace, options);
  ASSERT_EQ(o.result.divergences.size(), 2u) << o.report;
  EXPECT_EQ(o.result.divergences[0].seq, 210u);
  EXPECT_EQ(o.result.divergences[1].seq, 720u);
  EXPECT_THAT(o.report, HasSubstr("replay: 2 divergences in 107 calls\n"));
  // Without --keep-going only the first one.
  Replayed first = Run(trace, Single());
  EXPECT_EQ(first.result.divergences.size(), 1u);
}

TEST_F(ReplayTest, KernelCallArgumentsAreCompared) {
  const uint64_t length = Field(Line(SmallCl(), kRenderSeq), "CommandLength");
  const std::string trace = WithField(SmallCl(), kRenderSeq, "CommandLength", 7);
  Replayed o = Run(trace, Single());
  EXPECT_THAT(FirstLine(o.report),
              StartsWith("replay: divergence at seq 720 (fn RenderCb, tid 1): expected "
                         "RenderCb(hDevice=rtdev, CommandLength=7, "));
  EXPECT_THAT(
      FirstLine(o.report),
      HasSubstr(absl::StrCat("actual RenderCb(hDevice=rtdev, CommandLength=", length, ", ")));
  // What the driver passed never shows replay addresses.
  EXPECT_THAT(FirstLine(o.report), Not(HasSubstr("pNewCommandBuffer=0x5")));
}

// A SmallCl() recording edited so that the driver's callbacks or outputs differ from it: the
// single-thread replay's first line names the divergence.
struct EditCase {
  const char* name;
  uint64_t checked_seq;         // the recorded line the edit relies on...
  const char* checked_content;  // ...holds this (nullptr: nothing to check)
  std::function<std::string(const std::string&)> edit;
  const char* first_line;
};

class EditedRecordingTest : public ReplayTest, public ::testing::WithParamInterface<EditCase> {};

TEST_P(EditedRecordingTest, DivergesWhereTheDriverDiffers) {
  const EditCase& c = GetParam();
  const std::string recorded = SmallCl();
  if (c.checked_content != nullptr) {
    ASSERT_THAT(Line(recorded, c.checked_seq), HasSubstr(c.checked_content));
  }
  Replayed o = Run(c.edit(recorded), Single());
  EXPECT_EQ(FirstLine(o.report), c.first_line);
}

INSTANTIATE_TEST_SUITE_P(
    ReplayTest, EditedRecordingTest,
    ::testing::Values(
        // The recording says CreateCommandList reported E_OUTOFMEMORY; the driver did not.
        EditCase{"MissingCallback", 220, nullptr,
                 [](const std::string& trace) {
                   return absl::StrReplaceAll(
                       trace, {{Line(trace, 220),
                                absl::StrCat(Line(trace, 220), "\n",
                                             "{\"seq\":221,\"tid\":2,\"fn\":\"SetErrorCb\","
                                             "\"args\":{\"hRuntimeDevice\":\"rtcore.ic\","
                                             "\"hResult\":\"E_OUTOFMEMORY\"},\"parent\":220}")}});
                 },
                 "replay: divergence at seq 221 (fn SetErrorCb, tid 2): expected "
                 "SetErrorCb(hRuntimeDevice=rtcore.ic, hResult=E_OUTOFMEMORY), actual "
                 "StateOmRenderTargetsCb(hRuntimeDevice=rtcore.dc1)"},
        // Remove the recorded StateVsShaderCb (and its re-sent VsSetShader) of the first execute.
        EditCase{
            "ExtraCallback", 410, "StateVsShaderCb",
            [](const std::string& trace) { return EditLine(EditLine(trace, 410, ""), 420, ""); },
            "replay: divergence at seq 370 (fn CommandListExecute, tid 1): expected no "
            "further callback inside CommandListExecute (it returned at seq 402), actual the "
            "driver called StateVsShaderCb(hRuntimeDevice=rtcore.ic)"},
        EditCase{"CallbackArguments", 250, nullptr,
                 [](const std::string& trace) {
                   return EditLine(trace, 250,
                                   absl::StrReplaceAll(Line(trace, 250), {{"4294967295", "4"}}));
                 },
                 "replay: divergence at seq 250 (fn StateIaVertexBufCb, tid 2): expected "
                 "StateIaVertexBufCb(hRuntimeDevice=rtcore.dc1, Count=4), actual "
                 "StateIaVertexBufCb(hRuntimeDevice=rtcore.dc1, Count=4294967295)"},
        EditCase{"OutputFields", 70, "CheckDeferredContextHandleSizes",
                 [](const std::string& trace) {
                   return EditLine(trace, 70,
                                   absl::StrReplaceAll(Line(trace, 70),
                                                       {{"{\"HandleType\":\"D3D10DDI_HT_QUERY\","
                                                         "\"DriverPrivateSize\":32}",
                                                         "{\"HandleType\":\"D3D10DDI_HT_QUERY\","
                                                         "\"DriverPrivateSize\":48}"}}));
                 },
                 "replay: divergence at seq 70 (fn CheckDeferredContextHandleSizes, tid 1): "
                 "expected pHandleSize[10].DriverPrivateSize=48, actual "
                 "pHandleSize[10].DriverPrivateSize=32"}),
    [](const ::testing::TestParamInfo<EditCase>& info) { return info.param.name; });

TEST_F(ReplayTest, UntilStopsAfterTheGivenSeq) {
  ReplayOptions options = Single();
  options.until_seq = 360;  // before the first CommandListExecute
  Replayed o = Run(SmallCl(), options);
  EXPECT_EQ(o.result.outcome, Outcome::kIdentical);
  EXPECT_LT(o.result.calls, 107u);
  EXPECT_THAT(o.report, HasSubstr("note: replayed top-level calls up to seq 360 (--until)\n"));
  // A divergence after --until is never reached.
  options.until_seq = 700;
  const std::string trace = WithField(SmallCl(), kRenderSeq, "CommandLength", 7);
  EXPECT_EQ(Run(trace, options).result.outcome, Outcome::kIdentical);
}

TEST_F(ReplayTest, RecordingThatEndsInsideACallStopsBeforeIt) {
  std::string trace = SmallCl();
  const std::string close = Line(trace, 1070);
  ASSERT_THAT(close, HasSubstr("CloseAdapter"));
  trace = EditLine(trace, 1070,
                   "{\"seq\":1070,\"tid\":1,\"fn\":\"CloseAdapter\",\"args\":{\"hAdapter\":"
                   "\"adapter\"},\"end\":null}");
  Replayed o = Run(trace, Single());
  EXPECT_EQ(o.result.outcome, Outcome::kIdentical);
  EXPECT_EQ(o.result.calls, 106u);
  EXPECT_THAT(o.report, HasSubstr("note: the recording ends inside seq 1070 (it never returned); "
                                  "the replay stopped before it\n"));
}

TEST_F(ReplayTest, OverlappingCallsReplayInRecordedMode) {
  // The immediate context's second execute overlaps the deferred context's abandon (the
  // recording shows the DC call entered while the IC call was in flight).
  std::string trace = SmallCl();
  const std::string exec = Line(trace, 620);
  ASSERT_THAT(exec, HasSubstr("CommandListExecute"));
  trace = EditLine(trace, 620, absl::StrReplaceAll(exec, {{"}}", "},\"end\":685}"}}));
  ASSERT_THAT(Line(trace, 680), HasSubstr("AbandonCommandList"));
  for (ThreadMode mode : {ThreadMode::kRecorded, ThreadMode::kSingle}) {
    ReplayOptions options;
    options.threads = mode;
    Replayed o = Run(trace, options);
    EXPECT_EQ(o.result.outcome, Outcome::kIdentical) << o.report;
  }
}

TEST_F(ReplayTest, InjectedOutOfMemoryShowsWhatTheDriverDoes) {
  ReplayOptions options = Single();
  options.injections.push_back(*ParseInjection("oom:RecycleCreateCommandList:1"));
  Replayed o = Run(SmallCl(), options);
  EXPECT_EQ(o.exit, kExitDivergent);
  EXPECT_EQ(FirstLine(o.report),
            "replay: divergence at seq 480 (fn RecycleCreateCommandList, tid 2): expected ret "
            "S_OK, actual ret E_OUTOFMEMORY");
  // The injection lasts for this replay only.
  EXPECT_EQ(Run(SmallCl(), Single()).result.outcome, Outcome::kIdentical);
}

TEST_F(ReplayTest, InjectionNeedsTheDriversConfigurationInterface) {
  absl::StatusOr<format::JsonlTrace> trace = format::ParseJsonl(SmallCl());
  ASSERT_TRUE(trace.ok());
  ReplayOptions options = Single();
  options.driver_path = CLTRACE_NULL_DRIVER_LIB;
  options.injections.push_back(*ParseInjection("removed:3"));
  absl::StatusOr<ReplayResult> r = Replay(options, trace->events, trace->handles, trace->strings);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("CltraceRefDriverConfigure"));
}

TEST_F(ReplayTest, AMissingTableSlotIsADivergence) {
  ReplayOptions options = Single();
  options.driver_path = CLTRACE_NULL_DRIVER_LIB;
  Replayed o = Run(SmallCl(), options);
  EXPECT_EQ(FirstLine(o.report),
            "replay: divergence at seq 10 (fn GetCaps, tid 1): expected a call through pfnGetCaps, "
            "actual the driver's table has no pfnGetCaps (NULL)");
}

TEST_F(ReplayTest, ALibraryWithoutTheEntryPointCannotBeReplayedInto) {
  absl::StatusOr<format::JsonlTrace> trace = format::ParseJsonl(SmallCl());
  ASSERT_TRUE(trace.ok());
  ReplayOptions options = Single();
  options.driver_path = "libm.so.6";
  absl::StatusOr<ReplayResult> r = Replay(options, trace->events, trace->handles, trace->strings);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("does not export OpenAdapter10_2"));
  std::ostringstream out, err;
  EXPECT_EQ(RunReplay(options, trace->events, trace->handles, trace->strings, out, err),
            kExitBadInput);
}

TEST(ParseInjectionTest, AcceptsTheDocumentedForms) {
  absl::StatusOr<Injection> oom = ParseInjection("oom:CreateCommandList:2");
  ASSERT_TRUE(oom.ok());
  EXPECT_EQ(oom->kind, "oom");
  EXPECT_EQ(oom->function, "CreateCommandList");
  EXPECT_EQ(oom->n, 2u);
  absl::StatusOr<Injection> removed = ParseInjection("removed:7");
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->kind, "removed");
  EXPECT_EQ(removed->n, 7u);
}

TEST(ParseInjectionTest, RejectsAFunctionTheDriverCannotFail) {
  absl::StatusOr<Injection> r = ParseInjection("oom:Draw:1");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("not Draw"));
}

TEST(ParseInjectionTest, RejectsCallNumberZero) {
  EXPECT_FALSE(ParseInjection("oom:RecycleCreateCommandList:0").ok());
}

TEST(ParseInjectionTest, RejectsAnUnknownKind) {
  absl::StatusOr<Injection> r = ParseInjection("crash:3");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("expected oom:FUNCTION:N or removed:N"));
}

}  // namespace
}  // namespace cltrace::replay
