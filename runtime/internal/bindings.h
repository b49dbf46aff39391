// The pipeline bindings of one context as the runtime sees them (API objects, referenced).
//
// Every non-null slot holds an internal reference on its object, so an object bound anywhere
// is never destroyed (R73). High watermarks answer state-refresh calls with Count = (UINT)-1.
//
// Thread-safety: owned by one context; used only inside its domain.
#ifndef CLTRACE_RUNTIME_INTERNAL_BINDINGS_H_
#define CLTRACE_RUNTIME_INTERNAL_BINDINGS_H_

#include <cstdint>
#include <vector>

#include "ddi/ddi_abi.h"
#include "ddi/limits.h"
#include "runtime/runtime.h"

namespace cltrace::runtime::internal {

// D3D11's slot counts (ddi/limits.h).
using ddi::kCbSlots;
using ddi::kRtvSlots;
using ddi::kSamplerSlots;
using ddi::kSoSlots;
using ddi::kSrvSlots;
using ddi::kUavSlots;
using ddi::kVbSlots;
using ddi::kViewportSlots;

struct Bindings {
  Shader* shader[kStageCount] = {};
  Resource* cb[kStageCount][kCbSlots] = {};
  View* srv[kStageCount][kSrvSlots] = {};
  SamplerState* sampler[kStageCount][kSamplerSlots] = {};
  uint32_t cb_hw[kStageCount] = {};
  uint32_t srv_hw[kStageCount] = {};
  uint32_t sampler_hw[kStageCount] = {};
  View* cs_uav[kUavSlots] = {};
  uint32_t cs_uav_hw = 0;
  InputLayout* input_layout = nullptr;
  Resource* vb[kVbSlots] = {};
  uint32_t vb_stride[kVbSlots] = {};
  uint32_t vb_offset[kVbSlots] = {};
  uint32_t vb_hw = 0;
  Resource* ib = nullptr;
  uint32_t ib_format = 0;
  uint32_t ib_offset = 0;
  D3D10_DDI_PRIMITIVE_TOPOLOGY topology = D3D10_DDI_PRIMITIVE_TOPOLOGY_UNDEFINED;
  View* rtv[kRtvSlots] = {};
  uint32_t num_rtvs = 0;
  // Pixel-stage UAVs by slot (the output-merger slots render targets share: a UAV's slot is at
  // least num_rtvs); om_uav_hw: one past the last slot holding one.
  View* om_uav[kUavSlots] = {};
  uint32_t om_uav_hw = 0;
  View* dsv = nullptr;
  BlendState* blend = nullptr;
  float blend_factor[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  uint32_t sample_mask = 0xffffffffu;
  DepthStencilState* depth_stencil = nullptr;
  uint32_t stencil_ref = 0;
  RasterizerState* rasterizer = nullptr;
  Resource* so[kSoSlots] = {};
  uint32_t so_offset[kSoSlots] = {};
  uint32_t num_so = 0;
  D3D10_DDI_VIEWPORT viewports[kViewportSlots] = {};
  uint32_t num_viewports = 0;
  D3D10_DDI_RECT scissors[kViewportSlots] = {};
  uint32_t num_scissors = 0;
  Query* predicate = nullptr;
  BOOL predicate_value = 0;

  Bindings() = default;
  Bindings(const Bindings&) = delete;
  Bindings& operator=(const Bindings&) = delete;
  ~Bindings() { Reset(); }

  // Copies `other` (taking references); the previous content is released.
  void CopyFrom(const Bindings& other);
  // Releases every reference and returns to the cleared (device-creation) state.
  void Reset();
  // True if nothing is bound and every value is the default.
  bool IsCleared() const;
};

// While one is active on the calling thread (every context API call has one), the references
// of replaced bindings are released only when it ends, after the call's DDIs: an object whose
// last reference was a binding is destroyed after the DDI that unbound it, never between its
// bind and its unbind (R73).
class DeferredBindingReleases {
 public:
  DeferredBindingReleases();
  ~DeferredBindingReleases();
  DeferredBindingReleases(const DeferredBindingReleases&) = delete;
  DeferredBindingReleases& operator=(const DeferredBindingReleases&) = delete;
  // Queues `o` on the innermost active scope; false if none is active.
  static bool Defer(Object* o);

 private:
  DeferredBindingReleases* previous_;
  std::vector<Object*> items_;
};

// Replaces a referenced slot.
template <typename T>
void Assign(T*& slot, T* value) {
  if (slot == value) return;
  if (value != nullptr) value->InternalAddRef();
  T* old = slot;
  slot = value;
  if (old != nullptr && !DeferredBindingReleases::Defer(old)) old->InternalRelease();
}

}  // namespace cltrace::runtime::internal

#endif  // CLTRACE_RUNTIME_INTERNAL_BINDINGS_H_
