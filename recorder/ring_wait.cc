// Back-pressure on a producer's ring (internal/ring_wait.h).
#include "recorder/internal/ring_wait.h"

#include <atomic>

#include "recorder/internal/platform.h"

namespace cltrace::recorder::internal {

namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

void WakeRegionDrainer(Region* region) {
  if (region == nullptr) return;
  std::atomic<uint32_t>& wake = region->header()->wake;
  wake.fetch_add(1, std::memory_order_release);
  platform::FutexWake(&wake);
}

uint64_t* RingReserveWaiting(SpscRing* ring, size_t words, Region* region, bool (*drainer_alive)(),
                             int64_t* wait_start) {
  uint64_t* w = ring->Reserve(words);
  if (w != nullptr) return w;
  // The ring is full: the drainer is behind. Wait (never drop a call) and count it: spin a
  // moment, then sleep until it hands space back (RingRelease wakes us). Never sched_yield:
  // on a busy machine that hands the core to another process for a whole time slice.
  SlotControl* c = ring->control();
  const int64_t start = platform::MonotonicNs();
  if (*wait_start == 0) {
    *wait_start = start;
    c->waits.fetch_add(1, std::memory_order_relaxed);
  }
  WakeRegionDrainer(region);
  while ((w = ring->Reserve(words)) == nullptr) {
    if (platform::MonotonicNs() - start < kWaitSpinNs) {
      CpuRelax();
      continue;
    }
    if (!drainer_alive()) return nullptr;
    const uint32_t seen = c->space_seq.load(std::memory_order_acquire);
    c->space_waiter.store(1, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if ((w = ring->Reserve(words)) != nullptr) {
      c->space_waiter.store(0, std::memory_order_relaxed);
      break;
    }
    WakeRegionDrainer(region);
    // Bounded: the drainer may stop (or die) without a release.
    platform::FutexWait(&c->space_seq, seen, 1000);
    c->space_waiter.store(0, std::memory_order_relaxed);
  }
  return w;
}

void RingRelease(SpscRing* ring, uint64_t pos) {
  ring->Release(pos);
  SlotControl* c = ring->control();
  // Pairs with the producer's fence between setting space_waiter and re-reading the tail:
  // either it sees this release or this load sees its flag.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (c->space_waiter.load(std::memory_order_relaxed) != 0 &&
      c->space_waiter.exchange(0, std::memory_order_acq_rel) != 0) {
    c->space_seq.fetch_add(1, std::memory_order_release);
    platform::FutexWake(&c->space_seq);
  }
}

}  // namespace cltrace::recorder::internal
