// LoadTrace: the one way every front end (cltrace verbs, the inspector, benchmarks, tests)
// reads a whole trace file into memory: a .cltrace (format/FORMAT.md) or a JSONL trace
// (format/jsonl.h), told apart by content, not by the file name.
//
// LoadTrace materialises the trace: every event in memory, sorted by seq. A streaming
// counterpart (a TraceStream delivering events in seq order from the chunks without holding
// the trace) is planned; it will take the same LoadOptions and report the same
// LoadedTrace fields except `events`, so DetectTraceFormat and LoadOptions are shared
// vocabulary rather than details of this function.
//
// Thread-safety: plain functions over values; the progress callback runs on the calling
// thread.
//
// Example:
//   format::LoadOptions options;
//   options.salvage = true;
//   options.progress = [](uint64_t done, uint64_t total) { Bar(done, total); };
//   absl::StatusOr<format::LoadedTrace> t = format::LoadTrace("t.cltrace", options);
//   if (!t.ok()) return t.status();                // not a trace at all
//   for (const format::Event& e : t->events) ...   // everything readable, seq order
//   if (!t->error.ok()) ...                        // reading stopped early (offset / line)
#ifndef CLTRACE_FORMAT_LOAD_TRACE_H_
#define CLTRACE_FORMAT_LOAD_TRACE_H_

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

namespace cltrace::format {

enum class TraceFileFormat : uint8_t { kCltrace, kJsonl };

// "cltrace" / "JSONL".
absl::string_view TraceFormatName(TraceFileFormat format);

// A file whose first non-blank byte is '{' is JSONL, as is an empty or blank file (an empty
// trace) unless it is named *.cltrace; anything else is left to the binary reader, which
// names what is wrong. NotFound if the file cannot be opened, InvalidArgument for a directory.
absl::StatusOr<TraceFileFormat> DetectTraceFormat(const std::string& path);

// Receives how far reading got: `done` bytes of the file's `total` (its size). Calls are
// monotonic in `done`; the last one has done == total.
using LoadProgressFn = std::function<void(uint64_t done, uint64_t total)>;

struct LoadOptions {
  // .cltrace: skip corrupt chunks (TraceReader::Options::salvage) instead of stopping there.
  bool salvage = false;
  // May be empty. Called every `progress_every` events and once at the end.
  LoadProgressFn progress;
  uint64_t progress_every = uint64_t{1} << 16;
};

// A whole trace in memory.
struct LoadedTrace {
  std::string path;
  TraceFileFormat format = TraceFileFormat::kCltrace;
  uint64_t file_size = 0;
  std::vector<Event> events;  // every readable event, sorted by seq (stable: file order ties)
  TokenTable handles;
  TokenTable strings;
  TokenTable contents;  // Event::content bytes (FORMAT.md §3.8)
  // Why reading stopped before the end (DataLoss with the file offset, InvalidArgument with
  // "line N"); OK if it did not. The events before the damage are kept.
  absl::Status error;
  // FindPositionGaps(events): holes only when the positions are dense (a recording,
  // PositionsAreDense(header)); duplicates for every trace.
  PositionGaps gaps;
  bool dense_positions = false;  // a recording: holes are lost calls
  // .cltrace only.
  proto::TraceHeader header;
  TraceReader::Stats stats;
  int64_t torn_tail = -1;  // offset of a partial last chunk (read as end of file), or -1
  // .jsonl only.
  int64_t lines = 0;
};

// Reads a whole trace. Returns an error only when nothing can be read (no such file, a
// directory, not a trace, an unreadable header); damage later on ends reading with
// LoadedTrace::error set. A torn tail of a .cltrace is not an error.
absl::StatusOr<LoadedTrace> LoadTrace(const std::string& path, const LoadOptions& options = {});

// LoadTrace for callers that want all or nothing: any damage (LoadedTrace::error) is the
// returned error.
absl::StatusOr<LoadedTrace> ReadAllSorted(const std::string& path,
                                          TraceReader::Options options = {});

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_LOAD_TRACE_H_
