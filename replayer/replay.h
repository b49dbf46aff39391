// `cltrace replay`: plays the runtime side of a trace into a user-mode driver and compares
// everything the driver does with the recording.
//
// What is replayed. The calls the runtime made into the driver (adapter, device and DXGI
// layers), top-level or nested inside a callback (a state-refresh re-send is a DDI call nested
// under the State*Cb event that asked for it), are re-issued with their recorded arguments.
// The driver's callbacks (core layer and kernel thunks) are what the driver does: the
// replayer's callback tables observe them and compare them with the recording, in order.
// When the driver asks for a state refresh, the replayer answers by re-issuing the DDI calls
// recorded under that callback; a callback the recording does not show is a divergence.
//
// Handles. Handle memory is allocated with the sizes the replay driver's own CalcPrivate*
// answers give (CalcPrivateDeviceSize for hDrvDevice, CalcPrivateDeferredContextSize for a DC,
// CalcPrivateCommandListSize and the other CalcPrivate*Size for IC objects, the
// CalcDeferredContextHandleSize of the IC object for context-local handles) and recorded
// handle ids are mapped to it; freed memory is quarantined so a late access stays harmless.
// Runtime handles (HRT*) become unique addresses in a reserved inaccessible range. Pointer
// arguments never reach the driver as recorded addresses: table pointers point at the
// replayer's own tables (p11ContextFuncs at the table the replayer then calls that deferred
// context through), pICObject at the replay memory of the recorded handle, output buffers
// (GetCaps pData) at zeroed scratch, and input data the trace has no bytes for (private
// driver data, a pSysMemUP without content) into a read-only zero region.
//
// Content (format/FORMAT.md §3.8; replayer/internal/content.h). When the trace carries the
// bytes the application handed the driver, the driver gets them again: an UpdateSubresourceUP
// (any call of that shape) gets pSysMemUP pointing at a copy of its content, arguments
// otherwise as recorded; at an Unmap with content, the bytes are written into the memory the
// replay driver's matching Map returned (per context, resource and subresource), re-pitched
// from the recorded Map's RowPitch/DepthPitch to the replay's, before the driver's Unmap runs.
// Sizes are checked before the driver runs: an upload's content must be exactly what its box
// and pitches describe over the destination's recorded CreateResource shape, an Unmap's what
// the recorded Map's pitches lay the subresource out as; content on a call that takes no bytes,
// an undefined content id, an Unmap with content and no Map before it (or after a READ map) are
// bad input too. Nothing is written past what the replay driver mapped: a driver whose Map
// answered smaller pitches (already a divergence of the Map) gets what fits, and a Map that gave
// no memory gets nothing; the report says so (ContentSummary::notes).
//
// The kernel (ReplayOptions::kernel). kRecorded (default): kernel-thunk callbacks are answered
// with the recorded outputs (recorded kernel handle values, buffers of the recorded sizes
// allocated by the replayer), so the driver sees the kernel the recording saw, whatever kernel
// produced it, and every kernel call it makes (RenderCb command lengths, allocation counts,
// AllocateCb descriptions...) is compared; kernel-layer events the recording may hold
// (DxgkDdi*/DxgkCb*/GpuFenceRetired) are neither issued nor compared. kModel: the GPU/kernel
// model of wddm/ answers instead, and every kernel-layer call it makes is compared with the
// recorded ones, field by field (replayer/internal/kernel_model.h): submissions, patching,
// fence ids, paging, interrupts, DPCs, and the GPU content digest of every retired fence
// (GpuFenceRetired, when the recording holds those events: a recording made on the model
// does); what the model says about the driver (R74-R78) joins the driver's violations, and
// the GPU content digest after each recorded kernel wait is reported. Those checkpoint digests
// are for replay-to-replay and driver-to-driver comparison (the recording holds none). The
// GPU content depends on the bytes the application wrote (Map, UpdateSubresourceUP sources):
// a replay that does not feed the recorded bytes back to the driver cannot reproduce the
// recorded fence digests of a workload that wrote non-zero data. With ReplayOptions::digest the
// report adds a digest of the submitted command buffers (driver and runtime handle addresses
// replaced by recorded handle ids). The digest is stable in kSingle mode; in kRecorded mode calls
// that overlapped in the recording may overlap in any order again, and a driver that numbers
// objects in arrival order writes different numbers into its commands.
//
// Compared: return values (sizes included), output fields, which callbacks are made and in what
// order with which arguments (SetErrorCb codes, state-refresh requests, kernel calls). The
// first divergence is reported with its seq, expected vs. actual and the recent recorded
// history of the handles involved; keep_going reports all.
//
// Threads. kRecorded: one replay thread per recorded thread; calls start in recorded seq order
// and a call waits for every call that had returned before it started in the recording, so
// every ordering the recording shows is kept (calls that overlapped may overlap, except the
// fault sites below: each CreateCommandList / RecycleCreateCommandList /
// RecycleCreateDeferredContext also waits for the one before it to return, so that the driver,
// which counts them in arrival order, fails the recorded Nth). kSingle: every call on the
// calling thread in seq order.
//
// Fault injection (ReplayOptions::injections): only through a driver's own configuration
// interface. The reference driver exports CltraceRefDriverConfigure; "oom:FN:N" becomes its
// "oom:FN=N" item (FN one of RecycleCreateCommandList, RecycleCreateDeferredContext,
// CreateCommandList) and "removed:N" its "removed=N", appended to $CLTRACE_REFDRIVER_CONFIG.
// The driver then fails its Nth such call the way the DDI allows and the report shows what it
// did (the return value, the SetErrorCb, the callbacks that follow). The replayer never fakes a
// driver's answer, so a driver without that interface cannot take injections (bad input).
//
// DX6 (replayer/internal/dx6_replay.h). The DX6-layer calls of a trace (CanCreateD3DBuffer ...
// D3dDrawPrimitives2: the DX6 runtime into its driver, ddi-spec §7) are replayed into the DX6
// driver ReplayOptions::dx6_driver makes (`cltrace replay`: the model driver of dx6/,
// gpu::Dx6Driver) in seq order on the calling thread, in both thread
// modes, with the recorded command and vertex bytes written into its buffers, and compared like
// the D3D11 calls; the D3D11 calls of the same trace go to `driver_path` as usual. The DX6
// driver's planted bugs come from the same configuration as the reference driver's:
// "bug=R79" / "bug=R80" items of $CLTRACE_REFDRIVER_CONFIG go to the DX6 driver (and are taken
// out of what the D3D11 driver is given). A DX6 call nested in another call (or with calls in
// it), overlapping DX6 calls, surfaces no call created, a NULL argument structure, or content of
// the wrong size are bad input.
//
// Hostile input: every event is validated before the driver is given it (format::ValidateArgs,
// call nesting, sizes beyond the limits of replayer/internal/plan.h, handle ids the trace does
// not define); handles used before any call created them are caught before the call is made.
// Either is bad input (exit 2) naming the seq; the driver never receives a garbage pointer.
// The trace is planned and validated segment by segment (ReplayStream; a segment holds whole
// call trees, ReplayOptions::segment_events), each before any of its calls reaches the driver,
// and the rest of the trace is still validated after the replay stopped: bad input anywhere is
// the verdict, as when the whole trace was checked first (the driver may then have run the
// calls of the segments before it).
//
// Memory (ReplayStream): a segment of events, the history tail, and per live handle its slot,
// memory and bookkeeping; destroyed handles leave the maps (after the quarantine).
//
// Output is byte-deterministic: no replay addresses, no timestamps (see FormatReport).
//
// Thread-safety: one replay per process at a time (the driver's callbacks find the active
// replay through a process-wide pointer); Replay() serialises concurrent callers.
//
// Example:
//   ReplayOptions o;
//   o.driver_path = "build/lib/libcltrace_refdriver.so";
//   absl::StatusOr<ReplayResult> r =
//       Replay(o, trace.events, trace.handles, trace.strings, trace.contents);
//   if (r.ok()) std::cout << FormatReport(*r, trace.events, trace.handles, trace.strings, o);
#ifndef CLTRACE_REPLAYER_REPLAY_H_
#define CLTRACE_REPLAYER_REPLAY_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ddi/call_ids.h"
#include "ddi/ddi_abi.h"
#include "format/event.h"
#include "wddm/violation.h"

namespace cltrace::replay {

inline constexpr int kExitIdentical = 0;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitDivergent = 3;

enum class ThreadMode { kRecorded, kSingle };

// Who answers the driver's kernel-thunk calls. kRecorded: the recorded outputs (any kernel the
// recording was made on). kModel: the GPU/kernel model of wddm/, whose kernel-layer calls and
// GPU content digests are compared with the recording's (see replayer/internal/kernel_model.h).
enum class KernelMode { kRecorded, kModel };

// One --inject item.
struct Injection {
  std::string kind;      // "oom" or "removed"
  std::string function;  // oom: the DDI that fails
  uint64_t n = 0;        // the Nth call (1-based)
};
// Parses "oom:RecycleCreateCommandList:3" or "removed:N". InvalidArgument otherwise.
absl::StatusOr<Injection> ParseInjection(absl::string_view spec);

// The DX6 driver a trace's DX6-layer calls replay into (replayer/internal/dx6_replay.h): its
// two tables and what a DX6 runtime learns outside them (D3dContextCreate, which the catalog
// lacks; where a buffer's memory is, which a runtime holds from its Lock). The
// replayer calls it from one thread. `cltrace replay` gives the DX6 model driver of dx6/
// (cli/dx6_model_driver.h).
class Dx6Driver {
 public:
  virtual ~Dx6Driver() = default;
  virtual const DD_D3DBUFCALLBACKS* buffer_callbacks() = 0;
  virtual const D3DHAL_CALLBACKS3* hal_callbacks3() = 0;
  virtual D3DHAL_HCONTEXT CreateContext() = 0;
  // The memory of the buffer `surface` names as it is now (empty if the driver holds none):
  // where the replay writes what the recorded runtime wrote into the memory its
  // CreateD3DBuffer / LockD3DBuffer gave. Never a recorded or stale address.
  virtual absl::Span<uint8_t> BufferMemory(DD_HSURFACE surface) = 0;
};
// Makes the DX6 driver of one replay with `bug` planted (from a bug=R79 / bug=R80 item of
// $CLTRACE_REFDRIVER_CONFIG; kNone otherwise).
using Dx6DriverFactory = std::function<std::unique_ptr<Dx6Driver>(gpu::PlantedBug bug)>;

struct ReplayOptions {
  std::string driver_path;  // a library exporting OpenAdapter10_2 (required)
  // The DX6 driver (required for a trace with DX6-layer calls, else unused).
  Dx6DriverFactory dx6_driver;
  ThreadMode threads = ThreadMode::kRecorded;
  KernelMode kernel = KernelMode::kRecorded;
  uint64_t until_seq = 0;  // replay top-level calls with seq <= until_seq only (0: all)
  bool keep_going = false;
  std::vector<Injection> injections;
  bool digest = false;  // report the submitted-command digest (see the header comment)
  size_t history = 4;   // recorded calls per handle shown with a divergence
  // ReplayStream: events per segment (a segment ends where no recorded call is in flight, so
  // it may run longer), and the earlier events kept for a divergence's history.
  size_t segment_events = size_t{1} << 14;
  size_t history_events = size_t{1} << 14;
  // KernelMode::kModel with recorded threads: how long a kernel thunk waits for its recorded
  // turn before the replay gives that turn up as never coming and reports it (a divergence
  // naming the seq and thread waited for; KernelSummary::turn_timeouts). Shorter only in tests.
  std::chrono::milliseconds kernel_turn_timeout{30000};
};

enum class Outcome { kIdentical, kDivergent, kBadInput };

struct Divergence {
  uint64_t seq = 0;  // recorded position where the replay departs from the recording
  uint32_t tid = 0;  // recorded thread
  format::CallId call = format::CallId::kInvalid;
  std::string expected;
  std::string actual;
  std::vector<uint64_t> handles;  // handle ids involved (recorded)
  // ReplayStream: the history lines FormatReport prints under it (computed while the events
  // before it were still held); FormatReport given no events prints this instead.
  std::string history;
};

struct KernelSummary {
  uint64_t submissions = 0;    // RenderCb + PresentCb calls the driver made
  uint64_t command_bytes = 0;  // CommandLength summed over RenderCb
  uint64_t digest = 0;         // of the submitted command buffers (see header comment)
  // KernelMode::kModel only.
  bool model = false;
  uint64_t kernel_calls_compared = 0;  // recorded DxgkDdi*/DxgkCb* events the model matched
  uint64_t dma_buffers = 0;            // DMA buffers the model built
  uint64_t fences = 0;                 // DMA + paging buffers submitted to the GPU
  // The recording holds GpuFenceRetired events (the GPU content digest of every retired fence,
  // wddm/dxgkrnl.h); if so, how many the model matched and compared. Older recordings have
  // none: the model's are then not compared.
  bool fence_digests_recorded = false;
  uint64_t fence_digests_compared = 0;
  // GPU content digest (every live allocation, gpu::Dxgkrnl::CombinedDigest) after each
  // top-level Flush and Present, as of the kernel work the recording shows before the call
  // returned, and all of them folded (FNV-1a).
  struct Checkpoint {
    uint64_t seq = 0;
    format::CallId call = format::CallId::kInvalid;
    uint64_t digest = 0;
  };
  std::vector<Checkpoint> checkpoints;
  uint64_t gpu_digest = 0;
  // Waits for a recorded kernel turn that gave up after ReplayOptions::kernel_turn_timeout
  // (each is also a divergence).
  uint64_t turn_timeouts = 0;
  uint64_t model_ns = 0;  // wall time inside the model (not in the report: not deterministic)
};

// What the trace's content (the bytes the application handed the driver, FORMAT.md §3.8)
// contributed to the replay.
struct ContentSummary {
  uint64_t uploads = 0;  // UpdateSubresourceUP-family calls given the recorded source bytes
  uint64_t unmaps = 0;   // Unmaps before which the recorded bytes were written into the mapping
  uint64_t bytes = 0;    // bytes handed over (payload: rows × row bytes for mappings)
  // CreateResource calls whose pInitialDataUP entries pointed at the recorded initial data, and
  // how many bytes that was (not counted in `bytes`).
  uint64_t initial_data = 0;
  uint64_t initial_data_bytes = 0;
  // DX6: D3dDrawPrimitives2 calls whose command (and vertex) bytes were written into the
  // replay's buffers, and how many bytes that was (replayer/internal/dx6_replay.h).
  uint64_t dx6_draws = 0;
  uint64_t dx6_bytes = 0;
  // Where less than the recorded bytes reached the driver, by recorded seq: "seq S: why".
  std::vector<std::string> notes;
};

struct ReplayResult {
  Outcome outcome = Outcome::kIdentical;
  uint64_t calls = 0;                   // recorded calls and callbacks covered
  std::vector<Divergence> divergences;  // sorted by seq
  // kBadInput: where and why.
  uint64_t bad_seq = 0;
  uint32_t bad_tid = 0;
  format::CallId bad_call = format::CallId::kInvalid;
  std::string bad_message;
  // Where the replay stopped early: --until, or a recorded call that never returned.
  uint64_t until_seq = 0;
  uint64_t never_returned_seq = 0;
  KernelSummary kernel;
  ContentSummary content;
  // DX6-layer calls replayed into the DX6 model driver (included in `calls`).
  uint64_t dx6_calls = 0;
  // Lines the driver's violation channel (CltraceRefDriverViolations) reported during the
  // replay, with driver handle addresses replaced by recorded handle tokens and the driver's
  // own call numbers ("seq=N") left out; sorted.
  std::vector<std::string> driver_violations;
};

// Replays `events` (sorted by seq, as format::LoadTrace / ParseJsonl deliver them);
// `contents` is the trace's content table (TraceReader::contents(), JsonlTrace::contents). Bad
// input is a result (Outcome::kBadInput), not an error; an error status means the replay could
// not run at all (the driver cannot be loaded, an injection it cannot take).
absl::StatusOr<ReplayResult> Replay(const ReplayOptions& options,
                                    absl::Span<const format::Event> events,
                                    const format::TokenTable& handles,
                                    const format::TokenTable& strings,
                                    const format::TokenTable& contents);
// A trace without a content table: an event naming a content id is bad input.
absl::StatusOr<ReplayResult> Replay(const ReplayOptions& options,
                                    absl::Span<const format::Event> events,
                                    const format::TokenTable& handles,
                                    const format::TokenTable& strings);

// What a streaming replay held (its own counters: the memory bound is structural).
struct StreamReplayStats {
  uint64_t events_read = 0;          // events taken from the source
  uint64_t segments = 0;             // segments planned
  uint64_t peak_segment_events = 0;  // most events in one segment
  uint64_t peak_history_events = 0;  // most earlier events kept for divergence histories
  uint64_t peak_parent_tail = 0;     // most earlier calls kept for the nesting checks
  uint64_t peak_live_handles = 0;    // most handles with replay memory at a segment's end
  uint64_t peak_handle_map = 0;      // most entries of the driver-address -> handle map
  uint64_t peak_quarantined = 0;     // most freed handle blocks kept in the quarantine
  uint64_t peak_pending_async = 0;   // most top-level callbacks waiting to be matched
  uint64_t peak_open_mappings = 0;   // most Maps waiting for their Unmap
  bool stopped_early = false;        // --until: the source was not read to its end
};

// Replays the events `next` delivers in seq order (format::SeqStream::Next) without holding
// the trace: segment by segment (a segment holds whole call trees and ends where no recorded
// call is in flight), the handle map, handle memory, threads and checks carried across. The
// verdict, report and exit code are Replay's on the same events (bad input anywhere wins over
// a divergence, as when every event is validated first: the source is read to its end, or to
// what --until needs, even after the replay stopped), except that a divergence's history
// looks back at most ReplayOptions::history_events events before the segment it is in.
// `handles`, `strings` and `contents` are the source's tables as of the events delivered (they
// may grow while reading). KernelMode::kModel needs the whole trace (Replay): InvalidArgument.
// With until_seq, reading stops after the last call the replay needs.
absl::StatusOr<ReplayResult> ReplayStream(const ReplayOptions& options,
                                          const std::function<bool(format::Event*)>& next,
                                          const format::TokenTable& handles,
                                          const format::TokenTable& strings,
                                          const format::TokenTable& contents,
                                          StreamReplayStats* stats = nullptr);

// The report: first line `replay: identical (N calls)`, `replay: divergence at seq S (fn F,
// tid T): expected X, actual Y` or `replay: bad input at seq S (fn F, tid T): message`; then
// per divergence the recent recorded history of its handles; with keep_going every divergence
// and a count; then the kernel summary (with --kernel model, how many kernel turns were given
// up after ReplayOptions::kernel_turn_timeout, when any were), what content was handed over
// (when any was) and the driver's violations.
std::string FormatReport(const ReplayResult& result, absl::Span<const format::Event> events,
                         const format::TokenTable& handles, const format::TokenTable& strings,
                         const ReplayOptions& options);

// Replay + report; returns kExitIdentical, kExitDivergent or kExitBadInput.
int RunReplay(const ReplayOptions& options, absl::Span<const format::Event> events,
              const format::TokenTable& handles, const format::TokenTable& strings,
              const format::TokenTable& contents, std::ostream& out, std::ostream& err);
// A trace without a content table.
int RunReplay(const ReplayOptions& options, absl::Span<const format::Event> events,
              const format::TokenTable& handles, const format::TokenTable& strings,
              std::ostream& out, std::ostream& err);

}  // namespace cltrace::replay

#endif  // CLTRACE_REPLAYER_REPLAY_H_
