// The Windows implementation of the recorder's platform layer (internal/platform.h): named
// file mappings for the region, named events for the wake-ups, LoadLibrary/GetProcAddress for
// the real driver, CreateProcess and an anonymous pipe for the attach-mode service, a vectored
// exception handler for crashes. Only the Windows API and the C++ standard library: no
// third-party dependency. scripts/windows_check.sh compiles it (with the producer's ring code,
// recorder/ring_wait.cc) for x86_64-w64-mingw32 and links it into a DLL that may import
// nothing but the system's libraries; running it needs Windows.
//
// Wake-ups. A futex word lives in the region, shared by two processes; Windows' WaitOnAddress
// works within one process only. So each word that is waited on gets a manual-reset event
// named after the region and the word's offset in it ("<region name>-w<offset>"), which both
// processes open by that name. FutexWait resets the event, re-checks the word and waits;
// FutexWake sets it (SetEvent releases every thread waiting at that moment). A wake that
// falls between another waiter's reset and its wait is lost to that waiter until its timeout,
// which every caller bounds (1 ms for a full ring, the poll interval for the drainer), as a
// futex's spurious wake-ups are.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
// <windows.h> maps StartService to the service control manager's StartServiceA.
#undef StartService

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "recorder/internal/platform.h"

namespace cltrace::recorder::platform {

namespace {

std::string LastError(const char* what) {
  const DWORD e = GetLastError();
  char buf[256] = {0};
  const DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                                 nullptr, e, 0, buf, sizeof(buf), nullptr);
  std::string text = n != 0 ? std::string(buf, n) : "error " + std::to_string(e);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return std::string(what) + ": " + text;
}

// The regions this process mapped, so a futex word can be named by (region, offset). Written
// under g_lock, read without it (entries are published by the count's release store).
struct MappedRegion {
  const char* base = nullptr;
  size_t size = 0;
  char name[96] = {0};
};
constexpr int kMaxRegions = 16;
MappedRegion g_regions[kMaxRegions];
std::atomic<int> g_region_count{0};

// Events opened for futex words: (region, offset) -> HANDLE, never closed (a handful).
struct WordEvent {
  const void* word = nullptr;
  HANDLE event = nullptr;
};
constexpr int kMaxEvents = 512;
WordEvent g_events[kMaxEvents];
SRWLOCK g_lock = SRWLOCK_INIT;

void Register(const void* base, size_t size, const std::string& name) {
  AcquireSRWLockExclusive(&g_lock);
  const int n = g_region_count.load(std::memory_order_relaxed);
  if (n < kMaxRegions) {
    g_regions[n].base = static_cast<const char*>(base);
    g_regions[n].size = size;
    std::snprintf(g_regions[n].name, sizeof(g_regions[n].name), "%s", name.c_str());
    g_region_count.store(n + 1, std::memory_order_release);
  }
  ReleaseSRWLockExclusive(&g_lock);
}

// The event of `word` (opened or created on first use), or null when the word is in no region
// of this process or the table is full.
HANDLE EventFor(const void* word) {
  AcquireSRWLockShared(&g_lock);
  for (const WordEvent& e : g_events) {
    if (e.word == word) {
      ReleaseSRWLockShared(&g_lock);
      return e.event;
    }
    if (e.word == nullptr) break;
  }
  ReleaseSRWLockShared(&g_lock);
  const char* w = static_cast<const char*>(word);
  const int n = g_region_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    const MappedRegion& r = g_regions[i];
    if (w < r.base || w >= r.base + r.size) continue;
    char name[128];
    std::snprintf(name, sizeof(name), "%s-w%llu", r.name,
                  static_cast<unsigned long long>(w - r.base));
    HANDLE event = CreateEventA(nullptr, /*bManualReset=*/TRUE, /*bInitialState=*/FALSE, name);
    if (event == nullptr) return nullptr;
    AcquireSRWLockExclusive(&g_lock);
    for (WordEvent& e : g_events) {
      if (e.word == word) {  // another thread was first
        CloseHandle(event);
        event = e.event;
        break;
      }
      if (e.word == nullptr) {
        e.word = word;
        e.event = event;
        break;
      }
    }
    ReleaseSRWLockExclusive(&g_lock);
    return event;
  }
  return nullptr;
}

}  // namespace

bool CreateRegion(size_t bytes, bool inheritable, Mapping* out, std::string* error) {
  static std::atomic<unsigned> counter{0};
  char name[96];
  std::snprintf(name, sizeof(name), "Local\\cltrace-region-%lu-%u",
                static_cast<unsigned long>(GetCurrentProcessId()), counter.fetch_add(1));
  SECURITY_ATTRIBUTES sa{sizeof(sa), nullptr, inheritable ? TRUE : FALSE};
  const unsigned long long size = bytes;
  // Backed by the paging file: zero-filled, gone when the last view and handle are.
  HANDLE mapping =
      CreateFileMappingA(INVALID_HANDLE_VALUE, &sa, PAGE_READWRITE, static_cast<DWORD>(size >> 32),
                         static_cast<DWORD>(size & 0xffffffffu), name);
  if (mapping == nullptr) {
    *error = LastError("CreateFileMapping of the recording region");
    return false;
  }
  void* base = MapViewOfFile(mapping, FILE_MAP_ALL_ACCESS, 0, 0, bytes);
  if (base == nullptr) {
    *error = LastError("MapViewOfFile of the recording region");
    CloseHandle(mapping);
    return false;
  }
  // The mapping handle stays open for the process's lifetime: the service opens the mapping
  // by name, possibly after this process stopped using it.
  out->base = base;
  out->size = bytes;
  out->fd = -1;
  out->handle = std::string("name:") + name;
  Register(base, bytes, name);
  return true;
}

bool MapRegion(const std::string& handle, Mapping* out, std::string* error) {
  if (handle.rfind("name:", 0) != 0) {
    *error = "not a region handle: " + handle;
    return false;
  }
  const std::string name = handle.substr(5);
  HANDLE mapping = OpenFileMappingA(FILE_MAP_ALL_ACCESS, FALSE, name.c_str());
  if (mapping == nullptr) {
    *error = LastError("OpenFileMapping of the recording region");
    return false;
  }
  void* base = MapViewOfFile(mapping, FILE_MAP_ALL_ACCESS, 0, 0, 0);
  if (base == nullptr) {
    *error = LastError("MapViewOfFile of the recording region");
    CloseHandle(mapping);
    return false;
  }
  MEMORY_BASIC_INFORMATION info;
  if (VirtualQuery(base, &info, sizeof(info)) == 0) {
    *error = LastError("VirtualQuery of the recording region");
    UnmapViewOfFile(base);
    CloseHandle(mapping);
    return false;
  }
  out->base = base;
  out->size = info.RegionSize;  // whole pages, as the region's size is
  out->fd = -1;
  out->handle = handle;
  Register(base, info.RegionSize, name);
  return true;
}

void FutexWait(std::atomic<uint32_t>* word, uint32_t seen, int64_t timeout_us) {
  const DWORD ms = static_cast<DWORD>(timeout_us <= 0 ? 0 : (timeout_us + 999) / 1000);
  HANDLE event = EventFor(word);
  if (event == nullptr) {  // not a word of a region: a bounded sleep does what a wake would
    if (word->load(std::memory_order_acquire) == seen) Sleep(ms);
    return;
  }
  ResetEvent(event);
  if (word->load(std::memory_order_acquire) != seen) return;
  WaitForSingleObject(event, ms);
}

void FutexWake(std::atomic<uint32_t>* word) {
  if (HANDLE event = EventFor(word); event != nullptr) SetEvent(event);
}

uint32_t ThreadId() { return static_cast<uint32_t>(GetCurrentThreadId()); }
uint32_t ProcessId() { return static_cast<uint32_t>(GetCurrentProcessId()); }

bool ProcessAlive(uint32_t pid) {
  if (pid == 0) return true;
  HANDLE h = OpenProcess(SYNCHRONIZE, FALSE, pid);
  if (h == nullptr) return GetLastError() == ERROR_ACCESS_DENIED;  // exists, not ours to open
  const DWORD r = WaitForSingleObject(h, 0);
  CloseHandle(h);
  return r == WAIT_TIMEOUT;
}

int64_t MonotonicNs() {
  static const int64_t frequency = [] {
    LARGE_INTEGER f;
    QueryPerformanceFrequency(&f);
    return static_cast<int64_t>(f.QuadPart);
  }();
  LARGE_INTEGER c;
  QueryPerformanceCounter(&c);
  const int64_t t = c.QuadPart;
  return t / frequency * 1000000000 + t % frequency * 1000000000 / frequency;
}

void SleepMs(int ms) { Sleep(static_cast<DWORD>(ms < 0 ? 0 : ms)); }

// Windows delivers no asynchronous signals to a thread, and a thread's description needs an API
// newer than the oldest Windows the shim supports: nothing to do.
void PrepareRecorderThread(const char* /*name*/) {}

void AtForkChild(void (* /*child*/)()) {}  // no fork()

void* LoadLibraryAt(const std::string& path, std::string* error) {
  HMODULE h = LoadLibraryA(path.c_str());
  if (h == nullptr) *error = LastError(path.c_str());
  return reinterpret_cast<void*>(h);
}

void* FindSymbol(void* library, const char* name) {
  return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(library), name));
}

const void* LibraryBaseOf(const void* address) {
  HMODULE module = nullptr;
  if (!GetModuleHandleExA(
          GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
          static_cast<LPCSTR>(address), &module)) {
    return nullptr;
  }
  return module;
}

std::string LibraryDirOf(const void* address) {
  HMODULE module = static_cast<HMODULE>(const_cast<void*>(LibraryBaseOf(address)));
  char path[MAX_PATH];
  const DWORD n = module != nullptr ? GetModuleFileNameA(module, path, sizeof(path)) : 0;
  if (n == 0 || n == sizeof(path)) return ".";
  std::string p(path, n);
  const size_t slash = p.find_last_of("\\/");
  return slash == std::string::npos ? std::string(".") : p.substr(0, slash);
}

const char* DefaultDriverFileName() { return "cltrace_refdriver.dll"; }

bool IsExecutable(const std::string& path) {
  const DWORD a = GetFileAttributesA(path.c_str());
  return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY) == 0;
}

namespace {

// One argument quoted for CommandLineToArgvW's rules (backslashes before a quote doubled).
std::string Quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_of(" \t\"") == std::string::npos) return arg;
  std::string q = "\"";
  size_t backslashes = 0;
  for (char c : arg) {
    if (c == '\\') {
      ++backslashes;
      continue;
    }
    q.append(c == '"' ? backslashes * 2 + 1 : backslashes, '\\');
    backslashes = 0;
    q += c;
  }
  q.append(backslashes * 2, '\\');
  return q + "\"";
}

}  // namespace

bool StartService(const std::vector<std::string>& args, const Mapping& region, Service* out,
                  std::string* error) {
  // The watch: the service inherits the reading end; the writing end stays here, uninherited,
  // and closes however this process ends.
  SECURITY_ATTRIBUTES sa{sizeof(sa), nullptr, TRUE};
  HANDLE read_end = nullptr, write_end = nullptr;
  if (!CreatePipe(&read_end, &write_end, &sa, 0)) {
    *error = LastError("CreatePipe");
    return false;
  }
  SetHandleInformation(write_end, HANDLE_FLAG_INHERIT, 0);
  std::string command;
  for (const std::string& a : args) {
    std::string v = a;
    if (v == "{region}") v = region.handle;
    if (v == "{watch}") v = std::to_string(reinterpret_cast<uintptr_t>(read_end));
    command += (command.empty() ? "" : " ") + Quote(v);
  }
  STARTUPINFOA si;
  std::memset(&si, 0, sizeof(si));
  si.cb = sizeof(si);
  PROCESS_INFORMATION pi;
  std::memset(&pi, 0, sizeof(pi));
  std::vector<char> line(command.begin(), command.end());
  line.push_back('\0');
  const BOOL ok = CreateProcessA(args[0].c_str(), line.data(), nullptr, nullptr,
                                 /*bInheritHandles=*/TRUE, 0, nullptr, nullptr, &si, &pi);
  CloseHandle(read_end);
  if (!ok) {
    *error = LastError(args[0].c_str());
    CloseHandle(write_end);
    return false;
  }
  CloseHandle(pi.hThread);
  out->pid = static_cast<int64_t>(pi.dwProcessId);
  out->process = reinterpret_cast<intptr_t>(pi.hProcess);
  out->watch = reinterpret_cast<intptr_t>(write_end);
  return true;
}

void FinishService(Service* service, int timeout_ms) {
  if (service->pid < 0) return;
  if (service->watch != -1) CloseHandle(reinterpret_cast<HANDLE>(service->watch));
  service->watch = -1;
  if (service->process != 0) {
    HANDLE process = reinterpret_cast<HANDLE>(service->process);
    WaitForSingleObject(process, static_cast<DWORD>(timeout_ms));
    CloseHandle(process);
  }
  service->process = 0;
  service->pid = -1;
}

// ---- crash handling ---------------------------------------------------------------------------
//
// A vectored exception handler sees an exception before any frame-based (__try) handler, on
// the faulting thread. It calls the recorder for the fatal kinds only and always lets the
// search go on (EXCEPTION_CONTINUE_SEARCH): the application's handlers, its unhandled-exception
// filter and Windows Error Reporting run as without the recorder. An exception the
// application then handles itself has still had its thread's open calls committed as
// incomplete: a first-chance fault is indistinguishable from a crash at this point.

namespace {

std::atomic<PVOID> g_handler{nullptr};
std::atomic<int> g_in_handler{0};
std::atomic<CrashCallback> g_on_crash{nullptr};

bool Fatal(DWORD code) {
  switch (code) {
    case EXCEPTION_ACCESS_VIOLATION:
    case EXCEPTION_IN_PAGE_ERROR:
    case EXCEPTION_ILLEGAL_INSTRUCTION:
    case EXCEPTION_PRIV_INSTRUCTION:
    case EXCEPTION_INT_DIVIDE_BY_ZERO:
    case EXCEPTION_STACK_OVERFLOW:
    case EXCEPTION_DATATYPE_MISALIGNMENT:
    case EXCEPTION_ARRAY_BOUNDS_EXCEEDED:
    case EXCEPTION_NONCONTINUABLE_EXCEPTION:
    case 0xC0000409:  // STATUS_STACK_BUFFER_OVERRUN (__fastfail, abort() in the UCRT)
      return true;
    default:
      return false;
  }
}

LONG CALLBACK OnException(EXCEPTION_POINTERS* info) {
  const DWORD code = info != nullptr && info->ExceptionRecord != nullptr
                         ? info->ExceptionRecord->ExceptionCode
                         : 0;
  if (Fatal(code) && g_in_handler.exchange(1) == 0) {
    if (const CrashCallback on_crash = g_on_crash.load(); on_crash != nullptr) {
      on_crash(static_cast<int>(code));
    }
  }
  return EXCEPTION_CONTINUE_SEARCH;
}

}  // namespace

void InstallCrashHandler(CrashCallback on_crash, DeferCallback /*defer: no sent signals*/) {
  if (g_handler.load() != nullptr) return;
  g_in_handler.store(0);
  g_on_crash.store(on_crash);
  PVOID h = AddVectoredExceptionHandler(/*First=*/1, &OnException);
  PVOID expected = nullptr;
  if (!g_handler.compare_exchange_strong(expected, h) && h != nullptr) {
    RemoveVectoredExceptionHandler(h);  // another thread installed one first
  }
}

void RemoveCrashHandler() {
  if (PVOID h = g_handler.exchange(nullptr); h != nullptr) RemoveVectoredExceptionHandler(h);
}

void ReraiseDeferredCrash(int /*code*/) {}  // nothing is deferred on Windows

}  // namespace cltrace::recorder::platform
