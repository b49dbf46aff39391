// recorder_crash_app: a runtime-model application that dies from a fatal signal, for the
// recorder's crash tests (tests/recorder/record_e2e_test.cc).
//
//   recorder_crash_app after  segv|abort|bus|kill
//                                          run smallcl to the end, print `calls: N`, then die
//   recorder_crash_app during segv|abort|bus|kill [DELAY_MS]
//                                          die from a watchdog thread while scene is running
//                                          (DELAY_MS after the start, default 40)
//   recorder_crash_app recorder segv|abort|bus
//                                          run smallcl to the end, print `calls: N`, then send
//                                          the signal to the recorder's own background thread
//                                          (named cltrace-record) with tgkill
//
// The driver comes from $CLTRACE_DRIVER as for any runtime-model program.
#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "corpus/workloads/model_layers.h"
#include "corpus/workloads/scenarios.h"
#include "runtime/runtime.h"

namespace {

int* volatile g_null = nullptr;

[[noreturn]] void Die(const char* how) {
  if (std::strcmp(how, "segv") == 0) *g_null = 1;  // a real fault, not raise()
  if (std::strcmp(how, "kill") == 0) raise(SIGKILL);
  if (std::strcmp(how, "bus") == 0) raise(SIGBUS);
  std::abort();
}

// The thread id of this process's thread named `name`, or 0.
pid_t ThreadNamed(const std::string& name) {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  pid_t found = 0;
  while (dirent* d = readdir(dir)) {
    if (d->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + d->d_name + "/comm");
    std::string line;
    if (std::getline(comm, line) && line == name) found = static_cast<pid_t>(std::atoi(d->d_name));
  }
  closedir(dir);
  return found;
}

int SignalOf(const char* how) {
  if (std::strcmp(how, "segv") == 0) return SIGSEGV;
  if (std::strcmp(how, "bus") == 0) return SIGBUS;
  return SIGABRT;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cltrace;
  if (argc != 3 && argc != 4) {
    std::fprintf(
        stderr, "usage: recorder_crash_app after|during|recorder segv|abort|bus|kill [DELAY_MS]\n");
    return 2;
  }
  const int delay_ms = argc == 4 ? std::atoi(argv[3]) : 40;
  const bool during = std::strcmp(argv[1], "during") == 0;
  const char* how = argv[2];
  runtime::Device* device = nullptr;
  if (runtime::Device::Create(runtime::RuntimeOptions(), &device) != S_OK) return 2;
  workloads::ScenarioOptions options;
  if (during) {
    std::thread([how, delay_ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
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
  if (std::strcmp(argv[1], "recorder") == 0) {
    // The background thread names itself when it first runs: on a loaded machine that can be
    // after this short workload ended, so wait for it (bounded) instead of failing at once.
    pid_t recorder = ThreadNamed("cltrace-record");
    for (int i = 0; recorder == 0 && i < 200; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      recorder = ThreadNamed("cltrace-record");
    }
    if (recorder == 0) {
      std::fprintf(stderr, "recorder_crash_app: no cltrace-record thread after 10 s\n");
      return 4;
    }
    syscall(SYS_tgkill, getpid(), recorder, SignalOf(how));
    // The recorder's thread flushes, then the signal takes its course; this thread only waits.
    for (int i = 0; i < 100; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::fprintf(stderr, "recorder_crash_app: still alive 10 s after the signal\n");
    return 3;
  }
  Die(how);
}
