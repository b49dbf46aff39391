#include "inspector/internal/synthetic_trace.h"

#include <initializer_list>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ddi/catalog.h"
#include "format/status_macros.h"
#include "format/trace_writer.h"

namespace cltrace::inspector::testing {
namespace {

using format::CallInfo;
using format::Event;

class Builder {
 public:
  explicit Builder(SyntheticTrace* t) : t_(t) {}

  Event& Add(const char* fn, uint32_t tid,
             std::initializer_list<std::pair<const char*, uint64_t>> args, int64_t ret = 0) {
    const CallInfo* ci = format::FindCall(fn);
    Event e;
    e.call = format::IdOf(*ci);
    e.tid = tid;
    e.seq = pos_++;
    e.end = pos_++;
    // Calls 100-300 ns apart with jitter, like the format benchmark's stream (a perfectly
    // regular clock would compress unrealistically well).
    rng_ = rng_ * 6364136223846793005ull + 1442695040888963407ull;
    ts_ += 100 + static_cast<int64_t>((rng_ >> 33) % 201);
    e.timestamp_ns = ts_;
    e.ret = ret;
    absl::Span<const format::FieldInfo> fields = format::Fields(*ci);
    e.args.assign(fields.size(), 0);
    for (size_t i = 0; i < fields.size(); ++i)
      if (fields[i].kind == format::FieldKind::kPresent) e.args[i] = 1;
    for (const auto& [name, value] : args) e.args[format::FieldIndex(*ci, name)] = value;
    t_->events.push_back(std::move(e));
    return t_->events.back();
  }
  uint64_t H(const std::string& token) { return t_->handles.Intern(token); }

 private:
  SyntheticTrace* t_;
  uint64_t pos_ = 1;
  uint64_t rng_ = 2024;
  int64_t ts_ = 0;
};

}  // namespace

SyntheticTrace MakeSmallCommandListTrace(const SyntheticOptions& o) {
  SyntheticTrace t;
  t.events.reserve(o.calls + 16 * static_cast<size_t>(o.dcs));
  Builder b(&t);
  const uint64_t ic = b.H("ic"), rtic = b.H("rtic"), vb = b.H("vb");
  b.Add("CreateDevice", 1, {{"hDrvDevice", ic}, {"hRTCoreLayer", rtic}});
  b.Add("CheckDeferredContextHandleSizes", 1, {{"hDevice", ic}, {"pHSizes", 0}, {"pHSizesOut", 2}});
  b.Add("CreateResource", 1, {{"hDevice", ic}, {"hResource", vb}, {"hRTResource", b.H("rt_vb")}});
  b.Add("CalcDeferredContextHandleSize", 1, {{"hDevice", ic}, {"HandleType", 0}}, 64);
  const int n = o.dcs;
  std::vector<uint64_t> dc(n), lvb(n), cl(n);
  std::vector<bool> made(n, false);
  for (int d = 0; d < n; ++d) {
    dc[d] = b.H(absl::StrCat("dc", d));
    lvb[d] = b.H(absl::StrCat("lvb", d));
    cl[d] = b.H(absl::StrCat("cl", d));
    b.Add(
        "CreateDeferredContext", 1,
        {{"hDevice", ic}, {"hDrvContext", dc[d]}, {"hRTCoreLayer", b.H(absl::StrCat("rtdc", d))}});
  }
  const CallInfo* create_resource = format::FindCall("CreateResource");
  const int p_create = format::FieldIndex(*create_resource, "pCreateResource");
  const CallInfo* set_vbs = format::FindCall("IaSetVertexBuffers");
  const int buffers = format::FieldIndex(*set_vbs, "phBuffers");
  int cycle = 0;
  while (t.events.size() < o.calls) {
    ++cycle;
    for (int d = 0; d < n; ++d) {
      const uint32_t tid = 2 + static_cast<uint32_t>(d);
      const bool bad = d == 0 && o.violation_cycle > 0;
      Event& open = b.Add("CreateResource", tid,
                          {{"hDevice", dc[d]}, {"hResource", lvb[d]}, {"hRTResource", vb}});
      open.args[p_create] = 0;  // DC-local opens pass NULL arguments (§3.3)
      Event& bind = b.Add("IaSetVertexBuffers", tid,
                          {{"hDevice", dc[d]}, {"StartBuffer", 0}, {"NumBuffers", 1}});
      bind.args[buffers] = 2;  // one element
      bind.args.push_back(lvb[d]);
      b.Add("Draw", tid, {{"hDevice", dc[d]}, {"VertexCount", 3}});
      b.Add("Draw", tid, {{"hDevice", dc[d]}, {"VertexCount", 36}});
      if (made[d]) {
        if (bad && cycle == o.violation_cycle + 1) {
          // R45: no RecycleCommandList first — the RD -> V shortcut the spec forbids.
          t.violation_recycle_create = b.Add("RecycleCreateCommandList", tid,
                                             {{"hDevice", ic},
                                              {"hDeferredContext", dc[d]},
                                              {"hCommandList", cl[d]},
                                              {"hRTCommandList", cl[d]}})
                                           .seq;
        } else {
          b.Add("RecycleCommandList", tid, {{"hDevice", dc[d]}, {"hCommandList", cl[d]}});
          b.Add("RecycleCreateCommandList", tid,
                {{"hDevice", ic},
                 {"hDeferredContext", dc[d]},
                 {"hCommandList", cl[d]},
                 {"hRTCommandList", cl[d]}});
        }
      } else {
        b.Add("CalcPrivateCommandListSize", tid, {{"hDevice", ic}, {"hDeferredContext", dc[d]}},
              256);
        uint64_t s = b.Add("CreateCommandList", tid,
                           {{"hDevice", ic},
                            {"hDeferredContext", dc[d]},
                            {"hCommandList", cl[d]},
                            {"hRTCommandList", cl[d]}})
                         .seq;
        if (d == 0) t.first_create_cl0 = s;
        b.Add("CalcDeferredContextHandleSize", tid, {{"hDevice", ic}, {"HandleType", 11}}, 16);
        made[d] = true;
      }
      b.Add("DestroyResource", tid, {{"hDevice", dc[d]}, {"hResource", lvb[d]}});
      b.Add("RecycleCreateDeferredContext", tid, {{"hDevice", ic}, {"hDrvContext", dc[d]}});
      b.Add("CommandListExecute", 1, {{"hDevice", ic}, {"hCommandList", cl[d]}});
      uint64_t rd =
          b.Add("RecycleDestroyCommandList", 1, {{"hDevice", ic}, {"hCommandList", cl[d]}}).seq;
      if (d == 0 && t.first_recycle_destroy_cl0 == 0) t.first_recycle_destroy_cl0 = rd;
      if (bad && cycle == o.violation_cycle) {
        // R40: executing a list the application already released.
        t.violation_execute =
            b.Add("CommandListExecute", 1, {{"hDevice", ic}, {"hCommandList", cl[d]}}).seq;
      }
    }
  }
  return t;
}

absl::Status WriteCltrace(const SyntheticTrace& t, const std::string& path, size_t chunk_bytes) {
  format::TraceWriter::Options options;
  options.background = false;
  options.chunk_bytes = chunk_bytes;
  CLTRACE_ASSIGN_OR_RETURN(std::unique_ptr<format::TraceWriter> w,
                           format::TraceWriter::Open(path, options));
  // The writer hands out its own ids; map ours (same order of first use keeps them equal,
  // but nothing relies on that).
  std::vector<uint64_t> ids(t.handles.size(), 0);
  for (uint64_t i = 1; i < t.handles.size(); ++i) ids[i] = w->InternHandleToken(t.handles.Token(i));
  std::vector<std::vector<uint16_t>> handle_fields(format::Calls().size());
  for (size_t c = 1; c < format::Calls().size(); ++c) {
    absl::Span<const format::FieldInfo> f = format::Fields(format::Calls()[c]);
    for (size_t i = 0; i < f.size(); ++i)
      if (f[i].kind == format::FieldKind::kHandle)
        handle_fields[c].push_back(static_cast<uint16_t>(i));
  }
  const size_t vbs = static_cast<size_t>(format::CallId::kIaSetVertexBuffers);
  Event e;
  for (const Event& src : t.events) {
    e = src;
    for (uint16_t f : handle_fields[static_cast<size_t>(e.call)]) e.args[f] = ids[e.args[f]];
    // The only array of handles this generator writes: IaSetVertexBuffers' one buffer.
    if (static_cast<size_t>(e.call) == vbs) e.args.back() = ids[e.args.back()];
    CLTRACE_RETURN_IF_ERROR(w->Append(e));
  }
  return w->Close();
}

}  // namespace cltrace::inspector::testing
