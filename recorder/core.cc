// Per-thread state, the slow paths of the hot path and annotations.
#include "recorder/internal/core.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "recorder/internal/drain.h"
#include "recorder/recorder.h"

namespace cltrace::recorder {
namespace internal {

Globals g_globals;
constinit thread_local ThreadState* t_state __attribute__((tls_model("initial-exec"))) = nullptr;
std::atomic<bool> g_drain_alive{false};

namespace {

struct ThreadRegistry {
  std::mutex mu;
  std::vector<ThreadState*> all;    // never shrinks; states are reused, not freed
  std::vector<ThreadState*> spare;  // exited and drained
  std::vector<OverflowRecord> overflow;
};

ThreadRegistry& Threads() {
  static ThreadRegistry* r = new ThreadRegistry;  // outlives every thread (never destroyed)
  return *r;
}

std::atomic<uint32_t> g_wake{0};

// How long a producer spins on a full ring before it sleeps.
constexpr int64_t kWaitSpinNs = 10'000;

// Marks the thread's state exited when the thread ends, so the drain thread can reuse it.
struct ThreadExit {
  ThreadState* state = nullptr;
  ~ThreadExit() {
    if (state != nullptr) {
      t_state = nullptr;
      state->exited.store(true, std::memory_order_release);
    }
  }
};

}  // namespace

Frame* ThreadState::DeepFrame(size_t i) {
  while (deep_.size() <= i - kInlineFrames) deep_.push_back(std::make_unique<Frame>());
  return deep_[i - kInlineFrames].get();
}

ThreadState* NewThreadState() {
  ThreadRegistry& r = Threads();
  ThreadState* t = nullptr;
  {
    std::lock_guard<std::mutex> l(r.mu);
    // A spare state of a thread that ended, if its ring has the current size.
    const size_t words = SpscRing::CapacityFor(G().ring_words);
    for (size_t i = r.spare.size(); i-- > 0;) {
      if (r.spare[i]->ring.capacity() == words) {
        t = r.spare[i];
        r.spare.erase(r.spare.begin() + static_cast<ptrdiff_t>(i));
        break;
      }
    }
    if (t == nullptr) {
      t = new ThreadState(G().ring_words);
      r.all.push_back(t);
    }
  }
  t->tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  t->annotation = nullptr;
  t->annotation_depth = 0;
  t->depth = 0;
  t->exited.store(false, std::memory_order_release);
  static thread_local ThreadExit exit_guard;
  exit_guard.state = t;
  t_state = t;
  return t;
}

void SnapshotThreads(std::vector<ThreadState*>* out) {
  ThreadRegistry& r = Threads();
  std::lock_guard<std::mutex> l(r.mu);
  out->assign(r.all.begin(), r.all.end());
}

void RetireThread(ThreadState* t) {
  ThreadRegistry& r = Threads();
  std::lock_guard<std::mutex> l(r.mu);
  for (ThreadState* s : r.spare) {
    if (s == t) return;
  }
  r.spare.push_back(t);
}

// Oversized records waiting for the drain thread, in words; bounded like the rings.
std::atomic<uint64_t> g_overflow_words{0};
constexpr uint64_t kMaxOverflowWords = uint64_t{8} << 20;  // 64 MiB

void TakeOverflow(std::vector<OverflowRecord>* out) {
  ThreadRegistry& r = Threads();
  std::lock_guard<std::mutex> l(r.mu);
  out->swap(r.overflow);
  r.overflow.clear();
}

void ReleaseOverflow(uint64_t words) { g_overflow_words.fetch_sub(words); }

void PushOverflow(OverflowRecord rec) {
  ThreadRegistry& r = Threads();
  std::lock_guard<std::mutex> l(r.mu);
  r.overflow.push_back(std::move(rec));
}

void WakeDrain() {
  g_wake.fetch_add(1, std::memory_order_release);
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g_wake), FUTEX_WAKE_PRIVATE, 1, nullptr,
            nullptr, 0);
}

uint32_t WakeCount() { return g_wake.load(std::memory_order_acquire); }

void WaitForWake(uint32_t seen, int64_t timeout_us) {
  timespec ts{static_cast<time_t>(timeout_us / 1000000),
              static_cast<long>((timeout_us % 1000000) * 1000)};
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g_wake), FUTEX_WAIT_PRIVATE, seen, &ts, nullptr,
            0);
}

void EmitSlow(ThreadState* t, const Frame* f, uint64_t end, int64_t ret, RecordShape shape) {
  const uint64_t words = shape.words;
  if (words > t->ring.max_record()) {
    // Bounded memory here too: wait (counted) while too much is queued.
    if (g_overflow_words.load() + words > kMaxOverflowWords && g_drain_alive.load()) {
      const int64_t start = MonotonicNs();
      t->waits.fetch_add(1, std::memory_order_relaxed);
      while (g_overflow_words.load() != 0 && g_overflow_words.load() + words > kMaxOverflowWords &&
             g_drain_alive.load()) {
        WakeDrain();
        timespec ts{0, 200 * 1000};
        nanosleep(&ts, nullptr);
      }
      t->wait_ns.fetch_add(static_cast<uint64_t>(MonotonicNs() - start), std::memory_order_relaxed);
    }
    g_overflow_words.fetch_add(words);
    OverflowRecord rec;
    rec.tid = t->tid;
    rec.words.reset(new uint64_t[words]);
    WriteRecord(rec.words.get(), f, shape, end, ret);
    PushOverflow(std::move(rec));
    return;
  }
  // The ring is full: the drain thread is behind. Wait (never drop a call) and count it: spin
  // a little (the drain thread hands space back every 4096 words), then sleep until it does
  // (ReleaseRing wakes us). Never sched_yield: on a busy machine that hands the core to
  // another process for a whole time slice.
  const int64_t start = MonotonicNs();
  t->waits.fetch_add(1, std::memory_order_relaxed);
  WakeDrain();
  uint64_t* w = nullptr;
  for (int spin = 0; (w = t->ring.Reserve(words)) == nullptr; ++spin) {
    if (!g_drain_alive.load(std::memory_order_acquire)) {
      // Nobody consumes this ring any more (the recorder stopped): drop instead of hanging
      // the application; recording is over anyway.
      t->wait_ns.fetch_add(static_cast<uint64_t>(MonotonicNs() - start), std::memory_order_relaxed);
      std::free(f->note);
      if (shape.flags & kFlagHasContent) delete f->content;
      return;
    }
    if (spin % 16 != 15 || MonotonicNs() - start < kWaitSpinNs) {
      __builtin_ia32_pause();
      continue;
    }
    const uint32_t seen = t->space_seq.load(std::memory_order_acquire);
    t->space_waiter.store(1, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if ((w = t->ring.Reserve(words)) != nullptr) {
      t->space_waiter.store(0, std::memory_order_relaxed);
      break;
    }
    WakeDrain();
    // Bounded: the drain thread may stop (g_drain_alive) without a release.
    timespec ts{0, 1000 * 1000};
    ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&t->space_seq), FUTEX_WAIT_PRIVATE, seen, &ts,
              nullptr, 0);
    t->space_waiter.store(0, std::memory_order_relaxed);
  }
  WriteRecord(w, f, shape, end, ret);
  t->ring.Commit(words);
  t->wait_ns.fetch_add(static_cast<uint64_t>(MonotonicNs() - start), std::memory_order_relaxed);
}

void ReleaseRing(ThreadState* t, uint64_t pos) {
  t->ring.Release(pos);
  // Pairs with the producer's fence between setting space_waiter and re-reading the tail:
  // either it sees this release or this load sees its flag.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (t->space_waiter.load(std::memory_order_relaxed) != 0 &&
      t->space_waiter.exchange(0, std::memory_order_acq_rel) != 0) {
    t->space_seq.fetch_add(1, std::memory_order_release);
    ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&t->space_seq), FUTEX_WAKE_PRIVATE, 1, nullptr,
              nullptr, 0);
  }
}

void EmitOpenFramesIncomplete(ThreadState* t) {
  for (size_t d = t->depth; d > 0; --d) {
    Frame* f = t->FrameAt(d - 1);
    Emit(t, f, 0, 0, kFlagIncomplete);
  }
  t->depth = 0;
}

char* MakeNote(const char* text) { return strdup(text); }

char* JoinNotes(char* a, char* b) {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  const size_t la = std::strlen(a), lb = std::strlen(b);
  char* out = static_cast<char*>(std::malloc(la + 3 + lb + 1));
  std::memcpy(out, a, la);
  std::memcpy(out + la, " | ", 3);
  std::memcpy(out + la + 3, b, lb + 1);
  std::free(a);
  std::free(b);
  return out;
}

}  // namespace internal

void AnnotateBegin(const char* api_call) {
  internal::ThreadState* t = internal::Self();
  if (t->annotation_depth++ == 0) t->annotation = api_call;
}

void AnnotateEnd() {
  internal::ThreadState* t = internal::Self();
  if (t->annotation_depth > 0 && --t->annotation_depth == 0) t->annotation = nullptr;
}

uint64_t CurrentTraceSeq() {
  internal::ThreadState* t = internal::t_state;  // no state: this thread never made a call
  if (t == nullptr) return 0;
  // With no call open, frame 0 still holds the entry position of the thread's last outermost
  // call (frames are reused, never cleared): nothing on the per-call path keeps it.
  return t->FrameAt(t->depth > 0 ? t->depth - 1 : 0)->seq;
}

}  // namespace cltrace::recorder
