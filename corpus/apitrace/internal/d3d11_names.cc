#include "corpus/apitrace/internal/d3d11_names.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ddi/catalog.h"

namespace cltrace::apitrace::internal {
namespace {

// ---- D3D11 names ----------------------------------------------------------------------------
// D3D11 enum and flag names without their "D3D11_" / "D3D10_" / "D3D_" prefix, with the value
// the 11.0 DDI takes (the same number as the API's except for the bind flags, which the DDI
// numbers differently, and the misc flags the DDI does not have).
struct NameValue {
  const char* name;
  uint32_t value;
};
constexpr NameValue kNames[] = {
    // BOOL (apitrace prints it as an enum) and the API's named constants
    {"FALSE", 0},
    {"TRUE", 1},
    {"DEFAULT_SAMPLE_MASK", 0xffffffffu},
    {"KEEP_RENDER_TARGETS_AND_DEPTH_STENCIL", 0xffffffffu},
    {"KEEP_UNORDERED_ACCESS_VIEWS", 0xffffffffu},
    {"SO_NO_RASTERIZED_STREAM", 0xffffffffu},
    // D3D11_USAGE
    {"USAGE_DEFAULT", 0},
    {"USAGE_IMMUTABLE", 1},
    {"USAGE_DYNAMIC", 2},
    {"USAGE_STAGING", 3},
    // D3D11_BIND_FLAG -> D3D10_DDI_RESOURCE_BIND_FLAG
    {"BIND_VERTEX_BUFFER", 0x1},
    {"BIND_INDEX_BUFFER", 0x2},
    {"BIND_CONSTANT_BUFFER", 0x4},
    {"BIND_SHADER_RESOURCE", 0x8},
    {"BIND_STREAM_OUTPUT", 0x10},
    {"BIND_RENDER_TARGET", 0x20},
    {"BIND_DEPTH_STENCIL", 0x40},
    {"BIND_UNORDERED_ACCESS", 0x100},
    {"BIND_DECODER", 0x200},
    // D3D11_CPU_ACCESS_FLAG -> the DDI's map bits (read 1, write 2)
    {"CPU_ACCESS_READ", 0x1},
    {"CPU_ACCESS_WRITE", 0x2},
    // D3D11_RESOURCE_MISC_FLAG -> D3D10_DDI_RESOURCE_MISC_FLAG (cube: the dimension instead)
    {"RESOURCE_MISC_GENERATE_MIPS", 0x1},
    {"RESOURCE_MISC_SHARED", 0x2},
    {"RESOURCE_MISC_TEXTURECUBE", 0},
    {"RESOURCE_MISC_DRAWINDIRECT_ARGS", 0x10},
    {"RESOURCE_MISC_BUFFER_ALLOW_RAW_VIEWS", 0x20},
    {"RESOURCE_MISC_BUFFER_STRUCTURED", 0x40},
    {"RESOURCE_MISC_RESOURCE_CLAMP", 0},
    {"RESOURCE_MISC_SHARED_KEYEDMUTEX", 0},
    {"RESOURCE_MISC_GDI_COMPATIBLE", 0},
    // D3D11_MAP, D3D11_MAP_FLAG
    {"MAP_READ", 1},
    {"MAP_WRITE", 2},
    {"MAP_READ_WRITE", 3},
    {"MAP_WRITE_DISCARD", 4},
    {"MAP_WRITE_NO_OVERWRITE", 5},
    {"MAP_FLAG_DO_NOT_WAIT", 0x100000},
    // D3D11_QUERY
    {"QUERY_EVENT", 0},
    {"QUERY_OCCLUSION", 1},
    {"QUERY_TIMESTAMP", 2},
    {"QUERY_TIMESTAMP_DISJOINT", 3},
    {"QUERY_PIPELINE_STATISTICS", 4},
    {"QUERY_OCCLUSION_PREDICATE", 5},
    {"QUERY_SO_STATISTICS", 6},
    {"QUERY_SO_OVERFLOW_PREDICATE", 7},
    {"QUERY_MISC_PREDICATEHINT", 1},
    // D3D11_COUNTER
    {"COUNTER_DEVICE_DEPENDENT_0", 0x40000000},
    {"ASYNC_GETDATA_DONOTFLUSH", 1},
    // D3D11_PRIMITIVE_TOPOLOGY (the patch lists are added by ValueOf)
    {"PRIMITIVE_TOPOLOGY_UNDEFINED", 0},
    {"PRIMITIVE_TOPOLOGY_POINTLIST", 1},
    {"PRIMITIVE_TOPOLOGY_LINELIST", 2},
    {"PRIMITIVE_TOPOLOGY_LINESTRIP", 3},
    {"PRIMITIVE_TOPOLOGY_TRIANGLELIST", 4},
    {"PRIMITIVE_TOPOLOGY_TRIANGLESTRIP", 5},
    {"PRIMITIVE_TOPOLOGY_LINELIST_ADJ", 10},
    {"PRIMITIVE_TOPOLOGY_LINESTRIP_ADJ", 11},
    {"PRIMITIVE_TOPOLOGY_TRIANGLELIST_ADJ", 12},
    {"PRIMITIVE_TOPOLOGY_TRIANGLESTRIP_ADJ", 13},
    // D3D11_INPUT_CLASSIFICATION, D3D11_CLEAR_FLAG
    {"APPEND_ALIGNED_ELEMENT", 0xffffffffu},
    {"INPUT_PER_VERTEX_DATA", 0},
    {"INPUT_PER_INSTANCE_DATA", 1},
    {"CLEAR_DEPTH", 1},
    {"CLEAR_STENCIL", 2},
    // D3D11_BLEND, D3D11_BLEND_OP, D3D11_COLOR_WRITE_ENABLE
    {"BLEND_ZERO", 1},
    {"BLEND_ONE", 2},
    {"BLEND_SRC_COLOR", 3},
    {"BLEND_INV_SRC_COLOR", 4},
    {"BLEND_SRC_ALPHA", 5},
    {"BLEND_INV_SRC_ALPHA", 6},
    {"BLEND_DEST_ALPHA", 7},
    {"BLEND_INV_DEST_ALPHA", 8},
    {"BLEND_DEST_COLOR", 9},
    {"BLEND_INV_DEST_COLOR", 10},
    {"BLEND_SRC_ALPHA_SAT", 11},
    {"BLEND_BLEND_FACTOR", 14},
    {"BLEND_INV_BLEND_FACTOR", 15},
    {"BLEND_SRC1_COLOR", 16},
    {"BLEND_INV_SRC1_COLOR", 17},
    {"BLEND_SRC1_ALPHA", 18},
    {"BLEND_INV_SRC1_ALPHA", 19},
    {"BLEND_OP_ADD", 1},
    {"BLEND_OP_SUBTRACT", 2},
    {"BLEND_OP_REV_SUBTRACT", 3},
    {"BLEND_OP_MIN", 4},
    {"BLEND_OP_MAX", 5},
    {"COLOR_WRITE_ENABLE_RED", 1},
    {"COLOR_WRITE_ENABLE_GREEN", 2},
    {"COLOR_WRITE_ENABLE_BLUE", 4},
    {"COLOR_WRITE_ENABLE_ALPHA", 8},
    {"COLOR_WRITE_ENABLE_ALL", 15},
    // D3D11_COMPARISON_FUNC, D3D11_DEPTH_WRITE_MASK, D3D11_STENCIL_OP
    {"COMPARISON_NEVER", 1},
    {"COMPARISON_LESS", 2},
    {"COMPARISON_EQUAL", 3},
    {"COMPARISON_LESS_EQUAL", 4},
    {"COMPARISON_GREATER", 5},
    {"COMPARISON_NOT_EQUAL", 6},
    {"COMPARISON_GREATER_EQUAL", 7},
    {"COMPARISON_ALWAYS", 8},
    {"DEPTH_WRITE_MASK_ZERO", 0},
    {"DEPTH_WRITE_MASK_ALL", 1},
    {"STENCIL_OP_KEEP", 1},
    {"STENCIL_OP_ZERO", 2},
    {"STENCIL_OP_REPLACE", 3},
    {"STENCIL_OP_INCR_SAT", 4},
    {"STENCIL_OP_DECR_SAT", 5},
    {"STENCIL_OP_INVERT", 6},
    {"STENCIL_OP_INCR", 7},
    {"STENCIL_OP_DECR", 8},
    // D3D11_FILL_MODE, D3D11_CULL_MODE, D3D11_TEXTURE_ADDRESS_MODE
    {"FILL_WIREFRAME", 2},
    {"FILL_SOLID", 3},
    {"CULL_NONE", 1},
    {"CULL_FRONT", 2},
    {"CULL_BACK", 3},
    {"TEXTURE_ADDRESS_WRAP", 1},
    {"TEXTURE_ADDRESS_MIRROR", 2},
    {"TEXTURE_ADDRESS_CLAMP", 3},
    {"TEXTURE_ADDRESS_BORDER", 4},
    {"TEXTURE_ADDRESS_MIRROR_ONCE", 5},
    // D3D11_FILTER (the COMPARISON_ variants are added by ValueOf)
    {"FILTER_MIN_MAG_MIP_POINT", 0x0},
    {"FILTER_MIN_MAG_POINT_MIP_LINEAR", 0x1},
    {"FILTER_MIN_POINT_MAG_LINEAR_MIP_POINT", 0x4},
    {"FILTER_MIN_POINT_MAG_MIP_LINEAR", 0x5},
    {"FILTER_MIN_LINEAR_MAG_MIP_POINT", 0x10},
    {"FILTER_MIN_LINEAR_MAG_POINT_MIP_LINEAR", 0x11},
    {"FILTER_MIN_MAG_LINEAR_MIP_POINT", 0x14},
    {"FILTER_MIN_MAG_MIP_LINEAR", 0x15},
    {"FILTER_ANISOTROPIC", 0x55},
    // D3D11_CREATE_DEVICE_FLAG (only SINGLETHREADED reaches the DDI)
    {"CREATE_DEVICE_SINGLETHREADED", 0x10},
    {"CREATE_DEVICE_DEBUG", 0},
    {"CREATE_DEVICE_BGRA_SUPPORT", 0},
    {"CREATE_DEVICE_SWITCH_TO_REF", 0},
    {"CREATE_DEVICE_PREVENT_INTERNAL_THREADING_OPTIMIZATIONS", 0},
    {"CREATE_DEVICE_VIDEO_SUPPORT", 0},
    {"CREATE_DEVICE_DEBUGGABLE", 0},
    {"CREATE_DEVICE_PREVENT_ALTERING_LAYER_SETTINGS_FROM_REGISTRY", 0},
    {"CREATE_DEVICE_DISABLE_GPU_TIMEOUT", 0},
    // DXGI_USAGE
    {"DXGI_RESOURCE_PRIORITY_MINIMUM", 0x28000000},
    {"DXGI_RESOURCE_PRIORITY_LOW", 0x50000000},
    {"DXGI_RESOURCE_PRIORITY_NORMAL", 0x78000000},
    {"DXGI_RESOURCE_PRIORITY_HIGH", 0xa0000000},
    {"DXGI_RESOURCE_PRIORITY_MAXIMUM", 0xc8000000},
    {"DXGI_USAGE_SHADER_INPUT", 0x8},
    {"DXGI_USAGE_RENDER_TARGET_OUTPUT", 0x20},
    {"DXGI_USAGE_BACK_BUFFER", 0},
    {"DXGI_USAGE_SHARED", 0},
    {"DXGI_USAGE_READ_ONLY", 0},
    {"DXGI_USAGE_DISCARD_ON_PRESENT", 0},
    {"DXGI_USAGE_UNORDERED_ACCESS", 0x100},
};

absl::string_view Unprefixed(absl::string_view name) {
  for (absl::string_view p : {"D3D11_", "D3D10_", "D3D_"}) {
    if (absl::ConsumePrefix(&name, p)) break;
  }
  return name;
}

const absl::flat_hash_map<std::string, uint32_t>& NameTable() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<std::string, uint32_t>;
    for (const NameValue& n : kNames) t->emplace(n.name, n.value);
    for (uint32_t i = 1; i <= 32; ++i) {
      t->emplace(absl::StrCat("PRIMITIVE_TOPOLOGY_", i, "_CONTROL_POINT_PATCHLIST"), 32 + i);
    }
    for (const NameValue& n : kNames) {
      absl::string_view f = n.name;
      if (absl::ConsumePrefix(&f, "FILTER_")) {
        t->emplace(absl::StrCat("FILTER_COMPARISON_", f), n.value | 0x80);
      }
    }
    return t;
  }();
  return *table;
}

}  // namespace

// The value of one enum or flag name; DXGI formats come from the DDI catalog.
std::optional<uint32_t> ValueOfName(absl::string_view name) {
  if (absl::StartsWith(name, "DXGI_FORMAT_")) {
    static const ddi::EnumInfo* formats = ddi::FindEnum("DXGI_FORMAT");
    if (formats == nullptr) return std::nullopt;
    std::optional<uint64_t> v = ddi::ValueOfName(*formats, name);
    if (!v) return std::nullopt;
    return static_cast<uint32_t>(*v);
  }
  const auto& table = NameTable();
  auto it = table.find(Unprefixed(name));
  if (it == table.end()) return std::nullopt;
  return it->second;
}

}  // namespace cltrace::apitrace::internal
