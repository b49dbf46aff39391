#include "format/call_codec.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_format.h"
#include "ddi/catalog.h"
#include "format/call_codec_internal.h"
#include "format/status_macros.h"

namespace cltrace::format {

// ---- InvokeArena ------------------------------------------------------------------------------

void* InvokeArena::Allocate(size_t bytes) {
  constexpr size_t kAlign = alignof(std::max_align_t);
  constexpr size_t kMinBlock = 64 * 1024;
  size_t need = std::max<size_t>((bytes + kAlign - 1) / kAlign * kAlign, kAlign);
  for (Block& b : blocks_) {
    if (b.size - b.used >= need) {
      void* p = b.data.get() + b.used;
      b.used += need;
      used_total_ += need;
      std::memset(p, 0, need);
      return p;
    }
  }
  Block b;
  b.size = std::max(need, kMinBlock);
  // operator new[] of unsigned char is aligned for max_align_t.
  b.data.reset(new unsigned char[b.size]);
  b.used = need;
  used_total_ += need;
  std::memset(b.data.get(), 0, need);
  blocks_.push_back(std::move(b));
  return blocks_.back().data.get();
}

void InvokeArena::Reset() {
  if (blocks_.empty()) return;
  auto largest = std::max_element(blocks_.begin(), blocks_.end(),
                                  [](const Block& a, const Block& b) { return a.size < b.size; });
  Block keep = std::move(*largest);
  keep.used = 0;
  blocks_.clear();
  blocks_.push_back(std::move(keep));
  used_total_ = 0;
}

namespace codec_internal {
namespace {

bool IsSignedKind(FieldKind k) {
  return k == FieldKind::kI32 || k == FieldKind::kI64 || k == FieldKind::kHresult ||
         k == FieldKind::kBool;
}

// Whether `v` is a value of the field's C type (catalog_types.h FieldInfo::bits).
absl::Status CheckValue(const CallInfo& call, const FieldInfo& f, uint64_t v, size_t index) {
  if (f.kind == FieldKind::kPresent) {
    if (v > 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: arg %d (%s) is a presence flag but holds %d", call.name, index, f.name, v));
    }
    return absl::OkStatus();
  }
  if (f.bits == 0 || f.bits >= 64) return absl::OkStatus();
  if (IsSignedKind(f.kind)) {
    const int64_t s = static_cast<int64_t>(v);
    const int64_t lo = -(int64_t{1} << (f.bits - 1));
    const int64_t hi = (int64_t{1} << (f.bits - 1)) - 1;
    if (s < lo || s > hi) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: arg %d (%s) = 0x%x is not a sign-extended %d-bit value", call.name,
                          index, f.name, v, f.bits));
    }
  } else if ((v >> f.bits) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: arg %d (%s) = 0x%x does not fit its %d-bit type", call.name, index,
                        f.name, v, f.bits));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ArgLayout> ComputeLayout(const CallInfo& call, absl::Span<const uint64_t> args) {
  auto fields = Fields(call);
  if (args.size() < fields.size()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %d args, but the call has %d fields",
                                                      call.name, args.size(), fields.size()));
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].kind == FieldKind::kArray) continue;
    CLTRACE_RETURN_IF_ERROR(CheckValue(call, fields[i], args[i], i));
  }
  ArgLayout layout;
  size_t cursor = fields.size();
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldInfo& f = fields[i];
    if (f.kind != FieldKind::kArray) continue;
    ArrayLayout a;
    a.field = static_cast<uint16_t>(i);
    auto elems = ElementFields(f);
    a.stride = static_cast<uint16_t>(elems.size());
    a.first = cursor;
    if (args[i] == 0) {  // NULL (or an embedded array of an absent structure)
      layout.arrays.push_back(a);
      continue;
    }
    const uint64_t n = args[i] - 1;
    if (n > kMaxRecordedArrayElements) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: array %s (arg %d) claims %d elements, more than the %d ever "
                          "recorded",
                          call.name, f.name, i, n, kMaxRecordedArrayElements));
    }
    if ((args.size() - cursor) / std::max<size_t>(a.stride, 1) < n) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: args end inside array %s: %d elements of %d fields need args up "
                          "to %d, have %d",
                          call.name, f.name, n, a.stride, cursor + n * a.stride, args.size()));
    }
    for (uint64_t e = 0; e < n; ++e) {
      for (size_t j = 0; j < elems.size(); ++j) {
        const size_t at = cursor + e * a.stride + j;
        CLTRACE_RETURN_IF_ERROR(CheckValue(call, elems[j], args[at], at));
      }
    }
    uint64_t expected = f.count_fixed;
    if (f.count_in_element > 0) {
      if (n <= f.count_in_element) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: token array %s (arg %d) has %d tokens, too few to hold its length token [%d]",
            call.name, f.name, i, n, f.count_in_element));
      }
      expected = args[cursor + f.count_in_element];
    } else if (f.count_field >= 0) {
      expected = args[f.count_field] / f.count_divisor;
      // Both factors are 32-bit fields (CheckValue above), so the product cannot overflow.
      if (f.count_factor_field >= 0) expected *= args[f.count_factor_field];
      if (f.embedded && expected > f.count_fixed) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: %s = %d exceeds the %d elements of embedded array %s", call.name,
                            fields[f.count_field].name, expected, f.count_fixed, f.name));
      }
    }
    if (expected > kMaxRecordedArrayElements && n == kMaxRecordedArrayElements) {
      return absl::UnimplementedError(absl::StrFormat(
          "%s: array %s (arg %d) was truncated at record time (%d of %d elements kept); it "
          "cannot be replayed",
          call.name, f.name, i, n, expected));
    }
    if (n != expected) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: array %s (arg %d) holds %d elements but its count says %d",
                          call.name, f.name, i, n, expected));
    }
    a.null = false;
    a.length = static_cast<uint32_t>(n);
    a.capacity = a.length;
    if (f.capacity_field >= 0) {
      const uint64_t room = args[f.capacity_field] / f.count_divisor;
      if (room > kMaxRecordedArrayElements) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: %s = %d asks for room for more than %d elements of %s", call.name,
            fields[f.capacity_field].name, room, kMaxRecordedArrayElements, f.name));
      }
      a.capacity = std::max(a.capacity, static_cast<uint32_t>(room));
    }
    cursor += n * a.stride;
    layout.arrays.push_back(a);
  }
  if (cursor != args.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d trailing args after the arrays (expected %d args)", call.name,
                        args.size() - cursor, cursor));
  }
  return layout;
}

ArgDecoder::ArgDecoder(const CallInfo& call, absl::Span<const uint64_t> args, const InvokeEnv& env,
                       const ArgLayout& layout)
    : call_(call), args_(args), env_(env), layout_(layout), arena_(env.arena) {}

uint64_t ArgDecoder::Raw(size_t index) {
  const uint64_t id = args_[index];
  return id == 0 ? 0 : env_.handle_raw(id);
}

void ArgDecoder::Handle(size_t index, void** raw_out) {
  *raw_out = reinterpret_cast<void*>(static_cast<uintptr_t>(Raw(index)));
}

void ArgDecoder::Handle(size_t index, uint32_t* raw_out) {
  const uint64_t raw = Raw(index);
  if (raw > std::numeric_limits<uint32_t>::max() && status_.ok()) {
    status_ = absl::InvalidArgumentError(
        absl::StrFormat("%s: handle id %d (arg %d) maps to 0x%x, too wide for a 32-bit handle",
                        call_.name, args_[index], index, raw));
  }
  *raw_out = static_cast<uint32_t>(raw);
}

void* ArgDecoder::Pointer(size_t field) {
  const uint64_t v = args_[field];
  if (env_.pointer) return env_.pointer(Fields(call_)[field], v);
  return reinterpret_cast<void*>(static_cast<uintptr_t>(v));
}

void* ArgDecoder::ElementPointer(int array, size_t elem, size_t index) {
  const uint64_t v = args_[index];
  const FieldInfo& arr = Fields(call_)[layout_.arrays[array].field];
  if (env_.element_pointer) {
    const ArrayLayout& a = layout_.arrays[array];
    const size_t element = a.stride == 0 ? 0 : (index - a.first) / a.stride;
    return env_.element_pointer(arr, element, ElementFields(arr)[elem], v);
  }
  if (env_.pointer) return env_.pointer(ElementFields(arr)[elem], v);
  return reinterpret_cast<void*>(static_cast<uintptr_t>(v));
}

bool ArgDecoder::OutputFits(int array, uint64_t capacity) {
  const ArrayLayout& a = layout_.arrays[array];
  if (a.length <= capacity) return true;
  if (status_.ok()) {
    status_ = absl::OutOfRangeError(absl::StrFormat(
        "%s: recorded output array %s has %d elements but the caller gave room for %d", call_.name,
        Fields(call_)[a.field].name, a.length, capacity));
  }
  return false;
}

absl::Status CheckEnv(const CallInfo& call, const InvokeEnv& env, bool needs_arena) {
  if (!env.handle_raw) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: InvokeEnv.handle_raw is not set", call.name));
  }
  if (needs_arena && env.arena == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: InvokeEnv.arena is not set", call.name));
  }
  if (env.actual != nullptr && !env.handle_id) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: InvokeEnv.actual needs InvokeEnv.handle_id", call.name));
  }
  return absl::OkStatus();
}

}  // namespace codec_internal

absl::Status ValidateArgs(CallId id, absl::Span<const uint64_t> args) {
  const CallInfo* call = GetCall(id);
  if (call == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("unknown call id %d", static_cast<int>(id)));
  }
  return codec_internal::ComputeLayout(*call, args).status();
}

}  // namespace cltrace::format

// The generated per-call functions and the CallId dispatch table (kInvokeThunks).
#include "format/call_codec_gen.inc"

namespace cltrace::format {

absl::StatusOr<int64_t> InvokeCall(CallId id, void* pfn, absl::Span<const uint64_t> args,
                                   const InvokeEnv& env) {
  const CallInfo* call = GetCall(id);
  if (call == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("unknown call id %d", static_cast<int>(id)));
  }
  if (pfn == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: no function to call (NULL %s)", call->name, call->member));
  }
  return codec_internal::kInvokeThunks[static_cast<size_t>(id)](pfn, args, env);
}

}  // namespace cltrace::format
