// Reading any trace file the CLI accepts (.cltrace or .jsonl, told apart by content) into
// memory, keeping whatever was readable when the file turns out to be damaged.
//
// Thread-safety: plain functions over values.
//
// Example:
//   absl::StatusOr<TraceInput> in = ReadTrace("t.cltrace", /*salvage=*/false);
//   if (!in.ok()) return Fail(in.status());          // not a trace at all
//   for (const format::Event& e : in->events) ...    // everything readable, seq order
//   if (!in->error.ok()) ...                         // reading stopped early: say so, exit 2
#ifndef CLTRACE_CLI_TRACE_INPUT_H_
#define CLTRACE_CLI_TRACE_INPUT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "format/event.h"
#include "format/trace.pb.h"
#include "format/trace_reader.h"

namespace cltrace::cli {

enum class TraceFormat { kCltrace, kJsonl };

// "cltrace" / "JSONL".
absl::string_view FormatName(TraceFormat format);

// Whether `path` names a directory (a trace path or an output path must not).
bool IsDirectory(const std::string& path);

// A file whose first non-blank byte is '{' is JSONL, as is an empty or blank file (an empty
// trace) unless it is named *.cltrace; anything else is left to the binary reader, which
// names what is wrong. NotFound if the file cannot be opened, InvalidArgument for a directory.
absl::StatusOr<TraceFormat> DetectFormat(const std::string& path);

struct TraceInput {
  std::string path;
  TraceFormat format = TraceFormat::kCltrace;
  uint64_t file_size = 0;
  std::vector<format::Event> events;  // every readable event, sorted by seq
  format::TokenTable handles;
  format::TokenTable strings;
  format::TokenTable contents;  // Event::content bytes (FORMAT.md §3.8)
  // Why reading stopped before the end (with the file offset or line); OK if it did not.
  absl::Status error;
  // Positions (format::FindPositionGaps): holes are reported only for a recording
  // (format::PositionsAreDense), duplicates for every trace.
  format::PositionGaps gaps;
  bool dense_positions = false;  // a recording: holes are lost calls
  // .cltrace only.
  format::proto::TraceHeader header;
  format::TraceReader::Stats stats;
  int64_t torn_tail = -1;
  // .jsonl only.
  int64_t lines = 0;
};

// Reads a whole trace. Returns an error only when nothing can be read (no such file, not a
// trace, unreadable header); damage later on ends reading with TraceInput::error set and the
// events before it kept. `salvage` lets the binary reader skip corrupt chunks.
absl::StatusOr<TraceInput> ReadTrace(const std::string& path, bool salvage);

// Rewrites every handle id (kHandle fields, array elements included) and string id (kString
// fields and the annotation) of `event` through the given maps. Precondition:
// format::CheckEventLayout(*event).ok().
void RemapIds(format::Event* event, const std::function<uint64_t(uint64_t)>& handle,
              const std::function<uint64_t(uint64_t)>& string);

// A runtime callback (called by the driver) rather than a DDI entry point.
bool IsCallback(const format::Event& event);

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_TRACE_INPUT_H_
