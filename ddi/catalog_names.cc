// Enumerator names <-> values and HRESULT names (ddi/catalog.h). Apart from catalog.cc, whose
// tables the recorder's shim links without Abseil's string libraries.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ddi/catalog.h"

namespace cltrace::ddi {

std::optional<std::string> NameOfValue(const EnumInfo& e, uint64_t value) {
  auto values = EnumValues(e);
  if (!e.is_flags) {
    for (const EnumValueInfo& v : values)
      if (v.value == value) return std::string(v.name);
    return std::nullopt;
  }
  if (value == 0) return std::nullopt;
  // Prefer single-bit names; a multi-bit mask name is used only for an exact match.
  for (const EnumValueInfo& v : values)
    if (v.value == value) return std::string(v.name);
  std::vector<absl::string_view> parts;
  uint64_t rest = value;
  for (const EnumValueInfo& v : values) {
    if (v.value != 0 && (v.value & (v.value - 1)) == 0 && (rest & v.value)) {
      parts.push_back(v.name);
      rest &= ~v.value;
    }
  }
  if (rest != 0) return std::nullopt;
  return absl::StrJoin(parts, "|");
}

std::optional<uint64_t> ValueOfName(const EnumInfo& e, absl::string_view name) {
  auto one = [&](absl::string_view n) -> std::optional<uint64_t> {
    for (const EnumValueInfo& v : EnumValues(e))
      if (n == v.name) return v.value;
    return std::nullopt;
  };
  if (!e.is_flags) return one(name);
  uint64_t value = 0;
  for (absl::string_view part : absl::StrSplit(name, '|')) {
    auto v = one(absl::StripAsciiWhitespace(part));
    if (!v) return std::nullopt;
    value |= *v;
  }
  return value;
}

const EnumInfo& HresultNames() {
  static const EnumInfo* e = FindEnum("HRESULT_NAMES");
  return *e;
}

std::string HresultToString(int32_t hr) {
  auto name = NameOfValue(HresultNames(), static_cast<uint32_t>(hr));
  if (name) return *name;
  return absl::StrFormat("0x%08x", static_cast<uint32_t>(hr));
}

}  // namespace cltrace::ddi
