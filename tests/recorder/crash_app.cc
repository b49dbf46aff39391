// recorder_crash_app: a runtime-model application that dies from a fatal signal, for the
// recorder's crash tests (tests/recorder/record_e2e_test.cc).
//
//   recorder_crash_app after  segv|abort   run smallcl to the end, print `calls: N`, then die
//   recorder_crash_app during segv|abort   die from a watchdog thread while scene is running
//
// The driver comes from $CLTRACE_DRIVER as for any runtime-model program.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "corpus/workloads/model_layers.h"
#include "corpus/workloads/scenarios.h"
#include "runtime/runtime.h"

namespace {

int* volatile g_null = nullptr;

[[noreturn]] void Die(const char* how) {
  if (std::strcmp(how, "segv") == 0) *g_null = 1;  // a real fault, not raise()
  std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cltrace;
  if (argc != 3) {
    std::fprintf(stderr, "usage: recorder_crash_app after|during segv|abort\n");
    return 2;
  }
  const bool during = std::strcmp(argv[1], "during") == 0;
  const char* how = argv[2];
  runtime::Device* device = nullptr;
  if (runtime::Device::Create(runtime::RuntimeOptions(), &device) != S_OK) return 2;
  workloads::ScenarioOptions options;
  if (during) {
    std::thread([how] {
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      Die(how);
    }).detach();
    options.threads = 4;
    options.frames = 4000;  // far longer than the watchdog's delay
    (void)workloads::RunScenario("scene", device, options);
    std::fprintf(stderr, "recorder_crash_app: the watchdog did not fire\n");
    return 3;
  }
  options.threads = 2;
  options.frames = 10;
  if (!workloads::RunScenario("smallcl", device, options).ok()) return 2;
  // Counted as cltrace-workload counts them: every layer's calls.
  std::printf("calls: %llu\n", static_cast<unsigned long long>(workloads::AllLayerCalls()));
  std::fflush(stdout);
  Die(how);
}
