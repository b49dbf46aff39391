// The cltrace recorder: captures every DDI call and callback between a runtime and a
// user-mode driver into a .cltrace file, cheaply enough to leave on.
//
// Two ways in:
// - libcltrace_shim.so (recorder/shim.cc) exports the driver entry point OpenAdapter10_2;
//   a runtime that loads it as its driver gets every table wrapped (configuration from the
//   environment, recorder/README.md). `cltrace record` sets that up for a program.
// - This in-process API, for tests and embedding: start a Recorder, then route a driver
//   through OpenAdapter() (which wraps everything below the adapter, as the shim does) or wrap
//   individual tables with WrapDevice / WrapCoreLayer / WrapKernelCallbacks.
//
// How it records (recorder/internal/core.h): each wrapped slot holds a generated thunk that
// finds its context from the call's first parameter, takes an entry position from one
// process-wide counter, captures the arguments, calls the real function, takes the exit
// position, captures the outputs and appends a record to its thread's ring. One background
// thread turns records into events (interning handles and annotation strings, deriving
// timestamps), compresses and writes chunks, and flushes periodically, at Stop, at exit and on
// fatal signals. When it falls behind, producers wait (counted in Stats) and never drop a call.
// A write failure stops the file (the prefix stays readable) but calls keep being forwarded.
//
// Thread-safety: the wrapping functions and thunks may be used from any thread. At most one
// Recorder is active per process; Start/Stop/Flush must not race with each other. Thunks keep
// forwarding (without recording) when no Recorder is active.
//
// Example:
//   recorder::Options o;
//   o.output_path = "t.cltrace";
//   auto rec = recorder::Recorder::Start(std::move(o));
//   if (!rec.ok()) return rec.status();
//   D3D10DDIARG_OPENADAPTER open{...};
//   HRESULT hr = recorder::OpenAdapter(driver_open_adapter, &open);  // pAdapterFuncs_2 wrapped
//   ... use the adapter and everything created from it ...
//   recorder::Stats stats = (*rec)->Stop();
#ifndef CLTRACE_RECORDER_RECORDER_H_
#define CLTRACE_RECORDER_RECORDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ddi/ddi_abi.h"
#include "format/trace_writer.h"

namespace cltrace::recorder {

enum class TimestampMode {
  // Entry times derived from positions and (position, clock) samples the background thread
  // takes every poll: no clock read on the hot path. A call's time is the sample taken just
  // before its entry position: a lower bound, exact to within one poll interval.
  kDerived,
  // CLOCK_MONOTONIC read at every call entry (costs a vDSO call per call).
  kClock,
};

// Sees what the drainer hands the trace writer, on the drainer's thread (`cltrace record
// --check` feeds its checker from it). Definitions come before the first event using them.
// Each OnEvents batch is one thread's events in seq order; batches of different threads
// interleave, so a consumer wanting seq order orders them itself (every position 1, 2, ...
// is the seq or end of exactly one event, except the holes of calls lost).
class EventObserver {
 public:
  virtual ~EventObserver() = default;
  // Handle value `raw_value` is id `id` of the trace's handle table (ids 1, 2, ... in order).
  virtual void OnHandle(uint64_t id, uint64_t raw_value) = 0;
  // String `id` of the trace's string table is `text` (may repeat an id already told).
  virtual void OnString(uint64_t id, absl::string_view text) = 0;
  virtual void OnEvents(absl::Span<const format::Event> events) = 0;
};

struct Options {
  // Not owned; must outlive Stop. Only events that go to a trace are shown (none when the
  // output could not be opened).
  EventObserver* observer = nullptr;
  // Where the trace goes: `sink` if set, else the file `output_path`.
  std::string output_path;
  std::unique_ptr<format::ByteSink> sink;
  // Seal and write the current chunk at least this often (0: only when chunks fill, at
  // Flush/Stop and on fatal signals).
  int64_t flush_period_ms = 1000;
  // Background poll interval (it polls at once again while rings are busy).
  int64_t poll_interval_us = 1000;
  // Per-thread ring size, for threads whose first recorded call comes after Start (a
  // thread keeps its ring, and a ring of a thread that ended is reused by a new one).
  size_t thread_buffer_bytes = size_t{1} << 20;
  TimestampMode timestamps = TimestampMode::kDerived;
  // Flush on SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, then re-raise with the previous action.
  bool install_signal_handlers = false;
  // Written into the trace header.
  std::string driver_path;
  std::vector<std::string> argv;
  // Chunk size and compression (the background thread compresses). The recorder writes
  // format 2 (position runs, format/FORMAT.md §3.7), which is what keeps finely interleaved
  // threads compact. Level 3: on the issue #15 stream it gives the bytes of level 6 (1.98 per
  // call) for about half the drainer's CPU (zstd is ~75% of it); level 6 makes smaller
  // traces of short, varied runs (smallcl: 7% smaller). recorder/README.md has the figures.
  size_t chunk_bytes = size_t{1} << 20;
  int zstd_level = 3;
  // Threads that can record at the same time (slots of the recording region; a thread that
  // ends frees its slot; more threads wait for one).
  uint32_t max_threads = 256;
  // The draining thread's nice value (0: the process's). `cltrace record` gives it 10: on a
  // machine with fewer cores than busy threads, the recorded program is then not preempted
  // by its drainer, which runs in the time the program leaves; when it falls behind,
  // producers wait for it (Stats::producer_waits) and nothing is lost.
  int drain_nice = 0;
  // Service mode (`cltrace record`): drain the recording region another process writes into,
  // named `region` (CreateRecordingRegion); nothing in this process is recorded.
  // The writer's failure to open is then no error of Start: the region is drained and
  // discarded, and Stats::output_error says why.
  std::string region;
  uint32_t pid = 0;  // the recorded process (trace header); 0: this one
};

// Creates a recording region that a child process inherits: `max_threads` slots of
// `thread_buffer_bytes` each. Returns its name for the child ($CLTRACE_REGION: "fd:N", a memfd
// without close-on-exec, or "sysv:ID"); this process keeps it mapped (the drainer maps it
// again).
absl::StatusOr<std::string> CreateRecordingRegion(uint32_t max_threads, size_t thread_buffer_bytes);

struct Stats {
  uint64_t calls = 0;             // records produced by the application's threads
  uint64_t events_written = 0;    // events in chunks written to the sink
  uint64_t bytes_written = 0;     // bytes written to the sink
  uint64_t producer_waits = 0;    // times a thread found its ring full and waited
  uint64_t producer_wait_ns = 0;  // total time spent waiting
  uint64_t write_failures = 0;    // failed writes (the file stops at the first one)
  // Calls recorded but not in the file (a write failure, or an event the format rejected):
  // after Stop, calls == events_written + events_discarded exactly.
  uint64_t events_discarded = 0;
  uint64_t threads = 0;            // application threads that made calls
  uint64_t background_cpu_ns = 0;  // CPU time of the recorder's background thread
  // Content capture (recorder/README.md, "Content capture"): calls whose bytes were captured,
  // how many bytes (before deduplication), calls whose bytes could not be, and why the first.
  uint64_t contents = 0;
  uint64_t content_bytes = 0;
  uint64_t contents_skipped = 0;
  std::string first_content_skip;
  std::string first_error;  // the first write/open error, if any
  // Calls entered but never committed (the process died inside them): their positions are the
  // trace's holes (format/FORMAT.md §5.5). recorded = calls + calls_in_flight =
  // events_written + calls_lost, exactly.
  uint64_t calls_in_flight = 0;
  uint64_t calls_lost = 0;  // events_discarded + calls_in_flight
  // Service mode: what the recorded process reported through the region.
  bool driver_opened = false;  // the program loaded a driver through the shim
  std::string driver_error;    // the shim could not load the real driver
  uint64_t adapters_opened = 0;
  std::string output_error;  // the trace could not be created (nothing written)
};

class Recorder {
 public:
  // Starts recording (at most one active Recorder per process: FailedPrecondition
  // otherwise). Errors opening the output are returned; the caller (the shim) then keeps
  // forwarding without recording.
  static absl::StatusOr<std::unique_ptr<Recorder>> Start(Options options);
  ~Recorder();  // Stop() if still running.

  // Writes everything recorded so far (calls that have returned) and seals the chunk.
  absl::Status Flush();
  // Stops recording, writes the rest, the index, closes the sink. Idempotent.
  Stats Stop();
  Stats stats() const;

  class Impl;

 private:
  explicit Recorder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- Table wrapping (process-wide; thunks forward always, record while a Recorder runs) ----

// Opens an adapter through the real driver's entry point, handing the driver a table of the
// recorder's own and filling args->pAdapterFuncs_2 with thunks. Every device created through it
// (its IC table, DXGI table, core-layer and kernel callbacks) and every deferred context
// created on those devices is wrapped the same way. OpenAdapter itself is not a catalog call
// and is not recorded.
HRESULT OpenAdapter(PFND3D10DDI_OPENADAPTER driver_open_adapter, D3D10DDIARG_OPENADAPTER* args);

// A core-layer callback table of the runtime's: returns the table to hand the driver (owned by
// the recorder, valid for the process's life). The runtime may later replace pointers in
// `runtime_callbacks` (R6); the returned table follows (see recorder/internal/contexts.h).
const D3D11DDI_CORELAYER_DEVICECALLBACKS* WrapCoreLayer(
    D3D10DDI_HRTCORELAYER layer, const D3D11DDI_CORELAYER_DEVICECALLBACKS* runtime_callbacks);

// The runtime's kernel-thunk callbacks for the runtime device `device`.
const D3DDDI_DEVICECALLBACKS* WrapKernelCallbacks(HANDLE device,
                                                  const D3DDDI_DEVICECALLBACKS* runtime_callbacks);

// The kernel layer below the runtime (ddi-spec §6): the KMD's entry points and the Dxgkrnl
// callbacks the KMD calls. Process-wide tables (one real table each; calling again replaces
// it): returns the table to use instead, owned by the recorder. Their calls are recorded like
// the others, nested under the call they happen in (e.g. DxgkDdiRender inside pfnRenderCb).
const DRIVER_INITIALIZATION_DATA* WrapKmd(const DRIVER_INITIALIZATION_DATA* real);
const DXGKRNL_INTERFACE* WrapDxgkrnl(const DXGKRNL_INTERFACE* real);
// The model GPU's observer (CLTRACE_GPU_OBSERVER, our own table, layer dxgkrnl): one
// GpuFenceRetired per retired fence with the GPU content digest, recorded the same way.
const CLTRACE_GPU_OBSERVER* WrapGpuObserver(const CLTRACE_GPU_OBSERVER* real);
// The DX6 driver's tables (ddi-spec §7): the D3D buffer callbacks and D3dDrawPrimitives2, the
// same way (process-wide; the calls carry their own context and surface handles).
const DD_D3DBUFCALLBACKS* WrapDx6Buffers(const DD_D3DBUFCALLBACKS* real);
const D3DHAL_CALLBACKS3* WrapDx6Hal(const D3DHAL_CALLBACKS3* real);

struct DeviceTables {
  D3D10DDI_HDEVICE device{};  // the IC handle, or a DC's hDrvContext
  // The driver's filled table, read at every call (must outlive the wrapping).
  const D3D11DDI_DEVICEFUNCS* driver_funcs = nullptr;
  // The runtime's table: every non-null driver slot gets a thunk, null slots stay null.
  D3D11DDI_DEVICEFUNCS* runtime_funcs = nullptr;
  // Optional DXGI table (IC only), same convention.
  const DXGI_DDI_BASE_FUNCTIONS* driver_dxgi = nullptr;
  DXGI_DDI_BASE_FUNCTIONS* runtime_dxgi = nullptr;
  // The context's core layer (already wrapped with WrapCoreLayer), kept in step at every call
  // through this table (R6); null handle: none.
  D3D10DDI_HRTCORELAYER core_layer{};
  // For a DC: its device's IC handle (already wrapped). Null: this is an IC.
  D3D10DDI_HDEVICE immediate{};
};
// Wraps one device-table context. InvalidArgument for a null handle or table,
// FailedPrecondition if `immediate` is not a wrapped device.
absl::Status WrapDevice(const DeviceTables& tables);
// Forgets a wrapped context (its handle is then unknown to the thunks).
void UnwrapDevice(D3D10DDI_HDEVICE device);

// Annotations: the runtime's current API call on this thread (see runtime/annotation.h);
// only the outermost Begin/End pair of a thread counts. `api_call` must stay valid for the
// life of the process (a string literal).
void AnnotateBegin(const char* api_call);
void AnnotateEnd();
// An application marker (runtime/annotation.h, CltraceAnnotateMarker: "BeginEvent: Shadow
// pass"): kept for the next call this thread records, whose annotation then ends with it
// ("Draw | BeginEvent: Shadow pass"); several markers before one call are joined with " | ".
// Copied; ignored while not recording.
void AnnotateMarker(const char* marker);

// The trace position of the innermost recorded call in flight on the calling thread, else of
// the thread's last outermost call, else 0 (runtime/annotation.h, CltraceTraceSeq): what
// violation reports print so that their seq is the one `cltrace check` reports.
uint64_t CurrentTraceSeq();

}  // namespace cltrace::recorder

#endif  // CLTRACE_RECORDER_RECORDER_H_
