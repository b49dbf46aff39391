// SpscRing: the per-thread buffer between an application thread (producer) and the
// recorder's background thread (consumer).
//
// Records are runs of 64-bit words; the first word of each is a header that carries the
// record's length (RecordHeader). A record never wraps: when it does not fit before the end of
// the array, the producer fills the tail with a padding record and starts at index 0.
// The producer publishes with one release store of its position per record; it reads the
// consumer's position only when its cached copy says the ring is full, so the shared line is
// touched once per consumer poll rather than once per call.
//
// Thread-safety: exactly one producer thread (Reserve/Commit) and one consumer thread
// (Head/Read/Release) at a time.
//
// Example:
//   SpscRing ring(1 << 16);
//   if (uint64_t* w = ring.Reserve(3)) { w[0] = RecordHeader(7, 3); ...; ring.Commit(3); }
//   for (uint64_t pos = ring.tail(), end = ring.Head(); pos != end;) { ... }
#ifndef CLTRACE_RECORDER_INTERNAL_RING_H_
#define CLTRACE_RECORDER_INTERNAL_RING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace cltrace::recorder::internal {

// Header word: bits 0-15 call id (0 = padding), 16-47 record length in words (header
// included), 48-63 flags (what the record's optional words are: recorder/internal/core.h).
inline constexpr uint64_t kFlagIncomplete = uint64_t{1} << 48;     // never returned (crash)
inline constexpr uint64_t kFlagHasNote = uint64_t{1} << 49;        // a note word after the args
inline constexpr uint64_t kFlagHasClock = uint64_t{1} << 50;       // a clock word after that
inline constexpr uint64_t kFlagHasRet = uint64_t{1} << 51;         // a return-value word
inline constexpr uint64_t kFlagHasAnnotation = uint64_t{1} << 52;  // an annotation word
inline constexpr uint64_t kFlagWide = uint64_t{1} << 53;           // end/parent in full words
inline constexpr uint64_t kFlagHasContent = uint64_t{1} << 54;     // a content word (heap string)
inline constexpr uint64_t kFlagMask = ~((uint64_t{1} << 48) - 1);

inline constexpr uint64_t MakeHeader(uint32_t call, uint64_t words, uint64_t flags) {
  return call | (words << 16) | flags;
}
inline constexpr uint32_t HeaderCall(uint64_t h) { return static_cast<uint32_t>(h & 0xffff); }
inline constexpr uint64_t HeaderWords(uint64_t h) { return (h >> 16) & 0xffffffffull; }

class SpscRing {
 public:
  // `words` is rounded up to a power of two (at least 1024).
  // The capacity a ring asked for `words` gets.
  static size_t CapacityFor(size_t words) {
    size_t n = 1024;
    while (n < words) n <<= 1;
    return n;
  }

  explicit SpscRing(size_t words) {
    const size_t n = CapacityFor(words);
    capacity_ = n;
    mask_ = n - 1;
    buf_.reset(new uint64_t[n]);
  }
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  size_t capacity() const { return capacity_; }
  // The largest record Reserve accepts (bigger ones take another path).
  size_t max_record() const { return capacity_ / 2; }

  // Producer: room for `words` contiguous words (words <= max_record()), or nullptr when the
  // consumer has not freed enough yet. Nothing is visible to the consumer until Commit.
  uint64_t* Reserve(size_t words) {
    size_t pos = static_cast<size_t>(head_) & mask_;
    const size_t room_to_end = capacity_ - pos;
    const size_t pad = room_to_end < words ? room_to_end : 0;
    if (head_ + pad + words - cached_tail_ > capacity_) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (head_ + pad + words - cached_tail_ > capacity_) return nullptr;
    }
    if (pad != 0) {
      buf_[pos] = MakeHeader(0, pad, 0);
      head_ += pad;
      pos = 0;
    }
    return &buf_[pos];
  }
  // Producer: publishes the record written into the last Reserve.
  void Commit(size_t words) {
    head_ += words;
    published_.store(head_, std::memory_order_release);
    // The consumer has read these lines since the producer last wrote them: ask for ownership
    // now, so the next record's stores do not stall the next locked instruction.
    __builtin_prefetch(&buf_[static_cast<size_t>(head_ + 16) & mask_], 1);
  }
  // Producer: words committed but not yet released by the consumer (approximate).
  size_t ProducerFill() const { return static_cast<size_t>(head_ - cached_tail_); }

  // Consumer: everything before Head() may be read.
  uint64_t Head() const { return published_.load(std::memory_order_acquire); }
  uint64_t tail() const { return consumer_tail_; }
  const uint64_t* At(uint64_t pos) const { return &buf_[static_cast<size_t>(pos) & mask_]; }
  // Consumer: hands the words before `pos` back to the producer.
  void Release(uint64_t pos) {
    consumer_tail_ = pos;
    tail_.store(pos, std::memory_order_release);
  }
  // Consumer, with the producer known to be gone or stopped: drops everything.
  void Discard() { Release(Head()); }

 private:
  // Producer-owned line.
  alignas(64) uint64_t head_ = 0;
  uint64_t cached_tail_ = 0;
  std::atomic<uint64_t> published_{0};
  // Consumer-owned line.
  alignas(64) std::atomic<uint64_t> tail_{0};
  uint64_t consumer_tail_ = 0;
  // Read-only after construction.
  alignas(64) size_t capacity_ = 0;
  size_t mask_ = 0;
  std::unique_ptr<uint64_t[]> buf_;
};

}  // namespace cltrace::recorder::internal

#endif  // CLTRACE_RECORDER_INTERNAL_RING_H_
