// SeqStream: every event of a trace (.cltrace or JSONL, told apart by content as LoadTrace
// does) in seq order, without holding the trace in memory: the streaming counterpart of
// format/load_trace.h, which it matches event for event (same order, ties in file order; the
// same error where reading stops early, after the same events).
//
// A .cltrace is read chunk by chunk. Writers with several threads interleave the threads'
// runs, so chunks' seq ranges overlap (FORMAT.md §3.5); the stream merges the chunks by seq,
// keyed by the seq ranges of their headers (a k-way merge of sorted chunks). Memory: the
// events of the chunks whose seq ranges contain the current seq (the overlap depth times the
// events of a chunk), plus at most Options::prefetch_events decoded ahead. A trace whose
// chunks overlap more than Options::window_events allows stops with DataLoss naming the
// chunk, its offset and seq range (everything before it was delivered). Definitions are
// applied in file order before any later event is delivered.
//
// Options::from_seq seeks: chunks whose events all lie below it are not decoded (their
// definitions are, without the events), and reading stops as soon as the caller stops
// calling Next, so `dump --from S --count N` decodes the chunks that hold those calls.
//
// Thread-safety: one stream per thread.
//
// Example:
//   absl::StatusOr<std::unique_ptr<SeqStream>> s = SeqStream::Open("t.cltrace");
//   if (!s.ok()) return s.status();               // not a trace at all
//   Event e;
//   while ((*s)->Next(&e)) Use(e, (*s)->handles());  // seq order
//   if (!(*s)->status().ok()) ...                  // reading stopped early (offset / line)
#ifndef CLTRACE_FORMAT_SEQ_STREAM_H_
#define CLTRACE_FORMAT_SEQ_STREAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "format/event.h"
#include "format/load_trace.h"
#include "format/trace.pb.h"
#include "format/trace_reader.h"

namespace cltrace::format {

// FindPositionGaps over events fed in seq order, holding only the exit positions of calls
// still open (ends above the last seq fed): the same PositionGaps at Finish.
class PositionGapFinder {
 public:
  void Add(const Event& e);
  // The result; call once, after the last Add.
  PositionGaps Finish();

 private:
  void Position(uint64_t p);
  PositionGaps g_;
  uint64_t prev_ = 0;
  std::vector<uint64_t> ends_;  // min-heap of pending exit positions
};

struct SeqStreamOptions {
  // .cltrace: skip corrupt chunks (TraceReader::Options::salvage).
  bool salvage = false;
  // Deliver only events with seq >= from_seq (earlier chunks' events are not decoded).
  uint64_t from_seq = 0;
  // Most events held in chunks being merged (2^21 events are about 300 MB); beyond: DataLoss.
  uint64_t window_events = uint64_t{1} << 21;
  // Most events decoded ahead of need and kept (beyond it they are decoded again when due).
  uint64_t prefetch_events = uint64_t{1} << 17;
  // Whether to compute gaps() (costs a little per event).
  bool gaps = true;
};

class SeqStream {
 public:
  using Options = SeqStreamOptions;
  struct Stats {
    uint64_t chunks_decoded = 0;      // chunk payloads whose events were decoded
    uint64_t chunks_redecoded = 0;    // of those, decoded a second time (not kept ahead)
    uint64_t chunks_definitions = 0;  // chunks read for their definitions only (seek)
    uint64_t chunks_skipped = 0;      // chunks not read at all (seek; the index: no definitions)
    uint64_t peak_events_held = 0;    // most events in memory at once
    uint64_t peak_chunks_merged = 0;  // most chunks merged at once (overlap depth)
  };

  // NotFound / InvalidArgument / DataLoss / Unimplemented when the file is no trace at all
  // (as LoadTrace).
  static absl::StatusOr<std::unique_ptr<SeqStream>> Open(const std::string& path,
                                                         const Options& options = {});
  ~SeqStream();

  // The next event in seq order (ties: file order); false at the end or when reading stopped
  // (status()).
  bool Next(Event* event);
  // Why reading stopped before the end (DataLoss with the chunk and offset, InvalidArgument
  // with "line N"); OK otherwise. Final once Next returned false.
  const absl::Status& status() const { return status_; }

  const std::string& path() const { return path_; }
  TraceFileFormat format() const { return format_; }
  uint64_t file_size() const { return file_size_; }
  // Definitions applied so far (every definition in the file before the events delivered).
  const TokenTable& handles() const;
  const TokenTable& strings() const;
  const TokenTable& contents() const;
  // .cltrace only (a default header for JSONL).
  const proto::TraceHeader& header() const;
  // The reader's counts (events: the events delivered) once Next returned false.
  TraceReader::Stats reader_stats() const;
  int64_t torn_tail() const { return torn_tail_; }
  // .jsonl only: lines read.
  int64_t lines() const;
  bool dense_positions() const { return dense_positions_; }
  // After Next returned false: the positions of the events delivered (holes only when
  // dense_positions(), as LoadTrace).
  const PositionGaps& gaps() const { return gaps_; }
  // Events delivered so far.
  uint64_t delivered() const { return delivered_; }
  // .cltrace: the ordinal (ChunkSpan::ordinal) of the chunk the last event delivered came
  // from, so a reader can find it again through ReadChunk (0 for JSONL).
  uint64_t chunk_ordinal() const { return chunk_ordinal_; }
  // Events read so far: delivered, and those below Options::from_seq passed over (counted by
  // their chunk headers where their chunk was read for its definitions only). Once Next
  // returned false, the events LoadTrace would hold.
  uint64_t events_read() const { return delivered_ + below_from_; }
  // How far reading got in the file, in bytes (for progress), and the expected event count
  // (the index's, 0 if unknown).
  uint64_t position() const;
  uint64_t expected_events() const { return expected_events_; }
  const Stats& stats() const { return stats_; }
  // The reader under the stream (.cltrace; nullptr for JSONL), for FindBySeq look-ups.
  TraceReader* reader();
  // .cltrace: the chunks of the file (file order) and the one whose definitions defined
  // handle `id` (handles(); among the chunks read so far, in full or for their definitions),
  // or -1. The first uses of the handle in file order are in that chunk's events
  // (TraceReader::ReadChunk, ChunkReadMode::kEvents) or a later one's: how a reader that
  // seeks learns what made a handle without reading the trace before it.
  const std::vector<ChunkSpan>& chunk_spans() const;
  int64_t ChunkDefiningHandle(uint64_t id) const;

  class Impl;

 private:
  SeqStream() = default;
  bool Fail(absl::Status st);
  void Finish();
  // Reads chunks up to `c` in file order, then merges chunk `c`; false (status_ set) when
  // the stream must stop.
  bool Join(size_t c);

  std::string path_;
  TraceFileFormat format_ = TraceFileFormat::kCltrace;
  uint64_t file_size_ = 0;
  absl::Status status_;
  int64_t torn_tail_ = -1;
  bool dense_positions_ = false;
  bool finished_ = false;
  bool gaps_on_ = true;
  uint64_t from_seq_ = 0;
  uint64_t delivered_ = 0;
  uint64_t chunk_ordinal_ = 0;
  uint64_t below_from_ = 0;
  uint64_t last_seq_ = 0;
  uint64_t expected_events_ = 0;
  uint64_t options_window_ = 0;
  uint64_t options_prefetch_ = 0;
  PositionGapFinder gap_finder_;
  PositionGaps gaps_;
  Stats stats_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_SEQ_STREAM_H_
