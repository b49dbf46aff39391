// JSONL (format/jsonl.h): one line -> LineRecord. The line's keys, its call's flattened
// fields (ddi/catalog_types.h) and its return value are read and checked here; the
// positions (seq, end, parent) are taken as written and resolved by jsonl_decoder.cc.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "format/jsonl.h"
#include "format/jsonl_internal.h"
#include "format/status_macros.h"

namespace cltrace::format::jsonl_internal {
namespace {

// Rejects keys of `obj` that are not among `fields` (all of them, sorted, so the message is
// the same every time).
absl::Status CheckKeys(const JsonValue& obj, absl::Span<const FieldInfo> fields,
                       absl::string_view where) {
  std::vector<std::string> unknown;
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    absl::string_view key = StringOf(it->name);
    bool known = false;
    for (const FieldInfo& f : fields) {
      if (key == f.name) {
        known = true;
        break;
      }
    }
    if (!known) unknown.emplace_back(key);
  }
  if (unknown.empty()) return absl::OkStatus();
  std::sort(unknown.begin(), unknown.end());
  std::vector<absl::string_view> names;
  for (const FieldInfo& f : fields) names.push_back(f.name);
  std::vector<std::string> shown;
  for (const std::string& key : unknown)
    shown.push_back(absl::StrCat("\"", key, "\"", DidYouMean(key, names)));
  return absl::InvalidArgumentError(absl::StrCat("unknown argument",
                                                 unknown.size() > 1 ? "s " : " ",
                                                 absl::StrJoin(shown, ", "), " in ", where));
}

class FieldReader {
 public:
  FieldReader(TokenTable* handles, TokenTable* strings) : handles_(handles), strings_(strings) {}

  // Reads `fields` from `obj` into out (one value per field); array elements go to *tail
  // (nullptr where arrays cannot occur).
  absl::Status ReadList(absl::Span<const FieldInfo> fields, const JsonValue& obj,
                        absl::string_view where, absl::InlinedVector<uint64_t, 8>* out,
                        std::vector<uint64_t>* tail) {
    // Each member's field, in one pass over the members (keys are unique): the search starts
    // after the field matched last, so keys in the catalog's order (export's) match at once.
    const size_t n = fields.size();
    absl::InlinedVector<absl::string_view, 16> names;
    names.reserve(n);
    for (const FieldInfo& f : fields) names.emplace_back(f.name);
    absl::InlinedVector<const JsonValue*, 16> found(n, nullptr);
    size_t cursor = 0;
    for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
      const absl::string_view key = StringOf(it->name);
      size_t k = 0;
      for (; k < n; ++k) {
        const size_t j = cursor + k < n ? cursor + k : cursor + k - n;
        if (names[j] == key) {
          found[j] = &it->value;
          cursor = j + 1;
          break;
        }
      }
      // An unknown key: CheckKeys words the error (every unknown key, sorted).
      if (k == n) {
        CLTRACE_RETURN_IF_ERROR(CheckKeys(obj, fields, where));
        return absl::InternalError(absl::StrCat("key \"", key, "\" neither found nor unknown"));
      }
    }
    size_t null_until = 0;
    const FieldInfo* null_owner = nullptr;
    for (size_t i = 0; i < n; ++i) {
      const FieldInfo& f = fields[i];
      const JsonValue* v = found[i];
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
        if (f.kind == FieldKind::kPresent) {
          // An absent pointer to a structure is NULL, unless members of it are given (they
          // say it is present). Export writes every present pointer ("p":true).
          bool members = false;
          for (size_t k = i + 1; k <= i + f.elem_count && k < fields.size(); ++k)
            members = members || found[k] != nullptr;
          out->push_back(members ? 1 : 0);
          if (!members) {
            null_until = i + 1 + f.elem_count;
            null_owner = &f;
          }
          continue;
        }
        // An embedded array is never NULL, so absent is empty.
        out->push_back(f.kind == FieldKind::kArray && f.embedded ? 1 : 0);
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

  absl::StatusOr<uint64_t> ReadValue(const FieldInfo& f, const JsonValue& v) {
    // The field's name in quotes, for messages: in a buffer of the stack, not the heap.
    char quoted[128];
    std::string long_quoted;
    absl::string_view what;
    if (const size_t len = std::strlen(f.name); len + 2 <= sizeof(quoted)) {
      quoted[0] = '"';
      std::memcpy(quoted + 1, f.name, len);
      quoted[len + 1] = '"';
      what = absl::string_view(quoted, len + 2);
    } else {
      long_quoted = absl::StrCat("\"", f.name, "\"");
      what = long_quoted;
    }
    switch (f.kind) {
      case FieldKind::kU32:
      case FieldKind::kU64:
      case FieldKind::kSize: {
        const int bits = f.kind == FieldKind::kU32 ? 32 : 64;
        CLTRACE_ASSIGN_OR_RETURN(Int x, ReadInt(v, what, 0, UnsignedMax(f, bits), true));
        return static_cast<uint64_t>(x);
      }
      case FieldKind::kI32:
      case FieldKind::kI64: {
        const int bits = f.kind == FieldKind::kI32 ? 32 : 64;
        CLTRACE_ASSIGN_OR_RETURN(Int x,
                                 ReadInt(v, what, SignedMin(f, bits), SignedMax(f, bits), true));
        return static_cast<uint64_t>(static_cast<int64_t>(x));
      }
      case FieldKind::kBool:
        if (v.IsBool()) return v.GetBool() ? 1 : 0;
        return Read32SignExtended(v, what, nullptr);
      case FieldKind::kHresult:
        return Read32SignExtended(v, what, EnumAt(f.type_index));
      case FieldKind::kF32:
        return ReadFloat(v, what);
      case FieldKind::kPtr: {
        if (v.IsNull()) return 0;
        if (IsHandleValuePointer(f) && v.IsString() && !ParseIntString(StringOf(v))) {
          // The object's handle token: only one an earlier argument used (a typo must not
          // pass as a new object).
          absl::string_view token = StringOf(v);
          if (handles_->Find(token) <= 0)
            return absl::InvalidArgumentError(
                absl::StrCat(what, " \"", token, "\" names no handle of an earlier argument"));
          return format::HandleTokenValue(token);
        }
        CLTRACE_ASSIGN_OR_RETURN(Int x, ReadInt(v, what, 0, kU64Max, true));
        return static_cast<uint64_t>(x);
      }
      case FieldKind::kHandle: {
        if (v.IsNull()) return 0;
        if (!v.IsString())
          return absl::InvalidArgumentError(
              absl::StrCat(what, " must be a handle token string or null, not ", KindOf(v)));
        absl::string_view token = StringOf(v);
        // C's NULL spelled as a token is still NULL (recorders never give 0 a token).
        if (token.empty() || token == "0" || token == "0x0") return 0;
        return handles_->Intern(token);
      }
      case FieldKind::kEnum:
      case FieldKind::kFlags: {
        const EnumInfo* e = EnumAt(f.type_index);
        if (v.IsString() && !ParseIntString(StringOf(v))) {
          std::optional<uint64_t> named =
              e == nullptr ? std::nullopt : ValueOfName(*e, StringOf(v));
          if (!named)
            return absl::InvalidArgumentError(absl::StrCat(what, ": unknown ",
                                                           e != nullptr ? e->name : "enum",
                                                           " name \"", StringOf(v), "\""));
          return *named;
        }
        CLTRACE_ASSIGN_OR_RETURN(Int x, ReadInt(v, what, 0, UnsignedMax(f, 32), true));
        return static_cast<uint64_t>(x);
      }
      case FieldKind::kPresent:
        if (v.IsNull()) return 0;
        if (v.IsBool() && v.GetBool()) return 1;
        if (v.IsObject()) {
          if (v.MemberCount() == 0) return 1;
          return absl::InvalidArgumentError(absl::StrCat(
              "the members of ", what, " are written directly in \"args\", not nested"));
        }
        return absl::InvalidArgumentError(
            absl::StrCat(what, " must be null (NULL pointer) or true, not ", KindOf(v)));
      case FieldKind::kString:
        if (v.IsNull()) return 0;
        if (!v.IsString())
          return absl::InvalidArgumentError(
              absl::StrCat(what, " must be a string, not ", KindOf(v)));
        return strings_->Intern(StringOf(v));
      case FieldKind::kArray:
        break;
    }
    return absl::InternalError(absl::StrCat(what, ": unexpected field kind"));
  }

 private:
  absl::StatusOr<uint64_t> ReadArray(const FieldInfo& f, const JsonValue& v,
                                     std::vector<uint64_t>* tail) {
    if (v.IsNull() && !f.embedded) return 0;
    if (!v.IsArray())
      return absl::InvalidArgumentError(
          absl::StrCat("\"", f.name, "\" must be an array",
                       f.embedded ? " (embedded, never null)" : " or null", ", not ", KindOf(v)));
    auto elems = ElementFields(f);
    bool scalar = IsScalarArray(f);
    auto items = v.GetArray();
    for (rapidjson::SizeType k = 0; k < items.Size(); ++k) {
      const JsonValue& item = items[k];
      std::string where = absl::StrCat(f.name, "[", k, "]");
      if (scalar) {
        auto value = ReadValue(elems[0], item);
        if (!value.ok())
          return absl::InvalidArgumentError(absl::StrCat(where, ": ", value.status().message()));
        tail->push_back(*value);
        continue;
      }
      if (!item.IsObject())
        return absl::InvalidArgumentError(
            absl::StrCat(where, " must be an object, not ", KindOf(item)));
      absl::InlinedVector<uint64_t, 8> values;
      absl::Status st = ReadList(elems, item, where, &values, nullptr);
      if (!st.ok() && !absl::StrContains(st.message(), where))
        return absl::InvalidArgumentError(absl::StrCat(where, ": ", st.message()));
      CLTRACE_RETURN_IF_ERROR(st);
      tail->insert(tail->end(), values.begin(), values.end());
    }
    return static_cast<uint64_t>(items.Size()) + 1;
  }

  TokenTable* handles_;
  TokenTable* strings_;
};

constexpr absl::string_view kTopKeys[] = {"seq",    "tid", "fn",    "args",       "ret",
                                          "parent", "end", "ts_ns", "annotation", "content"};

absl::StatusOr<int64_t> ReadRet(const CallInfo& call, const JsonValue& v) {
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
      if (names != nullptr && v.IsString() && !ParseIntString(StringOf(v))) {
        std::optional<uint64_t> named = ValueOfName(*names, StringOf(v));
        if (!named)
          return absl::InvalidArgumentError(
              absl::StrCat("\"ret\": unknown name \"", StringOf(v), "\""));
        return static_cast<int64_t>(*named);
      }
      CLTRACE_ASSIGN_OR_RETURN(Int x, ReadInt(v, "\"ret\"", 0, kU32Max, true));
      return static_cast<int64_t>(x);
    }
    case ReturnKind::kBool: {
      if (v.IsBool()) return v.GetBool() ? 1 : 0;
      CLTRACE_ASSIGN_OR_RETURN(uint64_t x, Read32SignExtended(v, "\"ret\"", nullptr));
      return static_cast<int64_t>(x);
    }
  }
  return absl::InternalError("unexpected return kind");
}

// The first unknown key in sorted order, so the message does not depend on key order.
absl::Status CheckTopKeys(const JsonValue& obj) {
  std::optional<absl::string_view> unknown;
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    absl::string_view key = StringOf(it->name);
    if (std::find(std::begin(kTopKeys), std::end(kTopKeys), key) == std::end(kTopKeys) &&
        (!unknown || key < *unknown)) {
      unknown = key;
    }
  }
  if (unknown) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown key \"", *unknown,
        "\" (expected seq, tid, fn, args, ret, parent, end, ts_ns, annotation, content)"));
  }
  return absl::OkStatus();
}

// The call "fn" names; an unknown name gets a hint (a "pfn" prefix, a near name).
absl::StatusOr<const CallInfo*> ReadFn(const JsonValue& obj) {
  const JsonValue* v = Find(obj, "fn");
  if (v == nullptr) return absl::InvalidArgumentError("missing \"fn\"");
  if (!v->IsString())
    return absl::InvalidArgumentError(absl::StrCat("\"fn\" must be a string, not ", KindOf(*v)));
  const CallInfo* call = FindCall(StringOf(*v));
  if (call == nullptr) {
    absl::string_view name = StringOf(*v);
    std::string hint;
    if (absl::StartsWith(name, "pfn") && FindCall(name.substr(3)) != nullptr) {
      hint = absl::StrCat(" (write \"", name.substr(3), "\", without \"pfn\")");
    } else {
      std::vector<absl::string_view> names;
      for (const CallInfo& c : Calls()) names.push_back(c.name);
      hint = DidYouMean(name, names);
    }
    return absl::InvalidArgumentError(absl::StrCat("unknown function \"", name, "\"", hint));
  }
  return call;
}

// "end": absent (inferred), null or 0 (never returned), or a seq after the call's own.
absl::Status ReadEnd(const JsonValue& obj, LineRecord* rec) {
  Event& e = rec->event;
  const JsonValue* v = Find(obj, "end");
  if (v == nullptr) {
    rec->end_kind = EndKind::kInferred;
  } else if (v->IsNull()) {
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
  return absl::OkStatus();
}

// "content": the bytes as an even number of hex digits, interned in `contents`.
absl::Status ReadContent(const JsonValue& value, TokenTable* contents, Event* event) {
  Event& e = *event;
  const JsonValue* v = &value;
  if (!v->IsString()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"content\" must be a hex string, not ", KindOf(*v)));
  }
  absl::string_view hex = StringOf(*v);
  if (hex.size() % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"content\" has an odd number of hex digits (", hex.size(), ")"));
  }
  for (size_t i = 0; i < hex.size(); ++i) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(hex[i]))) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"content\" has a non-hex character at index ", i));
    }
  }
  if (!hex.empty()) {
    const uint64_t id = contents->Intern(absl::HexStringToBytes(hex));
    if (id > UINT32_MAX) return absl::InvalidArgumentError("too many distinct contents");
    e.content = static_cast<uint32_t>(id);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseLine(absl::string_view text, TokenTable* handles, TokenTable* strings,
                       TokenTable* contents, LineRecord* rec) {
  ScratchDocument doc;
  CLTRACE_RETURN_IF_ERROR(ParseJsonObject(text, &doc));
  const JsonValue& obj = *doc.get();
  CLTRACE_RETURN_IF_ERROR(CheckTopKeys(obj));
  Event& e = rec->event;
  const JsonValue* v = Find(obj, "seq");
  if (v == nullptr) return absl::InvalidArgumentError("missing \"seq\"");
  CLTRACE_ASSIGN_OR_RETURN(Int seq, ReadInt(*v, "\"seq\"", 1, kMaxJsonInt, false));
  e.seq = static_cast<uint64_t>(seq);
  v = Find(obj, "tid");
  if (v == nullptr) return absl::InvalidArgumentError("missing \"tid\"");
  CLTRACE_ASSIGN_OR_RETURN(Int tid, ReadInt(*v, "\"tid\"", 0, kU32Max, false));
  e.tid = static_cast<uint32_t>(tid);
  CLTRACE_ASSIGN_OR_RETURN(const CallInfo* call, ReadFn(obj));
  e.call = IdOf(*call);
  v = Find(obj, "args");
  if (v == nullptr) return absl::InvalidArgumentError("missing \"args\"");
  if (!v->IsObject())
    return absl::InvalidArgumentError(absl::StrCat("\"args\" must be an object, not ", KindOf(*v)));
  std::vector<uint64_t> tail;
  FieldReader reader(handles, strings);
  e.args.clear();
  CLTRACE_RETURN_IF_ERROR(
      reader.ReadList(Fields(*call), *v, absl::StrCat(call->name, " args"), &e.args, &tail));
  e.args.insert(e.args.end(), tail.begin(), tail.end());

  CLTRACE_RETURN_IF_ERROR(ReadEnd(obj, rec));
  v = Find(obj, "ret");
  if (v != nullptr && !v->IsNull()) {
    if (rec->end_kind == EndKind::kNull)
      return absl::InvalidArgumentError("a call that never returned (end null) has no \"ret\"");
    CLTRACE_ASSIGN_OR_RETURN(e.ret, ReadRet(*call, *v));
  }
  v = Find(obj, "parent");
  if (v != nullptr && !v->IsNull()) {
    CLTRACE_ASSIGN_OR_RETURN(Int parent, ReadInt(*v, "\"parent\"", 0, kMaxJsonInt, false));
    e.parent = static_cast<uint64_t>(parent);
  }
  v = Find(obj, "ts_ns");
  if (v != nullptr && !v->IsNull()) {
    CLTRACE_ASSIGN_OR_RETURN(Int ts, ReadInt(*v, "\"ts_ns\"", std::numeric_limits<int64_t>::min(),
                                             std::numeric_limits<int64_t>::max(), true));
    e.timestamp_ns = static_cast<int64_t>(ts);
  }
  v = Find(obj, "annotation");
  if (v != nullptr && !v->IsNull()) {
    if (!v->IsString()) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"annotation\" must be a string, not ", KindOf(*v)));
    }
    e.annotation = strings->Intern(StringOf(*v));
  }
  v = Find(obj, "content");
  if (v != nullptr && !v->IsNull()) CLTRACE_RETURN_IF_ERROR(ReadContent(*v, contents, &e));
  return absl::OkStatus();
}

}  // namespace cltrace::format::jsonl_internal
