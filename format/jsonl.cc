#include "format/jsonl.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "format/status_macros.h"

namespace cltrace::format {
namespace {

namespace pb = ::google::protobuf;

// Largest integer every JSON consumer (doubles) holds exactly.
constexpr uint64_t kMaxJsonInt = uint64_t{1} << 53;
// Deeper JSON is never a valid line; the limit keeps the recursive checker's stack small.
constexpr int kMaxJsonDepth = 32;

// ---- Strict syntax check ----------------------------------------------------------------

// RFC 8259 grammar of one line holding one object. protobuf's parser runs after it; this
// check exists because that parser accepts non-JSON and rounds big integers silently.
class SyntaxChecker {
 public:
  explicit SyntaxChecker(absl::string_view s) : s_(s) {}

  absl::Status Check() {
    SkipWs();
    if (pos_ >= s_.size() || s_[pos_] != '{') return Error("a line must hold one JSON object");
    CLTRACE_RETURN_IF_ERROR(Value(0));
    SkipWs();
    if (pos_ != s_.size()) return Error("unexpected text after the object");
    return absl::OkStatus();
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("column ", pos_ + 1, ": malformed JSON: ", what));
  }
  void SkipWs() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r' || s_[pos_] == '\n'))
      ++pos_;
  }
  bool Peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }

  absl::Status Value(int depth) {
    if (depth > kMaxJsonDepth) return Error("nesting too deep");
    SkipWs();
    if (pos_ >= s_.size()) return Error("unexpected end of line, expected a value");
    char c = s_[pos_];
    if (c == '{') return Object(depth);
    if (c == '[') return Array(depth);
    if (c == '"') return String();
    if (c == '-' || (c >= '0' && c <= '9')) return Number();
    for (absl::string_view word : {"true", "false", "null"}) {
      if (absl::StartsWith(s_.substr(pos_), word)) {
        pos_ += word.size();
        return absl::OkStatus();
      }
    }
    return Error("expected a value");
  }

  absl::Status Object(int depth) {
    ++pos_;  // '{'
    SkipWs();
    if (Peek('}')) {
      ++pos_;
      return absl::OkStatus();
    }
    while (true) {
      SkipWs();
      if (!Peek('"')) return Error("expected a quoted key");
      CLTRACE_RETURN_IF_ERROR(String());
      SkipWs();
      if (!Peek(':')) return Error("expected ':'");
      ++pos_;
      CLTRACE_RETURN_IF_ERROR(Value(depth + 1));
      SkipWs();
      if (Peek(',')) {
        ++pos_;
        continue;
      }
      if (Peek('}')) {
        ++pos_;
        return absl::OkStatus();
      }
      return Error("expected ',' or '}'");
    }
  }

  absl::Status Array(int depth) {
    ++pos_;  // '['
    SkipWs();
    if (Peek(']')) {
      ++pos_;
      return absl::OkStatus();
    }
    while (true) {
      CLTRACE_RETURN_IF_ERROR(Value(depth + 1));
      SkipWs();
      if (Peek(',')) {
        ++pos_;
        continue;
      }
      if (Peek(']')) {
        ++pos_;
        return absl::OkStatus();
      }
      return Error("expected ',' or ']'");
    }
  }

  absl::Status String() {
    ++pos_;  // '"'
    while (pos_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return absl::OkStatus();
      }
      if (c < 0x20) return Error("control character in a string (escape it)");
      if (c == '\\') {
        ++pos_;
        if (pos_ >= s_.size()) break;
        char e = s_[pos_];
        if (e == 'u') {
          for (int i = 1; i <= 4; ++i) {
            if (pos_ + i >= s_.size() || !absl::ascii_isxdigit(s_[pos_ + i]))
              return Error("\\u needs four hex digits");
          }
          pos_ += 4;
        } else if (absl::string_view("\"\\/bfnrt").find(e) == absl::string_view::npos) {
          return Error(absl::StrCat("invalid escape \\", absl::string_view(&e, 1)));
        }
      }
      ++pos_;
    }
    return Error("unterminated string");
  }

  absl::Status Number() {
    size_t start = pos_;
    if (Peek('-')) ++pos_;
    size_t digits_start = pos_;
    if (Peek('0')) {
      ++pos_;
    } else if (pos_ < s_.size() && s_[pos_] >= '1' && s_[pos_] <= '9') {
      while (pos_ < s_.size() && absl::ascii_isdigit(s_[pos_])) ++pos_;
    } else {
      return Error("expected a digit");
    }
    size_t digits_end = pos_;
    bool integral = true;
    if (Peek('.')) {
      integral = false;
      ++pos_;
      if (pos_ >= s_.size() || !absl::ascii_isdigit(s_[pos_]))
        return Error("expected a digit after '.'");
      while (pos_ < s_.size() && absl::ascii_isdigit(s_[pos_])) ++pos_;
    }
    if (Peek('e') || Peek('E')) {
      integral = false;
      ++pos_;
      if (Peek('+') || Peek('-')) ++pos_;
      if (pos_ >= s_.size() || !absl::ascii_isdigit(s_[pos_]))
        return Error("expected a digit in the exponent");
      while (pos_ < s_.size() && absl::ascii_isdigit(s_[pos_])) ++pos_;
    }
    if (integral) {
      // The parser would turn a larger integer into the nearest double: a different value.
      absl::string_view digits = s_.substr(digits_start, digits_end - digits_start);
      constexpr absl::string_view kLimit = "9007199254740992";  // 2^53
      if (digits.size() > kLimit.size() || (digits.size() == kLimit.size() && digits > kLimit)) {
        pos_ = start;
        return absl::InvalidArgumentError(
            absl::StrCat("column ", start + 1, ": integer ", s_.substr(start, digits_end - start),
                         " is beyond 2^53 and cannot be read exactly; write it as a string"));
      }
    }
    return absl::OkStatus();
  }

  absl::string_view s_;
  size_t pos_ = 0;
};

// ---- Values -----------------------------------------------------------------------------

using Int = __int128;

std::string IntText(Int v) {
  if (v < 0) return absl::StrCat("-", static_cast<uint64_t>(-v));
  return absl::StrCat(static_cast<uint64_t>(v));
}

absl::string_view KindOf(const pb::Value& v) {
  switch (v.kind_case()) {
    case pb::Value::kNullValue:
      return "null";
    case pb::Value::kNumberValue:
      return "a number";
    case pb::Value::kStringValue:
      return "a string";
    case pb::Value::kBoolValue:
      return "a boolean";
    case pb::Value::kStructValue:
      return "an object";
    case pb::Value::kListValue:
      return "an array";
    default:
      return "nothing";
  }
}

// "123", "-5", "0x1f": the string forms of integers (for values beyond 2^53 and pointers).
std::optional<Int> ParseIntString(absl::string_view s) {
  bool neg = absl::ConsumePrefix(&s, "-");
  uint64_t mag = 0;
  if (absl::ConsumePrefix(&s, "0x") || absl::ConsumePrefix(&s, "0X")) {
    if (s.empty() || s.size() > 16) return std::nullopt;
    for (char c : s)
      if (!absl::ascii_isxdigit(c)) return std::nullopt;
    if (!absl::SimpleHexAtoi(s, &mag)) return std::nullopt;
  } else {
    if (s.empty()) return std::nullopt;
    for (char c : s)
      if (!absl::ascii_isdigit(c)) return std::nullopt;
    if (!absl::SimpleAtoi(s, &mag)) return std::nullopt;
  }
  return neg ? -static_cast<Int>(mag) : static_cast<Int>(mag);
}

// An integer in [lo, hi] from a JSON number or (if allow_string) an integer string.
absl::StatusOr<Int> ReadInt(const pb::Value& v, absl::string_view what, Int lo, Int hi,
                            bool allow_string) {
  Int x = 0;
  if (v.kind_case() == pb::Value::kNumberValue) {
    double d = v.number_value();
    if (!(std::trunc(d) == d))
      return absl::InvalidArgumentError(absl::StrCat(what, " must be an integer"));
    if (std::fabs(d) > static_cast<double>(kMaxJsonInt))
      return absl::InvalidArgumentError(
          absl::StrCat(what, " is beyond 2^53 and cannot be read exactly; write it as a string"));
    x = static_cast<int64_t>(d);
  } else if (allow_string && v.kind_case() == pb::Value::kStringValue) {
    std::optional<Int> parsed = ParseIntString(v.string_value());
    if (!parsed)
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": \"", v.string_value(), "\" is not an integer"));
    x = *parsed;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be an integer, not ", KindOf(v)));
  }
  if (x < lo || x > hi)
    return absl::InvalidArgumentError(absl::StrCat(what, " = ", IntText(x), " is out of range [",
                                                   IntText(lo), ", ", IntText(hi), "]"));
  return x;
}

constexpr Int kU32Max = 0xffffffffu;
constexpr Int kI32Min = -(Int{1} << 31);
constexpr Int kU64Max = (Int{1} << 64) - 1;

// The range of a scalar field: its C type's width when the catalog gives one.
Int UnsignedMax(const FieldInfo& f, int default_bits) {
  int bits = f.bits > 0 && f.bits < 64 ? f.bits : default_bits;
  return (Int{1} << bits) - 1;
}
Int SignedMin(const FieldInfo& f, int default_bits) {
  int bits = f.bits > 0 && f.bits <= 64 ? f.bits : default_bits;
  return -(Int{1} << (bits - 1));
}
Int SignedMax(const FieldInfo& f, int default_bits) { return -SignedMin(f, default_bits) - 1; }

uint64_t SignExtend32(Int x) {
  return static_cast<uint64_t>(
      static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(x)))));
}

// A 32-bit value given either signed or unsigned (HRESULTs are written both ways).
absl::StatusOr<uint64_t> Read32SignExtended(const pb::Value& v, absl::string_view what,
                                            const EnumInfo* names) {
  if (names != nullptr && v.kind_case() == pb::Value::kStringValue &&
      !ParseIntString(v.string_value())) {
    std::optional<uint64_t> named = ValueOfName(*names, v.string_value());
    if (!named)
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": unknown name \"", v.string_value(), "\""));
    return SignExtend32(static_cast<Int>(*named));
  }
  CLTRACE_ASSIGN_OR_RETURN(Int x, ReadInt(v, what, kI32Min, kU32Max, /*allow_string=*/true));
  return SignExtend32(x);
}

const EnumInfo* EnumAt(uint16_t index) {
  auto enums = Enums();
  return index < enums.size() ? &enums[index] : nullptr;
}

bool IsScalarArray(const FieldInfo& array) {
  auto elems = ElementFields(array);
  return elems.size() == 1 && absl::string_view(elems[0].name) == array.name;
}

// Float from a JSON value, or its special spellings.
absl::StatusOr<uint64_t> ReadFloat(const pb::Value& v, absl::string_view what) {
  float f = 0;
  if (v.kind_case() == pb::Value::kNumberValue) {
    double d = v.number_value();
    // Beyond this the nearest float is infinity: a written finite number would change.
    constexpr double kFloatOverflow = 3.4028235677973366e38;  // 2^128 - 2^103
    if (std::fabs(d) >= kFloatOverflow)
      return absl::InvalidArgumentError(absl::StrCat(what, " is out of float range"));
    f = static_cast<float>(d);
  } else if (v.kind_case() == pb::Value::kStringValue) {
    absl::string_view s = v.string_value();
    uint32_t bits = 0;
    if (s == "NaN") {
      bits = 0x7fc00000u;
    } else if (s == "Infinity") {
      bits = 0x7f800000u;
    } else if (s == "-Infinity") {
      bits = 0xff800000u;
    } else if (absl::StartsWith(s, "0x") && s.size() <= 10 && s.size() > 2 &&
               absl::SimpleHexAtoi(s.substr(2), &bits)) {
      // a bit pattern (NaN payloads)
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": \"", s,
                       "\" is not a float (a number, \"NaN\", \"Infinity\", \"-Infinity\" "
                       "or a \"0x7fc00001\" bit pattern)"));
    }
    return bits;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a number, not ", KindOf(v)));
  }
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

// ---- Writing values ---------------------------------------------------------------------

enum class Style { kJson, kText };

std::string U64Json(uint64_t v, Style style) {
  if (v <= kMaxJsonInt || style == Style::kText) return absl::StrCat(v);
  return absl::StrCat("\"", v, "\"");
}

std::string I64Json(int64_t v, Style style) {
  uint64_t mag = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (mag <= kMaxJsonInt || style == Style::kText) return absl::StrCat(v);
  return absl::StrCat("\"", v, "\"");
}

std::string FloatJson(uint32_t bits, Style style) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  auto quoted = [&](absl::string_view s) {
    return style == Style::kJson ? absl::StrCat("\"", s, "\"") : std::string(s);
  };
  if (std::isnan(f))
    return quoted(bits == 0x7fc00000u ? std::string("NaN") : absl::StrFormat("0x%08x", bits));
  if (std::isinf(f)) return quoted(f > 0 ? "Infinity" : "-Infinity");
  // JSON "-0" reads back as +0 in protobuf's parser; "-0.0" keeps the sign.
  if (f == 0 && std::signbit(f)) return "-0.0";
  for (int precision = 1; precision < 9; ++precision) {
    std::string s = absl::StrFormat("%.*g", precision, static_cast<double>(f));
    double back = 0;
    if (absl::SimpleAtod(s, &back) && static_cast<float>(back) == f) return s;
  }
  return absl::StrFormat("%.9g", static_cast<double>(f));  // always exact for a float
}

std::string NamedOr(const EnumInfo* e, uint64_t value, std::string fallback, Style style) {
  if (e != nullptr) {
    std::optional<std::string> name = NameOfValue(*e, value);
    if (name) return style == Style::kJson ? JsonQuote(*name) : *name;
  }
  return fallback;
}

// The value of one non-array field as JSON or text. `v` is the stored 64-bit value.
std::string ValueText(const FieldInfo& f, uint64_t v, const TokenTable& handles,
                      const TokenTable& strings, Style style) {
  switch (f.kind) {
    // Values are written whole (never truncated to the field's width) so that a damaged
    // value stays visible; the importer then reports it as out of range.
    case FieldKind::kU32:
    case FieldKind::kU64:
    case FieldKind::kSize:
      return U64Json(v, style);
    case FieldKind::kI32:
    case FieldKind::kBool:
    case FieldKind::kI64:
      return I64Json(static_cast<int64_t>(v), style);
    case FieldKind::kHresult:
      return NamedOr(EnumAt(f.type_index), static_cast<uint32_t>(v),
                     SignExtend32(static_cast<Int>(v)) == v
                         ? absl::StrCat(static_cast<uint32_t>(v))
                         : I64Json(static_cast<int64_t>(v), style),
                     style);
    case FieldKind::kF32:
      return FloatJson(static_cast<uint32_t>(v), style);
    case FieldKind::kPtr: {
      std::string hex = absl::StrFormat("0x%x", v);
      return style == Style::kJson ? absl::StrCat("\"", hex, "\"") : hex;
    }
    case FieldKind::kHandle:
      if (v == 0) return style == Style::kJson ? "null" : "NULL";
      return style == Style::kJson ? JsonQuote(handles.Token(v)) : std::string(handles.Token(v));
    case FieldKind::kEnum:
    case FieldKind::kFlags:
      return NamedOr(EnumAt(f.type_index), v, U64Json(v, style), style);
    case FieldKind::kPresent:
      return v == 0 ? (style == Style::kJson ? "null" : "NULL") : "true";
    case FieldKind::kString:
      return JsonQuote(strings.Token(v));
    case FieldKind::kArray:
      break;
  }
  return absl::StrCat(v);
}

// Reads args[i] without going out of bounds on a malformed event.
class ArgCursor {
 public:
  explicit ArgCursor(const Event& e) : args_(e.args) {}
  uint64_t At(size_t i) const { return i < args_.size() ? args_[i] : 0; }

 private:
  const absl::InlinedVector<uint64_t, 8>& args_;
};

// Appends `fields` (values at args[base + i]) as JSON members or text pairs. Array elements
// are read from *tail, which advances. Returns whether anything was written.
bool AppendFieldList(absl::Span<const FieldInfo> fields, const ArgCursor& args, size_t base,
                     size_t* tail, const TokenTable& handles, const TokenTable& strings,
                     Style style, std::string* out) {
  bool any = false;
  size_t null_until = 0;  // fields before this index belong to a NULL pointer
  auto sep = [&] {
    if (any) absl::StrAppend(out, style == Style::kJson ? "," : ", ");
    any = true;
  };
  auto name = [&](const FieldInfo& f) {
    if (style == Style::kJson) {
      absl::StrAppend(out, "\"", f.name, "\":");
    } else {
      absl::StrAppend(out, f.name, "=");
    }
  };
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldInfo& f = fields[i];
    uint64_t v = args.At(base + i);
    if (i < null_until) continue;
    if (f.kind == FieldKind::kPresent) {
      if (v == 0) {
        null_until = i + 1 + f.elem_count;
        sep();
        name(f);
        absl::StrAppend(out, ValueText(f, 0, handles, strings, style));
      }
      continue;
    }
    if (f.kind == FieldKind::kArray) {
      // NULL, or for an embedded array (never NULL) empty: the import's defaults.
      if (v == 0 || (v == 1 && f.embedded)) continue;
      uint64_t count = v - 1;
      auto elems = ElementFields(f);
      bool scalar = IsScalarArray(f);
      sep();
      name(f);
      absl::StrAppend(out, "[");
      for (uint64_t k = 0; k < count; ++k) {
        if (k > 0) absl::StrAppend(out, style == Style::kJson ? "," : ", ");
        if (scalar) {
          absl::StrAppend(out, ValueText(elems[0], args.At(*tail), handles, strings, style));
        } else {
          absl::StrAppend(out, "{");
          AppendFieldList(elems, args, *tail, nullptr, handles, strings, style, out);
          absl::StrAppend(out, "}");
        }
        *tail += elems.size();
      }
      absl::StrAppend(out, "]");
      continue;
    }
    bool show = v != 0 || (f.kind == FieldKind::kHandle && f.required);
    if (!show) continue;
    sep();
    name(f);
    absl::StrAppend(out, ValueText(f, v, handles, strings, style));
  }
  return any;
}

std::string RetText(const CallInfo& call, int64_t ret, Style style) {
  switch (call.ret) {
    case ReturnKind::kVoid:
      return "";
    case ReturnKind::kHresult:
    case ReturnKind::kNtstatus: {
      uint32_t v = static_cast<uint32_t>(static_cast<uint64_t>(ret));
      const EnumInfo* names = call.ret_enum == kNoEnum ? nullptr : EnumAt(call.ret_enum);
      return NamedOr(names, v, absl::StrCat(v), style);
    }
    case ReturnKind::kSize:
      return U64Json(static_cast<uint64_t>(ret), style);
    case ReturnKind::kU32: {
      const EnumInfo* names = call.ret_enum == kNoEnum ? nullptr : EnumAt(call.ret_enum);
      return NamedOr(names, static_cast<uint64_t>(ret), U64Json(static_cast<uint64_t>(ret), style),
                     style);
    }
    case ReturnKind::kBool:
      return I64Json(ret, style);
  }
  return absl::StrCat(ret);
}

// ---- Reading a line ---------------------------------------------------------------------

enum class EndKind : uint8_t { kGiven, kNull, kInferred };

// A point on the position counter: the written position `pos` itself (rank 0), or the
// rank-th inferred end placed in the gap right after `pos`. Lexicographic order is time
// order because inferred ends sit before the next written position.
struct Point {
  uint64_t pos = 0;
  uint32_t rank = 0;
  auto operator<=>(const Point&) const = default;
};

// One parsed line before its positions are final.
struct LineRecord {
  Event event;  // seq, end (kGiven), parent as written
  EndKind end_kind = EndKind::kInferred;
  int64_t line = 0;
  // kInferred: the latest end among its returned nested calls so far (pos 0 = none), and
  // once it returned, its own end (rank 0 = not yet).
  Point latest_child;
  Point inferred_end;
};

const pb::Value* Find(const pb::Struct& obj, absl::string_view key) {
  auto it = obj.fields().find(std::string(key));
  return it == obj.fields().end() ? nullptr : &it->second;
}

// Rejects keys of `obj` that are not among `fields` (all of them, sorted, so the message is
// the same every time).
absl::Status CheckKeys(const pb::Struct& obj, absl::Span<const FieldInfo> fields,
                       absl::string_view where) {
  std::vector<std::string> unknown;
  for (const auto& [key, value] : obj.fields()) {
    bool known = false;
    for (const FieldInfo& f : fields) {
      if (key == f.name) {
        known = true;
        break;
      }
    }
    if (!known) unknown.push_back(absl::StrCat("\"", key, "\""));
  }
  if (unknown.empty()) return absl::OkStatus();
  std::sort(unknown.begin(), unknown.end());
  return absl::InvalidArgumentError(absl::StrCat("unknown argument",
                                                 unknown.size() > 1 ? "s " : " ",
                                                 absl::StrJoin(unknown, ", "), " in ", where));
}

class FieldReader {
 public:
  FieldReader(TokenTable* handles, TokenTable* strings) : handles_(handles), strings_(strings) {}

  // Reads `fields` from `obj` into out (one value per field); array elements go to *tail
  // (nullptr where arrays cannot occur).
  absl::Status ReadList(absl::Span<const FieldInfo> fields, const pb::Struct& obj,
                        absl::string_view where, absl::InlinedVector<uint64_t, 8>* out,
                        std::vector<uint64_t>* tail) {
    CLTRACE_RETURN_IF_ERROR(CheckKeys(obj, fields, where));
    size_t null_until = 0;
    const FieldInfo* null_owner = nullptr;
    for (size_t i = 0; i < fields.size(); ++i) {
      const FieldInfo& f = fields[i];
      const pb::Value* v = Find(obj, f.name);
      if (i < null_until) {
        if (v != nullptr)
          return absl::InvalidArgumentError(absl::StrCat("\"", f.name, "\" is a member of \"",
                                                         null_owner->name, "\", which is null"));
        out->push_back(0);
        continue;
      }
      if (v == nullptr) {
        if (f.kind == FieldKind::kHandle && f.required)
          return absl::InvalidArgumentError(
              absl::StrCat("missing required argument \"", f.name, "\" in ", where));
        // Defaults: a pointer to a structure is present; an embedded array is never NULL,
        // so it is empty.
        out->push_back(
            f.kind == FieldKind::kPresent || (f.kind == FieldKind::kArray && f.embedded) ? 1 : 0);
        continue;
      }
      if (f.kind == FieldKind::kArray) {
        if (tail == nullptr)
          return absl::InternalError(absl::StrCat("catalog: nested array ", f.name));
        CLTRACE_ASSIGN_OR_RETURN(uint64_t count, ReadArray(f, *v, tail));
        out->push_back(count);
        continue;
      }
      CLTRACE_ASSIGN_OR_RETURN(uint64_t value, ReadValue(f, *v));
      out->push_back(value);
      if (f.kind == FieldKind::kPresent && value == 0) {
        null_until = i + 1 + f.elem_count;
        null_owner = &f;
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<uint64_t> ReadValue(const FieldInfo& f, const pb::Value& v) {
    std::string what = absl::StrCat("\"", f.name, "\"");
    switch (f.kind) {
      case FieldKind::kU32: {
        CLTRACE_ASSIGN_OR_RETURN(Int x, ReadInt(v, what, 0, UnsignedMax(f, 32), true));
        return static_cast<uint64_t>(x);
      }
      case FieldKind::kI32: {
        CLTRACE_ASSIGN_OR_RETURN(Int x, ReadInt(v, what, SignedMin(f, 32), SignedMax(f, 32), true));
        return static_cast<uint64_t>(static_cast<int64_t>(x));
      }
      case FieldKind::kU64:
      case FieldKind::kSize: {
        CLTRACE_ASSIGN_OR_RETURN(Int x, ReadInt(v, what, 0, UnsignedMax(f, 64), true));
        return static_cast<uint64_t>(x);
      }
      case FieldKind::kI64: {
        CLTRACE_ASSIGN_OR_RETURN(Int x, ReadInt(v, what, SignedMin(f, 64), SignedMax(f, 64), true));
        return static_cast<uint64_t>(static_cast<int64_t>(x));
      }
      case FieldKind::kBool:
        if (v.kind_case() == pb::Value::kBoolValue) return v.bool_value() ? 1 : 0;
        return Read32SignExtended(v, what, nullptr);
      case FieldKind::kHresult:
        return Read32SignExtended(v, what, EnumAt(f.type_index));
      case FieldKind::kF32:
        return ReadFloat(v, what);
      case FieldKind::kPtr: {
        if (v.kind_case() == pb::Value::kNullValue) return 0;
        CLTRACE_ASSIGN_OR_RETURN(Int x, ReadInt(v, what, 0, kU64Max, true));
        return static_cast<uint64_t>(x);
      }
      case FieldKind::kHandle: {
        if (v.kind_case() == pb::Value::kNullValue) return 0;
        if (v.kind_case() != pb::Value::kStringValue)
          return absl::InvalidArgumentError(
              absl::StrCat(what, " must be a handle token string or null, not ", KindOf(v)));
        absl::string_view token = v.string_value();
        // C's NULL spelled as a token is still NULL (recorders never give 0 a token).
        if (token.empty() || token == "0" || token == "0x0") return 0;
        return handles_->Intern(token);
      }
      case FieldKind::kEnum:
      case FieldKind::kFlags: {
        const EnumInfo* e = EnumAt(f.type_index);
        if (v.kind_case() == pb::Value::kStringValue && !ParseIntString(v.string_value())) {
          std::optional<uint64_t> named =
              e == nullptr ? std::nullopt : ValueOfName(*e, v.string_value());
          if (!named)
            return absl::InvalidArgumentError(absl::StrCat(what, ": unknown ",
                                                           e != nullptr ? e->name : "enum",
                                                           " name \"", v.string_value(), "\""));
          return *named;
        }
        CLTRACE_ASSIGN_OR_RETURN(Int x, ReadInt(v, what, 0, UnsignedMax(f, 32), true));
        return static_cast<uint64_t>(x);
      }
      case FieldKind::kPresent:
        if (v.kind_case() == pb::Value::kNullValue) return 0;
        if (v.kind_case() == pb::Value::kBoolValue && v.bool_value()) return 1;
        if (v.kind_case() == pb::Value::kStructValue) {
          if (v.struct_value().fields_size() == 0) return 1;
          return absl::InvalidArgumentError(absl::StrCat(
              "the members of ", what, " are written directly in \"args\", not nested"));
        }
        return absl::InvalidArgumentError(
            absl::StrCat(what, " must be null (NULL pointer) or true, not ", KindOf(v)));
      case FieldKind::kString:
        if (v.kind_case() == pb::Value::kNullValue) return 0;
        if (v.kind_case() != pb::Value::kStringValue)
          return absl::InvalidArgumentError(
              absl::StrCat(what, " must be a string, not ", KindOf(v)));
        return strings_->Intern(v.string_value());
      case FieldKind::kArray:
        break;
    }
    return absl::InternalError(absl::StrCat(what, ": unexpected field kind"));
  }

 private:
  absl::StatusOr<uint64_t> ReadArray(const FieldInfo& f, const pb::Value& v,
                                     std::vector<uint64_t>* tail) {
    if (v.kind_case() == pb::Value::kNullValue && !f.embedded) return 0;
    if (v.kind_case() != pb::Value::kListValue)
      return absl::InvalidArgumentError(
          absl::StrCat("\"", f.name, "\" must be an array",
                       f.embedded ? " (embedded, never null)" : " or null", ", not ", KindOf(v)));
    auto elems = ElementFields(f);
    bool scalar = IsScalarArray(f);
    const auto& items = v.list_value().values();
    for (int k = 0; k < items.size(); ++k) {
      const pb::Value& item = items[k];
      std::string where = absl::StrCat(f.name, "[", k, "]");
      if (scalar) {
        auto value = ReadValue(elems[0], item);
        if (!value.ok())
          return absl::InvalidArgumentError(absl::StrCat(where, ": ", value.status().message()));
        tail->push_back(*value);
        continue;
      }
      if (item.kind_case() != pb::Value::kStructValue)
        return absl::InvalidArgumentError(
            absl::StrCat(where, " must be an object, not ", KindOf(item)));
      absl::InlinedVector<uint64_t, 8> values;
      absl::Status st = ReadList(elems, item.struct_value(), where, &values, nullptr);
      if (!st.ok() && !absl::StrContains(st.message(), where))
        return absl::InvalidArgumentError(absl::StrCat(where, ": ", st.message()));
      CLTRACE_RETURN_IF_ERROR(st);
      tail->insert(tail->end(), values.begin(), values.end());
    }
    return static_cast<uint64_t>(items.size()) + 1;
  }

  TokenTable* handles_;
  TokenTable* strings_;
};

constexpr absl::string_view kTopKeys[] = {"seq", "tid", "fn", "args", "ret", "parent", "end"};

absl::StatusOr<int64_t> ReadRet(const CallInfo& call, const pb::Value& v) {
  switch (call.ret) {
    case ReturnKind::kVoid:
      return absl::InvalidArgumentError(absl::StrCat(call.name, " returns void; remove \"ret\""));
    case ReturnKind::kHresult:
    case ReturnKind::kNtstatus: {
      const EnumInfo* names = call.ret_enum == kNoEnum ? nullptr : EnumAt(call.ret_enum);
      CLTRACE_ASSIGN_OR_RETURN(uint64_t x, Read32SignExtended(v, "\"ret\"", names));
      return static_cast<int64_t>(x);
    }
    case ReturnKind::kSize: {
      CLTRACE_ASSIGN_OR_RETURN(Int x, ReadInt(v, "\"ret\"", 0, kU64Max, true));
      return static_cast<int64_t>(static_cast<uint64_t>(x));
    }
    case ReturnKind::kU32: {
      const EnumInfo* names = call.ret_enum == kNoEnum ? nullptr : EnumAt(call.ret_enum);
      if (names != nullptr && v.kind_case() == pb::Value::kStringValue &&
          !ParseIntString(v.string_value())) {
        std::optional<uint64_t> named = ValueOfName(*names, v.string_value());
        if (!named)
          return absl::InvalidArgumentError(
              absl::StrCat("\"ret\": unknown name \"", v.string_value(), "\""));
        return static_cast<int64_t>(*named);
      }
      CLTRACE_ASSIGN_OR_RETURN(Int x, ReadInt(v, "\"ret\"", 0, kU32Max, true));
      return static_cast<int64_t>(x);
    }
    case ReturnKind::kBool: {
      if (v.kind_case() == pb::Value::kBoolValue) return v.bool_value() ? 1 : 0;
      CLTRACE_ASSIGN_OR_RETURN(uint64_t x, Read32SignExtended(v, "\"ret\"", nullptr));
      return static_cast<int64_t>(x);
    }
  }
  return absl::InternalError("unexpected return kind");
}

absl::Status ParseLine(absl::string_view text, FieldReader* reader, LineRecord* rec) {
  CLTRACE_RETURN_IF_ERROR(SyntaxChecker(text).Check());
  pb::Struct obj;
  pb::util::JsonParseOptions options;
  auto parsed = pb::util::JsonStringToMessage(std::string(text), &obj, options);
  if (!parsed.ok()) {
    // protobuf appends the line and a caret on further lines; the first line is the reason.
    std::string reason(parsed.message());
    reason = std::string(absl::StripAsciiWhitespace(reason.substr(0, reason.find('\n'))));
    return absl::InvalidArgumentError(absl::StrCat("malformed JSON: ", reason));
  }
  for (const auto& [key, value] : obj.fields()) {
    if (std::find(std::begin(kTopKeys), std::end(kTopKeys), key) == std::end(kTopKeys))
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown key \"", key, "\" (expected seq, tid, fn, args, ret, parent, end)"));
  }
  Event& e = rec->event;
  const pb::Value* v = Find(obj, "seq");
  if (v == nullptr) return absl::InvalidArgumentError("missing \"seq\"");
  CLTRACE_ASSIGN_OR_RETURN(Int seq, ReadInt(*v, "\"seq\"", 1, kMaxJsonInt, false));
  e.seq = static_cast<uint64_t>(seq);
  v = Find(obj, "tid");
  if (v == nullptr) return absl::InvalidArgumentError("missing \"tid\"");
  CLTRACE_ASSIGN_OR_RETURN(Int tid, ReadInt(*v, "\"tid\"", 0, kU32Max, false));
  e.tid = static_cast<uint32_t>(tid);
  v = Find(obj, "fn");
  if (v == nullptr) return absl::InvalidArgumentError("missing \"fn\"");
  if (v->kind_case() != pb::Value::kStringValue)
    return absl::InvalidArgumentError(absl::StrCat("\"fn\" must be a string, not ", KindOf(*v)));
  const CallInfo* call = FindCall(v->string_value());
  if (call == nullptr) {
    absl::string_view name = v->string_value();
    std::string hint;
    if (absl::StartsWith(name, "pfn") && FindCall(name.substr(3)) != nullptr)
      hint = absl::StrCat(" (write \"", name.substr(3), "\", without \"pfn\")");
    return absl::InvalidArgumentError(absl::StrCat("unknown function \"", name, "\"", hint));
  }
  e.call = IdOf(*call);
  v = Find(obj, "args");
  if (v == nullptr) return absl::InvalidArgumentError("missing \"args\"");
  if (v->kind_case() != pb::Value::kStructValue)
    return absl::InvalidArgumentError(absl::StrCat("\"args\" must be an object, not ", KindOf(*v)));
  std::vector<uint64_t> tail;
  e.args.clear();
  CLTRACE_RETURN_IF_ERROR(reader->ReadList(Fields(*call), v->struct_value(),
                                           absl::StrCat(call->name, " args"), &e.args, &tail));
  e.args.insert(e.args.end(), tail.begin(), tail.end());

  v = Find(obj, "end");
  if (v == nullptr) {
    rec->end_kind = EndKind::kInferred;
  } else if (v->kind_case() == pb::Value::kNullValue) {
    rec->end_kind = EndKind::kNull;
  } else {
    CLTRACE_ASSIGN_OR_RETURN(Int end, ReadInt(*v, "\"end\"", 0, kMaxJsonInt, false));
    if (end == 0) {
      rec->end_kind = EndKind::kNull;  // 0 is no position: "never returned", like null
    } else {
      if (static_cast<uint64_t>(end) <= e.seq)
        return absl::InvalidArgumentError(
            absl::StrCat("end ", IntText(end), " is not after seq ", e.seq));
      rec->end_kind = EndKind::kGiven;
      e.end = static_cast<uint64_t>(end);
    }
  }
  v = Find(obj, "ret");
  if (v != nullptr && v->kind_case() != pb::Value::kNullValue) {
    if (rec->end_kind == EndKind::kNull)
      return absl::InvalidArgumentError("a call that never returned (end null) has no \"ret\"");
    CLTRACE_ASSIGN_OR_RETURN(e.ret, ReadRet(*call, *v));
  }
  v = Find(obj, "parent");
  if (v != nullptr && v->kind_case() != pb::Value::kNullValue) {
    CLTRACE_ASSIGN_OR_RETURN(Int parent, ReadInt(*v, "\"parent\"", 0, kMaxJsonInt, false));
    e.parent = static_cast<uint64_t>(parent);
  }
  return absl::OkStatus();
}

// ---- Position resolution ----------------------------------------------------------------

}  // namespace

class JsonlDecoder::Impl {
 public:
  Impl() : reader_(&handles_, &strings_) {}

  absl::Status AddLine(absl::string_view text) {
    if (!status_.ok()) return status_;
    if (finished_) return absl::FailedPreconditionError("AddLine after Finish");
    ++lines_;
    absl::ConsumeSuffix(&text, "\r");
    if (absl::StripAsciiWhitespace(text).empty()) return absl::OkStatus();
    LineRecord rec;
    rec.line = lines_;
    absl::Status st = ParseLine(text, &reader_, &rec);
    if (st.ok() && rec.event.seq <= last_seq_)
      st = absl::InvalidArgumentError(absl::StrCat(
          "seq ", rec.event.seq, " is not greater than the previous line's seq ", last_seq_));
    if (!st.ok()) {
      state_intact_ = true;
      return Fail(st);
    }
    return Fail(Accept(std::move(rec)));
  }

  bool FinishBeforeError() {
    if (status_.ok() || !state_intact_ || finished_) return false;
    absl::Status error = status_;
    status_ = absl::OkStatus();
    absl::Status st = Finish();
    status_ = error;
    return st.ok();
  }

  absl::Status Finish() {
    if (!status_.ok()) return status_;
    if (finished_) return absl::OkStatus();
    absl::Status st = Advance(std::numeric_limits<uint64_t>::max(), nullptr);
    if (st.ok()) {
      // Only calls with inferred or null ends are left in flight. Those below a call that
      // never returned never returned either; the rest return now, innermost first.
      for (auto& [tid, stack] : stacks_) {
        bool below_null = false;
        while (!stack.empty()) {
          Frame& top = stack.back();
          if (top.kind == EndKind::kNull) {
            below_null = true;
          } else if (below_null) {
            top.rec->end_kind = EndKind::kNull;
            unresolved_.erase(top.seq);
          } else {
            Close(stack);
            continue;  // Close popped it
          }
          stack.pop_back();
        }
      }
      finished_ = true;
      st = Drain();
    }
    return Fail(st, /*at_end=*/true);
  }

  bool Next(Event* event) {
    if (ready_.empty()) return false;
    *event = std::move(ready_.front());
    ready_.pop_front();
    return true;
  }

  const TokenTable& handles() const { return handles_; }
  const TokenTable& strings() const { return strings_; }
  int64_t lines() const { return lines_; }

 private:
  struct Frame {
    uint64_t seq;
    EndKind kind;
    uint64_t end;  // kGiven
    int64_t line;
    LineRecord* rec;  // valid while the frame is on the stack for kInferred
  };
  struct Given {
    uint64_t end;
    uint64_t seq;
    uint32_t tid;
    int64_t line;
    bool operator>(const Given& o) const { return end > o.end; }
  };

  // Records the first error, prefixed with where it was found.
  absl::Status Fail(absl::Status st, bool at_end = false) {
    if (!st.ok()) {
      status_ = absl::Status(
          st.code(), at_end ? absl::StrCat("end of input (after line ", lines_, "): ", st.message())
                            : absl::StrCat("line ", lines_, ": ", st.message()));
      return status_;
    }
    return st;
  }

  absl::Status Accept(LineRecord rec) {
    const uint64_t seq = rec.event.seq;
    const uint32_t tid = rec.event.tid;
    const uint64_t parent = rec.event.parent;
    CLTRACE_RETURN_IF_ERROR(Advance(seq, &rec));
    last_seq_ = seq;
    timeline_.push_back(seq);
    std::vector<Frame>& stack = stacks_[tid];
    if (parent != 0) {
      size_t i = stack.size();
      while (i > 0 && stack[i - 1].seq != parent) --i;
      if (i == 0) {
        std::string innermost = stack.empty() ? std::string("none")
                                              : absl::StrCat("seq ", stack.back().seq, " (line ",
                                                             stack.back().line, ")");
        return absl::InvalidArgumentError(
            absl::StrCat("parent ", parent, " is not a call in flight on thread ", tid,
                         " (innermost call in flight there: ", innermost, ")"));
      }
      while (stack.size() > i) CLTRACE_RETURN_IF_ERROR(PopReturned(stack, rec.event));
      // Checked here too (not only when the parent's end passes) so that the message
      // points at this line.
      const Frame& p = stack.back();
      if (p.kind == EndKind::kGiven && rec.end_kind == EndKind::kNull)
        return absl::InvalidArgumentError(
            absl::StrCat("this call never returns (end null) but its parent, seq ", p.seq,
                         " (line ", p.line, "), returns at ", p.end));
      if (p.kind == EndKind::kGiven && rec.end_kind == EndKind::kGiven && rec.event.end > p.end)
        return absl::InvalidArgumentError(absl::StrCat("end ", rec.event.end,
                                                       " is after the end of its parent, seq ",
                                                       p.seq, " (line ", p.line, "): ", p.end));
    } else {
      while (!stack.empty()) CLTRACE_RETURN_IF_ERROR(PopReturned(stack, rec.event));
    }
    pending_.push_back(std::move(rec));
    const LineRecord& stored = pending_.back();
    stack.push_back(Frame{seq, stored.end_kind, stored.event.end, stored.line, &pending_.back()});
    if (stored.end_kind == EndKind::kGiven) {
      ends_.push(Given{stored.event.end, seq, tid, stored.line});
    } else if (stored.end_kind == EndKind::kInferred) {
      unresolved_.insert(seq);
    }
    return Drain();
  }

  // The innermost call of `stack` must have returned before `next` was entered on its thread.
  absl::Status PopReturned(std::vector<Frame>& stack, const Event& next) {
    const Frame& top = stack.back();
    if (top.kind == EndKind::kGiven)
      return absl::InvalidArgumentError(
          absl::StrCat("seq ", next.seq, " is entered on thread ", next.tid, " while seq ", top.seq,
                       " (line ", top.line, ") is in flight there until ", top.end,
                       "; a call made inside it must name it (or a call inside it) as \"parent\""));
    if (top.kind == EndKind::kNull)
      return absl::InvalidArgumentError(
          absl::StrCat("seq ", next.seq, " is entered on thread ", next.tid, " outside seq ",
                       top.seq, " (line ", top.line, "), which never returned (end null)"));
    Close(stack);
    return absl::OkStatus();
  }

  // Resolves the inferred end of the innermost frame and pops it.
  void Close(std::vector<Frame>& stack) {
    Frame top = stack.back();
    stack.pop_back();
    LineRecord& rec = *top.rec;
    Point base{top.seq, 0};
    if (rec.latest_child > base) base = rec.latest_child;
    rec.inferred_end = Point{base.pos, base.rank + 1};
    uint32_t& chain = chain_len_[base.pos];
    chain = std::max(chain, rec.inferred_end.rank);
    unresolved_.erase(top.seq);
    ReportToParent(stack, rec.inferred_end);
  }

  void ReportToParent(std::vector<Frame>& stack, Point end) {
    if (stack.empty() || stack.back().kind != EndKind::kInferred) return;
    LineRecord& parent = *stack.back().rec;
    if (end > parent.latest_child) parent.latest_child = end;
  }

  // Passes every given end before `limit`: those calls return, in order.
  absl::Status Advance(uint64_t limit, const LineRecord* next) {
    while (!ends_.empty() && ends_.top().end <= limit) {
      Given g = ends_.top();
      ends_.pop();
      if (next != nullptr && g.end == limit)
        return absl::InvalidArgumentError(
            absl::StrCat("seq ", limit, " is also the end of seq ", g.seq, " (line ", g.line, ")"));
      if (!ends_.empty() && ends_.top().end == g.end)
        return absl::InvalidArgumentError(
            absl::StrCat("end ", g.end, " is used twice (seq ", g.seq, " on line ", g.line,
                         " and seq ", ends_.top().seq, " on line ", ends_.top().line, ")"));
      std::vector<Frame>& stack = stacks_[g.tid];
      while (!stack.empty() && stack.back().seq != g.seq) {
        const Frame& top = stack.back();
        if (top.kind == EndKind::kInferred) {
          Close(stack);
          continue;
        }
        if (top.kind == EndKind::kNull)
          return absl::InvalidArgumentError(absl::StrCat(
              "seq ", top.seq, " (line ", top.line, ") never returned (end null) but seq ", g.seq,
              " (line ", g.line, "), which it was made inside, returns at ", g.end));
        return absl::InvalidArgumentError(absl::StrCat(
            "seq ", top.seq, " (line ", top.line, ") returns at ", top.end, ", after seq ", g.seq,
            " (line ", g.line, "), which it was made inside, returns at ", g.end));
      }
      if (!stack.empty()) {
        stack.pop_back();
        ReportToParent(stack, Point{g.end, 0});
      }
      timeline_.push_back(g.end);
    }
    return absl::OkStatus();
  }

  // Fixes the offsets of finished gaps and moves events whose positions are final to ready_.
  absl::Status Drain() {
    while (!timeline_.empty()) {
      uint64_t u = timeline_.front();
      // An unresolved inferred end with seq <= u may still join the chain after u.
      if (!unresolved_.empty() && *unresolved_.begin() <= u) break;
      if (timeline_.size() < 2 && !finished_) break;
      uint32_t k = 0;
      if (auto it = chain_len_.find(u); it != chain_len_.end()) {
        k = it->second;
        chain_len_.erase(it);
      }
      if (timeline_.size() >= 2) {
        // The next written position moves up just far enough to clear the gap's ends; a
        // move is absorbed again by later gaps with spare room.
        uint64_t next = timeline_[1];
        uint64_t lowest = u + offset_ + k + 1;
        uint64_t offset = lowest > next ? lowest - next : 0;
        if (offset != offset_) {
          offset_ = offset;
          breaks_.push_back({next, offset_});
        }
      }
      timeline_.pop_front();
    }
    uint64_t known = timeline_.empty() ? std::numeric_limits<uint64_t>::max() : timeline_.front();
    if (!finished_ && timeline_.empty()) known = 0;
    while (!pending_.empty()) {
      LineRecord& rec = pending_.front();
      Event& e = rec.event;
      if (e.seq > known) break;
      uint64_t end = 0;
      switch (rec.end_kind) {
        case EndKind::kGiven:
          if (e.end > known) return absl::OkStatus();
          end = Final(e.end);
          break;
        case EndKind::kNull:
          break;
        case EndKind::kInferred:
          if (rec.inferred_end.rank == 0 || rec.inferred_end.pos > known) return absl::OkStatus();
          end = Final(rec.inferred_end.pos) + rec.inferred_end.rank;
          break;
      }
      e.seq = Final(e.seq);
      e.end = end;
      if (e.parent != 0) e.parent = Final(e.parent);
      if (std::max(e.seq, e.end) > kMaxJsonInt)
        return absl::InvalidArgumentError(
            "positions pass 2^53 after making room for inferred ends; give \"end\" values");
      ready_.push_back(std::move(e));
      pending_.pop_front();
    }
    return absl::OkStatus();
  }

  uint64_t Final(uint64_t pos) const {
    auto it = std::upper_bound(
        breaks_.begin(), breaks_.end(), pos,
        [](uint64_t p, const std::pair<uint64_t, uint64_t>& b) { return p < b.first; });
    return it == breaks_.begin() ? pos : pos + std::prev(it)->second;
  }

  TokenTable handles_;
  TokenTable strings_;
  FieldReader reader_;
  absl::Status status_;
  bool state_intact_ = false;  // the error came before the bad line changed any state
  bool finished_ = false;
  int64_t lines_ = 0;
  uint64_t last_seq_ = 0;

  // Not yet emitted, seq order. A deque: frames point at records, and pointers into a deque
  // stay valid while only its ends change.
  std::deque<LineRecord> pending_;
  std::deque<Event> ready_;
  absl::flat_hash_map<uint32_t, std::vector<Frame>> stacks_;  // calls in flight per thread
  std::priority_queue<Given, std::vector<Given>, std::greater<Given>> ends_;  // given ends ahead
  std::set<uint64_t> unresolved_;  // seqs of inferred ends not yet placed
  std::deque<uint64_t> timeline_;  // written positions whose gap is not settled yet
  absl::flat_hash_map<uint64_t, uint32_t> chain_len_;  // inferred ends per gap
  uint64_t offset_ = 0;  // how far the last settled written position moved up
  std::vector<std::pair<uint64_t, uint64_t>> breaks_;  // (first position, offset from there)
};

JsonlDecoder::JsonlDecoder() : impl_(std::make_unique<Impl>()) {}
JsonlDecoder::~JsonlDecoder() = default;
absl::Status JsonlDecoder::AddLine(absl::string_view line) { return impl_->AddLine(line); }
absl::Status JsonlDecoder::Finish() { return impl_->Finish(); }
bool JsonlDecoder::Next(Event* event) { return impl_->Next(event); }
bool JsonlDecoder::FinishBeforeError() { return impl_->FinishBeforeError(); }
const TokenTable& JsonlDecoder::handles() const { return impl_->handles(); }
const TokenTable& JsonlDecoder::strings() const { return impl_->strings(); }
int64_t JsonlDecoder::lines() const { return impl_->lines(); }

absl::StatusOr<JsonlTrace> ParseJsonl(absl::string_view text) {
  JsonlDecoder decoder;
  JsonlTrace trace;
  Event e;
  // A final '\n' ends the last line rather than starting an empty one.
  absl::ConsumeSuffix(&text, "\n");
  if (!text.empty()) {
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      CLTRACE_RETURN_IF_ERROR(decoder.AddLine(line));
      while (decoder.Next(&e)) trace.events.push_back(std::move(e));
    }
  }
  CLTRACE_RETURN_IF_ERROR(decoder.Finish());
  while (decoder.Next(&e)) trace.events.push_back(std::move(e));
  trace.handles = decoder.handles();
  trace.strings = decoder.strings();
  trace.lines = decoder.lines();
  return trace;
}

absl::StatusOr<std::unique_ptr<JsonlReader>> JsonlReader::Open(const std::string& path) {
  std::unique_ptr<JsonlReader> r(new JsonlReader());
  r->in_.open(path, std::ios::binary);
  if (!r->in_) return absl::NotFoundError(absl::StrCat("cannot open: ", std::strerror(errno)));
  return r;
}

bool JsonlReader::Next(Event* event) {
  while (true) {
    if (decoder_.Next(event)) return true;
    if (done_ || !status_.ok()) return false;
    std::string line;
    if (std::getline(in_, line)) {
      status_ = decoder_.AddLine(line);
      if (!status_.ok()) decoder_.FinishBeforeError();
    } else {
      done_ = true;
      status_ = in_.bad() ? absl::DataLossError("read error") : decoder_.Finish();
    }
  }
}

absl::Status CheckEventLayout(const Event& event) {
  const CallInfo* call = GetCall(event.call);
  if (call == nullptr)
    return absl::InvalidArgumentError(
        absl::StrCat("unknown call id ", static_cast<uint32_t>(event.call)));
  auto fields = Fields(*call);
  if (event.args.size() < fields.size())
    return absl::InvalidArgumentError(absl::StrCat(call->name, ": ", event.args.size(),
                                                   " argument values, the call has ", fields.size(),
                                                   " fields"));
  // Fields of a NULL structure pointer hold 0, so arrays inside one announce nothing.
  uint64_t expected = fields.size();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].kind != FieldKind::kArray || event.args[i] == 0) continue;
    uint64_t count = event.args[i] - 1;
    uint64_t per = ElementFields(fields[i]).size();
    uint64_t available = event.args.size() > expected ? event.args.size() - expected : 0;
    if (per > 0 && count > available / per)  // also keeps count * per from overflowing
      return absl::InvalidArgumentError(absl::StrCat(call->name, ": array ", fields[i].name,
                                                     " announces ", count, " elements, ", available,
                                                     " values are left"));
    expected += count * per;
  }
  if (expected != event.args.size())
    return absl::InvalidArgumentError(
        absl::StrCat(call->name, ": ", event.args.size(), " argument values, expected ", expected));
  return absl::OkStatus();
}

std::string EventToJsonl(const Event& event, const TokenTable& handles, const TokenTable& strings) {
  const CallInfo* call = GetCall(event.call);
  std::string out = absl::StrCat("{\"seq\":", event.seq, ",\"tid\":", event.tid, ",\"fn\":");
  if (call == nullptr) {
    absl::StrAppend(&out, "null,\"args\":{}");
  } else {
    absl::StrAppend(&out, JsonQuote(call->name), ",\"args\":{");
    auto fields = Fields(*call);
    size_t tail = fields.size();
    AppendFieldList(fields, ArgCursor(event), 0, &tail, handles, strings, Style::kJson, &out);
    absl::StrAppend(&out, "}");
    if (call->ret != ReturnKind::kVoid && event.end != 0)
      absl::StrAppend(&out, ",\"ret\":", RetText(*call, event.ret, Style::kJson));
  }
  if (event.parent != 0) absl::StrAppend(&out, ",\"parent\":", event.parent);
  if (event.end != 0) {
    absl::StrAppend(&out, ",\"end\":", event.end, "}");
  } else {
    absl::StrAppend(&out, ",\"end\":null}");
  }
  return out;
}

std::string ArgsToText(const Event& event, const TokenTable& handles, const TokenTable& strings) {
  const CallInfo* call = GetCall(event.call);
  if (call == nullptr) return "";
  std::string out;
  auto fields = Fields(*call);
  size_t tail = fields.size();
  AppendFieldList(fields, ArgCursor(event), 0, &tail, handles, strings, Style::kText, &out);
  return out;
}

std::string RetToText(const Event& event) {
  const CallInfo* call = GetCall(event.call);
  if (call == nullptr) return "";
  return RetText(*call, event.ret, Style::kText);
}

std::string FloatToJson(uint32_t bits) { return FloatJson(bits, Style::kJson); }

absl::StatusOr<uint32_t> FloatFromJson(absl::string_view json_value) {
  std::string line = absl::StrCat("{\"v\":", json_value, "}");
  CLTRACE_RETURN_IF_ERROR(SyntaxChecker(line).Check());
  pb::Struct obj;
  auto parsed = pb::util::JsonStringToMessage(line, &obj);
  if (!parsed.ok()) return absl::InvalidArgumentError(std::string(parsed.message()));
  CLTRACE_ASSIGN_OR_RETURN(uint64_t bits, ReadFloat(obj.fields().at("v"), "value"));
  return static_cast<uint32_t>(bits);
}

std::string JsonQuote(absl::string_view s) {
  std::string out = "\"";
  size_t i = 0;
  auto cont = [&](size_t k) {
    return k < s.size() && (static_cast<unsigned char>(s[k]) & 0xc0) == 0x80;
  };
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20) {
            absl::StrAppendFormat(&out, "\\u%04x", c);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence (RFC 3629: shortest form, no surrogates, <= U+10FFFF)
    // is copied; anything else is escaped byte by byte.
    size_t n = 0;
    uint32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      n = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 4;
      cp = c & 0x07;
    }
    bool ok = n > 0;
    for (size_t k = 1; ok && k < n; ++k) {
      ok = cont(i + k);
      if (ok) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    }
    if (ok) {
      ok = !(n == 3 && cp < 0x800) && !(n == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
           !(cp >= 0xd800 && cp <= 0xdfff);
    }
    if (ok) {
      out.append(s.data() + i, n);
      i += n;
    } else {
      absl::StrAppendFormat(&out, "\\u%04x", c);
      ++i;
    }
  }
  out += "\"";
  return out;
}

}  // namespace cltrace::format
