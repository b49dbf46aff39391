// cltrace-inspector performance (targets from the inspector issue):
//   BM_InspectorLoad/10000000     a 10 M-call .cltrace loaded and indexed (read, sort, checker,
//                                 rows, counts) — target <= 3 s wall on this machine;
//   BM_InspectorLifelinesFrame/N  one frame of the fully zoomed-out lifelines panel (ImGui
//                                 NewFrame -> Render, no rasterization) over a model of N calls
//                                 (>= 1 M state spans from 2 M calls) — target <= 2 ms CPU;
//   BM_InspectorAppFrame/N        the same for the whole window (every panel) at 1600x900.
// The traces are the small-command-list pattern (inspector/internal/synthetic_trace.h): per
// deferred context RecycleCommandList, RecycleCreateCommandList, local open/close,
// RecycleCreateDeferredContext; on the IC CommandListExecute and RecycleDestroyCommandList.
// Load times are wall time (UseRealTime) with process CPU time (both cores: the call counting
// runs beside the checker) alongside.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
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

const TraceModel& Model(size_t calls) {
  static std::map<size_t, std::unique_ptr<TraceModel>>* models =
      new std::map<size_t, std::unique_ptr<TraceModel>>();
  auto& m = (*models)[calls];
  if (m == nullptr) {
    testing::SyntheticTrace t =
        testing::MakeSmallCommandListTrace({.calls = calls, .dcs = kDeferredContexts});
    TraceData d = testing::AsTraceData(std::move(t), "synthetic");
    m = *TraceModel::Build(std::move(d));
  }
  return *m;
}

void BM_InspectorLoad(benchmark::State& state) {
  const std::string& path = TraceFile(static_cast<size_t>(state.range(0)));
  uint64_t spans = 0, events = 0;
  double read_s = 0, index_s = 0;
  for (auto _ : state) {
    // Progress passes 0.5 when reading ends and indexing begins.
    const auto start = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point read_end{};
    absl::StatusOr<std::unique_ptr<TraceModel>> m = LoadModel(path, {}, [&](float f) {
      if (f >= 0.5f && read_end == std::chrono::steady_clock::time_point{})
        read_end = std::chrono::steady_clock::now();
    });
    const auto end = std::chrono::steady_clock::now();
    read_s += std::chrono::duration<double>(read_end - start).count();
    index_s += std::chrono::duration<double>(end - read_end).count();
    if (!m.ok()) {
      state.SkipWithError(std::string(m.status().message()).c_str());
      return;
    }
    spans = (*m)->span_count();
    events = (*m)->call_count();
    state.PauseTiming();
    m->reset();  // freeing 10 M events is not part of loading
    state.ResumeTiming();
  }
  state.counters["calls"] = static_cast<double>(events);
  state.counters["spans"] = static_cast<double>(spans);
  state.counters["read_s"] = read_s / static_cast<double>(state.iterations());
  state.counters["index_s"] = index_s / static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
}
BENCHMARK(BM_InspectorLoad)
    ->Arg(1000000)
    ->Arg(10000000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Iterations(3);

// An ImGui context with a built font atlas and no renderer: frames are built, not rasterized.
class Frames {
 public:
  Frames() : ctx_(CreateUnrenderedContext(1600, 900)) {}
  ~Frames() { ImGui::DestroyContext(ctx_); }

 private:
  ImGuiContext* ctx_;
};

void BM_InspectorLifelinesFrame(benchmark::State& state) {
  const TraceModel& model = Model(static_cast<size_t>(state.range(0)));
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
BENCHMARK(BM_InspectorLifelinesFrame)->Arg(2000000)->Arg(10000000)->Unit(benchmark::kMicrosecond);

void BM_InspectorAppFrame(benchmark::State& state) {
  Frames frames;
  App app;
  {
    testing::SyntheticTrace t = testing::MakeSmallCommandListTrace(
        {.calls = static_cast<size_t>(state.range(0)), .dcs = kDeferredContexts});
    TraceData d = testing::AsTraceData(std::move(t), "synthetic");
    app.SetModel(*TraceModel::Build(std::move(d)));
  }
  if (!app.Select("cl0").ok()) state.SkipWithError("no cl0");
  auto frame = [&] {
    ImGui::NewFrame();
    app.Draw();
    ImGui::Render();
  };
  frame();
  frame();
  for (auto _ : state) frame();
  state.counters["vertices"] = static_cast<double>(ImGui::GetDrawData()->TotalVtxCount);
}
BENCHMARK(BM_InspectorAppFrame)->Arg(2000000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace cltrace::inspector
