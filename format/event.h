// One recorded DDI call or callback, as every cltrace component sees it in memory.
//
// Thread-safety: plain values. HandleTable is not thread-safe; the writer guards its own.
//
// Example:
//   Event e;
//   e.call = CallId::kDrawIndexed;
//   e.seq = 41; e.end = 42; e.tid = 7;
//   e.args = {handles.Intern("0x5500"), 36, 0, 0};  // hDevice, IndexCount, Start, Base
#ifndef CLTRACE_FORMAT_EVENT_H_
#define CLTRACE_FORMAT_EVENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "ddi/call_ids.h"

namespace cltrace::format {

struct Event {
  // Positions on the process-wide counter (starting at 1): `seq` when the call was entered,
  // `end` when it returned. Every position is used once. end == 0: never returned
  // (the process died inside the call).
  uint64_t seq = 0;
  uint64_t end = 0;
  // seq of the call this one was made inside (a callback inside a DDI call, a state-refresh
  // DDI call inside a callback); 0 for a top-level call.
  uint64_t parent = 0;
  uint32_t tid = 0;
  CallId call = CallId::kInvalid;
  // Interned content id (TraceReader::contents(), TraceWriter::InternContent), 0 = none: the
  // bytes the application handed the driver with this call, captured by the recorder
  // (FORMAT.md §3.8; which calls carry content: format/content.h).
  uint32_t content = 0;
  // Entry time in nanoseconds since the trace's start.
  int64_t timestamp_ns = 0;
  // Return value: HRESULT/NTSTATUS/BOOL sign-extended, SIZE_T as is, 0 for void.
  int64_t ret = 0;
  // Interned annotation (the API call that caused it), 0 = none. See StringTable.
  uint64_t annotation = 0;
  // The call's flattened fields (ddi/catalog_types.h): the fixed fields in catalog order,
  // then the elements of every array. Handle fields hold handle ids (HandleTable), signed
  // scalars are sign-extended, floats are their bit pattern.
  absl::InlinedVector<uint64_t, 8> args;

  bool operator==(const Event&) const = default;
};

// Interns opaque tokens ("0x1a2b00", "cl1") to small ids; id 0 is the NULL handle / empty
// string. The same token is the same handle.
class TokenTable {
 public:
  TokenTable() { tokens_.emplace_back(); }
  // Returns the id of `token`, adding it if new. The empty token and "0x0"/"0" map to 0
  // only for handle tables that call InternValue; Intern itself treats only "" as 0.
  uint64_t Intern(absl::string_view token);
  // Interns a raw 64-bit value seen by the process, spelled "0x<hex>"; 0 maps to id 0.
  uint64_t InternValue(uint64_t value);
  // Defines `id` as `token` (a reader replaying the file's definitions). Returns false if
  // id is already defined differently or is out of sequence.
  bool Define(uint64_t id, absl::string_view token);
  // nullptr-free: "" for unknown ids.
  absl::string_view Token(uint64_t id) const {
    return id < tokens_.size() ? absl::string_view(tokens_[id]) : absl::string_view();
  }
  bool Has(uint64_t id) const { return id < tokens_.size(); }
  // Id of an existing token, or -1.
  int64_t Find(absl::string_view token) const;
  size_t size() const { return tokens_.size(); }

 private:
  std::vector<std::string> tokens_;
  absl::flat_hash_map<std::string, uint64_t> ids_;
  absl::flat_hash_map<uint64_t, uint64_t> by_value_;
};

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_EVENT_H_
