// D3D11's pipeline slot counts (the D3D11_* constants of d3d11.h), defined once for every
// component: the runtime model's bindings and the reference driver's pipeline state size their
// arrays with them.
//
// Thread-safety: constants.
#ifndef CLTRACE_DDI_LIMITS_H_
#define CLTRACE_DDI_LIMITS_H_

#include <cstdint>

namespace cltrace::ddi {

inline constexpr uint32_t kCbSlots = 14;       // D3D11_COMMONSHADER_CONSTANT_BUFFER_API_SLOT_COUNT
inline constexpr uint32_t kSrvSlots = 128;     // D3D11_COMMONSHADER_INPUT_RESOURCE_SLOT_COUNT
inline constexpr uint32_t kSamplerSlots = 16;  // D3D11_COMMONSHADER_SAMPLER_SLOT_COUNT
inline constexpr uint32_t kVbSlots = 32;       // D3D11_IA_VERTEX_INPUT_RESOURCE_SLOT_COUNT
inline constexpr uint32_t kRtvSlots = 8;       // D3D11_SIMULTANEOUS_RENDER_TARGET_COUNT
inline constexpr uint32_t kSoSlots = 4;        // D3D11_SO_BUFFER_SLOT_COUNT
inline constexpr uint32_t kUavSlots = 8;       // D3D11_PS_CS_UAV_REGISTER_COUNT
// D3D11_VIEWPORT_AND_SCISSORRECT_OBJECT_COUNT_PER_PIPELINE
inline constexpr uint32_t kViewportSlots = 16;
// Resource creation limits (D3D11_REQ_MIP_LEVELS, D3D11_REQ_TEXTURE2D_ARRAY_AXIS_DIMENSION).
inline constexpr uint32_t kMaxMipLevels = 15;
inline constexpr uint32_t kMaxArraySize = 2048;

}  // namespace cltrace::ddi

#endif  // CLTRACE_DDI_LIMITS_H_
