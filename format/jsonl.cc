// JSONL (format/jsonl.h): the export side (EventToJsonl, ArgsToText, RetToText,
// FloatToJson, JsonQuote) and CheckEventLayout. Import is in jsonl_line.cc (one line) and
// jsonl_decoder.cc (positions); the shared value helpers are in jsonl_values.cc.
#include "format/jsonl.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "format/jsonl_internal.h"

namespace cltrace::format {
namespace {

using jsonl_internal::EnumAt;
using jsonl_internal::Int;
using jsonl_internal::IsScalarArray;
using jsonl_internal::kMaxJsonInt;
using jsonl_internal::SignExtend32;

// ---- Writing values ---------------------------------------------------------------------

// kDump: kText with shader token streams as a digest (ArgsToText with TextOptions). Every
// style names a value by the field's catalog type alone (kEnum, kFlags, kHresult), never by
// the field's name.
enum class Style { kJson, kText, kDump };

void AppendJsonQuoted(std::string* out, absl::string_view s);

void AppendU64Json(std::string* out, uint64_t v, Style style) {
  if (v <= kMaxJsonInt || style != Style::kJson) return absl::StrAppend(out, v);
  absl::StrAppend(out, "\"", v, "\"");
}

void AppendI64Json(std::string* out, int64_t v, Style style) {
  uint64_t mag = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (mag <= kMaxJsonInt || style != Style::kJson) return absl::StrAppend(out, v);
  absl::StrAppend(out, "\"", v, "\"");
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

// The exact-match names of every enum (NameOfValue's first choice), looked up by hash instead
// of a scan of the catalog's values for every field written.
class EnumNames {
 public:
  static const EnumNames& Get() {
    static const EnumNames* const kNames = new EnumNames();
    return *kNames;
  }
  // The exact name of `value`, or nullptr.
  const absl::string_view* Find(const EnumInfo& e, uint64_t value) const {
    auto it = by_enum_.find(&e);
    if (it == by_enum_.end()) return nullptr;
    auto v = it->second.find(value);
    return v == it->second.end() ? nullptr : &v->second;
  }

 private:
  EnumNames() {
    for (const EnumInfo& e : Enums()) {
      absl::flat_hash_map<uint64_t, absl::string_view>& m = by_enum_[&e];
      for (const EnumValueInfo& v : EnumValues(e)) m.try_emplace(v.value, v.name);  // first wins
    }
  }
  absl::flat_hash_map<const EnumInfo*, absl::flat_hash_map<uint64_t, absl::string_view>> by_enum_;
};

// Appends the symbolic name of `value` (NameOfValue; quoted for JSON); false (nothing
// appended) when it has none.
bool AppendName(std::string* out, const EnumInfo* e, uint64_t value, Style style) {
  if (e == nullptr) return false;
  if (e->is_flags && value == 0) return false;
  if (const absl::string_view* name = EnumNames::Get().Find(*e, value)) {
    if (style == Style::kJson) {
      AppendJsonQuoted(out, *name);
    } else {
      out->append(name->data(), name->size());
    }
    return true;
  }
  if (!e->is_flags) return false;
  std::optional<std::string> name = NameOfValue(*e, value);  // flags joined by '|'
  if (!name) return false;
  if (style == Style::kJson) {
    AppendJsonQuoted(out, *name);
  } else {
    out->append(*name);
  }
  return true;
}

// Appends the value of one non-array field as JSON or text. `v` is the stored 64-bit value.
void AppendValue(std::string* out, const FieldInfo& f, uint64_t v, const TokenTable& handles,
                 const TokenTable& strings, Style style) {
  switch (f.kind) {
    // Values are written whole (never truncated to the field's width) so that a damaged
    // value stays visible; the importer then reports it as out of range.
    case FieldKind::kU32:
    case FieldKind::kU64:
    case FieldKind::kSize:
      return AppendU64Json(out, v, style);
    case FieldKind::kI32:
    case FieldKind::kBool:
    case FieldKind::kI64:
      return AppendI64Json(out, static_cast<int64_t>(v), style);
    case FieldKind::kHresult:
      if (AppendName(out, EnumAt(f.type_index), static_cast<uint32_t>(v), style)) return;
      if (SignExtend32(static_cast<Int>(v)) == v)
        return absl::StrAppend(out, static_cast<uint32_t>(v));
      return AppendI64Json(out, static_cast<int64_t>(v), style);
    case FieldKind::kF32:
      return absl::StrAppend(out, FloatJson(static_cast<uint32_t>(v), style));
    case FieldKind::kPtr: {
      if (jsonl_internal::IsHandleValuePointer(f) && (v >> 48) == 0xc17a) {
        // A symbolic handle token's value (HandleTokenValue): write the token back.
        for (uint64_t id = 1; id < handles.size(); ++id) {
          if (HandleTokenValue(handles.Token(id)) == v) {
            if (style == Style::kJson) return AppendJsonQuoted(out, handles.Token(id));
            return absl::StrAppend(out, handles.Token(id));
          }
        }
      }
      if (style == Style::kJson) return absl::StrAppend(out, "\"0x", absl::Hex(v), "\"");
      return absl::StrAppend(out, "0x", absl::Hex(v));
    }
    case FieldKind::kHandle:
      if (v == 0) return absl::StrAppend(out, style == Style::kJson ? "null" : "NULL");
      if (style == Style::kJson) return AppendJsonQuoted(out, handles.Token(v));
      return absl::StrAppend(out, handles.Token(v));
    case FieldKind::kEnum:
    case FieldKind::kFlags:
      if (AppendName(out, EnumAt(f.type_index), v, style)) return;
      return AppendU64Json(out, v, style);
    case FieldKind::kPresent:
      return absl::StrAppend(out, v == 0 ? (style == Style::kJson ? "null" : "NULL") : "true");
    case FieldKind::kString:
      return AppendJsonQuoted(out, strings.Token(v));
    case FieldKind::kArray:
      break;
  }
  absl::StrAppend(out, v);
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
    if (any) out->append(style == Style::kJson ? "," : ", ");
    any = true;
  };
  auto name = [&](const FieldInfo& f) {
    if (style == Style::kJson) {
      out->push_back('"');
      out->append(f.name);
      out->append("\":");
    } else {
      out->append(f.name);
      out->push_back('=');
    }
  };
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldInfo& f = fields[i];
    uint64_t v = args.At(base + i);
    if (i < null_until) continue;
    if (f.kind == FieldKind::kPresent) {
      // Traces recorded before output pointers had their presence captured at exit hold 0
      // for a pointer the callee set (DXGKARG_CREATEDEVICE.pInfo) beside the outputs read
      // through it: output members with values prove the pointer was there (a NULL
      // pointer's members are 0). FORMAT.md §9.
      if (v == 0) {
        for (size_t k = i + 1; k <= i + f.elem_count && k < fields.size(); ++k)
          if (fields[k].dir == FieldDir::kOut && args.At(base + k) != 0) v = 1;
      }
      // Import reads an absent pointer as NULL, so JSON writes every present one
      // ("p":true) and omits NULL ones. Text (for people) shows only the NULL ones.
      if (v == 0) null_until = i + 1 + f.elem_count;
      if ((v != 0) != (style == Style::kJson)) continue;
      sep();
      name(f);
      AppendValue(out, f, v, handles, strings, style);
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
      if (style == Style::kDump && scalar && f.count_in_element > 0) {
        // A shader token stream (count=pCode[1]): its size and FNV-1a digest, not its dwords.
        uint32_t hash = 2166136261u;
        for (uint64_t k = 0; k < count; ++k) {
          const uint64_t dword = args.At(*tail + k);
          for (int b = 0; b < 4; ++b) {
            hash ^= static_cast<uint8_t>(dword >> (8 * b));
            hash *= 16777619u;
          }
        }
        *tail += count * elems.size();
        absl::StrAppendFormat(out, "<%d dword%s, fnv1a 0x%08x>", count, count == 1 ? "" : "s",
                              hash);
        continue;
      }
      absl::StrAppend(out, "[");
      for (uint64_t k = 0; k < count; ++k) {
        if (k > 0) absl::StrAppend(out, style == Style::kJson ? "," : ", ");
        if (scalar) {
          AppendValue(out, elems[0], args.At(*tail), handles, strings, style);
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
    AppendValue(out, f, v, handles, strings, style);
  }
  return any;
}

void AppendRet(std::string* out, const CallInfo& call, int64_t ret, Style style) {
  switch (call.ret) {
    case ReturnKind::kVoid:
      return;
    case ReturnKind::kHresult:
    case ReturnKind::kNtstatus: {
      uint32_t v = static_cast<uint32_t>(static_cast<uint64_t>(ret));
      const EnumInfo* names = call.ret_enum == kNoEnum ? nullptr : EnumAt(call.ret_enum);
      if (!AppendName(out, names, v, style)) absl::StrAppend(out, v);
      return;
    }
    case ReturnKind::kSize:
      return AppendU64Json(out, static_cast<uint64_t>(ret), style);
    case ReturnKind::kU32: {
      const EnumInfo* names = call.ret_enum == kNoEnum ? nullptr : EnumAt(call.ret_enum);
      if (!AppendName(out, names, static_cast<uint64_t>(ret), style))
        AppendU64Json(out, static_cast<uint64_t>(ret), style);
      return;
    }
    case ReturnKind::kBool:
      return AppendI64Json(out, ret, style);
  }
  absl::StrAppend(out, ret);
}

}  // namespace

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

std::string EventToJsonl(const Event& event, const TokenTable& handles, const TokenTable& strings,
                         const TokenTable* contents) {
  std::string out;
  AppendEventJsonl(&out, event, handles, strings, contents);
  return out;
}

void AppendEventJsonl(std::string* out, const Event& event, const TokenTable& handles,
                      const TokenTable& strings, const TokenTable* contents) {
  const CallInfo* call = GetCall(event.call);
  absl::StrAppend(out, "{\"seq\":", event.seq, ",\"tid\":", event.tid, ",\"fn\":");
  if (call == nullptr) {
    out->append("null,\"args\":{}");
  } else {
    AppendJsonQuoted(out, call->name);
    out->append(",\"args\":{");
    auto fields = Fields(*call);
    size_t tail = fields.size();
    AppendFieldList(fields, ArgCursor(event), 0, &tail, handles, strings, Style::kJson, out);
    out->push_back('}');
    if (call->ret != ReturnKind::kVoid && event.end != 0) {
      out->append(",\"ret\":");
      AppendRet(out, *call, event.ret, Style::kJson);
    }
  }
  if (event.parent != 0) absl::StrAppend(out, ",\"parent\":", event.parent);
  if (event.end != 0) {
    absl::StrAppend(out, ",\"end\":", event.end);
  } else {
    out->append(",\"end\":null");
  }
  // A recording's entry time and annotation (the API call, recorder notes such as R5 table
  // rewrites) travel with the call.
  if (event.timestamp_ns != 0) {
    out->append(",\"ts_ns\":");
    AppendI64Json(out, event.timestamp_ns, Style::kJson);
  }
  if (event.annotation != 0) {
    out->append(",\"annotation\":");
    AppendJsonQuoted(out, strings.Token(event.annotation));
  }
  if (event.content != 0 && contents != nullptr && contents->Has(event.content)) {
    absl::StrAppend(out, ",\"content\":\"", absl::BytesToHexString(contents->Token(event.content)),
                    "\"");
  }
  out->push_back('}');
}

std::string ArgsToText(const Event& event, const TokenTable& handles, const TokenTable& strings) {
  return ArgsToText(event, handles, strings, TextOptions());
}

std::string ArgsToText(const Event& event, const TokenTable& handles, const TokenTable& strings,
                       const TextOptions& options) {
  std::string out;
  AppendArgsText(&out, event, handles, strings, options);
  return out;
}

void AppendArgsText(std::string* out, const Event& event, const TokenTable& handles,
                    const TokenTable& strings, const TextOptions& options) {
  const CallInfo* call = GetCall(event.call);
  if (call == nullptr) return;
  auto fields = Fields(*call);
  size_t tail = fields.size();
  AppendFieldList(fields, ArgCursor(event), 0, &tail, handles, strings,
                  options.for_dump ? Style::kDump : Style::kText, out);
}

std::string RetToText(const Event& event) {
  std::string out;
  AppendRetText(&out, event);
  return out;
}

void AppendRetText(std::string* out, const Event& event) {
  const CallInfo* call = GetCall(event.call);
  if (call == nullptr) return;
  AppendRet(out, *call, event.ret, Style::kText);
}

std::string FloatToJson(uint32_t bits) { return FloatJson(bits, Style::kJson); }

std::string JsonQuote(absl::string_view s) {
  std::string out;
  AppendJsonQuoted(&out, s);
  return out;
}

namespace {

void AppendJsonQuoted(std::string* out_ptr, absl::string_view s) {
  std::string& out = *out_ptr;
  out.push_back('"');
  size_t plain = 0;  // the common case: printable ASCII without quotes or backslashes
  while (plain < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[plain]);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
    ++plain;
  }
  out.append(s.data(), plain);
  size_t i = plain;
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
}

}  // namespace
}  // namespace cltrace::format
