// Per-thread state, the slow paths of the hot path and annotations.
#include "recorder/internal/core.h"

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "recorder/internal/drain.h"
#include "recorder/internal/platform.h"
#include "recorder/internal/ring_wait.h"
#include "recorder/recorder.h"

namespace cltrace::recorder {
namespace internal {

Globals g_globals;
constinit thread_local ThreadState* t_state __attribute__((tls_model("initial-exec"))) = nullptr;
std::atomic<bool> g_drain_alive{false};

namespace {

// Thread states of threads that ended, reused by new threads (never freed: a thunk may still
// run during thread exit).
struct ThreadRegistry {
  std::mutex mu;
  std::vector<ThreadState*> spare;
};

ThreadRegistry& Threads() {
  static ThreadRegistry* r = new ThreadRegistry;  // outlives every thread (never destroyed)
  return *r;
}

// Marks the thread's slot exited when the thread ends, so the drainer can drain and free it.
struct ThreadExit {
  ThreadState* state = nullptr;
  ~ThreadExit() {
    if (state != nullptr) {
      t_state = nullptr;
      if (state->slot >= 0 && state->epoch == G().epoch) {
        state->ring.control()->state.store(kExited, std::memory_order_release);
      }
      state->Orphan();
      ThreadRegistry& r = Threads();
      std::lock_guard<std::mutex> l(r.mu);
      r.spare.push_back(state);
      state = nullptr;
    }
  }
};

// Whether the drainer of the current region can still free room.
bool DrainerAlive() {
  if (!g_drain_alive.load(std::memory_order_acquire)) return false;
  Region* region = G().region;
  if (region == nullptr) return false;
  RegionHeader* h = region->header();
  if (h->drainer_alive.load(std::memory_order_acquire) == 0) return false;
  if (!G().remote_drainer) return true;
  return platform::ProcessAlive(h->drainer_pid);
}

void SleepUs(int64_t us) {
  timespec ts{0, static_cast<long>(us * 1000)};
  nanosleep(&ts, nullptr);
}

}  // namespace

Frame* ThreadState::DeepFrame(size_t i) {
  while (deep_.size() <= i - kInlineFrames) deep_.push_back(std::make_unique<Frame>());
  return deep_[i - kInlineFrames].get();
}

void ThreadState::Orphan() {
  slot = -1;
  orphan.published.store(0, std::memory_order_relaxed);
  orphan.tail.store(0, std::memory_order_relaxed);
  ring.Attach(&orphan, nullptr, 0);
}

ThreadState* NewThreadState() {
  ThreadRegistry& r = Threads();
  ThreadState* t = nullptr;
  {
    std::lock_guard<std::mutex> l(r.mu);
    if (!r.spare.empty()) {
      t = r.spare.back();
      r.spare.pop_back();
    }
  }
  if (t == nullptr) {
    t = new ThreadState;
    t->Orphan();
  }
  t->tid = platform::ThreadId();
  t->annotation = nullptr;
  t->annotation_depth = 0;
  std::free(t->pending_marker);
  t->pending_marker = nullptr;
  t->depth = 0;
  t->epoch = G().epoch - 1;  // not attached yet
  static thread_local ThreadExit exit_guard;
  exit_guard.state = t;
  t_state = t;
  return t;
}

ThreadState* AttachThread(ThreadState* t) {
  Region* region = G().region;
  const uint32_t epoch = G().epoch;
  t->epoch = epoch;
  if (region == nullptr) {
    t->Orphan();
    return t;
  }
  int slot = region->Claim(t->tid);
  if (slot < 0) {
    // Every slot is owned: wait (counted on the first slot) until the drainer frees one.
    SlotControl* first = region->slot(0);
    const int64_t start = MonotonicNs();
    first->waits.fetch_add(1, std::memory_order_relaxed);
    while ((slot = region->Claim(t->tid)) < 0 && DrainerAlive()) {
      WakeDrain();
      SleepUs(200);
    }
    first->wait_ns.fetch_add(static_cast<uint64_t>(MonotonicNs() - start),
                             std::memory_order_relaxed);
  }
  if (slot < 0) {
    t->Orphan();
    return t;
  }
  t->slot = slot;
  t->ring.Attach(region->slot(static_cast<uint32_t>(slot)),
                 region->ring(static_cast<uint32_t>(slot)), region->header()->ring_words);
  for (const char*& d : t->defined) d = nullptr;
  t->ring.PublishDepth(t->depth);
  return t;
}

void WakeDrain() { WakeRegionDrainer(G().region); }

void WaitForWake(Region* region, uint32_t seen, int64_t timeout_us) {
  platform::FutexWait(&region->header()->wake, seen, timeout_us);
}

namespace {

// Room for `words` in the ring, waiting (counted) while the drainer frees it; null when no
// drainer will (recording is over) or the thread has no slot.
uint64_t* ReserveWaiting(ThreadState* t, size_t words, int64_t* wait_start) {
  if (t->slot < 0) return nullptr;
  return RingReserveWaiting(&t->ring, words, G().region, &DrainerAlive, wait_start);
}

// Writes a control record: header, `prefix` words, then `bytes` (padded to whole words).
bool WriteControl(ThreadState* t, uint32_t call, uint64_t flags, const uint64_t* prefix,
                  size_t nprefix, const void* bytes, size_t nbytes, uint64_t depth,
                  int64_t* wait_start) {
  const size_t words = 1 + nprefix + (nbytes + 7) / 8;
  uint64_t* w = ReserveWaiting(t, words, wait_start);
  if (w == nullptr) return false;
  w[0] = MakeHeader(call, words, flags);
  std::memcpy(w + 1, prefix, nprefix * sizeof(uint64_t));
  if (nbytes != 0) {
    w[words - 1] = 0;  // the padding of the last word
    std::memcpy(w + 1 + nprefix, bytes, nbytes);
  }
  t->ring.Commit(words, depth);
  return true;
}

// Splits a byte string into kContent (or kNote) records small enough for the ring.
bool WriteBytes(ThreadState* t, uint32_t call, const char* data, size_t n, uint64_t depth,
                int64_t* wait_start) {
  const size_t piece = (t->ring.max_record() - 2) * sizeof(uint64_t) / 2;
  size_t off = 0;
  do {
    const size_t len = std::min(piece, n - off);
    const uint64_t count = len;
    if (!WriteControl(t, call, 0, &count, 1, data + off, len, depth, wait_start)) return false;
    off += len;
  } while (off < n);
  return true;
}

}  // namespace

void EmitSlow(ThreadState* t, const Frame* f, uint64_t end, int64_t ret, RecordShape shape,
              uint64_t depth) {
  int64_t wait_start = 0;
  char* note = f->note;
  std::string* content = (shape.flags & kFlagHasContent) ? f->content : nullptr;
  bool ok = t->slot >= 0;
  // The annotation's text, once per ring (the drainer may be another process).
  if (ok && f->annotation != nullptr && f->annotation != t->defined[0]) {
    size_t i = 1;
    while (i < ThreadState::kDefinedCache && t->defined[i] != f->annotation) ++i;
    if (i == ThreadState::kDefinedCache) {
      const uint64_t prefix[2] = {reinterpret_cast<uintptr_t>(f->annotation),
                                  std::strlen(f->annotation)};
      ok = WriteControl(t, kDefString, 0, prefix, 2, f->annotation, prefix[1], depth + 1,
                        &wait_start);
      i = ThreadState::kDefinedCache - 1;
    }
    for (; i > 0; --i) t->defined[i] = t->defined[i - 1];
    t->defined[0] = f->annotation;
  }
  if (ok && note != nullptr) {
    ok = WriteBytes(t, kNote, note, std::strlen(note), depth + 1, &wait_start);
  }
  if (ok && content != nullptr) {
    ok = WriteBytes(t, kContent, content->data(), content->size(), depth + 1, &wait_start);
  }
  std::free(note);
  delete content;
  if (ok) {
    if (shape.words <= t->ring.max_record()) {
      uint64_t* w = ReserveWaiting(t, shape.words, &wait_start);
      if (w != nullptr) {
        WriteRecord(w, f, shape, end, ret);
        t->ring.Commit(shape.words, depth);
      }
    } else {
      // Larger than half the ring: the record's words in pieces (kFragment).
      t->scratch.resize(shape.words);
      WriteRecord(t->scratch.data(), f, shape, end, ret);
      const size_t piece = t->ring.max_record() / 2;
      for (size_t off = 0; off < shape.words;) {
        const size_t len = std::min(piece, shape.words - off);
        const bool last = off + len == shape.words;
        if (!WriteControl(t, kFragment, last ? kFlagLast : 0, t->scratch.data() + off, len, nullptr,
                          0, last ? depth : depth + 1, &wait_start)) {
          break;
        }
        off += len;
      }
    }
  }
  if (wait_start != 0) {
    t->ring.control()->wait_ns.fetch_add(static_cast<uint64_t>(MonotonicNs() - wait_start),
                                         std::memory_order_relaxed);
  }
}

void ReleaseRing(SpscRing* ring, uint64_t pos) { RingRelease(ring, pos); }

void EmitOpenFramesIncomplete(ThreadState* t) {
  if (t->epoch != G().epoch || t->slot < 0) return;
  for (size_t d = t->depth; d > 0; --d) {
    Frame* f = t->FrameAt(d - 1);
    Emit(t, f, 0, 0, kFlagIncomplete, d - 1);
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

void AnnotateMarker(const char* marker) {
  if (marker == nullptr || !internal::Recording()) return;
  internal::ThreadState* t = internal::Self();
  t->pending_marker = internal::JoinNotes(t->pending_marker, internal::MakeNote(marker));
}

uint64_t CurrentTraceSeq() {
  internal::ThreadState* t = internal::t_state;  // no state: this thread never made a call
  if (t == nullptr) return 0;
  // With no call open, frame 0 still holds the entry position of the thread's last outermost
  // call (frames are reused, never cleared): nothing on the per-call path keeps it.
  return t->FrameAt(t->depth > 0 ? t->depth - 1 : 0)->seq;
}

}  // namespace cltrace::recorder
