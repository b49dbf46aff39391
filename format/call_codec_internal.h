// Building blocks of the generated call codec (build*/gen/format/call_codec_gen.inc). Not a
// public API: use format/call_codec.h.
//
// The generated code stays short and readable because everything that does not depend on the
// C types lives here and is driven by the catalog's FieldInfo tables: ArgEncoder writes
// fields and arrays (computing array lengths from the count fields exactly as ValidateArgs
// checks them), ArgLayout/ComputeLayout validate recorded args, ArgDecoder reads them back.
//
// Thread-safety: the classes are used on one thread at a time.
#ifndef CLTRACE_FORMAT_CALL_CODEC_INTERNAL_H_
#define CLTRACE_FORMAT_CALL_CODEC_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ddi/catalog.h"
#include "format/call_codec.h"

namespace cltrace::format::codec_internal {

// A C value -> its 64-bit argument encoding (catalog_types.h): pointers as addresses, floats
// as bit patterns, signed integers sign-extended, unsigned zero-extended.
template <typename T>
uint64_t ToArg(T v) {
  if constexpr (std::is_pointer_v<T>) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(v));
  } else if constexpr (std::is_same_v<T, float>) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    return bits;
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? 1 : 0;
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  } else {
    static_assert(std::is_unsigned_v<T>);
    return static_cast<uint64_t>(v);
  }
}

// The inverse of ToArg for scalar C types (pointers go through ArgDecoder::Pointer).
template <typename T>
T FromArg(uint64_t v) {
  if constexpr (std::is_same_v<T, float>) {
    uint32_t bits = static_cast<uint32_t>(v);
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
  } else {
    static_assert(std::is_integral_v<T>);
    return static_cast<T>(v);
  }
}

// Capture side: fills an ArgVec for one call.
class ArgEncoder {
 public:
  ArgEncoder(CallId id, ArgVec* args, HandleIdFn handle_id);

  // Entry phase: args = one zero per fixed field.
  void BeginEntry();
  // Exit phase: keeps the fixed fields written at entry, drops any array elements.
  void BeginExit();

  template <typename T>
  void Set(size_t field, T value) {
    (*args_)[field] = ToArg(value);
  }
  void SetHandle(size_t field, const void* raw) { (*args_)[field] = Id(ToArg(raw)); }
  void SetHandle(size_t field, uint32_t raw) { (*args_)[field] = Id(raw); }

  // Starts array field `field` whose elements live at `data` (nullptr = NULL array): writes
  // the kArray value and returns how many elements to append next, i.e. the count the
  // catalog gives (from the already recorded count field, constant or capacity) capped at
  // kMaxRecordedArrayElements. Every field the count depends on must already be set.
  size_t BeginArray(size_t field, const void* data);
  // Same for a token stream whose length is its own element [count_in_element] (pCode).
  size_t BeginTokenArray(size_t field, const uint32_t* tokens);

  template <typename T>
  void Append(T value) {
    args_->push_back(ToArg(value));
  }
  void AppendHandle(const void* raw) { args_->push_back(Id(ToArg(raw))); }
  void AppendHandle(uint32_t raw) { args_->push_back(Id(raw)); }

 private:
  uint64_t Id(uint64_t raw) { return raw == 0 ? 0 : handle_id_(raw); }
  size_t StartArray(size_t field, bool null, uint64_t count);

  const CallInfo& call_;
  ArgVec* args_;
  HandleIdFn handle_id_;
};

// Where the elements of each array of a validated ArgVec are.
struct ArrayLayout {
  uint16_t field = 0;     // fixed-field index of the kArray field
  bool null = true;       // recorded NULL pointer
  uint32_t length = 0;    // recorded elements
  uint32_t capacity = 0;  // elements to allocate for the callee (>= length)
  size_t first = 0;       // args index of element 0's first field
  uint16_t stride = 0;    // fields per element
};

struct ArgLayout {
  absl::InlinedVector<ArrayLayout, 4> arrays;  // in fixed-field order
};

// ValidateArgs plus the array layout.
absl::StatusOr<ArgLayout> ComputeLayout(const CallInfo& call, absl::Span<const uint64_t> args);

// Invoke / apply side: reads a validated ArgVec. Problems that only show up while rebuilding
// (a raw handle too wide for a 32-bit handle, an output larger than the caller's buffer) are
// collected; status() reports the first.
class ArgDecoder {
 public:
  ArgDecoder(const CallInfo& call, absl::Span<const uint64_t> args, const InvokeEnv& env,
             const ArgLayout& layout);

  template <typename T>
  T Get(size_t index) const {
    return FromArg<T>(args_[index]);
  }
  bool Present(size_t field) const { return args_[field] != 0; }
  void Handle(size_t index, void** raw_out);
  void Handle(size_t index, uint32_t* raw_out);
  // kPtr value of fixed field `field`, or of element field `elem` of array `array` at
  // `index`, mapped through env.pointer.
  void* Pointer(size_t field);
  void* ElementPointer(int array, size_t elem, size_t index);

  // Array `array` (ordinal in fixed-field order).
  uint32_t Length(int array) const { return layout_.arrays[array].length; }
  // args index of field `elem` of element `i` of array `array`.
  size_t Element(int array, size_t i, size_t elem) const {
    const ArrayLayout& a = layout_.arrays[array];
    return a.first + i * a.stride + elem;
  }
  // nullptr for a recorded NULL array, else zeroed storage for its capacity.
  template <typename T>
  T* NewArray(int array) {
    const ArrayLayout& a = layout_.arrays[array];
    if (a.null) return nullptr;
    return static_cast<T*>(arena_->Allocate(sizeof(T) * a.capacity));
  }
  template <typename T>
  T* New() {
    return static_cast<T*>(arena_->Allocate(sizeof(T)));
  }
  // ApplyOutputs: true if the recorded array fits the caller's room, else records
  // OutOfRange and returns false.
  bool OutputFits(int array, uint64_t capacity);

  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }

 private:
  uint64_t Raw(size_t index);

  const CallInfo& call_;
  absl::Span<const uint64_t> args_;
  const InvokeEnv& env_;
  const ArgLayout& layout_;
  InvokeArena* arena_;
  absl::Status status_;
};

// Checks the env of an Invoke* / ApplyOutputs* call.
absl::Status CheckEnv(const CallInfo& call, const InvokeEnv& env, bool needs_arena);

}  // namespace cltrace::format::codec_internal

#endif  // CLTRACE_FORMAT_CALL_CODEC_INTERNAL_H_
