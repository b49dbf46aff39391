// cltrace-inspector performance (targets from the inspector issue, #16 item 4):
//   BM_InspectorRawDecode/N       the baseline: the seq-order decode of the same file
//                                 (format::SeqStream, nothing kept);
//   BM_InspectorLoad/10000000     a 10 M-call .cltrace opened as the inspector opens it (one
//                                 streaming pass: decode, checker, rows, counts, call records)
//                                 — target <= 3 s wall, <= 60 bytes per call (counter);
//   BM_InspectorLifelinesFrame/N  one frame of the fully zoomed-out lifelines panel (ImGui
//                                 NewFrame -> Render, no rasterization);
//   BM_InspectorAppFrame/N        the same for the whole window (every panel) at 1600x900;
//   BM_InspectorAppFrameJump/N    the whole window with a far call selected every frame (the
//                                 calls list and details decode calls from the file);
//   *Big                          the same on a recorded 100 M-call trace (coarse index) —
//                                 target: opens within 24 GB, frames <= 16 ms of our own work.
// The N-call traces are the small-command-list pattern (inspector/internal/synthetic_trace.h)
// written to a file once per process. Load times are wall time (UseRealTime) with process CPU
// time alongside.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "format/seq_stream.h"
#include "imgui.h"
#include "inspector/app.h"
#include "inspector/headless.h"
#include "inspector/internal/synthetic_model.h"
#include "inspector/internal/synthetic_trace.h"
#include "inspector/lifelines_panel.h"
#include "inspector/loader.h"
#include "inspector/theme.h"

namespace cltrace::inspector {
namespace {

constexpr int kDeferredContexts = 4;

// A synthetic trace of `calls` calls written once per process (removed at exit).
const std::string& TraceFile(size_t calls) {
  static std::map<size_t, std::string>* files = new std::map<size_t, std::string>();
  auto it = files->find(calls);
  if (it != files->end()) return it->second;
  const char* dir = std::getenv("TMPDIR");
  std::string path =
      absl::StrCat(dir ? dir : "/tmp", "/inspector_bench_", getpid(), "_", calls, ".cltrace");
  absl::Status s = testing::WriteCltrace(
      testing::MakeSmallCommandListTrace({.calls = calls, .dcs = kDeferredContexts}), path);
  if (!s.ok()) std::fprintf(stderr, "inspector_bench: %s\n", std::string(s.message()).c_str());
  static struct Cleanup {
    ~Cleanup() {
      for (auto& [n, p] : *files) std::remove(p.c_str());
    }
  } cleanup;
  return files->emplace(calls, path).first->second;
}

// The recorded trace the *Big benchmarks open (100 M calls of `cltrace-workload long` under
// `cltrace record`); CLTRACE_INSPECTOR_BIG overrides, the benchmarks skip when it is absent.
std::string BigTrace() {
  const char* p = std::getenv("CLTRACE_INSPECTOR_BIG");
  return p != nullptr ? p : "/work/big/long100m.cltrace";
}

bool Exists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

// The model of a trace file, opened once per process the way the inspector opens it.
const TraceModel* ModelOf(const std::string& path) {
  static std::map<std::string, std::unique_ptr<TraceModel>>* models =
      new std::map<std::string, std::unique_ptr<TraceModel>>();
  auto& m = (*models)[path];
  if (m == nullptr) {
    absl::StatusOr<std::unique_ptr<TraceModel>> opened = TraceModel::Open(path);
    if (!opened.ok()) {
      std::fprintf(stderr, "inspector_bench: %s\n", std::string(opened.status().message()).c_str());
      return nullptr;
    }
    m = *std::move(opened);
  }
  return m.get();
}

const TraceModel& Model(size_t calls) { return *ModelOf(TraceFile(calls)); }

// Bytes the model holds per call: the call storage (its own accounting) and the lifelines'
// spans.
double ModelBytesPerCall(const TraceModel& m) {
  uint64_t spans = 0;
  for (const Row& r : m.rows()) spans += r.spans.capacity() * sizeof(Span);
  return static_cast<double>(m.call_storage_bytes() + spans) /
         static_cast<double>(std::max<size_t>(1, m.call_count()));
}

// The baseline: the raw decode of the same file in seq order (format::SeqStream, nothing
// kept), what any reader of the trace pays at least.
void RawDecode(benchmark::State& state, const std::string& path) {
  uint64_t events = 0;
  for (auto _ : state) {
    format::SeqStreamOptions o;
    o.gaps = false;
    absl::StatusOr<std::unique_ptr<format::SeqStream>> s = format::SeqStream::Open(path, o);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.status().message()).c_str());
      return;
    }
    format::Event e;
    events = 0;
    while ((*s)->Next(&e)) ++events;
    benchmark::DoNotOptimize(e);
  }
  state.counters["calls"] = static_cast<double>(events);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
}

// CPU seconds of the calling thread so far.
double ThreadCpuSeconds() {
  struct rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void Load(benchmark::State& state, const std::string& path) {
  uint64_t spans = 0, events = 0;
  double bytes = 0, check_thread_s = 0;
  bool fine = true;
  for (auto _ : state) {
    // The calling thread checks and indexes; the stream decodes on a second thread. On a
    // quiet machine the load takes about the longer of the two.
    const double cpu0 = ThreadCpuSeconds();
    absl::StatusOr<std::unique_ptr<TraceModel>> m = LoadModel(path, {}, {});
    check_thread_s += ThreadCpuSeconds() - cpu0;
    if (!m.ok()) {
      state.SkipWithError(std::string(m.status().message()).c_str());
      return;
    }
    spans = (*m)->span_count();
    events = (*m)->call_count();
    bytes = ModelBytesPerCall(**m);
    fine = (*m)->fine_index();
    state.PauseTiming();
    m->reset();  // freeing the model is not part of loading
    state.ResumeTiming();
  }
  state.counters["calls"] = static_cast<double>(events);
  state.counters["spans"] = static_cast<double>(spans);
  state.counters["bytes_per_call"] = bytes;
  state.counters["fine_index"] = fine ? 1 : 0;
  state.counters["check_thread_s"] = check_thread_s / static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
}

void BM_InspectorRawDecode(benchmark::State& state) {
  RawDecode(state, TraceFile(static_cast<size_t>(state.range(0))));
}
BENCHMARK(BM_InspectorRawDecode)
    ->Arg(10000000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Iterations(3);

void BM_InspectorLoad(benchmark::State& state) {
  Load(state, TraceFile(static_cast<size_t>(state.range(0))));
}
BENCHMARK(BM_InspectorLoad)
    ->Arg(1000000)
    ->Arg(10000000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Iterations(3);

// The recorded 100 M-call trace: raw decode (baseline), load (coarse index), frames.
void BM_InspectorRawDecodeBig(benchmark::State& state) {
  if (!Exists(BigTrace())) return state.SkipWithError("no big trace (CLTRACE_INSPECTOR_BIG)");
  RawDecode(state, BigTrace());
}
BENCHMARK(BM_InspectorRawDecodeBig)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Iterations(1);

void BM_InspectorLoadBig(benchmark::State& state) {
  if (!Exists(BigTrace())) return state.SkipWithError("no big trace (CLTRACE_INSPECTOR_BIG)");
  Load(state, BigTrace());
}
BENCHMARK(BM_InspectorLoadBig)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Iterations(1);

// An ImGui context with a built font atlas and no renderer: frames are built, not rasterized.
class Frames {
 public:
  Frames() : ctx_(CreateUnrenderedContext(1600, 900)) {}
  ~Frames() { ImGui::DestroyContext(ctx_); }

 private:
  ImGuiContext* ctx_;
};

void LifelinesFrame(benchmark::State& state, const TraceModel& model) {
  Frames frames;
  LifelinesPanel panel;
  View view;
  view.Reset(model);  // fully zoomed out
  const App::Layout layout = App::LayoutFor(1600, 900);
  auto frame = [&] {
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(layout.lifelines.x, layout.lifelines.y));
    ImGui::SetNextWindowSize(ImVec2(layout.lifelines.w, layout.lifelines.h));
    panel.Draw("Lifelines", model, view);
    ImGui::Render();
  };
  frame();  // first frame creates the windows
  for (auto _ : state) frame();
  state.counters["spans"] = static_cast<double>(model.span_count());
  state.counters["rects"] = static_cast<double>(panel.last_rects());
  state.counters["vertices"] = static_cast<double>(ImGui::GetDrawData()->TotalVtxCount);
}
void BM_InspectorLifelinesFrame(benchmark::State& state) {
  LifelinesFrame(state, Model(static_cast<size_t>(state.range(0))));
}
BENCHMARK(BM_InspectorLifelinesFrame)->Arg(2000000)->Arg(10000000)->Unit(benchmark::kMicrosecond);

void BM_InspectorLifelinesFrameBig(benchmark::State& state) {
  const TraceModel* m = Exists(BigTrace()) ? ModelOf(BigTrace()) : nullptr;
  if (m == nullptr) return state.SkipWithError("no big trace (CLTRACE_INSPECTOR_BIG)");
  LifelinesFrame(state, *m);
}
BENCHMARK(BM_InspectorLifelinesFrameBig)->Unit(benchmark::kMicrosecond);

// The whole window over a model opened from `path` (moved into the App and back out, so the
// process-wide model is reused). `jump`: every frame selects a call far from the last one, so
// the calls list and the selected call's details decode calls not looked at before (on the
// coarse index, a block of records and its chunks; on the fine one, the chunks).
void AppFrame(benchmark::State& state, const std::string& path, bool jump) {
  absl::StatusOr<std::unique_ptr<TraceModel>> m = TraceModel::Open(path);
  if (!m.ok()) return state.SkipWithError(std::string(m.status().message()).c_str());
  Frames frames;
  App app;
  app.SetModel(*std::move(m));
  const TraceModel& model = *app.model();
  if (!app.Select(model.rows().empty() ? "" : model.rows()[0].label).ok())
    state.SkipWithError("no row");
  auto frame = [&] {
    ImGui::NewFrame();
    app.Draw();
    ImGui::Render();
  };
  frame();
  frame();
  uint64_t x = 88172645463325252ull;  // xorshift: the same far jumps every run
  for (auto _ : state) {
    if (jump) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      app.view().SelectEvent(model, static_cast<int64_t>(x % model.call_count()));
    }
    frame();
  }
  state.counters["vertices"] = static_cast<double>(ImGui::GetDrawData()->TotalVtxCount);
  state.counters["calls"] = static_cast<double>(model.call_count());
  state.counters["bytes_per_call"] = ModelBytesPerCall(model);
}

void BM_InspectorAppFrame(benchmark::State& state) {
  AppFrame(state, TraceFile(static_cast<size_t>(state.range(0))), false);
}
BENCHMARK(BM_InspectorAppFrame)->Arg(2000000)->Arg(10000000)->Unit(benchmark::kMicrosecond);

void BM_InspectorAppFrameJump(benchmark::State& state) {
  AppFrame(state, TraceFile(static_cast<size_t>(state.range(0))), true);
}
BENCHMARK(BM_InspectorAppFrameJump)->Arg(10000000)->Unit(benchmark::kMicrosecond);

void BM_InspectorAppFrameBig(benchmark::State& state) {
  if (!Exists(BigTrace())) return state.SkipWithError("no big trace (CLTRACE_INSPECTOR_BIG)");
  AppFrame(state, BigTrace(), state.range(0) != 0);
}
BENCHMARK(BM_InspectorAppFrameBig)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace cltrace::inspector
