// Session: the content handed to the driver (upload sources, initial data, mapped
// subresources) — the part of session.cc that turns the trace's recorded bytes into memory
// the driver reads. See session.h.
#include <cstring>
#include <mutex>
#include <optional>

#include "absl/strings/str_format.h"
#include "format/content.h"
#include "replayer/internal/session.h"

namespace cltrace::replay::internal {

using format::Event;

// ---- Content ------------------------------------------------------------------------------

void* Session::UploadSource(ThreadState* t, const Event& e) {
  // A copy, so that a driver writing through pSysMemUP cannot change the trace's bytes (a
  // content id is shared by every call with equal bytes); zero-padded past the region.
  const absl::string_view bytes = plan_.contents->Token(e.content);
  void* copy = t->arena.Allocate(bytes.size() + kContentSlackBytes);
  std::memcpy(copy, bytes.data(), bytes.size());
  std::lock_guard<std::mutex> lock(content_mu_);
  ++content_.uploads;
  content_.bytes += bytes.size();
  return copy;
}

void Session::InitialDataSource(ThreadState* t, const Event& e) {
  // The plan's content check (ContentChecker::CheckInitialData) refused a layout that does not
  // hold the content, so a mismatch here only leaves the zero region in place.
  const std::optional<format::ResourceShape> shape = format::ShapeOfCreate(e.call, e.args);
  const std::optional<std::vector<format::SubresourcePitches>> pitches =
      format::InitialDataOfCreate(e.call, e.args);
  if (!shape.has_value() || !pitches.has_value()) return;
  absl::StatusOr<format::InitialData> l = format::InitialDataLayout(*shape, *pitches);
  const absl::string_view bytes = plan_.contents->Token(e.content);
  if (!l.ok() || l->bytes != bytes.size()) return;
  // A copy, as for an upload: a driver writing through pSysMem cannot change the trace's bytes.
  auto* copy = static_cast<char*>(t->arena.Allocate(bytes.size() + kContentSlackBytes));
  std::memcpy(copy, bytes.data(), bytes.size());
  t->initial_data.resize(l->offsets.size());
  for (size_t i = 0; i < l->offsets.size(); ++i) t->initial_data[i] = copy + l->offsets[i];
  std::lock_guard<std::mutex> lock(content_mu_);
  ++content_.initial_data;
  content_.initial_data_bytes += bytes.size();
}

void Session::RememberMapping(const Event& e, const CallMeta& m, const format::ArgVec& actual) {
  auto out = [&](int16_t field) -> uint64_t {
    return static_cast<size_t>(field) < actual.size() ? actual[field] : 0;
  };
  Mapping map;
  map.data = out(m.mapped_data_field);
  map.row_pitch = static_cast<uint32_t>(out(m.row_pitch_field));
  map.depth_pitch = static_cast<uint32_t>(out(m.depth_pitch_field));
  map.map_seq = e.seq;
  std::lock_guard<std::mutex> lock(content_mu_);
  mappings_[MapKey{e.args[0], e.args[m.resource_field],
                   static_cast<uint32_t>(e.args[m.subresource_field])}] = map;
}

void Session::WriteMappedContent(const Event& e, const CallMeta& m, uint32_t index) {
  std::optional<Mapping> map;
  {
    std::lock_guard<std::mutex> lock(content_mu_);
    auto it = mappings_.find(MapKey{e.args[0], e.args[m.resource_field],
                                    static_cast<uint32_t>(e.args[m.subresource_field])});
    if (it != mappings_.end()) {
      map = it->second;
      mappings_.erase(it);
    }
  }
  auto use = plan_.unmap_content.find(index);
  if (use == plan_.unmap_content.end()) return;  // no content: the driver keeps what it has
  const UnmapContent& u = use->second;
  const absl::string_view bytes = plan_.contents->Token(e.content);
  if (!map.has_value()) {
    // The plan saw the recorded Map, so the replay did not make it (a replay that went on
    // past a divergence, or --until inside the pair).
    ContentNote(e.seq, absl::StrFormat("%d bytes not written: the replay made no Map of "
                                       "subresource %d before this Unmap (recorded Map: seq %d)",
                                       bytes.size(), u.subresource, u.map_seq));
    return;
  }
  if (map->data == 0) {
    ContentNote(e.seq, absl::StrFormat("%d bytes not written: the replay driver's Map (seq %d) "
                                       "returned no memory (pData NULL)",
                                       bytes.size(), map->map_seq));
    return;
  }
  absl::StatusOr<format::RegionLayout> replay =
      format::MappedLayout(u.shape, u.subresource, map->row_pitch, map->depth_pitch);
  if (!replay.ok()) {
    ContentNote(e.seq, absl::StrFormat("%d bytes not written: the replay driver's Map (seq %d) "
                                       "pitches cannot hold the subresource: %s",
                                       bytes.size(), map->map_seq, replay.status().message()));
    return;
  }
  const MappedCopy c =
      CopyMapped(u.recorded, bytes.data(), *replay, reinterpret_cast<void*>(map->data));
  std::lock_guard<std::mutex> lock(content_mu_);
  ++content_.unmaps;
  content_.bytes += c.bytes;
  if (!c.complete) {
    const uint64_t payload = uint64_t{u.recorded.slices} * u.recorded.rows * u.recorded.row_bytes;
    content_notes_.emplace_back(
        e.seq, absl::StrFormat("wrote %d of %d bytes: the replay driver's Map (seq %d: RowPitch "
                               "%d, DepthPitch %d) mapped less than the recorded one (RowPitch "
                               "%d, DepthPitch %d)",
                               c.bytes, payload, map->map_seq, map->row_pitch, map->depth_pitch,
                               u.map_row_pitch, u.map_depth_pitch));
  }
}

void Session::ContentNote(uint64_t seq, std::string note) {
  std::lock_guard<std::mutex> lock(content_mu_);
  content_notes_.emplace_back(seq, std::move(note));
}

}  // namespace cltrace::replay::internal
