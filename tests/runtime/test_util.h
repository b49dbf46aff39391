// Shared helpers of the runtime-model end-to-end tests: a transcript observer, golden-file
// comparison, driver configuration and violation collection.
//
// Thread-safety: Transcript is thread-safe; the rest is for the test's main thread.
#ifndef CLTRACE_TESTS_RUNTIME_TEST_UTIL_H_
#define CLTRACE_TESTS_RUNTIME_TEST_UTIL_H_

#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "runtime/runtime.h"
#include "runtime/transcript.h"

namespace cltrace::testing {

// The runtime model's application-facing types every runtime test uses.
using runtime::CommandList;
using runtime::Device;
using runtime::DeviceContext;
using runtime::Resource;

// Collects transcript lines, indented two spaces per depth.
class Transcript : public runtime::DdiObserver {
 public:
  void OnLine(int depth, absl::string_view line) override;
  std::string Text() const;
  std::vector<std::string> Lines() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

// Compares `text` with tests/runtime/golden/<name>.txt (relative to the source tree) through
// tests/testing/golden.h: CLTRACE_UPDATE_GOLDEN=1 (exactly) rewrites the file instead. Fails
// the current test with the first differing line.
void ExpectGolden(absl::string_view name, const std::string& text);

// Sets (or with "" clears) CLTRACE_REFDRIVER_CONFIG for devices created afterwards.
void SetDriverConfig(const std::string& config);

// Forgets every violation so far (runtime and driver, process-wide).
void ResetViolations();
// Every violation line so far (runtime first, then driver).
std::vector<std::string> AllViolations();

// A device made with a clean violation record and `driver_config` (cleared again once the
// device exists); null (and a test failure) when Device::Create fails.
Device* NewDevice(const std::string& driver_config = "",
                  runtime::RuntimeOptions options = runtime::RuntimeOptions());
// A 256-byte buffer of device `d` with bind flags `bind` (null and a test failure if refused).
Resource* NewBuffer(Device* d, uint32_t bind,
                    D3D10_DDI_RESOURCE_USAGE usage = D3D10_DDI_USAGE_DEFAULT);

// The build directory (CLTRACE_BUILD_DIR, else the directory above this test binary).
std::string BuildDir();

// A tokenized shader program of `tokens` tokens.
std::vector<uint32_t> ShaderCode(uint32_t tokens);

}  // namespace cltrace::testing

#endif  // CLTRACE_TESTS_RUNTIME_TEST_UTIL_H_
