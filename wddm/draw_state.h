// The draw-state probe: an optional export of a user-mode driver library that decodes the
// driver-private records it carries in its command buffers (wddm/README.md "Command encoding",
// opcode `private`) into the bindings each draw used.
//
// A real UMD's command buffer is understood only by its kernel-mode partner. A model driver may
// additionally export CltraceDecodePrivateDraws, so the runtime model can compare, at
// pfnRenderCb, the bindings every submitted draw used with what the application bound (catches
// a driver that forgets to clear state after CommandListExecute, R60, or at context
// creation/recycle, R47). The runtime model decodes the command buffer (wddm/command_stream.h)
// and hands the payload of each `private` command to the driver's decoder; it never knows a
// driver's record layout, and a driver without the export simply gets no such check.
//
// A draw-state snapshot is kDrawSlotCount handles, indexed by DrawSlot: the IC driver handle
// (pDrvPrivate value) bound in that slot, 0 = unbound.
//
// Example (runtime side):
//   auto fn = reinterpret_cast<gpu::DecodePrivateDrawsFn>(
//       dlsym(lib, gpu::kDecodePrivateDrawsSymbol));
//   int rc = fn(payload.data(), payload.size(), &OnDraw, &state);  // OnDraw(ctx, handles)
//
// Thread-safety: the decoder is a pure function of its input (callable from any thread).
#ifndef CLTRACE_WDDM_DRAW_STATE_H_
#define CLTRACE_WDDM_DRAW_STATE_H_

#include <cstddef>
#include <cstdint>

namespace cltrace::gpu {

// Slots of the draw-state snapshot (the bindings the state check compares).
enum DrawSlot : uint32_t {
  kSlotInputLayout = 0,
  kSlotVs,
  kSlotPs,
  kSlotGs,
  kSlotHs,
  kSlotDs,
  kSlotVb0,
  kSlotIb,
  kSlotVsCb0,
  kSlotPsCb0,
  kSlotPsSrv0,
  kSlotPsSampler0,
  kSlotRtv0,
  kSlotDsv,
  kSlotBlend,
  kSlotDepthStencil,
  kSlotRasterizer,
  kDrawSlotCount,
};

inline const char* DrawSlotName(uint32_t slot) {
  static const char* const kNames[kDrawSlotCount] = {
      "InputLayout", "VS",  "PS",    "GS",           "HS",        "DS",
      "VB0",         "IB",  "VSCB0", "PSCB0",        "PSSRV0",    "PSSampler0",
      "RTV0",        "DSV", "Blend", "DepthStencil", "Rasterizer"};
  return slot < kDrawSlotCount ? kNames[slot] : "?";
}

// Called once per draw record, in buffer order; `handles` has kDrawSlotCount entries.
using OnPrivateDrawFn = void (*)(void* ctx, const uint64_t* handles);

// The export: decodes one `private` command's payload (`words` 32-bit words). Returns
// kPrivateDrawsOk when the payload decoded (also when it is not this driver's: then no draw is
// reported) and kPrivateDrawsMalformed when this driver's records in it are malformed.
using DecodePrivateDrawsFn = int (*)(const uint32_t* words, size_t count, OnPrivateDrawFn on_draw,
                                     void* ctx);
inline constexpr int kPrivateDrawsOk = 0;
inline constexpr int kPrivateDrawsMalformed = 1;
inline constexpr char kDecodePrivateDrawsSymbol[] = "CltraceDecodePrivateDraws";

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_DRAW_STATE_H_
