// Fatal-signal flush: on SIGSEGV, SIGBUS, SIGABRT, SIGFPE or SIGILL the crashing thread's open
// calls are written as incomplete events, the background thread is asked to write everything
// buffered (bounded wait), and the signal is re-raised with the previous disposition so the
// process dies (or the application's own handler runs) as it would have without the recorder.
//
// Only async-signal-safe operations run in the handler itself: ring writes (no allocation
// unless a record is larger than half a ring), atomics, futex wake, nanosleep, sigaction,
// raise. The flushing is done by the background thread, which is not interrupted.
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
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include <atomic>

#include "recorder/internal/core.h"
#include "recorder/internal/drain.h"

namespace cltrace::recorder::internal {

// Set by the in-process recorder (recorder.cc): ask its background thread to flush, or note a
// signal sent to that thread. Null in the shim, whose drainer is another process.
bool (*g_crash_flush)(int timeout_ms) = nullptr;
bool (*g_defer_signal)(int sig) = nullptr;

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
struct sigaction g_previous[sizeof(kSignals) / sizeof(kSignals[0])];
std::atomic<bool> g_installed{false};
std::atomic<int> g_in_handler{0};

int IndexOf(int sig) {
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
    if (kSignals[i] == sig) return static_cast<int>(i);
  }
  return -1;
}

void RestoreAll() {
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
    sigaction(kSignals[i], &g_previous[i], nullptr);
  }
}

void OnFatalSignal(int sig, siginfo_t* info, void*) {
  const int idx = IndexOf(sig);
  // Sent to the background thread itself: it flushes and re-raises once this returns.
  if (info != nullptr && info->si_code <= 0 && g_defer_signal != nullptr && g_defer_signal(sig)) {
    return;
  }
  if (g_in_handler.exchange(1) == 0) {
    if (ThreadState* t = t_state; t != nullptr && t->depth > 0) EmitOpenFramesIncomplete(t);
    // Everything committed is in the region already; a drainer in another process (`cltrace
    // record`) takes it from there after this process died. One in this process must write it
    // before the process dies.
    WakeDrain();
    if (!G().remote_drainer && g_crash_flush != nullptr) g_crash_flush(/*timeout_ms=*/3000);
  }
  // Back to what the application had; the pending re-raise (or, for a fault, the re-executed
  // instruction) then takes its normal course.
  RestoreAll();
  g_installed.store(false);
  if (idx >= 0 && g_previous[idx].sa_handler == SIG_IGN) return;
  raise(sig);
}

}  // namespace

void InstallCrashHandlers() {
  if (g_installed.exchange(true)) return;
  g_in_handler.store(0);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = OnFatalSignal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
    sigaction(kSignals[i], &sa, &g_previous[i]);
  }
}

void ReraiseDeferredSignal(int sig) {
  const int idx = IndexOf(sig);
  if (idx < 0) return;
  if (g_installed.exchange(false)) {
    if (g_previous[idx].sa_handler == SIG_IGN) {  // ignored before us: nothing to re-raise
      g_installed.store(true);
      return;
    }
    RestoreAll();
  }
  // Delivered to this thread before pthread_kill returns (the background thread does not
  // block it): the previous disposition takes its course as if the signal had come now.
  pthread_kill(pthread_self(), sig);
}

void RemoveCrashHandlers() {
  if (!g_installed.exchange(false)) return;
  RestoreAll();
}

}  // namespace cltrace::recorder::internal
