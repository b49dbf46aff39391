// Fatal-signal flush: on SIGSEGV, SIGBUS, SIGABRT, SIGFPE or SIGILL the crashing thread's open
// calls are written as incomplete events, the background thread is asked to write everything
// buffered (bounded wait), and the signal is re-raised with the previous disposition so the
// process dies (or the application's own handler runs) as it would have without the recorder.
//
// The handlers themselves are the platform layer's (internal/platform.h: sigaction on POSIX,
// a vectored exception handler on Windows); this file is what the recorder does in them.
// Only async-signal-safe operations run there: ring writes (no allocation unless a record is
// larger than half a ring), atomics, futex wake, nanosleep. The flushing is done by the
// background thread, which is not interrupted.
//
// A signal delivered to the background thread itself cannot wait for that thread, and the
// handler cannot flush in place either: the signal may have interrupted it anywhere (inside
// malloc, holding the writer's lock, half-way through a batch), and draining and compressing
// from there is not async-signal-safe. A signal *sent* to it (kill, tgkill, sigqueue: si_code
// <= 0) interrupted nothing that must not go on, so the handler only notes it and returns;
// the background thread then finishes what it was doing, drains every ring, writes and seals
// the chunk on its own stack outside any handler (DeferredSignalFlush in recorder.cc), and
// re-raises the signal with the previous disposition on itself (ReraiseDeferredSignal), so
// the process dies as it would have, a moment later, with every call made before the signal
// in the trace. A fault raised by the recorder's own code on that thread (a recorder bug:
// SIGSEGV from a bad access, abort() from a failed check) leaves its state mid-update and
// nothing is flushed; the process dies as without the recorder.
#include <atomic>

#include "recorder/internal/core.h"
#include "recorder/internal/drain.h"
#include "recorder/internal/platform.h"

namespace cltrace::recorder::internal {

// Set by the in-process recorder (recorder.cc): ask its background thread to flush, or note a
// signal sent to that thread. Null in the shim, whose drainer is another process.
bool (*g_crash_flush)(int timeout_ms) = nullptr;
bool (*g_defer_signal)(int sig) = nullptr;

namespace {

// On the crashing thread, in the platform's handler (async-signal-safe work only).
void OnCrash(int /*code*/) {
  if (ThreadState* t = t_state; t != nullptr && t->depth > 0) EmitOpenFramesIncomplete(t);
  // Everything committed is in the region already; a drainer in another process (`cltrace
  // record`) takes it from there after this process died. One in this process must write it
  // before the process dies.
  WakeDrain();
  if (!G().remote_drainer && g_crash_flush != nullptr) g_crash_flush(/*timeout_ms=*/3000);
}

// A signal sent to the in-process recorder's background thread: it flushes and re-raises
// once the handler returned.
bool DeferCrash(int code) { return g_defer_signal != nullptr && g_defer_signal(code); }

}  // namespace

void InstallCrashHandlers() { platform::InstallCrashHandler(&OnCrash, &DeferCrash); }

void ReraiseDeferredSignal(int sig) { platform::ReraiseDeferredCrash(sig); }

void RemoveCrashHandlers() { platform::RemoveCrashHandler(); }

}  // namespace cltrace::recorder::internal
