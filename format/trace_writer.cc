#include "format/trace_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ddi/catalog.h"
#include "format/chunk.h"
#include "format/crc32c.h"
#include "format/event_codec.h"
#include "format/internal/errno_status.h"
#include "format/status_macros.h"

namespace cltrace::format {
namespace {

using internal::ErrnoStatus;

class FileSink : public ByteSink {
 public:
  FileSink(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FileSink() override { ::close(fd_); }
  absl::Status Write(absl::string_view bytes) override {
    const char* p = bytes.data();
    size_t n = bytes.size();
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(errno, "write to", path_);
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    return absl::OkStatus();
  }
  absl::Status Flush() override { return absl::OkStatus(); }

 private:
  int fd_;
  std::string path_;
};

// What the trailer index needs to know about one chunk's events.
struct ChunkStats {
  std::vector<uint64_t> call_counts;  // by call id
  absl::flat_hash_set<uint32_t> tids;
  int64_t min_ts = 0, max_ts = 0;
  uint32_t definitions = 0;  // handle, string and content definitions
};

}  // namespace

absl::StatusOr<std::unique_ptr<ByteSink>> OpenFileSink(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "cannot create", path);
  return std::unique_ptr<ByteSink>(new FileSink(fd, path));
}

class TraceWriter::Impl {
 public:
  Impl(std::unique_ptr<ByteSink> sink, Options options)
      : opts_(std::move(options)),
        sink_(std::move(sink)),
        encoder_(opts_.timestamp_unit_ns),
        compressor_(opts_.zstd_level) {
    opts_.chunk_bytes = std::clamp<size_t>(opts_.chunk_bytes, 1, kMaxStoredSize / 2);
    if (opts_.max_queued_bytes == 0) opts_.max_queued_bytes = 4 * opts_.chunk_bytes;
    ResetStats();
  }

  ~Impl() {
    if (!closed_) (void)Close();
  }

  absl::Status Start() {
    proto::TraceHeader header;
    header.set_format_version(opts_.position_runs ? kFormatVersion : kFormatVersionV1);
    header.set_catalog_version(static_cast<uint32_t>(CatalogVersion()));
    for (const CallInfo& c : Calls()) header.add_call_names(&c == &Calls()[0] ? "" : c.name);
    header.set_timestamp_unit_ns(opts_.timestamp_unit_ns);
    *header.mutable_writer() = opts_.writer;
    *header.mutable_process() = opts_.process;
    header.set_start_unix_ns(opts_.start_unix_ns.has_value() ? *opts_.start_unix_ns
                                                             : absl::ToUnixNanos(absl::Now()));
    std::string bytes = EncodeFileHeader(header);
    CLTRACE_RETURN_IF_ERROR(sink_->Write(bytes));
    CLTRACE_RETURN_IF_ERROR(sink_->Flush());
    offset_ = bytes.size();
    bytes_written_ = bytes.size();
    if (opts_.background) worker_ = std::thread([this] { WorkerLoop(); });
    return absl::OkStatus();
  }

  uint64_t InternHandleValue(uint64_t raw) {
    std::lock_guard<std::mutex> l(mu_);
    size_t before = handles_.size();
    uint64_t id = handles_.InternValue(raw);
    if (handles_.size() != before) DefineLocked(true, id, handles_.Token(id));
    return id;
  }

  uint64_t InternHandleToken(absl::string_view token) {
    std::lock_guard<std::mutex> l(mu_);
    return InternTokenLocked(handles_, /*handle=*/true, token);
  }

  uint64_t InternString(absl::string_view s) {
    std::lock_guard<std::mutex> l(mu_);
    return InternTokenLocked(strings_, /*handle=*/false, s);
  }

  uint32_t InternContent(absl::string_view data) {
    if (data.empty()) return 0;
    // Deduplicated by a 96-bit digest (absl::Hash and CRC32C) rather than by the bytes, so a
    // long recording does not keep every upload in memory.
    const ContentKey key{absl::Hash<absl::string_view>{}(data), crc32c::Value(data), data.size()};
    std::lock_guard<std::mutex> l(mu_);
    auto [it, added] = content_ids_.try_emplace(key, next_content_id_);
    if (added) {
      ++next_content_id_;
      encoder_.AppendContentDef(it->second, data);
      ++stats_.definitions;
      if (encoder_.size() >= opts_.chunk_bytes) SealLocked();
    }
    return it->second;
  }

  absl::Status Append(const Event& e) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (closed_) return absl::FailedPreconditionError("Append on a closed TraceWriter");
      CLTRACE_RETURN_IF_ERROR(AppendLocked(e));
    }
    return FirstError();
  }

  absl::Status AppendBatch(absl::Span<const Event> events) {
    absl::Status invalid;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (closed_) return absl::FailedPreconditionError("AppendBatch on a closed TraceWriter");
      for (const Event& e : events) {
        absl::Status st = AppendLocked(e);
        if (__builtin_expect(!st.ok(), 0) && invalid.ok()) invalid = std::move(st);
      }
    }
    absl::Status err = FirstError();
    return err.ok() ? invalid : err;
  }

  absl::Status AppendRun(absl::Span<const Event> events) {
    if (!opts_.position_runs) return AppendBatch(events);
    absl::Status invalid;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (closed_) return absl::FailedPreconditionError("AppendRun on a closed TraceWriter");
      run_.clear();
      size_t run_bytes = 0;
      for (const Event& e : events) {
        const CallLayout& layout = Layout(e.call);
        if (__builtin_expect(!QuickValidLocked(e, layout), 0)) {
          absl::Status st = ValidateLocked(e, layout);
          if (!st.ok()) {
            if (invalid.ok()) invalid = std::move(st);
            continue;
          }
        }
        NoteEventLocked(e, run_.empty() && encoder_.event_count() == 0);
        run_.push_back({&e, &layout});
        // Pieces of bounded size: a chunk overshoots chunk_bytes by at most one piece.
        run_bytes += 32 + 10 * e.args.size();
        if (run_.size() >= kMaxRunEvents || run_bytes >= opts_.chunk_bytes / 4) {
          AppendRunLocked();
          run_bytes = 0;
        }
      }
      AppendRunLocked();
    }
    absl::Status err = FirstError();
    return err.ok() ? invalid : err;
  }

  absl::Status Flush() {
    uint64_t target;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (closed_) return absl::FailedPreconditionError("Flush on a closed TraceWriter");
      SealLocked();
      target = enqueued_;
    }
    if (opts_.background) {
      std::unique_lock<std::mutex> q(qmu_);
      done_cv_.wait(q, [&] { return done_ >= target; });
    }
    {
      std::lock_guard<std::mutex> s(sink_mu_);
      RecordError(sink_->Flush());
    }
    return FirstError();
  }

  absl::Status Close() {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (closed_) return FirstError();
      SealLocked();
      closed_ = true;
    }
    if (worker_.joinable()) {
      {
        std::lock_guard<std::mutex> q(qmu_);
        stop_ = true;
      }
      work_cv_.notify_all();
      worker_.join();
    }
    // Only this thread touches the write state from here on.
    std::lock_guard<std::mutex> s(sink_mu_);
    if (opts_.write_index && index_valid_ && FirstError().ok()) WriteIndexLocked();
    RecordError(sink_->Flush());
    return FirstError();
  }

  uint64_t events_written() const { return events_written_.load(std::memory_order_relaxed); }
  uint64_t bytes_written() const { return bytes_written_.load(std::memory_order_relaxed); }

 private:
  struct Pending {
    std::string raw;
    ChunkInfo info;
    ChunkStats stats;
  };

  // Checks and encodes one event; InvalidArgument (nothing written) if the format cannot hold
  // it. Requires mu_.
  absl::Status AppendLocked(const Event& e) {
    const CallLayout& layout = Layout(e.call);
    if (__builtin_expect(!QuickValidLocked(e, layout), 0)) {
      CLTRACE_RETURN_IF_ERROR(ValidateLocked(e, layout));
    }
    NoteEventLocked(e, encoder_.event_count() == 0);
    encoder_.AppendCall(e, layout);
    if (encoder_.size() >= opts_.chunk_bytes) SealLocked();
    return absl::OkStatus();
  }

  // Encodes the checked (and noted: NoteEventLocked) events in run_ as one run and empties
  // it. Requires mu_.
  void AppendRunLocked() {
    if (run_.empty()) return;
    encoder_.AppendRun(absl::MakeConstSpan(run_));
    run_.clear();
    if (encoder_.size() >= opts_.chunk_bytes) SealLocked();
  }

  // The index's view of one more event of the current chunk. Requires mu_.
  void NoteEventLocked(const Event& e, bool first_in_chunk) {
    ++stats_.call_counts[static_cast<size_t>(e.call)];
    if (stats_.tids.empty() || e.tid != last_tid_) {
      stats_.tids.insert(e.tid);
      last_tid_ = e.tid;
    }
    if (first_in_chunk) {
      stats_.min_ts = stats_.max_ts = e.timestamp_ns;
    } else if (e.timestamp_ns < stats_.min_ts) {
      stats_.min_ts = e.timestamp_ns;
    } else if (e.timestamp_ns > stats_.max_ts) {
      stats_.max_ts = e.timestamp_ns;
    }
  }

  // LayoutOf(call), remembered per call (LayoutOf is a function-local static behind a guard).
  const CallLayout& Layout(CallId call) {
    const size_t i = static_cast<size_t>(call);
    if (__builtin_expect(i >= static_cast<size_t>(kCallIdCount), 0)) return LayoutOf(call);
    const CallLayout* l = layouts_[i];
    if (__builtin_expect(l == nullptr, 0)) l = layouts_[i] = &LayoutOf(call);
    return *l;
  }

  void ResetStats() {
    stats_.call_counts.assign(kCallIdCount, 0);
    stats_.tids.clear();
    stats_.min_ts = stats_.max_ts = 0;
    stats_.definitions = 0;
  }

  // The id of `token` in `table`; a token seen for the first time is defined in the trace.
  uint64_t InternTokenLocked(TokenTable& table, bool handle, absl::string_view token) {
    size_t before = table.size();
    uint64_t id = table.Intern(token);
    if (table.size() != before) DefineLocked(handle, id, token);
    return id;
  }

  void DefineLocked(bool handle, uint64_t id, absl::string_view token) {
    if (handle) {
      encoder_.AppendHandleDef(id, token);
    } else {
      encoder_.AppendStringDef(id, token);
    }
    ++stats_.definitions;
    if (encoder_.size() >= opts_.chunk_bytes) SealLocked();
  }

  // The usual event (a catalog call without arrays, ids this writer handed out) passes this
  // check; false sends it to ValidateLocked, which judges the rest and names the field.
  bool QuickValidLocked(const Event& e, const CallLayout& layout) const {
    if (!(layout.masks_valid && e.parent != e.seq && e.args.size() <= 64 &&
          e.annotation < strings_.size() && e.content < next_content_id_)) {
      return false;
    }
    const uint64_t n = e.args.size();
    const uint64_t present = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
    // masks_valid is only ever set on the layout of a catalog call.
    const uint64_t* args = e.args.data();
    for (uint64_t m = layout.handle_mask & present; m != 0; m &= m - 1) {
      if (args[__builtin_ctzll(m)] >= handles_.size()) return false;
    }
    for (uint64_t m = layout.string_mask & present; m != 0; m &= m - 1) {
      if (args[__builtin_ctzll(m)] >= strings_.size()) return false;
    }
    return true;
  }

  absl::Status ValidateLocked(const Event& e, const CallLayout& layout) {
    if (QuickValidLocked(e, layout)) return absl::OkStatus();
    const CallInfo* ci = GetCall(e.call);
    if (ci == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("Append: event seq %d has call id %d, which is not in the catalog", e.seq,
                          static_cast<int>(e.call)));
    }
    if (e.parent != 0 && e.parent == e.seq) {
      return absl::InvalidArgumentError(
          absl::StrFormat("Append: event seq %d (%s) is its own parent", e.seq, ci->name));
    }
    if (e.args.size() > kMaxEventArgs) {
      return absl::InvalidArgumentError(
          absl::StrFormat("Append: event seq %d (%s) has %d args, more than the format's %d", e.seq,
                          ci->name, e.args.size(), kMaxEventArgs));
    }
    if (e.annotation >= strings_.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "Append: event seq %d (%s) has annotation string id %d, not interned by this writer",
          e.seq, ci->name, e.annotation));
    }
    if (e.content >= next_content_id_) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "Append: event seq %d (%s) has content id %d, not interned by this writer", e.seq,
          ci->name, e.content));
    }
    absl::Status bad;
    auto fields = Fields(*ci);
    VisitArgKinds(layout, absl::MakeConstSpan(e.args.data(), e.args.size()),
                  [&](size_t i, FieldKind kind) {
                    if (!bad.ok()) return;
                    const TokenTable* table = kind == FieldKind::kHandle   ? &handles_
                                              : kind == FieldKind::kString ? &strings_
                                                                           : nullptr;
                    if (table != nullptr && e.args[i] >= table->size()) {
                      bad = absl::InvalidArgumentError(absl::StrFormat(
                          "Append: event seq %d (%s) arg %d (%s) holds %s id %d, not interned "
                          "by this writer",
                          e.seq, ci->name, i, i < fields.size() ? fields[i].name : "element",
                          table == &handles_ ? "handle" : "string", e.args[i]));
                    }
                  });
    return bad;
  }

  // Closes the current chunk: written now (synchronous mode) or queued for the worker.
  void SealLocked() {
    if (encoder_.empty()) return;
    ChunkInfo info;
    info.type = ChunkType::kEvents;
    info.min_seq = encoder_.min_seq();
    info.max_seq = encoder_.max_seq();
    info.packet_count = encoder_.packet_count();
    info.event_count = encoder_.event_count();
    if (!opts_.background) {
      std::lock_guard<std::mutex> s(sink_mu_);
      WriteChunkLocked(encoder_.payload(), info, stats_);
      encoder_.Reset();
      ResetStats();
      ++enqueued_;
      return;
    }
    Pending p{encoder_.TakePayload(), info, std::move(stats_)};
    ResetStats();
    const size_t size = p.raw.size();
    std::unique_lock<std::mutex> q(qmu_);
    // Bounded memory: every appender waits (we hold mu_) until the worker catches up.
    space_cv_.wait(
        q, [&] { return queued_bytes_ == 0 || queued_bytes_ + size <= opts_.max_queued_bytes; });
    queue_.push_back(std::move(p));
    queued_bytes_ += size;
    ++enqueued_;
    work_cv_.notify_one();
  }

  void WorkerLoop() {
    while (true) {
      Pending p;
      {
        std::unique_lock<std::mutex> q(qmu_);
        work_cv_.wait(q, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stop_ and drained
        p = std::move(queue_.front());
        queue_.pop_front();
      }
      {
        std::lock_guard<std::mutex> s(sink_mu_);
        WriteChunkLocked(p.raw, p.info, p.stats);
      }
      {
        std::lock_guard<std::mutex> q(qmu_);
        queued_bytes_ -= p.raw.size();
        ++done_;
      }
      space_cv_.notify_all();
      done_cv_.notify_all();
    }
  }

  // Compresses and writes one chunk; on success records it in the index. Requires sink_mu_.
  // After a failed write nothing more is written: the sink may hold part of the failed chunk,
  // and a chunk after that would turn a torn tail into corruption in mid-file.
  void WriteChunkLocked(absl::string_view raw, ChunkInfo info, const ChunkStats& stats) {
    if (has_error_.load(std::memory_order_acquire)) return;
    out_.clear();
    absl::Status st = compressor_.BuildChunk(&info, raw, opts_.compress, &out_);
    if (st.ok()) st = sink_->Write(out_);
    if (!st.ok()) {
      RecordError(st);
      index_valid_ = false;  // the file offsets are unknown from here on
      return;
    }
    proto::ChunkIndexEntry* entry = index_.add_chunks();
    entry->set_offset(offset_);
    entry->set_min_seq(info.min_seq);
    entry->set_max_seq(info.max_seq);
    entry->set_events(info.event_count);
    entry->set_stored_size(info.total_size());
    if (opts_.index_definitions) entry->set_definitions(stats.definitions);
    offset_ += out_.size();
    bytes_written_ += out_.size();
    events_written_ += info.event_count;
    if (info.event_count > 0) {
      for (size_t i = 0; i < stats.call_counts.size(); ++i) call_counts_[i] += stats.call_counts[i];
      tids_.insert(stats.tids.begin(), stats.tids.end());
      if (!any_events_ || info.min_seq < index_.min_seq()) index_.set_min_seq(info.min_seq);
      if (!any_events_ || info.max_seq > index_.max_seq()) index_.set_max_seq(info.max_seq);
      if (!any_events_ || stats.min_ts < index_.min_ts()) index_.set_min_ts(stats.min_ts);
      if (!any_events_ || stats.max_ts > index_.max_ts()) index_.set_max_ts(stats.max_ts);
      index_.set_total_events(index_.total_events() + info.event_count);
      any_events_ = true;
    }
  }

  void WriteIndexLocked() {
    if (has_error_.load(std::memory_order_acquire)) return;  // see WriteChunkLocked
    for (uint64_t c : call_counts_) index_.add_call_counts(c);
    std::vector<uint32_t> tids(tids_.begin(), tids_.end());
    std::sort(tids.begin(), tids.end());
    for (uint32_t t : tids) index_.add_threads(t);
    std::string raw = index_.SerializeAsString();
    ChunkInfo info;
    info.type = ChunkType::kIndex;
    out_.clear();
    absl::Status st = compressor_.BuildChunk(&info, raw, opts_.compress, &out_);
    if (st.ok()) {
      out_ += EncodeFooter(offset_);
      st = sink_->Write(out_);
    }
    if (!st.ok()) {
      RecordError(st);
      return;
    }
    offset_ += out_.size();
    bytes_written_ += out_.size();
  }

  void RecordError(const absl::Status& st) {
    if (st.ok()) return;
    std::lock_guard<std::mutex> l(err_mu_);
    if (first_error_.ok()) first_error_ = st;
    has_error_.store(true, std::memory_order_release);
  }

  absl::Status FirstError() const {
    if (!has_error_.load(std::memory_order_acquire)) return absl::OkStatus();
    std::lock_guard<std::mutex> l(err_mu_);
    return first_error_;
  }

  Options opts_;
  std::unique_ptr<ByteSink> sink_;

  // Encoding state: every Append / Intern* goes through mu_, so events and definitions land
  // in the chunk stream in one total order (a definition always precedes its uses).
  std::mutex mu_;
  ChunkEncoder encoder_;
  TokenTable handles_;
  TokenTable strings_;
  struct ContentKey {
    size_t hash;
    uint32_t crc;
    size_t size;
    bool operator==(const ContentKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const ContentKey& k) {
      return H::combine(std::move(h), k.hash, k.crc, k.size);
    }
  };
  absl::flat_hash_map<ContentKey, uint32_t> content_ids_;
  uint32_t next_content_id_ = 1;
  ChunkStats stats_;
  uint32_t last_tid_ = 0;  // skips the set insert for runs of one thread's events
  const CallLayout* layouts_[kCallIdCount] = {};
  // AppendRun: the checked events of the piece being encoded.
  static constexpr size_t kMaxRunEvents = 4096;
  std::vector<ChunkEncoder::RunEvent> run_;
  bool closed_ = false;
  uint64_t enqueued_ = 0;  // sealed chunks (guarded by mu_ for writers, read under qmu_)

  // Background queue.
  std::mutex qmu_;
  std::condition_variable work_cv_, space_cv_, done_cv_;
  std::deque<Pending> queue_;
  size_t queued_bytes_ = 0;
  uint64_t done_ = 0;
  bool stop_ = false;
  std::thread worker_;

  // Write state, guarded by sink_mu_.
  std::mutex sink_mu_;
  ChunkCompressor compressor_;
  std::string out_;
  uint64_t offset_ = 0;
  proto::TraceIndex index_;
  bool index_valid_ = true;
  bool any_events_ = false;
  std::vector<uint64_t> call_counts_ = std::vector<uint64_t>(kCallIdCount, 0);
  absl::flat_hash_set<uint32_t> tids_;

  mutable std::mutex err_mu_;
  absl::Status first_error_;
  std::atomic<bool> has_error_{false};
  std::atomic<uint64_t> events_written_{0};
  std::atomic<uint64_t> bytes_written_{0};
};

absl::StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Open(const std::string& path,
                                                               Options options) {
  auto sink = OpenFileSink(path);
  if (!sink.ok()) return sink.status();
  return Open(*std::move(sink), std::move(options));
}

absl::StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Open(std::unique_ptr<ByteSink> sink,
                                                               Options options) {
  if (sink == nullptr) return absl::InvalidArgumentError("TraceWriter::Open: null sink");
  if (options.timestamp_unit_ns == 0) {
    return absl::InvalidArgumentError("TraceWriter::Open: timestamp_unit_ns must be > 0");
  }
  auto impl = std::make_unique<Impl>(std::move(sink), std::move(options));
  absl::Status st = impl->Start();
  if (!st.ok()) return st;
  return std::unique_ptr<TraceWriter>(new TraceWriter(std::move(impl)));
}

TraceWriter::TraceWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceWriter::~TraceWriter() = default;

uint64_t TraceWriter::InternHandleValue(uint64_t raw_value) {
  return impl_->InternHandleValue(raw_value);
}
uint64_t TraceWriter::InternHandleToken(absl::string_view token) {
  return impl_->InternHandleToken(token);
}
uint64_t TraceWriter::InternString(absl::string_view s) { return impl_->InternString(s); }
uint32_t TraceWriter::InternContent(absl::string_view data) { return impl_->InternContent(data); }
absl::Status TraceWriter::Append(const Event& event) { return impl_->Append(event); }
absl::Status TraceWriter::AppendBatch(absl::Span<const Event> events) {
  return impl_->AppendBatch(events);
}
absl::Status TraceWriter::AppendRun(absl::Span<const Event> events) {
  return impl_->AppendRun(events);
}
absl::Status TraceWriter::Flush() { return impl_->Flush(); }
absl::Status TraceWriter::Close() { return impl_->Close(); }
uint64_t TraceWriter::events_written() const { return impl_->events_written(); }
uint64_t TraceWriter::bytes_written() const { return impl_->bytes_written(); }

}  // namespace cltrace::format
