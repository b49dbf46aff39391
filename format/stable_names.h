// Stable handle names for `cltrace export --normalize` and the trace diff (format/trace_diff.h):
// stable names instead of what a run of a program chooses, so
// that text tools (diff) can compare two recordings' JSONL:
//   - handles: "KIND#N", N counting from 1 per kind in order of first appearance in seq order,
//     KIND from the handle's catalog type ("cl" command list, "dc" deferred context (a device
//     handle first named as hDrvContext or hDeferredContext), "dev" device, "res" resource, "srv",
//     "rtv", "dsv", "uav", "dss", "rs", "blend", "layout", "shader", "sampler", "query",
//     runtime handles "rt..." ("rtcl"), kernel handles by their type); a handle value reused
//     after its destruction keeps its name;
//   - thread ids: 1, 2, ... by first appearance;
//   - pointer fields (kPtr) above 0xffffffff: kNormalizedAddressBase + N *
//     kNormalizedAddressStride, N by first appearance (addresses move with ASLR).
// Everything else (seq, end, parent, fn, ret, other values, content) is kept.
//
// Thread-safety: single-threaded; one Normalizer per trace, fed in seq order.
//
// Example:
//   Normalizer n;
//   n.Rewrite(&e, stream->handles());
//   out << EventToJsonl(e, n.names(), stream->strings(), &stream->contents());
#ifndef CLTRACE_FORMAT_STABLE_NAMES_H_
#define CLTRACE_FORMAT_STABLE_NAMES_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "ddi/catalog.h"
#include "format/event.h"

namespace cltrace::format {

// Calls `visit` on every field of `event` with its catalog field (array elements included).
// Precondition: CheckEventLayout(*event).ok().
void ForEachField(Event* event, const std::function<void(const FieldInfo&, uint64_t*)>& visit);

// The short kind of a handle first seen in field `field` of `call` ("cl", "dc", "res"...).
std::string HandleKind(const CallInfo& call, const FieldInfo& field);

class Normalizer {
 public:
  // Rewrites `e` (handle ids of `handles`) to ids of names(), its tid to a thread number and
  // its addresses as above. Events whose layout does not fit the catalog get only their tid
  // rewritten.
  void Rewrite(Event* e, const TokenTable& handles);
  const TokenTable& names() const { return names_; }
  // The stable name of handle id `handle` of the trace ("" if not seen yet).
  absl::string_view NameOf(uint64_t handle) const;
  uint32_t ThreadOf(uint32_t tid) const;

 private:
  TokenTable names_;
  absl::flat_hash_map<uint64_t, uint64_t> handle_ids_;  // trace id -> names_ id
  absl::flat_hash_map<std::string, uint64_t> per_kind_;
  absl::flat_hash_map<uint32_t, uint32_t> threads_;
  absl::flat_hash_map<uint64_t, uint64_t> addresses_;
};

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_STABLE_NAMES_H_
