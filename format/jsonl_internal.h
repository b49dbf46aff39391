// Internals of the JSONL interchange (format/jsonl.h), shared by its translation units:
//   jsonl.cc          export: EventToJsonl, ArgsToText, RetToText, JsonQuote, CheckEventLayout
//   jsonl_values.cc   the strict RFC 8259 syntax check and the JSON value readers (and
//                     FloatFromJson, which goes through both)
//   jsonl_line.cc     one line -> LineRecord (fields, ret, seq/tid/parent/end as written)
//   jsonl_decoder.cc  position resolution: JsonlDecoder, ParseJsonl, JsonlReader
// Not part of the API: only the jsonl*.cc files include it.
#ifndef CLTRACE_FORMAT_JSONL_INTERNAL_H_
#define CLTRACE_FORMAT_JSONL_INTERNAL_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ddi/catalog.h"
#include "format/event.h"
#include "rapidjson/document.h"

namespace cltrace::format::jsonl_internal {

// A parsed JSON value (RapidJSON's DOM: exact 64-bit integers, length-aware strings).
using JsonValue = rapidjson::Value;
using JsonDocument = rapidjson::GenericDocument<rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>,
                                                rapidjson::MemoryPoolAllocator<>>;

// A document whose values and parse stack start in buffers of its own (no heap allocation
// for a typical line; a larger one spills to the heap, returned when the document goes).
// Chosen over one long-lived document: RapidJSON's pool only grows between parses.
class ScratchDocument {
 public:
  ScratchDocument()
      : values_(value_buffer_, sizeof(value_buffer_)),
        stack_(stack_buffer_, sizeof(stack_buffer_)),
        doc_(&values_, sizeof(stack_buffer_) / 2, &stack_) {}
  ScratchDocument(const ScratchDocument&) = delete;
  ScratchDocument& operator=(const ScratchDocument&) = delete;
  JsonDocument* get() { return &doc_; }
  // A null-terminated copy of `line` the document may parse in place (its strings then point
  // into it instead of being copied into the pool); valid until the next call.
  char* Text(absl::string_view line) {
    char* text = text_buffer_;
    if (line.size() >= sizeof(text_buffer_)) {
      long_text_.resize(line.size() + 1);
      text = long_text_.data();
    }
    std::memcpy(text, line.data(), line.size());
    text[line.size()] = '\0';
    return text;
  }

 private:
  char text_buffer_[4096];
  std::string long_text_;
  alignas(8) char value_buffer_[8192];
  alignas(8) char stack_buffer_[2048];
  rapidjson::MemoryPoolAllocator<> values_;
  rapidjson::MemoryPoolAllocator<> stack_;
  JsonDocument doc_;
};

inline absl::string_view StringOf(const JsonValue& v) {
  return absl::string_view(v.GetString(), v.GetStringLength());
}
// The member `key` of object `obj`, nullptr if absent (keys are unique: ParseJsonObject).
const JsonValue* Find(const JsonValue& obj, absl::string_view key);

// Largest integer every JSON consumer (doubles) holds exactly.
constexpr uint64_t kMaxJsonInt = uint64_t{1} << 53;

// ---- Strict syntax check (jsonl_values.cc) ------------------------------------------------

// RFC 8259 grammar of one line holding one object, with the column of the first error; the
// message ParseJsonObject gives when the parser refuses a line.
absl::Status CheckJsonSyntax(absl::string_view line);

// Parses one line holding one JSON object into *doc->get() (strict RFC 8259, valid UTF-8, no
// duplicate keys at any level), in place in doc's copy of the line: its strings live as long
// as `doc`. RapidJSON's iterative parser: no recursion on hostile input.
absl::Status ParseJsonObject(absl::string_view line, ScratchDocument* doc);

// ---- Values (jsonl_values.cc) ---------------------------------------------------------------

using Int = __int128;

constexpr Int kU32Max = 0xffffffffu;
constexpr Int kI32Min = -(Int{1} << 31);
constexpr Int kU64Max = (Int{1} << 64) - 1;

std::string IntText(Int v);
// "null", "a number", ...: what a value is, for messages.
absl::string_view KindOf(const JsonValue& v);
// "123", "-5", "0x1f": the string forms of integers (for values beyond 2^53 and pointers).
std::optional<Int> ParseIntString(absl::string_view s);
// An integer in [lo, hi] from a JSON number or (if allow_string) an integer string.
absl::StatusOr<Int> ReadInt(const JsonValue& v, absl::string_view what, Int lo, Int hi,
                            bool allow_string);
// The range of a scalar field: its C type's width when the catalog gives one.
Int UnsignedMax(const FieldInfo& f, int default_bits);
Int SignedMin(const FieldInfo& f, int default_bits);
Int SignedMax(const FieldInfo& f, int default_bits);
uint64_t SignExtend32(Int x);
// A 32-bit value given either signed or unsigned (HRESULTs are written both ways).
absl::StatusOr<uint64_t> Read32SignExtended(const JsonValue& v, absl::string_view what,
                                            const EnumInfo* names);
const EnumInfo* EnumAt(uint16_t index);
bool IsScalarArray(const FieldInfo& array);
// Float from a JSON value, or its special spellings.
absl::StatusOr<uint64_t> ReadFloat(const JsonValue& v, absl::string_view what);

// Pointer fields whose value is the raw value of a handle (pICObject): JSONL also takes the
// handle's token there (format/jsonl.h, HandleTokenValue).
bool IsHandleValuePointer(const FieldInfo& f);

// " (did you mean \"X\"?)" for the candidate closest to `word` by edit distance (case
// ignored), when it is close enough to be a likely typo; "" otherwise.
std::string DidYouMean(absl::string_view word, const std::vector<absl::string_view>& candidates);

// ---- Reading a line (jsonl_line.cc) ---------------------------------------------------------

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

// Parses one non-blank line into *rec (seq, tid, call, args, ret, parent and end as
// written; line numbers and positions are the decoder's business). Handle tokens and
// kString texts are interned into *handles / *strings, "content" bytes into *contents.
absl::Status ParseLine(absl::string_view text, TokenTable* handles, TokenTable* strings,
                       TokenTable* contents, LineRecord* rec);

}  // namespace cltrace::format::jsonl_internal

#endif  // CLTRACE_FORMAT_JSONL_INTERNAL_H_
