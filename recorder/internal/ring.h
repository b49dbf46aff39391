// SpscRing: the per-thread buffer between an application thread (producer) and the
// recorder's background thread (consumer).
//
// Records are runs of 64-bit words; the first word of each is a header that carries the
// record's length (RecordHeader). A record never wraps: when it does not fit before the end of
// the array, the producer fills the tail with a padding record and starts at index 0.
// The producer publishes with one release store of its position per record (the commit
// marker, recorder/internal/region.h); it reads the consumer's position only when its cached
// copy says the ring is full, so the shared line is touched once per consumer poll rather
// than once per call.
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

#include "recorder/internal/region.h"

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

// One slot's ring (recorder/internal/region.h): the producer's private positions here, the
// shared ones (the commit marker `published`, the consumer's `tail`) in the slot's control
// block, which may live in another process's mapping of the same region.
class SpscRing {
 public:
  // `words` is rounded up to a power of two (at least 1024).
  static size_t CapacityFor(size_t words) {
    size_t n = 1024;
    while (n < words) n <<= 1;
    return n;
  }

  SpscRing() = default;
  // A ring of its own (tests): control block and words on the heap.
  explicit SpscRing(size_t words) {
    const size_t n = CapacityFor(words);
    own_control_.reset(new SlotControl{});
    own_buf_.reset(new uint64_t[n]);
    Attach(own_control_.get(), own_buf_.get(), n);
  }
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  // Producer or consumer: works on `control` and `buf` (`capacity` words, a power of two),
  // continuing from the positions the control block holds.
  void Attach(SlotControl* control, uint64_t* buf, size_t capacity) {
    control_ = control;
    buf_ = buf;
    capacity_ = capacity;
    mask_ = capacity - 1;
    head_ = control->published.load(std::memory_order_acquire) & kHeadMask;
    cached_tail_ = control->tail.load(std::memory_order_acquire);
    consumer_tail_ = cached_tail_;
  }
  bool attached() const { return control_ != nullptr; }
  void Detach() {
    control_ = nullptr;
    buf_ = nullptr;
    capacity_ = 0;
    mask_ = 0;
    head_ = cached_tail_ = consumer_tail_ = 0;
  }
  SlotControl* control() const { return control_; }

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
      cached_tail_ = control_->tail.load(std::memory_order_acquire);
      if (head_ + pad + words - cached_tail_ > capacity_) return nullptr;
    }
    if (pad != 0) {
      buf_[pos] = MakeHeader(0, pad, 0);
      head_ += pad;
      pos = 0;
    }
    return &buf_[pos];
  }
  // Producer: publishes the record written into the last Reserve (the commit marker), with
  // the number of calls its thread still has open.
  void Commit(size_t words, uint64_t depth = 0) {
    head_ += words;
    control_->published.store(PackPublished(head_, depth), std::memory_order_release);
    // The consumer has read these lines since the producer last wrote them: ask for ownership
    // now, so the next record's stores do not stall the next locked instruction.
    __builtin_prefetch(&buf_[static_cast<size_t>(head_ + 16) & mask_], 1);
  }
  // Producer: a call was entered (nothing new to read): the open-call count only.
  void PublishDepth(uint64_t depth) {
    control_->published.store(PackPublished(head_, depth), std::memory_order_release);
  }
  // Producer: words committed but not yet released by the consumer (approximate).
  size_t ProducerFill() const { return static_cast<size_t>(head_ - cached_tail_); }

  // Consumer: everything before Head() may be read.
  uint64_t Head() const { return control_->published.load(std::memory_order_acquire) & kHeadMask; }
  // Consumer: the producer's open calls at its last commit or entry.
  uint64_t OpenCalls() const { return control_->published.load(std::memory_order_acquire) >> 48; }
  uint64_t tail() const { return consumer_tail_; }
  const uint64_t* At(uint64_t pos) const { return &buf_[static_cast<size_t>(pos) & mask_]; }
  // Consumer: hands the words before `pos` back to the producer.
  void Release(uint64_t pos) {
    consumer_tail_ = pos;
    control_->tail.store(pos, std::memory_order_release);
  }
  // Consumer, with the producer known to be gone or stopped: drops everything.
  void Discard() { Release(Head()); }

 private:
  // Producer-owned.
  alignas(64) uint64_t head_ = 0;
  uint64_t cached_tail_ = 0;
  // Consumer-owned.
  alignas(64) uint64_t consumer_tail_ = 0;
  // Set by Attach.
  alignas(64) SlotControl* control_ = nullptr;
  uint64_t* buf_ = nullptr;
  size_t capacity_ = 0;
  size_t mask_ = 0;
  std::unique_ptr<SlotControl> own_control_;
  std::unique_ptr<uint64_t[]> own_buf_;
};

}  // namespace cltrace::recorder::internal

#endif  // CLTRACE_RECORDER_INTERNAL_RING_H_
