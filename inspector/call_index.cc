#include "inspector/call_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "inspector/model.h"

namespace cltrace::inspector {

using format::Event;

namespace {

// A record for a call whose block could not be decoded (the file changed since the load).
CallRecord Unknown(uint64_t seq) {
  CallRecord r;
  r.seq = seq;
  return r;
}

// The depth of a call made inside one at depth `d` (saturating).
uint16_t Deeper(uint16_t d) { return d >= 0xfffe ? 0xfffe : static_cast<uint16_t>(d + 1); }

}  // namespace

uint16_t CallIndex::ThreadIndex(uint32_t tid) {
  if (!threads_.empty() && threads_[last_thread_] == tid) return last_thread_;
  auto [it, inserted] = thread_index_.try_emplace(tid, 0);
  if (inserted) {
    if (threads_.size() >= PackedCall::kThreadEscape) {
      thread_index_.erase(it);
      return PackedCall::kThreadEscape;
    }
    it->second = static_cast<uint16_t>(threads_.size());
    threads_.push_back(tid);
    open_.emplace_back();
  }
  last_thread_ = it->second;
  return it->second;
}

uint16_t CallIndex::DepthOf(const Event& e, uint16_t thread) {
  uint16_t depth = 0;
  if (thread == PackedCall::kThreadEscape) return e.parent != 0 ? 1 : 0;
  std::vector<Open>& stack = open_[thread];
  while (!stack.empty() && stack.back().end != 0 && stack.back().end < e.seq) stack.pop_back();
  if (e.parent != 0) {
    bool found = false;
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      if (it->seq == e.parent) {
        depth = Deeper(it->depth);
        found = true;
        break;
      }
    }
    if (!found) {
      // Made inside a call of another thread: look it up among every thread's open calls.
      for (size_t t = 0; t < open_.size() && !found; ++t) {
        for (const Open& o : open_[t]) {
          if (o.seq == e.parent && (o.end == 0 || o.end > e.seq)) {
            depth = Deeper(o.depth);
            found = true;
            break;
          }
        }
      }
    }
    if (!found) depth = 1;  // its parent is not in the trace
  }
  if (e.end == 0 || e.end > e.seq + 1) stack.push_back({e.seq, e.end, depth});
  return depth;
}

PackedCall CallIndex::Pack(const Event& e, uint64_t chunk, uint16_t thread, uint16_t depth) {
  PackedCall p;
  p.seq = e.seq;
  if (e.end != 0) {
    if (e.end > e.seq && e.end - e.seq < PackedCall::kEscape) {
      p.end_delta = static_cast<uint32_t>(e.end - e.seq);
    } else {
      p.end_delta = PackedCall::kEscape;
      far_end_[e.seq] = e.end;
    }
  }
  if (e.parent != 0) {
    if (e.parent < e.seq && e.seq - e.parent < PackedCall::kEscape) {
      p.parent_delta = static_cast<uint32_t>(e.seq - e.parent);
    } else {
      p.parent_delta = PackedCall::kEscape;
      far_parent_[e.seq] = e.parent;
    }
  }
  if (chunk < PackedCall::kEscape) {
    p.chunk = static_cast<uint32_t>(chunk);
  } else {
    p.chunk = PackedCall::kEscape;
    big_chunk_[e.seq] = chunk;
  }
  p.thread = thread;
  if (thread == PackedCall::kThreadEscape) far_tid_[e.seq] = e.tid;
  p.call = static_cast<uint16_t>(e.call);
  p.depth = depth;
  return p;
}

CallRecord CallIndex::Unpack(const PackedCall& p) const {
  CallRecord r;
  r.seq = p.seq;
  if (p.end_delta == PackedCall::kEscape) {
    r.end = far_end_.at(p.seq);
  } else if (p.end_delta != 0) {
    r.end = p.seq + p.end_delta;
  }
  if (p.parent_delta == PackedCall::kEscape) {
    r.parent = far_parent_.at(p.seq);
  } else if (p.parent_delta != 0) {
    r.parent = p.seq - p.parent_delta;
  }
  r.tid = p.thread == PackedCall::kThreadEscape ? far_tid_.at(p.seq) : threads_[p.thread];
  r.call = static_cast<format::CallId>(p.call);
  r.depth = p.depth;
  return r;
}

void CallIndex::Add(const Event& e, uint64_t chunk) {
  const uint16_t thread = ThreadIndex(e.tid);
  if (coarse_ && count_ % block_calls_ == 0) {
    // The calls open where the block starts: the parents its calls may name from before it.
    block_seq_.push_back(e.seq);
    std::vector<std::pair<uint64_t, uint16_t>> open;
    for (const std::vector<Open>& stack : open_)
      for (const Open& o : stack)
        if (o.end == 0 || o.end > e.seq) open.emplace_back(o.seq, o.depth);
    std::sort(open.begin(), open.end());
    block_open_.push_back(std::move(open));
  }
  const uint16_t depth = DepthOf(e, thread);
  if (coarse_) {
    // Fields that do not fit a record still go to the side maps, which blocks decoded later
    // consult (Unpack): rare values, so the maps stay small.
    Pack(e, chunk, thread, depth);
  } else {
    calls_.push_back(Pack(e, chunk, thread, depth));
  }
  if ((count_ & 63) == 0) dc_bits_.push_back(0);
  last_seq_ = e.seq;
  ++count_;
}

void CallIndex::SetDcTable(uint64_t seq) {
  int64_t i = count_ != 0 && seq == last_seq_ ? static_cast<int64_t>(count_ - 1) : Find(seq);
  if (i < 0) return;
  dc_bits_[static_cast<size_t>(i) >> 6] |= uint64_t{1} << (i & 63);
}

void CallIndex::AttachEvents(std::vector<Event> events) {
  memory_ = std::make_shared<const std::vector<Event>>(std::move(events));
}

CallIndex::~CallIndex() {
  if (fd_ >= 0) close(fd_);
}

namespace {

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

}  // namespace

absl::Status CallIndex::FileUnchanged() const {
  struct stat st;
  if (fd_ < 0 || fstat(fd_, &st) != 0 || st.st_size != file_size_ || MtimeNs(st) != file_mtime_ns_)
    return absl::DataLossError(absl::StrCat(
        path_, ": the file changed since it was loaded; open it again to see its calls"));
  return absl::OkStatus();
}

absl::Status CallIndex::AttachFile(const std::string& path, bool salvage) {
  path_ = path;
  salvage_ = salvage;
  // Opened before the reader maps it: both see the same file.
  fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd_ < 0 || fstat(fd_, &st) != 0)
    return absl::NotFoundError(absl::StrCat(path, ": cannot open it again to read calls"));
  file_size_ = st.st_size;
  file_mtime_ns_ = MtimeNs(st);
  format::TraceReader::Options options;
  options.salvage = salvage;
  absl::StatusOr<std::unique_ptr<format::TraceReader>> r = format::TraceReader::Open(path, options);
  if (!r.ok()) return r.status();
  absl::MutexLock lock(&mu_);
  reader_ = *std::move(r);
  chunks_.clear();
  // The scan's error (damage, a torn tail) ends the list where the load's stream ended too.
  (void)reader_->ScanChunks(&chunks_);
  for (size_t i = 0; i < chunks_.size(); ++i) chunk_at_[chunks_[i].ordinal] = i;
  return absl::OkStatus();
}

void CallIndex::Finish() {
  calls_.shrink_to_fit();
  block_seq_.shrink_to_fit();
  block_open_.shrink_to_fit();
  dc_bits_.shrink_to_fit();
  open_.clear();
  open_.shrink_to_fit();
}

uint64_t CallIndex::BlockEndSeq(size_t b) const {
  return b + 1 < block_seq_.size() ? block_seq_[b + 1] : std::numeric_limits<uint64_t>::max();
}

absl::StatusOr<std::shared_ptr<const CallIndex::DecodedChunk>> CallIndex::ChunkLocked(
    uint64_t ordinal) const {
  for (auto it = chunk_lru_.begin(); it != chunk_lru_.end(); ++it) {
    if (it->first == ordinal) {
      chunk_lru_.splice(chunk_lru_.begin(), chunk_lru_, it);
      return chunk_lru_.front().second;
    }
  }
  auto at = chunk_at_.find(ordinal);
  if (reader_ == nullptr || at == chunk_at_.end())
    return absl::DataLossError(absl::StrCat(path_, ": chunk ", ordinal,
                                            " is not in the file any more (it changed since "
                                            "it was loaded)"));
  if (absl::Status st = FileUnchanged(); !st.ok()) return st;
  auto c = std::make_shared<DecodedChunk>();
  absl::Status st =
      reader_->ReadChunk(chunks_[at->second], format::ChunkReadMode::kEvents, &c->events);
  if (!st.ok()) return absl::Status(st.code(), absl::StrCat(path_, ": ", st.message()));
  c->by_seq.resize(c->events.size());
  for (uint32_t i = 0; i < c->by_seq.size(); ++i) c->by_seq[i] = i;
  std::stable_sort(c->by_seq.begin(), c->by_seq.end(),
                   [&](uint32_t a, uint32_t b) { return c->events[a].seq < c->events[b].seq; });
  cached_events_ += c->events.size();
  chunk_lru_.emplace_front(ordinal, std::move(c));
  while (cached_events_ > kCachedEvents && chunk_lru_.size() > kMinCachedChunks) {
    cached_events_ -= chunk_lru_.back().second->events.size();
    chunk_lru_.pop_back();
  }
  return chunk_lru_.front().second;
}

absl::StatusOr<std::shared_ptr<const CallIndex::Block>> CallIndex::BlockLocked(size_t b) const {
  for (auto it = block_lru_.begin(); it != block_lru_.end(); ++it) {
    if (it->first == b) {
      block_lru_.splice(block_lru_.begin(), block_lru_, it);
      return block_lru_.front().second;
    }
  }
  const uint64_t lo = block_seq_[b], hi = BlockEndSeq(b);
  const size_t first = b * size_t{block_calls_};
  const size_t expected = std::min<size_t>(block_calls_, count_ - first);
  // The block's events in seq order, with the chunk each came from.
  std::vector<std::pair<const Event*, uint64_t>> events;
  events.reserve(expected);
  std::vector<std::shared_ptr<const DecodedChunk>> held;
  if (memory_ != nullptr) {
    for (size_t i = first; i < first + expected && i < memory_->size(); ++i)
      events.emplace_back(&(*memory_)[i], 0);
  } else {
    for (const format::ChunkSpan& span : chunks_) {
      if (span.events == 0 || span.min_seq >= hi || span.max_seq < lo) continue;
      absl::StatusOr<std::shared_ptr<const DecodedChunk>> c = ChunkLocked(span.ordinal);
      if (!c.ok()) return c.status();
      held.push_back(*c);
      const DecodedChunk& d = **c;
      auto from = std::lower_bound(d.by_seq.begin(), d.by_seq.end(), lo,
                                   [&](uint32_t i, uint64_t s) { return d.events[i].seq < s; });
      for (auto it = from; it != d.by_seq.end() && d.events[*it].seq < hi; ++it)
        events.emplace_back(&d.events[*it], span.ordinal);
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const auto& a, const auto& b) { return a.first->seq < b.first->seq; });
  }
  if (events.size() != expected || events.front().first->seq != lo)
    return absl::DataLossError(absl::StrFormat(
        "%s: calls %d-%d (seq %d..) are not where the index put them: the file changed since "
        "it was loaded",
        path_, first, first + expected - 1, lo));
  auto block = std::make_shared<Block>();
  block->reserve(expected);
  const std::vector<std::pair<uint64_t, uint16_t>>& open = block_open_[b];
  for (const auto& [e, chunk] : events) {
    uint16_t depth = 0;
    if (e->parent != 0) {
      depth = 1;
      if (e->parent >= lo) {
        auto p = std::lower_bound(block->begin(), block->end(), e->parent,
                                  [](const PackedCall& c, uint64_t s) { return c.seq < s; });
        if (p != block->end() && p->seq == e->parent) depth = Deeper(p->depth);
      } else {
        auto p = std::lower_bound(open.begin(), open.end(), std::make_pair(e->parent, uint16_t{0}));
        if (p != open.end() && p->first == e->parent) depth = Deeper(p->second);
      }
    }
    PackedCall pc;
    pc.seq = e->seq;
    pc.end_delta = e->end == 0 ? 0
                   : e->end > e->seq && e->end - e->seq < PackedCall::kEscape
                       ? static_cast<uint32_t>(e->end - e->seq)
                       : PackedCall::kEscape;
    pc.parent_delta = e->parent == 0 ? 0
                      : e->parent < e->seq && e->seq - e->parent < PackedCall::kEscape
                          ? static_cast<uint32_t>(e->seq - e->parent)
                          : PackedCall::kEscape;
    pc.chunk = chunk < PackedCall::kEscape ? static_cast<uint32_t>(chunk) : PackedCall::kEscape;
    auto t = thread_index_.find(e->tid);
    pc.thread = t == thread_index_.end() ? PackedCall::kThreadEscape : t->second;
    pc.call = static_cast<uint16_t>(e->call);
    pc.depth = depth;
    block->push_back(pc);
  }
  block_lru_.emplace_front(b, std::move(block));
  if (block_lru_.size() > kCachedBlocks) block_lru_.pop_back();
  return block_lru_.front().second;
}

absl::StatusOr<PackedCall> CallIndex::CoarseGet(size_t i) const {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<std::shared_ptr<const Block>> b = BlockLocked(i / block_calls_);
  if (!b.ok()) {
    last_error_ = b.status();
    return b.status();
  }
  return (**b)[i % block_calls_];
}

CallRecord CallIndex::Get(size_t i) const {
  CallRecord r;
  if (!coarse_) {
    r = Unpack(calls_[i]);
  } else {
    absl::StatusOr<PackedCall> p = CoarseGet(i);
    r = p.ok() ? Unpack(*p) : Unknown(block_seq_[i / block_calls_]);
  }
  r.dc_table = DcTable(i);
  return r;
}

int64_t CallIndex::Find(uint64_t seq) const {
  if (!coarse_) {
    auto it = std::lower_bound(calls_.begin(), calls_.end(), seq,
                               [](const PackedCall& c, uint64_t s) { return c.seq < s; });
    return it != calls_.end() && it->seq == seq ? it - calls_.begin() : -1;
  }
  int64_t j = FindAtOrBefore(seq);
  if (j < 0) return -1;
  absl::StatusOr<PackedCall> p = CoarseGet(static_cast<size_t>(j));
  return p.ok() && p->seq == seq ? j : -1;
}

int64_t CallIndex::FindAtOrBefore(uint64_t seq) const {
  if (!coarse_) {
    auto it = std::upper_bound(calls_.begin(), calls_.end(), seq,
                               [](uint64_t s, const PackedCall& c) { return s < c.seq; });
    return (it - calls_.begin()) - 1;
  }
  auto bt = std::upper_bound(block_seq_.begin(), block_seq_.end(), seq);
  if (bt == block_seq_.begin()) return -1;
  const size_t b = static_cast<size_t>(bt - block_seq_.begin()) - 1;
  absl::MutexLock lock(&mu_);
  absl::StatusOr<std::shared_ptr<const Block>> block = BlockLocked(b);
  if (!block.ok()) {
    last_error_ = block.status();
    return static_cast<int64_t>(b * block_calls_);
  }
  auto it = std::upper_bound((*block)->begin(), (*block)->end(), seq,
                             [](uint64_t s, const PackedCall& c) { return s < c.seq; });
  return static_cast<int64_t>(b * block_calls_) + (it - (*block)->begin()) - 1;
}

absl::StatusOr<std::shared_ptr<const Event>> CallIndex::Decode(size_t i) const {
  if (i >= count_) return absl::OutOfRangeError(absl::StrCat("no call ", i));
  if (memory_ != nullptr) {
    if (i >= memory_->size()) return absl::OutOfRangeError(absl::StrCat("no call ", i));
    return std::shared_ptr<const Event>(memory_, &(*memory_)[i]);
  }
  PackedCall p;
  if (!coarse_) {
    p = calls_[i];
  } else {
    absl::StatusOr<PackedCall> c = CoarseGet(i);
    if (!c.ok()) return c.status();
    p = *c;
  }
  const uint64_t ordinal = p.chunk == PackedCall::kEscape ? big_chunk_.at(p.seq) : p.chunk;
  absl::MutexLock lock(&mu_);
  absl::StatusOr<std::shared_ptr<const DecodedChunk>> c = ChunkLocked(ordinal);
  if (!c.ok()) {
    last_error_ = c.status();
    return c.status();
  }
  const DecodedChunk& d = **c;
  auto it = std::lower_bound(d.by_seq.begin(), d.by_seq.end(), p.seq,
                             [&](uint32_t j, uint64_t s) { return d.events[j].seq < s; });
  if (it == d.by_seq.end() || d.events[*it].seq != p.seq) {
    last_error_ = absl::DataLossError(
        absl::StrFormat("%s: call seq %d is not in chunk %d any more: the file changed since "
                        "it was loaded",
                        path_, p.seq, ordinal));
    return last_error_;
  }
  return std::shared_ptr<const Event>(*c, &d.events[*it]);
}

uint64_t CallIndex::bytes() const {
  uint64_t n = calls_.capacity() * sizeof(PackedCall) + block_seq_.capacity() * sizeof(uint64_t) +
               dc_bits_.capacity() * sizeof(uint64_t) + threads_.capacity() * sizeof(uint32_t) +
               thread_index_.capacity() * 8;
  for (const auto& open : block_open_) n += sizeof(open) + open.capacity() * 16;
  // Side maps: key, value and control byte per slot.
  n += (far_end_.capacity() + far_parent_.capacity() + big_chunk_.capacity()) * 17 +
       far_tid_.capacity() * 13;
  absl::MutexLock lock(&mu_);
  for (const auto& [ordinal, c] : chunk_lru_) {
    n += c->events.capacity() * sizeof(Event) + c->by_seq.capacity() * sizeof(uint32_t);
    for (const Event& e : c->events)
      if (e.args.size() > 8) n += e.args.capacity() * sizeof(uint64_t);
  }
  for (const auto& [b, block] : block_lru_) n += block->capacity() * sizeof(PackedCall);
  n += chunks_.capacity() * sizeof(format::ChunkSpan) + chunk_at_.capacity() * 17;
  return n;
}

absl::Status CallIndex::last_error() const {
  absl::MutexLock lock(&mu_);
  return last_error_;
}

}  // namespace cltrace::inspector
