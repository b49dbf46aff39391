// The DX6 model driver: driver-managed vertex and command buffers (DD_D3DBUFCALLBACKS) and
// D3dDrawPrimitives2 (D3DHAL_CALLBACKS3), ddi-spec §7, through the C tables of
// ddi/ddi_abi.h so a recorder can wrap them.
//
// Buffers: CreateD3DBuffer sees DDSCAPS_EXECUTEBUFFER surfaces; dwCaps2 tells the kind
// (DDSCAPS2_COMMANDBUFFER, DDSCAPS2_VERTEXBUFFER, neither = implicit vertex buffer). Implicit
// vertex buffers and command buffers are multi-buffered: the whole set is created at once and
// the first buffer returned (the runtime's surface handle); the others get driver-owned
// DD_HSURFACE handles that D3dDrawPrimitives2 swaps in. Placement: implicit VBs are read/write
// and always in system memory; explicit VBs go to video memory only with DDSCAPS_WRITEONLY;
// command buffers (write-only) alternate system / video; anything larger than
// `max_video_buffer` is backed by system memory. Video memory is the driver's heap, whose
// range the runtime learns out of band (video_heap(), DD_HALINFO.vmiData in a real driver).
//
// D3dDrawPrimitives2: parses the DP2 stream (dx6/dp2.h) strictly inside dwCommandLength and
// dwVertexLength, applies it to the context's render-target digest, updates lpdwRStates with
// D3DHALDP2_EXECUTEBUFFER, sets dwErrorOffset on failure (ddrval E_FAIL), and with
// SWAPCOMMANDBUFFER / SWAPVERTEXBUFFER hands back the next buffer of the set (at least
// dwReqCommandBufSize / dwReqVertexBufSize bytes with the REQ flags), reporting
// VIDMEMCOMMANDBUF / VIDMEMVERTEXBUF when that buffer is in video memory. The old buffer is
// "processed asynchronously": busy for the next two D3dDrawPrimitives2 calls (a Lock with
// DDLOCK_WAIT completes it).
//
// Planted bugs: kR79ImplicitVbInVidmem (swaps an implicit VB into video memory and does not set
// VIDMEMVERTEXBUF), kR80BadErrorOffset (parses to the end of the buffer, ignoring
// dwCommandLength).
//
// One instance per process at a time: the DD_D3DBUFCALLBACKS arguments of the catalog carry no
// driver pointer (the real DD_*DATA structures have lpDD / dhpdev, which the catalog leaves
// out), so the C entry points reach the most recently constructed Dx6Driver.
//
// Thread-safety: none; the DX6 runtime model calls it from one thread.
#ifndef CLTRACE_DX6_DX6_DRIVER_H_
#define CLTRACE_DX6_DX6_DRIVER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "ddi/ddi_abi.h"
#include "wddm/violation.h"

namespace cltrace::gpu {

struct Dx6DriverOptions {
  uint32_t buffers_per_set = 3;           // multi-buffered sets
  uint32_t video_heap_bytes = 1u << 20;   // the card's memory for D3D buffers
  uint32_t max_video_buffer = 64u << 10;  // larger buffers are backed by system memory
  PlantedBug bug = PlantedBug::kNone;
};

// The model's stand-in for D3DERR_COMMAND_UNPARSED (not in the catalog): ddrval on a DP2
// stream the driver could not process.
inline constexpr uint32_t kDp2Unparsed = 0x80004005;  // E_FAIL

class Dx6Driver {
 public:
  struct Stats {
    uint64_t dp2_calls = 0, command_swaps = 0, vertex_swaps = 0, failures = 0;
    uint64_t buffers_created = 0, buffers_destroyed = 0;
  };

  explicit Dx6Driver(Dx6DriverOptions options = {});
  ~Dx6Driver();
  Dx6Driver(const Dx6Driver&) = delete;
  Dx6Driver& operator=(const Dx6Driver&) = delete;

  // What DD_HALINFO.lpD3DBufCallbacks / the D3DHAL_CALLBACKS3 the driver reports point at.
  const DD_D3DBUFCALLBACKS* buffer_callbacks() const;
  const D3DHAL_CALLBACKS3* hal_callbacks3() const;

  // D3dContextCreate / D3dContextDestroy (D3DHAL_CALLBACKS; not in the catalog).
  D3DHAL_HCONTEXT CreateContext();
  void DestroyContext(D3DHAL_HCONTEXT context);
  // DD_HALINFO.vmiData: [base, base + size) is video memory.
  std::pair<const uint8_t*, size_t> video_heap() const;

  // Content of the context's render target (folds every primitive drawn), for determinism.
  uint64_t ContextDigest(D3DHAL_HCONTEXT context) const;
  // Buffers the driver currently holds (all sets, all members) and video bytes in use: both 0
  // after a correct teardown.
  // The memory of the buffer `h` names (any member of a set) as it is now, empty if the driver
  // holds no such buffer: where a replay writes what the recorded runtime wrote into it.
  absl::Span<uint8_t> BufferMemory(DD_HSURFACE h);
  size_t live_buffers() const;
  size_t video_bytes_in_use() const;
  const Stats& stats() const { return stats_; }

  struct Buffer;
  struct Set;
  struct Context;

 private:
  friend struct Dx6EntryPoints;
  Buffer* Find(DD_HSURFACE h);
  bool PlaceBuffer(Buffer* b, uint32_t size, bool video);
  void FreeBuffer(Buffer* b);
  void Retire();  // one DP2 call passed: busy buffers age

  Dx6DriverOptions options_;
  std::vector<uint8_t> heap_;
  std::map<uint32_t, uint32_t> heap_free_;  // offset -> size
  std::map<const void*, Buffer*> by_handle_;
  std::vector<std::unique_ptr<Set>> sets_;
  std::map<uint32_t, std::unique_ptr<Context>> contexts_;
  uint32_t next_context_ = 1;
  size_t video_in_use_ = 0;
  Stats stats_;
};

}  // namespace cltrace::gpu

#endif  // CLTRACE_DX6_DX6_DRIVER_H_
