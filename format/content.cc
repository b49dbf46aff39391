#include "format/content.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ddi/catalog.h"

namespace cltrace::format {
namespace {

// The elements of array `name` of a call's flattened args: they follow the fixed fields, after
// the elements of the arrays before it (FORMAT.md §3.3). nullopt if the call has no such array
// or the args are too short for the counts they hold.
struct ArrayAt {
  size_t first = 0;    // index in args of its first element's first field
  uint64_t count = 0;  // elements (0: a NULL array)
  absl::Span<const FieldInfo> elems;
  // Index within an element of its field `field`, or -1.
  int Field(absl::string_view field) const {
    for (size_t j = 0; j < elems.size(); ++j)
      if (field == elems[j].name) return static_cast<int>(j);
    return -1;
  }
};
std::optional<ArrayAt> FindArray(const CallInfo& ci, absl::Span<const uint64_t> args,
                                 absl::string_view name) {
  const absl::Span<const FieldInfo> fields = Fields(ci);
  size_t cursor = fields.size();
  for (size_t i = 0; i < fields.size() && i < args.size(); ++i) {
    if (fields[i].kind != FieldKind::kArray) continue;
    const absl::Span<const FieldInfo> elems = ElementFields(fields[i]);
    const uint64_t n = args[i] == 0 ? 0 : args[i] - 1;
    if (n > args.size() || cursor + n * elems.size() > args.size()) return std::nullopt;
    if (absl::string_view(fields[i].name) == name) return ArrayAt{cursor, n, elems};
    cursor += n * elems.size();
  }
  return std::nullopt;
}

}  // namespace

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
  // The most detailed mip's size: element 0 of pMipInfoList.
  if (std::optional<ArrayAt> mips = FindArray(*ci, args, "pMipInfoList"); mips && mips->count > 0) {
    auto elem = [&](absl::string_view name) -> uint32_t {
      const int j = mips->Field(name);
      return j < 0 ? 0 : static_cast<uint32_t>(args[mips->first + j]);
    };
    s.width = elem("TexelWidth");
    s.height = elem("TexelHeight");
    s.depth = elem("TexelDepth");
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
  const std::optional<ArrayAt> data = FindArray(*ci, args, "pInitialDataUP");
  if (!data || data->count == 0) return std::nullopt;
  const int row = data->Field("SysMemPitch");
  const int depth = data->Field("SysMemSlicePitch");
  if (row < 0 || depth < 0) return std::nullopt;
  std::vector<SubresourcePitches> out(data->count);
  for (uint64_t k = 0; k < data->count; ++k) {
    const size_t at = data->first + k * data->elems.size();
    out[k].row_pitch = static_cast<uint32_t>(args[at + row]);
    out[k].depth_pitch = static_cast<uint32_t>(args[at + depth]);
  }
  return out;
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
