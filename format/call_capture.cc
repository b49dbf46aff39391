// The capture half of the call codec: typed DDI parameters -> args (ArgEncoder and the
// generated CaptureEntry* / CaptureExit* of every catalog call). Apart from call_codec.cc,
// which validates and decodes recorded args and reports through absl::Status, so that the
// recorder's shim can link these functions and nothing of Abseil's libraries
// (tests/recorder/shim_deps_test.cc): keep this file free of absl::Status, StrFormat and
// anything else that is not header-only.
#include <algorithm>

#include "ddi/catalog.h"
#include "format/call_codec.h"
#include "format/call_codec_internal.h"

namespace cltrace::format {
namespace codec_internal {

ArgEncoder::ArgEncoder(CallId id, ArgVec* args, HandleIdFn handle_id)
    : call_(*GetCall(id)), args_(args), handle_id_(handle_id) {}

void ArgEncoder::BeginEntry() { args_->assign(call_.field_count, 0); }

void ArgEncoder::BeginExit() { args_->resize(call_.field_count); }

size_t ArgEncoder::StartArray(size_t field, bool null, uint64_t count) {
  if (null) {
    (*args_)[field] = 0;
    return 0;
  }
  const uint64_t n = std::min<uint64_t>(count, kMaxRecordedArrayElements);
  (*args_)[field] = 1 + n;
  return static_cast<size_t>(n);
}

size_t ArgEncoder::BeginArray(size_t field, const void* data) {
  const FieldInfo& f = Fields(call_)[field];
  uint64_t count = f.count_fixed;
  if (f.count_field >= 0) count = (*args_)[f.count_field] / f.count_divisor;
  if (f.count_factor_field >= 0) count *= (*args_)[f.count_factor_field];
  // Never read past what the caller provided: an embedded array's capacity, or the room the
  // caller gave the callee for an output array.
  if (f.embedded) count = std::min<uint64_t>(count, f.count_fixed);
  if (f.capacity_field >= 0 && f.capacity_field != f.count_field) {
    count = std::min<uint64_t>(count, (*args_)[f.capacity_field] / f.count_divisor);
  }
  return StartArray(field, data == nullptr && !f.embedded, count);
}

size_t ArgEncoder::BeginTokenArray(size_t field, const uint32_t* tokens) {
  const FieldInfo& f = Fields(call_)[field];
  if (tokens == nullptr) return StartArray(field, true, 0);
  // A tokenized program states its own length (in tokens, headers included) in token 1.
  return StartArray(field, false, tokens[f.count_in_element]);
}

}  // namespace codec_internal
}  // namespace cltrace::format

#include "format/call_capture_gen.inc"
