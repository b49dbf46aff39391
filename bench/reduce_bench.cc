// `cltrace reduce` at scale: a 1M-call trace (the corpus's clean smallcl recording repeated,
// with its planted-R22 recording once in the middle) reduced to the calls that still make the
// checker report R22. Target: well under a minute, down to a handful of calls (counters
// calls_before / calls_after).
#include <stdlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "cli/reduce.h"
#include "cli/trace_input.h"
#include "cli/trim.h"
#include "format/load_trace.h"

namespace cltrace {
namespace {

// Appends `src`'s events to `dst`, ids re-interned into `dst`'s tables and positions shifted
// past everything already there.
void AppendShifted(const format::LoadedTrace& src, format::LoadedTrace* dst, uint64_t* shift) {
  uint64_t span = 0;
  for (const format::Event& e : src.events) {
    format::Event c = e;
    cli::RemapIds(
        &c, [&](uint64_t id) { return dst->handles.Intern(src.handles.Token(id)); },
        [&](uint64_t id) { return dst->strings.Intern(src.strings.Token(id)); });
    if (c.content != 0) c.content = dst->contents.Intern(src.contents.Token(e.content));
    c.seq += *shift;
    if (c.end != 0) c.end += *shift;
    if (c.parent != 0) c.parent += *shift;
    span = std::max({span, e.seq, e.end});
    dst->events.push_back(std::move(c));
  }
  *shift += span;
}

format::LoadedTrace MakePlantedTrace(uint64_t calls) {
  format::LoadedTrace trace;
  {
    format::LoadedTrace* t = &trace;
    const std::string dir = absl::StrCat(CLTRACE_SOURCE_DIR, "/corpus/traces/");
    absl::StatusOr<format::LoadedTrace> clean = format::ReadAllSorted(dir + "smallcl.cltrace");
    absl::StatusOr<format::LoadedTrace> bug = format::ReadAllSorted(dir + "smallcl_R22.cltrace");
    if (!clean.ok() || !bug.ok() || clean->events.empty()) return trace;
    uint64_t shift = 0;
    const uint64_t copies = calls / clean->events.size();
    for (uint64_t i = 0; i < copies; ++i) {
      if (i == copies / 2) AppendShifted(*bug, t, &shift);
      AppendShifted(*clean, t, &shift);
    }
  }
  return trace;
}

void BM_ReduceOneMillionCallsToR22(benchmark::State& state) {
  const format::LoadedTrace trace = MakePlantedTrace(static_cast<uint64_t>(state.range(0)));
  uint64_t after = 0;
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<cli::TraceCutter>> cutter = cli::TraceCutter::Build(&trace);
    if (!cutter.ok()) {
      state.SkipWithError(std::string(cutter.status().message()).c_str());
      return;
    }
    absl::StatusOr<cli::ReduceResult> r = cli::ReduceToRule(**cutter, rules::Rule::kR22);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    after = r->calls_after;
    // To look at what it kept: CLTRACE_BENCH_REDUCE_OUT=FILE.
    if (const char* out = getenv("CLTRACE_BENCH_REDUCE_OUT"); out != nullptr)
      if (absl::Status w = cli::WriteCut(trace, r->events, {}, out, "cltrace reduce"); !w.ok())
        state.SkipWithError(std::string(w.message()).c_str());
    state.counters["tests"] = static_cast<double>(r->tests);
  }
  state.counters["calls_before"] = static_cast<double>(trace.events.size());
  state.counters["calls_after"] = static_cast<double>(after);
}
BENCHMARK(BM_ReduceOneMillionCallsToR22)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
}  // namespace cltrace
