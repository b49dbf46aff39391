// API-call annotations (runtime/annotation.h) reach a driver library that exports the hooks,
// and the reference driver stays reachable (configuration, violations) behind such a shim.
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "corpus/workloads/scenarios.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/runtime.h"
#include "tests/runtime/test_util.h"

namespace cltrace::testing {
namespace {

using ::testing::Contains;
using ::testing::Each;
using ::testing::Not;
using ::testing::StartsWith;

std::string ShimPath() { return absl::StrCat(BuildDir(), "/lib/libcltrace_test_shim.so"); }

std::vector<std::string> ShimLog() {
  void* h = dlopen(ShimPath().c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return {};
  auto log = reinterpret_cast<size_t (*)(char*, size_t)>(dlsym(h, "CltraceTestShimLog"));
  std::string text(log(nullptr, 0) + 1, '\0');
  log(text.data(), text.size());
  dlclose(h);
  text.resize(text.size() - 1);
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

runtime::Device* ShimDevice() {
  setenv("CLTRACE_SHIM_TARGET", absl::StrCat(BuildDir(), "/lib/libcltrace_refdriver.so").c_str(),
         1);
  runtime::RuntimeOptions options;
  options.driver_path = ShimPath();
  runtime::Device* d = nullptr;
  EXPECT_EQ(runtime::Device::Create(options, &d), S_OK);
  return d;
}

TEST(AnnotationTest, EveryApiCallIsAnnotatedOnce) {
  ResetViolations();
  SetDriverConfig("");
  runtime::Device* d = ShimDevice();
  ASSERT_NE(d, nullptr);
  workloads::ScenarioOptions o;
  o.threads = 2;
  o.frames = 2;
  ASSERT_TRUE(workloads::RunScenario("smallcl", d, o).ok());
  d->Release();
  std::vector<std::string> log = ShimLog();
  EXPECT_THAT(log, Contains("CreateDevice"));
  EXPECT_THAT(log, Contains("CreateDeferredContext"));
  EXPECT_THAT(log, Contains("CopyResource"));
  EXPECT_THAT(log, Contains("FinishCommandList"));
  EXPECT_THAT(log, Contains("ExecuteCommandList"));
  EXPECT_THAT(log, Contains("Release"));
  EXPECT_THAT(log, Contains("Present"));
  EXPECT_THAT(log, Not(Contains("UNBALANCED")));
  EXPECT_THAT(AllViolations(), ::testing::IsEmpty());
}

// Configuration reaches the driver through the environment and its violations through
// dlopen(RTLD_NOLOAD) although only the shim was loaded by the runtime.
TEST(AnnotationTest, DriverBehindShimIsConfiguredAndReportsViolations) {
  ResetViolations();
  runtime::RuntimeOptions options;
  setenv("CLTRACE_SHIM_TARGET", absl::StrCat(BuildDir(), "/lib/libcltrace_refdriver.so").c_str(),
         1);
  options.driver_path = ShimPath();
  options.misuse = runtime::Misuse::kR44;
  SetDriverConfig("bug=R33");
  runtime::Device* d = nullptr;
  ASSERT_EQ(runtime::Device::Create(options, &d), S_OK);
  SetDriverConfig("");
  workloads::ScenarioOptions o;
  o.threads = 1;
  o.frames = 2;
  ASSERT_TRUE(workloads::RunScenario("smallcl", d, o).ok());
  d->Release();
  EXPECT_THAT(runtime::ProcessViolations(), Contains(StartsWith("R33 ")));  // runtime saw the bug
  EXPECT_THAT(runtime::ProcessDriverViolations(),
              Contains(StartsWith("R44 ")));  // driver saw misuse
}

}  // namespace
}  // namespace cltrace::testing
