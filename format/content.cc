#include "format/content.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
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
