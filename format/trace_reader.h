// TraceReader: reads a cltrace v1 file (format/FORMAT.md) chunk by chunk.
//
// Thread-safety: one reader per thread.
//
// Events come in file order (for a multi-threaded recording that is not seq order; use
// format/load_trace.h where call order matters). A torn tail (a partial chunk at the end of the
// file) is end of file: Next returns false, status() is OK and torn_tail() says where the
// tear starts. Corruption (bad CRC, bad zstd frame, impossible sizes, unknown chunk type)
// makes Next return false with a DataLoss status naming the file offset; with
// Options::salvage the reader instead skips to the next chunk magic and counts the skip.
// A file too new for this reader fails Open with Unimplemented; a file that is not a cltrace
// file fails with InvalidArgument; an event whose call name this binary's catalog lacks stops
// the reader with InvalidArgument (salvage: the event is dropped and counted).
//
// Example:
//   auto r = TraceReader::Open("t.cltrace");
//   if (!r.ok()) return r.status();
//   Event e;
//   while ((*r)->Next(&e)) Use(e, (*r)->handles());
//   if (!(*r)->status().ok()) return (*r)->status();
#ifndef CLTRACE_FORMAT_TRACE_READER_H_
#define CLTRACE_FORMAT_TRACE_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "format/event.h"
#include "format/trace.pb.h"

namespace cltrace::format {

// TraceReader::Options. Declared outside the class because a nested struct with default
// member initializers cannot be used in a default argument of its enclosing class (the
// class is incomplete there; g++ rejects `Options options = {}`).
struct TraceReaderOptions {
  bool salvage = false;  // skip corrupt chunks instead of stopping
};

// An event chunk as its header describes it (TraceReader::ScanChunks).
struct ChunkSpan {
  uint64_t offset = 0;   // file offset of the chunk header
  uint64_t ordinal = 0;  // K of "chunk K at offset X" (chunks counted from 0 in file order)
  uint64_t min_seq = 0;  // the header's entry-seq range of the chunk's events
  uint64_t max_seq = 0;
  uint32_t events = 0;
};

// What TraceReader::ReadChunk does with a chunk.
enum class ChunkReadMode : uint8_t {
  kAll,          // as Next: applies the definitions, checks and returns the events
  kDefinitions,  // applies the definitions only; call packets are framed, not decoded
  kEvents,       // returns the events; an earlier kAll / kDefinitions read of the same chunk
                 // applied its definitions (uses of ids are not checked again)
};

class TraceReader {
 public:
  using Options = TraceReaderOptions;
  struct Stats {
    uint64_t chunks = 0;  // event chunks read completely
    uint64_t events = 0;  // events returned by Next
    uint64_t corrupt_chunks_skipped = 0;
    uint64_t file_size = 0;
    bool has_index = false;
    // Salvage mode only: bytes passed over while looking for the next chunk, events whose
    // call this catalog does not know (dropped), definitions that could not be applied.
    uint64_t bytes_skipped = 0;
    uint64_t events_skipped = 0;
    uint64_t definitions_skipped = 0;
  };

  static absl::StatusOr<std::unique_ptr<TraceReader>> Open(const std::string& path,
                                                           Options options = {});
  // Reads from memory (the bytes must outlive the reader).
  static absl::StatusOr<std::unique_ptr<TraceReader>> OpenBytes(absl::string_view bytes,
                                                                Options options = {});
  ~TraceReader();

  const proto::TraceHeader& header() const;
  // Next event in file order; false at end of file or on error (see status()).
  bool Next(Event* event);
  const absl::Status& status() const;
  // Offset at which a partial chunk starts, or -1 if the file ended on a chunk boundary.
  int64_t torn_tail() const;
  // Handle tokens, strings and contents (Event::content) defined so far (everything, once
  // Next returned false).
  const TokenTable& handles() const;
  const TokenTable& strings() const;
  const TokenTable& contents() const;
  const Stats& stats() const;
  // Offset of the next chunk to load (how far reading got; for progress).
  uint64_t position() const;

  // The trailer index, if the file has a valid one (read on Open, no full scan).
  const proto::TraceIndex* index() const;
  // Random access: the event with this entry seq. Uses the index when present, otherwise
  // scans. NotFound if no such event.
  absl::StatusOr<Event> FindBySeq(uint64_t seq);

  // Chunk-level access, for readers that take chunks out of file order (format/seq_stream.h).
  // Do not mix with Next.
  //
  // Walks the chunk headers from the first chunk without reading any payload and appends the
  // event chunks to *chunks in file order. Sets torn_tail(). Returns the error that ended the
  // walk (DataLoss naming the offset: a damaged chunk header, an unknown chunk type not marked
  // ignorable), OK at the end of the file or a torn tail; salvage resyncs past damage as Next
  // does and counts it in stats().
  absl::Status ScanChunks(std::vector<ChunkSpan>* chunks);
  // Reads one chunk of ScanChunks as `mode` says, appending its events (kAll, kEvents) to
  // *events. The events of a chunk that fails part-way are appended up to the failure. Errors
  // as Next reports them in status() (salvage: OK, the damage skipped and counted). Every
  // chunk's definitions must be applied (kAll / kDefinitions) in file order.
  absl::Status ReadChunk(const ChunkSpan& chunk, ChunkReadMode mode, std::vector<Event>* events);

  class Impl;

 private:
  explicit TraceReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Positions (FORMAT.md §5.5): every call takes an entry position (its seq) and, once it
// returned, an exit position (its end) from the trace's one counter, so a recording that
// lost no call uses every position 1..highest exactly once. A position below the highest one
// present that no event uses is *missing*; maximal runs of missing positions are *holes*
// (calls the recording lost: a killed program's unwritten buffers, calls in flight on other
// threads when it died, a write failure). A position used twice is corruption.
struct PositionGaps {
  uint64_t highest = 0;        // highest position present (entry or exit)
  uint64_t missing = 0;        // positions in 1..highest that no event uses
  uint64_t first_missing = 0;  // the lowest of them (0: none)
  uint64_t duplicates = 0;     // uses of a position beyond its first
  uint64_t first_duplicate = 0;
  // The holes, sorted and disjoint: [first, last] runs of missing positions.
  std::vector<std::pair<uint64_t, uint64_t>> holes;

  bool complete() const { return missing == 0 && duplicates == 0; }
  // True if some position p with lo < p < hi is missing.
  bool MissingBetween(uint64_t lo, uint64_t hi) const;
};

// The positions of `events` (any order), as above.
PositionGaps FindPositionGaps(absl::Span<const Event> events);

// Whether missing positions mean lost calls: the trace was recorded (its writer,
// "cltrace-recorder", took every position from one counter starting at 1). Hand-written and
// imported traces may number calls sparsely (seqs 10, 20, 30), which loses nothing.
bool PositionsAreDense(const proto::TraceHeader& header);

// FORMAT.md §9.1: a structure pointer recorded as NULL whose output members hold values was
// present (recordings made before an output pointer's presence was captured at exit, e.g.
// DXGKARG_CREATEDEVICE.pInfo). Sets such presence fields of `event` to 1; TraceReader applies
// it to every event it returns, so checks, replays and exports all see the pointer.
void InferOutputPointerPresence(Event* event);

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_TRACE_READER_H_
