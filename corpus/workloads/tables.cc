// tables: the rarely used slots of the full D3D11.0 tables (issue #14), as an application makes
// them reach the driver: capability checks (formats, multisample quality levels, counters), a
// geometry shader with stream output, shaders bound with class instances, a resolve, a
// structure count, and the DXGI base functions beside Present (gamma caps, display mode,
// eviction priority, residency, a swap-chain rotation, a blt). Single-threaded, so the run is
// the same every time; one deferred-context command list uses the context-side ones too.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "corpus/workloads/scenarios.h"
#include "corpus/workloads/util.h"

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

// Releases what it holds at scope exit.
struct Held {
  std::vector<runtime::Object*> objects;
  template <typename T>
  T* Keep(T* o) {
    objects.push_back(o);
    return o;
  }
  ~Held() {
    for (auto it = objects.rbegin(); it != objects.rend(); ++it) (*it)->Release();
  }
};

absl::Status CheckCaps(Device* d) {
  // What an application asks before it picks its formats.
  for (DXGI_FORMAT f :
       {DXGI_FORMAT_R8G8B8A8_UNORM, DXGI_FORMAT_B8G8R8A8_UNORM_SRGB, DXGI_FORMAT_R32G32B32_FLOAT,
        DXGI_FORMAT_D24_UNORM_S8_UINT, DXGI_FORMAT_BC1_UNORM, DXGI_FORMAT_R8G8B8A8_TYPELESS}) {
    uint32_t support = 0;
    CLTRACE_WORKLOAD_RETURN_IF_ERROR(
        HrStatus("CheckFormatSupport", d->CheckFormatSupport(f, &support)));
    for (uint32_t samples : {1u, 4u}) {
      uint32_t levels = 0;
      CLTRACE_WORKLOAD_RETURN_IF_ERROR(HrStatus(
          "CheckMultisampleQualityLevels", d->CheckMultisampleQualityLevels(f, samples, &levels)));
    }
  }
  D3D10DDI_COUNTER_INFO info{};
  d->CheckCounterInfo(&info);
  // The first device-dependent counter: the runtime asks the driver only if it has one.
  D3D10DDI_COUNTER_TYPE type{};
  uint32_t active = 0;
  std::string name, units, description;
  const HRESULT hr = d->CheckCounter(D3D10DDI_COUNTER_DEVICE_DEPENDENT_0, &type, &active, &name,
                                     &units, &description);
  const bool has = info.LastDeviceDependentCounter >= D3D10DDI_COUNTER_DEVICE_DEPENDENT_0;
  if ((hr == S_OK) != has) return Failed("CheckCounter", hr);
  return absl::OkStatus();
}

// The context-side slots, on `c` (the IC or a deferred context).
void UseContextSlots(DeviceContext* c, Shader* gs, Shader* ps, Resource* msaa, Resource* target,
                     Resource* counts, View* uav) {
  const uint32_t interfaces[2] = {0, 1};
  D3D11DDIARG_POINTERDATA pointers[2] = {{0}, {1}};
  c->SetShaderWithInterfaces(Stage::kGS, gs, 2, interfaces, pointers);
  c->SetShaderWithInterfaces(Stage::kPS, ps, 0, nullptr, nullptr);
  c->Draw(3, 0);
  c->ResolveSubresource(target, 0, msaa, 0, DXGI_FORMAT_R8G8B8A8_UNORM);
  c->CopyStructureCount(counts, 0, uav);
  c->SetShaderWithInterfaces(Stage::kGS, nullptr, 0, nullptr, nullptr);
}

}  // namespace

absl::Status RunTables(Device* device, const ScenarioOptions& o) {
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(CheckCaps(device));
  Held held;
  // A geometry shader streaming one float4 to buffer 0.
  const uint32_t code[12] = {0x00020040, 12, static_cast<uint32_t>(o.seed)};
  const D3D11DDIARG_STREAM_OUTPUT_DECLARATION_ENTRY decl[1] = {{0, 0, 0, 0xf}};
  const uint32_t strides[1] = {16};
  Shader* gs = nullptr;
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(
      HrStatus("CreateGeometryShaderWithStreamOutput",
               device->CreateGeometryShaderWithStreamOutput(code, decl, 1, strides, 1, 0, &gs)));
  held.Keep(gs);
  Shader* ps = nullptr;
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(ps, MakeShader(device, Stage::kPS, 20));
  held.Keep(ps);
  Resource* msaa = nullptr;
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(msaa,
                                    MakeTexture(device, 32, 32, D3D10_DDI_BIND_RENDER_TARGET, 0));
  held.Keep(msaa);
  Resource* target = nullptr;
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(target,
                                    MakeTexture(device, 32, 32, D3D10_DDI_BIND_SHADER_RESOURCE, 0));
  held.Keep(target);
  Resource* counts = nullptr;
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(
      counts, MakeBuffer(device, 64, D3D10_DDI_USAGE_DEFAULT, D3D10_DDI_BIND_CONSTANT_BUFFER));
  held.Keep(counts);
  Resource* structured = nullptr;
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(structured, MakeBuffer(device, 256, D3D10_DDI_USAGE_DEFAULT,
                                                           D3D11_DDI_BIND_UNORDERED_ACCESS));
  held.Keep(structured);
  View* uav = nullptr;
  CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(uav, MakeView(device, ViewKind::kUnorderedAccess, structured));
  held.Keep(uav);

  DeviceContext* ic = device->GetImmediateContext();
  UseContextSlots(ic, gs, ps, msaa, target, counts, uav);
  DeviceContext* dc = nullptr;
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(
      HrStatus("CreateDeferredContext", device->CreateDeferredContext(0, &dc)));
  held.Keep(dc);
  UseContextSlots(dc, gs, ps, msaa, target, counts, uav);
  CommandList* cl = nullptr;
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(
      HrStatus("FinishCommandList", dc->FinishCommandList(FALSE, &cl)));
  ic->ExecuteCommandList(cl, FALSE);
  cl->Release();
  ic->Flush();

  // The DXGI base functions: a two-buffer swap chain scanned out from a primary.
  DXGI_GAMMA_CONTROL_CAPABILITIES gamma{};
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(
      HrStatus("GetGammaControlCapabilities", device->GetGammaControlCapabilities(&gamma)));
  Resource* buffers[2] = {};
  for (Resource*& b : buffers) {
    CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(
        b, MakeTexture(device, 64, 64, D3D10_DDI_BIND_RENDER_TARGET | D3D10_DDI_BIND_PRESENT, 0,
                       /*primary=*/true));
    held.Keep(b);
  }
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(HrStatus("SetDisplayMode", device->SetDisplayMode(buffers[0])));
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(
      HrStatus("SetEvictionPriority", device->SetEvictionPriority(target, 0x78000000)));
  DXGI_DDI_RESIDENCY residency[2] = {};
  CLTRACE_WORKLOAD_RETURN_IF_ERROR(
      HrStatus("QueryResourceResidency", device->QueryResourceResidency(buffers, 2, residency)));
  for (int f = 0; f < o.frames && f < 2; ++f) {
    CLTRACE_WORKLOAD_RETURN_IF_ERROR(HrStatus("Blt", device->Blt(buffers[0], msaa)));
    CLTRACE_WORKLOAD_RETURN_IF_ERROR(HrStatus("Present", device->Present(buffers[0])));
    CLTRACE_WORKLOAD_RETURN_IF_ERROR(
        HrStatus("RotateResourceIdentities", device->RotateResourceIdentities(buffers, 2)));
  }
  ic->Flush();
  return absl::OkStatus();
}

}  // namespace cltrace::workloads
