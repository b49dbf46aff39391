// What the recorder benchmarks share: a fake runtime per mode with a deferred context per
// benchmark thread, the trace path, a file recorder, the thread CPU clock and the binary's
// directory. Written against the recorder API that both the current tree and the previous
// recorder (scripts/build-previous-recorder.sh) have, so bench/recorder_stream_bench.cc
// compiles in both.
#ifndef CLTRACE_BENCH_RECORDER_FIXTURE_H_
#define CLTRACE_BENCH_RECORDER_FIXTURE_H_

#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "recorder/internal/fake_driver.h"
#include "recorder/recorder.h"

namespace cltrace::recorder::bench {

// One fake runtime per mode, with a deferred context per benchmark thread.
struct Setup {
  testing::FakeRuntime runtime;
  std::vector<testing::FakeRtContext*> dcs;
};

inline Setup& Get(bool recorded, int threads) {
  static std::mutex mu;
  static std::unique_ptr<Setup> setups[2];
  std::lock_guard<std::mutex> l(mu);
  std::unique_ptr<Setup>& s = setups[recorded ? 1 : 0];
  if (s == nullptr) {
    s = std::make_unique<Setup>();
    if (s->runtime.Create(recorded ? &testing::RecordedOpenAdapter
                                   : &testing::FakeOpenAdapter10_2) != S_OK) {
      std::fprintf(stderr, "fake runtime setup failed\n");
      std::abort();
    }
  }
  while (static_cast<int>(s->dcs.size()) < threads) {
    s->dcs.push_back(s->runtime.CreateDeferredContext());
  }
  return *s;
}

// Where a recording benchmark writes its trace (removed when it ends).
inline std::string BenchTracePath() {
  return absl::StrCat("/tmp/cltrace_recorder_bench_", getpid(), ".cltrace");
}

// $CLTRACE_BENCH_ZSTD_LEVEL, when set, replaces the recorder's zstd level, to weigh the
// drainer's CPU against the bytes per call.
inline absl::StatusOr<std::unique_ptr<Recorder>> StartFileRecorder(const std::string& path) {
  Options o;
  o.output_path = path;
  if (const char* level = std::getenv("CLTRACE_BENCH_ZSTD_LEVEL"); level != nullptr) {
    o.zstd_level = std::atoi(level);
  }
  return Recorder::Start(std::move(o));
}

inline int64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The directory of the running binary (build/bin).
inline std::string BinDir() {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return ".";
  exe[n] = '\0';
  std::string dir(exe);
  dir.resize(dir.rfind('/'));
  return dir;
}

}  // namespace cltrace::recorder::bench

#endif  // CLTRACE_BENCH_RECORDER_FIXTURE_H_
