// scene: several deferred contexts record a frame's draws each (full pipeline bindings, so
// every object is opened as a context-local handle on first bind; dynamic constant buffers
// mapped with discard per draw; an occlusion query per context, left begun every other frame
// so FinishCommandList has to end it), one context also replays a shared command list
// (nested execution) and one finishes with RestoreDeferredContextState. The immediate context
// executes the lists in order, draws a composite pass on the cleared state, creates and
// destroys a transient buffer with the synchronous-destruction idioms of seed 002, and
// presents.
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "corpus/workloads/scenarios.h"
#include "corpus/workloads/util.h"

namespace cltrace::workloads {

using runtime::CommandList;
using runtime::Device;
using runtime::DeviceContext;
using runtime::Query;
using runtime::Resource;
using runtime::Stage;
using runtime::View;
using runtime::ViewKind;

namespace {

constexpr int kFramesInFlight = 2;

struct Assets {
  runtime::Shader* vs = nullptr;
  runtime::Shader* ps = nullptr;
  runtime::InputLayout* il = nullptr;
  runtime::BlendState* blend = nullptr;
  runtime::DepthStencilState* dss = nullptr;
  runtime::RasterizerState* rs = nullptr;
  runtime::SamplerState* sampler = nullptr;
  Resource* backbuffer = nullptr;
  View* rtv = nullptr;
  Resource* depth = nullptr;
  View* dsv = nullptr;
  Resource* texture = nullptr;
  View* srv = nullptr;
  Resource* vb = nullptr;
  Resource* ib = nullptr;
  std::vector<Resource*> cbs;   // one dynamic constant buffer per deferred context
  std::vector<Query*> queries;  // one occlusion query per deferred context
  Query* event = nullptr;
  CommandList* shared = nullptr;  // executed nested by deferred context 0

  void Release() {
    for (runtime::Object* o : std::initializer_list<runtime::Object*>{
             vs, ps, il, blend, dss, rs, sampler, rtv, backbuffer, dsv, depth, srv, texture, vb, ib,
             event, shared}) {
      if (o != nullptr) o->Release();
    }
    for (Resource* r : cbs) r->Release();
    for (Query* q : queries) q->Release();
  }
};

absl::Status CreateAssets(Device* d, int threads, Assets* a) {
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(a->vs, MakeShader(d, Stage::kVS, 24));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(a->ps, MakeShader(d, Stage::kPS, 32));
  D3D10DDIARG_INPUT_ELEMENT_DESC elements[2] = {{0, 0, 6, 0, 0, 0}, {0, 12, 16, 0, 0, 1}};
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(
      HrStatus("CreateInputLayout", d->CreateInputLayout(elements, 2, &a->il)));
  D3D10_1_DDI_BLEND_DESC blend{};
  blend.RenderTarget[0].RenderTargetWriteMask = 0xf;
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(
      HrStatus("CreateBlendState", d->CreateBlendState(blend, &a->blend)));
  D3D10_DDI_DEPTH_STENCIL_DESC dss{};
  dss.DepthEnable = 1;
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(
      HrStatus("CreateDepthStencilState", d->CreateDepthStencilState(dss, &a->dss)));
  D3D10_DDI_RASTERIZER_DESC rs{};
  rs.DepthClipEnable = 1;
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(
      HrStatus("CreateRasterizerState", d->CreateRasterizerState(rs, &a->rs)));
  D3D10_DDI_SAMPLER_DESC sampler{};
  sampler.MaxLOD = 1000.0f;
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(
      HrStatus("CreateSamplerState", d->CreateSamplerState(sampler, &a->sampler)));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(
      a->backbuffer, MakeTexture(d, 128, 128, D3D10_DDI_BIND_RENDER_TARGET, 0, /*primary=*/true));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(a->rtv, MakeView(d, ViewKind::kRenderTarget, a->backbuffer));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(a->depth,
                                    MakeTexture(d, 128, 128, D3D10_DDI_BIND_DEPTH_STENCIL, 0));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(a->dsv, MakeView(d, ViewKind::kDepthStencil, a->depth));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(a->texture,
                                    MakeTexture(d, 32, 32, D3D10_DDI_BIND_SHADER_RESOURCE, 0));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(a->srv, MakeView(d, ViewKind::kShaderResource, a->texture));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(
      a->vb, MakeBuffer(d, 4096, D3D10_DDI_USAGE_DEFAULT, D3D10_DDI_BIND_VERTEX_BUFFER));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(
      a->ib, MakeBuffer(d, 1024, D3D10_DDI_USAGE_DEFAULT, D3D10_DDI_BIND_INDEX_BUFFER));
  for (int t = 0; t < threads; ++t) {
    Resource* cb = nullptr;
    CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(
        cb, MakeBuffer(d, 256, D3D10_DDI_USAGE_DYNAMIC, D3D10_DDI_BIND_CONSTANT_BUFFER));
    a->cbs.push_back(cb);
    Query* q = nullptr;
    CLTRACE_WORKLOAD_RETURN_IF_ERROR(
        HrStatus("CreateQuery", d->CreateQuery(D3D10DDI_QUERY_OCCLUSION, &q)));
    a->queries.push_back(q);
  }
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(
      HrStatus("CreateQuery", d->CreateQuery(D3D10DDI_QUERY_EVENT, &a->event)));
  // A list recorded once and replayed inside other lists (nested execution).
  DeviceContext* setup = nullptr;
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(
      HrStatus("CreateDeferredContext", d->CreateDeferredContext(0, &setup)));
  const float clear[4] = {0.1f, 0.2f, 0.3f, 1.0f};
  setup->ClearRenderTargetView(a->rtv, clear);
  setup->ClearDepthStencilView(a->dsv, D3D10_DDI_CLEAR_DEPTH, 1.0f, 0);
  HRESULT hr = setup->FinishCommandList(FALSE, &a->shared);
  setup->Release();
  if (hr != S_OK) a->shared = nullptr;  // an injected fault: frames go without it
  return absl::OkStatus();
}

void BindPipeline(DeviceContext* dc, const Assets& a, Resource* cb) {
  const uint32_t stride = 24, offset = 0;
  dc->IASetInputLayout(a.il);
  dc->IASetVertexBuffers(0, 1, &a.vb, &stride, &offset);
  dc->IASetIndexBuffer(a.ib, 57 /* R16_UINT */, 0);
  dc->IASetPrimitiveTopology(D3D10_DDI_PRIMITIVE_TOPOLOGY_TRIANGLELIST);
  dc->SetShader(Stage::kVS, a.vs);
  dc->SetShader(Stage::kPS, a.ps);
  dc->SetConstantBuffers(Stage::kVS, 0, 1, &cb);
  dc->SetShaderResources(Stage::kPS, 0, 1, &a.srv);
  dc->SetSamplers(Stage::kPS, 0, 1, &a.sampler);
  dc->OMSetRenderTargets(1, &a.rtv, a.dsv);
  const float factor[4] = {1, 1, 1, 1};
  dc->OMSetBlendState(a.blend, factor, 0xffffffffu);
  dc->OMSetDepthStencilState(a.dss, 0);
  dc->RSSetState(a.rs);
  D3D10_DDI_VIEWPORT vp{0, 0, 128, 128, 0, 1};
  dc->RSSetViewports(1, &vp);
}

// std primitives (not absl::Mutex) so ThreadSanitizer sees the synchronization.
struct FrameSlots {
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::vector<CommandList*>> lists;
  std::vector<int> ready;
  int frames_done = 0;
  int created = 0;   // lockstep: deferred contexts created so far (in thread order)
  int released = 0;  // lockstep: deferred contexts released so far (in thread order)

  template <typename Pred>
  void WaitFor(Pred pred) {
    std::unique_lock<std::mutex> lock(mu);
    changed.wait(lock, pred);
  }
  // Sets *field (guarded by mu) and wakes the waiters.
  void Set(int* field, int value) {
    std::lock_guard<std::mutex> lock(mu);
    *field = value;
    changed.notify_all();
  }
};

// Deferred context `t` records its list of frame `f`; nullptr when the list was lost.
CommandList* RecordFrame(DeviceContext* dc, const Assets& a, int t, int f, std::mt19937& rng,
                         absl::Status* result) {
  if (t == 0 && a.shared != nullptr && f % 2 == 0) {
    dc->ExecuteCommandList(a.shared, FALSE);  // nested: the DC state is cleared after
  }
  BindPipeline(dc, a, a.cbs[t]);
  dc->Begin(a.queries[t]);
  int draws = 4 + static_cast<int>(rng() % 5);
  for (int d = 0; d < draws; ++d) {
    runtime::MappedSubresource m;
    if (dc->Map(a.cbs[t], 0, D3D10_DDI_MAP_WRITE_DISCARD, 0, &m) == S_OK) {
      static_cast<float*>(m.data)[0] = static_cast<float>(d);
      dc->Unmap(a.cbs[t], 0);
    }
    dc->DrawIndexed(36, 0, 0);
  }
  if (f % 2 == 0) dc->End(a.queries[t]);  // odd frames: FinishCommandList ends it
  BOOL restore = (t == 1 && f % 3 == 0) ? TRUE : FALSE;
  CommandList* cl = nullptr;
  HRESULT fr = dc->FinishCommandList(restore, &cl);
  // Out of memory (injected) and device removal lose the list, nothing else may fail.
  if (fr != S_OK && fr != static_cast<HRESULT>(E_OUTOFMEMORY) &&
      fr != static_cast<HRESULT>(DXGI_ERROR_DEVICE_REMOVED)) {
    *result = Failed("FinishCommandList", fr);
  }
  return fr == S_OK ? cl : nullptr;
}

// The thread of deferred context `t`: creates it, records every frame into slots, releases it.
void RunContext(Device* device, const ScenarioOptions& o, const Assets& a, int t, int threads,
                FrameSlots& slots, absl::Status* result) {
  std::mt19937 rng(static_cast<uint32_t>(o.seed * 7919 + t));
  // Lockstep: contexts are created, frames recorded and contexts released one thread at
  // a time in thread order, and a frame is recorded only after the immediate context
  // finished the previous one.
  if (o.lockstep) slots.WaitFor([&] { return slots.created == t; });
  DeviceContext* dc = nullptr;
  HRESULT hr = device->CreateDeferredContext(0, &dc);
  if (o.lockstep) slots.Set(&slots.created, t + 1);
  for (int f = 0; f < o.frames; ++f) {
    slots.WaitFor([&] {
      return o.lockstep ? slots.created == threads && slots.frames_done >= f && slots.ready[f] == t
                        : slots.frames_done >= f - kFramesInFlight;
    });
    CommandList* cl = nullptr;
    if (hr == S_OK) {
      cl = RecordFrame(dc, a, t, f, rng, result);
    } else {
      *result = Failed("CreateDeferredContext", hr);
    }
    std::lock_guard<std::mutex> lock(slots.mu);
    slots.lists[f][t] = cl;
    ++slots.ready[f];
    slots.changed.notify_all();
  }
  if (o.lockstep) {
    slots.WaitFor([&] { return slots.frames_done == o.frames && slots.released == t; });
  }
  if (dc != nullptr) dc->Release();
  if (o.lockstep) slots.Set(&slots.released, t + 1);
}

// The immediate context's part of frame `f`: executes the deferred contexts' lists, draws the
// composite pass, makes and destroys a transient buffer, and presents.
void FinishFrame(Device* device, DeviceContext* ic, const ScenarioOptions& o, const Assets& a,
                 int f, const std::vector<CommandList*>& lists) {
  // Misuse R61 needs the application to hold a query begun that a list manipulates.
  bool r61 = o.misuse == runtime::Misuse::kR61;
  if (r61) ic->Begin(a.queries[0]);
  for (CommandList* cl : lists) {
    if (cl == nullptr) continue;
    ic->ExecuteCommandList(cl, FALSE);
    cl->Release();
  }
  if (r61) ic->End(a.queries[0]);
  // Composite pass on the cleared state: only what it binds may be visible to the draw.
  ic->SetShader(Stage::kVS, a.vs);
  ic->SetShader(Stage::kPS, a.ps);
  ic->OMSetRenderTargets(1, &a.rtv, nullptr);
  ic->Draw(3, 0);
  // A transient object destroyed synchronously (seed 002 idioms).
  auto transient = MakeBuffer(device, 256, D3D10_DDI_USAGE_DEFAULT, D3D10_DDI_BIND_CONSTANT_BUFFER);
  if (transient.ok()) {
    float data[64] = {static_cast<float>(f)};
    ic->UpdateSubresource(*transient, 0, nullptr, data, sizeof(data), 0);
    ic->SetConstantBuffers(Stage::kPS, 0, 1, &*transient);
    ic->Draw(3, 0);
    (*transient)->Release();
    ic->ClearState();
    ic->Flush();
    if (f % 4 == 3) {
      ic->End(a.event);
      uint32_t done = 0;
      while (ic->GetData(a.event, &done, sizeof(done), 0) == S_FALSE) {
      }
      ic->Flush();
    }
  }
  device->Present(a.backbuffer);
}

}  // namespace

absl::Status RunScene(Device* device, const ScenarioOptions& o) {
  const int threads = o.threads < 1 ? 1 : o.threads;
  Assets a;
  if (absl::Status s = CreateAssets(device, threads, &a); !s.ok()) {
    a.Release();
    return s;
  }
  DeviceContext* ic = device->GetImmediateContext();
  FrameSlots slots;
  {
    std::lock_guard<std::mutex> lock(slots.mu);
    slots.lists.assign(o.frames, std::vector<CommandList*>(threads, nullptr));
    slots.ready.assign(o.frames, 0);
  }
  std::vector<absl::Status> results(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] { RunContext(device, o, a, t, threads, slots, &results[t]); });
  }
  for (int f = 0; f < o.frames; ++f) {
    std::vector<CommandList*> lists;
    {
      std::unique_lock<std::mutex> lock(slots.mu);
      slots.changed.wait(lock, [&] { return slots.ready[f] == threads; });
      lists = slots.lists[f];
    }
    FinishFrame(device, ic, o, a, f, lists);
    slots.Set(&slots.frames_done, f + 1);
  }
  for (std::thread& w : workers) w.join();
  // Everything is released after the last Flush: DestroyDevice finishes the destruction (R70).
  ic->ClearState();
  a.Release();
  for (const absl::Status& s : results) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace cltrace::workloads
