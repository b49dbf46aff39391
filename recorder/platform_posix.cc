// The POSIX (Linux) implementation of the recorder's platform layer (internal/platform.h):
// memfd regions (System V segments under a file-size limit), shared futexes, dlopen, the
// service's process.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

int64_t SpawnService(const std::vector<std::string>& args, int region, int watch,
                     std::string* error) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, region, 100);
  posix_spawn_file_actions_adddup2(&actions, watch, 101);
  pid_t child = -1;
  const int rc = posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  fcntl(region, F_SETFD, FD_CLOEXEC);  // the program's own children do not get it
  if (rc != 0) {
    *error = args[0] + ": " + std::strerror(rc);
    return -1;
  }
  return child;
}

void WaitForService(int64_t pid, int timeout_ms) {
  for (int i = 0; i < timeout_ms; ++i) {
    int status;
    const pid_t r = waitpid(static_cast<pid_t>(pid), &status, WNOHANG);
    if (r == static_cast<pid_t>(pid) || (r < 0 && errno != EINTR)) return;
    timespec ts{0, 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
}

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace cltrace::recorder::platform
