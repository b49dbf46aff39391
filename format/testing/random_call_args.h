// Test support (format/call_codec_test.cc, recorder/roundtrip_test.cc): pseudo-random but
// valid arguments and returns for any catalog call, to round-trip through the call codec and
// the recorder's thunks.
//
// Thread-safety: none (test code).
#ifndef CLTRACE_FORMAT_TESTING_RANDOM_CALL_ARGS_H_
#define CLTRACE_FORMAT_TESTING_RANDOM_CALL_ARGS_H_

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "format/call_codec.h"
#include "format/catalog.h"

namespace cltrace::format::testing {

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  uint64_t Next() { return g_(); }
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : Next() % n; }
  bool Chance(int percent) { return Below(100) < static_cast<uint64_t>(percent); }

 private:
  std::mt19937_64 g_;
};

inline uint64_t SignExtend(uint64_t v, int bits) {
  const int shift = 64 - bits;
  return static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift);
}

// A value within the field's type; handles are 0 (NULL, one time in ten) or ids from
// `first_handle_id` on.
inline uint64_t RandomValue(const FieldInfo& f, Rng& r, uint64_t first_handle_id) {
  switch (f.kind) {
    case FieldKind::kHandle:
      return r.Chance(10) ? 0 : first_handle_id + r.Below(5000);
    case FieldKind::kPresent:
      return r.Chance(80) ? 1 : 0;
    case FieldKind::kArray:
    case FieldKind::kString:
      return 0;
    case FieldKind::kF32: {
      // Finite floats only: a signalling NaN may be quietened when it passes through an FPU
      // register, which would be a property of the platform, not of the codec.
      uint32_t bits = static_cast<uint32_t>(r.Next());
      if (((bits >> 23) & 0xff) == 0xff) bits &= ~(1u << 30);
      return bits;
    }
    default:
      break;
  }
  const uint64_t v = r.Next();
  if (f.bits == 0 || f.bits >= 64) return v;
  const bool is_signed = f.kind == FieldKind::kI32 || f.kind == FieldKind::kI64 ||
                         f.kind == FieldKind::kHresult || f.kind == FieldKind::kBool;
  return is_signed ? SignExtend(v, f.bits) : v & ((uint64_t{1} << f.bits) - 1);
}

// Valid args: every value within its type, counts consistent with their arrays, capacities
// at least the counts, absent structures all zero.
inline ArgVec RandomValidArgs(const CallInfo& call, Rng& r, uint64_t first_handle_id) {
  auto fields = Fields(call);
  ArgVec args(fields.size(), 0);
  std::vector<bool> count_like(fields.size(), false);
  for (const FieldInfo& f : fields) {
    if (f.kind != FieldKind::kArray) continue;
    if (f.count_field >= 0) count_like[f.count_field] = true;
    if (f.count_factor_field >= 0) count_like[f.count_factor_field] = true;
    if (f.capacity_field >= 0) count_like[f.capacity_field] = true;
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    args[i] = RandomValue(fields[i], r, first_handle_id);
    if (count_like[i]) args[i] = r.Below(6);
  }
  for (const FieldInfo& f : fields) {
    if (f.kind != FieldKind::kArray || f.count_field < 0) continue;
    uint64_t& count = args[f.count_field];
    if (f.embedded) count = std::min<uint64_t>(count, f.count_fixed);
    if (f.capacity_field >= 0 && f.capacity_field != f.count_field) {
      count = std::min(count, args[f.capacity_field]);
    }
    count = count * f.count_divisor + r.Below(f.count_divisor);
  }
  std::vector<bool> absent(fields.size(), false);
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].kind != FieldKind::kPresent || (args[i] != 0 && !absent[i])) continue;
    args[i] = 0;
    for (size_t j = i + 1; j <= i + fields[i].elem_count; ++j) {
      absent[j] = true;
      args[j] = 0;
    }
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldInfo& f = fields[i];
    if (f.kind != FieldKind::kArray || absent[i]) continue;
    if (!f.embedded && r.Chance(15)) continue;  // NULL
    uint64_t n = f.count_fixed;
    if (f.count_in_element > 0) n = f.count_in_element + 1 + r.Below(6);
    if (f.count_field >= 0) n = args[f.count_field] / f.count_divisor;
    if (f.count_factor_field >= 0) n *= args[f.count_factor_field];
    args[i] = 1 + n;
    auto elems = ElementFields(f);
    for (uint64_t e = 0; e < n; ++e) {
      for (size_t j = 0; j < elems.size(); ++j) {
        uint64_t v = RandomValue(elems[j], r, first_handle_id);
        if (f.count_in_element > 0 && e == f.count_in_element) v = n;  // the length token
        args.push_back(v);
      }
    }
  }
  return args;
}

// A return value of the call's kind (32-bit statuses sign-extended).
inline int64_t RandomReturn(const CallInfo& call, Rng& r) {
  switch (call.ret) {
    case ReturnKind::kVoid:
      return 0;
    case ReturnKind::kSize:
      return static_cast<int64_t>(r.Next());
    case ReturnKind::kU32:
      return static_cast<int64_t>(r.Next() & 0xffffffffu);
    case ReturnKind::kHresult:
    case ReturnKind::kNtstatus:
    case ReturnKind::kBool:
      return static_cast<int64_t>(SignExtend(r.Next(), 32));
  }
  return 0;
}

}  // namespace cltrace::format::testing

#endif  // CLTRACE_FORMAT_TESTING_RANDOM_CALL_ARGS_H_
