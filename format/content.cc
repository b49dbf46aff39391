#include "format/content.h"

#include <string>

#include "absl/status/status.h"
#include "ddi/catalog.h"

namespace cltrace::format {

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
  s.width = get("Width").value_or(0);
  s.height = get("Height").value_or(0);
  s.depth = get("Depth").value_or(0);
  s.mip_levels = get("MipLevels").value_or(0);
  s.array_size = get("ArraySize").value_or(0);
  return s;
}

absl::StatusOr<RegionLayout> UploadLayout(const ResourceShape& shape, uint32_t subresource,
                                          const Box* box, uint32_t row_pitch,
                                          uint32_t depth_pitch) {
  RegionLayout l;
  std::string why;
  if (!ComputeUploadLayout(shape, subresource, box, row_pitch, depth_pitch, &l, &why)) {
    return absl::InvalidArgumentError(why);
  }
  return l;
}

absl::StatusOr<RegionLayout> MappedLayout(const ResourceShape& shape, uint32_t subresource,
                                          uint32_t row_pitch, uint32_t depth_pitch) {
  RegionLayout l;
  std::string why;
  if (!ComputeMappedLayout(shape, subresource, row_pitch, depth_pitch, &l, &why)) {
    return absl::InvalidArgumentError(why);
  }
  return l;
}

}  // namespace cltrace::format
