#include "corpus/apitrace/dump_parser.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cltrace::apitrace {

const Value* Value::Field(absl::string_view name) const {
  if (kind != Kind::kStruct) return nullptr;
  for (const Member& m : members) {
    if (m.name == name) return &m.value;
  }
  return nullptr;
}

std::optional<uint64_t> Value::AsUint() const {
  switch (kind) {
    case Kind::kInt:
    case Kind::kPointer:
      return u;
    case Kind::kBool:
      return u;
    case Kind::kNull:
      return 0;
    case Kind::kBitmask:
      if (names.empty()) return u;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

const Value* Call::Arg(absl::string_view arg) const {
  for (const Value::Member& m : args) {
    if (m.name == arg) return &m.value;
  }
  return nullptr;
}

absl::string_view Call::Interface() const {
  size_t colons = name.rfind("::");
  return colons == std::string::npos ? absl::string_view()
                                     : absl::string_view(name).substr(0, colons);
}

absl::string_view Call::Method() const {
  size_t colons = name.rfind("::");
  return colons == std::string::npos ? absl::string_view(name)
                                     : absl::string_view(name).substr(colons + 2);
}

// A cursor over the text with line and column for messages. Every read checks the bounds;
// recursion is bounded by kMaxDepth.
class DumpParser::Reader {
 public:
  Reader(absl::string_view text, size_t pos, int64_t line, size_t line_start)
      : s_(text), pos_(pos), line_(line), line_start_(line_start) {}

  size_t pos() const { return pos_; }
  int64_t line() const { return line_; }
  size_t line_start() const { return line_start_; }
  bool AtEnd() const { return pos_ >= s_.size(); }

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("line ", line_, ", column ", pos_ - line_start_ + 1, ": ", what));
  }

  // Skips blank lines, `//` comment lines and "Backtrace:" blocks (up to their blank line).
  void SkipNonCalls() {
    while (!AtEnd()) {
      absl::string_view rest = CurrentLine();
      absl::string_view stripped = absl::StripAsciiWhitespace(rest);
      if (stripped.empty() || absl::StartsWith(stripped, "//")) {
        NextLine();
        continue;
      }
      if (stripped == "Backtrace:") {
        NextLine();
        while (!AtEnd() && !absl::StripAsciiWhitespace(CurrentLine()).empty()) NextLine();
        continue;
      }
      return;
    }
  }

  absl::Status ReadCall(Call* call) {
    *call = Call();
    call->line = line_;
    if (absl::ascii_isdigit(Peek())) {
      uint64_t no = 0;
      if (!ReadUnsigned(&no)) return Error("a call number out of range");
      call->no = no;
      if (!Consume(' ')) return Error("expected ' ' after the call number");
    }
    if (Consume('@')) {
      uint64_t tid = 0;
      if (!ReadHex(&tid)) return Error("expected a hexadecimal thread id after '@'");
      call->thread = tid;
      if (!Consume(' ')) return Error("expected ' ' after the thread id");
    }
    call->name = std::string(ReadName());
    if (call->name.empty()) return Error("expected a function name");
    if (!Consume('(')) return Error(absl::StrCat("expected '(' after ", call->name));
    if (!Consume(')')) {
      for (;;) {
        Value::Member arg;
        if (absl::string_view name = NameBeforeEquals(); !name.empty()) {
          arg.name = std::string(name);
          pos_ += name.size() + 3;
        }
        if (absl::Status st = ReadValue(0, &arg.value); !st.ok()) return st;
        call->args.push_back(std::move(arg));
        if (Consume(')')) break;
        if (!ConsumeText(", ")) return Error("expected ', ' or ')' after an argument");
      }
    }
    if (ConsumeText(" = ")) {
      Value ret;
      if (absl::Status st = ReadValue(0, &ret); !st.ok()) return st;
      call->ret = std::move(ret);
    }
    if (ConsumeText(" //")) {
      for (;;) {
        if (ConsumeText(" fake")) {
          call->fake = true;
        } else if (ConsumeText(" incomplete")) {
          call->incomplete = true;
        } else {
          break;
        }
      }
    }
    Consume('\r');
    if (!AtEnd() && Peek() != '\n') return Error("unexpected text after the call");
    if (!AtEnd()) NextLine();
    return absl::OkStatus();
  }

 private:
  char Peek(size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
  bool Consume(char c) {
    if (AtEnd() || s_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  bool ConsumeText(absl::string_view t) {
    if (!absl::StartsWith(s_.substr(pos_), t)) return false;
    pos_ += t.size();
    return true;
  }
  absl::string_view CurrentLine() const {
    size_t end = s_.find('\n', pos_);
    return s_.substr(pos_, end == absl::string_view::npos ? absl::string_view::npos : end - pos_);
  }
  void NextLine() {
    size_t end = s_.find('\n', pos_);
    pos_ = end == absl::string_view::npos ? s_.size() : end + 1;
    ++line_;
    line_start_ = pos_;
  }

  static bool NameStart(char c) { return absl::ascii_isalpha(c) || c == '_'; }
  static bool NameChar(char c) { return absl::ascii_isalnum(c) || c == '_' || c == ':'; }

  absl::string_view ReadName() {
    size_t start = pos_;
    if (!NameStart(Peek())) return {};
    while (!AtEnd() && NameChar(s_[pos_])) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  // The name of "name = value" at the cursor (not consumed), or "".
  absl::string_view NameBeforeEquals() const {
    size_t p = pos_;
    if (p >= s_.size() || !NameStart(s_[p])) return {};
    while (p < s_.size() && NameChar(s_[p])) ++p;
    if (!absl::StartsWith(s_.substr(p), " = ")) return {};
    return s_.substr(pos_, p - pos_);
  }

  bool ReadUnsigned(uint64_t* out) {
    size_t start = pos_;
    while (!AtEnd() && absl::ascii_isdigit(s_[pos_])) ++pos_;
    return pos_ > start && absl::SimpleAtoi(s_.substr(start, pos_ - start), out);
  }
  bool ReadHex(uint64_t* out) {
    size_t start = pos_;
    while (!AtEnd() && absl::ascii_isxdigit(s_[pos_])) ++pos_;
    return pos_ > start && pos_ - start <= 16 &&
           absl::SimpleHexAtoi(s_.substr(start, pos_ - start), out);
  }

  absl::Status ReadValue(int depth, Value* v) {
    if (depth > kMaxDepth) return Error("values nested too deep");
    if (AtEnd()) return Error("expected a value, found the end of the input");
    char c = Peek();
    if (c == '?') {
      ++pos_;
      v->kind = Value::Kind::kUnknown;
      return absl::OkStatus();
    }
    if (c == '"' || (c == 'L' && Peek(1) == '"')) return ReadString(v);
    if (c == '&') {
      ++pos_;
      v->kind = Value::Kind::kReference;
      v->members.emplace_back();
      return ReadValue(depth + 1, &v->members.back().value);
    }
    if (c == '{') return ReadAggregate(depth, v);
    if (c == '0' && (Peek(1) == 'x' || Peek(1) == 'X')) {
      pos_ += 2;
      if (!ReadHex(&v->u)) return Error("expected up to 16 hexadecimal digits after 0x");
      v->kind = Value::Kind::kPointer;
      return absl::OkStatus();
    }
    if (absl::ascii_isdigit(c) || c == '-') return ReadNumber(v);
    if (NameStart(c)) return ReadNamed(v);
    return Error(absl::StrCat("unexpected character '", absl::string_view(&s_[pos_], 1),
                              "' where a value belongs"));
  }

  absl::Status ReadString(Value* v) {
    const size_t start = pos_, start_line_start = line_start_;
    const int64_t start_line = line_;
    v->kind = Value::Kind::kString;
    v->wide = Consume('L');
    ++pos_;  // '"'
    while (!AtEnd()) {
      char c = s_[pos_++];
      if (c == '"') return absl::OkStatus();
      if (c == '\n') {
        // --multiline (the dumper's default) writes a string's newlines as they are.
        v->text.push_back('\n');
        ++line_;
        line_start_ = pos_;
        continue;
      }
      if (c != '\\') {
        v->text.push_back(c);
        continue;
      }
      if (AtEnd()) break;
      char e = s_[pos_];
      if (e == '"' || e == '\\') {
        v->text.push_back(e);
        ++pos_;
      } else if (e == 'n') {
        v->text.push_back('\n');
        ++pos_;
      } else if (e >= '0' && e <= '7') {
        // Other bytes as up to three octal digits (the dumper's own spelling).
        unsigned byte = 0;
        for (int k = 0; k < 3 && !AtEnd() && s_[pos_] >= '0' && s_[pos_] <= '7'; ++k)
          byte = byte * 8 + static_cast<unsigned>(s_[pos_++] - '0');
        v->text.push_back(static_cast<char>(byte & 0xff));
      } else {
        return Error(absl::StrCat("unknown escape \\", absl::string_view(&e, 1), " in a string"));
      }
    }
    pos_ = start;  // the message points at the string's opening quote
    line_ = start_line;
    line_start_ = start_line_start;
    return Error("unterminated string");
  }

  absl::Status ReadAggregate(int depth, Value* v) {
    ++pos_;  // '{'
    v->kind = NameBeforeEquals().empty() ? Value::Kind::kArray : Value::Kind::kStruct;
    if (Consume('}')) return absl::OkStatus();
    for (;;) {
      Value::Member m;
      if (v->kind == Value::Kind::kStruct) {
        absl::string_view name = NameBeforeEquals();
        if (name.empty()) return Error("expected 'member = value' in a structure");
        m.name = std::string(name);
        pos_ += name.size() + 3;
      }
      if (absl::Status st = ReadValue(depth + 1, &m.value); !st.ok()) return st;
      v->members.push_back(std::move(m));
      if (Consume('}')) return absl::OkStatus();
      if (!ConsumeText(", ")) return Error("expected ', ' or '}'");
    }
  }

  absl::Status ReadNumber(Value* v) {
    size_t start = pos_;
    bool negative = Consume('-');
    if (ConsumeText("inf") || ConsumeText("nan")) {
      v->kind = Value::Kind::kFloat;
      absl::string_view word = s_.substr(start, pos_ - start);
      (void)absl::SimpleAtod(word, &v->d);
      return absl::OkStatus();
    }
    size_t digits = pos_;
    while (!AtEnd() && absl::ascii_isdigit(s_[pos_])) ++pos_;
    if (pos_ == digits) return Error("expected a digit");
    bool fraction = false;
    if (Peek() == '.' && absl::ascii_isdigit(Peek(1))) {
      fraction = true;
      ++pos_;
      while (!AtEnd() && absl::ascii_isdigit(s_[pos_])) ++pos_;
    }
    if ((Peek() == 'e' || Peek() == 'E') &&
        (absl::ascii_isdigit(Peek(1)) ||
         ((Peek(1) == '+' || Peek(1) == '-') && absl::ascii_isdigit(Peek(2))))) {
      fraction = true;
      pos_ += 2;
      while (!AtEnd() && absl::ascii_isdigit(s_[pos_])) ++pos_;
    }
    absl::string_view text = s_.substr(start, pos_ - start);
    const size_t end = pos_;
    pos_ = start;  // messages point at the number
    if (fraction) {
      v->kind = Value::Kind::kFloat;
      if (!absl::SimpleAtod(text, &v->d)) return Error(absl::StrCat("bad number ", text));
      pos_ = end;
      return absl::OkStatus();
    }
    v->kind = Value::Kind::kInt;
    v->negative = negative;
    if (negative) {
      if (!absl::SimpleAtoi(text, &v->i))
        return Error(absl::StrCat("integer out of range: ", text));
      v->u = static_cast<uint64_t>(v->i);
    } else {
      if (!absl::SimpleAtoi(text, &v->u))
        return Error(absl::StrCat("integer out of range: ", text));
      v->i = static_cast<int64_t>(v->u);
    }
    pos_ = end;
    return absl::OkStatus();
  }

  // NULL, true, false, inf/nan, blob(N), an enum or GUID name, or a bitmask of names.
  absl::Status ReadNamed(Value* v) {
    absl::string_view name = ReadName();
    if (name == "NULL") {
      v->kind = Value::Kind::kNull;
      return absl::OkStatus();
    }
    if (name == "true" || name == "false") {
      v->kind = Value::Kind::kBool;
      v->u = name == "true" ? 1 : 0;
      return absl::OkStatus();
    }
    if (name == "inf" || name == "nan") {
      v->kind = Value::Kind::kFloat;
      (void)absl::SimpleAtod(name, &v->d);
      return absl::OkStatus();
    }
    if (name == "blob" && Consume('(')) {
      if (Peek() == '"') {
        // `apitrace dump --blobs` wrote the bytes to a file and prints its name.
        if (absl::Status st = ReadString(v); !st.ok()) return st;
        v->kind = Value::Kind::kBlob;
        if (v->text.empty() || !Consume(')')) return Error("expected blob(\"FILE\")");
        return absl::OkStatus();
      }
      v->kind = Value::Kind::kBlob;
      if (!ReadUnsigned(&v->u) || !Consume(')')) return Error("expected blob(SIZE)");
      return absl::OkStatus();
    }
    if (!absl::StartsWith(s_.substr(pos_), " | ")) {
      v->kind = Value::Kind::kName;
      v->text = std::string(name);
      return absl::OkStatus();
    }
    v->kind = Value::Kind::kBitmask;
    v->names.emplace_back(name);
    while (ConsumeText(" | ")) {
      if (Peek() == '0' && (Peek(1) == 'x' || Peek(1) == 'X')) {
        pos_ += 2;
        if (!ReadHex(&v->u)) return Error("expected hexadecimal digits in a bitmask");
        break;  // the remainder comes last
      }
      absl::string_view flag = ReadName();
      if (flag.empty()) return Error("expected a flag name after ' | '");
      v->names.emplace_back(flag);
    }
    return absl::OkStatus();
  }

  absl::string_view s_;
  size_t pos_;
  int64_t line_;
  size_t line_start_;
};

bool DumpParser::Next(Call* call) {
  if (!status_.ok()) return false;
  Reader r(text_, pos_, line_, line_start_);
  r.SkipNonCalls();
  if (r.AtEnd()) {
    pos_ = r.pos();
    line_ = r.line();
    line_start_ = r.line_start();
    return false;
  }
  status_ = r.ReadCall(call);
  pos_ = r.pos();
  line_ = r.line();
  line_start_ = r.line_start();
  return status_.ok();
}

absl::StatusOr<std::vector<Call>> ParseDump(absl::string_view text) {
  DumpParser parser(text);
  std::vector<Call> calls;
  Call call;
  while (parser.Next(&call)) calls.push_back(std::move(call));
  if (!parser.status().ok()) return parser.status();
  return calls;
}

bool DumpStream::Fill() {
  buf_.clear();
  int64_t first = next_line_;
  bool in_string = false, escape = false, backtrace = false;
  while (std::getline(*in_, line_)) {
    const bool newline = !in_->eof();  // getline stopped at a '\n' (not at the end)
    ++next_line_;
    const absl::string_view stripped = absl::StripAsciiWhitespace(line_);
    if (buf_.empty() && (stripped.empty() || absl::StartsWith(stripped, "//"))) {
      first = next_line_;  // skipped between calls, as DumpParser skips them
      continue;
    }
    buf_ += line_;
    if (newline) buf_ += '\n';
    max_buffered_ = std::max(max_buffered_, buf_.size());
    if (backtrace) {
      if (stripped.empty()) backtrace = false;  // the block ends with its blank line
      continue;
    }
    if (!in_string && stripped == "Backtrace:") {
      backtrace = true;
      continue;
    }
    for (char c : line_) {
      if (escape) {
        escape = false;
      } else if (in_string && c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = !in_string;
      }
    }
    escape = false;
    if (!in_string) break;  // the call ends with this line
  }
  parser_.emplace(buf_, first);
  return !buf_.empty();
}

bool DumpStream::Next(Call* call) {
  if (!status_.ok()) return false;
  for (;;) {
    if (parser_ && parser_->Next(call)) return true;
    if (parser_ && !parser_->status().ok()) {
      status_ = parser_->status();
      return false;
    }
    if (!Fill()) {
      if (in_->bad()) status_ = absl::DataLossError("reading the dump failed");
      return false;
    }
  }
}

}  // namespace cltrace::apitrace
