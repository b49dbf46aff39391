// Recorder: the background thread that turns ring records into trace events, and the
// session's lifetime (start, flushes, crash flush, stop).
#include "recorder/recorder.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
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
#include "recorder/internal/platform.h"
#include "recorder/internal/region.h"
#include "recorder/internal/timebase.h"

namespace cltrace::recorder {

using internal::G;
using internal::Region;
using internal::SlotControl;
using internal::SpscRing;

namespace internal {
bool CrashFlush(int timeout_ms);
bool DeferSignalToBackgroundThread(int sig);
// crash.cc
extern bool (*g_crash_flush)(int);
extern bool (*g_defer_signal)(int);
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

  // Per slot of the region: the consumer's view of its ring and what the drainer keeps
  // between its records.
  struct SlotDrain {
    SpscRing ring;
    int64_t drained_at_ns = 0;  // when it last took this ring's records
    int64_t polled_at_ns = 0;   // the ring's head and the time at its previous poll
    uint64_t polled_head = 0;
    std::string note;                // kNote bytes for the next record
    std::string content;             // kContent bytes for the next record
    std::vector<uint64_t> fragment;  // kFragment words of a record being reassembled
    SlotDrain() = default;
    SlotDrain& operator=(SlotDrain&& o) noexcept {
      ring.Detach();
      drained_at_ns = o.drained_at_ns;
      polled_at_ns = o.polled_at_ns;
      polled_head = o.polled_head;
      note = std::move(o.note);
      content = std::move(o.content);
      fragment = std::move(o.fragment);
      return *this;
    }
    SlotDrain(SlotDrain&& o) noexcept { *this = std::move(o); }
  };

 public:
  explicit Impl(Options options) : opts_(std::move(options)), serve_(!opts_.region.empty()) {}

  bool serve() const { return serve_; }

  // The region: this process's own (in-process recording), or the one `cltrace record` made
  // for the recorded program (service mode).
  absl::Status MapOrCreateRegion() {
    std::string error;
    platform::Mapping m;
    if (serve_) {
      if (!platform::MapRegion(opts_.region, &m, &error)) return absl::InternalError(error);
      region_ = Region::Check(m.base, m.size);
      if (region_ == nullptr) return absl::InvalidArgumentError("not a recording region");
      return absl::OkStatus();
    }
    const uint64_t ring_words =
        SpscRing::CapacityFor(std::max<size_t>(opts_.thread_buffer_bytes / sizeof(uint64_t), 1024));
    const uint32_t slots = std::max<uint32_t>(opts_.max_threads, 1);
    if (!platform::CreateRegion(Region::BytesFor(slots, ring_words), /*inheritable=*/false, &m,
                                &error)) {
      return absl::ResourceExhaustedError(error);
    }
    close(m.fd);  // the mapping stays
    region_ = Region::Init(m.base, slots, ring_words, platform::ProcessId());
    return absl::OkStatus();
  }

  absl::Status Open() {
    if (absl::Status st = MapOrCreateRegion(); !st.ok()) return st;
    format::TraceWriter::Options w;
    w.chunk_bytes = opts_.chunk_bytes;
    w.zstd_level = opts_.zstd_level;
    w.background = false;  // this recorder's own thread compresses and writes
    // Each segment of a thread's records is appended as a run (AppendRun): concurrent
    // threads' interleaving then costs far less in the file (format version 2).
    w.position_runs = true;
    w.writer.set_name("cltrace-recorder");
    w.writer.set_version("1");
    w.writer.set_timestamps(opts_.timestamps == TimestampMode::kClock
                                ? format::proto::TIMESTAMPS_CLOCK
                                : format::proto::TIMESTAMPS_DERIVED);
    w.process.set_pid(opts_.pid != 0 ? opts_.pid : static_cast<uint32_t>(getpid()));
    for (const std::string& a : opts_.argv) w.process.add_argv(a);
    if (!opts_.argv.empty()) w.process.set_executable(opts_.argv[0]);
    w.process.set_driver(opts_.driver_path);
    absl::StatusOr<std::unique_ptr<format::TraceWriter>> writer =
        opts_.sink != nullptr ? format::TraceWriter::Open(std::move(opts_.sink), std::move(w))
                              : format::TraceWriter::Open(opts_.output_path, std::move(w));
    if (!writer.ok()) {
      if (!serve_) return writer.status();
      // The program runs all the same; its records are drained and dropped.
      stats_.output_error = std::string(writer.status().message());
      return absl::OkStatus();
    }
    writer_ = std::move(*writer);
    return absl::OkStatus();
  }

  void Begin() {
    start_mono_ = internal::MonotonicNs();
    if (serve_) {
      thread_ = std::thread([this] { Loop(); });
      return;
    }
    G().clock_timestamps = opts_.timestamps == TimestampMode::kClock;
    // Threads attach to the new region at their next call (Self: the epoch changed).
    G().region = region_;
    G().seq = &region_->header()->seq;
    G().remote_drainer = false;
    G().epoch += 1;
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
    if (!serve_) {
      if (opts_.install_signal_handlers) internal::RemoveCrashHandlers();
      G().recording.store(false, std::memory_order_release);
    }
    WakeSelf();
    thread_.join();
    if (!serve_) internal::g_drain_alive.store(false, std::memory_order_release);
    region_->header()->drainer_alive.store(0, std::memory_order_release);
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
    // This thread only (Linux: a nice value is a thread's; the recorded program was started
    // before, by another thread, and keeps its own).
    if (opts_.drain_nice != 0)
      (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), opts_.drain_nice);
    int64_t last_flush = internal::MonotonicNs();
    int64_t last_check = last_flush;
    while (true) {
      const uint32_t seen = region_->header()->wake.load(std::memory_order_acquire);
      const bool busy = DrainOnce(/*force=*/false);
      const int64_t now = internal::MonotonicNs();
      if (!serve_ && now - last_check >= 50'000'000) {
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
      if (!busy) internal::WaitForWake(region_, seen, SleepUs());
    }
    // Final drain: everything that returned before Stop (service mode: everything the
    // program committed before it ended, however it ended).
    while (DrainOnce(/*force=*/true)) {
    }
    if (!serve_) internal::CheckAllDeviceTables(/*periodic=*/false);
    CountInFlight();
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
    {
      std::lock_guard<std::mutex> l(stats_mu_);
      if (writer_ == nullptr) stats_.events_discarded = calls_;
      stats_.calls = calls_;
      stats_.calls_lost = stats_.events_discarded + stats_.calls_in_flight;
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
    internal::RegionHeader* h = region_->header();
    stats_.contents = h->contents.load();
    stats_.content_bytes = h->content_bytes.load();
    stats_.contents_skipped = h->contents_skipped.load();
    stats_.first_content_skip = ReadText(h->first_content_skip, sizeof(h->first_content_skip));
    stats_.driver_opened = h->driver_loaded.load() != 0;
    stats_.driver_error = ReadText(h->driver_error, sizeof(h->driver_error));
    stats_.adapters_opened = h->adapters_opened.load();
  }

  static std::string ReadText(const char* field, size_t size) {
    return std::string(field, strnlen(field, size));
  }

  void WakeSelf() {
    std::atomic<uint32_t>& wake = region_->header()->wake;
    wake.fetch_add(1, std::memory_order_release);
    platform::FutexWake(&wake);
  }

  // The calls each thread had entered and not committed when recording ended (the process
  // died inside them, or they were still running at Stop).
  void CountInFlight() {
    uint64_t n = 0;
    const uint32_t used = region_->header()->slots_used.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < used && i < region_->header()->slot_count; ++i) {
      SlotControl* c = region_->slot(i);
      if (c->state.load(std::memory_order_acquire) == internal::kFree) continue;
      n += c->published.load(std::memory_order_acquire) >> 48;
    }
    std::lock_guard<std::mutex> l(stats_mu_);
    stats_.calls_in_flight = n;
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
    const uint32_t used = region_->header()->slots_used.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < used && i < region_->header()->slot_count; ++i) {
      waits += region_->slot(i)->waits.load(std::memory_order_relaxed);
      wait_ns += region_->slot(i)->wait_ns.load(std::memory_order_relaxed);
    }
    std::lock_guard<std::mutex> l(stats_mu_);
    stats_.producer_waits = waits;
    stats_.producer_wait_ns = wait_ns;
    stats_.threads = tids_seen_;
  }

  // One pass over the rings. A ring is taken when it is an eighth full, when its records have
  // waited half a flush period, when its thread ended, or when `force` (flush, stop, crash);
  // taking one thread's records in long runs makes consecutive events in the trace share their
  // thread, which roughly halves what the interleaving of threads costs in the compressed
  // file. Returns whether rings fill fast enough to poll again at once.
  bool DrainOnce(bool force) {
    internal::RegionHeader* h = region_->header();
    const uint32_t used = std::min(h->slots_used.load(std::memory_order_acquire), h->slot_count);
    if (slots_.size() < used) slots_.resize(used);
    states_.resize(used);
    heads_.resize(used);
    // The state first: a slot found exited has committed everything before its head.
    for (uint32_t i = 0; i < used; ++i) {
      SlotControl* c = region_->slot(i);
      states_[i] = c->state.load(std::memory_order_acquire);
      if (states_[i] == internal::kFree) continue;
      SlotDrain& d = slots_[i];
      if (!d.ring.attached()) d.ring.Attach(c, region_->ring(i), h->ring_words);
      heads_[i] = d.ring.Head();
    }
    // After reading the heads: every record before them has positions below this counter.
    if (opts_.timestamps != TimestampMode::kClock) {
      const uint64_t counter = h->seq.load(std::memory_order_acquire);
      timebase_.Add(counter, internal::MonotonicNs() - start_mono_);
    }
    bool busy = false;
    const int64_t now = internal::MonotonicNs();
    next_poll_ns_ = opts_.poll_interval_us * 1000;
    const int64_t hold_ns = std::min<int64_t>(
        opts_.flush_period_ms > 0 ? opts_.flush_period_ms * 500'000 : 250'000'000, 250'000'000);
    for (uint32_t i = 0; i < used; ++i) {
      if (states_[i] == internal::kFree) continue;
      SlotDrain& d = slots_[i];
      const bool exited = states_[i] == internal::kExited;
      uint64_t pos = d.ring.tail();
      const uint64_t head = heads_[i];
      const uint64_t fill = head - pos;
      if (fill > d.ring.capacity() / 4) busy = true;
      const bool take =
          force || exited || fill >= d.ring.capacity() / 8 || now - d.drained_at_ns >= hold_ns;
      NotePollRate(&d, head, take ? 0 : fill, now);
      if (!take) continue;
      d.drained_at_ns = now;
      const uint32_t tid = region_->slot(i)->tid;
      // In segments of kSegmentWords, each released to the producer once processed.
      while (pos != head) {
        pos = TakeSegment(&d, tid, pos, head);
        internal::ReleaseRing(&d.ring, pos);  // let a waiting producer go on
      }
      if (exited && d.ring.Head() == pos) {
        // Drained for good: the slot goes back to the pool, positions and all.
        SlotControl* c = region_->slot(i);
        d = SlotDrain();
        c->state.store(internal::kFree, std::memory_order_release);
      }
    }
    FlushBatch();
    {
      std::lock_guard<std::mutex> l(stats_mu_);
      stats_.calls = calls_;
      stats_.events_discarded = write_failed_ ? NotWritten() : 0;
    }
    UpdateThreadStats();
    return busy;
  }

  // Processes the records of slot `d` from `pos` up to about kSegmentWords words on (never
  // past `head`), writes them as one run and returns where it stopped.
  uint64_t TakeSegment(SlotDrain* d, uint32_t tid, uint64_t pos, uint64_t head) {
    const uint64_t stop = head - pos > kSegmentWords ? pos + kSegmentWords : head;
    uint64_t p = pos;
    while (p < stop) {
      const uint64_t* rec = d->ring.At(p);
      // The producer's core wrote these lines: start fetching the next records now.
      __builtin_prefetch(d->ring.At(p + 64));
      __builtin_prefetch(d->ring.At(p + 72));
      const uint32_t call = internal::HeaderCall(rec[0]);
      if (__builtin_expect(internal::IsControl(call), 0)) {
        Control(d, tid, rec);
      } else if (call != 0) {
        Process(d, tid, rec);
      }
      p += internal::HeaderWords(rec[0]);
    }
    FlushBatch();  // one run per segment
    return p;
  }

  // A control record (recorder/internal/region.h).
  void Control(SlotDrain* d, uint32_t tid, const uint64_t* rec) {
    const uint32_t call = internal::HeaderCall(rec[0]);
    const uint64_t words = internal::HeaderWords(rec[0]);
    const char* bytes = reinterpret_cast<const char*>(rec + 2);
    const size_t room = (words - 2) * sizeof(uint64_t);
    switch (call) {
      case internal::kDefString: {
        const size_t n = std::min<size_t>(rec[2], (words - 3) * sizeof(uint64_t));
        annotation_text_[rec[1]] = std::string(reinterpret_cast<const char*>(rec + 3), n);
        annotation_ids_.erase(rec[1]);
        last_api_ = 0;
        break;
      }
      case internal::kNote:
        d->note.append(bytes, std::min<size_t>(rec[1], room));
        break;
      case internal::kContent:
        d->content.append(bytes, std::min<size_t>(rec[1], room));
        break;
      case internal::kFragment:
        d->fragment.insert(d->fragment.end(), rec + 1, rec + words);
        if (rec[0] & internal::kFlagLast) {
          if (!d->fragment.empty() && internal::HeaderWords(d->fragment[0]) == d->fragment.size()) {
            Process(d, tid, d->fragment.data());
          }
          d->fragment.clear();
        }
        break;
      default:
        break;
    }
  }

  // Shortens the next sleep so that this ring is polled again before it is a quarter full at
  // the rate it filled since its previous poll: a thread making calls back to back fills a
  // 1 MiB ring in about a millisecond, and a ring found full makes its producer wait.
  void NotePollRate(SlotDrain* t, uint64_t head, uint64_t fill_left, int64_t now) {
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
  void Process(SlotDrain* d, uint32_t tid, const uint64_t* rec) {
    const internal::RecordView r = internal::ReadRecord(rec);
    ++calls_;
    if (tid != last_tid_) {
      if (tids_.insert({tid, true}).second) ++tids_seen_;
      last_tid_ = tid;
    }
    if (writer_ == nullptr || write_failed_) {
      d->note.clear();
      d->content.clear();
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
    e.timestamp_ns =
        opts_.timestamps == TimestampMode::kClock ? r.clock_ns - start_mono_ : timebase_.At(e.seq);
    // The batch's events keep their inline (or grown) argument storage from earlier use.
    if (e.args.size() != r.nargs) e.args.resize(r.nargs);
    uint64_t* args = e.args.data();
    for (size_t i = 0; i < r.nargs; ++i) args[i] = r.args[i];
    MapHandles(&e);
    if (__builtin_expect((r.flags & internal::kFlagHasNote) != 0, 0)) {
      e.annotation = AnnotationIdSlow(r.annotation, &d->note);
      d->note.clear();
    } else {
      e.annotation = AnnotationId(r.annotation);
    }
    if (__builtin_expect((r.flags & internal::kFlagHasContent) != 0, 0)) {
      e.content = writer_->InternContent(d->content);
      d->content.clear();
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
    if (opts_.observer != nullptr)
      opts_.observer->OnEvents(absl::MakeConstSpan(batch_.data(), batch_size_));
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
    for (uint64_t raw : new_handles_) {
      const uint64_t id = writer_->InternHandleValue(raw);
      handle_ids_[raw] = id;
      if (opts_.observer != nullptr) opts_.observer->OnHandle(id, raw);
    }
    new_handles_.clear();
    for (const PendingArg& p : pending_args_) {
      uint64_t& v = batch_[p.event].args[p.arg];
      v = handle_ids_.find(v)->second;
    }
    pending_args_.clear();
  }

  // `api`: the producer's address of the annotation string (kDefString), 0 for none.
  CLTRACE_HOT uint64_t AnnotationId(uint64_t api) {
    if (api == 0) return 0;
    if (api == last_api_) return last_api_id_;
    return AnnotationIdSlow(api, nullptr);
  }

  const std::string& AnnotationText(uint64_t api) {
    static const std::string* unknown = new std::string("?");
    auto it = annotation_text_.find(api);
    return it != annotation_text_.end() ? it->second : *unknown;
  }

  uint64_t AnnotationIdSlow(uint64_t api, const std::string* note) {
    if (note == nullptr) {
      auto [it, inserted] = annotation_ids_.try_emplace(api, 0);
      if (inserted) it->second = InternString(AnnotationText(api));
      last_api_ = api;
      last_api_id_ = it->second;
      return it->second;
    }
    if (api == 0 && note->empty()) return 0;
    return InternString(api != 0 ? absl::StrCat(AnnotationText(api), " | ", *note) : *note);
  }

  uint64_t InternString(absl::string_view text) {
    const uint64_t id = writer_->InternString(text);
    if (opts_.observer != nullptr) opts_.observer->OnString(id, text);
    return id;
  }

  Options opts_;
  const bool serve_;
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
  Region* region_ = nullptr;
  std::vector<SlotDrain> slots_;
  std::vector<uint32_t> states_;
  std::vector<uint64_t> heads_;
  absl::flat_hash_map<uint64_t, uint64_t> handle_ids_;
  static constexpr size_t kHandleCacheSize = 1024;
  HandleCacheEntry handle_cache_[kHandleCacheSize];
  const format::CallLayout* layouts_[format::kCallIdCount] = {};
  absl::flat_hash_map<uint64_t, std::string> annotation_text_;  // kDefString
  absl::flat_hash_map<uint64_t, uint64_t> annotation_ids_;
  uint64_t last_api_ = 0;  // the last annotation looked up, and its id
  uint64_t last_api_id_ = 0;
  absl::flat_hash_map<uint32_t, bool> tids_;
  uint32_t last_tid_ = 0;
  uint64_t tids_seen_ = 0;
  uint64_t calls_ = 0;
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

absl::StatusOr<std::string> CreateRecordingRegion(uint32_t max_threads,
                                                  size_t thread_buffer_bytes) {
  const uint64_t ring_words =
      SpscRing::CapacityFor(std::max<size_t>(thread_buffer_bytes / sizeof(uint64_t), 1024));
  const uint32_t slots = std::max<uint32_t>(max_threads, 1);
  platform::Mapping m;
  std::string error;
  if (!platform::CreateRegion(Region::BytesFor(slots, ring_words), /*inheritable=*/true, &m,
                              &error)) {
    return absl::ResourceExhaustedError(error);
  }
  Region::Init(m.base, slots, ring_words, platform::ProcessId());
  return m.handle;
}

absl::StatusOr<std::unique_ptr<Recorder>> Recorder::Start(Options options) {
  if (!options.region.empty()) {
    auto impl = std::make_unique<Impl>(std::move(options));
    absl::Status st = impl->Open();
    if (!st.ok()) return st;
    impl->Begin();
    return std::unique_ptr<Recorder>(new Recorder(std::move(impl)));
  }
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
  internal::g_crash_flush = &internal::CrashFlush;
  internal::g_defer_signal = &internal::DeferSignalToBackgroundThread;
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
