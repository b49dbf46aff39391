// Sending a context's bindings to the driver through its Set* DDIs.
//
// Used for every path that re-sends state: application Set* calls, state-refresh answers
// (R49/R60), RestoreDeferredContextState / RestoreContextState, ClearState, and the per-handle
// unbinds of the abandon sequence (§4.7). On a deferred context objects are passed as
// context-local handles, opened on first use (§4.4).
//
// Thread-safety: inside the context's domain only.
#ifndef CLTRACE_RUNTIME_INTERNAL_SEND_H_
#define CLTRACE_RUNTIME_INTERNAL_SEND_H_

#include <cstdint>

#include "runtime/internal/state.h"

namespace cltrace::runtime::internal {

enum class SendMode : uint8_t { kCurrent, kNull };

void SendShader(ContextState* c, Stage stage, SendMode mode);
// The current shader of `stage` through Set*ShaderWithIfaces, with the class instances given.
void SendShaderWithIfaces(ContextState* c, Stage stage, uint32_t count, const uint32_t* interfaces,
                          const D3D11DDIARG_POINTERDATA* pointer_data);
void SendConstantBuffers(ContextState* c, Stage stage, uint32_t base, uint32_t count,
                         SendMode mode);
void SendShaderResources(ContextState* c, Stage stage, uint32_t base, uint32_t count,
                         SendMode mode);
void SendSamplers(ContextState* c, Stage stage, uint32_t base, uint32_t count, SendMode mode);
void SendCsUavs(ContextState* c, uint32_t base, uint32_t count, SendMode mode);
void SendInputLayout(ContextState* c, SendMode mode);
void SendVertexBuffers(ContextState* c, uint32_t base, uint32_t count, SendMode mode);
void SendIndexBuffer(ContextState* c, SendMode mode);
void SendTopology(ContextState* c, SendMode mode);
void SendRenderTargets(ContextState* c, SendMode mode);
// The same with the pixel-stage UAV slots [num_rtvs, uav_slots) (0: the UAVs are not touched)
// and their hidden-counter values (nullptr: keep them, UINT_MAX each).
void SendRenderTargets(ContextState* c, SendMode mode, uint32_t uav_slots, const UINT* counts);
void SendBlendState(ContextState* c, SendMode mode);
void SendDepthStencilState(ContextState* c, SendMode mode);
void SendRasterizerState(ContextState* c, SendMode mode);
void SendSoTargets(ContextState* c, SendMode mode);
void SendViewports(ContextState* c, SendMode mode);
void SendScissorRects(ContextState* c, SendMode mode);
void SendPredication(ContextState* c, SendMode mode);

// Every binding that differs from the cleared state: kCurrent re-applies them (restore),
// kNull unbinds them one call per binding (ClearState, abandon).
void SendAllBound(ContextState* c, SendMode mode);

// The handle a DDI of context `c` must get for `o` (IC handle on the IC, the context-local
// handle on a DC, opened on first use with dependencies first). nullptr for nullptr.
void* HandleFor(ContextState* c, DeviceChild* o);

// Draw-state expectation of `c`'s current bindings (IC driver handles).
DrawExpectation CurrentDrawState(ContextState* c);

}  // namespace cltrace::runtime::internal

#endif  // CLTRACE_RUNTIME_INTERNAL_SEND_H_
