// JSONL (format/jsonl.h): parsing a line's JSON (RapidJSON, and the strict syntax check that
// words its errors), and the readers of single JSON values (integers in a range, 32-bit codes,
// floats) that the line parser and FloatFromJson share.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "format/crc32c.h"
#include "format/jsonl.h"
#include "format/jsonl_internal.h"
#include "format/status_macros.h"
#include "rapidjson/error/en.h"

namespace cltrace::format {
namespace jsonl_internal {
namespace {

// Deeper JSON is never a valid line; the limit keeps the recursive checker's stack small.
constexpr int kMaxJsonDepth = 32;

// ---- Strict syntax check ----------------------------------------------------------------

// RFC 8259 grammar of one line holding one object. It words the errors of the lines RapidJSON
// refuses (with the column and what was expected there).
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
    return Members('}', "expected ',' or '}'", [&]() -> absl::Status {
      SkipWs();
      if (!Peek('"')) return Error("expected a quoted key");
      CLTRACE_RETURN_IF_ERROR(String());
      SkipWs();
      if (!Peek(':')) return Error("expected ':'");
      ++pos_;
      return Value(depth + 1);
    });
  }

  absl::Status Array(int depth) {
    return Members(']', "expected ',' or ']'", [&] { return Value(depth + 1); });
  }

  // An object's or array's members from its opening bracket (at pos_) to `close`: empty, or
  // `member` read again after each ','.
  template <typename Member>
  absl::Status Members(char close, const char* expected_separator, Member member) {
    ++pos_;  // '{' or '['
    SkipWs();
    if (Peek(close)) {
      ++pos_;
      return absl::OkStatus();
    }
    while (true) {
      CLTRACE_RETURN_IF_ERROR(member());
      SkipWs();
      if (Peek(',')) {
        ++pos_;
        continue;
      }
      if (Peek(close)) {
        ++pos_;
        return absl::OkStatus();
      }
      return Error(expected_separator);
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

}  // namespace

absl::Status CheckJsonSyntax(absl::string_view line) { return SyntaxChecker(line).Check(); }

namespace {

// What the strict checker refuses and RapidJSON takes, found in one walk over the document:
// nesting deeper than kMaxJsonDepth, numbers beyond 2^53 (exact in RapidJSON, not in every
// other consumer), and the first key that appears twice in one object.
struct Audit {
  bool too_deep = false;
  bool big_number = false;
  const JsonValue* duplicate_key = nullptr;
};

void AuditValue(const JsonValue& v, int depth, Audit* audit) {
  if (depth > kMaxJsonDepth) {
    audit->too_deep = true;
    return;
  }
  if (v.IsNumber()) {
    constexpr double kMax = static_cast<double>(kMaxJsonInt);
    if (v.IsUint64() ? v.GetUint64() > kMaxJsonInt
                     : (v.IsInt64() ? v.GetInt64() < -static_cast<int64_t>(kMaxJsonInt)
                                    : std::fabs(v.GetDouble()) > kMax &&
                                          std::trunc(v.GetDouble()) == v.GetDouble()))
      audit->big_number = true;
  } else if (v.IsArray()) {
    for (const JsonValue& item : v.GetArray()) AuditValue(item, depth + 1, audit);
  } else if (v.IsObject()) {
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
      // Objects of a line have a handful of keys: a quadratic scan beats a hash set here.
      for (auto prev = v.MemberBegin(); prev != it && audit->duplicate_key == nullptr; ++prev) {
        if (StringOf(prev->name) == StringOf(it->name)) audit->duplicate_key = &it->name;
      }
      AuditValue(it->value, depth + 1, audit);
    }
  }
}

}  // namespace

absl::Status ParseJsonObject(absl::string_view line, ScratchDocument* scratch) {
  // In place: the strings are unescaped where they stand, not copied into the pool. A NUL
  // byte ends the text as the end of the line did for a length-bounded parse (RapidJSON's
  // memory stream reads '\0' at its end), so both refuse the same lines.
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag |
                              rapidjson::kParseInsituFlag;
  JsonDocument* doc = scratch->get();
  char* text = scratch->Text(line);
  // Validating UTF-8 is a good part of the parse; a line of ASCII bytes (every exported line
  // without non-ASCII strings) is valid UTF-8 already.
  // Eight bytes at a time (the compiler keeps a byte loop byte by byte).
  uint64_t high = 0;
  size_t i = 0;
  for (; i + 8 <= line.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, line.data() + i, sizeof(word));
    high |= word;
  }
  for (; i < line.size(); ++i) high |= static_cast<unsigned char>(line[i]);
  if ((high & 0x8080808080808080u) == 0) {
    doc->ParseInsitu<kFlags>(text);
  } else {
    doc->ParseInsitu<kFlags | rapidjson::kParseValidateEncodingFlag>(text);
  }
  if (doc->HasParseError() || !doc->IsObject()) {
    // The checker words the error (column, what was expected); RapidJSON's own words only for
    // what the grammar allows and the parser does not (invalid UTF-8).
    CLTRACE_RETURN_IF_ERROR(CheckJsonSyntax(line));
    if (doc->GetParseError() == rapidjson::kParseErrorStringInvalidEncoding) {
      return absl::InvalidArgumentError(absl::StrCat(
          "column ", doc->GetErrorOffset() + 1, ": malformed JSON: a string is not valid UTF-8"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("column ", doc->GetErrorOffset() + 1,
                     ": malformed JSON: ", rapidjson::GetParseError_En(doc->GetParseError())));
  }
  Audit audit;
  AuditValue(*doc, 0, &audit);
  if (audit.too_deep || audit.big_number) {
    // The checker words these with their column.
    CLTRACE_RETURN_IF_ERROR(CheckJsonSyntax(line));
  }
  if (audit.duplicate_key != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON: duplicate key '", StringOf(*audit.duplicate_key), "'"));
  }
  return absl::OkStatus();
}

const JsonValue* Find(const JsonValue& obj, absl::string_view key) {
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    if (StringOf(it->name) == key) return &it->value;
  }
  return nullptr;
}

// ---- Values -----------------------------------------------------------------------------

std::string IntText(Int v) {
  if (v < 0) return absl::StrCat("-", static_cast<uint64_t>(-v));
  return absl::StrCat(static_cast<uint64_t>(v));
}

absl::string_view KindOf(const JsonValue& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kNumberType:
      return "a number";
    case rapidjson::kStringType:
      return "a string";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "a boolean";
    case rapidjson::kObjectType:
      return "an object";
    case rapidjson::kArrayType:
      return "an array";
  }
  return "nothing";
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
absl::StatusOr<Int> ReadInt(const JsonValue& v, absl::string_view what, Int lo, Int hi,
                            bool allow_string) {
  Int x = 0;
  if (v.IsNumber()) {
    // Numbers beyond 2^53 are refused even where RapidJSON holds them exactly: every other
    // JSON consumer reads numbers as doubles, so such a line would not mean the same there.
    if (v.IsUint64()) {
      x = v.GetUint64();
    } else if (v.IsInt64()) {
      x = v.GetInt64();
    } else {
      double d = v.GetDouble();
      if (!(std::trunc(d) == d))
        return absl::InvalidArgumentError(absl::StrCat(what, " must be an integer"));
      if (std::fabs(d) > static_cast<double>(kMaxJsonInt))
        x = static_cast<Int>(kMaxJsonInt) + 1;
      else
        x = static_cast<int64_t>(d);
    }
    if (x > static_cast<Int>(kMaxJsonInt) || x < -static_cast<Int>(kMaxJsonInt))
      return absl::InvalidArgumentError(
          absl::StrCat(what, " is beyond 2^53 and cannot be read exactly; write it as a string"));
  } else if (allow_string && v.IsString()) {
    std::optional<Int> parsed = ParseIntString(StringOf(v));
    if (!parsed)
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": \"", StringOf(v), "\" is not an integer"));
    x = *parsed;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be an integer, not ", KindOf(v)));
  }
  if (x < lo || x > hi)
    return absl::InvalidArgumentError(absl::StrCat(what, " = ", IntText(x), " is out of range [",
                                                   IntText(lo), ", ", IntText(hi), "]"));
  return x;
}

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
absl::StatusOr<uint64_t> Read32SignExtended(const JsonValue& v, absl::string_view what,
                                            const EnumInfo* names) {
  if (names != nullptr && v.IsString() && !ParseIntString(StringOf(v))) {
    std::optional<uint64_t> named = ValueOfName(*names, StringOf(v));
    if (!named)
      return absl::InvalidArgumentError(absl::StrCat(what, ": unknown name \"", StringOf(v), "\""));
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
absl::StatusOr<uint64_t> ReadFloat(const JsonValue& v, absl::string_view what) {
  float f = 0;
  if (v.IsNumber()) {
    double d = v.GetDouble();
    // Beyond this the nearest float is infinity: a written finite number would change.
    constexpr double kFloatOverflow = 3.4028235677973366e38;  // 2^128 - 2^103
    if (std::fabs(d) >= kFloatOverflow)
      return absl::InvalidArgumentError(absl::StrCat(what, " is out of float range"));
    f = static_cast<float>(d);
  } else if (v.IsString()) {
    absl::string_view s = StringOf(v);
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

bool IsHandleValuePointer(const FieldInfo& f) {
  return f.kind == FieldKind::kPtr && absl::string_view(f.name) == "pICObject";
}

std::string DidYouMean(absl::string_view word, const std::vector<absl::string_view>& candidates) {
  // Neither Abseil nor protobuf has an edit distance, so this is the textbook Levenshtein
  // distance (one row of the table), over ASCII letters folded to lower case.
  auto distance = [](absl::string_view a, absl::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t above = row[j];
        const bool same = absl::ascii_tolower(static_cast<unsigned char>(a[i - 1])) ==
                          absl::ascii_tolower(static_cast<unsigned char>(b[j - 1]));
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
        diagonal = above;
      }
    }
    return row[b.size()];
  };
  if (word.size() > 64) return "";  // no name is that long; keeps hostile lines cheap
  absl::string_view best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (absl::string_view c : candidates) {
    const size_t d = distance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // A typo, not another name: at most a third of the word (and at least 2 edits) away.
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  if (best.empty() || best_distance > limit) return "";
  return absl::StrCat(" (did you mean \"", best, "\"?)");
}

}  // namespace jsonl_internal

uint64_t HandleTokenValue(absl::string_view token) {
  if (token.empty()) return 0;
  if (std::optional<jsonl_internal::Int> v = jsonl_internal::ParseIntString(token);
      v && absl::StartsWith(token, "0x") && *v <= jsonl_internal::kU64Max) {
    return static_cast<uint64_t>(*v);
  }
  return 0xc17a000000000000ull | crc32c::Value(token);
}

using jsonl_internal::ParseJsonObject;
using jsonl_internal::ReadFloat;

absl::StatusOr<uint32_t> FloatFromJson(absl::string_view json_value) {
  std::string line = absl::StrCat("{\"v\":", json_value, "}");
  jsonl_internal::ScratchDocument doc;
  CLTRACE_RETURN_IF_ERROR(ParseJsonObject(line, &doc));
  CLTRACE_ASSIGN_OR_RETURN(uint64_t bits, ReadFloat((*doc.get())["v"], "value"));
  return static_cast<uint32_t>(bits);
}

}  // namespace cltrace::format
