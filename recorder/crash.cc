// Fatal-signal flush: on SIGSEGV, SIGBUS, SIGABRT, SIGFPE or SIGILL the crashing thread's open
// calls are written as incomplete events, the background thread is asked to write everything
// buffered (bounded wait), and the signal is re-raised with the previous disposition so the
// process dies (or the application's own handler runs) as it would have without the recorder.
//
// Only async-signal-safe operations run in the handler itself: ring writes (no allocation
// unless a record is larger than half a ring), atomics, futex wake, nanosleep, sigaction,
// raise. The flushing is done by the background thread, which is not interrupted.
#include <signal.h>
#include <string.h>

#include <atomic>

#include "recorder/internal/core.h"
#include "recorder/internal/drain.h"

namespace cltrace::recorder::internal {

bool CrashFlush(int timeout_ms);  // recorder.cc

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

void OnFatalSignal(int sig, siginfo_t*, void*) {
  const int idx = IndexOf(sig);
  if (g_in_handler.exchange(1) == 0) {
    if (ThreadState* t = t_state; t != nullptr && t->depth > 0) EmitOpenFramesIncomplete(t);
    CrashFlush(/*timeout_ms=*/3000);
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

void RemoveCrashHandlers() {
  if (!g_installed.exchange(false)) return;
  RestoreAll();
}

}  // namespace cltrace::recorder::internal
