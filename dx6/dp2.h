// The DX6 DrawPrimitives2 (DP2) command stream of the model: a writer (what the DX6 runtime
// model puts into a command buffer) and a bounds-checked parser (what the DX6 model driver and
// the R80 check run). Byte layout: dx6/README.md ("DP2 command stream").
//
// Every command is a 4-byte header {uint8 bCommand, uint8 bReserved (0), uint16 wCount}
// followed by a payload whose size depends on the opcode and wCount; everything little-endian,
// no alignment. Primitive commands reference vertices of the current vertex buffer by index;
// an index at or beyond dwVertexLength is an error (R80: the driver stays within
// dwVertexLength). Offsets in results are relative to the first command byte
// (lpDDCommands + dwCommandOffset) [our choice; the DDK pages do not say it clearly].
//
// Thread-safety: pure functions on caller-owned memory.
//
// Example:
//   Dp2Writer w;
//   w.RenderState(/*state=*/7, /*value=*/1);
//   w.TriangleList(/*vstart=*/0, /*count=*/2);
//   Dp2ParseResult r = ParseDp2(w.bytes(), /*vertex_length=*/6, [](const Dp2Command&) {});
#ifndef CLTRACE_DX6_DP2_H_
#define CLTRACE_DX6_DP2_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "ddi/fvf.h"

namespace cltrace::gpu {

// Opcodes of the model's DP2 stream (a subset of the DX6/7 D3DHAL_DP2OPERATION set; values
// are the model's own and documented in dx6/README.md).
enum class Dp2Op : uint8_t {
  kPoints = 1,               // wCount x {u16 wCount, u16 wVStart}
  kIndexedLineList = 2,      // wCount x {u16 wV1, u16 wV2}
  kIndexedTriangleList = 3,  // wCount x {u16 wV1, u16 wV2, u16 wV3, u16 wFlags}
  kRenderState = 8,          // wCount x {u32 RenderState, u32 dwState}
  kLineList = 15,            // {u16 wVStart}: wCount lines
  kLineStrip = 16,           // {u16 wVStart}: wCount lines
  kTriangleList = 18,        // {u16 wVStart}: wCount triangles
  kTriangleStrip = 19,       // {u16 wVStart}: wCount triangles
  kTriangleFan = 21,         // {u16 wVStart}: wCount triangles
  kTextureStageState = 25,   // wCount x {u16 wStage, u16 TSState, u32 dwValue}
  kViewportInfo = 28,        // wCount x {u32 dwX, u32 dwY, u32 dwWidth, u32 dwHeight}
  kWInfo = 29,               // wCount x {f32 dvWNear, f32 dvWFar}
};

std::string Dp2OpName(uint8_t op);

// Bytes per vertex of a flexible vertex format (ddi/fvf.h). The runtime model and the model
// driver size vertex buffers with it.
using ddi::FvfStride;

// Builds a DP2 command stream.
class Dp2Writer {
 public:
  void RenderState(uint32_t state, uint32_t value);
  void TextureStageState(uint16_t stage, uint16_t state, uint32_t value);
  void Viewport(uint32_t x, uint32_t y, uint32_t width, uint32_t height);
  void WInfo(float w_near, float w_far);
  void Points(uint16_t count, uint16_t vstart);
  void LineList(uint16_t vstart, uint16_t count);
  void LineStrip(uint16_t vstart, uint16_t count);
  void TriangleList(uint16_t vstart, uint16_t count);
  void TriangleStrip(uint16_t vstart, uint16_t count);
  void TriangleFan(uint16_t vstart, uint16_t count);
  void IndexedTriangleList(absl::Span<const uint16_t> indices);  // 3 per triangle
  void IndexedLineList(absl::Span<const uint16_t> indices);      // 2 per line
  // Appends raw bytes (tests and planted bugs use it to write malformed commands).
  void Raw(absl::Span<const uint8_t> bytes);

  const std::vector<uint8_t>& bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }
  void clear() { bytes_.clear(); }

 private:
  // The non-indexed primitives' form: the header, then {u16 wVStart}.
  void Run(Dp2Op op, uint16_t vstart, uint16_t count);
  void Header(Dp2Op op, uint16_t count);
  void U16(uint16_t v);
  void U32(uint32_t v);
  std::vector<uint8_t> bytes_;
};

// What ParseDp2 reports to its visitor for every command it accepts.
struct Dp2Command {
  uint8_t op = 0;
  uint16_t count = 0;
  uint32_t offset = 0;                // of the header, from the first command byte
  absl::Span<const uint8_t> payload;  // bytes after the header
  uint32_t first_vertex = 0;          // primitives: lowest vertex index referenced
  uint32_t vertex_end = 0;            // primitives: one past the highest index referenced
  uint32_t primitive_count = 0;       // primitives: number of points/lines/triangles
};

struct Dp2ParseResult {
  bool ok = true;
  uint32_t commands = 0;      // commands accepted before the first failure
  uint32_t primitives = 0;    // primitives drawn by accepted commands
  uint32_t error_offset = 0;  // first unhandled command (valid when !ok)
  std::string error;          // why (valid when !ok)
};

// Parses `commands` (exactly dwCommandLength bytes; never reads outside it) with vertex
// indices bounded by `vertex_length`. Calls `visit` for each accepted command, in order.
// Unknown opcodes go to `unknown` if given (it returns the payload length it consumed, or -1 to
// reject); otherwise they fail. Stops at the first failure.
Dp2ParseResult ParseDp2(
    absl::Span<const uint8_t> commands, uint32_t vertex_length,
    absl::FunctionRef<void(const Dp2Command&)> visit,
    absl::FunctionRef<int64_t(uint8_t op, uint16_t count, absl::Span<const uint8_t> rest)> unknown);
Dp2ParseResult ParseDp2(absl::Span<const uint8_t> commands, uint32_t vertex_length,
                        absl::FunctionRef<void(const Dp2Command&)> visit);

}  // namespace cltrace::gpu

#endif  // CLTRACE_DX6_DP2_H_
