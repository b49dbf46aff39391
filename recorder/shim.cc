// libcltrace_shim.so: a user-mode driver library that records. It exports the driver entry
// point OpenAdapter10_2 (loading the real driver and wrapping everything it returns), the
// runtime's annotation hooks CltraceAnnotateBegin/End (runtime/annotation.h) and its
// kernel-layer hook CltraceWrapKernelTable (runtime/kernel.h).
//
// Configuration (environment, read at the first OpenAdapter10_2; recorder/README.md):
//   CLTRACE_SHIM_DRIVER     the real driver (default: libcltrace_refdriver.so next to the shim)
//   CLTRACE_SHIM_OUTPUT     the trace file (default: cltrace-<pid>.cltrace)
//   CLTRACE_SHIM_FLUSH_MS   flush period in ms (default 1000; 0 = only when chunks fill)
//   CLTRACE_SHIM_BUFFER_KB  per-thread ring size (default 1024)
//   CLTRACE_SHIM_TIMESTAMPS derived (default) | clock
//   CLTRACE_SHIM_SIGNALS    0 disables the fatal-signal flush (default 1)
//   CLTRACE_SHIM_STATS      file that receives the recorder's statistics at exit
//   CLTRACE_SHIM_ZSTD_LEVEL zstd level of the chunks (default: recorder::Options)
// The trace is finished at process exit (or on a fatal signal, up to the last flushed call).
// If the output cannot be opened, calls are forwarded without recording and the error is
// printed on stderr (and written to CLTRACE_SHIM_STATS).
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "recorder/recorder.h"

#define CLTRACE_EXPORT extern "C" __attribute__((visibility("default")))

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
  std::string error;         // why nothing is recorded, if so
  std::string output_error;  // the trace could not be created (Recorder::Start failed)
  std::string driver_error;  // the real driver could not be loaded: nothing is recorded
  std::unique_ptr<Recorder> recorder;
  std::string stats_path;
  // OpenAdapter10_2 calls: the runtime counts them as DDI calls, but the entry point is not a
  // catalog call and so not in the trace; `cltrace record` reports them beside the calls.
  uint64_t adapters_opened = 0;
  bool served = false;  // under `cltrace record`: the service writes the trace
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
  int64_t v;
  const std::string s = Env(name);
  return !s.empty() && absl::SimpleAtoi(s, &v) ? v : fallback;
}

std::string DirOfShim() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&DirOfShim), &info) != 0 && info.dli_fname != nullptr) {
    std::string p = info.dli_fname;
    size_t slash = p.rfind('/');
    return slash == std::string::npos ? std::string(".") : p.substr(0, slash);
  }
  return ".";
}

std::vector<std::string> ProcessArgv() {
  std::vector<std::string> argv;
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string arg;
  while (std::getline(in, arg, '\0')) argv.push_back(arg);
  return argv;
}

// "key value" lines, the format of CLTRACE_SHIM_STATS.
std::string StatsText(const ShimState& s, const Stats& st) {
  std::string text = absl::StrCat(
      "calls ", st.calls, "\nevents ", st.events_written, "\nbytes ", st.bytes_written, "\nwaits ",
      st.producer_waits, "\nwait_ns ", st.producer_wait_ns, "\nwrite_failures ", st.write_failures,
      "\ndiscarded ", st.events_discarded, "\nthreads ", st.threads, "\nadapters ",
      s.adapters_opened, "\nbackground_cpu_ns ", st.background_cpu_ns, "\ncontents ", st.contents,
      "\ncontent_bytes ", st.content_bytes, "\ncontents_skipped ", st.contents_skipped, "\n");
  if (!st.first_content_skip.empty()) {
    absl::StrAppend(&text, "content_skip ", st.first_content_skip, "\n");
  }
  const std::string& err = !s.error.empty() ? s.error : st.first_error;
  if (!err.empty()) absl::StrAppend(&text, "error ", err, "\n");
  if (!s.output_error.empty()) absl::StrAppend(&text, "output_error ", s.output_error, "\n");
  if (!s.driver_error.empty()) absl::StrAppend(&text, "driver_error ", s.driver_error, "\n");
  return text;
}

void WriteStatsText(const ShimState& s, const std::string& text) {
  if (s.stats_path.empty()) return;
  std::FILE* f = std::fopen(s.stats_path.c_str(), "w");
  if (f == nullptr) return;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

void WriteStats(const ShimState& s, const Stats& st) { WriteStatsText(s, StatsText(s, st)); }

// Written when the driver is first loaded, so that `cltrace record` can tell a program that
// never loaded a driver from one that ended without running its exit handlers (_exit, a
// fatal signal): "started 1", and why the trace could not be created if so. The statistics
// at exit replace it.
void WriteStartStats(const ShimState& s) {
  std::string text = "started 1\n";
  if (!s.error.empty()) absl::StrAppend(&text, "error ", s.error, "\n");
  if (!s.output_error.empty()) absl::StrAppend(&text, "output_error ", s.output_error, "\n");
  if (!s.driver_error.empty()) absl::StrAppend(&text, "driver_error ", s.driver_error, "\n");
  WriteStatsText(s, text);
}

// Stops recording once (final flush, index, close); later calls return the same statistics.
// Requires s.mu.
Stats StopLocked(ShimState& s) {
  static Stats* final_stats = nullptr;
  if (final_stats == nullptr) {
    final_stats = new Stats;
    if (s.recorder != nullptr) *final_stats = s.recorder->Stop();
    WriteStats(s, *final_stats);
    if (s.recorder != nullptr && !final_stats->first_error.empty()) {
      std::fprintf(stderr, "cltrace shim: trace incomplete: %s (%llu calls not written)\n",
                   final_stats->first_error.c_str(),
                   static_cast<unsigned long long>(final_stats->events_discarded));
    }
  }
  return *final_stats;
}

bool LoadDriverLocked(ShimState& s);

// Under `cltrace record` (service mode): the service drains the region and writes the trace;
// this process only writes records into it.
void InitServedLocked(ShimState& s, const std::string& region) {
  s.served = true;
  const bool loaded = LoadDriverLocked(s);
  absl::Status st = AttachToRegion(region, Env("CLTRACE_SHIM_TIMESTAMPS") == "clock",
                                   EnvInt("CLTRACE_SHIM_SIGNALS", 1) != 0,
                                   loaded ? std::string() : s.driver_error);
  if (!st.ok()) {
    std::fprintf(stderr, "cltrace shim: not recording: the recording region: %s\n",
                 st.ToString().c_str());
  }
}

// Under `cltrace record`: the region it made, named in $CLTRACE_REGION ("fd:N", "sysv:ID").
std::string RegionName() { return Env("CLTRACE_REGION"); }

// Loads the real driver and starts recording. Requires s.mu.
void InitLocked(ShimState& s) {
  s.initialised = true;
  if (const std::string region = RegionName(); !region.empty()) {
    InitServedLocked(s, region);
    return;
  }
  s.stats_path = Env("CLTRACE_SHIM_STATS");
  if (!LoadDriverLocked(s)) {
    WriteStartStats(s);
    return;
  }
  Options o;
  o.output_path = Env("CLTRACE_SHIM_OUTPUT", absl::StrCat("cltrace-", getpid(), ".cltrace"));
  o.flush_period_ms = EnvInt("CLTRACE_SHIM_FLUSH_MS", 1000);
  o.thread_buffer_bytes = static_cast<size_t>(EnvInt("CLTRACE_SHIM_BUFFER_KB", 1024)) * 1024;
  o.timestamps =
      Env("CLTRACE_SHIM_TIMESTAMPS") == "clock" ? TimestampMode::kClock : TimestampMode::kDerived;
  o.install_signal_handlers = EnvInt("CLTRACE_SHIM_SIGNALS", 1) != 0;
  o.zstd_level = static_cast<int>(EnvInt("CLTRACE_SHIM_ZSTD_LEVEL", o.zstd_level));
  o.driver_path = s.driver_path;
  o.argv = ProcessArgv();
  absl::StatusOr<std::unique_ptr<Recorder>> rec = Recorder::Start(std::move(o));
  if (!rec.ok()) {
    // Never break the application: forward everything, record nothing, say why.
    s.error = absl::StrCat("not recording: ", rec.status().ToString());
    s.output_error = std::string(rec.status().message());
    std::fprintf(stderr, "cltrace shim: %s\n", s.error.c_str());
    WriteStartStats(s);
    return;
  }
  s.recorder = std::move(*rec);
  WriteStartStats(s);
}

// Loads the real driver (s.driver_open); false (s.error, s.driver_error) if it cannot.
bool LoadDriverLocked(ShimState& s) {
  s.driver_path = Env("CLTRACE_SHIM_DRIVER", DirOfShim() + "/libcltrace_refdriver.so");
  s.driver_handle = dlopen(s.driver_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (s.driver_handle == nullptr) {
    const char* e = dlerror();
    s.error = absl::StrCat("cannot load the driver ", s.driver_path, ": ", e ? e : "?");
    std::fprintf(stderr, "cltrace shim: %s\n", s.error.c_str());
    s.driver_error = s.error;
    return false;
  }
  s.driver_open =
      reinterpret_cast<PFND3D10DDI_OPENADAPTER>(dlsym(s.driver_handle, "OpenAdapter10_2"));
  Dl_info self, other;
  if (s.driver_open == nullptr) {
    s.error = absl::StrCat(s.driver_path, " does not export OpenAdapter10_2");
  } else if (dladdr(reinterpret_cast<void*>(s.driver_open), &other) != 0 &&
             dladdr(reinterpret_cast<void*>(&DirOfShim), &self) != 0 &&
             other.dli_fbase == self.dli_fbase) {
    s.error = absl::StrCat(s.driver_path, " is the shim itself (set CLTRACE_SHIM_DRIVER)");
    s.driver_open = nullptr;
  }
  if (s.driver_open == nullptr) {
    std::fprintf(stderr, "cltrace shim: %s\n", s.error.c_str());
    s.driver_error = s.error;
    return false;
  }

  // A driver that reports violations (the reference driver) numbers them with trace positions.
  if (auto set_source = reinterpret_cast<SetTraceSeqSourceFn>(
          dlsym(s.driver_handle, "CltraceSetTraceSeqSource"))) {
    set_source(&CltraceTraceSeq);
  }

  return true;
}

__attribute__((destructor)) void FinishAtExit() {
  ShimState& s = State();
  std::lock_guard<std::mutex> l(s.mu);
  if (!s.initialised || s.served) return;
  StopLocked(s);
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
    ++s.adapters_opened;
    if (s.served) cltrace::recorder::NoteAdapterOpened();
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
