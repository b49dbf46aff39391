#include "format/seq_stream.h"

#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "format/jsonl.h"

namespace cltrace::format {

// ---- PositionGapFinder ----
//
// Positions arrive as entry seqs in increasing order and exit positions in any order, each
// above its own seq. When seq s arrives, every position below s is final: the seqs below it
// came before, and an end below s belongs to a call entered before s, already in the heap.
// So the heap holds the ends of calls entered and not yet left: the calls open at s.

void PositionGapFinder::Position(uint64_t p) {
  if (p == prev_) {
    if (g_.duplicates++ == 0) g_.first_duplicate = p;
    return;
  }
  if (p > prev_ + 1) {
    if (g_.missing == 0) g_.first_missing = prev_ + 1;
    g_.missing += p - prev_ - 1;
    g_.holes.emplace_back(prev_ + 1, p - 1);
  }
  prev_ = p;
}

void PositionGapFinder::Add(const Event& e) {
  auto later = std::greater<uint64_t>();
  while (!ends_.empty() && ends_.front() < e.seq) {
    std::pop_heap(ends_.begin(), ends_.end(), later);
    Position(ends_.back());
    ends_.pop_back();
  }
  if (e.seq != 0) Position(e.seq);
  if (e.end != 0) {
    ends_.push_back(e.end);
    std::push_heap(ends_.begin(), ends_.end(), later);
  }
}

PositionGaps PositionGapFinder::Finish() {
  std::sort(ends_.begin(), ends_.end());
  for (uint64_t p : ends_) Position(p);
  ends_.clear();
  g_.highest = prev_;
  return std::move(g_);
}

// ---- SeqStream ----

namespace {

uint64_t FileSizeOf(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

// The merge. Chunks are first read in file order (definitions must be applied in file
// order), either keeping their events (prefetch) or only their definitions; a chunk joins the
// merge when the smallest seq not yet delivered reaches its header's min_seq.
//
// Why the order is right: every event of a chunk lies in its header's [min_seq, max_seq]
// (the reader checks each one). A chunk joins the merge no later than when the merge's
// smallest head reaches its min_seq, so when an event with seq s is delivered every chunk
// with min_seq <= s has joined, and no event below s is left anywhere: the delivery is
// sorted. Ties: each chunk's events are stably sorted and the heap breaks ties by file
// order, so the order is that of a stable sort of the file order (LoadTrace's).
//
// Why the memory is bounded: a chunk joins at its min_seq and leaves after its max_seq, so
// the chunks merged at once are those whose ranges contain the current seq: at most the
// overlap depth D of the chunk ranges, holding at most D x (events per chunk) events. For a
// recorder (runs of each thread's buffer, sealed into chunks at least every flush period) D
// is about the number of threads writing in one flush period. Beyond window_events the
// stream stops with an error rather than growing. Chunks read ahead of their turn keep their
// events up to prefetch_events, beyond that they are decoded again when they join.
class SeqStream::Impl {
 public:
  enum class State : uint8_t { kUnread, kKept, kDropped, kMerging, kDone, kLost };
  struct Chunk {
    ChunkSpan span;
    State state = State::kUnread;
    std::vector<Event> events;
    // Delivery order when `events` (file order) is not sorted by seq: indices sorted by (seq,
    // index), cheaper to sort than the events themselves.
    std::vector<uint32_t> order;
    size_t next = 0;  // first event not delivered (kMerging), in delivery order
    Event& Head() { return events[order.empty() ? next : order[next]]; }
  };

  std::unique_ptr<JsonlReader> jsonl;
  std::unique_ptr<TraceReader> reader;
  std::vector<Chunk> chunks;
  // Chunks the index says hold no definitions (ChunkIndexEntry.definitions == 0): seeking past
  // them needs no read.
  std::vector<bool> no_definitions;
  std::vector<size_t> by_min;   // chunks that hold events at or above from_seq, by min_seq
  size_t next_join = 0;         // in by_min
  size_t first_unread = 0;      // chunks before it had their first read
  size_t lost_from = SIZE_MAX;  // chunks from here on cannot be delivered (an error)
  absl::Status read_error;      // why (the first error in file order)
  absl::Status scan_error;      // what ended the header walk
  uint64_t kept_events = 0;
  uint64_t merged_events = 0;
  size_t merged_chunks = 0;
  // Heap of merging chunks by (seq of their next event, file order).
  std::vector<size_t> heap;
  // (handles defined after the chunk's definitions, chunk) for every chunk read that defined
  // handles, in file order (ChunkDefiningHandle). Handle ids are dense in definition order.
  std::vector<std::pair<uint64_t, size_t>> handle_marks;
  // Kept when the chunks are dropped at the end (the chunks' spans).
  std::vector<ChunkSpan> spans;

  bool HeapLess(size_t a, size_t b) {  // "a after b" for std::*_heap (a min-heap)
    const uint64_t sa = chunks[a].Head().seq;
    const uint64_t sb = chunks[b].Head().seq;
    return sa != sb ? sa > sb : a > b;
  }
  void Push(size_t c) {
    heap.push_back(c);
    std::push_heap(heap.begin(), heap.end(), [this](size_t a, size_t b) { return HeapLess(a, b); });
  }
  size_t Pop() {
    std::pop_heap(heap.begin(), heap.end(), [this](size_t a, size_t b) { return HeapLess(a, b); });
    size_t c = heap.back();
    heap.pop_back();
    return c;
  }
};

SeqStream::~SeqStream() = default;

absl::StatusOr<std::unique_ptr<SeqStream>> SeqStream::Open(const std::string& path,
                                                           const Options& options) {
  absl::StatusOr<TraceFileFormat> detected = DetectTraceFormat(path);
  if (!detected.ok()) return detected.status();
  std::unique_ptr<SeqStream> s(new SeqStream());
  s->path_ = path;
  s->format_ = *detected;
  s->file_size_ = FileSizeOf(path);
  s->from_seq_ = options.from_seq;
  s->gaps_on_ = options.gaps;
  s->impl_ = std::make_unique<Impl>();
  s->options_window_ = options.window_events;
  s->options_prefetch_ = options.prefetch_events;
  Impl& m = *s->impl_;
  if (s->format_ == TraceFileFormat::kJsonl) {
    absl::StatusOr<std::unique_ptr<JsonlReader>> r = JsonlReader::Open(path);
    if (!r.ok()) return r.status();
    m.jsonl = *std::move(r);
    return s;
  }
  TraceReader::Options ro;
  ro.salvage = options.salvage;
  absl::StatusOr<std::unique_ptr<TraceReader>> r = TraceReader::Open(path, ro);
  if (!r.ok()) return r.status();
  m.reader = *std::move(r);
  if (m.reader->index() != nullptr) s->expected_events_ = m.reader->index()->total_events();
  std::vector<ChunkSpan> spans;
  m.scan_error = m.reader->ScanChunks(&spans);
  s->torn_tail_ = m.reader->torn_tail();
  s->dense_positions_ = PositionsAreDense(m.reader->header());
  m.chunks.resize(spans.size());
  m.no_definitions.assign(spans.size(), false);
  if (const proto::TraceIndex* index = m.reader->index(); index != nullptr) {
    absl::flat_hash_map<uint64_t, const proto::ChunkIndexEntry*> by_offset;
    for (const proto::ChunkIndexEntry& c : index->chunks()) by_offset[c.offset()] = &c;
    for (size_t i = 0; i < spans.size(); ++i) {
      auto it = by_offset.find(spans[i].offset);
      // Trusted only where it agrees with the chunk's header.
      if (it == by_offset.end() || !it->second->has_definitions() ||
          it->second->min_seq() != spans[i].min_seq || it->second->max_seq() != spans[i].max_seq ||
          it->second->events() != spans[i].events)
        continue;
      m.no_definitions[i] = it->second->definitions() == 0;
    }
  }
  m.spans = spans;
  for (size_t i = 0; i < spans.size(); ++i) {
    m.chunks[i].span = spans[i];
    if (spans[i].events != 0 && spans[i].max_seq >= options.from_seq) m.by_min.push_back(i);
  }
  std::stable_sort(m.by_min.begin(), m.by_min.end(), [&](size_t a, size_t b) {
    return m.chunks[a].span.min_seq < m.chunks[b].span.min_seq;
  });
  return s;
}

bool SeqStream::Fail(absl::Status st) {
  if (status_.ok()) status_ = std::move(st);
  Finish();
  return false;
}

void SeqStream::Finish() {
  if (finished_) return;
  finished_ = true;
  if (impl_ != nullptr) {
    impl_->chunks.clear();
    impl_->chunks.shrink_to_fit();
    impl_->heap.clear();
  }
  if (gaps_on_) {
    gaps_ = gap_finder_.Finish();
    if (!dense_positions_) {
      gaps_.missing = gaps_.first_missing = 0;
      gaps_.holes.clear();
    }
  }
}

bool SeqStream::Next(Event* event) {
  if (finished_) return false;
  Impl& m = *impl_;
  if (m.jsonl != nullptr) {
    while (true) {
      if (!m.jsonl->Next(event)) {
        status_ = m.jsonl->status();
        Finish();
        return false;
      }
      if (event->seq < from_seq_) {
        ++below_from_;
        continue;
      }
      break;
    }
  } else {
    while (true) {
      // Join every chunk whose range starts at or below the smallest head.
      while (m.next_join < m.by_min.size()) {
        const size_t c = m.by_min[m.next_join];
        Impl::Chunk& chunk = m.chunks[c];
        if (!m.heap.empty() && chunk.span.min_seq > m.chunks[m.heap.front()].Head().seq) break;
        ++m.next_join;
        if (!Join(c)) return Fail(status_);
      }
      if (m.heap.empty()) {
        // Everything readable was delivered: report where reading stopped.
        absl::Status st = !m.read_error.ok() ? m.read_error : m.scan_error;
        if (!st.ok()) return Fail(st);
        Finish();
        return false;
      }
      const size_t c = m.Pop();
      Impl::Chunk& chunk = m.chunks[c];
      *event = std::move(chunk.Head());
      chunk_ordinal_ = chunk.span.ordinal;
      if (++chunk.next < chunk.events.size()) {
        m.Push(c);
      } else {
        m.merged_events -= chunk.events.size();
        --m.merged_chunks;
        chunk.events = std::vector<Event>();
        chunk.order = std::vector<uint32_t>();
        chunk.state = Impl::State::kDone;
      }
      if (event->seq < from_seq_) {
        ++below_from_;
        continue;
      }
      break;
    }
  }
  if (event->seq < last_seq_) {
    // Cannot happen for chunks the reader checked; defends the callers' invariant.
    return Fail(absl::DataLossError(absl::StrFormat(
        "seq %d delivered after seq %d: the trace is out of order", event->seq, last_seq_)));
  }
  last_seq_ = event->seq;
  ++delivered_;
  if (gaps_on_) gap_finder_.Add(*event);
  return true;
}

// First reads of chunks in file order up to `c`; then `c` joins the merge.
bool SeqStream::Join(size_t c) {
  Impl& m = *impl_;
  while (m.first_unread <= c && m.first_unread < m.lost_from) {
    const size_t i = m.first_unread++;
    Impl::Chunk& chunk = m.chunks[i];
    const bool wanted = chunk.span.events != 0 && chunk.span.max_seq >= from_seq_;
    const ChunkReadMode mode = wanted ? ChunkReadMode::kAll : ChunkReadMode::kDefinitions;
    if (!wanted && m.no_definitions[i]) {
      ++stats_.chunks_skipped;
      below_from_ += chunk.span.events;
      chunk.state = Impl::State::kDone;
      continue;
    }
    std::vector<Event> events;
    const uint64_t handles_before = m.reader->handles().size();
    absl::Status st = m.reader->ReadChunk(chunk.span, mode, &events);
    if (m.reader->handles().size() > handles_before)
      m.handle_marks.emplace_back(m.reader->handles().size(), i);
    if (mode == ChunkReadMode::kAll) {
      ++stats_.chunks_decoded;
    } else {
      ++stats_.chunks_definitions;
      if (st.ok()) below_from_ += chunk.span.events;
    }
    if (!st.ok()) {
      // Reading stops here in file order: what this chunk yielded before the damage is still
      // delivered, later chunks are not.
      m.read_error = st;
      m.lost_from = i + 1;
    }
    if (i == c || !st.ok() || (wanted && m.kept_events + events.size() <= options_prefetch_)) {
      m.kept_events += events.size();
      chunk.events = std::move(events);
      chunk.state = Impl::State::kKept;
    } else {
      chunk.state = wanted ? Impl::State::kDropped : Impl::State::kDone;
    }
  }
  Impl::Chunk& chunk = m.chunks[c];
  if (c >= m.lost_from) {
    chunk.state = Impl::State::kLost;
    return true;
  }
  if (chunk.state == Impl::State::kKept) {
    m.kept_events -= chunk.events.size();
  } else if (chunk.state == Impl::State::kDropped) {
    absl::Status st = m.reader->ReadChunk(chunk.span, ChunkReadMode::kEvents, &chunk.events);
    ++stats_.chunks_decoded;
    ++stats_.chunks_redecoded;
    if (!st.ok()) {  // read whole once already: the file changed under us
      status_ = st;
      return false;
    }
  }
  chunk.state = Impl::State::kMerging;
  std::vector<Event>& events = chunk.events;
  if (!std::is_sorted(events.begin(), events.end(),
                      [](const Event& a, const Event& b) { return a.seq < b.seq; })) {
    std::vector<std::pair<uint64_t, uint32_t>> keys(events.size());
    for (size_t i = 0; i < events.size(); ++i) keys[i] = {events[i].seq, static_cast<uint32_t>(i)};
    // (seq, file position): a stable order. A chunk is a few ascending runs (the calls of a
    // run are written in seq order but for a call that follows its nested callbacks, and
    // runs are appended): they are merged pairwise, O(n log runs) instead of a sort's
    // O(n log n). The pairs are distinct, so this is the order a sort gives.
    std::vector<size_t> runs = {0};
    for (size_t i = 1; i < keys.size(); ++i) {
      if (keys[i] < keys[i - 1]) runs.push_back(i);
    }
    runs.push_back(keys.size());
    while (runs.size() > 2) {
      std::vector<size_t> merged = {0};
      size_t r = 0;
      for (; r + 2 < runs.size(); r += 2) {
        std::inplace_merge(keys.begin() + runs[r], keys.begin() + runs[r + 1],
                           keys.begin() + runs[r + 2]);
        merged.push_back(runs[r + 2]);
      }
      if (r + 1 < runs.size()) merged.push_back(runs.back());  // an odd run, carried over
      runs = std::move(merged);
    }
    chunk.order.resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) chunk.order[i] = keys[i].second;
  }
  if (events.empty()) {
    chunk.state = Impl::State::kDone;
    return true;
  }
  m.merged_events += events.size();
  ++m.merged_chunks;
  stats_.peak_chunks_merged = std::max<uint64_t>(stats_.peak_chunks_merged, m.merged_chunks);
  stats_.peak_events_held = std::max(stats_.peak_events_held, m.merged_events + m.kept_events);
  if (m.merged_events > options_window_) {
    status_ = absl::DataLossError(absl::StrFormat(
        "chunk %d at offset %d: its seq range [%d, %d] overlaps %d other chunks holding %d "
        "events not yet delivered, more than the reorder window of %d events (the trace "
        "cannot be read in seq order within bounded memory; its calls up to seq %d were "
        "delivered)",
        chunk.span.ordinal, chunk.span.offset, chunk.span.min_seq, chunk.span.max_seq,
        m.merged_chunks - 1, m.merged_events - events.size(), options_window_, last_seq_));
    return false;
  }
  m.Push(c);
  return true;
}

const TokenTable& SeqStream::handles() const {
  return impl_->jsonl ? impl_->jsonl->handles() : impl_->reader->handles();
}
const TokenTable& SeqStream::strings() const {
  return impl_->jsonl ? impl_->jsonl->strings() : impl_->reader->strings();
}
const TokenTable& SeqStream::contents() const {
  return impl_->jsonl ? impl_->jsonl->contents() : impl_->reader->contents();
}
const proto::TraceHeader& SeqStream::header() const {
  static const proto::TraceHeader* const kNone = new proto::TraceHeader();
  return impl_->reader ? impl_->reader->header() : *kNone;
}
TraceReader::Stats SeqStream::reader_stats() const {
  TraceReader::Stats s;
  if (impl_->reader) s = impl_->reader->stats();
  s.events = delivered_;
  return s;
}
int64_t SeqStream::lines() const { return impl_->jsonl ? impl_->jsonl->lines() : 0; }
uint64_t SeqStream::position() const {
  if (impl_->jsonl) return impl_->jsonl->position();
  const Impl& m = *impl_;
  if (finished_) return file_size_;
  if (m.first_unread == 0) return 0;
  if (m.first_unread >= m.chunks.size()) return file_size_;
  return m.chunks[m.first_unread].span.offset;
}
TraceReader* SeqStream::reader() { return impl_->reader.get(); }

const std::vector<ChunkSpan>& SeqStream::chunk_spans() const { return impl_->spans; }

int64_t SeqStream::ChunkDefiningHandle(uint64_t id) const {
  const Impl& m = *impl_;
  if (m.reader == nullptr || id == 0) return -1;
  auto it = std::upper_bound(
      m.handle_marks.begin(), m.handle_marks.end(), id,
      [](uint64_t v, const std::pair<uint64_t, size_t>& mark) { return v < mark.first; });
  if (it == m.handle_marks.end()) return -1;
  return static_cast<int64_t>(it->second);
}

}  // namespace cltrace::format
