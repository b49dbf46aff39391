// The recorder's platform layer: everything the shim and the service need from the operating
// system, behind one small interface so that another platform (Windows: a named file mapping,
// events, LoadLibrary, a vectored exception handler) is one more implementation file beside
// platform_posix.cc. Nothing here allocates on the hot path; FutexWait/FutexWake are
// async-signal-safe.
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
  // segment, used when a file-size limit forbids the memfd's size).
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

// Driver loading (POSIX: dlopen; Windows: LoadLibrary). Null with `*error` on failure.
void* LoadLibraryAt(const std::string& path, std::string* error);
void* FindSymbol(void* library, const char* name);
// The library holding `address` (its load base), and that library's directory.
const void* LibraryBaseOf(const void* address);
std::string LibraryDirOf(const void* address);

// Starts `argv` (argv[0] the executable) with `region` and `watch` visible to it as
// descriptors 100 and 101, and keeps `region` from this process's later children. Returns the
// process id, or -1 with `*error`.
int64_t SpawnService(const std::vector<std::string>& argv, int region, int watch,
                     std::string* error);
// Waits (at most `timeout_ms`) for a process SpawnService started to end.
void WaitForService(int64_t pid, int timeout_ms);

}  // namespace cltrace::recorder::platform

#endif  // CLTRACE_RECORDER_INTERNAL_PLATFORM_H_
