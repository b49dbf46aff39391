#include "format/content.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "ddi/catalog.h"
#include "ddi/ddi_abi.h"
#include "ddi/fvf.h"

namespace cltrace::format {
namespace {

constexpr uint32_t kBuffer = 1;     // D3D10DDIRESOURCE_BUFFER
constexpr uint32_t kTexture3D = 4;  // D3D10DDIRESOURCE_TEXTURE3D

uint32_t MipSize(uint32_t size, uint32_t mip) {
  const uint32_t s = mip >= 32 ? 0 : size >> mip;
  return s == 0 ? 1 : s;
}

uint32_t Blocks(uint32_t texels, uint32_t block) { return (texels + block - 1) / block; }

// The mip level of `subresource`, or an error naming why it does not exist.
absl::StatusOr<uint32_t> MipOf(const ResourceShape& s, uint32_t subresource) {
  const uint32_t mips = s.mip_levels == 0 ? 1 : s.mip_levels;
  const uint32_t slices = s.dimension == kTexture3D || s.array_size == 0 ? 1 : s.array_size;
  // A cube's ArraySize may count cubes or faces: allow six faces per element (nothing is
  // read at an index that does not exist either way, it only decides what is rejected).
  const uint64_t count = uint64_t{mips} * slices * (s.dimension == 5 ? 6 : 1);
  if (subresource >= count) {
    return absl::InvalidArgumentError(
        absl::StrFormat("subresource %d does not exist (the resource has %d)", subresource, count));
  }
  return subresource % mips;
}

}  // namespace

uint32_t Dp2VertexStride(uint32_t vertex_type, uint32_t vertex_size) {
  return vertex_size != 0 ? vertex_size : ddi::FvfStride(vertex_type);
}

uint64_t Dp2VertexBytes(uint32_t vertex_type, uint32_t vertex_size, uint32_t vertex_length) {
  return uint64_t{Dp2VertexStride(vertex_type, vertex_size)} * vertex_length;
}

std::optional<ResourceShape> ShapeOfCreate(CallId call, absl::Span<const uint64_t> args) {
  const CallInfo* ci = GetCall(call);
  if (ci == nullptr) return std::nullopt;
  auto get = [&](const char* name) -> std::optional<uint32_t> {
    const int i = FieldIndex(*ci, name);
    if (i < 0 || static_cast<size_t>(i) >= args.size()) return std::nullopt;
    return static_cast<uint32_t>(args[i]);
  };
  const std::optional<uint32_t> present = get("pCreateResource");
  if (!present || *present == 0) return std::nullopt;
  ResourceShape s;
  std::optional<uint32_t> v;
  if (!(v = get("ResourceDimension"))) return std::nullopt;
  s.dimension = *v;
  s.format = get("Format").value_or(0);
  s.mip_levels = get("MipLevels").value_or(0);
  // The most detailed mip's size: element 0 of pMipInfoList, whose elements follow the fixed
  // fields after those of the arrays before it (FORMAT.md §3.3).
  const absl::Span<const FieldInfo> fields = Fields(*ci);
  size_t cursor = fields.size();
  for (size_t i = 0; i < fields.size() && i < args.size(); ++i) {
    if (fields[i].kind != FieldKind::kArray) continue;
    const absl::Span<const FieldInfo> elems = ElementFields(fields[i]);
    const uint64_t n = args[i] == 0 ? 0 : args[i] - 1;
    if (absl::string_view(fields[i].name) == "pMipInfoList") {
      if (n == 0) break;
      auto elem = [&](absl::string_view name) -> uint32_t {
        for (size_t j = 0; j < elems.size(); ++j) {
          if (name == elems[j].name && cursor + j < args.size())
            return static_cast<uint32_t>(args[cursor + j]);
        }
        return 0;
      };
      s.width = elem("TexelWidth");
      s.height = elem("TexelHeight");
      s.depth = elem("TexelDepth");
      break;
    }
    if (n > args.size()) break;  // malformed: sizes nothing
    cursor += n * elems.size();
  }
  s.array_size = get("ArraySize").value_or(0);
  return s;
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

absl::StatusOr<RegionLayout> UploadLayout(const ResourceShape& shape, uint32_t subresource,
                                          const Box* box, uint32_t row_pitch,
                                          uint32_t depth_pitch) {
  RegionLayout l;
  l.row_pitch = row_pitch;
  l.depth_pitch = depth_pitch;
  if (shape.dimension == kBuffer) {
    if (subresource != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("subresource %d of a buffer (it has one)", subresource));
    }
    uint64_t bytes = shape.width;
    if (box != nullptr) {
      if (box->right <= box->left || box->left < 0 ||
          static_cast<uint64_t>(box->right) > shape.width) {
        return absl::InvalidArgumentError(
            absl::StrFormat("box [%d, %d) is empty or outside the %d-byte buffer", box->left,
                            box->right, shape.width));
      }
      bytes = static_cast<uint64_t>(box->right - box->left);
    }
    l.row_bytes = bytes;
    l.rows = l.slices = 1;
    return l;
  }
  const std::optional<FormatBlock> block = BlockOf(shape.format);
  if (!block) {
    return absl::InvalidArgumentError(
        absl::StrFormat("DXGI format %d has no texel size this tool knows", shape.format));
  }
  absl::StatusOr<uint32_t> mip = MipOf(shape, subresource);
  if (!mip.ok()) return mip.status();
  const uint32_t w = MipSize(shape.width, *mip), h = MipSize(shape.height, *mip);
  const uint32_t d = shape.dimension == kTexture3D ? MipSize(shape.depth, *mip) : 1;
  uint32_t rw = w, rh = h, rd = d;
  if (box != nullptr) {
    if (box->left < 0 || box->top < 0 || box->front < 0 || box->right <= box->left ||
        box->bottom <= box->top || box->back <= box->front ||
        static_cast<uint32_t>(box->right) > w || static_cast<uint32_t>(box->bottom) > h ||
        static_cast<uint32_t>(box->back) > d) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "box (%d,%d,%d)-(%d,%d,%d) is empty or outside subresource %d (%dx%dx%d)", box->left,
          box->top, box->front, box->right, box->bottom, box->back, subresource, w, h, d));
    }
    rw = static_cast<uint32_t>(box->right - box->left);
    rh = static_cast<uint32_t>(box->bottom - box->top);
    rd = static_cast<uint32_t>(box->back - box->front);
  }
  l.row_bytes = uint64_t{Blocks(rw, block->width)} * block->bytes;
  l.rows = Blocks(rh, block->height);
  l.slices = rd;
  if (l.rows > 1 && row_pitch < l.row_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "RowPitch %d is smaller than a row of the region (%d bytes)", row_pitch, l.row_bytes));
  }
  if (l.slices > 1 && depth_pitch < (l.rows - 1) * uint64_t{row_pitch} + l.row_bytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("DepthPitch %d is smaller than a slice of the region", depth_pitch));
  }
  return l;
}

absl::StatusOr<RegionLayout> MappedLayout(const ResourceShape& shape, uint32_t subresource,
                                          uint32_t row_pitch, uint32_t depth_pitch) {
  if (shape.dimension == kBuffer) {
    absl::StatusOr<RegionLayout> l = UploadLayout(shape, subresource, nullptr, 0, 0);
    // A driver that maps less than the buffer says so in its pitches.
    if (l.ok() && depth_pitch != 0 && depth_pitch < l->row_bytes) l->row_bytes = depth_pitch;
    return l;
  }
  return UploadLayout(shape, subresource, nullptr, row_pitch, depth_pitch);
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
