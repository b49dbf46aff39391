// JSONL interchange: one DDI call per line as a JSON object, the form hand-written bug
// reproductions, `cltrace import` / `cltrace export` and other tools exchange.
//
// Thread-safety: JsonlDecoder and JsonlReader are single-threaded objects; the free functions
// are thread-safe.
//
// Example:
//   auto trace = ParseJsonl(R"({"seq":1,"tid":7,"fn":"Flush","args":{"hDevice":"dev"}})");
//   if (!trace.ok()) return trace.status();   // "line 1: ..." on bad input
//   for (const Event& e : trace->events)
//     std::cout << EventToJsonl(e, trace->handles, trace->strings) << "\n";
//   // {"seq":1,"tid":7,"fn":"Flush","args":{"hDevice":"dev"},"ret":0,"end":2}
//
// ---- The line format ------------------------------------------------------------------------
// {"seq":S,"tid":T,"fn":NAME,"args":{...},"ret":R,"parent":P,"end":E,"content":C}
//   seq     required; integer >= 1, strictly increasing from line to line: the call's entry
//           position on the trace's one position counter (every position is used once).
//   tid     required; thread id, 0 .. 2^32-1.
//   fn      required; the catalog's call name (DDI name without "pfn"; callbacks by their
//           table member name without "pfn", e.g. "SetErrorCb").
//   args    required; the call's flattened fields (ddi/catalog_types.h) by name:
//             kHandle   a JSON string, any opaque token; equal tokens are the same handle.
//                       null, absent, "", "0" and "0x0" are the NULL handle.
//             kPresent  the pointer parameter itself: null = NULL pointer (then none of its
//                       members may be given), true / {} = present; absent = NULL unless
//                       one of its members is given. Members are flattened into args by
//                       their own names, never nested.
//             kArray    a JSON array (of objects keyed by member name for arrays of
//                       structures, of bare values for arrays of scalars); null or absent =
//                       NULL pointer. An array embedded in a structure (FieldInfo::embedded)
//                       is never NULL: absent = empty, null is an error.
//             kEnum, kFlags  symbolic name ("D3D11DDI_HT_COMMANDLIST", flags joined by '|')
//                       or an integer 0 .. 2^32-1.
//             kHresult  name ("E_OUTOFMEMORY") or integer (-2^31 .. 2^32-1; stored
//                       sign-extended).
//             kF32      a JSON number, converted to the nearest float; "NaN", "Infinity",
//                       "-Infinity", or a "0x7fc00001"-style bit pattern for other NaNs.
//             kPtr      a hex string "0x7f001000" (an integer is accepted too). pICObject
//                       (CalcDeferredContextHandleSize) holds the raw value of the handle it
//                       names; it also takes the handle's token ("res1"), stored as
//                       HandleTokenValue("res1") and exported as the token again.
//             kBool, kU32, kI32, kU64, kI64, kSize  integers (true/false for kBool) within
//                       the C type's width (FieldInfo::bits). 64-bit
//                       values beyond 2^53 are written as decimal strings ("18446744073709551615")
//                       because JSON numbers cannot carry them exactly; a JSON number beyond
//                       2^53 is rejected, never rounded.
//             kString   a JSON string (interned annotation text).
//           Handles marked FieldInfo::required must be given (null is allowed) unless they
//           are members of a NULL pointer; every other field may be absent and reads as
//           zero/NULL (kPresent: see above). Unknown names are errors (with the closest
//           known name as a suggestion).
//   ret     optional; by the call's ReturnKind: HRESULT/NTSTATUS (and named DWORD codes) by
//           name or integer, SIZE_T and BOOL as integers. Absent reads as 0. Not allowed for void
//           calls or for calls that never returned.
//   parent  optional; the seq of the call this one was made inside (same thread, still in
//           flight). Absent or 0 = top-level.
//   end     optional; the position at which the call returned: lines with a smaller seq were
//           entered before it returned, lines with a larger seq after. null = the call never
//           returned (the process died inside it). Absent = inferred, see below.
//   content optional; the bytes the application handed the driver with this call (the source
//           of an UpdateSubresourceUP, a mapped subresource at Unmap: format/FORMAT.md §3.8),
//           as a string of lowercase or uppercase hex digit pairs. Absent, null or "" = none.
// Whitespace around tokens is free; blank lines are skipped; a trailing '\r' is ignored.
// Unknown top-level keys are errors (typos in hand-written repros must not pass silently).
//
// Consistency (checked, errors name the line): positions are unique (an end is no seq and no
// other end); end > seq; on each thread calls nest properly: a call entered while another
// call of its thread is in flight must name the innermost one as parent, and returns before
// it; a call that never returned is never left by its thread.
//
// ---- Inferring missing ends ------------------------------------------------------------
// A line without "end" returns as early as the other lines allow: right after its entry, or
// right after the return of the last of its nested calls (whose ends are inferred first).
// Such an end takes the first free position after that point; a chain of calls returning
// together (a callback and the DDI call it was made inside) takes consecutive positions,
// innermost first. That is never after the next call of its thread (which, not being nested
// in it, proves it had returned) nor after its parent's given end.
//
// Position assignment: seq values and given ends are kept as written whenever the gap
// before them has room for the inferred ends placed there (e.g. seqs 10, 20, 30). Where a
// gap is too small (e.g. seqs 1, 2, 3 without ends) the next written position moves up just
// far enough, and so do the following ones until a gap with spare room absorbs the move:
// new(next) = max(next, new(prev) + ends in prev's gap + 1). That keeps the order of all
// positions, keeps every written value that can be kept, and is decided in one pass over
// the lines (streaming). Parents follow their calls' new seqs. So
//   {"seq":1,...,"fn":"A"} {"seq":2,...,"fn":"B"}      becomes A 1..2, B 3..4,
//   {"seq":10,...,"fn":"A"} {"seq":20,...,"fn":"B"}    becomes A 10..11, B 20..21,
//   seqs 10, 20, 21, 40 (leaves)                       become 10, 20, 22, 40.
// Export writes every end, so an exported trace imports without any renumbering and
// exports again byte for byte.
//
// ---- Canonical export (EventToJsonl) ----------------------------------------------------
// Keys in the order seq, tid, fn, args, ret, parent, end, no whitespace. args in catalog
// field order; a field at its default (0 / NULL) is omitted, except required handles (null
// when NULL) and present structure pointers (true, so the line reads back as the same call);
// a NULL structure pointer and its members are omitted. A structure pointer recorded as NULL
// whose output members hold values (older recordings of DxgkDdiCreateDevice's pInfo, whose
// presence was captured at entry, before the driver set it) is written as present. pICObject
// values of symbolic tokens are written as the token. Enums, flags and HRESULTs by name when they
// have one, else as integers (HRESULTs as unsigned 32-bit). Floats as the shortest decimal that
// reads back as the same float ("-0.0" for negative zero). ret is omitted for void calls and for
// calls that never returned; parent is omitted when 0; end is always written (null for a call that
// never returned). A call's entry time follows as "ts_ns" (nanoseconds since the trace's start,
// omitted when 0) and its annotation as "annotation" (the API call that caused it, recorder notes
// such as R5 table rewrites; omitted when none); the import reads both back.
//
// ---- JSON parsing -----------------------------------------------------------------------
// Values are built by protobuf's JSON utilities (JsonStringToMessage into
// google.protobuf.Struct). That parser is lenient (it accepts unquoted and single-quoted
// keys, trailing commas, and silently drops unknown escapes such as "\q") and rounds integers
// beyond 2^53 to doubles, so every line first passes a strict RFC 8259 syntax check of our
// own, which also rejects integer literals it cannot represent exactly.
#ifndef CLTRACE_FORMAT_JSONL_H_
#define CLTRACE_FORMAT_JSONL_H_

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ddi/catalog.h"
#include "format/event.h"

namespace cltrace::format {

// A whole JSONL trace in memory.
struct JsonlTrace {
  std::vector<Event> events;  // sorted by seq, every end resolved
  TokenTable handles;         // handle tokens, ids in order of first appearance
  TokenTable strings;         // kString texts
  TokenTable contents;        // "content" bytes (Event::content)
  int64_t lines = 0;          // lines read (including blank ones)
};

// Parses a whole JSONL text. InvalidArgument "line N: ..." on the first bad line.
absl::StatusOr<JsonlTrace> ParseJsonl(absl::string_view text);

// Push-style streaming decoder: feed lines, pop events whose positions are final. Memory is
// bounded by the calls in flight (plus, while an end is being inferred, the lines up to the
// next call of that thread).
class JsonlDecoder {
 public:
  JsonlDecoder();
  ~JsonlDecoder();
  JsonlDecoder(const JsonlDecoder&) = delete;
  JsonlDecoder& operator=(const JsonlDecoder&) = delete;

  // Feeds the next line (without its '\n'). After an error every later call fails with the
  // same status.
  absl::Status AddLine(absl::string_view line);
  // End of input: resolves the ends still open. Call once, after the last AddLine.
  absl::Status Finish();
  // Pops the next event (seq order) whose seq, end and parent are final. False if none is
  // ready yet (or, after Finish, none is left).
  bool Next(Event* event);

  // After AddLine failed: if the bad line was rejected before it touched the decoder's state
  // (bad JSON, unknown function, bad argument, non-increasing seq: the common cases), ends
  // the input before that line so Next returns every call above it; returns whether it
  // could. The error stays (AddLine/Finish keep failing).
  bool FinishBeforeError();

  const TokenTable& handles() const;
  const TokenTable& strings() const;
  const TokenTable& contents() const;
  int64_t lines() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Pull-style reader of a JSONL file (a TraceReader look-alike).
//   auto r = JsonlReader::Open("t.jsonl");
//   Event e;
//   while ((*r)->Next(&e)) Use(e, (*r)->handles());
//   if (!(*r)->status().ok()) ...  // events before the bad line were still returned
class JsonlReader {
 public:
  static absl::StatusOr<std::unique_ptr<JsonlReader>> Open(const std::string& path);
  // False at the end or on error (see status()); the calls above a bad line are returned
  // first (see JsonlDecoder::FinishBeforeError).
  bool Next(Event* event);
  const absl::Status& status() const { return status_; }
  const TokenTable& handles() const { return decoder_.handles(); }
  const TokenTable& strings() const { return decoder_.strings(); }
  const TokenTable& contents() const { return decoder_.contents(); }
  int64_t lines() const { return decoder_.lines(); }
  // Bytes of the file read so far (for progress).
  uint64_t position() const { return bytes_; }

 private:
  JsonlReader() = default;
  std::ifstream in_;
  JsonlDecoder decoder_;
  absl::Status status_;
  bool done_ = false;
  uint64_t bytes_ = 0;
};

// The canonical JSONL line of one event (no trailing newline). Precondition:
// CheckEventLayout(event).ok(); otherwise missing values read as 0 and extras are ignored.
// The event's content (Event::content) is written from `contents`; without the table, or for
// an id it lacks, the line has no "content".
std::string EventToJsonl(const Event& event, const TokenTable& handles, const TokenTable& strings,
                         const TokenTable* contents = nullptr);
// The same line appended to `out` (no allocation once `out` has grown: for writing many).
void AppendEventJsonl(std::string* out, const Event& event, const TokenTable& handles,
                      const TokenTable& strings, const TokenTable* contents = nullptr);

// The raw value a handle token stands for in pointer fields that name a handle (pICObject):
// a hex token ("0x7f3a00001000") is its value; any other token T is 0xc17a'0000'0000'0000 |
// crc32c(T), a non-canonical address no recorded pointer has. 0 for the empty token.
uint64_t HandleTokenValue(absl::string_view token);

// The event's arguments for people: "hDevice=dev, HandleType=D3D11DDI_HT_COMMANDLIST, ..."
// with the same omissions as the export; NULL handles and pointers print as NULL, arrays
// as [..] and structures in arrays as {..}. Same precondition as EventToJsonl.
std::string ArgsToText(const Event& event, const TokenTable& handles, const TokenTable& strings);

struct TextOptions {
  // `cltrace dump`'s form: shader token streams (arrays counted by their own length token,
  // count=pCode[1]) print as "<N dwords, fnv1a 0xXXXXXXXX>" (FNV-1a 32 over the dwords'
  // little-endian bytes) instead of their values. Values are named by their catalog type
  // alone in every form (a DXGI_FORMAT field prints Format=DXGI_FORMAT_R8G8B8A8_UNORM), never
  // by a field's name.
  bool for_dump = false;
};
std::string ArgsToText(const Event& event, const TokenTable& handles, const TokenTable& strings,
                       const TextOptions& options);
void AppendArgsText(std::string* out, const Event& event, const TokenTable& handles,
                    const TokenTable& strings, const TextOptions& options);

// The return value for people ("S_OK", "8"); empty for void calls.
std::string RetToText(const Event& event);
void AppendRetText(std::string* out, const Event& event);

// Checks that `event` names a known call and that its args hold exactly the fixed fields
// plus the elements its arrays announce. InvalidArgument naming the mismatch otherwise.
absl::Status CheckEventLayout(const Event& event);

// A float (by bit pattern) as the export writes it, and back through the same parsing path
// as a line (strict syntax check, protobuf, nearest float). Exact for every bit pattern.
std::string FloatToJson(uint32_t bits);
absl::StatusOr<uint32_t> FloatFromJson(absl::string_view json_value);

// The JSON text of a string, quotes included. Bytes that are not valid UTF-8 are written
// as \u00XX (so the output is always valid JSON; such bytes do not round-trip).
std::string JsonQuote(absl::string_view s);

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_JSONL_H_
