#include "replayer/internal/content.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ddi/catalog.h"

namespace cltrace::replay::internal {
namespace {

using format::ContentRole;
using format::Event;

constexpr uint32_t kMapRead = 1;  // D3D10_DDI_MAP_READ

uint32_t U32(const Event& e, int16_t field) {
  return field >= 0 && static_cast<size_t>(field) < e.args.size()
             ? static_cast<uint32_t>(e.args[field])
             : 0;
}

// The refusal of content for a resource (argument `field`, token `token`) whose size no
// recorded CreateResource gives.
std::string Unshaped(absl::string_view field, absl::string_view token, uint64_t bytes) {
  return absl::StrFormat(
      "content for %s %s, whose shape no recorded CreateResource gives: the size of its %d "
      "bytes cannot be checked",
      field, token, bytes);
}

}  // namespace

std::string ContentChecker::Check(const Event& e, const CallMeta& m, Role role, UnmapContent* unmap,
                                  bool* has_unmap) {
  *has_unmap = false;
  std::string problem;
  if (e.content != 0) {
    const uint64_t id = e.content;
    if (!contents_.Has(id)) {
      return absl::StrFormat("content id %d is not defined by the trace (it defines %d)", id,
                             contents_.size() - 1);
    }
    switch (m.content_role) {
      case ContentRole::kNone:
        return absl::StrFormat(
            "%s carries content (id %d), but it takes no bytes from the application (only the "
            "UpdateSubresourceUP and Unmap families and CreateResource do, FORMAT.md §3.8)",
            m.info->name, id);
      case ContentRole::kMap:
        return absl::StrFormat(
            "%s carries content (id %d), but a Map's bytes belong to its Unmap (what the "
            "application wrote is only known when it unmaps, FORMAT.md §3.8)",
            m.info->name, id);
      case ContentRole::kDrawPrimitives2:
        return "";  // the DX6 replay checks it (CheckDx6Event)
      case ContentRole::kUploadSource:
      case ContentRole::kUnmap:
      case ContentRole::kInitialData:
        break;
    }
    if (!m.content_fields_ok) {
      return absl::StrCat("the catalog's ", m.info->name,
                          " lacks the fields that place its content");
    }
    // Calls the replay does not issue (below an ignored call) are not checked further.
    if (role == Role::kIssue) {
      const uint64_t bytes = contents_.Token(id).size();
      if (m.content_role == ContentRole::kUploadSource) {
        problem = CheckUpload(e, m, bytes);
      } else if (m.content_role == ContentRole::kInitialData) {
        problem = CheckInitialData(e, bytes);
      } else {
        problem = CheckUnmap(e, m, bytes, unmap);
        *has_unmap = problem.empty();
      }
    }
  }
  if (role == Role::kIssue) Track(e, m);
  return problem;
}

std::string ContentChecker::CheckUpload(const Event& e, const CallMeta& m, uint64_t bytes) const {
  const uint64_t resource = e.args[m.resource_field];
  auto it = shapes_.find(resource);
  if (it == shapes_.end()) {
    return Unshaped("hDstResource", handles_.Token(resource), bytes);
  }
  std::optional<format::Box> box;
  if (e.args[m.box_field] != 0) {
    // The box members follow its presence field in D3D10_DDI_BOX order.
    auto v = [&](int k) { return static_cast<int32_t>(e.args[m.box_field + k]); };
    box = format::Box{v(1), v(2), v(3), v(4), v(5), v(6)};
  }
  const uint32_t sub = U32(e, m.subresource_field);
  absl::StatusOr<format::RegionLayout> l =
      format::UploadLayout(it->second, sub, box ? &*box : nullptr, U32(e, m.row_pitch_field),
                           U32(e, m.depth_pitch_field));
  if (!l.ok()) {
    return absl::StrCat("content of an UpdateSubresourceUP the resource cannot take: ",
                        l.status().message());
  }
  if (l->Bytes() != bytes) {
    return absl::StrFormat(
        "content is %d bytes, but DstSubresource %d with %s, RowPitch %d and DepthPitch %d "
        "describes %d bytes of source data",
        bytes, sub, box ? "its pDstBox" : "no box (the whole subresource)",
        U32(e, m.row_pitch_field), U32(e, m.depth_pitch_field), l->Bytes());
  }
  return "";
}

std::string ContentChecker::CheckInitialData(const Event& e, uint64_t bytes) const {
  const std::optional<format::ResourceShape> shape = format::ShapeOfCreate(e.call, e.args);
  const std::optional<std::vector<format::SubresourcePitches>> pitches =
      format::InitialDataOfCreate(e.call, e.args);
  if (!shape.has_value() || !pitches.has_value()) {
    return absl::StrFormat(
        "content (%d bytes) on a %s without pInitialDataUP: there is no initial data to hold it",
        bytes, e.call == format::CallId::kInvalid ? "call" : format::GetCall(e.call)->name);
  }
  absl::StatusOr<format::InitialData> l = format::InitialDataLayout(*shape, *pitches);
  if (!l.ok()) {
    return absl::StrCat("content of initial data the resource cannot take: ", l.status().message());
  }
  if (l->bytes != bytes) {
    return absl::StrFormat(
        "content is %d bytes, but the %d pInitialDataUP entries with their SysMemPitch and "
        "SysMemSlicePitch describe %d bytes of initial data",
        bytes, pitches->size(), l->bytes);
  }
  return "";
}

std::string ContentChecker::CheckUnmap(const Event& e, const CallMeta& m, uint64_t bytes,
                                       UnmapContent* unmap) const {
  const uint64_t resource = e.args[m.resource_field];
  const uint32_t sub = U32(e, m.subresource_field);
  auto map = maps_.find(MapKey{e.args[0], resource, sub});
  if (map == maps_.end()) {
    return absl::StrFormat(
        "content for an Unmap of %s subresource %d that no earlier Map on %s mapped: there are "
        "no pitches to lay out its %d bytes by",
        handles_.Token(resource), sub, handles_.Token(e.args[0]), bytes);
  }
  const MapRecord& r = map->second;
  if (r.map_type == kMapRead) {
    return absl::StrFormat(
        "content for the Unmap of a D3D10_DDI_MAP_READ map (seq %d): the application writes "
        "nothing through a read map",
        r.seq);
  }
  auto shape = shapes_.find(resource);
  if (shape == shapes_.end()) {
    return Unshaped("hResource", handles_.Token(resource), bytes);
  }
  absl::StatusOr<format::RegionLayout> l =
      format::MappedLayout(shape->second, sub, r.row_pitch, r.depth_pitch);
  if (!l.ok()) {
    return absl::StrFormat("content of subresource %d as the recorded Map (seq %d) laid it out: %s",
                           sub, r.seq, l.status().message());
  }
  if (l->Bytes() != bytes) {
    return absl::StrFormat(
        "content is %d bytes, but subresource %d with the recorded Map's pitches (seq %d: "
        "RowPitch %d, DepthPitch %d) is %d bytes",
        bytes, sub, r.seq, r.row_pitch, r.depth_pitch, l->Bytes());
  }
  unmap->shape = shape->second;
  unmap->subresource = sub;
  unmap->recorded = *l;
  unmap->map_seq = r.seq;
  unmap->map_row_pitch = r.row_pitch;
  unmap->map_depth_pitch = r.depth_pitch;
  return "";
}

void ContentChecker::Track(const Event& e, const CallMeta& m) {
  if (m.create_field >= 0 && e.args[m.create_field] != 0) {
    const uint64_t id = e.args[m.create_field];
    if (std::optional<format::ResourceShape> s = format::ShapeOfCreate(e.call, e.args)) {
      shapes_[id] = *s;
    } else if (auto ic = m.rt_field >= 0 ? shapes_.find(e.args[m.rt_field]) : shapes_.end();
               ic != shapes_.end()) {
      // A context-local open (no argument structure) of the immediate-context resource
      // carried in the runtime-handle slot (ddi-spec §1.1, R56). Copied out first: inserting
      // `id` may rehash shapes_, which frees the slot `ic` points into.
      const format::ResourceShape shape = ic->second;
      shapes_[id] = shape;
    } else {
      shapes_.erase(id);
    }
  }
  if (m.destroy_field >= 0 && e.args[m.destroy_field] != 0) shapes_.erase(e.args[m.destroy_field]);
  if (!m.content_fields_ok) return;
  if (m.content_role == ContentRole::kMap) {
    MapRecord r;
    r.seq = e.seq;
    r.map_type = U32(e, m.map_type_field);
    r.row_pitch = U32(e, m.row_pitch_field);
    r.depth_pitch = U32(e, m.depth_pitch_field);
    maps_[MapKey{e.args[0], e.args[m.resource_field], U32(e, m.subresource_field)}] = r;
  } else if (m.content_role == ContentRole::kUnmap) {
    maps_.erase(MapKey{e.args[0], e.args[m.resource_field], U32(e, m.subresource_field)});
  }
}

MappedCopy CopyMapped(const format::RegionLayout& src, const void* src_bytes,
                      const format::RegionLayout& dst, void* dst_bytes) {
  format::RegionLayout fit = src;
  fit.rows = std::min(src.rows, dst.rows);
  fit.slices = std::min(src.slices, dst.slices);
  fit.row_bytes = std::min(src.row_bytes, dst.row_bytes);
  MappedCopy c;
  c.complete = fit.rows == src.rows && fit.slices == src.slices && fit.row_bytes == src.row_bytes;
  if (fit.Bytes() == 0) return c;
  // `fit` reads with the recorded pitches and writes with the replay's: both stay inside their
  // regions, since it has no more rows, slices or row bytes than either.
  format::CopyRegion(fit, src_bytes, dst.row_pitch, dst.depth_pitch, dst_bytes);
  c.bytes = uint64_t{fit.slices} * fit.rows * fit.row_bytes;
  return c;
}

}  // namespace cltrace::replay::internal
