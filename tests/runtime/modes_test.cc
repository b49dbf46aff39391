// cltrace-workload end to end: every planted-bug mode of the reference driver and every
// runtime-misuse mode is detected with its rule number (and only that rule); clean and
// fault-injection runs report nothing; the CLI contract (output format, exit codes).
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "corpus/workloads/model_layers.h"
#include "corpus/workloads/scenarios.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rules/planted_bugs.h"
#include "runtime/options.h"
#include "tests/runtime/test_util.h"
#include "wddm/violation.h"

namespace cltrace::testing {
namespace {

struct WorkloadRun {
  int exit_code = -1;
  std::vector<std::string> lines;
};

WorkloadRun Workload(const std::string& args, const std::string& env = "") {
  std::string cmd = absl::StrCat(env.empty() ? "" : absl::StrCat("env ", env, " "), BuildDir(),
                                 "/bin/cltrace-workload ", args, " 2>/dev/null");
  WorkloadRun run;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return run;
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int status = pclose(p);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  for (absl::string_view l : absl::StrSplit(out, '\n', absl::SkipEmpty()))
    run.lines.emplace_back(l);
  return run;
}

// The last line is "calls: N" with N > 0; returns the violation lines before it.
std::vector<std::string> Violations(const WorkloadRun& run) {
  std::vector<std::string> v = run.lines;
  EXPECT_FALSE(v.empty());
  if (v.empty()) return v;
  uint64_t calls = 0;
  EXPECT_TRUE(absl::StartsWith(v.back(), "calls: ") &&
              absl::SimpleAtoi(v.back().substr(7), &calls) && calls > 0)
      << v.back();
  v.pop_back();
  return v;
}

struct Mode {
  const char* rule;
  const char* scenario;
};

class DetectedModeTest : public ::testing::TestWithParam<Mode> {};

TEST_P(DetectedModeTest, ReportedWithItsRuleOnly) {
  const Mode& m = GetParam();
  // Planted bugs R39/R50 write memory the runtime's checker reads on another thread: a race by
  // design, so ThreadSanitizer builds do not report in these runs (clean runs below still do).
  WorkloadRun run = Workload(absl::StrCat(m.scenario, " --threads 3 --frames 12 --bug ", m.rule),
                             "TSAN_OPTIONS=report_bugs=0");
  EXPECT_EQ(run.exit_code, 1);
  std::vector<std::string> v = Violations(run);
  ASSERT_FALSE(v.empty()) << m.rule << " not detected in " << m.scenario;
  for (const std::string& line : v) {
    EXPECT_TRUE(absl::StartsWith(line, absl::StrCat(m.rule, " "))) << line;
  }
}

std::vector<Mode> AllModes() {
  std::vector<Mode> modes;
  for (const char* rule : {"R5", "R6", "R16", "R22", "R33", "R36", "R39", "R50", "R67", "R68",
                           "R70", "R71", "R40", "R41", "R44", "R45", "R46"}) {
    modes.push_back({rule, "smallcl"});
    modes.push_back({rule, "scene"});
  }
  // These need draws / queries / deferred-context recordings larger than one copy.
  for (const char* rule : {"R60", "R72", "R52", "R61"}) modes.push_back({rule, "scene"});
  // The GPU/kernel model: the UMD side (R74), the kernel's VidSch (R75, R76) and the model KMD
  // (R77, R78) under frames that flush and present; the DX6 driver (R79, R80).
  for (const char* rule : {"R74", "R75", "R76", "R77", "R78"}) modes.push_back({rule, "present"});
  modes.push_back({"R74", "smallcl"});
  for (const char* rule : {"R79", "R80"}) modes.push_back({rule, "dp2"});
  return modes;
}

INSTANTIATE_TEST_SUITE_P(Modes, DetectedModeTest, ::testing::ValuesIn(AllModes()),
                         [](const ::testing::TestParamInfo<Mode>& info) {
                           return absl::StrCat(info.param.rule, "_", info.param.scenario);
                         });

struct CleanRun {
  const char* name;
  const char* args;
  const char* env;
};

class CleanRunTest : public ::testing::TestWithParam<CleanRun> {};

TEST_P(CleanRunTest, NothingDetected) {
  WorkloadRun run = Workload(GetParam().args, GetParam().env);
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(Violations(run), ::testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(
    Clean, CleanRunTest,
    ::testing::Values(
        CleanRun{"smallcl", "smallcl --threads 4", ""}, CleanRun{"scene", "scene --threads 4", ""},
        CleanRun{"present", "present --frames 8", ""}, CleanRun{"dp2", "dp2 --frames 8", ""},
        CleanRun{"tables", "tables --frames 2", ""}, CleanRun{"long", "long --frames 3", ""},
        CleanRun{"scene_seed", "scene --threads 2 --frames 9 --seed 77", ""},
        CleanRun{"oom_recycle_create", "smallcl --frames 8",
                 "CLTRACE_REFDRIVER_CONFIG=oom:RecycleCreateCommandList=2,5,9"},
        CleanRun{"oom_recycle_dc", "scene --frames 8",
                 "CLTRACE_REFDRIVER_CONFIG=oom:RecycleCreateDeferredContext=3,7"},
        CleanRun{"oom_create", "scene --frames 8",
                 "CLTRACE_REFDRIVER_CONFIG=oom:CreateCommandList=1,4"},
        CleanRun{"removed", "smallcl --frames 8", "CLTRACE_REFDRIVER_CONFIG=removed=600"},
        CleanRun{"removed_scene", "scene --frames 8", "CLTRACE_REFDRIVER_CONFIG=removed=900"}),
    [](const ::testing::TestParamInfo<CleanRun>& info) { return info.param.name; });

// `long` is linear in its frames (every frame makes about the same calls), and without
// --frames it makes about 100 million calls: extrapolated from two short runs, not run here.
TEST(WorkloadCliTest, LongWithoutFramesMakesAboutAHundredMillionCalls) {
  auto calls = [](int frames) {
    std::vector<std::string> v = Workload(absl::StrCat("long --frames ", frames)).lines;
    uint64_t n = 0;
    EXPECT_TRUE(!v.empty() && absl::SimpleAtoi(absl::StripPrefix(v.back(), "calls: "), &n))
        << (v.empty() ? "(no output)" : v.back());
    return n;
  };
  const uint64_t two = calls(2), six = calls(6);
  ASSERT_GT(six, two);
  const uint64_t per_frame = (six - two) / 4;  // frames differ by a few kernel-side calls
  const uint64_t total = two + per_frame * (workloads::LongDefaultFrames() - 2);
  EXPECT_GE(total, 95'000'000u);
  EXPECT_LE(total, 110'000'000u);
}

TEST(WorkloadCliTest, ListNamesEveryScenarioAndEveryMode) {
  WorkloadRun run = Workload("--list");
  EXPECT_EQ(run.exit_code, 0);
  ASSERT_GE(run.lines.size(), 6u);
  EXPECT_TRUE(absl::StartsWith(run.lines[0], "smallcl "));
  EXPECT_TRUE(absl::StartsWith(run.lines[1], "scene "));
  EXPECT_TRUE(absl::StartsWith(run.lines[2], "present "));
  EXPECT_TRUE(absl::StartsWith(run.lines[3], "dp2 "));
  EXPECT_TRUE(absl::StartsWith(run.lines[4], "tables "));
  EXPECT_TRUE(absl::StartsWith(run.lines[5], "long "));
  // Then "--bug RULE  KIND  scenarios: A, B": exactly the (rule, scenario) pairs the mode
  // tests above run and see detected.
  std::vector<std::string> listed, tested;
  for (size_t i = 6; i < run.lines.size(); ++i) {
    std::vector<std::string> halves = absl::StrSplit(run.lines[i], "scenarios: ");
    ASSERT_EQ(halves.size(), 2u) << run.lines[i];
    std::vector<std::string> words = absl::StrSplit(halves[0], ' ', absl::SkipEmpty());
    ASSERT_GE(words.size(), 3u) << run.lines[i];
    EXPECT_EQ(words[0], "--bug");
    for (absl::string_view scenario : absl::StrSplit(halves[1], ", "))
      listed.push_back(absl::StrCat(words[1], " ", scenario));
  }
  for (const Mode& m : AllModes()) tested.push_back(absl::StrCat(m.rule, " ", m.scenario));
  EXPECT_THAT(listed, ::testing::UnorderedElementsAreArray(tested));
}

TEST(WorkloadCliTest, HelpAndVersion) {
  WorkloadRun help = Workload("--help");
  EXPECT_EQ(help.exit_code, 0);
  ASSERT_FALSE(help.lines.empty());
  EXPECT_TRUE(absl::StartsWith(help.lines[0], "usage: cltrace-workload NAME")) << help.lines[0];
  WorkloadRun version = Workload("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.lines, ::testing::ElementsAre(::testing::StartsWith("cltrace-workload 0.")));
}

// `calls:` counts every layer: `present` drives the kernel layer too, `dp2` only DX6 calls.
TEST(WorkloadCliTest, CallsCountTheKernelAndDx6Layers) {
  auto calls = [](const WorkloadRun& run) {
    uint64_t n = 0;
    EXPECT_TRUE(!run.lines.empty() && absl::SimpleAtoi(run.lines.back().substr(7), &n));
    return n;
  };
  uint64_t one = calls(Workload("present --frames 1"));
  uint64_t two = calls(Workload("present --frames 2"));
  EXPECT_GT(two, one);
  EXPECT_GT(calls(Workload("dp2 --frames 2")), 20u);
}

TEST(WorkloadCliTest, UnknownScenarioIsAUsageError) { EXPECT_EQ(Workload("nosuch").exit_code, 2); }

// The planted-bug table of rules/ is the one list of modes: the GPU model's planted bugs and
// the runtime model's misuse modes are exactly its kernel/DX6 and misuse rows.
TEST(PlantedBugTableTest, GpuAndRuntimeModesAreTheTablesRows) {
  std::vector<rules::Rule> gpu_rows, misuse_rows;
  for (const rules::PlantedBugMode& m : rules::PlantedBugModes()) {
    if (m.layer == rules::BugLayer::kMisuse) misuse_rows.push_back(m.rule);
    if (m.layer == rules::BugLayer::kKernel || m.layer == rules::BugLayer::kDx6Driver)
      gpu_rows.push_back(m.rule);
  }
  std::vector<rules::Rule> gpu_bugs;
  for (const gpu::PlantedBugInfo& b : gpu::PlantedBugs()) {
    if (b.layer == gpu::PlantedBugLayer::kUmd) {  // planted through the reference driver
      EXPECT_TRUE(rules::HasPlantedBug(b.rule, rules::BugLayer::kDriver)) << rules::RuleId(b.rule);
      continue;
    }
    gpu_bugs.push_back(b.rule);
    EXPECT_TRUE(rules::HasPlantedBug(b.rule, b.layer == gpu::PlantedBugLayer::kKernel
                                                 ? rules::BugLayer::kKernel
                                                 : rules::BugLayer::kDx6Driver))
        << rules::RuleId(b.rule);
  }
  EXPECT_EQ(gpu_bugs, gpu_rows);
  EXPECT_EQ(runtime::MisuseRules(), misuse_rows);
  for (rules::Rule r : misuse_rows) {
    runtime::Misuse m;
    EXPECT_TRUE(runtime::MisuseFromRule(rules::RuleId(r), &m)) << rules::RuleId(r);
    EXPECT_EQ(runtime::MisuseRule(m), rules::RuleId(r));
  }
}

TEST(WorkloadCliTest, UnknownBugRuleIsAUsageError) {
  EXPECT_EQ(Workload("smallcl --bug R99").exit_code, 2);
}

TEST(WorkloadCliTest, MissingDriverIsASetupError) {
  EXPECT_EQ(Workload("smallcl --driver /nonexistent/libnothing.so").exit_code, 2);
}

TEST(WorkloadCliTest, DriverFromEnvironment) {
  WorkloadRun run = Workload("smallcl --frames 2", absl::StrCat("CLTRACE_DRIVER=", BuildDir(),
                                                                "/lib/libcltrace_refdriver.so"));
  EXPECT_EQ(run.exit_code, 0);
}

// The one printer `cltrace-workload` and `cltrace-workload apitrace` share: every violation of
// the process (here a kernel-model one), then the call count, and the exit code by what the run
// found.
TEST(WorkloadViolationPrinterTest, PrintsEveryViolationThenTheCallCount) {
  auto printed = [](bool run_ok, int* exit_code) {
    std::FILE* f = std::tmpfile();
    *exit_code = workloads::PrintViolationsAndCalls(run_ok, f);
    std::rewind(f);
    std::string text;
    char buf[256];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
    std::fclose(f);
    return text;
  };
  int exit_code = -1;
  EXPECT_EQ(printed(true, &exit_code), "calls: 0\n");
  EXPECT_EQ(exit_code, 0);
  printed(false, &exit_code);
  EXPECT_EQ(exit_code, 2);
  rules::Finding v;
  v.rule = rules::Rule::kR75;
  v.message = "a planted kernel finding";
  workloads::ModelViolationSink("kmd").Report(v);
  EXPECT_EQ(printed(true, &exit_code), "R75 fn=kmd a planted kernel finding\ncalls: 0\n");
  EXPECT_EQ(exit_code, 1);
  EXPECT_EQ(workloads::AllViolations(),
            std::vector<std::string>{"R75 fn=kmd a planted kernel finding"});
}

}  // namespace
}  // namespace cltrace::testing
