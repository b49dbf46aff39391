// Benchmarks of `cltrace replay` (replayer/replay.h): recorded calls replayed per second into
// the reference driver, on a recording of the small-command-list workload (target: >= 2 M
// calls/s on one core, --threads single).
//
// The trace: $CLTRACE_REPLAY_BENCH_TRACE if set (any .cltrace of the reference driver), else
// recorded once per process with the tools next to this binary:
//   <bin>/cltrace record -o <tmp> --driver <bin>/../lib/libcltrace_refdriver.so --
//       <bin>/cltrace-workload smallcl [--frames N]
// The driver: $CLTRACE_REPLAY_BENCH_DRIVER, else <bin>/../lib/libcltrace_refdriver.so.
//
// Counters: calls/s (wall clock) and calls/cpu_s (per CPU second of the process, all replay
// threads together: the one-core figure on a shared machine).
//
// BM_ReplayPresent*: the GPU/kernel model's share of replay time (see RunPresent).
//
// Each iteration is a whole Replay(): validating the trace and building the plan, the session
// (handle map, tables), every call and callback, the comparisons. "calls" counts recorded calls
// and callbacks covered (the N of "replay: identical (N calls)").
#include <benchmark/benchmark.h>
#include <limits.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "format/load_trace.h"
#include "format/trace_reader.h"
#include "replayer/replay.h"

namespace cltrace::replay {
namespace {

std::string BinDir() {
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return ".";
  exe[n] = '\0';
  std::string dir(exe);
  return dir.substr(0, dir.rfind('/'));
}

std::string Driver() {
  if (const char* env = getenv("CLTRACE_REPLAY_BENCH_DRIVER")) return env;
  return BinDir() + "/../lib/libcltrace_refdriver.so";
}

struct BenchTrace {
  std::string error;
  format::LoadedTrace trace;
};

// Reads the trace at `path` into bt->trace, or its error into bt->error.
void LoadInto(const std::string& path, BenchTrace* bt) {
  absl::StatusOr<format::LoadedTrace> loaded = format::ReadAllSorted(path);
  if (!loaded.ok()) {
    bt->error = std::string(loaded.status().message());
  } else {
    bt->trace = std::move(*loaded);
  }
}

// Records `cltrace-workload WORKLOAD` through the shim into a temporary file and loads it.
BenchTrace* RecordAndLoad(const std::string& workload) {
  auto* bt = new BenchTrace();
  char tmpl[] = "/tmp/cltrace_replay_bench_XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    bt->error = "mkdtemp failed";
    return bt;
  }
  const std::string path = absl::StrCat(tmpl, "/trace.cltrace");
  const std::string bin = BinDir();
  const std::string cmd =
      absl::StrCat(bin, "/cltrace record -o ", path, " --driver ", Driver(), " -- ", bin,
                   "/cltrace-workload ", workload, " >/dev/null 2>&1");
  // The workload exits 0; a planted bug would exit 1 (none is asked for here).
  if (std::system(cmd.c_str()) != 0) {
    bt->error = absl::StrCat("could not record the trace: ", cmd);
    return bt;
  }
  LoadInto(path, bt);
  return bt;
}

// The smallcl trace, once per process ($CLTRACE_REPLAY_BENCH_TRACE instead if set).
const BenchTrace& Trace() {
  static const BenchTrace* t = [] {
    if (const char* env = getenv("CLTRACE_REPLAY_BENCH_TRACE")) {
      auto* bt = new BenchTrace();
      LoadInto(env, bt);
      return bt;
    }
    const std::string frames =
        getenv("CLTRACE_REPLAY_BENCH_FRAMES") != nullptr
            ? absl::StrCat(" --frames ", getenv("CLTRACE_REPLAY_BENCH_FRAMES"))
            : "";
    return RecordAndLoad("smallcl" + frames);
  }();
  return *t;
}

// The present workload (frames of draws, a command list, flushes and presents through the
// kernel/GPU model): the kernel layer is in the trace, so --kernel model can replay it.
const BenchTrace& PresentTrace() {
  static const BenchTrace* t = RecordAndLoad("present --frames 20");
  return *t;
}

double Seconds(const timespec& a, const timespec& b) {
  return static_cast<double>(b.tv_sec - a.tv_sec) +
         1e-9 * static_cast<double>(b.tv_nsec - a.tv_nsec);
}

// Replays `t` with `options` once per iteration and sets the counters: calls/s (wall clock),
// calls/cpu_s (per CPU second of the whole process, every replay thread: on a shared machine
// that is what "one core" means) and, with the kernel model, model_share = wall time inside
// the model (forwarded kernel-thunk calls and the kernel work the recording shows at top
// level) / wall time of the whole Replay().
void Run(benchmark::State& state, const BenchTrace& t, const ReplayOptions& options) {
  if (!t.error.empty()) {
    state.SkipWithError(t.error.c_str());
    return;
  }
  uint64_t calls = 0, model_ns = 0;
  double cpu_seconds = 0, wall_seconds = 0;
  for (auto _ : state) {
    timespec a{}, b{}, wa{}, wb{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    clock_gettime(CLOCK_MONOTONIC, &wa);
    absl::StatusOr<ReplayResult> r =
        Replay(options, t.trace.events, t.trace.handles, t.trace.strings, t.trace.contents);
    clock_gettime(CLOCK_MONOTONIC, &wb);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    if (!r.ok() || r->outcome != Outcome::kIdentical) {
      state.SkipWithError(r.ok() ? "the replay diverged from the recording"
                                 : std::string(r.status().message()).c_str());
      return;
    }
    cpu_seconds += Seconds(a, b);
    wall_seconds += Seconds(wa, wb);
    calls += r->calls;
    model_ns += r->kernel.model_ns;
  }
  state.counters["calls/s"] =
      benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate);
  if (cpu_seconds > 0) state.counters["calls/cpu_s"] = static_cast<double>(calls) / cpu_seconds;
  if (options.kernel == KernelMode::kModel && wall_seconds > 0) {
    state.counters["model_share"] = 1e-9 * static_cast<double>(model_ns) / wall_seconds;
  }
  state.counters["trace_events"] = static_cast<double>(t.trace.events.size());
  state.SetItemsProcessed(static_cast<int64_t>(calls));
}

void RunSmallCl(benchmark::State& state, ThreadMode mode) {
  ReplayOptions options;
  options.driver_path = Driver();
  options.threads = mode;
  Run(state, Trace(), options);
}

// The GPU/kernel model's share of a replay (issue: the model must not dominate replay time):
// the same present trace replayed with the recorded kernel answers (baseline) and with
// --kernel model.
void RunPresent(benchmark::State& state, KernelMode kernel) {
  ReplayOptions options;
  options.driver_path = Driver();
  options.threads = ThreadMode::kSingle;
  options.kernel = kernel;
  Run(state, PresentTrace(), options);
}

void BM_ReplayPresentRecordedKernel(benchmark::State& state) {
  RunPresent(state, KernelMode::kRecorded);
}
void BM_ReplayPresentKernelModel(benchmark::State& state) { RunPresent(state, KernelMode::kModel); }

BENCHMARK(BM_ReplayPresentRecordedKernel)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReplayPresentKernelModel)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReplaySmallClSingle(benchmark::State& state) { RunSmallCl(state, ThreadMode::kSingle); }
void BM_ReplaySmallClRecorded(benchmark::State& state) { RunSmallCl(state, ThreadMode::kRecorded); }

BENCHMARK(BM_ReplaySmallClSingle)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReplaySmallClRecorded)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace cltrace::replay
