// Comparing a recorded argument vector with the one a replay produced (format::ArgVec as the
// codec captures it: fixed fields, then array elements).
//
// Thread-safety: pure functions.
#ifndef CLTRACE_REPLAYER_INTERNAL_COMPARE_H_
#define CLTRACE_REPLAYER_INTERNAL_COMPARE_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "ddi/catalog.h"
#include "format/event.h"
#include "format/jsonl.h"

namespace cltrace::replay::internal {

// A call's return value as text ("S_OK", "152").
inline std::string RetText(format::CallId call, int64_t ret) {
  format::Event e;
  e.call = call;
  e.ret = ret;
  e.end = 1;
  return format::RetToText(e);
}

// A non-handle field value as a report shows it (HRESULT and enum names, signed integers,
// floats, array lengths).
inline std::string OutputValueText(const format::FieldInfo& f, uint64_t v) {
  switch (f.kind) {
    case format::FieldKind::kHresult:
      return format::HresultToString(static_cast<int32_t>(v));
    case format::FieldKind::kEnum:
    case format::FieldKind::kFlags: {
      absl::Span<const format::EnumInfo> enums = format::Enums();
      if (f.type_index < enums.size()) {
        if (auto name = format::NameOfValue(enums[f.type_index], v)) return *name;
      }
      return absl::StrCat(v);
    }
    case format::FieldKind::kI32:
    case format::FieldKind::kI64:
      return absl::StrCat(static_cast<int64_t>(v));
    case format::FieldKind::kF32:
      return format::FloatToJson(static_cast<uint32_t>(v));
    case format::FieldKind::kArray:
      return v == 0 ? "NULL" : absl::StrCat(v - 1, " elements");
    case format::FieldKind::kPresent:
      return v == 0 ? "NULL" : "present";
    default:
      return absl::StrCat(v);
  }
}

struct FieldDiff {
  std::string name;
  const format::FieldInfo* field = nullptr;
  uint64_t expected = 0;
  uint64_t actual = 0;
};

// The first difference between a recorded and an actual argument vector among the inputs
// (callbacks: what the driver passed) or the outputs (DDI calls: what the driver answered).
// Pointer values are never compared (addresses differ by nature). `same_handle` decides
// handle fields (and may bind an output handle the recording names).
template <typename SameHandle>
std::optional<FieldDiff> FirstDifference(const format::CallInfo& ci, absl::Span<const uint64_t> rec,
                                         absl::Span<const uint64_t> act, format::FieldDir dir,
                                         SameHandle&& same_handle) {
  absl::Span<const format::FieldInfo> fixed = format::Fields(ci);
  if (rec.size() < fixed.size() || act.size() < fixed.size()) return std::nullopt;
  auto differs = [&](const format::FieldInfo& f, uint64_t a, uint64_t b) {
    if (f.kind == format::FieldKind::kPtr || f.dir != dir) return false;
    if (f.kind == format::FieldKind::kHandle) return !same_handle(a, b, f);
    return a != b;
  };
  for (size_t i = 0; i < fixed.size(); ++i) {
    if (differs(fixed[i], rec[i], act[i])) {
      return FieldDiff{fixed[i].name, &fixed[i], rec[i], act[i]};
    }
  }
  size_t rc = fixed.size(), ac = fixed.size();
  for (size_t i = 0; i < fixed.size(); ++i) {
    if (fixed[i].kind != format::FieldKind::kArray) continue;
    absl::Span<const format::FieldInfo> elems = format::ElementFields(fixed[i]);
    const uint64_t rn = rec[i] == 0 ? 0 : rec[i] - 1, an = act[i] == 0 ? 0 : act[i] - 1;
    for (uint64_t e = 0; e < std::min(rn, an); ++e) {
      for (size_t j = 0; j < elems.size(); ++j) {
        const size_t ri = rc + e * elems.size() + j, ai = ac + e * elems.size() + j;
        if (ri >= rec.size() || ai >= act.size()) return std::nullopt;
        if (differs(elems[j], rec[ri], act[ai])) {
          return FieldDiff{absl::StrCat(fixed[i].name, "[", e, "].", elems[j].name), &elems[j],
                           rec[ri], act[ai]};
        }
      }
    }
    rc += rn * elems.size();
    ac += an * elems.size();
  }
  return std::nullopt;
}

}  // namespace cltrace::replay::internal

#endif  // CLTRACE_REPLAYER_INTERNAL_COMPARE_H_
