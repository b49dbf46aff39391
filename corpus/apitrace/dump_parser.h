// The text `apitrace dump` prints, parsed into calls: the input side of
// `cltrace-workload apitrace FILE`, which plays a real program's D3D11 capture through the
// runtime model.
//
// The grammar is the one apitrace's dumper writes (lib/trace/trace_dump.cpp), with or without
// its optional parts:
//
//   call   := [NUMBER ' '] ['@' HEX ' '] NAME '(' [arg {', ' arg}] ')' [' = ' value]
//             [' //' {' fake' | ' incomplete'}]
//   arg    := [NAME ' = '] value | '?'
//   value  := 'NULL' | 'true' | 'false' | number | pointer | string | 'L' string | blob
//             | name {' | ' (name | pointer)}        (an enum, a GUID's name, a bitmask)
//             | '{' [NAME ' = ' value {', ' ...}] '}'  (a structure)
//             | '{' [value {', ' value}] '}'          (an array)
//             | '&' value                             (a one-element array: a pointer to it)
//   blob   := 'blob(' NUMBER ')' | 'blob(' string ')'   (the latter from `dump --blobs`)
//
// Strings may hold literal newlines (the dumper's default --multiline), so a call may span
// lines. Blank lines (frame ends), `//` comment lines and "Backtrace:" blocks are skipped.
// Nothing in the input is trusted: every error is a Status "line L, column C: ...", values
// nest at most kMaxDepth deep, and no input makes the parser crash or recurse without bound
// (tests/fuzz/apitrace_dump_fuzz.cc).
//
// Thread-safety: DumpParser is a single-threaded object; ParseDump is reentrant.
//
// Example:
//   absl::StatusOr<std::vector<Call>> calls = ParseDump(
//       "12 @1f04 ID3D11DeviceContext::Draw(this = 0x5c2a10, VertexCount = 3, "
//       "StartVertexLocation = 0)\n");
//   (*calls)[0].name      // "ID3D11DeviceContext::Draw"
//   (*calls)[0].thread    // 0x1f04
//   (*calls)[0].Arg("VertexCount")->u   // 3
#ifndef CLTRACE_CORPUS_APITRACE_DUMP_PARSER_H_
#define CLTRACE_CORPUS_APITRACE_DUMP_PARSER_H_

#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cltrace::apitrace {

struct Value {
  enum class Kind : uint8_t {
    kUnknown,  // '?': the dumper had no value
    kNull,
    kBool,
    kInt,        // an integer (u: its bits, i: its value; negative: `negative`)
    kFloat,      // a number with a fraction or exponent, inf, nan (d)
    kPointer,    // 0x... (u)
    kString,     // text (wide: a L"..." string)
    kName,       // an enum value's or a GUID's name (text)
    kBitmask,    // names (and one 0x... remainder in u, if any)
    kBlob,       // blob(N): N bytes the text dump does not show (u = N), or
                 // blob("FILE") (`apitrace dump --blobs`): the bytes are in FILE (text)
    kStruct,     // members with names
    kArray,      // members without names
    kReference,  // &value: a pointer to one element (members[0])
  };
  struct Member;

  Kind kind = Kind::kUnknown;
  bool negative = false;
  bool wide = false;
  uint64_t u = 0;
  int64_t i = 0;
  double d = 0;
  std::string text;
  std::vector<std::string> names;  // kBitmask
  std::vector<Member> members;     // kStruct, kArray, kReference

  // kStruct: the member called `name`, nullptr if none.
  const Value* Field(absl::string_view name) const;
  // The value as an unsigned integer: kInt, kPointer, kBool, kNull (0) and a bitmask of only a
  // remainder; nullopt for anything else.
  std::optional<uint64_t> AsUint() const;
};

struct Value::Member {
  std::string name;  // empty in arrays
  Value value;
};

struct Call {
  int64_t line = 0;                 // where the call starts in the input (1-based)
  std::optional<uint64_t> no;       // the call number, when the dump printed it
  std::optional<uint64_t> thread;   // @tid, with --thread-ids
  std::string name;                 // "ID3D11Device::CreateBuffer", "D3D11CreateDevice", "memcpy"
  std::vector<Value::Member> args;  // names empty with --arg-names=no
  std::optional<Value> ret;
  bool fake = false;
  bool incomplete = false;  // the program died inside the call

  // The argument called `name`, nullptr if none.
  const Value* Arg(absl::string_view name) const;
  // "ID3D11Device" of "ID3D11Device::CreateBuffer"; "" for a free function.
  absl::string_view Interface() const;
  // "CreateBuffer" of "ID3D11Device::CreateBuffer"; the whole name for a free function.
  absl::string_view Method() const;
};

// Reads calls one at a time from a text held by the caller.
class DumpParser {
 public:
  static constexpr int kMaxDepth = 64;

  // `first_line`: the line number of the text's first line (a piece of a longer dump).
  explicit DumpParser(absl::string_view text, int64_t first_line = 1)
      : text_(text), line_(first_line) {}

  // The next call into *call; false at the end of the input or on an error (status()).
  bool Next(Call* call);
  const absl::Status& status() const { return status_; }
  // Lines read so far.
  int64_t line() const { return line_; }

 private:
  class Reader;
  absl::string_view text_;
  size_t pos_ = 0;
  int64_t line_ = 1;
  size_t line_start_ = 0;
  absl::Status status_;
};

// Every call of a whole dump; InvalidArgument "line L, column C: ..." on the first bad one.
absl::StatusOr<std::vector<Call>> ParseDump(absl::string_view text);

// Reads calls one at a time from a stream, holding only the lines of the call being read (a
// call spans lines only inside a multi-line string; blank and `//` lines between calls are not
// kept), so a dump of any length is read in memory bounded by its longest call. Calls, line
// numbers and errors are exactly ParseDump's on the same bytes.
class DumpStream {
 public:
  explicit DumpStream(std::istream* in) : in_(in) {}

  // The next call into *call; false at the end of the input or on an error (status()).
  bool Next(Call* call);
  const absl::Status& status() const { return status_; }
  // The most bytes of input held at once (the line buffer's high-water mark).
  size_t max_buffered() const { return max_buffered_; }

 private:
  // Reads the lines of the next call (and of a Backtrace block before it) into buf_; false at
  // the end of the input.
  bool Fill();

  std::istream* in_;
  std::string buf_;
  std::string line_;
  std::optional<DumpParser> parser_;
  int64_t next_line_ = 1;  // the number of the next line read from in_
  size_t max_buffered_ = 0;
  absl::Status status_;
};

}  // namespace cltrace::apitrace

#endif  // CLTRACE_CORPUS_APITRACE_DUMP_PARSER_H_
