// Which calls carry content (Event::content, FORMAT.md §3.8) and how many bytes of the
// application's memory that content is: the one definition the recorder (which copies the
// bytes) and the replayer (which hands them to the driver again) share.
//
// Roles are the catalog's content= (ddi/call_traits.h; a test holds them to the calls'
// function-pointer typedefs):
//   content=upload  kUploadSource: the bytes at pSysMemUP, laid out by the call's pDstBox,
//                   RowPitch and DepthPitch;
//   content=map     kMap: pMappedSubResource says where the memory is and its pitches
//                   (nothing captured here);
//   content=unmap   kUnmap: the whole mapped subresource, as the application left it, laid
//                   out by the Map's pitches (not captured for a D3D10_DDI_MAP_READ);
//   content=dp2     kDrawPrimitives2 (DX6): the DP2 command bytes [dwCommandOffset,
//                   + dwCommandLength) of lpDDCommands, then the Dp2VertexBytes() bytes of the
//                   vertex source (lpVertices with USERMEMVERTICES, else lpDDVertex at
//                   dwVertexOffset), as the runtime left them at the call (ddi-spec §7 step 2).
//   content=initial kInitialData: a CreateResource's initial data, the region of every
//                   pInitialDataUP[i].pSysMem (the whole subresource i laid out by its
//                   SysMemPitch and SysMemSlicePitch; a buffer's is its ByteWidth), in
//                   subresource order, concatenated (InitialDataLayout).
//
// Geometry follows D3D11's rules for a subresource: index = mip + slice × MipLevels; a mip's
// size is max(1, size >> mip); rows and columns count blocks (4 × 4 texels for BC formats,
// 2 × 1 for the packed 4:2:2 formats); a buffer's width and box are in bytes. A region of R
// rows of B bytes in S slices spans (S − 1) × DepthPitch + (R − 1) × RowPitch + B bytes.
//
// Thread-safety: pure functions.
//
// Example (recorder, at UpdateSubresourceUP):
//   absl::StatusOr<RegionLayout> l = UploadLayout(shape, sub, box, row_pitch, depth_pitch);
//   if (l.ok()) content.assign(static_cast<const char*>(pSysMemUP), l->Bytes());
#ifndef CLTRACE_FORMAT_CONTENT_H_
#define CLTRACE_FORMAT_CONTENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ddi/call_ids.h"
#include "ddi/call_traits.h"

namespace cltrace::format {

using ddi::ContentRole;
constexpr ContentRole ContentRoleOf(CallId call) { return ddi::TraitsOf(call).content; }

// Most bytes one call's content may hold. A recorder captures nothing above it (and says so);
// well below what one trace chunk may hold (FORMAT.md §3.8).
inline constexpr uint64_t kMaxContentBytes = uint64_t{64} << 20;

// DX6 D3dDrawPrimitives2: bytes per vertex (dwVertexSize, or the size dwVertexType's FVF flags
// give when it is 0) and the vertex bytes of the call's content (dwVertexLength vertices; 0
// without a vertex source). The content of a DP2 call is its dwCommandLength command bytes
// followed by these.
uint32_t Dp2VertexStride(uint32_t vertex_type, uint32_t vertex_size);
uint64_t Dp2VertexBytes(uint32_t vertex_type, uint32_t vertex_size, uint32_t vertex_length);

// A resource as D3D11DDIARG_CREATERESOURCE describes it.
struct ResourceShape {
  uint32_t dimension = 0;  // D3D10DDIRESOURCE_BUFFER .. _TEXTURECUBE
  uint32_t format = 0;     // DXGI_FORMAT (ignored for buffers)
  uint32_t width = 0, height = 0, depth = 0;
  uint32_t mip_levels = 0, array_size = 0;
};
// The shape a CreateResource event (any call whose fields include pCreateResource's
// ResourceDimension, MipLevels, ... and pMipInfoList) recorded, the sizes being those of
// pMipInfoList[0] (0 when it is NULL or empty); nullopt if the call has no such fields or the
// structure pointer was NULL.
std::optional<ResourceShape> ShapeOfCreate(CallId call, absl::Span<const uint64_t> args);

// The bytes of one region of a subresource in application memory.
struct RegionLayout {
  uint64_t row_bytes = 0;  // bytes of one row of blocks
  uint32_t rows = 0;       // rows of blocks per slice
  uint32_t slices = 0;
  uint64_t row_pitch = 0, depth_pitch = 0;
  uint64_t Bytes() const {
    if (rows == 0 || slices == 0 || row_bytes == 0) return 0;
    return (slices - 1) * depth_pitch + (rows - 1) * row_pitch + row_bytes;
  }
};

// A box in the units of D3D10_DDI_BOX (bytes for buffers, texels otherwise).
struct Box {
  int32_t left = 0, top = 0, front = 0, right = 0, bottom = 0, back = 0;
};

// The source of an UpdateSubresourceUP of `subresource` (the box, or the whole subresource
// when `box` is null). InvalidArgument naming the problem for an unknown format, a subresource
// or box outside the resource, an empty box, or pitches smaller than a row / a slice.
absl::StatusOr<RegionLayout> UploadLayout(const ResourceShape& shape, uint32_t subresource,
                                          const Box* box, uint32_t row_pitch, uint32_t depth_pitch);
// The whole of a mapped `subresource`, with the pitches the driver's Map returned (a buffer
// is its width in bytes, bounded by DepthPitch when the driver reports a smaller one).
absl::StatusOr<RegionLayout> MappedLayout(const ResourceShape& shape, uint32_t subresource,
                                          uint32_t row_pitch, uint32_t depth_pitch);

// The same two layouts without absl::Status, for code that links no Abseil library (the
// recorder's shim): false, with the reason in *why (when not null), where the functions above
// return InvalidArgument.
bool ComputeUploadLayout(const ResourceShape& shape, uint32_t subresource, const Box* box,
                         uint32_t row_pitch, uint32_t depth_pitch, RegionLayout* out,
                         std::string* why);
bool ComputeMappedLayout(const ResourceShape& shape, uint32_t subresource, uint32_t row_pitch,
                         uint32_t depth_pitch, RegionLayout* out, std::string* why);

// The initial data of a CreateResource (content=initial): pInitialDataUP has one entry per
// subresource (MipLevels × ArraySize, index = mip + slice × MipLevels), each the whole
// subresource as UploadLayout lays it out without a box, with the entry's SysMemPitch as
// RowPitch and SysMemSlicePitch as DepthPitch (ignored where the subresource has one row or
// one slice; a buffer's region is its ByteWidth, pitches ignored). The content is those
// regions concatenated in subresource order, without padding between them.
struct SubresourcePitches {
  uint32_t row_pitch = 0;    // SysMemPitch
  uint32_t depth_pitch = 0;  // SysMemSlicePitch
};
struct InitialData {
  std::vector<RegionLayout> regions;  // one per subresource, in subresource order
  std::vector<uint64_t> offsets;      // where region i starts in the content
  uint64_t bytes = 0;                 // the content's size: the sum of the regions' Bytes()
};
// InvalidArgument (or false and *why) naming the subresource for a count other than
// MipLevels × ArraySize, an unknown format, or pitches smaller than a row / a slice.
absl::StatusOr<InitialData> InitialDataLayout(const ResourceShape& shape,
                                              absl::Span<const SubresourcePitches> pitches);
bool ComputeInitialDataLayout(const ResourceShape& shape, const SubresourcePitches* pitches,
                              size_t count, InitialData* out, std::string* why);
// The pitches of the pInitialDataUP a CreateResource event recorded (any call whose fields
// include pCreateResource's pInitialDataUP); nullopt when the call has no such field, or the
// structure or the array pointer was NULL (no initial data).
std::optional<std::vector<SubresourcePitches>> InitialDataOfCreate(CallId call,
                                                                   absl::Span<const uint64_t> args);

// Copies a region laid out as `src` into memory with other pitches, row by row (one memcpy
// when the pitches agree). `dst` must hold the region at dst_row_pitch / dst_depth_pitch.
void CopyRegion(const RegionLayout& src, const void* src_bytes, uint64_t dst_row_pitch,
                uint64_t dst_depth_pitch, void* dst);

// Bytes per block and block size of a DXGI format; nullopt for DXGI_FORMAT_UNKNOWN and
// formats this table does not describe (planar video formats).
struct FormatBlock {
  uint32_t bytes = 0;
  uint32_t width = 1, height = 1;
};
std::optional<FormatBlock> BlockOf(uint32_t dxgi_format);

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_CONTENT_H_
