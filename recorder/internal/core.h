// The recorder's hot path: the process-wide position counter, per-thread state and the
// open-call stack every thunk pushes and pops.
//
// Cost model (see recorder/README.md for measurements): per recorded call the application's
// thread does two relaxed fetch_adds on one counter that lives alone on its cache line (entry
// and exit positions must come from one counter to keep cross-thread interleavings exact), the
// typed capture of the arguments into the frame's argument vector, and one copy of the record
// into its own ring. Timestamps are not read per call: the background thread samples
// (counter, clock) pairs and derives each call's entry time from its position
// (Timebase; CLTRACE_TIMESTAMPS=clock reads the clock per call instead). Handle values are
// written raw; the background thread interns them.
//
// Thread-safety: ThreadState is owned by its thread except for the ring's consumer side (the
// background thread) and the fields marked otherwise.
#ifndef CLTRACE_RECORDER_INTERNAL_CORE_H_
#define CLTRACE_RECORDER_INTERNAL_CORE_H_

#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ddi/call_ids.h"
#include "format/call_codec.h"
#include "recorder/internal/region.h"
#include "recorder/internal/ring.h"

namespace cltrace::recorder::internal {

using format::ArgVec;
using format::CallId;

// Process-wide state read on every call. The counter is alone on its cache line so that
// nothing else written by any thread invalidates it.
// The position counter lives in the recording region (recorder/internal/region.h), so the
// drainer (possibly in another process) reads it too.
struct Globals {
  alignas(64) std::atomic<bool> recording{false};
  bool clock_timestamps = false;  // read the clock per call (CLTRACE_TIMESTAMPS=clock)
  // Bumped whenever `region` changes: a thread attached to an older one re-attaches.
  uint32_t epoch = 0;
  std::atomic<uint64_t>* seq = &unattached_seq;
  Region* region = nullptr;
  // Producers here write into a region another process drains (the shim under `cltrace
  // record`): nothing to wait for on a fatal signal, the records are already out.
  bool remote_drainer = false;
  alignas(64) std::atomic<uint64_t> unattached_seq{0};
};
extern Globals g_globals;
inline Globals& G() { return g_globals; }

// Monotonic nanoseconds (CLOCK_MONOTONIC through the vDSO).
inline int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// One open call on a thread's stack.
struct Frame {
  uint64_t seq = 0;
  uint64_t parent = 0;
  CallId call = CallId::kInvalid;
  const char* annotation = nullptr;  // the thread's API annotation at entry
  char* note = nullptr;              // table-mutation note (heap, owned by the record)
  // Captured content (recorder/internal/content.h), heap, owned by the record. Only read when
  // the call ends through EndCallWithContent; other calls never look at it.
  std::string* content = nullptr;
  int64_t clock_ns = 0;  // clock mode only
  // The args: flat calls (format::CallTraits::kFlat) write `flat` directly, the rest go
  // through the typed codec into `args` (which keeps its heap capacity between calls).
  bool is_flat = false;
  uint32_t flat_count = 0;
  static constexpr size_t kMaxFlat = 16;
  uint64_t flat[kMaxFlat];
  ArgVec args;

  const uint64_t* ArgData() const { return is_flat ? flat : args.data(); }
  size_t ArgCount() const { return is_flat ? flat_count : args.size(); }
};

// Laid out by who writes what: the producer's per-call fields, the consumer's field and the
// rarely written shared ones live on separate cache lines, so the background thread reading
// this state never pulls a line the application thread writes on every call.
struct ThreadState {
  SpscRing ring;       // attached to the thread's slot of the current region
  uint32_t epoch = 0;  // the Globals::epoch of that region
  int slot = -1;
  uint32_t tid = 0;
  // Annotation strings already defined in this slot's ring (kDefString), most recent first.
  static constexpr size_t kDefinedCache = 8;
  const char* defined[kDefinedCache] = {};
  std::vector<uint64_t> scratch;  // a record larger than half the ring, before fragmenting
  // The control block the ring points at while the thread has no slot (max_record() is 0
  // then, so every record takes EmitSlow, which drops it: recording is over).
  SlotControl orphan{};
  void Orphan();
  // Producer (the application thread), every call.
  alignas(64) size_t depth = 0;  // open calls: frames_[0..depth), then deep_
  // API annotation (CltraceAnnotateBegin/End); only the outermost API call is kept.
  const char* annotation = nullptr;
  int annotation_depth = 0;
  // Application markers (AnnotateMarker) for the thread's next recorded call (heap, or null).
  char* pending_marker = nullptr;
  static constexpr size_t kInlineFrames = 8;
  Frame frames_[kInlineFrames];
  std::vector<std::unique_ptr<Frame>> deep_;

  Frame* FrameAt(size_t i) { return i < kInlineFrames ? &frames_[i] : DeepFrame(i); }
  Frame* DeepFrame(size_t i);
};

// The calling thread's state (created on first use: warm-up allocation), attached to a slot of
// the current region (waiting, counted, while every slot is owned).
ThreadState* NewThreadState();
ThreadState* AttachThread(ThreadState* t);
extern constinit thread_local ThreadState* t_state __attribute__((tls_model("initial-exec")));
#define CLTRACE_HOT inline __attribute__((always_inline))

CLTRACE_HOT ThreadState* Self() {
  ThreadState* t = t_state;
  if (__builtin_expect(t == nullptr, 0)) t = NewThreadState();
  if (__builtin_expect(t->epoch != G().epoch, 0)) t = AttachThread(t);
  return t;
}

inline bool Recording() { return G().recording.load(std::memory_order_relaxed); }

CLTRACE_HOT uint64_t NextPosition() { return G().seq->fetch_add(1, std::memory_order_relaxed) + 1; }

// Handle values are recorded raw; the background thread maps them to trace ids.
inline uint64_t RawHandle(uint64_t raw) { return raw; }

// The 64-bit argument encoding of one by-value parameter of a flat call, as the typed codec
// writes it (format/call_codec.h): handles as their raw member, pointers as addresses, floats
// as bit patterns, signed integers sign-extended, unsigned zero-extended.
template <typename T>
inline uint64_t FlatArg(T v) {
  if constexpr (std::is_class_v<T>) {
    static_assert(sizeof(T) == sizeof(void*) || sizeof(T) == sizeof(uint32_t));
    if constexpr (sizeof(T) == sizeof(void*)) {
      uintptr_t raw;
      std::memcpy(&raw, &v, sizeof(raw));
      return raw;
    } else {
      uint32_t raw;
      std::memcpy(&raw, &v, sizeof(raw));
      return raw;
    }
  } else if constexpr (std::is_pointer_v<T>) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(v));
  } else if constexpr (std::is_same_v<T, float>) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    return bits;
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  } else {
    return static_cast<uint64_t>(v);
  }
}

char* JoinNotes(char* a, char* b);

// Pushes a frame and takes the entry position.
CLTRACE_HOT Frame* BeginCall(ThreadState* t, CallId id, char* note) {
  const size_t d = t->depth;
  Frame* f = t->FrameAt(d);
  f->parent = d == 0 ? 0 : t->FrameAt(d - 1)->seq;
  f->call = id;
  f->annotation = t->annotation;
  if (__builtin_expect(t->pending_marker != nullptr, 0)) {
    note = JoinNotes(note, t->pending_marker);
    t->pending_marker = nullptr;
  }
  f->note = note;
  t->depth = d + 1;
  if (G().clock_timestamps) f->clock_ns = MonotonicNs();
  // In flight from here: counted if the process dies before the commit. Published before the
  // position is taken, so no position is ever taken by a call nobody counts.
  t->ring.PublishDepth(d + 1);
  f->seq = NextPosition();
  return f;
}

// Ring record layout (words):
//   header   call id | length | flags (ring.h)
//   seq      entry position
//   deltas   (end - seq) in bits 0-31, (seq - parent) in bits 32-63 (0: no parent);
//            with kFlagWide: end, then parent, in two words
//   [ret]    kFlagHasRet (the return value is not 0)
//   [annot]  kFlagHasAnnotation (the thread's API annotation, a static string)
//   args     the call's argument words
//   [clock]  kFlagHasClock
// kFlagHasNote / kFlagHasContent: the kNote / kContent records just before this one in the
// ring hold the note's text / the captured bytes (recorder/internal/region.h). The annotation
// word is the string's address in the producer, defined by a kDefString record earlier in
// the same ring.
// The common record (a void call with its handles and scalars, no annotation) is three words
// plus its args: the ring traffic between the two cores is what bounds the background thread.
struct RecordShape {
  uint64_t flags;
  uint64_t words;
};

CLTRACE_HOT RecordShape ShapeOf(const Frame* f, uint64_t end, int64_t ret, uint64_t extra_flags) {
  uint64_t flags = extra_flags;
  if (f->note != nullptr) flags |= kFlagHasNote;
  if (G().clock_timestamps) flags |= kFlagHasClock;
  if (ret != 0) flags |= kFlagHasRet;
  if (f->annotation != nullptr) flags |= kFlagHasAnnotation;
  if ((end != 0 && end - f->seq > 0xffffffffull) ||
      (f->parent != 0 && f->seq - f->parent > 0xffffffffull)) {
    flags |= kFlagWide;
  }
  const uint64_t words = 3 + ((flags & kFlagWide) ? 1 : 0) + ((flags & kFlagHasRet) ? 1 : 0) +
                         ((flags & kFlagHasAnnotation) ? 1 : 0) + f->ArgCount() +
                         ((flags & kFlagHasClock) ? 1 : 0);
  return {flags, words};
}

CLTRACE_HOT void WriteRecord(uint64_t* w, const Frame* f, RecordShape shape, uint64_t end,
                             int64_t ret) {
  const uint64_t flags = shape.flags;
  *w++ = MakeHeader(static_cast<uint32_t>(f->call), shape.words, flags);
  *w++ = f->seq;
  if (flags & kFlagWide) {
    *w++ = end;
    *w++ = f->parent;
  } else {
    *w++ = (end != 0 ? end - f->seq : 0) | ((f->parent != 0 ? f->seq - f->parent : 0) << 32);
  }
  if (flags & kFlagHasRet) *w++ = static_cast<uint64_t>(ret);
  if (flags & kFlagHasAnnotation) *w++ = reinterpret_cast<uintptr_t>(f->annotation);
  const size_t n = f->ArgCount();
  std::memcpy(w, f->ArgData(), n * sizeof(uint64_t));
  w += n;
  if (flags & kFlagHasClock) *w++ = static_cast<uint64_t>(f->clock_ns);
}

// The consumer's view of one record.
struct RecordView {
  uint32_t call = 0;
  uint64_t flags = 0;
  uint64_t seq = 0, end = 0, parent = 0;
  int64_t ret = 0;
  uint64_t annotation = 0;  // the producer's address of the string (kDefString)
  const uint64_t* args = nullptr;
  size_t nargs = 0;
  int64_t clock_ns = 0;
};

// Every member is computed before the aggregate is built: a default-initialised RecordView
// that is then overwritten costs a `rep stos` per record on the background thread.
inline RecordView ReadRecord(const uint64_t* w) {
  const uint64_t header = w[0];
  const uint64_t words = HeaderWords(header);
  const uint64_t flags = header & kFlagMask;
  const uint64_t* p = w + 1;
  const uint64_t seq = *p++;
  uint64_t end, parent;
  if (flags & kFlagWide) {
    end = p[0];
    parent = p[1];
    p += 2;
  } else {
    const uint64_t d = *p++;
    end = seq + (d & 0xffffffffull);
    parent = (d >> 32) != 0 ? seq - (d >> 32) : 0;
  }
  if (flags & kFlagIncomplete) end = 0;
  const int64_t ret = (flags & kFlagHasRet) ? static_cast<int64_t>(*p++) : 0;
  const uint64_t annotation = (flags & kFlagHasAnnotation) ? *p++ : 0;
  const size_t tail = (flags & kFlagHasClock) ? 1 : 0;
  const uint64_t* args = p;
  const size_t nargs = static_cast<size_t>(words - static_cast<uint64_t>(p - w) - tail);
  p += nargs;
  const int64_t clock_ns = (flags & kFlagHasClock) ? static_cast<int64_t>(*p) : 0;
  return RecordView{HeaderCall(header), flags, seq,   end,     parent, ret,
                    annotation,         args,  nargs, clock_ns};
}

// Writes the record of a finished (end != 0) or interrupted (end == 0) call, committing it with
// `depth` calls still open on the thread. Slow paths: the annotation is not yet defined in
// this ring, a note or content goes first, the ring is full (wait, counted) or the record is
// larger than half the ring (fragments).
void EmitSlow(ThreadState* t, const Frame* f, uint64_t end, int64_t ret, RecordShape shape,
              uint64_t depth);

CLTRACE_HOT void Emit(ThreadState* t, const Frame* f, uint64_t end, int64_t ret,
                      uint64_t extra_flags, uint64_t depth) {
  const RecordShape shape = ShapeOf(f, end, ret, extra_flags);
  uint64_t* w = nullptr;
  if (__builtin_expect((shape.flags & (kFlagHasNote | kFlagHasContent)) == 0 &&
                           (f->annotation == nullptr || f->annotation == t->defined[0]) &&
                           shape.words <= t->ring.max_record(),
                       1)) {
    w = t->ring.Reserve(shape.words);
  }
  if (__builtin_expect(w == nullptr, 0)) {
    EmitSlow(t, f, end, ret, shape, depth);
    return;
  }
  WriteRecord(w, f, shape, end, ret);
  t->ring.Commit(shape.words, depth);
}

// Pops the frame `f` (the top one) and emits its record.
CLTRACE_HOT void EndCall(ThreadState* t, Frame* f, uint64_t end, int64_t ret) {
  Emit(t, f, end, ret, 0, t->depth - 1);
  t->depth -= 1;
}

// EndCall for a call that captured content (`content` may be null: nothing captured); the
// record owns the string from here (its bytes go into the ring, then it is freed).
inline void EndCallWithContent(ThreadState* t, Frame* f, uint64_t end, int64_t ret,
                               std::string* content) {
  f->content = content;
  Emit(t, f, end, ret, content != nullptr ? kFlagHasContent : 0, t->depth - 1);
  t->depth -= 1;
}

// Consumer: hands the ring's words before `pos` back to its producer and wakes the producer
// if it is blocked on a full ring.
void ReleaseRing(SpscRing* ring, uint64_t pos);
// Wakes the drainer (futex in the region; async-signal-safe).
void WakeDrain();

// Crash path: emits every open frame of the calling thread as an incomplete record (end 0),
// innermost first. Async-signal-safe as long as no ring is full.
void EmitOpenFramesIncomplete(ThreadState* t);

// Table-mutation notes ("R5 ..."/"R6 ..." text attached to the event that observed the
// mutation; recorder/README.md). Allocated on the rare detection path, freed by the
// background thread after interning.
char* MakeNote(const char* text);
// Joins two notes (either may be null) into one; consumes both.
char* JoinNotes(char* a, char* b);

}  // namespace cltrace::recorder::internal

#endif  // CLTRACE_RECORDER_INTERNAL_CORE_H_
