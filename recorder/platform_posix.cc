// The POSIX (Linux) implementation of the recorder's platform layer (internal/platform.h):
// memfd regions (System V segments under a file-size limit), shared futexes, dlopen, the
// service's process and its watch pipe, fatal-signal handlers.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "recorder/internal/platform.h"

extern char** environ;

namespace cltrace::recorder::platform {

namespace {

// A System V segment, marked for removal at once: it lives while a process has it attached,
// and Linux lets a child attach a segment so marked while the creator still has it.
bool CreateSysvRegion(size_t bytes, Mapping* out, std::string* error) {
  const int id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0600);
  if (id < 0) {
    *error = std::string("shmget of the recording region: ") + std::strerror(errno);
    return false;
  }
  void* base = shmat(id, nullptr, 0);
  shmctl(id, IPC_RMID, nullptr);
  if (base == reinterpret_cast<void*>(-1)) {
    *error = std::string("shmat of the recording region: ") + std::strerror(errno);
    return false;
  }
  out->base = base;
  out->size = bytes;
  out->fd = -1;
  out->handle = "sysv:" + std::to_string(id);
  return true;
}

}  // namespace

bool CreateRegion(size_t bytes, bool inheritable, Mapping* out, std::string* error) {
  const int fd = static_cast<int>(
      ::syscall(SYS_memfd_create, "cltrace-region", inheritable ? 0 : MFD_CLOEXEC));
  if (fd < 0) {
    *error = std::string("memfd_create: ") + std::strerror(errno);
    return false;
  }
  // Beyond a file-size limit ftruncate raises SIGXFSZ (fatal by default): ignore it here, the
  // error (EFBIG) says the same.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ignore, &old);
  const int truncated = ftruncate(fd, static_cast<off_t>(bytes));
  const int e = errno;
  sigaction(SIGXFSZ, &old, nullptr);
  if (truncated != 0) {
    close(fd);
    // A file-size limit (RLIMIT_FSIZE) applies to a memfd too, not to System V shared memory.
    if (e == EFBIG && inheritable) return CreateSysvRegion(bytes, out, error);
    *error = std::string("ftruncate of the recording region: ") + std::strerror(e);
    return false;
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    *error = std::string("mmap of the recording region: ") + std::strerror(errno);
    close(fd);
    return false;
  }
  out->base = base;
  out->size = bytes;
  out->fd = fd;
  out->handle = "fd:" + std::to_string(fd);
  return true;
}

bool MapRegion(const std::string& handle, Mapping* out, std::string* error) {
  if (handle.rfind("sysv:", 0) == 0) {
    const int id = std::atoi(handle.c_str() + 5);
    struct shmid_ds ds;
    if (shmctl(id, IPC_STAT, &ds) != 0) {
      *error = std::string("shmctl of the recording region: ") + std::strerror(errno);
      return false;
    }
    void* base = shmat(id, nullptr, 0);
    if (base == reinterpret_cast<void*>(-1)) {
      *error = std::string("shmat of the recording region: ") + std::strerror(errno);
      return false;
    }
    out->base = base;
    out->size = ds.shm_segsz;
    out->handle = handle;
    return true;
  }
  if (handle.rfind("fd:", 0) != 0) {
    *error = "not a region handle: " + handle;
    return false;
  }
  const int fd = std::atoi(handle.c_str() + 3);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *error = std::string("fstat of the recording region: ") + std::strerror(errno);
    return false;
  }
  const size_t bytes = static_cast<size_t>(st.st_size);
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    *error = std::string("mmap of the recording region: ") + std::strerror(errno);
    return false;
  }
  out->base = base;
  out->size = bytes;
  out->fd = fd;
  out->handle = handle;
  return true;
}

void FutexWait(std::atomic<uint32_t>* word, uint32_t seen, int64_t timeout_us) {
  timespec ts{static_cast<time_t>(timeout_us / 1000000),
              static_cast<long>((timeout_us % 1000000) * 1000)};
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, seen, &ts, nullptr, 0);
}

void FutexWake(std::atomic<uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

uint32_t ThreadId() { return static_cast<uint32_t>(::syscall(SYS_gettid)); }
uint32_t ProcessId() { return static_cast<uint32_t>(getpid()); }
bool ProcessAlive(uint32_t pid) {
  return pid == 0 || kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

void* LoadLibraryAt(const std::string& path, std::string* error) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    *error = e != nullptr ? e : "?";
  }
  return h;
}

void* FindSymbol(void* library, const char* name) { return dlsym(library, name); }

const void* LibraryBaseOf(const void* address) {
  Dl_info info;
  return dladdr(address, &info) != 0 ? info.dli_fbase : nullptr;
}

std::string LibraryDirOf(const void* address) {
  Dl_info info;
  if (dladdr(address, &info) != 0 && info.dli_fname != nullptr) {
    std::string p = info.dli_fname;
    const size_t slash = p.rfind('/');
    return slash == std::string::npos ? std::string(".") : p.substr(0, slash);
  }
  return ".";
}

const char* DefaultDriverFileName() { return "libcltrace_refdriver.so"; }

bool IsExecutable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

bool StartService(const std::vector<std::string>& args, const Mapping& region, Service* out,
                  std::string* error) {
  if (region.fd < 0) {
    *error = "the recording region cannot be handed to the service";
    return false;
  }
  int pipe_fds[2] = {-1, -1};
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  std::vector<std::string> copy = args;
  for (std::string& a : copy) {
    if (a == "{region}") a = "fd:100";
    if (a == "{watch}") a = "101";
  }
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, region.fd, 100);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[0], 101);
  pid_t child = -1;
  const int rc = posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  fcntl(region.fd, F_SETFD, FD_CLOEXEC);  // the program's own children do not get it
  close(pipe_fds[0]);
  if (rc != 0) {
    close(pipe_fds[1]);
    *error = args[0] + ": " + std::strerror(rc);
    return false;
  }
  out->pid = child;
  out->watch = pipe_fds[1];
  return true;
}

void FinishService(Service* service, int timeout_ms) {
  if (service->pid < 0) return;
  if (service->watch >= 0) close(static_cast<int>(service->watch));
  service->watch = -1;
  for (int i = 0; i < timeout_ms; ++i) {
    int status;
    const pid_t r = waitpid(static_cast<pid_t>(service->pid), &status, WNOHANG);
    if (r == static_cast<pid_t>(service->pid) || (r < 0 && errno != EINTR)) break;
    timespec ts{0, 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  service->pid = -1;
}

// ---- crash handling ---------------------------------------------------------------------------
//
// Only async-signal-safe operations run in the handler: the callbacks (which must be too),
// atomics, sigaction, raise.

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
constexpr size_t kSignalCount = sizeof(kSignals) / sizeof(kSignals[0]);
struct sigaction g_previous[kSignalCount];
std::atomic<bool> g_installed{false};
std::atomic<int> g_in_handler{0};
std::atomic<CrashCallback> g_on_crash{nullptr};
std::atomic<DeferCallback> g_defer{nullptr};

int IndexOf(int sig) {
  for (size_t i = 0; i < kSignalCount; ++i) {
    if (kSignals[i] == sig) return static_cast<int>(i);
  }
  return -1;
}

void RestoreAll() {
  for (size_t i = 0; i < kSignalCount; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
}

void OnFatalSignal(int sig, siginfo_t* info, void*) {
  const int idx = IndexOf(sig);
  // Sent (si_code <= 0: kill, tgkill, sigqueue) to a thread that defers it: that thread
  // re-raises it itself once it is done (ReraiseDeferredCrash).
  const DeferCallback defer = g_defer.load();
  if (info != nullptr && info->si_code <= 0 && defer != nullptr && defer(sig)) return;
  if (g_in_handler.exchange(1) == 0) {
    if (const CrashCallback on_crash = g_on_crash.load(); on_crash != nullptr) on_crash(sig);
  }
  // Back to what the application had; the pending re-raise (or, for a fault, the re-executed
  // instruction) then takes its normal course.
  RestoreAll();
  g_installed.store(false);
  if (idx >= 0 && g_previous[idx].sa_handler == SIG_IGN) return;
  raise(sig);
}

}  // namespace

void InstallCrashHandler(CrashCallback on_crash, DeferCallback defer) {
  if (g_installed.exchange(true)) return;
  g_in_handler.store(0);
  g_on_crash.store(on_crash);
  g_defer.store(defer);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = OnFatalSignal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < kSignalCount; ++i) sigaction(kSignals[i], &sa, &g_previous[i]);
}

void RemoveCrashHandler() {
  if (!g_installed.exchange(false)) return;
  RestoreAll();
}

void ReraiseDeferredCrash(int sig) {
  const int idx = IndexOf(sig);
  if (idx < 0) return;
  if (g_installed.exchange(false)) {
    if (g_previous[idx].sa_handler == SIG_IGN) {  // ignored before us: nothing to re-raise
      g_installed.store(true);
      return;
    }
    RestoreAll();
  }
  // Delivered to this thread before pthread_kill returns (the caller does not block it): the
  // previous disposition takes its course as if the signal had come now.
  pthread_kill(pthread_self(), sig);
}

void SleepMs(int ms) {
  timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000 * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void PrepareRecorderThread(const char* name) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);  // the application's signals are not ours
  pthread_setname_np(pthread_self(), name);
}

void AtForkChild(void (*child)()) { pthread_atfork(nullptr, nullptr, child); }

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace cltrace::recorder::platform
