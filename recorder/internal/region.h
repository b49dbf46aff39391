// The recording region: the memory the application's threads (producers: the shim or the
// in-process recorder's thunks) write their call records into, and that one drainer (the
// `cltrace record` service in another process, or the in-process recorder's background
// thread) reads, encodes, compresses and writes. recorder/README.md draws it.
//
//   offset 0            RegionHeader (4 KiB): magic, geometry, the position counter, the
//                       drainer's wake-up word, what the producer process reports (driver
//                       loaded or not, adapters, content statistics)
//   4096 + i*slot_bytes slot i: SlotControl (256 bytes), then the slot's ring of ring_words
//                       64-bit words (records, recorder/internal/core.h)
//
// A thread claims a free slot (state kFree -> kOwned, CAS) on its first call and keeps it until
// it ends (kExited); the drainer frees an exited slot once it drained it. A record becomes
// visible (is *committed*) with one release store of the slot's `published` word: the ring
// position after the record (bits 0-47) and the number of calls the thread has open (bits
// 48-63), so a drainer that finds the producer dead knows exactly how many calls were in
// flight on each thread: a call's entry publishes depth + 1, its record's commit depth - 1.
// Nothing in a ring points into the producer's memory: strings (API annotations, table-
// mutation notes) and captured content travel as records of their own just before the call
// record that uses them (kDefString, kNote, kContent), and a record larger than half a ring
// travels in pieces (kFragment).
//
// Thread-safety: a slot's ring has one producer (its owner) and one consumer (the drainer).
#ifndef CLTRACE_RECORDER_INTERNAL_REGION_H_
#define CLTRACE_RECORDER_INTERNAL_REGION_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cltrace::recorder::internal {

inline constexpr uint64_t kRegionMagic = 0x3147455252544c43ull;  // "CLTRREG1"
inline constexpr uint32_t kRegionVersion = 1;
inline constexpr size_t kRegionHeaderBytes = 4096;
inline constexpr size_t kSlotControlBytes = 256;

// Bits of SlotControl::published.
inline constexpr uint64_t kHeadMask = (uint64_t{1} << 48) - 1;
inline constexpr uint64_t PackPublished(uint64_t head, uint64_t depth) {
  return (head & kHeadMask) | (depth << 48);
}

struct RegionHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t slot_count;
  uint64_t slot_bytes;  // SlotControl + ring
  uint64_t ring_words;  // a power of two
  uint64_t total_bytes;
  uint32_t drainer_pid;       // producers waiting for room give up if it is gone
  uint32_t clock_timestamps;  // producers read the clock per call
  // The process-wide position counter (entry and exit positions of every call).
  alignas(64) std::atomic<uint64_t> seq;
  // Bumped (and futex-woken) by producers that need the drainer now.
  alignas(64) std::atomic<uint32_t> wake;
  // Written rarely, by the producer process.
  alignas(64) std::atomic<uint32_t> slots_used;  // high-water mark of claimed slots
  std::atomic<uint32_t> producer_pid;            // set when a driver is first opened
  std::atomic<uint32_t> driver_loaded;           // 1: recording, 2: the driver failed to load
  std::atomic<uint32_t> drainer_alive;           // cleared by the drainer when it stops
  std::atomic<uint64_t> adapters_opened;
  std::atomic<uint64_t> contents;
  std::atomic<uint64_t> content_bytes;
  std::atomic<uint64_t> contents_skipped;
  std::atomic<uint32_t> text_lock;  // guards the two texts below (producer side, spin)
  char driver_error[1024];
  char first_content_skip[512];
};
static_assert(sizeof(RegionHeader) <= kRegionHeaderBytes);

enum SlotState : uint32_t { kFree = 0, kOwned = 1, kExited = 2 };

struct SlotControl {
  alignas(64) std::atomic<uint32_t> state;
  uint32_t tid;
  // The commit marker (PackPublished): producer only.
  alignas(64) std::atomic<uint64_t> published;
  // Consumer only: the ring position up to which the producer may reuse the ring.
  alignas(64) std::atomic<uint64_t> tail;
  // Shared, written rarely: back-pressure waits of the owner.
  alignas(64) std::atomic<uint64_t> waits;
  std::atomic<uint64_t> wait_ns;
  std::atomic<uint32_t> space_seq;     // futex: bumped when the consumer released space
  std::atomic<uint32_t> space_waiter;  // the producer sleeps on space_seq
};
static_assert(sizeof(SlotControl) <= kSlotControlBytes);

// Control-record call ids (a record's header, recorder/internal/ring.h; 0 is padding).
inline constexpr uint32_t kDefString = 0xfff0;  // key word, byte count, bytes
inline constexpr uint32_t kNote = 0xfff1;       // byte count, bytes: the next record's note
inline constexpr uint32_t kContent = 0xfff2;    // byte count, bytes: appended to the pending
                                                // content of the next record
inline constexpr uint32_t kFragment = 0xfff3;   // words of a large record; kFlagLast ends it
inline constexpr uint64_t kFlagLast = uint64_t{1} << 63;
inline constexpr bool IsControl(uint32_t call) { return call >= 0xfff0; }

class Region {
 public:
  static size_t BytesFor(uint32_t slots, uint64_t ring_words) {
    return kRegionHeaderBytes + slots * (kSlotControlBytes + ring_words * sizeof(uint64_t));
  }
  // Lays out a zeroed region of BytesFor(slots, ring_words) bytes at `base`.
  static Region* Init(void* base, uint32_t slots, uint64_t ring_words, uint32_t drainer_pid) {
    auto* h = static_cast<RegionHeader*>(base);
    h->version = kRegionVersion;
    h->slot_count = slots;
    h->ring_words = ring_words;
    h->slot_bytes = kSlotControlBytes + ring_words * sizeof(uint64_t);
    h->total_bytes = BytesFor(slots, ring_words);
    h->drainer_pid = drainer_pid;
    h->drainer_alive.store(1, std::memory_order_relaxed);
    std::atomic_ref<uint64_t>(h->magic).store(kRegionMagic, std::memory_order_release);
    return static_cast<Region*>(base);
  }
  // The region mapped at `base` (`bytes` long), or null if it is not one.
  static Region* Check(void* base, size_t bytes) {
    auto* h = static_cast<RegionHeader*>(base);
    if (bytes < kRegionHeaderBytes || h->magic != kRegionMagic || h->version != kRegionVersion ||
        h->total_bytes > bytes || h->ring_words < 1024 || (h->ring_words & (h->ring_words - 1)) ||
        h->slot_bytes != kSlotControlBytes + h->ring_words * sizeof(uint64_t) ||
        BytesFor(h->slot_count, h->ring_words) != h->total_bytes) {
      return nullptr;
    }
    return static_cast<Region*>(base);
  }

  RegionHeader* header() { return reinterpret_cast<RegionHeader*>(this); }
  SlotControl* slot(uint32_t i) {
    return reinterpret_cast<SlotControl*>(reinterpret_cast<char*>(this) + kRegionHeaderBytes +
                                          i * header()->slot_bytes);
  }
  uint64_t* ring(uint32_t i) {
    return reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(slot(i)) + kSlotControlBytes);
  }

  // Producer: a free slot for thread `tid`, or -1 if all are owned.
  int Claim(uint32_t tid) {
    RegionHeader* h = header();
    for (uint32_t i = 0; i < h->slot_count; ++i) {
      SlotControl* s = slot(i);
      uint32_t expected = kFree;
      if (s->state.load(std::memory_order_relaxed) == kFree &&
          s->state.compare_exchange_strong(expected, kOwned, std::memory_order_acq_rel)) {
        s->tid = tid;
        uint32_t used = h->slots_used.load(std::memory_order_relaxed);
        while (used < i + 1 &&
               !h->slots_used.compare_exchange_weak(used, i + 1, std::memory_order_release)) {
        }
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  // Producer process: records a text (bounded) into one of the header's fields.
  void SetText(char* field, size_t size, const char* text, bool only_first) {
    RegionHeader* h = header();
    uint32_t z = 0;
    while (!h->text_lock.compare_exchange_weak(z, 1, std::memory_order_acquire)) z = 0;
    if (!only_first || field[0] == '\0') {
      const size_t n = std::min(std::strlen(text), size - 1);
      std::memcpy(field, text, n);
      field[n] = '\0';
    }
    h->text_lock.store(0, std::memory_order_release);
  }
};

}  // namespace cltrace::recorder::internal

#endif  // CLTRACE_RECORDER_INTERNAL_REGION_H_
