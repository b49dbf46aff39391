// Content geometry (format/content.h) without absl::Status: the recorder's shim links this file
// and nothing of Abseil's libraries (tests/recorder/shim_deps_test.cc). content.cc wraps the
// layouts in absl::StatusOr for everyone else.
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "ddi/fvf.h"
#include "format/content.h"

namespace cltrace::format {
namespace {

constexpr uint32_t kBuffer = 1;     // D3D10DDIRESOURCE_BUFFER
constexpr uint32_t kTexture3D = 4;  // D3D10DDIRESOURCE_TEXTURE3D

uint32_t MipSize(uint32_t size, uint32_t mip) {
  const uint32_t s = mip >= 32 ? 0 : size >> mip;
  return s == 0 ? 1 : s;
}

uint32_t Blocks(uint32_t texels, uint32_t block) { return (texels + block - 1) / block; }

// Sets *why (when not null) to the printf-formatted reason and returns false.
[[gnu::format(printf, 2, 3)]] bool Fail(std::string* why, const char* fmt, ...) {
  if (why == nullptr) return false;
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  why->assign(buf);
  return false;
}

using ull = unsigned long long;

// The mip level of `subresource`, or false with the reason why it does not exist.
bool MipOf(const ResourceShape& s, uint32_t subresource, uint32_t* mip, std::string* why) {
  const uint32_t mips = s.mip_levels == 0 ? 1 : s.mip_levels;
  const uint32_t slices = s.dimension == kTexture3D || s.array_size == 0 ? 1 : s.array_size;
  // A cube's ArraySize may count cubes or faces: allow six faces per element (nothing is
  // read at an index that does not exist either way, it only decides what is rejected).
  const uint64_t count = uint64_t{mips} * slices * (s.dimension == 5 ? 6 : 1);
  if (subresource >= count) {
    return Fail(why, "subresource %u does not exist (the resource has %llu)", subresource,
                static_cast<ull>(count));
  }
  *mip = subresource % mips;
  return true;
}

}  // namespace

uint32_t Dp2VertexStride(uint32_t vertex_type, uint32_t vertex_size) {
  return vertex_size != 0 ? vertex_size : ddi::FvfStride(vertex_type);
}

uint64_t Dp2VertexBytes(uint32_t vertex_type, uint32_t vertex_size, uint32_t vertex_length) {
  return uint64_t{Dp2VertexStride(vertex_type, vertex_size)} * vertex_length;
}

std::optional<FormatBlock> BlockOf(uint32_t f) {
  // DXGI_FORMAT values (dxgiformat.h). Not hand-written elsewhere in the project: nothing else
  // needs texel sizes.
  if (f >= 1 && f <= 4) return FormatBlock{16};   // R32G32B32A32
  if (f >= 5 && f <= 8) return FormatBlock{12};   // R32G32B32
  if (f >= 9 && f <= 22) return FormatBlock{8};   // R16G16B16A16, R32G32, R32G8X24 family
  if (f >= 23 && f <= 47) return FormatBlock{4};  // 10:10:10:2, 11:11:10, 8888, 16:16, 32, 24:8
  if (f >= 48 && f <= 59) return FormatBlock{2};  // R8G8, R16
  if (f >= 60 && f <= 65) return FormatBlock{1};  // R8, A8
  if (f == 67) return FormatBlock{4};             // R9G9B9E5_SHAREDEXP
  if (f == 68 || f == 69) return FormatBlock{4, 2, 1};  // R8G8_B8G8, G8R8_G8B8
  if ((f >= 70 && f <= 72) || (f >= 79 && f <= 81)) return FormatBlock{8, 4, 4};  // BC1, BC4
  if ((f >= 73 && f <= 78) || (f >= 82 && f <= 84) || (f >= 94 && f <= 99)) {
    return FormatBlock{16, 4, 4};  // BC2, BC3, BC5, BC6H, BC7
  }
  if (f >= 85 && f <= 86) return FormatBlock{2};  // B5G6R5, B5G5R5A1
  if (f >= 87 && f <= 93) return FormatBlock{4};  // B8G8R8A8/X8 family, R10G10B10_XR_BIAS_A2
  if (f == 115) return FormatBlock{2};            // B4G4R4A4
  return std::nullopt;                            // UNKNOWN, R1_UNORM, video and planar formats
}

bool ComputeUploadLayout(const ResourceShape& shape, uint32_t subresource, const Box* box,
                         uint32_t row_pitch, uint32_t depth_pitch, RegionLayout* out,
                         std::string* why) {
  RegionLayout l;
  l.row_pitch = row_pitch;
  l.depth_pitch = depth_pitch;
  if (shape.dimension == kBuffer) {
    if (subresource != 0) return Fail(why, "subresource %u of a buffer (it has one)", subresource);
    uint64_t bytes = shape.width;
    if (box != nullptr) {
      if (box->right <= box->left || box->left < 0 ||
          static_cast<uint64_t>(box->right) > shape.width) {
        return Fail(why, "box [%d, %d) is empty or outside the %u-byte buffer", box->left,
                    box->right, shape.width);
      }
      bytes = static_cast<uint64_t>(box->right - box->left);
    }
    l.row_bytes = bytes;
    l.rows = l.slices = 1;
    *out = l;
    return true;
  }
  const std::optional<FormatBlock> block = BlockOf(shape.format);
  if (!block) return Fail(why, "DXGI format %u has no texel size this tool knows", shape.format);
  uint32_t mip = 0;
  if (!MipOf(shape, subresource, &mip, why)) return false;
  const uint32_t w = MipSize(shape.width, mip), h = MipSize(shape.height, mip);
  const uint32_t d = shape.dimension == kTexture3D ? MipSize(shape.depth, mip) : 1;
  uint32_t rw = w, rh = h, rd = d;
  if (box != nullptr) {
    if (box->left < 0 || box->top < 0 || box->front < 0 || box->right <= box->left ||
        box->bottom <= box->top || box->back <= box->front ||
        static_cast<uint32_t>(box->right) > w || static_cast<uint32_t>(box->bottom) > h ||
        static_cast<uint32_t>(box->back) > d) {
      return Fail(why, "box (%d,%d,%d)-(%d,%d,%d) is empty or outside subresource %u (%ux%ux%u)",
                  box->left, box->top, box->front, box->right, box->bottom, box->back, subresource,
                  w, h, d);
    }
    rw = static_cast<uint32_t>(box->right - box->left);
    rh = static_cast<uint32_t>(box->bottom - box->top);
    rd = static_cast<uint32_t>(box->back - box->front);
  }
  l.row_bytes = uint64_t{Blocks(rw, block->width)} * block->bytes;
  l.rows = Blocks(rh, block->height);
  l.slices = rd;
  if (l.rows > 1 && row_pitch < l.row_bytes) {
    return Fail(why, "RowPitch %u is smaller than a row of the region (%llu bytes)", row_pitch,
                static_cast<ull>(l.row_bytes));
  }
  if (l.slices > 1 && depth_pitch < (l.rows - 1) * uint64_t{row_pitch} + l.row_bytes) {
    return Fail(why, "DepthPitch %u is smaller than a slice of the region", depth_pitch);
  }
  *out = l;
  return true;
}

bool ComputeMappedLayout(const ResourceShape& shape, uint32_t subresource, uint32_t row_pitch,
                         uint32_t depth_pitch, RegionLayout* out, std::string* why) {
  if (shape.dimension == kBuffer) {
    if (!ComputeUploadLayout(shape, subresource, nullptr, 0, 0, out, why)) return false;
    // A driver that maps less than the buffer says so in its pitches.
    if (depth_pitch != 0 && depth_pitch < out->row_bytes) out->row_bytes = depth_pitch;
    return true;
  }
  return ComputeUploadLayout(shape, subresource, nullptr, row_pitch, depth_pitch, out, why);
}

bool ComputeInitialDataLayout(const ResourceShape& shape, const SubresourcePitches* pitches,
                              size_t count, InitialData* out, std::string* why) {
  const uint64_t want = uint64_t{shape.mip_levels} * shape.array_size;
  if (count != want || count == 0) {
    return Fail(why, "%llu pInitialDataUP entries for a resource of %u mip levels x %u slices",
                static_cast<ull>(count), shape.mip_levels, shape.array_size);
  }
  InitialData d;
  d.regions.reserve(count);
  d.offsets.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    RegionLayout l;
    std::string reason;
    if (!ComputeUploadLayout(shape, static_cast<uint32_t>(i), nullptr, pitches[i].row_pitch,
                             pitches[i].depth_pitch, &l, why == nullptr ? nullptr : &reason)) {
      return Fail(why, "initial data of subresource %llu: %s", static_cast<ull>(i), reason.c_str());
    }
    d.offsets.push_back(d.bytes);
    d.regions.push_back(l);
    d.bytes += l.Bytes();
  }
  *out = std::move(d);
  return true;
}

void CopyRegion(const RegionLayout& src, const void* src_bytes, uint64_t dst_row_pitch,
                uint64_t dst_depth_pitch, void* dst) {
  const auto* s = static_cast<const uint8_t*>(src_bytes);
  auto* d = static_cast<uint8_t*>(dst);
  if ((src.rows <= 1 || dst_row_pitch == src.row_pitch) &&
      (src.slices <= 1 || dst_depth_pitch == src.depth_pitch)) {
    std::memcpy(d, s, src.Bytes());
    return;
  }
  for (uint32_t z = 0; z < src.slices; ++z) {
    for (uint32_t y = 0; y < src.rows; ++y) {
      std::memcpy(d + z * dst_depth_pitch + y * dst_row_pitch,
                  s + z * src.depth_pitch + y * src.row_pitch, src.row_bytes);
    }
  }
}

}  // namespace cltrace::format
