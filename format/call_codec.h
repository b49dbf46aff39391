// Typed call codec: turns the typed C parameters of every catalog call into Event::args and
// back, so that the recorder can capture any DDI call and the replayer can re-issue it.
//
// The per-call functions are generated from ddi/ddi_catalog.txt into
// build*/gen/format/call_codec_gen.h (included at the end of this header). For a call X with
// C function-pointer type PFN_X and parameters P...:
//
//   void CaptureEntryX(ArgVec* args, HandleIdFn handle_id, P...);
//       Sizes *args to the call's fixed fields and records every input field (in-fields,
//       presence of structure pointers, entry values of in/out fields). Call it before
//       calling down.
//   void CaptureExitX(ArgVec* args, HandleIdFn handle_id, P...);
//       Records the output fields (and the exit values of in/out fields), then appends the
//       elements of every array, arrays in fixed-field order. Call it after the callee
//       returned, with the same parameters. Precondition: CaptureEntryX ran on *args.
//   absl::StatusOr<int64_t> InvokeX(PFN_X pfn, absl::Span<const uint64_t> args,
//                                   const InvokeEnv& env);
//       Validates args (ValidateArgs), rebuilds the typed parameters (structures and arrays
//       in env.arena, handles through env.handle_raw), calls pfn and returns its return
//       value widened to int64_t as Event::ret stores it (0 for void).
//   absl::Status ApplyOutputsX(absl::Span<const uint64_t> args, const InvokeEnv& env, P...);
//       The callee's side: writes the recorded outputs of args into the typed out-parameters
//       (a driver or runtime stand-in that answers with recorded values). Never writes more
//       array elements than the caller provided room for.
// and InvokeCall() dispatches on a CallId at run time.
//
// Encoding (ddi/catalog_types.h has the field model): handles are mapped to ids by a
// caller-supplied functor (raw 0 <-> id 0 without asking it); signed kinds are sign-extended
// to 64 bits; floats are their IEEE bit pattern; kPresent is 0/1; kArray is 0 for NULL, else
// 1 + element count (embedded arrays `NAME[N]` are never NULL; they record 0 only when the
// structure holding them was NULL). Scalar pointers the DDI requires (puEntries, pHSizes) are
// assumed non-NULL; a NULL one records 0.
//
// Truncation: an array holds at most kMaxRecordedArrayElements elements. A longer one is
// recorded with exactly that many elements while its count field keeps the true count, so a
// reader recognises truncation as "length == kMaxRecordedArrayElements < count".
// ValidateArgs/Invoke* report such an array as kUnimplemented (it cannot be replayed).
//
// Thread-safety: Capture* and Invoke* are reentrant; an InvokeArena must not be shared by
// concurrent Invoke calls.
//
// Example (recorder side):
//   ArgVec args;
//   CaptureEntryDrawIndexed(&args, ids, hDevice, IndexCount, StartIndexLocation, Base);
//   real_pfn(hDevice, IndexCount, StartIndexLocation, Base);
//   CaptureExitDrawIndexed(&args, ids, hDevice, IndexCount, StartIndexLocation, Base);
// (replayer side):
//   InvokeArena arena;
//   InvokeEnv env{.handle_raw = [&](uint64_t id) { return live_handles[id]; }, .arena = &arena};
//   absl::StatusOr<int64_t> ret = InvokeCall(event.call, driver_pfn, event.args, env);
#ifndef CLTRACE_FORMAT_CALL_CODEC_H_
#define CLTRACE_FORMAT_CALL_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ddi/call_ids.h"
#include "ddi/catalog_types.h"
#include "ddi/ddi_abi.h"
#include "format/event.h"

namespace cltrace::format {

// The argument vector of an Event.
using ArgVec = absl::InlinedVector<uint64_t, 8>;
static_assert(std::is_same_v<ArgVec, decltype(Event::args)>);

// Longest array recorded per array field (see "Truncation" above).
inline constexpr uint32_t kMaxRecordedArrayElements = 65536;

// Maps a raw handle value seen by the process (the pDrvPrivate / handle pointer, or the
// 32-bit D3DKMT value) to its per-trace handle id. Never called for raw 0.
using HandleIdFn = absl::FunctionRef<uint64_t(uint64_t raw_handle_value)>;

// Memory for the structures and arrays an Invoke* call materialises. Allocations are zeroed
// and stay valid until Reset() or destruction. Not thread-safe.
class InvokeArena {
 public:
  InvokeArena() = default;
  InvokeArena(const InvokeArena&) = delete;
  InvokeArena& operator=(const InvokeArena&) = delete;

  // `bytes` zeroed bytes aligned for any DDI type; never nullptr (bytes 0 gives a distinct
  // non-null address so a non-NULL empty array stays non-NULL).
  void* Allocate(size_t bytes);
  // Makes all memory reusable (keeps the largest block).
  void Reset();
  size_t bytes_in_use() const { return used_total_; }

 private:
  struct Block {
    std::unique_ptr<unsigned char[]> data;
    size_t size = 0;
    size_t used = 0;
  };
  std::vector<Block> blocks_;
  size_t used_total_ = 0;
};

// What Invoke* needs from its caller.
struct InvokeEnv {
  // Required: handle id -> raw value to pass to the callee (never called for id 0). A raw
  // value that does not fit a 32-bit kernel handle is an error.
  std::function<uint64_t(uint64_t id)> handle_raw;
  // Optional: recorded pointer value (kPtr field: pSysMemUP, table pointers, DMA buffer
  // addresses...) -> pointer to pass. Default: the recorded value itself, which only stays
  // meaningful for pointers the callee never dereferences.
  std::function<void*(const FieldInfo& field, uint64_t recorded)> pointer;
  // Optional: a kPtr member of element `element` of array `array` (pInitialDataUP[i].pSysMem)
  // -> pointer to pass. Default: `pointer` (or the recorded value).
  std::function<void*(const FieldInfo& array, size_t element, const FieldInfo& field,
                      uint64_t recorded)>
      element_pointer;
  // Required: storage for structures and arrays.
  InvokeArena* arena = nullptr;
  // Optional: if set, receives the args captured around the call (CaptureEntry before,
  // CaptureExit after), i.e. what the callee was given and what it answered. Needs handle_id.
  ArgVec* actual = nullptr;
  std::function<uint64_t(uint64_t raw)> handle_id;
};

// Checks that `args` is a well-formed argument list of call `id`: enough fields, every value
// within its C type, presence 0/1, array lengths within kMaxRecordedArrayElements and equal to
// their count field, no trailing values. InvalidArgument describes the first problem (call,
// field and arg index); Unimplemented reports an array truncated at record time.
absl::Status ValidateArgs(CallId id, absl::Span<const uint64_t> args);

// Calls `pfn` (a pointer of call id's PFN type) with the parameters rebuilt from `args`.
// InvalidArgument for an unknown id or bad args, FailedPrecondition for a null pfn or an
// incomplete env.
absl::StatusOr<int64_t> InvokeCall(CallId id, void* pfn, absl::Span<const uint64_t> args,
                                   const InvokeEnv& env);

}  // namespace cltrace::format

#include "format/call_codec_gen.h"

#endif  // CLTRACE_FORMAT_CALL_CODEC_H_
