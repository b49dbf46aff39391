// What the application threads share with the background (drain) thread: the registry of
// thread states, records too large for a ring, and the wake-up word.
//
// Thread-safety: all functions may be called from any thread; the registry and the overflow
// queue are mutex-protected (touched on warm-up and on oversized records only).
#ifndef CLTRACE_RECORDER_INTERNAL_DRAIN_H_
#define CLTRACE_RECORDER_INTERNAL_DRAIN_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "recorder/internal/core.h"

namespace cltrace::recorder::internal {

// A record that did not fit a ring (an array of tens of thousands of elements).
struct OverflowRecord {
  uint32_t tid = 0;
  std::unique_ptr<uint64_t[]> words;
};

// Every thread state ever registered (exited ones are reused by new threads once drained).
void SnapshotThreads(std::vector<ThreadState*>* out);
// Marks an exited, drained thread state reusable.
void RetireThread(ThreadState* t);
void TakeOverflow(std::vector<OverflowRecord>* out);
// The drain thread processed an oversized record of `words` words.
void ReleaseOverflow(uint64_t words);
void PushOverflow(OverflowRecord rec);

// Wakes the drain thread (futex; also used from the crash handler: async-signal-safe).
void WakeDrain();
// Sleeps until WakeDrain or `timeout_us`, unless a wake-up happened since `seen` was read.
void WaitForWake(uint32_t seen, int64_t timeout_us);
uint32_t WakeCount();

// Set while a drain thread is consuming rings; producers that find their ring full only wait
// when it is.
extern std::atomic<bool> g_drain_alive;

}  // namespace cltrace::recorder::internal

#endif  // CLTRACE_RECORDER_INTERNAL_DRAIN_H_
