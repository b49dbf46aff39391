// The pipeline bindings one context holds, from the driver's point of view.
//
// On the IC the pointers are IC handles (pDrvPrivate); on a DC they are that DC's context-local
// handles. Slot counts are D3D11's (ddi/limits.h).
//
// Thread-safety: owned by one context; used only in its domain.
#ifndef CLTRACE_REFDRIVER_INTERNAL_PIPELINE_STATE_H_
#define CLTRACE_REFDRIVER_INTERNAL_PIPELINE_STATE_H_

#include <cstdint>

#include "ddi/limits.h"

namespace cltrace::refdriver {

enum Stage : int { kVs = 0, kPs, kGs, kHs, kDs, kCs, kStageCount };

// D3D11's slot counts (ddi/limits.h), as int: the driver indexes with the DDIs' UINT
// arguments after range checks against them.
inline constexpr int kCbSlots = static_cast<int>(ddi::kCbSlots);
inline constexpr int kSrvSlots = static_cast<int>(ddi::kSrvSlots);
inline constexpr int kSamplerSlots = static_cast<int>(ddi::kSamplerSlots);
inline constexpr int kVbSlots = static_cast<int>(ddi::kVbSlots);
inline constexpr int kRtvSlots = static_cast<int>(ddi::kRtvSlots);
inline constexpr int kSoSlots = static_cast<int>(ddi::kSoSlots);
inline constexpr int kUavSlots = static_cast<int>(ddi::kUavSlots);

struct PipelineState {
  void* shader[kStageCount] = {};
  void* cb[kStageCount][kCbSlots] = {};
  void* srv[kStageCount][kSrvSlots] = {};
  void* sampler[kStageCount][kSamplerSlots] = {};
  void* cs_uav[kUavSlots] = {};
  void* om_uav[kUavSlots] = {};
  void* input_layout = nullptr;
  void* vb[kVbSlots] = {};
  uint32_t vb_stride[kVbSlots] = {};
  uint32_t vb_offset[kVbSlots] = {};
  void* ib = nullptr;
  uint32_t ib_format = 0;
  uint32_t ib_offset = 0;
  uint32_t topology = 0;
  void* rtv[kRtvSlots] = {};
  void* dsv = nullptr;
  void* blend = nullptr;
  float blend_factor[4] = {};
  uint32_t sample_mask = 0xffffffffu;
  void* depth_stencil = nullptr;
  uint32_t stencil_ref = 0;
  void* rasterizer = nullptr;
  void* so[kSoSlots] = {};
  uint32_t so_offset[kSoSlots] = {};
  uint32_t num_viewports = 0;
  uint32_t num_scissors = 0;
  void* predicate = nullptr;
  int32_t predicate_value = 0;
  // Something other than the cleared state was stored since the last Clear (keeps clearing an
  // untouched state, the common case for small command lists, from copying ~8 KB).
  bool dirty = false;

  void Clear() {
    if (dirty) *this = PipelineState();
  }
};

}  // namespace cltrace::refdriver

#endif  // CLTRACE_REFDRIVER_INTERNAL_PIPELINE_STATE_H_
