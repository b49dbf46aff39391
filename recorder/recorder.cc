// Recorder: the background thread that turns ring records into trace events, and the
// session's lifetime (start, flushes, crash flush, stop).
#include "recorder/recorder.h"

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ddi/catalog.h"
#include "format/event.h"
#include "format/event_codec.h"
#include "recorder/internal/content.h"
#include "recorder/internal/contexts.h"
#include "recorder/internal/core.h"
#include "recorder/internal/drain.h"
#include "recorder/internal/timebase.h"

namespace cltrace::recorder {

using internal::G;
using internal::ThreadState;

namespace internal {
// crash.cc
void InstallCrashHandlers();
void RemoveCrashHandlers();
void ReraiseDeferredSignal(int sig);
}  // namespace internal

namespace {

// The background thread itself (its own crash cannot wait for itself).
thread_local bool t_is_background = false;

// A forked child has no background thread: it forwards calls without recording (its parent's
// trace is not its to write), and its producers must never wait for a consumer.
void StopRecordingInChild() {
  G().recording.store(false, std::memory_order_relaxed);
  internal::g_drain_alive.store(false, std::memory_order_relaxed);
}

// Set by the crash handler; the drain thread answers with a flush and sets g_crash_done.
std::atomic<int> g_crash_request{0};
std::atomic<int> g_crash_done{0};
// A fatal signal sent to the background thread itself (crash.cc): that thread flushes and
// re-raises it at its next pass (DeferredSignalFlush).
std::atomic<int> g_deferred_signal{0};
std::atomic<Recorder::Impl*> g_active{nullptr};
std::mutex g_start_mu;

}  // namespace

class Recorder::Impl {
  // One slot of the drain thread's direct-mapped handle cache (HandleId).
  struct HandleCacheEntry {
    uint64_t raw = 0;
    uint64_t id = 0;
  };

 public:
  explicit Impl(Options options) : opts_(std::move(options)) {}

  absl::Status Open() {
    format::TraceWriter::Options w;
    w.chunk_bytes = opts_.chunk_bytes;
    w.zstd_level = opts_.zstd_level;
    w.background = false;  // this recorder's own thread compresses and writes
    // Each segment of a thread's records is appended as a run (AppendRun): concurrent
    // threads' interleaving then costs far less in the file (format version 2).
    w.position_runs = true;
    w.writer.set_name("cltrace-recorder");
    w.writer.set_version("1");
    w.process.set_pid(static_cast<uint32_t>(getpid()));
    for (const std::string& a : opts_.argv) w.process.add_argv(a);
    if (!opts_.argv.empty()) w.process.set_executable(opts_.argv[0]);
    w.process.set_driver(opts_.driver_path);
    absl::StatusOr<std::unique_ptr<format::TraceWriter>> writer =
        opts_.sink != nullptr ? format::TraceWriter::Open(std::move(opts_.sink), std::move(w))
                              : format::TraceWriter::Open(opts_.output_path, std::move(w));
    if (!writer.ok()) return writer.status();
    writer_ = std::move(*writer);
    return absl::OkStatus();
  }

  void Begin() {
    G().clock_timestamps = opts_.timestamps == TimestampMode::kClock;
    G().ring_words = std::max<size_t>(opts_.thread_buffer_bytes / sizeof(uint64_t), 1024);
    // Records a previous session left behind (calls that returned after its Stop).
    std::vector<ThreadState*> threads;
    internal::SnapshotThreads(&threads);
    for (ThreadState* t : threads) {
      t->ring.Discard();
      // Wait statistics of earlier sessions are not ours.
      waits_base_ += t->waits.load(std::memory_order_relaxed);
      wait_ns_base_ += t->wait_ns.load(std::memory_order_relaxed);
    }
    std::vector<internal::OverflowRecord> overflow;
    internal::TakeOverflow(&overflow);
    for (const internal::OverflowRecord& o : overflow) {
      internal::ReleaseOverflow(internal::HeaderWords(o.words[0]));
    }
    G().seq.store(0, std::memory_order_relaxed);
    start_mono_ = internal::MonotonicNs();
    internal::g_drain_alive.store(true, std::memory_order_release);
    G().recording.store(true, std::memory_order_release);
    thread_ = std::thread([this] { Loop(); });
    if (opts_.install_signal_handlers) internal::InstallCrashHandlers();
  }

  absl::Status Flush() {
    std::unique_lock<std::mutex> l(request_mu_);
    const uint64_t ticket = ++flush_requested_;
    internal::WakeDrain();
    flush_cv_.wait(l, [&] { return flush_done_ >= ticket || stopped_; });
    return flush_status_;
  }

  Stats Stop() {
    {
      std::lock_guard<std::mutex> l(request_mu_);
      if (stopped_) return stats_;
      stop_requested_ = true;
    }
    if (opts_.install_signal_handlers) internal::RemoveCrashHandlers();
    G().recording.store(false, std::memory_order_release);
    internal::WakeDrain();
    thread_.join();
    internal::g_drain_alive.store(false, std::memory_order_release);
    std::lock_guard<std::mutex> l(request_mu_);
    stopped_ = true;
    flush_cv_.notify_all();
    return stats_;
  }

  Stats stats() const {
    std::lock_guard<std::mutex> l(stats_mu_);
    return stats_;
  }

  bool stopped() const {
    std::lock_guard<std::mutex> l(request_mu_);
    return stopped_;
  }

 private:
  void Loop() {
    // First: the crash handler tells this thread from the application's by this flag, and a
    // signal can arrive as soon as the thread has a name others can find it by.
    t_is_background = true;
    // The application's asynchronous signals are not ours to handle; and a write beyond
    // RLIMIT_FSIZE must fail with EFBIG (a write failure) rather than kill the process with
    // SIGXFSZ. Faults stay deliverable (the crash handler sees them).
    sigset_t block;
    sigfillset(&block);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigdelset(&block, sig);
    pthread_sigmask(SIG_BLOCK, &block, nullptr);
    pthread_setname_np(pthread_self(), "cltrace-record");  // visible in top / perf
    // Sleeps of tens of microseconds (SleepUs) must not stretch by the default 50 us slack.
    prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    int64_t last_flush = internal::MonotonicNs();
    int64_t last_check = last_flush;
    while (true) {
      const uint32_t seen = internal::WakeCount();
      const bool busy = DrainOnce(/*force=*/false);
      const int64_t now = internal::MonotonicNs();
      if (now - last_check >= 50'000'000) {
        internal::CheckAllDeviceTables(/*periodic=*/true);  // R5 rewrites nobody calls through
        last_check = now;
      }
      if (g_deferred_signal.load(std::memory_order_acquire) != 0) DeferredSignalFlush();
      if (g_crash_request.load(std::memory_order_acquire) != 0 &&
          g_crash_done.load(std::memory_order_acquire) == 0) {
        DrainOnce(/*force=*/true);
        (void)WriterFlush();  // errors are in the stats
        g_crash_done.store(1, std::memory_order_release);
      }
      uint64_t requested;
      bool stop;
      {
        std::lock_guard<std::mutex> l(request_mu_);
        requested = flush_requested_;
        stop = stop_requested_;
      }
      if (stop) break;
      if (requested > flush_served_ ||
          (opts_.flush_period_ms > 0 && now - last_flush >= opts_.flush_period_ms * 1'000'000)) {
        DrainOnce(/*force=*/true);
        absl::Status st = WriterFlush();
        last_flush = now;
        std::lock_guard<std::mutex> l(request_mu_);
        flush_served_ = requested;
        flush_done_ = requested;
        flush_status_ = st;
        flush_cv_.notify_all();
      }
      if (!busy) internal::WaitForWake(seen, SleepUs());
    }
    // Final drain: everything that returned before Stop.
    while (DrainOnce(/*force=*/true)) {
    }
    internal::CheckAllDeviceTables(/*periodic=*/false);
    if (writer_ != nullptr) {
      if (!write_failed_) {
        absl::Status st = writer_->Close();
        if (!st.ok()) NoteWriteError(st);
      }
      std::lock_guard<std::mutex> l(stats_mu_);
      stats_.events_written = writer_->events_written();
      stats_.bytes_written = writer_->bytes_written();
      // Every record processed is either in a chunk the sink accepted or not written: the
      // ones processed after a write failure, and those of the failed chunk, of the chunk
      // still open then and of the batch in hand (calls = written + not written, exactly).
      stats_.events_discarded = NotWritten();
    }
    UpdateThreadStats();
    // A signal sent to this thread while it was stopping: everything is written now.
    if (const int sig = g_deferred_signal.exchange(0); sig != 0)
      internal::ReraiseDeferredSignal(sig);
    timespec cpu;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    std::lock_guard<std::mutex> l(stats_mu_);
    stats_.background_cpu_ns =
        static_cast<uint64_t>(cpu.tv_sec) * 1000000000 + static_cast<uint64_t>(cpu.tv_nsec);
    const internal::ContentStats content = internal::GetContentStats();
    stats_.contents = content.captured;
    stats_.content_bytes = content.bytes;
    stats_.contents_skipped = content.skipped;
    stats_.first_content_skip = content.first_skip;
  }

  // The fatal signal sent to this thread (crash.cc): writes everything the application's
  // threads have recorded, as the crash flush of another thread's signal would, then re-raises
  // the signal with the application's previous disposition. Runs on this thread's own stack,
  // outside the signal handler, after the interrupted pass completed.
  void DeferredSignalFlush() {
    DrainOnce(/*force=*/true);
    (void)WriterFlush();  // errors are in the stats
    internal::ReraiseDeferredSignal(g_deferred_signal.exchange(0));
  }

  absl::Status WriterFlush() {
    if (writer_ == nullptr || write_failed_) return FailureStatus();
    absl::Status st = writer_->Flush();
    if (!st.ok()) NoteWriteError(st);
    std::lock_guard<std::mutex> l(stats_mu_);
    stats_.events_written = writer_->events_written();
    stats_.bytes_written = writer_->bytes_written();
    return st;
  }

  // Records processed that are in no chunk the sink accepted. Once a write failed nothing more
  // is written (format::TraceWriter), so from then on this is final for those records.
  uint64_t NotWritten() const {
    const uint64_t written = writer_ != nullptr ? writer_->events_written() : 0;
    return calls_ > written ? calls_ - written : 0;
  }

  absl::Status FailureStatus() {
    std::lock_guard<std::mutex> l(stats_mu_);
    return stats_.first_error.empty() ? absl::OkStatus() : absl::DataLossError(stats_.first_error);
  }

  void NoteWriteError(const absl::Status& st) {
    std::lock_guard<std::mutex> l(stats_mu_);
    if (!write_failed_) {
      write_failed_ = true;
      stats_.write_failures += 1;
      stats_.first_error = st.ToString();
    }
  }

  void UpdateThreadStats() {
    uint64_t waits = 0, wait_ns = 0;
    for (ThreadState* t : threads_) {
      waits += t->waits.load(std::memory_order_relaxed);
      wait_ns += t->wait_ns.load(std::memory_order_relaxed);
    }
    std::lock_guard<std::mutex> l(stats_mu_);
    stats_.producer_waits = waits - waits_base_;
    stats_.producer_wait_ns = wait_ns - wait_ns_base_;
    stats_.threads = tids_seen_;
  }

  // One pass over the rings. A ring is taken when it is an eighth full, when its records have
  // waited half a flush period, when its thread ended, or when `force` (flush, stop, crash);
  // taking one thread's records in long runs makes consecutive events in the trace share their
  // thread, which roughly halves what the interleaving of threads costs in the compressed
  // file. Returns whether rings fill fast enough to poll again at once.
  bool DrainOnce(bool force) {
    internal::SnapshotThreads(&threads_);
    heads_.resize(threads_.size());
    for (size_t i = 0; i < threads_.size(); ++i) heads_[i] = threads_[i]->ring.Head();
    // After reading the heads: every record before them has positions below this counter.
    if (!G().clock_timestamps) {
      const uint64_t counter = G().seq.load(std::memory_order_acquire);
      timebase_.Add(counter, internal::MonotonicNs() - start_mono_);
    }
    bool busy = false;
    const int64_t now = internal::MonotonicNs();
    next_poll_ns_ = opts_.poll_interval_us * 1000;
    const int64_t hold_ns = std::min<int64_t>(
        opts_.flush_period_ms > 0 ? opts_.flush_period_ms * 500'000 : 250'000'000, 250'000'000);
    for (size_t i = 0; i < threads_.size(); ++i) {
      ThreadState* t = threads_[i];
      const bool exited = t->exited.load(std::memory_order_acquire);
      uint64_t pos = t->ring.tail();
      const uint64_t head = heads_[i];
      const uint64_t fill = head - pos;
      if (fill > t->ring.capacity() / 4) busy = true;
      const bool take =
          force || exited || fill >= t->ring.capacity() / 8 || now - t->drained_at_ns >= hold_ns;
      NotePollRate(t, head, take ? 0 : fill, now);
      if (!take) continue;
      t->drained_at_ns = now;
      // In segments of kSegmentWords, each released to the producer once processed.
      while (pos != head) {
        pos = TakeSegment(t, pos, head);
        internal::ReleaseRing(t, pos);  // let a waiting producer go on
      }
      if (exited && t->ring.Head() == pos) internal::RetireThread(t);
    }
    internal::TakeOverflow(&overflow_);
    for (internal::OverflowRecord& o : overflow_) {
      const uint64_t words = internal::HeaderWords(o.words[0]);
      Process(o.tid, o.words.get());
      internal::ReleaseOverflow(words);
      busy = true;
    }
    overflow_.clear();
    FlushBatch();
    {
      std::lock_guard<std::mutex> l(stats_mu_);
      stats_.calls = calls_;
      stats_.events_discarded = write_failed_ ? NotWritten() : 0;
    }
    UpdateThreadStats();
    return busy;
  }

  // Processes the records of `t`'s ring from `pos` up to about kSegmentWords words on (never
  // past `head`), writes them as one run and returns where it stopped.
  uint64_t TakeSegment(ThreadState* t, uint64_t pos, uint64_t head) {
    const uint64_t stop = head - pos > kSegmentWords ? pos + kSegmentWords : head;
    const uint32_t tid = t->tid;
    uint64_t p = pos;
    while (p < stop) {
      const uint64_t* rec = t->ring.At(p);
      // The producer's core wrote these lines: start fetching the next records now.
      __builtin_prefetch(t->ring.At(p + 64));
      __builtin_prefetch(t->ring.At(p + 72));
      if (internal::HeaderCall(rec[0]) != 0) Process(tid, rec);
      p += internal::HeaderWords(rec[0]);
    }
    FlushBatch();  // one run per segment
    return p;
  }

  // Shortens the next sleep so that this ring is polled again before it is a quarter full at
  // the rate it filled since its previous poll: a thread making calls back to back fills a
  // 1 MiB ring in about a millisecond, and a ring found full makes its producer wait.
  void NotePollRate(ThreadState* t, uint64_t head, uint64_t fill_left, int64_t now) {
    const uint64_t grown = head - t->polled_head;
    const int64_t dt = now - t->polled_at_ns;
    t->polled_head = head;
    t->polled_at_ns = now;
    if (grown == 0 || dt <= 0) return;
    const uint64_t quarter = t->ring.capacity() / 4;
    const uint64_t room = quarter > fill_left ? quarter - fill_left : 0;
    const double ns =
        static_cast<double>(room) * static_cast<double>(dt) / static_cast<double>(grown);
    if (ns < static_cast<double>(next_poll_ns_)) next_poll_ns_ = static_cast<int64_t>(ns);
  }

  // How long the loop may sleep when no ring is busy.
  int64_t SleepUs() const {
    return std::clamp<int64_t>(next_poll_ns_ / 1000, kMinSleepUs,
                               std::max<int64_t>(opts_.poll_interval_us, kMinSleepUs));
  }

  // Turns one record into the next event of the batch (written by FlushBatch).
  void Process(uint32_t tid, const uint64_t* rec) {
    const internal::RecordView r = internal::ReadRecord(rec);
    ++calls_;
    if (tid != last_tid_) {
      if (tids_.insert({tid, true}).second) ++tids_seen_;
      last_tid_ = tid;
    }
    if (writer_ == nullptr || write_failed_) {
      std::free(r.note);
      delete r.content;
      return;  // counted by NotWritten
    }
    if (batch_size_ == batch_.size()) FlushBatch();
    // A thread's records are in exit order: a call's record follows those of the calls made
    // inside it. FlushBatch puts such a batch in entry (seq) order, which compresses better:
    // each call then directly follows the one entered before it, whatever it contains.
    batch_ordered_ = batch_ordered_ && (batch_size_ == 0 || r.seq > batch_[batch_size_ - 1].seq);
    format::Event& e = batch_[batch_size_++];
    e.call = static_cast<format::CallId>(r.call);
    e.seq = r.seq;
    e.end = r.end;
    e.parent = r.parent;
    e.ret = r.ret;
    e.tid = tid;
    e.timestamp_ns = G().clock_timestamps ? r.clock_ns - start_mono_ : timebase_.At(e.seq);
    // The batch's events keep their inline (or grown) argument storage from earlier use.
    if (e.args.size() != r.nargs) e.args.resize(r.nargs);
    uint64_t* args = e.args.data();
    for (size_t i = 0; i < r.nargs; ++i) args[i] = r.args[i];
    MapHandles(&e);
    if (__builtin_expect(r.note != nullptr, 0)) {
      e.annotation = AnnotationId(r.annotation, r.note);
      std::free(r.note);
    } else {
      e.annotation = AnnotationId(r.annotation, nullptr);
    }
    if (__builtin_expect(r.content != nullptr, 0)) {
      e.content = writer_->InternContent(*r.content);
      delete r.content;
    } else {
      e.content = 0;
    }
  }

  // Hands the batch to the writer as one run (the batch never mixes threads, except for
  // oversized records): one lock acquisition and one error check per batch instead of per
  // event.
  void FlushBatch() {
    if (batch_size_ == 0) return;
    if (!pending_args_.empty()) InternNewHandles();  // before sorting: it holds batch indices
    if (!batch_ordered_) {
      std::sort(batch_.begin(), batch_.begin() + static_cast<ptrdiff_t>(batch_size_),
                [](const format::Event& a, const format::Event& b) { return a.seq < b.seq; });
    }
    batch_ordered_ = true;
    absl::Status st = writer_->AppendRun(absl::MakeConstSpan(batch_.data(), batch_size_));
    batch_size_ = 0;
    if (!st.ok()) {
      if (absl::IsInvalidArgument(st)) {
        // A record the format rejects is a recorder bug; keep the rest of the trace.
        std::lock_guard<std::mutex> l(stats_mu_);
        if (stats_.first_error.empty()) stats_.first_error = st.ToString();
      } else {
        NoteWriteError(st);
      }
    }
  }

  const format::CallLayout& Layout(format::CallId call) {
    const size_t i = static_cast<size_t>(call);
    if (layouts_[i] == nullptr) layouts_[i] = &format::LayoutOf(call);
    return *layouts_[i];
  }

  // Replaces the raw handle values of the batch's last event `e` by their trace ids. A value
  // not seen before gets its id when the batch is written (FlushBatch), so the definitions of
  // a batch's new handles are written together and in value order, where their tokens share
  // most of their digits: that roughly halves what the definitions cost in the file.
  CLTRACE_HOT void MapHandles(format::Event* e) {
    const format::CallLayout& layout = Layout(e->call);
    const size_t n = e->args.size();
    if (layout.masks_valid && n <= 64) {
      for (uint64_t m = layout.handle_mask & (n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1);
           m != 0; m &= m - 1) {
        MapHandle(e, static_cast<size_t>(__builtin_ctzll(m)));
      }
      return;
    }
    format::VisitArgKinds(layout, absl::MakeConstSpan(e->args.data(), n),
                          [&](size_t i, format::FieldKind kind) {
                            if (kind == format::FieldKind::kHandle) MapHandle(e, i);
                          });
  }

  CLTRACE_HOT void MapHandle(format::Event* e, size_t arg) {
    uint64_t& v = e->args[arg];
    const uint64_t id = HandleId(v);
    if (__builtin_expect(id == kPendingHandle, 0)) {
      pending_args_.push_back({static_cast<uint32_t>(batch_size_ - 1), static_cast<uint32_t>(arg)});
      return;  // the raw value stays until FlushBatch
    }
    v = id;
  }

  CLTRACE_HOT uint64_t HandleId(uint64_t raw) {
    if (raw == 0) return 0;
    // A direct-mapped cache in front of the map: a stream mostly repeats a few handles.
    HandleCacheEntry& c = handle_cache_[(raw >> 4 ^ raw >> 14) & (kHandleCacheSize - 1)];
    if (__builtin_expect(c.raw == raw, 1)) return c.id;
    return HandleIdMiss(raw, &c);
  }

  // The id of a value seen before, or kPendingHandle for one that FlushBatch interns.
  uint64_t HandleIdMiss(uint64_t raw, HandleCacheEntry* c) {
    auto [it, inserted] = handle_ids_.try_emplace(raw, 0);
    if (inserted) new_handles_.push_back(raw);
    if (it->second == 0) return kPendingHandle;
    c->raw = raw;
    c->id = it->second;
    return c->id;
  }

  // Interns the batch's new handle values (sorted) and puts their ids into the events.
  void InternNewHandles() {
    std::sort(new_handles_.begin(), new_handles_.end());
    for (uint64_t raw : new_handles_) handle_ids_[raw] = writer_->InternHandleValue(raw);
    new_handles_.clear();
    for (const PendingArg& p : pending_args_) {
      uint64_t& v = batch_[p.event].args[p.arg];
      v = handle_ids_.find(v)->second;
    }
    pending_args_.clear();
  }

  CLTRACE_HOT uint64_t AnnotationId(const char* api, char* note) {
    if (note == nullptr && api == nullptr) return 0;
    return AnnotationIdSlow(api, note);
  }

  uint64_t AnnotationIdSlow(const char* api, char* note) {
    if (note == nullptr) {
      if (api == last_api_) return last_api_id_;
      auto [it, inserted] = annotation_ids_.try_emplace(api, 0);
      if (inserted) it->second = writer_->InternString(api);
      last_api_ = api;
      last_api_id_ = it->second;
      return it->second;
    }
    return writer_->InternString(api != nullptr ? absl::StrCat(api, " | ", note)
                                                : std::string(note));
  }

  Options opts_;
  std::unique_ptr<format::TraceWriter> writer_;
  std::thread thread_;
  int64_t start_mono_ = 0;

  // Requests from other threads.
  mutable std::mutex request_mu_;
  std::condition_variable flush_cv_;
  uint64_t flush_requested_ = 0;
  uint64_t flush_served_ = 0;
  uint64_t flush_done_ = 0;
  absl::Status flush_status_;
  bool stop_requested_ = false;
  bool stopped_ = false;

  mutable std::mutex stats_mu_;
  Stats stats_;
  bool write_failed_ = false;  // drain thread (read elsewhere only under stats_mu_ via stats_)

  // Drain-thread state.
  static constexpr int64_t kMinSleepUs = 20;
  static constexpr uint64_t kSegmentWords = 4096;
  int64_t next_poll_ns_ = 0;  // set by DrainOnce (NotePollRate)
  internal::Timebase timebase_;
  std::vector<ThreadState*> threads_;
  std::vector<uint64_t> heads_;
  std::vector<internal::OverflowRecord> overflow_;
  absl::flat_hash_map<uint64_t, uint64_t> handle_ids_;
  static constexpr size_t kHandleCacheSize = 1024;
  HandleCacheEntry handle_cache_[kHandleCacheSize];
  const format::CallLayout* layouts_[format::kCallIdCount] = {};
  absl::flat_hash_map<const char*, uint64_t> annotation_ids_;
  const char* last_api_ = nullptr;  // the last annotation looked up, and its id
  uint64_t last_api_id_ = 0;
  absl::flat_hash_map<uint32_t, bool> tids_;
  uint32_t last_tid_ = 0;
  uint64_t tids_seen_ = 0;
  uint64_t calls_ = 0;
  uint64_t waits_base_ = 0, wait_ns_base_ = 0;
  // Events built by Process and not yet handed to the writer (FlushBatch); the vector never
  // shrinks, so its events keep their argument storage.
  static constexpr size_t kBatchEvents = 256;
  // Handle ids are never this large (ids are dense from 1).
  static constexpr uint64_t kPendingHandle = ~uint64_t{0};
  struct PendingArg {
    uint32_t event;
    uint32_t arg;
  };
  std::vector<uint64_t> new_handles_;     // values first seen in the batch (no id yet)
  std::vector<PendingArg> pending_args_;  // the batch's args that hold such a value
  std::vector<format::Event> batch_ = std::vector<format::Event>(kBatchEvents);
  size_t batch_size_ = 0;
  bool batch_ordered_ = true;  // the batch's events are in seq order
};

absl::StatusOr<std::unique_ptr<Recorder>> Recorder::Start(Options options) {
  std::lock_guard<std::mutex> l(g_start_mu);
  if (g_active.load() != nullptr) {
    return absl::FailedPreconditionError("a Recorder is already active in this process");
  }
  auto impl = std::make_unique<Impl>(std::move(options));
  absl::Status st = impl->Open();
  if (!st.ok()) return st;
  g_crash_request.store(0);
  g_crash_done.store(0);
  g_deferred_signal.store(0);
  internal::ResetContentStats();
  static const int atfork = pthread_atfork(nullptr, nullptr, &StopRecordingInChild);
  (void)atfork;
  impl->Begin();
  g_active.store(impl.get());
  return std::unique_ptr<Recorder>(new Recorder(std::move(impl)));
}

Recorder::Recorder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Recorder::~Recorder() { Stop(); }

absl::Status Recorder::Flush() {
  if (impl_->stopped()) return absl::FailedPreconditionError("Flush on a stopped Recorder");
  return impl_->Flush();
}

Stats Recorder::Stop() {
  Stats s = impl_->Stop();
  Impl* self = impl_.get();
  g_active.compare_exchange_strong(self, nullptr);
  return s;
}

Stats Recorder::stats() const { return impl_->stats(); }

namespace internal {

// Crash path (crash.cc), in the handler of a signal sent (not a fault) to the background
// thread itself: notes it for that thread's next pass. False if there is no such thread or
// this is not it. Async-signal-safe (atomics).
bool DeferSignalToBackgroundThread(int sig) {
  if (!t_is_background || g_active.load(std::memory_order_acquire) == nullptr ||
      !g_drain_alive.load(std::memory_order_acquire)) {
    return false;
  }
  g_deferred_signal.store(sig, std::memory_order_release);
  return true;
}

// Crash path (crash.cc): asks the drain thread for a flush and waits for it, up to
// `timeout_ms`. Async-signal-safe (atomics, futex, nanosleep).
bool CrashFlush(int timeout_ms) {
  if (t_is_background || g_active.load(std::memory_order_acquire) == nullptr ||
      !g_drain_alive.load(std::memory_order_acquire)) {
    return false;
  }
  g_crash_request.store(1, std::memory_order_release);
  WakeDrain();
  for (int i = 0; i < timeout_ms; ++i) {
    if (g_crash_done.load(std::memory_order_acquire) != 0) return true;
    timespec ts{0, 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  return false;
}

}  // namespace internal
}  // namespace cltrace::recorder
