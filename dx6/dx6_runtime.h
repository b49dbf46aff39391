// The DX6 runtime side of ddi-spec §7: the loop the Direct3D runtime runs against a driver that
// manages its own vertex and command buffers (gpu::Dx6Driver or any DD_D3DBUFCALLBACKS +
// D3DHAL_CALLBACKS3 implementation), and the checks of R79 and R80 on the driver's answers.
//
//   Init        CanCreateD3DBuffer + CreateD3DBuffer of the implicit vertex buffer (no type
//               caps) right after context creation, then of the command buffer
//               (DDSCAPS2_COMMANDBUFFER); both multi-buffered sets, created at once.
//   batching    render states and triangles go into the current command buffer (DP2 stream,
//               dx6/dp2.h) and implicit vertex buffer; when either is full, or on Flush,
//               D3dDrawPrimitives2 with SWAPCOMMANDBUFFER | SWAPVERTEXBUFFER | EXECUTEBUFFER
//               (+ REQ*BUFSIZE when the next batch needs more room), and the runtime continues
//               in the buffers the driver handed back (locking them to write).
//   explicit    CreateExplicitVertexBuffer (DDSCAPS2_VERTEXBUFFER, optionally WRITEONLY),
//               written with Lock/Unlock, drawn without vertex swapping.
//   user memory DrawUserMemory: D3DHALDP2_USERMEMVERTICES with lpVertices.
//   Shutdown    DestroyD3DBuffer of every buffer the runtime created.
//
// Checks, reported with rule numbers to the ViolationSink:
//   R79  a buffer handed back by a swap is in video memory (inside the driver's video heap)
//        exactly when VIDMEMCOMMANDBUF / VIDMEMVERTEXBUF is set; implicit vertex buffers are
//        never in video memory; explicit ones only when created WRITEONLY.
//   R80  the driver's verdict matches a reference parse of exactly dwCommandLength bytes with
//        dwVertexLength vertices: success iff every command is valid, otherwise dwErrorOffset
//        is the offset of the first invalid command. The bytes after dwCommandLength always
//        hold a stale invalid command, so a driver reading past the length is caught.
//
// Thread-safety: none (one runtime context, one thread).
#ifndef CLTRACE_DX6_DX6_RUNTIME_H_
#define CLTRACE_DX6_DX6_RUNTIME_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ddi/ddi_abi.h"
#include "dx6/dp2.h"
#include "wddm/violation.h"

namespace cltrace::gpu {

// The vertex bytes of `count` triangles of `stride`-byte vertices, a pattern made from `seed`
// (byte i is seed + 7 i): what tests and workloads draw.
std::vector<uint8_t> PatternTriangles(uint32_t count, uint32_t stride, uint64_t seed);

struct Dx6RuntimeOptions {
  uint32_t command_buffer_size = 4096;
  uint32_t vertex_buffer_size = 8192;
  uint32_t fvf = 0x44;  // D3DFVF_XYZRHW | D3DFVF_DIFFUSE: 20-byte vertices
};

class Dx6Runtime {
 public:
  struct Stats {
    uint64_t dp2_calls = 0, failed_dp2 = 0, vidmem_command_swaps = 0, vidmem_vertex_swaps = 0;
    uint64_t buffers_created = 0;
  };

  // `video_heap` is the driver's video memory range (DD_HALINFO.vmiData in a real driver).
  Dx6Runtime(const DD_D3DBUFCALLBACKS* buffers, const D3DHAL_CALLBACKS3* hal,
             std::pair<const uint8_t*, size_t> video_heap, D3DHAL_HCONTEXT context,
             Dx6RuntimeOptions options, ViolationSink* violations);
  ~Dx6Runtime();

  absl::Status Init();
  absl::Status SetRenderState(uint32_t state, uint32_t value);
  // `vertices` holds whole triangles (3 * stride bytes each), copied into the implicit VB.
  absl::Status DrawTriangles(absl::Span<const uint8_t> vertices);
  // Returns an index for DrawExplicit/WriteExplicit.
  absl::StatusOr<uint32_t> CreateExplicitVertexBuffer(uint32_t bytes, bool write_only);
  absl::Status WriteExplicit(uint32_t vb, absl::Span<const uint8_t> bytes);
  absl::Status DrawExplicit(uint32_t vb, uint16_t first_vertex, uint16_t triangles);
  absl::Status DrawUserMemory(absl::Span<const uint8_t> vertices);
  // Appends raw DP2 bytes to the batch (malformed commands exercise dwErrorOffset).
  absl::Status AppendRaw(absl::Span<const uint8_t> bytes);
  // D3dDrawPrimitives2 of the current batch with swaps; `req_*` > 0 sets REQ*BUFSIZE.
  absl::Status Flush(uint32_t req_command_size = 0, uint32_t req_vertex_size = 0);
  absl::Status Shutdown();

  uint32_t stride() const { return stride_; }
  const Stats& stats() const { return stats_; }
  // One line per D3dDrawPrimitives2 call (flags, lengths, verdict): for determinism checks.
  const std::vector<std::string>& log() const { return log_; }
  // The render-state array the driver updates with D3DHALDP2_EXECUTEBUFFER.
  const uint32_t* render_states() const { return rstates_; }

 private:
  struct Surface {  // the runtime's surface object; its address is the DD_HSURFACE
    uint32_t caps = 0, caps2 = 0, size = 0;
  };
  struct Current {  // a buffer the runtime is filling
    DD_HSURFACE handle{};
    uint8_t* data = nullptr;
    uint32_t capacity = 0;
  };
  struct Explicit {
    DD_HSURFACE handle{};
    uint32_t size = 0;
    bool write_only = false;
  };

  absl::StatusOr<DD_HSURFACE> CreateBuffer(uint32_t caps, uint32_t caps2, uint32_t size,
                                           const char* what);
  absl::Status Adopt(Current* cur, DD_HSURFACE h, uint32_t capacity);
  bool InVideo(const void* p) const;
  // One D3dDrawPrimitives2 call over `cmd_` [0, used) with the given vertex source.
  absl::Status Submit(DD_HSURFACE vertex_handle, const void* user_vertices, uint32_t vertex_count,
                      bool swap_vertices, uint32_t req_cmd, uint32_t req_vtx);
  void Violation(rules::Rule rule, std::string message);

  const DD_D3DBUFCALLBACKS* buffers_;
  const D3DHAL_CALLBACKS3* hal_;
  std::pair<const uint8_t*, size_t> heap_;
  D3DHAL_HCONTEXT context_;
  Dx6RuntimeOptions options_;
  ViolationSink* violations_;
  uint32_t stride_;
  std::vector<std::unique_ptr<Surface>> surfaces_;
  std::vector<Explicit> explicit_;
  Current cmd_, vb_;
  std::vector<uint8_t> batch_;  // what was written into cmd_ (for the reference parse)
  uint32_t vertices_ = 0;       // in vb_
  uint32_t rstates_[256] = {};
  bool shut_down_ = false;
  Stats stats_;
  std::vector<std::string> log_;
};

}  // namespace cltrace::gpu

#endif  // CLTRACE_DX6_DX6_RUNTIME_H_
