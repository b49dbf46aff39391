// present: frames of draws, clears, updates, one deferred-context command list with a dynamic
// vertex buffer renamed by Map(WRITE_DISCARD) (R66), a mid-frame Flush and a Present, all on
// one thread so the run is deterministic: the device's kernel (gpu::KernelStack) sees the same
// kernel-layer calls in the same virtual time every run, and the content digests after each
// frame are the same (tests compare two runs).
#include <cstring>
#include <vector>

#include "corpus/workloads/scenarios.h"
#include "corpus/workloads/util.h"
#include "wddm/kernel_stack.h"

namespace cltrace::workloads {

using runtime::CommandList;
using runtime::Device;
using runtime::DeviceContext;
using runtime::Resource;
using runtime::Shader;
using runtime::Stage;
using runtime::View;
using runtime::ViewKind;

namespace {

struct Assets {
  Shader* vs = nullptr;
  Shader* ps = nullptr;
  Resource* backbuffer = nullptr;
  View* rtv = nullptr;
  Resource* texture = nullptr;
  View* srv = nullptr;
  Resource* vb = nullptr;
  Resource* dynamic_vb = nullptr;
  Resource* cb = nullptr;

  ~Assets() {
    for (runtime::Object* o :
         std::vector<runtime::Object*>{vs, ps, rtv, backbuffer, srv, texture, vb, dynamic_vb, cb}) {
      if (o != nullptr) o->Release();
    }
  }
};

absl::Status CreateAssets(Device* d, Assets* a) {
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(a->vs, MakeShader(d, Stage::kVS, 16));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(a->ps, MakeShader(d, Stage::kPS, 20));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(a->backbuffer,
                                    MakeTexture(d, 64, 64, D3D10_DDI_BIND_RENDER_TARGET, 0));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(a->rtv, MakeView(d, ViewKind::kRenderTarget, a->backbuffer));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(a->texture,
                                    MakeTexture(d, 16, 16, D3D10_DDI_BIND_SHADER_RESOURCE, 0));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(a->srv, MakeView(d, ViewKind::kShaderResource, a->texture));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(
      a->vb, MakeBuffer(d, 1024, D3D10_DDI_USAGE_DEFAULT, D3D10_DDI_BIND_VERTEX_BUFFER));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(
      a->dynamic_vb, MakeBuffer(d, 512, D3D10_DDI_USAGE_DYNAMIC, D3D10_DDI_BIND_VERTEX_BUFFER));
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(
      a->cb, MakeBuffer(d, 256, D3D10_DDI_USAGE_DEFAULT, D3D10_DDI_BIND_CONSTANT_BUFFER));
  return absl::OkStatus();
}

void BindPass(DeviceContext* c, const Assets& a, Resource* vb) {
  const uint32_t stride = 16, offset = 0;
  c->SetShader(Stage::kVS, a.vs);
  c->SetShader(Stage::kPS, a.ps);
  c->OMSetRenderTargets(1, &a.rtv, nullptr);
  c->IASetVertexBuffers(0, 1, &vb, &stride, &offset);
  c->SetConstantBuffers(Stage::kVS, 0, 1, &a.cb);
  c->SetShaderResources(Stage::kPS, 0, 1, &a.srv);
}

}  // namespace

absl::StatusOr<PresentRun> RunPresentFrames(Device* device, const ScenarioOptions& o) {
  Assets a;
  if (absl::Status s = CreateAssets(device, &a); !s.ok()) return s;
  DeviceContext* ic = device->GetImmediateContext();
  DeviceContext* dc = nullptr;
  if (HRESULT hr = device->CreateDeferredContext(0, &dc); hr != S_OK) {
    return Failed("CreateDeferredContext", hr);
  }
  PresentRun run;
  for (int f = 0; f < o.frames; ++f) {
    const float color[4] = {0.1f * static_cast<float>(f % 10), 0.5f, 0.25f, 1.0f};
    ic->ClearRenderTargetView(a.rtv, color);
    uint32_t constants[64] = {static_cast<uint32_t>(f), static_cast<uint32_t>(o.seed)};
    ic->UpdateSubresource(a.cb, 0, nullptr, constants, sizeof(constants), 0);
    BindPass(ic, a, a.vb);
    ic->Draw(3, 0);
    ic->Draw(6, 3);

    // The deferred context: new vertices through a discard (a fresh alias per recording).
    runtime::MappedSubresource m;
    if (HRESULT hr = dc->Map(a.dynamic_vb, 0, D3D10_DDI_MAP_WRITE_DISCARD, 0, &m); hr != S_OK) {
      dc->Release();
      return Failed("Map(WRITE_DISCARD)", hr);
    }
    std::vector<uint8_t> vertices(16);
    for (size_t i = 0; i < vertices.size(); ++i) {
      vertices[i] = static_cast<uint8_t>(f * 31 + i + o.seed);
    }
    std::memcpy(m.data, vertices.data(), vertices.size());
    dc->Unmap(a.dynamic_vb, 0);
    BindPass(dc, a, a.dynamic_vb);
    dc->Draw(3, 0);
    CommandList* cl = nullptr;
    if (HRESULT hr = dc->FinishCommandList(FALSE, &cl); hr != S_OK) {
      dc->Release();
      return Failed("FinishCommandList", hr);
    }
    ic->ExecuteCommandList(cl, FALSE);
    cl->Release();
    ic->Flush();  // mid-frame submission

    // After the execute the IC is in the cleared state: bind again for the last pass.
    BindPass(ic, a, a.dynamic_vb);
    ic->Draw(3, 0);
    ic->ClearState();
    if (HRESULT hr = device->Present(a.backbuffer); hr != S_OK) {
      dc->Release();
      return Failed("Present", hr);
    }
    gpu::KernelStack* kernel = device->GpuKernel();
    if (absl::Status s = kernel->kernel().WaitIdle(); !s.ok()) {
      dc->Release();
      return s;
    }
    run.frame_digests.push_back(kernel->kernel().CombinedDigest());
  }
  dc->Release();
  ic->Flush();
  return run;
}

absl::Status RunPresent(Device* device, const ScenarioOptions& options) {
  return RunPresentFrames(device, options).status();
}

}  // namespace cltrace::workloads
