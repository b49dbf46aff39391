// The replay's kernel in `--kernel model` mode (ReplayOptions::kernel == KernelMode::kModel):
// a gpu::KernelStack (the model Dxgkrnl, model KMD and GPU of wddm/, default options, the same
// the runtime model runs on) answers the driver's kernel-thunk calls instead of the recorded
// outputs, and every kernel-layer call it makes (DxgkDdi* into the model KMD, DxgkCb* back
// into the model Dxgkrnl, GpuFenceRetired from the model Dxgkrnl to the GPU observer) is
// compared with the kernel-layer events of the recording, in recorded seq order: the call,
// every input field, every output field and the return value. Since the model runs in virtual
// time, a recording made on the model replays into the same submissions, fences, paging,
// interrupts and digests; anything else is a divergence at the recorded event where the model
// departs.
//
// GPU content. GpuFenceRetired(hAdapter, NodeOrdinal, FenceId, ContentDigest, Paging) is the
// model GPU's observation point (CLTRACE_GPU_OBSERVER, our own table, wddm/dxgkrnl.h): once per
// retired fence, the digest of what that ring entry wrote as of the GPU's completion of it
// (wddm/README.md: a function of the entry's own work, not of other threads' calls). A recording
// made on the model holds one event per fence; the model's calls are matched with them like the
// DxgkCb* callbacks (which fence on which node), and a different digest is a divergence of its own
// at the recorded event: "GpuFenceRetired node N fence F: GPU content digest 0x... recorded, actual
// kernel model: 0x... replayed". A recording with no GpuFenceRetired event at all (made before the
// observer existed, e.g. the committed traces of tests/replay/) says nothing about the content: the
// model's GpuFenceRetired calls are then not compared, and the summary says "fence digests: not
// recorded". The digests follow the bytes the driver hands the GPU, so they reproduce only if the
// replay gives the driver the bytes the application wrote (Map/Unmap, UpdateSubresourceUP): zero
// bytes in, the recorded digest of a workload that wrote anything else out is a divergence.
//
// What the recording shows at top level in the kernel layer (kernel threads running while no
// UMD call was in flight: a WaitIdle of the workload, the kernel half of device creation and
// destruction) is driven from the recording: before each top-level call is issued, the kernel
// work recorded before it runs (DxgkDdiCreateDevice -> Dxgkrnl::CreateDevice, a group ending in
// DxgkDdiDestroyDevice -> Dxgkrnl::DestroyDevice, anything else -> Dxgkrnl::WaitIdle).
//
// Handles: the kernel-thunk handles the model hands out (hContext, hKMResource, hAllocation)
// must equal the recorded values (the model numbers them deterministically). KMD and Dxgkrnl
// object handles are heap addresses, different in every process: a recorded handle id is
// bound to the replay's address when a call creates it (an output field) or first passes it,
// and must stay consistent after that.
//
// Threads: the model serialises itself. In ThreadMode::kRecorded, kernel-thunk calls from
// different replay threads are let into the model in the order the recorded kernel took them
// (each waits for the recorded kernel calls before it, or until they will never come), since the
// interleaving of kernel calls decides virtual time, handle numbering and digests. In
// The recorded kernel's order is known for a thunk that made kernel-layer calls of its own
// (its first one); one that made none is placed at its exit by default, which is wrong when it
// took the kernel's lock early and then overlapped others for long (the model's virtual time
// then runs one call behind). Replay() repairs that: when the replay departs from the
// recorded kernel layer inside the span of such a thunk, it retries with the thunk at its
// entry or right before the departure and keeps a placement that gets further
// (AmbiguousKernelThunks, the order_override argument). In
// ThreadMode::kSingle the calls come in the recorded order of the DDI calls that made them: a
// recording in which several threads were inside the kernel at once is not reproducible that
// way (a kernel handle would be numbered differently), so Replay() refuses it up front as bad
// input (SingleThreadKernelOrderConflict) rather than report a divergence on a clean trace;
// replay such traces with --threads recorded.
//
// Thread-safety: every method may be called from any thread.
#ifndef CLTRACE_REPLAYER_INTERNAL_KERNEL_MODEL_H_
#define CLTRACE_REPLAYER_INTERNAL_KERNEL_MODEL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ddi/ddi_abi.h"
#include "format/call_codec.h"
#include "format/event.h"
#include "replayer/internal/plan.h"
#include "replayer/replay.h"
#include "wddm/kernel_stack.h"
#include "wddm/violation.h"

namespace cltrace::replay::internal {

class Session;

// Kernel-thunk events (indices) of `plan` that made no kernel-layer call of their own: where
// the recorded kernel took them is not in the trace (see the class comment), so a replay that
// departs from the recorded kernel layer may try other places for them.
std::vector<uint32_t> AmbiguousKernelThunks(const Plan& plan);

// ThreadMode::kSingle issues every top-level call, with everything nested in it, before the
// next one starts. Where the recorded kernel took a kernel-thunk call (or top-level kernel work)
// before one that single-threaded order makes first, the model cannot reproduce the recording
// (its handle numbering, virtual time and digests follow the order calls reach it): returns
// that pair as (the call single order makes first, the call the recorded kernel took first),
// or nullopt if single order is the recorded kernel's order.
std::optional<std::pair<uint32_t, uint32_t>> SingleThreadKernelOrderConflict(const Plan& plan);

class ModelKernel {
 public:
  // How long a kernel thunk waits for its turn when nothing says the turns before it will
  // never come (ModelKernel::Skip*). Only a driver that blocks inside a DDI call can make a
  // replay wait that long. The turn waited for is then given up as never coming (the call is
  // out of turn, see BeginThunk) and the replay reports it (TurnTimeouts): a divergence.
  static constexpr std::chrono::milliseconds kTurnTimeout{30000};

  // `threaded`: the replay runs recorded threads on threads of their own (kRecorded).
  // `order_override`: kernel-thunk event index -> the seq that places its turn, for thunks that
  // made no kernel-layer call of their own (by default their exit; see KernelOrderCandidates).
  // `turn_timeout`: kTurnTimeout but in tests (ReplayOptions::kernel_turn_timeout).
  ModelKernel(const Plan& plan, Session* session, bool threaded,
              const absl::flat_hash_map<uint32_t, uint64_t>& order_override = {},
              std::chrono::milliseconds turn_timeout = kTurnTimeout);
  ~ModelKernel();
  ModelKernel(const ModelKernel&) = delete;
  ModelKernel& operator=(const ModelKernel&) = delete;

  // The model's kernel-thunk table (the driver's calls are forwarded to it) and the model
  // device standing for the runtime device handle the driver passed.
  const D3DDDI_DEVICECALLBACKS* callbacks() const { return stack_->device_callbacks(); }
  HANDLE ModelDevice(HANDLE runtime_device);

  // Kernel-thunk calls (callbacks.cc): `ev` is the recorded callback the call matched (nullptr
  // if none). Begin waits for its recorded turn (kRecorded). False: the call's turn comes after
  // a recorded kernel action that will never run on this replay (Skip*), so the model cannot
  // answer it as the recorded kernel did; the caller must not forward it (nor End it) and what
  // the call then leads to is not a finding of its own.
  bool BeginThunk(const format::Event* ev);
  void EndThunk(const format::Event* ev);
  // Recorded kernel actions that will never run on this replay: those of top-level call `top`
  // (an index into plan.top) that the replay does not issue (it stopped at a divergence), and
  // a recorded kernel-thunk callback (event index) the driver returned without making. Later
  // turns are then released at once instead of waiting (and timing out) for them.
  void SkipTop(size_t top);
  void SkipThunk(uint32_t event);

  // Before top-level call `seq` is issued: the kernel work recorded at top level before it.
  void DriveBefore(uint64_t seq);
  // After the last call. `complete`: the whole recording was replayed (no --until, no call
  // that never returned, no stop at a divergence), so recorded kernel-layer events the model
  // did not produce are divergences.
  void Finish(bool complete);

  // Kernel-layer calls the model makes (the wrappers in kernel_model.cc).
  void Enter(format::CallId call, const format::ArgVec& entry);
  void Exit(format::CallId call, const format::ArgVec& exit, int64_t ret);

  KernelSummary summary();
  // Wall time spent inside the model (forwarded kernel-thunk calls, driven kernel work).
  std::chrono::nanoseconds model_time() const {
    return std::chrono::nanoseconds(model_ns_.load(std::memory_order_relaxed));
  }
  // The model's own findings (R74-R78), as "R74: message" lines.
  std::vector<std::string> Violations() const;

  // A wait for a kernel turn that gave up after turn_timeout (see WaitTurn): the turn it waited
  // for never came, so it and every later turn are out of turn (the model answers none of
  // them). The replay reports each as a divergence at `event`.
  struct TurnTimeout {
    int64_t event = -1;      // the waiting thunk, or the top-level call the driven work precedes
                             // (-1: the kernel work recorded after the last call)
    std::string waited_for;  // "RenderCb at seq 2 (tid 1)", "the kernel work recorded ..."
    std::string waiter;      // the same for the waiting action
  };
  std::vector<TurnTimeout> TurnTimeouts();
  // The same as the replay reports them: a divergence at the waiting action's seq (the
  // recording's last seq for the work after the last call).
  std::vector<Divergence> TurnTimeoutDivergences();

 private:
  struct Device {
    HANDLE model{};
    uint64_t kmd_id = 0;      // recorded id of the KMD's DXGK_HDEVICE (DxgkDdiCreateDevice)
    void* runtime = nullptr;  // the replay's runtime device handle, once the driver passed it
  };
  struct Pending {
    size_t expected = 0;  // index into expected_ (SIZE_MAX: an extra call, not compared)
  };

  struct Checkpoint {
    uint64_t seq = 0;  // the top-level Flush / PresentDXGI
    format::CallId call = format::CallId::kInvalid;
    uint64_t position = 0;  // taken when the action at this turn position is about to run
    uint64_t digest = 0;
    bool taken = false;
  };

  bool WaitTurn(uint64_t ordinal);
  std::string DescribeTurn(uint64_t ordinal) const;
  void SkipOrdinal(uint64_t ordinal);
  void AdvanceTurn(uint64_t ordinal);
  void TakeCheckpoints(uint64_t position);
  bool SameHandle(uint64_t rec, uint64_t raw, bool output);
  std::string Text(format::CallId call, const format::ArgVec& args, bool recorded) const;
  void Mismatch(const format::Event& at, std::string expected, std::string actual);
  void CompareFenceRetired(const format::Event& rec, const format::ArgVec& exit);
  bool RunGroup(size_t first, uint64_t before_seq);

  const Plan& plan_;
  Session* session_;
  const bool threaded_;
  const std::chrono::milliseconds turn_timeout_;
  gpu::CollectingViolationSink sink_;
  std::unique_ptr<gpu::KernelStack> stack_;

  // Recorded kernel-layer events (kmd, dxgkrnl layers) in seq order and which are top level.
  std::vector<uint32_t> expected_;
  std::vector<uint8_t> top_level_;
  // The recording holds GpuFenceRetired events: the model's are compared (else ignored).
  bool fence_digests_recorded_ = false;
  // The turn order (see the constructor): kernel-thunk callbacks by event index, and the
  // top-level kernel work recorded before a top-level call, by that call's seq (UINT64_MAX:
  // after the last call); action_seq_[ordinal] is the seq that places each turn (sorted).
  absl::flat_hash_map<uint32_t, uint64_t> thunk_ordinal_;
  absl::flat_hash_map<uint64_t, uint64_t> drive_slots_;
  std::vector<uint64_t> drive_keys_;
  std::vector<uint64_t> action_seq_;
  // action_event_[ordinal]: the thunk's event index, or for driven work the event index of the
  // top-level call it precedes (-1: after the last call).
  std::vector<int64_t> action_event_;
  // Guarded by turn_mu_.
  std::vector<Checkpoint> checkpoints_;  // by position
  size_t next_checkpoint_ = 0;

  // Per top-level call (index into plan.top): the turns of the kernel actions it contains and
  // of the top-level kernel work driven before it.
  std::vector<std::vector<uint64_t>> ordinals_of_top_;

  std::mutex turn_mu_;
  std::condition_variable turn_cv_;
  uint64_t turn_ = 0;
  uint64_t skipped_ = UINT64_MAX;      // the first turn that will never be taken (guarded)
  std::vector<TurnTimeout> timeouts_;  // guarded

  // Guarded by compare_mu_ (kernel-layer calls arrive under the model's own lock, driven
  // work and thunks from replay threads).
  std::recursive_mutex compare_mu_;
  size_t cursor_ = 0;                    // next expected_ entry
  bool lost_ = false;                    // the streams no longer line up: stop comparing
  uint64_t compared_ = 0;                // kernel-layer calls matched (DxgkDdi*, DxgkCb*)
  uint64_t fence_digests_compared_ = 0;  // GpuFenceRetired events matched
  uint64_t extra_ = 0;                   // kernel-layer calls beyond the recording
  std::vector<Pending> stack_of_calls_;
  absl::flat_hash_map<uint64_t, uint64_t> raw_of_id_;
  absl::flat_hash_map<uint64_t, uint64_t> id_of_raw_;
  std::vector<Device> devices_;

  std::atomic<int64_t> model_ns_{0};
};

}  // namespace cltrace::replay::internal

#endif  // CLTRACE_REPLAYER_INTERNAL_KERNEL_MODEL_H_
