// The runtime model: a D3D11-style API that drives a user-mode driver through the DDI.
//
// Applications (cltrace-workload, tests, benchmarks) link this library. It loads a driver
// shared library through its exported OpenAdapter10_2, exactly as the D3D11 runtime loads a
// UMD, and turns every API call into the DDI call sequences of ddi-spec §4: device bring-up,
// object creation, deferred contexts with context-local handles, FinishCommandList with
// command-list recycling, ExecuteCommandList, teardown. It answers the driver's callbacks
// (core-layer state refresh per R49/R60, errors, amortized processing; kernel thunks through
// the device's gpu::KernelStack, runtime/kernel.h) and checks the driver's side of the
// contract, reporting violations as lines "R22 seq=N fn=... message" (Device::Violations()).
//
// Thread-safety (as in D3D11): Device methods are free-threaded; an immediate or deferred
// context must not be used by two threads at once. The runtime enforces that (R10): an
// overlapping call is reported as application misuse and then serialized. Object::Release is
// free-threaded.
//
// Example:
//   RuntimeOptions options;                       // default driver: the reference driver
//   Device* device = nullptr;
//   if (Device::Create(options, &device) != S_OK) return;
//   DeviceContext* dc = nullptr;
//   device->CreateDeferredContext(0, &dc);
//   dc->CopyResource(dst, src);
//   CommandList* cl = nullptr;
//   dc->FinishCommandList(FALSE, &cl);
//   device->GetImmediateContext()->ExecuteCommandList(cl, FALSE);
//   cl->Release(); dc->Release(); device->Release();
#ifndef CLTRACE_RUNTIME_RUNTIME_H_
#define CLTRACE_RUNTIME_RUNTIME_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ddi/ddi_abi.h"
#include "rules/finding.h"
#include "rules/rules.h"
#include "rules/state_machines.h"
#include "runtime/options.h"

// BOOL values of the D3D11-style API (the DDI header has BOOL but not its constants).
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

namespace cltrace::gpu {
class KernelStack;
}  // namespace cltrace::gpu

namespace cltrace::runtime {

class Device;
class DeviceContext;
class CommandList;

struct CommandListRecorded;
namespace internal {
struct DeviceState;
struct ContextState;
struct ClHandle;
struct Access;  // the implementation's door into private members
}  // namespace internal

enum class Stage : int { kVS = 0, kPS, kGS, kHS, kDS, kCS };
inline constexpr int kStageCount = 6;

// Reference-counted API object. Release() of the last reference destroys it (the DDI destroy
// may be deferred while a context still binds it, as D3D11 does).
class Object {
 public:
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  uint32_t AddRef();
  // The API call "Release" (annotated); returns the remaining count.
  uint32_t Release();

  // Internal references (bindings, recordings, command lists) do not annotate.
  void InternalAddRef() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void InternalRelease();

 protected:
  Object() = default;
  virtual ~Object() = default;
  // Called once when the count reaches zero; must end with `delete this` or equivalent.
  virtual void FinalRelease() = 0;

 private:
  std::atomic<uint32_t> refs_{1};
};

// An object with an IC driver handle (ddi-spec §4.2) and a context-local handle size.
class DeviceChild : public Object {
 public:
  Device* device() const { return device_; }
  D3D11DDI_HANDLETYPE handle_type() const { return type_; }
  // The IC driver handle's memory (pDrvPrivate).
  void* ic_handle() const { return ic_handle_; }
  // Size from CalcDeferredContextHandleSize for this object (R35).
  size_t local_handle_size() const { return local_size_; }
  // Views: the resource they depend on (R55); else nullptr.
  DeviceChild* dependency() const { return dependency_; }
  const std::string& debug_name() const { return name_; }

 protected:
  DeviceChild(Device* device, D3D11DDI_HANDLETYPE type, DeviceChild* dependency);
  ~DeviceChild() override;
  void FinalRelease() override;

 private:
  friend class Device;
  friend class DeviceContext;
  friend struct internal::Access;
  Device* device_;
  D3D11DDI_HANDLETYPE type_;
  DeviceChild* dependency_;  // holds a reference
  void* ic_handle_ = nullptr;
  size_t ic_size_ = 0;
  size_t local_size_ = 0;
  std::string name_;
  uint32_t shader_stage_ = 0;  // shaders: which DestroyShader/Create* family
};

struct ResourceDesc {
  D3D10DDIRESOURCE_TYPE dimension = D3D10DDIRESOURCE_BUFFER;
  D3D10_DDI_RESOURCE_USAGE usage = D3D10_DDI_USAGE_DEFAULT;
  uint32_t bind_flags = 0;  // D3D10_DDI_BIND_*
  uint32_t map_flags = 0;   // CPU access (D3D10_DDI_MAP-style bits, informative)
  uint32_t misc_flags = 0;  // D3D10_DDI_RESOURCE_MISC_*
  uint32_t format = 0;
  uint32_t width = 0;  // bytes for buffers
  uint32_t height = 1;
  uint32_t depth = 1;
  uint32_t mip_levels = 1;
  uint32_t array_size = 1;
  uint32_t byte_stride = 0;
  // A swap chain's buffer that is scanned out (a primary): the runtime passes the swap chain's
  // DXGI_DDI_PRIMARY_DESC as pPrimaryDesc and adds D3D10_DDI_BIND_PRESENT, as Microsoft's
  // runtime does; a driver tells primaries by pPrimaryDesc != NULL.
  bool primary = false;
};

class Resource : public DeviceChild {
 public:
  const ResourceDesc& desc() const { return desc_; }

 private:
  friend class Device;
  Resource(Device* device, const ResourceDesc& desc)
      : DeviceChild(device, D3D10DDI_HT_RESOURCE, nullptr), desc_(desc) {}
  ResourceDesc desc_;
};

enum class ViewKind : uint8_t { kShaderResource, kRenderTarget, kDepthStencil, kUnorderedAccess };

struct ViewDesc {
  uint32_t format = 0;
  D3D10DDIRESOURCE_TYPE dimension = D3D10DDIRESOURCE_BUFFER;
  uint32_t first_element = 0;
  uint32_t num_elements = 0;
  uint32_t mip_slice = 0;
};

class View : public DeviceChild {
 public:
  ViewKind kind() const { return kind_; }
  Resource* resource() const { return static_cast<Resource*>(dependency()); }

 private:
  friend class Device;
  View(Device* device, ViewKind kind, Resource* resource);
  ViewKind kind_;
};

class Shader : public DeviceChild {
 public:
  Stage stage() const { return static_cast<Stage>(stage_); }

 private:
  friend class Device;
  Shader(Device* device, Stage stage)
      : DeviceChild(device, D3D10DDI_HT_SHADER, nullptr), stage_(static_cast<int>(stage)) {}
  int stage_;
};

class InputLayout : public DeviceChild {
 private:
  friend class Device;
  explicit InputLayout(Device* device) : DeviceChild(device, D3D10DDI_HT_ELEMENTLAYOUT, nullptr) {}
};

class BlendState : public DeviceChild {
 private:
  friend class Device;
  explicit BlendState(Device* device) : DeviceChild(device, D3D10DDI_HT_BLENDSTATE, nullptr) {}
};

class DepthStencilState : public DeviceChild {
 private:
  friend class Device;
  explicit DepthStencilState(Device* device)
      : DeviceChild(device, D3D10DDI_HT_DEPTHSTENCILSTATE, nullptr) {}
};

class RasterizerState : public DeviceChild {
 private:
  friend class Device;
  explicit RasterizerState(Device* device)
      : DeviceChild(device, D3D10DDI_HT_RASTERIZERSTATE, nullptr) {}
};

class SamplerState : public DeviceChild {
 private:
  friend class Device;
  explicit SamplerState(Device* device) : DeviceChild(device, D3D10DDI_HT_SAMPLERSTATE, nullptr) {}
};

class Query : public DeviceChild {
 public:
  D3D10DDI_QUERY type() const { return type_; }

 private:
  friend class Device;
  Query(Device* device, D3D10DDI_QUERY type)
      : DeviceChild(device, D3D10DDI_HT_QUERY, nullptr), type_(type) {}
  D3D10DDI_QUERY type_;
};

// A finished command list (the result of FinishCommandList). Its final Release recycles the
// driver handle into the owning deferred context when that context is alive (ddi-spec §4.6).
class CommandList : public Object {
 public:
  using Recorded = struct CommandListRecorded;  // implementation detail (internal/state.h)
  DeviceContext* owner() const;
  const std::string& debug_name() const;

 private:
  friend class DeviceContext;
  friend class Device;
  friend struct internal::Access;
  CommandList() = default;
  ~CommandList() override;
  void FinalRelease() override;
  internal::ClHandle* handle_ = nullptr;           // the driver handle (IC memory + recycle state)
  std::unique_ptr<CommandListRecorded> recorded_;  // what the recording produced
};

struct MappedSubresource {
  void* data = nullptr;
  uint32_t row_pitch = 0;
  uint32_t depth_pitch = 0;
};

// The immediate context or a deferred context.
class DeviceContext : public Object {
 public:
  bool IsDeferred() const;
  Device* device() const { return device_; }

  // Input assembler.
  void IASetInputLayout(InputLayout* layout);
  void IASetVertexBuffers(uint32_t start, uint32_t count, Resource* const* buffers,
                          const uint32_t* strides, const uint32_t* offsets);
  void IASetIndexBuffer(Resource* buffer, uint32_t format, uint32_t offset);
  void IASetPrimitiveTopology(D3D10_DDI_PRIMITIVE_TOPOLOGY topology);
  // Shader stages.
  void SetShader(Stage stage, Shader* shader);
  void SetConstantBuffers(Stage stage, uint32_t start, uint32_t count, Resource* const* buffers);
  void SetShaderResources(Stage stage, uint32_t start, uint32_t count, View* const* views);
  void SetSamplers(Stage stage, uint32_t start, uint32_t count, SamplerState* const* samplers);
  void CSSetUnorderedAccessViews(uint32_t start, uint32_t count, View* const* views,
                                 const uint32_t* initial_counts);
  // Output merger, rasterizer, stream output, predication.
  void OMSetRenderTargets(uint32_t count, View* const* rtvs, View* dsv);
  // Render targets and pixel-stage UAVs (slots [uav_start, uav_start + num_uavs), shared with
  // the render targets: uav_start >= num_rtvs), one SetRenderTargets DDI. kKeepRenderTargets as
  // num_rtvs keeps the render targets and depth-stencil view, kKeepUnorderedAccessViews as
  // num_uavs the UAVs. `initial_counts` (may be null: keep) sets append/consume counters.
  static constexpr uint32_t kKeepRenderTargets = 0xffffffffu;
  static constexpr uint32_t kKeepUnorderedAccessViews = 0xffffffffu;
  void OMSetRenderTargetsAndUnorderedAccessViews(uint32_t num_rtvs, View* const* rtvs, View* dsv,
                                                 uint32_t uav_start, uint32_t num_uavs,
                                                 View* const* uavs, const uint32_t* initial_counts);
  void OMSetBlendState(BlendState* state, const float factor[4], uint32_t sample_mask);
  void OMSetDepthStencilState(DepthStencilState* state, uint32_t stencil_ref);
  void RSSetState(RasterizerState* state);
  void RSSetViewports(uint32_t count, const D3D10_DDI_VIEWPORT* viewports);
  void RSSetScissorRects(uint32_t count, const D3D10_DDI_RECT* rects);
  void SOSetTargets(uint32_t count, Resource* const* buffers, const uint32_t* offsets);
  void SetPredication(Query* predicate, BOOL value);

  // Work.
  void Draw(uint32_t vertex_count, uint32_t start_vertex);
  void DrawIndexed(uint32_t index_count, uint32_t start_index, int32_t base_vertex);
  void DrawInstanced(uint32_t vertex_count, uint32_t instance_count, uint32_t start_vertex,
                     uint32_t start_instance);
  void DrawIndexedInstanced(uint32_t index_count, uint32_t instance_count, uint32_t start_index,
                            int32_t base_vertex, uint32_t start_instance);
  void DrawAuto();
  void DrawInstancedIndirect(Resource* args, uint32_t offset);
  void DrawIndexedInstancedIndirect(Resource* args, uint32_t offset);
  void Dispatch(uint32_t x, uint32_t y, uint32_t z);
  void DispatchIndirect(Resource* args, uint32_t offset);

  // Binds `shader` with its class instances (Set*ShaderWithIfaces); a later state refresh
  // re-sends the binding as a plain Set*Shader.
  void SetShaderWithInterfaces(Stage stage, Shader* shader, uint32_t count,
                               const uint32_t* interfaces,
                               const D3D11DDIARG_POINTERDATA* pointer_data);

  // Copies and updates.
  void ResolveSubresource(Resource* dst, uint32_t dst_sub, Resource* src, uint32_t src_sub,
                          DXGI_FORMAT format);
  void CopyStructureCount(Resource* dst, uint32_t dst_offset, View* src_uav);
  void CopyResource(Resource* dst, Resource* src);
  void CopySubresourceRegion(Resource* dst, uint32_t dst_sub, uint32_t x, uint32_t y, uint32_t z,
                             Resource* src, uint32_t src_sub, const D3D10_DDI_BOX* src_box);
  void UpdateSubresource(Resource* dst, uint32_t dst_sub, const D3D10_DDI_BOX* box,
                         const void* data, uint32_t row_pitch, uint32_t depth_pitch);
  void ClearRenderTargetView(View* rtv, const float color[4]);
  void ClearDepthStencilView(View* dsv, uint32_t flags, float depth, uint8_t stencil);
  void ClearUnorderedAccessViewUint(View* uav, const uint32_t values[4]);
  void ClearUnorderedAccessViewFloat(View* uav, const float values[4]);
  void GenerateMips(View* srv);

  // Map/Unmap. On a deferred context only WRITE_DISCARD / WRITE_NO_OVERWRITE of dynamic
  // resources, the first map per recording a discard (R64; violations are reported).
  HRESULT Map(Resource* resource, uint32_t subresource, D3D10_DDI_MAP map_type, uint32_t flags,
              MappedSubresource* mapped);
  void Unmap(Resource* resource, uint32_t subresource);

  // Queries. GetData is immediate-context only: S_OK (data written), S_FALSE (not ready).
  void Begin(Query* query);
  void End(Query* query);
  HRESULT GetData(Query* query, void* data, uint32_t size, uint32_t flags);

  void ClearState();
  void Flush();  // immediate context only

  // Application markers (ID3DUserDefinedAnnotation): no DDI call; handed to the loaded driver
  // library's CltraceAnnotateMarker (runtime/annotation.h), so a recording shows them on the
  // annotation of the next call. BeginEvent returns the number of events open before it;
  // EndEvent the number still open after it, or -1 (and no marker) when none was open.
  int BeginEvent(const std::string& name);
  int EndEvent();
  void SetMarker(const std::string& name);

  // Deferred context only: produces a command list (ddi-spec §4.5).
  HRESULT FinishCommandList(BOOL restore_deferred_context_state, CommandList** command_list);
  // Immediate or deferred (nested) context (§4.8, §4.4).
  void ExecuteCommandList(CommandList* command_list, BOOL restore_context_state);

 private:
  friend class Device;
  friend class CommandList;
  friend struct internal::Access;
  DeviceContext(Device* device, bool deferred);
  ~DeviceContext() override;
  void FinalRelease() override;

  Device* device_;
  std::unique_ptr<internal::ContextState> state_;
};

class Device : public Object {
 public:
  // Loads the driver, opens the adapter and creates the device (ddi-spec §4.1).
  static HRESULT Create(const RuntimeOptions& options, Device** device);

  // The immediate context (the device keeps it; the pointer is valid while the device is).
  DeviceContext* GetImmediateContext();

  HRESULT CreateResource(const ResourceDesc& desc, Resource** resource) {
    return CreateResource(desc, nullptr, resource);
  }
  // With initial data, as D3D11's pInitialData: NULL, or one entry per subresource
  // (mip + slice × mip_levels, mip_levels × array_size of them), which the driver receives as
  // D3D11DDIARG_CREATERESOURCE::pInitialDataUP (the caller's memory, read during the call).
  HRESULT CreateResource(const ResourceDesc& desc, const D3D10_DDIARG_SUBRESOURCE_UP* initial_data,
                         Resource** resource);
  HRESULT CreateView(ViewKind kind, Resource* resource, const ViewDesc& desc, View** view);
  // `code`: tokenized shader program, token 1 = length in tokens.
  HRESULT CreateShader(Stage stage, const uint32_t* code, Shader** shader);
  HRESULT CreateInputLayout(const D3D10DDIARG_INPUT_ELEMENT_DESC* elements, uint32_t count,
                            InputLayout** layout);
  HRESULT CreateBlendState(const D3D10_1_DDI_BLEND_DESC& desc, BlendState** state);
  HRESULT CreateDepthStencilState(const D3D10_DDI_DEPTH_STENCIL_DESC& desc,
                                  DepthStencilState** state);
  HRESULT CreateRasterizerState(const D3D10_DDI_RASTERIZER_DESC& desc, RasterizerState** state);
  HRESULT CreateSamplerState(const D3D10_DDI_SAMPLER_DESC& desc, SamplerState** state);
  HRESULT CreateQuery(D3D10DDI_QUERY type, Query** query);
  // ddi-spec §4.3. `flags`: D3D10DDI_CREATEDEVICE_FLAG_* bits for the deferred context.
  HRESULT CreateDeferredContext(uint32_t flags, DeviceContext** context);

  // Presents `surface` (DXGI PresentDXGI on the immediate context's domain). Returns
  // DXGI_ERROR_DEVICE_REMOVED once the driver reported removal.
  HRESULT Present(Resource* surface);
  // The other DXGI base functions (same domain): the gamma ramp's capabilities, scan-out of a
  // primary, eviction priority, residency, the swap-chain rotation and a blt.
  HRESULT GetGammaControlCapabilities(DXGI_GAMMA_CONTROL_CAPABILITIES* caps);
  HRESULT SetDisplayMode(Resource* primary);
  HRESULT SetEvictionPriority(Resource* resource, uint32_t priority);
  HRESULT QueryResourceResidency(Resource* const* resources, uint32_t count,
                                 DXGI_DDI_RESIDENCY* status);
  HRESULT RotateResourceIdentities(Resource* const* resources, uint32_t count);
  HRESULT Blt(Resource* dst, Resource* src);

  // Capability checks (IC table). E_INVALIDARG for a NULL output (the driver is not asked).
  HRESULT CheckFormatSupport(DXGI_FORMAT format, uint32_t* support);
  HRESULT CheckMultisampleQualityLevels(DXGI_FORMAT format, uint32_t samples, uint32_t* levels);
  void CheckCounterInfo(D3D10DDI_COUNTER_INFO* info);
  // A device-dependent counter's description. Like the D3D11 runtime, it asks the driver only
  // for ids CheckCounterInfo admits (D3D10DDI_COUNTER_DEVICE_DEPENDENT_0 up to
  // LastDeviceDependentCounter); any other id is E_INVALIDARG without a DDI call.
  HRESULT CheckCounter(D3D10DDI_QUERY counter, D3D10DDI_COUNTER_TYPE* type, uint32_t* active,
                       std::string* name, std::string* units, std::string* description);
  // A device-dependent counter (ID3D11Device::CreateCounter): a query of type `counter` at the
  // DDI. Like CheckCounter, only for ids CheckCounterInfo admits; any other id is E_INVALIDARG
  // after that check, without CalcPrivateQuerySize/CreateQuery.
  HRESULT CreateCounter(D3D10DDI_QUERY counter, Query** query);
  // A geometry shader that streams out (CreateGeometryShaderWithStreamOutput).
  HRESULT CreateGeometryShaderWithStreamOutput(
      const uint32_t* code, const D3D11DDIARG_STREAM_OUTPUT_DECLARATION_ENTRY* entries,
      uint32_t num_entries, const uint32_t* strides, uint32_t num_strides,
      uint32_t rasterized_stream, Shader** shader);

  // True once the driver reported D3DDDIERR_DEVICEREMOVED.
  bool IsRemoved() const;
  // Violations the runtime model detected so far (driver-side rules and application misuse),
  // one line each, in detection order.
  std::vector<std::string> Violations() const;
  // The same violations as findings (rule, seq, message), in detection order.
  std::vector<rules::Finding> Findings() const;
  // Violations the loaded driver library reports through CltraceRefDriverViolations (the
  // reference driver, also when a shim loaded it); empty if the driver has no such channel.
  std::vector<std::string> DriverViolations() const;
  // DDI calls made plus callbacks received by every device of this process so far
  // (same as ProcessCallCount()); the driver's entry point OpenAdapter10_2 is not a table call
  // and is not counted.
  uint64_t CallCount() const;
  const RuntimeOptions& options() const;
  // The device's kernel (runtime/kernel.h): Dxgkrnl + model KMD + GPU in virtual time, e.g.
  // for stack->kernel().WaitIdle() and AllocationDigests() after a Flush/Present. Use it only
  // while no other thread uses the device.
  gpu::KernelStack* GpuKernel() const;

 private:
  friend class DeviceChild;
  friend class DeviceContext;
  friend class CommandList;
  friend struct internal::Access;
  Device();
  ~Device() override;
  void FinalRelease() override;
  HRESULT Init(const RuntimeOptions& options);
  template <typename T>
  HRESULT CreateChild(T* object, T** out);

  std::unique_ptr<internal::DeviceState> state_;
};

// Process-wide views, valid also after devices were torn down (teardown itself can detect
// violations, e.g. R70): every violation line any device of this process reported, and the
// number of DDI calls made plus callbacks received by all devices (OpenAdapter10_2 not
// counted: it is the driver's exported entry point, not a catalog call).
std::vector<std::string> ProcessViolations();
void ClearProcessViolations();
uint64_t ProcessCallCount();
// Violations reported by every driver library this process loaded that has the reference
// driver's violation channel (CltraceRefDriverViolations), in detection order per library.
std::vector<std::string> ProcessDriverViolations();
// Forgets the lines of ProcessDriverViolations (CltraceRefDriverClearViolations).
void ClearProcessDriverViolations();

// The §3 state-machine steps (rules/state_machines.h) of the lifecycle DDIs every device of
// this process issued on command lists, deferred contexts and context-local handles: the
// runtime checks each against the table before issuing it. Read it while no device is busy.
struct LifecycleNonEdge {
  rules::Machine machine = rules::Machine::kCommandList;
  rules::State from = rules::State::kNone;
  rules::State to = rules::State::kNone;
  const char* call = "";  // catalog name: "CommandListExecute"
  rules::Rule rule{};     // the rule the call breaks (a runtime-misuse mode's)
};
struct LifecycleSteps {
  uint64_t edges[3] = {};  // per rules::Machine: steps that are edges of the table
  uint64_t non_edge_count = 0;
  std::vector<LifecycleNonEdge> non_edges;  // the first 64 steps that are no edge
};
LifecycleSteps ProcessLifecycleSteps();
void ClearProcessLifecycleSteps();

// Releases a runtime object pointer if non-null and nulls it (convenience for tests).
template <typename T>
void SafeRelease(T*& p) {
  if (p != nullptr) {
    p->Release();
    p = nullptr;
  }
}

}  // namespace cltrace::runtime

#endif  // CLTRACE_RUNTIME_RUNTIME_H_
