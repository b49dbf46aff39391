// libcltrace_shim.so: a user-mode driver library that records. It exports the driver entry
// point OpenAdapter10_2 (loading the real driver and wrapping everything it returns), the
// runtime's annotation hooks CltraceAnnotateBegin/End (runtime/annotation.h), its
// kernel-layer hook CltraceWrapKernelTable (runtime/kernel.h) and CltraceTraceSeq; nothing
// else is visible. It depends on libc and the C++ runtime only (no protobuf, zstd or Abseil
// library: the capture code it links from the format and ddi archives uses none of them,
// tests/recorder/shim_deps_test.cc), so it loads into any process, one that links those
// libraries itself included.
//
// The shim only writes each call's record into a recording region (recorder/README.md); the
// recording service reads it and writes the trace:
// - under `cltrace record` ($CLTRACE_REGION set) into the region record made, record being
//   the service;
// - otherwise (attach mode) it creates the region itself and starts the service, `cltrace
//   record --attach`, found at $CLTRACE_BIN or ../bin/cltrace beside the shim's directory. If
//   that is impossible it says so once on stderr and forwards every call unrecorded.
//
// Configuration (environment, read at the first OpenAdapter10_2; recorder/README.md):
//   CLTRACE_REGION          set by `cltrace record`: the region to record into
//   CLTRACE_SHIM_DRIVER     the real driver (default: libcltrace_refdriver.so next to the shim)
//   CLTRACE_SHIM_TIMESTAMPS derived (default) | clock
//   CLTRACE_SHIM_SIGNALS    0: no fatal-signal handler (default 1)
//   attach mode only: CLTRACE_SHIM_OUTPUT (default cltrace-<pid>.cltrace), CLTRACE_SHIM_FLUSH_MS,
//   CLTRACE_SHIM_BUFFER_KB, CLTRACE_SHIM_STATS, CLTRACE_SHIM_ZSTD_LEVEL, CLTRACE_BIN
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "recorder/internal/platform.h"
#include "recorder/internal/region.h"
#include "recorder/internal/ring.h"
#include "recorder/producer.h"
#include "recorder/recorder.h"

#if defined(_WIN32)
#define CLTRACE_EXPORT extern "C" __declspec(dllexport)
#else
#define CLTRACE_EXPORT extern "C" __attribute__((visibility("default")))
#endif

// The trace-position hook (its contract is in runtime/annotation.h; declared here by name, as a
// driver would, since the recorder includes nothing of the runtime model).
CLTRACE_EXPORT unsigned long long CltraceTraceSeq(void);
using SetTraceSeqSourceFn = void (*)(unsigned long long (*)(void));

namespace cltrace::recorder {
namespace {

struct ShimState {
  std::mutex mu;
  bool initialised = false;
  void* driver_handle = nullptr;
  PFND3D10DDI_OPENADAPTER driver_open = nullptr;
  std::string driver_path;
  std::string driver_error;  // the real driver could not be loaded: nothing is recorded
  // Attach mode: the service this shim started (and the watch whose end tells it we are gone).
  platform::Service service;
};

ShimState& State() {
  static ShimState* s = new ShimState;  // never destroyed (thunks may run during exit)
  return *s;
}

std::string Env(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? std::string(v) : fallback;
}

int64_t EnvInt(const char* name, int64_t fallback) {
  const std::string s = Env(name);
  if (s.empty()) return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  return end != nullptr && *end == '\0' ? static_cast<int64_t>(v) : fallback;
}

std::string DirOfShim() { return platform::LibraryDirOf(reinterpret_cast<void*>(&DirOfShim)); }

// Loads the real driver (s.driver_open); false (s.driver_error, said on stderr) if it cannot.
bool LoadDriverLocked(ShimState& s) {
  s.driver_path = Env("CLTRACE_SHIM_DRIVER", DirOfShim() + "/" + platform::DefaultDriverFileName());
  std::string load_error;
  s.driver_handle = platform::LoadLibraryAt(s.driver_path, &load_error);
  if (s.driver_handle == nullptr) {
    s.driver_error = "cannot load the driver " + s.driver_path + ": " + load_error;
  } else {
    s.driver_open = reinterpret_cast<PFND3D10DDI_OPENADAPTER>(
        platform::FindSymbol(s.driver_handle, "OpenAdapter10_2"));
    if (s.driver_open == nullptr) {
      s.driver_error = s.driver_path + " does not export OpenAdapter10_2";
    } else if (platform::LibraryBaseOf(reinterpret_cast<void*>(s.driver_open)) ==
               platform::LibraryBaseOf(reinterpret_cast<void*>(&DirOfShim))) {
      s.driver_error = s.driver_path + " is the shim itself (set CLTRACE_SHIM_DRIVER)";
      s.driver_open = nullptr;
    }
  }
  if (s.driver_open == nullptr) {
    std::fprintf(stderr, "cltrace shim: %s\n", s.driver_error.c_str());
    return false;
  }
  // A driver that reports violations (the reference driver) numbers them with trace positions.
  if (auto set_source = reinterpret_cast<SetTraceSeqSourceFn>(
          platform::FindSymbol(s.driver_handle, "CltraceSetTraceSeqSource"))) {
    set_source(&CltraceTraceSeq);
  }
  return true;
}

// Attach mode: creates the region and starts `cltrace record --attach` on it. Returns the
// region's name for AttachToRegion, or "" (said on stderr) if the service cannot run.
std::string StartServiceLocked(ShimState& s) {
  const std::string bin = Env("CLTRACE_BIN", DirOfShim() + "/../bin/cltrace");
  const uint64_t ring_words = internal::SpscRing::CapacityFor(
      static_cast<size_t>(EnvInt("CLTRACE_SHIM_BUFFER_KB", 1024)) * 1024 / sizeof(uint64_t));
  platform::Mapping m;
  std::string error;
  bool ok = platform::IsExecutable(bin);
  if (!ok) error = "no recording service at " + bin + " (set CLTRACE_BIN)";
  ok = ok && platform::CreateRegion(internal::Region::BytesFor(256, ring_words),
                                    /*inheritable=*/true, &m, &error);
  if (!ok) {
    std::fprintf(stderr, "cltrace shim: not recording (calls pass through unrecorded): %s\n",
                 error.c_str());
    return "";
  }
  internal::Region* region = internal::Region::Init(m.base, 256, ring_words, 0);
  // The platform names the region and the watch (our end of it closing) to the service.
  const std::string pid = std::to_string(platform::ProcessId());
  std::vector<std::string> args = {
      bin,          "record",
      "--attach",   "{region}",
      "--watch-fd", "{watch}",
      "--pid",      pid,
      "-o",         Env("CLTRACE_SHIM_OUTPUT", "cltrace-" + pid + ".cltrace"),
      "--driver",   s.driver_path};
  if (const std::string v = Env("CLTRACE_SHIM_FLUSH_MS"); !v.empty()) {
    args.insert(args.end(), {"--flush-ms", v});
  }
  if (const std::string v = Env("CLTRACE_SHIM_TIMESTAMPS"); !v.empty()) {
    args.insert(args.end(), {"--timestamps", v});
  }
  if (const std::string v = Env("CLTRACE_SHIM_STATS"); !v.empty()) {
    args.insert(args.end(), {"--stats", v});
  }
  if (const std::string v = Env("CLTRACE_SHIM_ZSTD_LEVEL"); !v.empty()) {
    args.insert(args.end(), {"--zstd-level", v});
  }
  if (!platform::StartService(args, m, &s.service, &error)) {
    std::fprintf(stderr, "cltrace shim: not recording (calls pass through unrecorded): %s\n",
                 error.c_str());
    return "";
  }
  region->header()->drainer_pid = static_cast<uint32_t>(s.service.pid);
  return m.handle;
}

// Loads the real driver and attaches to the region: `cltrace record`'s, or (attach mode) one
// of a service started here. Requires s.mu.
void InitLocked(ShimState& s) {
  s.initialised = true;
  const bool loaded = LoadDriverLocked(s);
  std::string region = Env("CLTRACE_REGION");
  if (region.empty()) {
    if (!loaded) return;  // nothing to record
    region = StartServiceLocked(s);
    if (region.empty()) return;
  }
  std::string error;
  if (!AttachToRegion(region, Env("CLTRACE_SHIM_TIMESTAMPS") == "clock",
                      EnvInt("CLTRACE_SHIM_SIGNALS", 1) != 0,
                      loaded ? std::string() : s.driver_error, &error)) {
    std::fprintf(stderr, "cltrace shim: not recording (calls pass through unrecorded): %s\n",
                 error.c_str());
  }
}

// Attach mode: the program ends; the service drains what is left, writes the trace and exits.
// Wait for it (bounded), so the trace is complete when the program's exit status is.
__attribute__((destructor)) void FinishAtExit() {
  ShimState& s = State();
  std::lock_guard<std::mutex> l(s.mu);
  platform::FinishService(&s.service, /*timeout_ms=*/60000);
}

}  // namespace
}  // namespace cltrace::recorder

CLTRACE_EXPORT HRESULT OpenAdapter10_2(D3D10DDIARG_OPENADAPTER* pOpenData) {
  using cltrace::recorder::State;
  auto& s = State();
  PFND3D10DDI_OPENADAPTER open;
  {
    std::lock_guard<std::mutex> l(s.mu);
    if (!s.initialised) cltrace::recorder::InitLocked(s);
    open = s.driver_open;
    cltrace::recorder::NoteAdapterOpened();
  }
  if (open == nullptr) return static_cast<HRESULT>(E_FAIL);
  return cltrace::recorder::OpenAdapter(open, pOpenData);
}

// The runtime model's kernel-layer hook (runtime/kernel.h): called with the KMD's entry
// points ("kmd"), the Dxgkrnl callbacks ("dxgkrnl"), the model GPU's observer
// ("gpu_observer": GpuFenceRetired with the content digest of each retired fence) and the
// runtime's own kernel-thunk table ("kernel_thunks") of every device it creates, before
// OpenAdapter10_2. The first three are wrapped; the last is returned as is: the kernel-thunk
// callbacks are recorded where the driver calls them (D3D10DDIARG_CREATEDEVICE.pKTCallbacks),
// and wrapping the runtime's side too would record each of them twice. A DX6 runtime (the
// dp2 workload) calls it with "dx6_buffers" (DD_D3DBUFCALLBACKS) and "dx6_hal"
// (D3DHAL_CALLBACKS3): wrapped.
CLTRACE_EXPORT const void* CltraceWrapKernelTable(const char* which, const void* table) {
  using cltrace::recorder::State;
  auto& s = State();
  {
    std::lock_guard<std::mutex> l(s.mu);
    if (!s.initialised) cltrace::recorder::InitLocked(s);  // kernel calls come first
  }
  if (which == nullptr) return table;
  if (std::strcmp(which, "kmd") == 0) {
    return cltrace::recorder::WrapKmd(static_cast<const DRIVER_INITIALIZATION_DATA*>(table));
  }
  if (std::strcmp(which, "dxgkrnl") == 0) {
    return cltrace::recorder::WrapDxgkrnl(static_cast<const DXGKRNL_INTERFACE*>(table));
  }
  if (std::strcmp(which, "gpu_observer") == 0) {
    return cltrace::recorder::WrapGpuObserver(static_cast<const CLTRACE_GPU_OBSERVER*>(table));
  }
  if (std::strcmp(which, "dx6_buffers") == 0) {
    return cltrace::recorder::WrapDx6Buffers(static_cast<const DD_D3DBUFCALLBACKS*>(table));
  }
  if (std::strcmp(which, "dx6_hal") == 0) {
    return cltrace::recorder::WrapDx6Hal(static_cast<const D3DHAL_CALLBACKS3*>(table));
  }
  return table;
}

// runtime/annotation.h: the trace position violation reports print.
CLTRACE_EXPORT unsigned long long CltraceTraceSeq(void) {
  return cltrace::recorder::CurrentTraceSeq();
}

CLTRACE_EXPORT void CltraceAnnotateBegin(const char* api_call) {
  cltrace::recorder::AnnotateBegin(api_call);
}

CLTRACE_EXPORT void CltraceAnnotateEnd(void) { cltrace::recorder::AnnotateEnd(); }

CLTRACE_EXPORT void CltraceAnnotateMarker(const char* marker) {
  cltrace::recorder::AnnotateMarker(marker);
}
