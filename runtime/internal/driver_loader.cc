#include "runtime/internal/driver_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <shared_mutex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/runtime.h"

namespace cltrace::runtime::internal {
namespace {

constexpr char kRefDriverName[] = "libcltrace_refdriver.so";

struct Loaded {
  std::mutex mu;
  std::vector<void*> handles;
};
Loaded& LoadedLibraries() {
  static Loaded* loaded = new Loaded();
  return *loaded;
}

bool Exists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// An optional export of the driver library, or of the reference driver a shim loaded.
void* FindDriverExport(void* handle, const char* symbol) {
  if (handle != nullptr) {
    if (void* f = dlsym(handle, symbol)) return f;
  }
  // Behind a shim the reference driver is loaded RTLD_LOCAL; find it by its soname.
  if (void* ref = dlopen(kRefDriverName, RTLD_NOW | RTLD_NOLOAD)) {
    void* f = dlsym(ref, symbol);
    dlclose(ref);  // drops only the reference NOLOAD added
    return f;
  }
  return nullptr;
}

ViolationsFn FindViolationsFn(void* handle) {
  return reinterpret_cast<ViolationsFn>(FindDriverExport(handle, "CltraceRefDriverViolations"));
}

}  // namespace

std::string DefaultDriverPath() {
  std::vector<std::string> dirs;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&DefaultDriverPath), &info) != 0 &&
      info.dli_fname != nullptr) {
    dirs.push_back(DirOf(info.dli_fname));
  }
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = '\0';
    dirs.push_back(DirOf(exe));
  }
  for (const std::string& dir : dirs) {
    for (const std::string& candidate :
         {absl::StrCat(dir, "/", kRefDriverName), absl::StrCat(dir, "/../lib/", kRefDriverName)}) {
      if (Exists(candidate)) return candidate;
    }
  }
  return "";
}

absl::Status DriverLibrary::Load(const std::string& requested) {
  path = requested;
  if (path.empty()) {
    if (const char* env = std::getenv("CLTRACE_DRIVER"); env != nullptr && env[0] != '\0') {
      path = env;
    } else {
      path = DefaultDriverPath();
    }
  }
  if (path.empty()) {
    return absl::NotFoundError(
        "no driver given and libcltrace_refdriver.so not found next to the runtime "
        "(set CLTRACE_DRIVER or RuntimeOptions::driver_path)");
  }
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return absl::NotFoundError(absl::StrCat("dlopen(", path, "): ", err ? err : "unknown error"));
  }
  open_adapter = reinterpret_cast<PFND3D10DDI_OPENADAPTER>(dlsym(handle, "OpenAdapter10_2"));
  if (open_adapter == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " does not export OpenAdapter10_2 (not a user-mode driver)"));
  }
  {
    Loaded& loaded = LoadedLibraries();
    std::lock_guard<std::mutex> lock(loaded.mu);
    if (std::find(loaded.handles.begin(), loaded.handles.end(), handle) == loaded.handles.end()) {
      loaded.handles.push_back(handle);
    }
  }
  annotate_begin =
      reinterpret_cast<PFN_CLTRACE_ANNOTATE_BEGIN>(dlsym(handle, "CltraceAnnotateBegin"));
  annotate_end = reinterpret_cast<PFN_CLTRACE_ANNOTATE_END>(dlsym(handle, "CltraceAnnotateEnd"));
  trace_seq = reinterpret_cast<PFN_CLTRACE_TRACE_SEQ>(dlsym(handle, "CltraceTraceSeq"));
  annotate_marker =
      reinterpret_cast<PFN_CLTRACE_ANNOTATE_MARKER>(dlsym(handle, "CltraceAnnotateMarker"));
  if (annotate_begin == nullptr || annotate_end == nullptr) {
    {
      Loaded& loaded = LoadedLibraries();
      std::lock_guard<std::mutex> lock(loaded.mu);
      if (std::find(loaded.handles.begin(), loaded.handles.end(), handle) == loaded.handles.end()) {
        loaded.handles.push_back(handle);
      }
    }
    annotate_begin = nullptr;
    annotate_end = nullptr;
  }
  return absl::OkStatus();
}

std::vector<std::string> DriverLibrary::DriverViolations() const { return ViolationsOf(handle); }

gpu::DecodePrivateDrawsFn DriverLibrary::DecodePrivateDraws() const {
  return reinterpret_cast<gpu::DecodePrivateDrawsFn>(
      FindDriverExport(handle, gpu::kDecodePrivateDrawsSymbol));
}

std::vector<std::string> ViolationsOf(void* handle) {
  ViolationsFn fn = FindViolationsFn(handle);
  if (fn == nullptr) return {};
  std::string text(fn(nullptr, 0), '\0');
  if (!text.empty()) {
    std::vector<char> buf(text.size() + 1);
    size_t n = fn(buf.data(), buf.size());
    text.assign(buf.data(), std::min(n, text.size()));
  }
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    lines.emplace_back(line);
  }
  return lines;
}

std::vector<std::string> AllDriverViolations() {
  std::vector<void*> handles;
  {
    Loaded& loaded = LoadedLibraries();
    std::lock_guard<std::mutex> lock(loaded.mu);
    handles = loaded.handles;
  }
  std::vector<std::string> lines;
  std::vector<ViolationsFn> seen;
  for (void* h : handles) {
    ViolationsFn fn = FindViolationsFn(h);
    if (fn == nullptr || std::find(seen.begin(), seen.end(), fn) != seen.end()) continue;
    seen.push_back(fn);
    std::vector<std::string> part = ViolationsOf(h);
    lines.insert(lines.end(), part.begin(), part.end());
  }
  return lines;
}

}  // namespace cltrace::runtime::internal

namespace cltrace::runtime {

std::vector<std::string> ProcessDriverViolations() { return internal::AllDriverViolations(); }

void ClearProcessDriverViolations() {
  std::vector<void*> handles;
  {
    internal::Loaded& loaded = internal::LoadedLibraries();
    std::lock_guard<std::mutex> lock(loaded.mu);
    handles = loaded.handles;
  }
  for (void* h : handles) {
    if (auto* clear = reinterpret_cast<void (*)()>(dlsym(h, "CltraceRefDriverClearViolations"))) {
      clear();
    }
  }
}

}  // namespace cltrace::runtime
