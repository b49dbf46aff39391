// The reference driver's command-buffer format (the UMD/KMD private contract).
//
// A real user-mode driver writes hardware-specific commands into the command buffer it gets from
// pfnCreateContextCb / pfnRenderCb; only its kernel-mode partner understands them. cltrace's
// reference driver writes GPU-model commands (wddm/command_stream.h) and carries the records
// below inside gpu::Command::Private commands whose payload starts with kStreamMagic (two
// words, low first); the GPU skips them. The one check that needs them is the runtime model's
// draw state check, through the driver's CltraceDecodePrivateDraws export (refdriver.h,
// wddm/draw_state.h), so the runtime never sees this layout: every Draw record carries the
// driver's view of the bindings the draw uses, as IC driver handles (pDrvPrivate values), so the
// kernel side can compare them with what the runtime bound (catches a driver that forgets to clear
// state after CommandListExecute, R60).
//
// The allocation list that travels with a buffer uses the D3DDDI_ALLOCATIONLIST layout
// (wddm/kernel_abi.h UserAllocationListEntry: {uint32 hAllocation, uint32 flags}).
//
// Layout: a sequence of records, each starting with RefCmdHeader; `size` is the whole record in
// bytes (a multiple of 8). Command lists are spliced into the IC stream between
// kExecuteBegin/kExecuteEnd records (nested lists nest the brackets).
//
// Thread-safety: plain data definitions.
#ifndef CLTRACE_REFDRIVER_COMMAND_STREAM_H_
#define CLTRACE_REFDRIVER_COMMAND_STREAM_H_

#include <cstdint>

#include "wddm/draw_state.h"

namespace cltrace::refcmd {

enum Opcode : uint32_t {
  kNop = 0,
  kSet = 1,           // a binding changed: payload = {slot kind, index, handle}
  kDraw = 2,          // RefCmdDraw
  kCopy = 3,          // {dst, src}
  kUpdate = 4,        // {dst, bytes}
  kClear = 5,         // {view}
  kQueryBegin = 6,    // {query}
  kQueryEnd = 7,      // {query}
  kExecuteBegin = 8,  // {command-list id}
  kExecuteEnd = 9,    // {command-list id}
  kClearState = 10,   // the context went back to the cleared state
  kDispatch = 11,     // {x, y, z}
  kRename = 12,       // {resource, alias id}: a map-discard alias became current
  kPresent = 13,      // {surface}
};

// The first two payload words of every private command carrying refcmd records, so a decoder
// can tell them apart from other drivers' private commands.
inline constexpr uint64_t kStreamMagic = 0x434c545243524546ull;

struct Header {
  uint32_t opcode;
  uint32_t size;  // bytes, including this header
};

// Slots of the draw-state snapshot: the order the runtime model's draw-state check uses
// (wddm/draw_state.h; CltraceDecodePrivateDraws in refdriver/refdriver.h decodes kDraw records).
using gpu::DrawSlot;
using gpu::DrawSlotName;
using gpu::kDrawSlotCount;
using gpu::kSlotBlend;
using gpu::kSlotDepthStencil;
using gpu::kSlotDs;
using gpu::kSlotDsv;
using gpu::kSlotGs;
using gpu::kSlotHs;
using gpu::kSlotIb;
using gpu::kSlotInputLayout;
using gpu::kSlotPs;
using gpu::kSlotPsCb0;
using gpu::kSlotPsSampler0;
using gpu::kSlotPsSrv0;
using gpu::kSlotRasterizer;
using gpu::kSlotRtv0;
using gpu::kSlotVb0;
using gpu::kSlotVs;
using gpu::kSlotVsCb0;

struct Draw {
  Header header;  // opcode kDraw
  uint32_t kind;  // 0 Draw, 1 DrawIndexed, 2 DrawInstanced, 3 DrawIndexedInstanced, 4 other
  uint32_t count;
  uint64_t state[kDrawSlotCount];  // IC driver handle (pDrvPrivate) per slot, 0 = unbound
};

struct Generic {  // every other opcode: up to three 64-bit operands
  Header header;
  uint64_t a;
  uint64_t b;
  uint64_t c;
};

}  // namespace cltrace::refcmd

#endif  // CLTRACE_REFDRIVER_COMMAND_STREAM_H_
