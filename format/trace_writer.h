// TraceWriter: writes a cltrace v1 file (format/FORMAT.md) from events produced by any
// number of threads.
//
// Thread-safety: Append/AppendBatch/InternHandle*/InternString may be called concurrently
// from many threads. Flush and Close must not race with each other. Events are written in Append
// order (per writer); a reader sorts by seq where it needs call order.
//
// Example:
//   auto w = TraceWriter::Open("t.cltrace", TraceWriter::Options());
//   if (!w.ok()) return w.status();
//   Event e; e.call = CallId::kFlush; e.seq = 1; e.end = 2;
//   e.args = {(*w)->InternHandleValue(0x5500), 0};
//   (*w)->Append(e);
//   CLTRACE_RETURN_IF_ERROR((*w)->Close());
#ifndef CLTRACE_FORMAT_TRACE_WRITER_H_
#define CLTRACE_FORMAT_TRACE_WRITER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "format/event.h"
#include "format/trace.pb.h"

namespace cltrace::format {

// Where the bytes go. FileSink writes a file; tests use a memory sink.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  [[nodiscard]] virtual absl::Status Write(absl::string_view bytes) = 0;
  [[nodiscard]] virtual absl::Status Flush() = 0;
};

// Appends every byte to a caller-owned string (tests, in-memory traces). `out` must outlive
// the sink.
class StringSink : public ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  absl::Status Write(absl::string_view bytes) override {
    out_->append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }
  absl::Status Flush() override { return absl::OkStatus(); }

 private:
  std::string* out_;
};

// Creates (truncates) `path` for writing with write(2); Flush is a no-op (the bytes are with
// the kernel after each Write). NotFound / PermissionDenied / Internal naming the path.
absl::StatusOr<std::unique_ptr<ByteSink>> OpenFileSink(const std::string& path);

class TraceWriter {
 public:
  struct Options {
    // Uncompressed payload bytes that close a chunk.
    size_t chunk_bytes = 1 << 20;
    int zstd_level = 3;
    // Write the trailer index on Close.
    bool write_index = true;
    // Compress and write chunks on a background thread (Append never does I/O).
    bool background = true;
    // Timestamp unit stored in the header (ns per unit). 100 ns = Windows' 100-ns ticks.
    uint32_t timestamp_unit_ns = 100;
    proto::WriterInfo writer;
    proto::ProcessInfo process;
    // TraceHeader.start_unix_ns; unset = the time of Open.
    std::optional<int64_t> start_unix_ns;
    // false stores chunk payloads uncompressed (flag bit 0 clear): for debugging, the worked
    // example in FORMAT.md and fuzzing seeds.
    bool compress = true;
    // Background mode: sealed-but-unwritten chunk bytes above which Append blocks until the
    // background thread catches up. 0 = 4 * chunk_bytes.
    size_t max_queued_bytes = 0;
    // Format version 2 (FORMAT.md §3.7): AppendRun codes a run's entry and exit positions
    // against one list of them (a PositionRun packet), so the interleaving of concurrent
    // threads no longer makes every event's position deltas irregular (on a 4-thread
    // recording about a third smaller). The header then says version 2, which readers older
    // than it reject. false: version 1, AppendRun is AppendBatch.
    bool position_runs = false;
    // The index says how many definitions each chunk holds (ChunkIndexEntry.definitions), so a
    // reader seeking into the trace skips the earlier chunks that define nothing instead of
    // reading them for their definitions (format/seq_stream.h). Off by default: it changes the
    // bytes of the index, and the golden corpus is compared byte for byte.
    bool index_definitions = false;
  };

  static absl::StatusOr<std::unique_ptr<TraceWriter>> Open(const std::string& path,
                                                           Options options);
  static absl::StatusOr<std::unique_ptr<TraceWriter>> Open(std::unique_ptr<ByteSink> sink,
                                                           Options options);
  ~TraceWriter();  // Closes if still open (errors are lost; call Close to see them).

  // Interning: ids are stable for the writer's life; definitions are written before first use.
  uint64_t InternHandleValue(uint64_t raw_value);
  uint64_t InternHandleToken(absl::string_view token);
  uint64_t InternString(absl::string_view s);
  // Content (Event::content, FORMAT.md §3.8): bytes the application handed the driver. Equal
  // bytes get the same id (deduplicated by digest; the writer keeps no copy). Empty data is
  // id 0 (none).
  uint32_t InternContent(absl::string_view data);

  // Appends one event. Handle fields and `annotation` must hold ids from this writer.
  // Returns the first write error seen so far. After a failed write the writer writes
  // nothing more (the file ends at the last chunk written whole, plus at most a torn part of
  // the failed one: a readable trace); events are still accepted and counted nowhere in
  // events_written(), so a recorder keeps going and reports the degraded state. An event the format
  // cannot hold (call not in the catalog, parent == seq != 0, a handle/string id this writer never
  // handed out, more than 2^22 args) is not written: InvalidArgument naming its seq.
  // FailedPrecondition after Close. Blocks while the background queue is full.
  absl::Status Append(const Event& event);

  // Appends `events` in order under one acquisition of the writer's lock: for a producer that
  // has many events at hand (the recorder's background thread), where taking the lock per
  // event costs as much as encoding a small one. Each event is checked and written exactly as
  // Append would; an event the format cannot hold is skipped and the rest are still written.
  // Returns the first write error seen so far if there is one, else the InvalidArgument of the
  // first skipped event (naming its seq), else OK. FailedPrecondition after Close (nothing is
  // written). Blocks while the background queue is full.
  absl::Status AppendBatch(absl::Span<const Event> events);

  // Appends a run: events of one thread in the order to write them (usually seq order), e.g.
  // a recorder's records taken from one thread's buffer. With Options::position_runs their
  // positions are coded against the run (FORMAT.md §3.7); the events read back the same either
  // way. Checks, skips and returns as AppendBatch.
  absl::Status AppendRun(absl::Span<const Event> events);

  // Closes the current chunk and writes everything buffered; the file then ends at a chunk
  // boundary and is a valid trace.
  absl::Status Flush();
  // Flush, write the trailer index (if enabled), close the sink.
  absl::Status Close();

  // Events in chunks the sink accepted whole, and the bytes it accepted.
  uint64_t events_written() const;
  uint64_t bytes_written() const;

  class Impl;

 private:
  explicit TraceWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_TRACE_WRITER_H_
