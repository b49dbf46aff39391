// Back-pressure on a producer's ring (recorder/README.md, "Back-pressure"): the part of the
// producer's path that waits for the drainer and wakes it, on the rings of a recording region.
// Apart from core.cc so that it depends on nothing but the ring, the region and the platform
// layer: scripts/windows_check.sh compiles it with platform_win32.cc for Windows.
//
// Thread-safety: RingReserveWaiting on the ring's producer thread only, RingRelease on its
// drainer thread only; WakeRegionDrainer anywhere (async-signal-safe).
#ifndef CLTRACE_RECORDER_INTERNAL_RING_WAIT_H_
#define CLTRACE_RECORDER_INTERNAL_RING_WAIT_H_

#include <cstddef>
#include <cstdint>

#include "recorder/internal/region.h"
#include "recorder/internal/ring.h"

namespace cltrace::recorder::internal {

// How long a producer whose ring is full spins before it sleeps (the issue's ~1 µs).
inline constexpr int64_t kWaitSpinNs = 1'000;

// Wakes the drainer of `region` (a no-op for null).
void WakeRegionDrainer(Region* region);

// Room for `words` in `ring`, waiting while the drainer frees it: spins kWaitSpinNs, then
// sleeps on the slot's futex until RingRelease wakes it (bounded, 1 ms a time), asking
// `drainer_alive` whether anyone will. The first wait of a record counts once in the slot's
// `waits` and sets `*wait_start` (the caller adds the time to `wait_ns`). Null when the drainer
// is gone: the record cannot be written.
uint64_t* RingReserveWaiting(SpscRing* ring, size_t words, Region* region, bool (*drainer_alive)(),
                             int64_t* wait_start);

// Hands the ring's words before `pos` back to its producer and wakes it if it sleeps.
void RingRelease(SpscRing* ring, uint64_t pos);

}  // namespace cltrace::recorder::internal

#endif  // CLTRACE_RECORDER_INTERNAL_RING_WAIT_H_
