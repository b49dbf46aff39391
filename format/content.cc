#include "format/content.h"

#include <string>
#include <vector>

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

std::optional<std::vector<SubresourcePitches>> InitialDataOfCreate(
    CallId call, absl::Span<const uint64_t> args) {
  const CallInfo* ci = GetCall(call);
  if (ci == nullptr) return std::nullopt;
  const int present = FieldIndex(*ci, "pCreateResource");
  if (present < 0 || static_cast<size_t>(present) >= args.size() || args[present] == 0) {
    return std::nullopt;
  }
  // The elements of each array follow the fixed fields, arrays in field order (FORMAT.md §3.3).
  const absl::Span<const FieldInfo> fields = Fields(*ci);
  size_t cursor = fields.size();
  for (size_t i = 0; i < fields.size() && i < args.size(); ++i) {
    if (fields[i].kind != FieldKind::kArray) continue;
    const absl::Span<const FieldInfo> elems = ElementFields(fields[i]);
    const uint64_t n = args[i] == 0 ? 0 : args[i] - 1;
    if (n > args.size() || cursor + n * elems.size() > args.size()) return std::nullopt;
    if (absl::string_view(fields[i].name) == "pInitialDataUP") {
      if (args[i] == 0) return std::nullopt;
      int row = -1, depth = -1;
      for (size_t j = 0; j < elems.size(); ++j) {
        if (absl::string_view(elems[j].name) == "SysMemPitch") row = static_cast<int>(j);
        if (absl::string_view(elems[j].name) == "SysMemSlicePitch") depth = static_cast<int>(j);
      }
      if (row < 0 || depth < 0) return std::nullopt;
      std::vector<SubresourcePitches> out(n);
      for (uint64_t k = 0; k < n; ++k) {
        const size_t at = cursor + k * elems.size();
        out[k].row_pitch = static_cast<uint32_t>(args[at + row]);
        out[k].depth_pitch = static_cast<uint32_t>(args[at + depth]);
      }
      return out;
    }
    cursor += n * elems.size();
  }
  return std::nullopt;
}

absl::StatusOr<InitialData> InitialDataLayout(const ResourceShape& shape,
                                              absl::Span<const SubresourcePitches> pitches) {
  InitialData d;
  std::string why;
  if (!ComputeInitialDataLayout(shape, pitches.data(), pitches.size(), &d, &why)) {
    return absl::InvalidArgumentError(why);
  }
  return d;
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
