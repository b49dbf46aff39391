// `cltrace check` throughput on the small-command-list workload (target: >= 10 M calls/s on
// one core). The event stream is synthetic but follows ddi-spec §4 exactly (the checker
// reports nothing on it): per deferred context and cycle, the DC thread opens a local
// resource, binds it, draws, then finishes (RecycleCommandList of the list released in the
// previous cycle, RecycleCreateCommandList into it, local close, RecycleCreateDeferredContext);
// the IC thread executes the list and releases it (RecycleDestroyCommandList).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "check/checker.h"
#include "ddi/catalog.h"
#include "format/event.h"

namespace {

using cltrace::format::CallId;
using cltrace::format::Event;

class Generator {
 public:
  Event& Add(const char* fn, uint32_t tid,
             std::initializer_list<std::pair<const char*, uint64_t>> args, int64_t ret = 0) {
    const cltrace::format::CallInfo* ci = cltrace::format::FindCall(fn);
    Event e;
    e.call = cltrace::format::IdOf(*ci);
    e.tid = tid;
    e.seq = pos_++;
    e.end = pos_++;
    e.ret = ret;
    auto fields = cltrace::format::Fields(*ci);
    e.args.assign(fields.size(), 0);
    for (size_t i = 0; i < fields.size(); ++i)
      if (fields[i].kind == cltrace::format::FieldKind::kPresent) e.args[i] = 1;
    for (const auto& [name, value] : args) e.args[cltrace::format::FieldIndex(*ci, name)] = value;
    events_.push_back(std::move(e));
    return events_.back();
  }
  uint64_t H(const std::string& token) { return handles_.Intern(token); }

  // ~`calls` events: `dcs` deferred contexts making small command lists round-robin.
  void Build(size_t calls, int dcs) {
    const uint64_t ic = H("ic"), rtic = H("rtic"), vb = H("vb");
    Add("CreateDevice", 1, {{"hDrvDevice", ic}, {"hRTCoreLayer", rtic}});
    Add("CheckDeferredContextHandleSizes", 1, {{"hDevice", ic}, {"pHSizes", 0}, {"pHSizesOut", 2}});
    Add("CreateResource", 1, {{"hDevice", ic}, {"hResource", vb}, {"hRTResource", H("rt_vb")}});
    Add("CalcDeferredContextHandleSize", 1, {{"hDevice", ic}, {"HandleType", 0}}, 64);
    std::vector<uint64_t> dc(dcs), lvb(dcs), cl(dcs);
    std::vector<bool> made(dcs, false);
    for (int d = 0; d < dcs; ++d) {
      dc[d] = H(absl::StrCat("dc", d));
      lvb[d] = H(absl::StrCat("lvb", d));
      cl[d] = H(absl::StrCat("cl", d));
      Add("CreateDeferredContext", 1,
          {{"hDevice", ic}, {"hDrvContext", dc[d]}, {"hRTCoreLayer", H(absl::StrCat("rtdc", d))}});
    }
    const cltrace::format::CallInfo* vbs = cltrace::format::FindCall("IaSetVertexBuffers");
    const int buffers = cltrace::format::FieldIndex(*vbs, "phBuffers");
    while (events_.size() < calls) {
      for (int d = 0; d < dcs; ++d) {
        const uint32_t tid = 2 + d;
        Event& open = Add("CreateResource", tid,
                          {{"hDevice", dc[d]}, {"hResource", lvb[d]}, {"hRTResource", vb}});
        open.args[cltrace::format::FieldIndex(*cltrace::format::GetCall(open.call),
                                              "pCreateResource")] = 0;
        Event& bind = Add("IaSetVertexBuffers", tid,
                          {{"hDevice", dc[d]}, {"StartBuffer", 0}, {"NumBuffers", 1}});
        bind.args[buffers] = 2;  // one element
        bind.args.push_back(lvb[d]);
        Add("Draw", tid, {{"hDevice", dc[d]}, {"VertexCount", 3}});
        Add("Draw", tid, {{"hDevice", dc[d]}, {"VertexCount", 3}});
        if (made[d]) {
          Add("RecycleCommandList", tid, {{"hDevice", dc[d]}, {"hCommandList", cl[d]}});
          Add("RecycleCreateCommandList", tid,
              {{"hDevice", ic},
               {"hDeferredContext", dc[d]},
               {"hCommandList", cl[d]},
               {"hRTCommandList", cl[d]}});
        } else {
          Add("CalcPrivateCommandListSize", tid, {{"hDevice", ic}, {"hDeferredContext", dc[d]}},
              256);
          Add("CreateCommandList", tid,
              {{"hDevice", ic},
               {"hDeferredContext", dc[d]},
               {"hCommandList", cl[d]},
               {"hRTCommandList", cl[d]}});
          Add("CalcDeferredContextHandleSize", tid, {{"hDevice", ic}, {"HandleType", 11}}, 16);
          made[d] = true;
        }
        Add("DestroyResource", tid, {{"hDevice", dc[d]}, {"hResource", lvb[d]}});
        Add("RecycleCreateDeferredContext", tid, {{"hDevice", ic}, {"hDrvContext", dc[d]}});
        Add("CommandListExecute", 1, {{"hDevice", ic}, {"hCommandList", cl[d]}});
        Add("RecycleDestroyCommandList", 1, {{"hDevice", ic}, {"hCommandList", cl[d]}});
      }
    }
  }

  std::vector<Event> events_;
  cltrace::format::TokenTable handles_;

 private:
  uint64_t pos_ = 1;
};

const Generator& Workload() {
  static const Generator* g = [] {
    auto* gen = new Generator();
    gen->Build(1000000, 4);
    return gen;
  }();
  return *g;
}

void BM_CheckSmallCommandLists(benchmark::State& state) {
  const Generator& g = Workload();
  uint64_t violations = 0;
  for (auto _ : state) {
    auto r = cltrace::check::Check(g.events_, g.handles_);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    violations = r->violations.size() + r->warnings.size();
    benchmark::DoNotOptimize(r->calls);
  }
  state.counters["findings"] = static_cast<double>(violations);  // must be 0
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * g.events_.size()));
}
BENCHMARK(BM_CheckSmallCommandLists)->Unit(benchmark::kMillisecond);

}  // namespace
