#include "tests/runtime/test_util.h"

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/golden.h"

namespace cltrace::testing {

void Transcript::OnLine(int depth, absl::string_view line) {
  std::lock_guard<std::mutex> lock(mu_);
  lines_.push_back(absl::StrCat(std::string(2 * depth, ' '), line));
}

std::string Transcript::Text() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const std::string& l : lines_) absl::StrAppend(&out, l, "\n");
  return out;
}

std::vector<std::string> Transcript::Lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lines_;
}

void ExpectGolden(absl::string_view name, const std::string& text) {
  EXPECT_TRUE(MatchesGolden(absl::StrCat("tests/runtime/golden/", name, ".txt"), text));
}

void SetDriverConfig(const std::string& config) {
  if (config.empty()) {
    unsetenv("CLTRACE_REFDRIVER_CONFIG");
  } else {
    setenv("CLTRACE_REFDRIVER_CONFIG", config.c_str(), 1);
  }
}

void ResetViolations() {
  runtime::ClearProcessViolations();
  runtime::ClearProcessDriverViolations();
}

std::vector<std::string> AllViolations() {
  std::vector<std::string> lines = runtime::ProcessViolations();
  std::vector<std::string> driver = runtime::ProcessDriverViolations();
  lines.insert(lines.end(), driver.begin(), driver.end());
  return lines;
}

Device* NewDevice(const std::string& driver_config, runtime::RuntimeOptions options) {
  ResetViolations();
  SetDriverConfig(driver_config);
  Device* d = nullptr;
  EXPECT_EQ(Device::Create(options, &d), S_OK);
  SetDriverConfig("");
  return d;
}

Resource* NewBuffer(Device* d, uint32_t bind, D3D10_DDI_RESOURCE_USAGE usage) {
  runtime::ResourceDesc desc;
  desc.usage = usage;
  desc.bind_flags = bind;
  desc.width = 256;
  Resource* r = nullptr;
  EXPECT_EQ(d->CreateResource(desc, &r), S_OK);
  return r;
}

std::string BuildDir() {
  if (const char* dir = std::getenv("CLTRACE_BUILD_DIR"); dir != nullptr && dir[0] != '\0') {
    return dir;
  }
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return ".";
  exe[n] = '\0';
  std::string path(exe);
  path = path.substr(0, path.rfind('/'));  // bin
  return path.substr(0, path.rfind('/'));
}

std::vector<uint32_t> ShaderCode(uint32_t tokens) {
  std::vector<uint32_t> code(tokens < 2 ? 2 : tokens, 0x11);
  code[0] = 0x00050001u;
  code[1] = static_cast<uint32_t>(code.size());
  return code;
}

}  // namespace cltrace::testing
