// TestTrace: builds format::Event sequences for tests by DDI name and named arguments, with
// entry/exit positions assigned the way the recorder does (one counter for entries and exits),
// so overlapping calls on different threads and nested callbacks are easy to write.
//
// Values are written as text and converted by the field's kind: handle fields take tokens
// ("cl1"; "0" or "" is NULL), enum/flag/HRESULT fields take names or numbers, arrays take
// elements separated by ',' with an element's fields separated by ':'
// ("D3D11DDI_HT_COMMANDLIST:64,D3D10DDI_HT_RESOURCE:128"); an omitted array is NULL, "[]" an
// empty one. A structure's presence field defaults to 1, except for calls through a deferred
// context's table (an hDevice that was a CreateDeferredContext hDrvContext) with none of the
// structure's members given: DC-local opens pass NULL arguments (ddi-spec §3.3).
//
// A typo (unknown function or field, unparsable value) aborts with a message: this is test
// code and a silent mistake would make a test assert nothing.
//
// Thread-safety: none (test helper).
//
// Example:
//   TestTrace t;
//   t.Call("CreateDeferredContext", {{"hDevice", "ic"}, {"hDrvContext", "dc1"}});
//   t.Begin("CreateCommandList", {{"hDevice", "ic"}, {"hDeferredContext", "dc1"},
//                                 {"hCommandList", "cl1"}, {"hRTCommandList", "rt1"}});
//   t.Call("SetErrorCb", {{"hRuntimeDevice", "rtic"}, {"hResult", "E_OUTOFMEMORY"}});
//   t.End();
#ifndef CLTRACE_CHECK_TESTING_TEST_TRACE_H_
#define CLTRACE_CHECK_TESTING_TEST_TRACE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "format/event.h"

namespace cltrace::check::testing {

// The golden corpus's traces (corpus/traces/*.cltrace), sorted; run from the source root.
std::vector<std::string> CorpusTraces();

using Args = std::vector<std::pair<std::string, std::string>>;

class TestTrace {
 public:
  TestTrace() = default;

  // Selects the thread the next calls run on (default 1).
  TestTrace& On(uint32_t tid) {
    tid_ = tid;
    return *this;
  }
  // A complete call, nested inside the current thread's open calls. `ret` is a number or an
  // HRESULT name. Returns its seq.
  uint64_t Call(absl::string_view fn, const Args& args = {}, absl::string_view ret = "");
  // Enters a call that stays open until End() on the same thread.
  uint64_t Begin(absl::string_view fn, const Args& args = {}, absl::string_view ret = "");
  // Returns from the current thread's innermost open call.
  void End();
  // Returns from a specific open call (for overlapping calls across threads).
  void EndSeq(uint64_t seq);

  const std::vector<format::Event>& events() const { return events_; }
  const format::TokenTable& handles() const { return handles_; }
  // Handle id of a token (interning it).
  uint64_t H(absl::string_view token) { return handles_.Intern(token); }
  // The event with this seq (aborts if none).
  const format::Event& At(uint64_t seq) const;

 private:
  format::Event Make(absl::string_view fn, const Args& args, absl::string_view ret);

  std::vector<format::Event> events_;
  format::TokenTable handles_;
  uint64_t next_pos_ = 1;
  uint32_t tid_ = 1;
  absl::flat_hash_map<uint32_t, std::vector<size_t>> open_;  // tid -> open event indexes
  absl::flat_hash_set<std::string> dc_tokens_;
};

}  // namespace cltrace::check::testing

#endif  // CLTRACE_CHECK_TESTING_TEST_TRACE_H_
