// The drainer: turns the records of every slot of a recording region (recorder/internal/
// region.h) into trace events and writes them with format::TraceWriter. The same code runs as
// the in-process recorder's background thread (recorder/recorder.cc) and as the service of
// `cltrace record` (recorder/service.h), which drains the region of another process and keeps
// draining after that process died.
//
// Thread-safety: WakeDrain/WaitForWake from any thread; a Drainer from one thread at a time.
#ifndef CLTRACE_RECORDER_INTERNAL_DRAIN_H_
#define CLTRACE_RECORDER_INTERNAL_DRAIN_H_

#include <atomic>
#include <cstdint>

#include "recorder/internal/core.h"

namespace cltrace::recorder::internal {

// Sleeps until a producer wakes the drainer of `region` or `timeout_us` passed, unless a
// wake-up happened since `seen` was read.
void WaitForWake(Region* region, uint32_t seen, int64_t timeout_us);

// Set while a drainer is consuming the current region; producers that find their ring full
// only wait when it is (and, for a drainer in another process, while that process lives).
extern std::atomic<bool> g_drain_alive;

}  // namespace cltrace::recorder::internal

#endif  // CLTRACE_RECORDER_INTERNAL_DRAIN_H_
