// The recorder's platform layer: everything the shim and the service need from the operating
// system, behind one small interface so that another platform (Windows: a named file mapping,
// events, LoadLibrary, a vectored exception handler) is one more implementation file beside
// platform_posix.cc (platform_win32.cc is that implementation, compiled for
// x86_64-w64-mingw32 by scripts/windows_check.sh). Nothing here allocates on the hot path;
// FutexWait/FutexWake are async-signal-safe.
//
// Thread-safety: every function may be called from any thread.
#ifndef CLTRACE_RECORDER_INTERNAL_PLATFORM_H_
#define CLTRACE_RECORDER_INTERNAL_PLATFORM_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cltrace::recorder::platform {

// A mapping of the recording region (recorder/internal/region.h).
struct Mapping {
  void* base = nullptr;
  size_t size = 0;
  int fd = -1;  // a memfd a child process inherits (no close-on-exec), or -1
  // How another process finds it: "fd:N" (an inherited memfd) or "sysv:ID" (a System V
  // segment, used when a file-size limit forbids the memfd's size); Windows: "name:NAME" (a
  // named file mapping).
  std::string handle;
};

// Creates a region of `bytes` zeroed bytes that a child process started later inherits
// (`inheritable`) or that only this process uses. False with `*error` on failure.
bool CreateRegion(size_t bytes, bool inheritable, Mapping* out, std::string* error);
// Maps the region named by `handle` (Mapping::handle). False with `*error`.
bool MapRegion(const std::string& handle, Mapping* out, std::string* error);

// Wait/wake on a 32-bit word of the region, across processes. FutexWait returns when the word
// is no longer `seen`, when woken, or after `timeout_us`.
void FutexWait(std::atomic<uint32_t>* word, uint32_t seen, int64_t timeout_us);
void FutexWake(std::atomic<uint32_t>* word);

// The calling thread's and process's ids; whether process `pid` still exists.
uint32_t ThreadId();
uint32_t ProcessId();
bool ProcessAlive(uint32_t pid);

// Monotonic nanoseconds (the same clock in every process of the machine).
int64_t MonotonicNs();
// Sleeps for `ms` milliseconds.
void SleepMs(int ms);

// For a thread of the recorder's own: names it (`name`, at most 15 characters) and keeps the
// application's asynchronous signals off it (POSIX; nothing to do on Windows).
void PrepareRecorderThread(const char* name);
// Has `child` run in the child of a fork() of this process (POSIX; Windows has no fork).
void AtForkChild(void (*child)());

// Driver loading (POSIX: dlopen; Windows: LoadLibrary). Null with `*error` on failure.
void* LoadLibraryAt(const std::string& path, std::string* error);
void* FindSymbol(void* library, const char* name);
// The library holding `address` (its load base), and that library's directory.
const void* LibraryBaseOf(const void* address);
std::string LibraryDirOf(const void* address);

// The file name of the reference driver, which the shim loads from its own directory when
// CLTRACE_SHIM_DRIVER is unset ("libcltrace_refdriver.so"; Windows: "cltrace_refdriver.dll").
const char* DefaultDriverFileName();
// Whether `path` names a file this process may execute.
bool IsExecutable(const std::string& path);

// Attach mode's recording service: a process that drains `region` until this process is gone,
// which it learns from a watch (POSIX: a pipe; Windows: an anonymous pipe too) whose writing
// end only this process holds, so it closes whatever ends the process.
struct Service {
  int64_t pid = -1;      // the service's process id
  intptr_t watch = -1;   // this process's end of the watch (a descriptor or a HANDLE)
  intptr_t process = 0;  // Windows: the service's process HANDLE
};
// Starts `argv` (argv[0] the executable), its arguments "{region}" and "{watch}" replaced by how
// the new process reaches `region` and the watch (POSIX: "fd:100" and "101", descriptors it
// inherits as 100 and 101; Windows: the region's name and the inherited pipe HANDLE's value),
// and keeps both from this process's later children. False with `*error`.
bool StartService(const std::vector<std::string>& argv, const Mapping& region, Service* out,
                  std::string* error);
// Closes this process's end of the watch (the service drains what is left, writes the trace
// and ends) and waits for the service to end, at most `timeout_ms`.
void FinishService(Service* service, int timeout_ms);

// Crash handling. The fatal signals (POSIX: SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL; Windows:
// the fatal exceptions a vectored exception handler sees: access violation, in-page error,
// illegal or privileged instruction, integer division by zero, stack overflow, ...) call
// `on_crash(code)` on the crashing thread, once per installation (a second crash while the
// first is handled only takes its course); then the previous disposition is restored and
// the crash takes its course as without the recorder (POSIX: re-raised; Windows: the search
// for a handler goes on). `defer(code)`, when not null, is asked first about a signal *sent*
// to a thread (kill, tgkill: it interrupted nothing, POSIX only): true means that thread
// will finish what it was doing and call ReraiseDeferredCrash(code) itself, and the handler
// returns at once. Both callbacks run in a signal handler (or on a crashed thread): they
// may only do async-signal-safe work. Installing twice is a no-op.
using CrashCallback = void (*)(int code);
using DeferCallback = bool (*)(int code);
void InstallCrashHandler(CrashCallback on_crash, DeferCallback defer);
// Restores the previous dispositions (nothing if not installed).
void RemoveCrashHandler();
// On the thread `defer` answered for: restores the previous dispositions and raises `code`
// again on this thread (POSIX); nothing if the signal was ignored before the recorder.
void ReraiseDeferredCrash(int code);

}  // namespace cltrace::recorder::platform

#endif  // CLTRACE_RECORDER_INTERNAL_PLATFORM_H_
