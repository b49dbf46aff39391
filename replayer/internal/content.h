// Content on replay (format/FORMAT.md §3.8, format/content.h): the bytes the application
// handed the driver in the recorded run, handed to the replay driver again.
//
// Plan time: ContentChecker sees every event in seq order (BuildPlan) and checks everything
// about content that can be checked before a driver runs: the content id is defined, the call
// is one that carries content (the UpdateSubresourceUP and Unmap families), the destination's
// shape is known from its recorded CreateResource, and the content's size is exactly what the
// call's box and pitches (an upload) or the recorded Map's output pitches (an Unmap) describe.
// Anything else is bad input: the replay never reads past a content's bytes and never writes
// past what a replay driver mapped.
//
// Replay time: an upload's pSysMemUP points at a copy of the content; at an Unmap with
// content the bytes are copied into the memory the replay driver's Map returned, re-pitched
// from the recorded pitches to the replay's (CopyMapped).
//
// Thread-safety: ContentChecker is single-threaded (BuildPlan); CopyMapped is a pure function.
//
// Example (plan):
//   ContentChecker checker(contents, handles);
//   for (event e in seq order) {
//     UnmapContent u;
//     bool has_u = false;
//     if (std::string p = checker.Check(e, CallMetaFor(e.call), role, &u, &has_u); !p.empty())
//       return Fail(bad, e, p);
//   }
#ifndef CLTRACE_REPLAYER_INTERNAL_CONTENT_H_
#define CLTRACE_REPLAYER_INTERNAL_CONTENT_H_

#include <cstdint>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "format/content.h"
#include "format/event.h"
#include "replayer/internal/call_meta.h"

namespace cltrace::replay::internal {

// Zero bytes after a copy of an upload's content: a driver that reads a little past the region
// the call describes (it may read whole rows or blocks) reads zeros, not the replayer's heap.
inline constexpr uint64_t kContentSlackBytes = 256;

// What the replay writes into the replay driver's mapping at an Unmap with content.
struct UnmapContent {
  format::ResourceShape shape;
  uint32_t subresource = 0;
  format::RegionLayout recorded;  // the content's layout: the recorded Map's output pitches
  uint64_t map_seq = 0;           // that Map, and the pitches it answered
  uint32_t map_row_pitch = 0, map_depth_pitch = 0;
};

// A mapping by recorded ids: (context the Map went through, resource, subresource).
using MapKey = std::tuple<uint64_t, uint64_t, uint32_t>;

class ContentChecker {
 public:
  // `contents` and `handles`: the trace's tables (handles name resources in messages); both
  // must outlive the checker.
  ContentChecker(const format::TokenTable& contents, const format::TokenTable& handles)
      : contents_(contents), handles_(handles) {}

  // Checks event `e` (whose effective plan role is `role`) and takes note of the resources it
  // creates or destroys and the subresources it maps. Returns the problem ("" if none). For an
  // Unmap with content, fills *unmap and sets *has_unmap.
  std::string Check(const format::Event& e, const CallMeta& m, Role role, UnmapContent* unmap,
                    bool* has_unmap);

 private:
  struct MapRecord {
    uint64_t seq = 0;
    uint32_t map_type = 0;
    uint32_t row_pitch = 0, depth_pitch = 0;  // the recorded driver's output pitches
  };
  std::string CheckUpload(const format::Event& e, const CallMeta& m, uint64_t bytes) const;
  std::string CheckInitialData(const format::Event& e, uint64_t bytes) const;
  std::string CheckUnmap(const format::Event& e, const CallMeta& m, uint64_t bytes,
                         UnmapContent* unmap) const;
  void Track(const format::Event& e, const CallMeta& m);

  const format::TokenTable& contents_;
  const format::TokenTable& handles_;
  // Resource handle id -> the shape its recorded CreateResource gave (a context-local open on
  // a deferred context inherits the shape of the immediate-context resource it opens).
  absl::flat_hash_map<uint64_t, format::ResourceShape> shapes_;
  absl::flat_hash_map<MapKey, MapRecord> maps_;
};

// Copies a mapped subresource's content laid out as `src` (the recorded pitches) into the
// replay driver's mapping laid out as `dst` (MappedLayout with the replay's pitches), row by
// row when the pitches differ. Never reads past src.Bytes() or writes past dst.Bytes(): where
// `dst` holds fewer rows, slices or row bytes than `src` (a driver that mapped less), only
// what fits is copied.
struct MappedCopy {
  uint64_t bytes = 0;    // payload bytes copied (rows × row bytes, not the gaps)
  bool complete = true;  // every byte of the content's rows was copied
};
MappedCopy CopyMapped(const format::RegionLayout& src, const void* src_bytes,
                      const format::RegionLayout& dst, void* dst_bytes);

}  // namespace cltrace::replay::internal

#endif  // CLTRACE_REPLAYER_INTERNAL_CONTENT_H_
