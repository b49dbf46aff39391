// The replay engine: one Session per replay. It owns the driver (loaded library, adapter),
// the handle map (recorded handle id -> replay value), the handle memory, the function and
// callback tables handed to the driver, the replay kernel, and the findings.
//
// Threading: Issue() runs on the thread that replays a recorded thread (one per recorded
// thread in ThreadMode::kRecorded, the caller's in kSingle). Each replay thread has a
// ThreadState (thread_local while it runs): its stack of DDI calls in flight (the callbacks the
// driver makes are matched against the innermost one), its codec arena and environment.
// Handle slots are atomics written by the call that creates a handle and read by calls the
// recorded order places after it (the scheduler's release/acquire orders them); the memory
// bookkeeping, the tables and the findings have their own mutexes.
#ifndef CLTRACE_REPLAYER_INTERNAL_SESSION_H_
#define CLTRACE_REPLAYER_INTERNAL_SESSION_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ddi/catalog.h"
#include "ddi/ddi_abi.h"
#include "format/call_codec.h"
#include "format/call_traits.h"
#include "format/event.h"
#include "replayer/internal/call_meta.h"
#include "replayer/internal/driver.h"
#include "replayer/internal/kernel.h"
#include "replayer/internal/kernel_model.h"
#include "replayer/internal/plan.h"
#include "replayer/replay.h"

namespace cltrace::replay::internal {

// Handle ids at or above this value stand for values the recording does not know (a handle
// the driver produced or passed that the replay never handed out).
inline constexpr uint64_t kUnknownHandleBase = uint64_t{1} << 62;

// One DDI call of the recording being replayed on this thread.
struct Frame {
  uint32_t event = 0;
  int32_t cursor = -1;  // the next recorded child to match
};

class Session;

struct ThreadState {
  Session* session = nullptr;
  std::vector<Frame> stack;
  format::InvokeArena arena;
  format::InvokeEnv env;
  format::ArgVec actual;
  // Per call being prepared: pointer substitutes by fixed-field index.
  const format::CallInfo* call = nullptr;
  absl::InlinedVector<std::pair<uint16_t, void*>, 4> pointers;
  // CreateResource with content: pInitialDataUP[i].pSysMem for each element i.
  std::vector<void*> initial_data;
  // Raw values the codec's capture met that the handle map does not know.
  std::vector<uint64_t> unknown;
  uint64_t ic_object = 0;  // CalcDeferredContextHandleSize: the IC object's id
  // The current top-level call got a kernel thunk out of turn (ModelKernel::BeginThunk): its
  // findings are consequences of an earlier departure and are not reported.
  bool out_of_turn = false;
};

// The thread's state while it replays (nullptr on threads the replayer does not run).
ThreadState* CurrentThread();

// The session the driver's callbacks report to (one replay per process at a time).
Session* ActiveSession();

class Session {
 public:
  Session(const Plan& plan, const ReplayOptions& options, Driver* driver);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // --kernel model: where to place kernel thunks the trace does not place (ModelKernel).
  // Before Init.
  void SetKernelOrderOverride(absl::flat_hash_map<uint32_t, uint64_t> o) {
    kernel_order_override_ = std::move(o);
  }
  // Reserves the address ranges (runtime handles for `reserve_ids` handle ids, at least the
  // plan's); false with *error on failure.
  bool Init(std::string* error, size_t reserve_ids = 0);

  // Sets up a replay thread's codec environment (also for a driver thread that calls back).
  void InitThread(ThreadState* t);

  // Runs the plan in the configured thread mode and fills `result`: BeginSegment, RunSegment,
  // Finish over the plan's one segment.
  void Run(ReplayResult* result);
  // A segmented replay (PlanBuilder): the plan now holds the next segment, whose calls are
  // replayed by RunSegment; nothing of the replay runs between segments. BeginSegment takes
  // in the handles and threads defined since the last one; false (reported: Fatal) when the
  // handle table outgrew the reserved runtime-handle range.
  bool BeginSegment();
  void RunSegment();
  // After the last segment: what remains to compare (the kernel model's last work, async
  // callbacks the driver never made) and the result; `fill` (if given) sees the divergences
  // found since the last ForEachNewDivergence first.
  void Finish(ReplayResult* result, const std::function<void(Divergence*)>* fill = nullptr);
  // Calls `f` on each divergence found since the last call (no replay thread may run).
  void ForEachNewDivergence(const std::function<void(Divergence*)>& f);
  // Bookkeeping sizes (what a long replay keeps): handle ids with slots, live handle blocks,
  // quarantined blocks, raw-address map entries, async callbacks not yet matched.
  struct Footprint {
    size_t slots = 0, live = 0, quarantined = 0, raw_map = 0, async = 0, mappings = 0;
  };
  Footprint footprint();

  // ---- used by the callback thunks (callbacks.cc) ----
  // Matches a callback the driver just made (its arguments captured at entry) against the
  // recording: returns the recorded event, or nullptr after recording the divergence.
  const format::Event* MatchCallback(ThreadState* t, format::CallId call,
                                     const format::ArgVec& actual);
  // Re-issues the DDI calls recorded under a state-refresh callback.
  void IssueChildren(ThreadState* t, uint32_t callback_event);
  // Index of an event (a pointer into the plan's events).
  uint32_t IndexOf(const format::Event* e) const {
    return static_cast<uint32_t>(e - plan_.events.data());
  }
  // Raw value -> handle id (kUnknownHandleBase + n for values the map does not know; n
  // indexes t->unknown).
  uint64_t HandleId(ThreadState* t, uint64_t raw);
  // Handle id -> raw value for a kernel handle the replay kernel hands out (binds it).
  uint64_t KernelHandle(uint64_t id);
  ReplayKernel& kernel() { return kernel_; }
  // The kernel model (KernelMode::kModel), else nullptr.
  ModelKernel* model() { return model_.get(); }
  // --kernel model: compares the model's answer to a kernel-thunk call (outputs the callee
  // wrote, return value) with the recorded callback `ev`. Output kernel handles must be the
  // recorded values.
  template <format::CallId kId, typename... P>
  void CompareKernelAnswer(const format::Event& ev, int64_t ret, P... p);
  // True when calls at `seq` are no longer replayed (a fatal problem, or a divergence before
  // it without keep_going).
  bool Stopping(uint64_t seq) const;
  // A RenderCb's submission: counted and digested.
  void Submit(uint32_t hcontext, uint32_t offset, uint32_t length, uint32_t allocations);
  // Records a divergence at event `at` (recorded position).
  void Diverge(const format::Event& at, std::string expected, std::string actual);
  // Canonical form of submitted command words (driver handle addresses -> handle ids).
  void Canonicalize(absl::Span<uint64_t> words);
  // Text of a call's arguments for a report ("SetErrorCb(hRuntimeDevice=..., ...)"). For
  // arguments the driver passed (from_driver) pointer values are left out: they are replay
  // addresses.
  std::string CallText(format::CallId call, absl::Span<const uint64_t> args,
                       bool from_driver) const;
  const D3D11DDI_CORELAYER_DEVICECALLBACKS* core_callbacks() const;
  const D3DDDI_DEVICECALLBACKS* kernel_callbacks() const;

 private:
  struct Slot {
    std::atomic<uint64_t> raw{0};
    std::atomic<void*> table{nullptr};  // device/DC/adapter ids: the table to call through
    std::atomic<void*> dxgi{nullptr};   // IC device ids: the DXGI table
    std::atomic<bool> deferred{false};  // a deferred context (DC-table calls)
  };
  struct Block {
    void* memory = nullptr;
    size_t size = 0;
    uint64_t id = 0;
  };
  struct DeviceTables {
    D3D11DDI_DEVICEFUNCS funcs{};
    DXGI_DDI_BASE_FUNCTIONS dxgi{};
  };
  struct AdapterState {
    D3D10_2DDI_ADAPTERFUNCS funcs{};
    D3D10DDI_HADAPTER handle{};
  };

  void RunSingle();
  void RunRecorded();
  // Top-level call k of the plan (skipped when the replay is stopping).
  void IssueTop(ThreadState* t, size_t k);
  void Issue(ThreadState* t, uint32_t index);
  // Before a call: its handles exist (runtime and kernel ones are made on first use), a created
  // handle gets its memory, pointer arguments point at replay memory. False: stopped.
  bool Prepare(ThreadState* t, const format::Event& e, const CallMeta& m);
  bool EnsureHandle(const format::Event& e, uint64_t id, HandleClass cls, const char* name);
  bool EnsureHandles(const format::Event& e, const CallMeta& m);
  // The size the driver asked for the handle the call creates; -1 (reported) when none was.
  int64_t CreatedHandleSize(const format::Event& e, const CallMeta& m);
  void InstallTables(format::CallId call, Slot& s);
  bool CreateHandle(const format::Event& e, const CallMeta& m);
  bool ResolvePointers(ThreadState* t, const format::Event& e, const CallMeta& m);
  void AfterCall(const format::Event& e, const CallMeta& m, int64_t ret, uint64_t ic_object);
  // Content (replayer/internal/content.h). An upload's source: a copy of its content in the
  // thread's arena. A Map's answer is remembered; at the matching Unmap the recorded bytes are
  // written into it before the driver is called.
  void* UploadSource(ThreadState* t, const format::Event& e);
  // Points t->initial_data at the regions of a copy of e's initial data (content=initial).
  void InitialDataSource(ThreadState* t, const format::Event& e);
  void RememberMapping(const format::Event& e, const CallMeta& m, const format::ArgVec& actual);
  void WriteMappedContent(const format::Event& e, const CallMeta& m, uint32_t index);
  void ContentNote(uint64_t seq, std::string note);
  void CompareOutputs(ThreadState* t, const format::Event& e, const format::ArgVec& actual,
                      absl::string_view expected_prefix = "", absl::string_view actual_prefix = "");
  void CompareKernelOutputs(ThreadState* t, const format::Event& e, const format::ArgVec& actual,
                            int64_t ret);
  void* TableFor(const format::Event& e, const CallMeta& m);
  bool OpenAdapter(uint64_t id, const format::Event& e);
  // Handle memory.
  void* AllocateHandle(uint64_t id, size_t size);
  void Quarantine(uint64_t id);
  // Frees the oldest quarantined blocks beyond the quarantine's bound (memory_mu_ held).
  void TrimQuarantine();
  uint64_t RuntimeHandle(uint64_t id);
  // Bad input found while replaying: stops the replay.
  void FailInput(const format::Event& e, std::string message);
  void Fatal(const format::Event& e, std::string expected, std::string actual);
  const format::Event* MatchAsync(format::CallId call, const format::ArgVec& actual);
  void Collect(ReplayResult* result);

  const Plan& plan_;
  const ReplayOptions& options_;
  Driver* driver_;
  ReplayKernel kernel_;
  std::unique_ptr<ModelKernel> model_;
  absl::flat_hash_map<uint32_t, uint64_t> kernel_order_override_;
  std::unique_ptr<Slot[]> slots_;
  size_t slot_count_ = 0;
  // Runtime handles: base + id * 16 inside an inaccessible reserved range.
  uintptr_t runtime_base_ = 0;
  size_t runtime_bytes_ = 0;
  // Input data pointers point here (read-only zero pages).
  void* zero_region_ = nullptr;
  std::vector<int64_t> pending_size_;  // per recorded thread: last CalcPrivate* answer, -1 none

  std::mutex memory_mu_;
  absl::flat_hash_map<uint64_t, Block> live_;          // id -> its live block
  absl::flat_hash_map<uint64_t, uint64_t> id_of_raw_;  // driver memory address -> id
  absl::flat_hash_map<uint64_t, int64_t> local_size_;  // IC object id -> context-local size
  std::deque<Block> quarantine_;
  size_t quarantine_bytes_ = 0;

  std::mutex tables_mu_;
  std::vector<std::unique_ptr<DeviceTables>> devices_;
  std::vector<std::unique_ptr<D3D11DDI_DEVICEFUNCS>> dc_tables_;
  std::vector<std::unique_ptr<AdapterState>> adapters_;

  std::mutex findings_mu_;
  std::vector<Divergence> divergences_;
  std::optional<BadInput> bad_;
  std::atomic<uint64_t> min_divergence_{UINT64_MAX};
  std::atomic<bool> fatal_{false};

  std::mutex async_mu_;
  // Top-level callbacks of the segments so far not yet matched (from async_cursor_ on).
  std::deque<format::Event> async_events_;
  size_t async_cursor_ = 0;
  size_t history_done_ = 0;  // divergences ForEachNewDivergence saw

  // What the replay driver's Maps returned, by recorded (context, resource, subresource): kept
  // from the Map to its Unmap. Maps on deferred contexts run on their replay threads.
  struct Mapping {
    uint64_t data = 0;  // pData (0: the Map failed or gave none)
    uint32_t row_pitch = 0, depth_pitch = 0;
    uint64_t map_seq = 0;
  };
  std::mutex content_mu_;
  absl::flat_hash_map<MapKey, Mapping> mappings_;
  ContentSummary content_;
  std::vector<std::pair<uint64_t, std::string>> content_notes_;  // by recorded seq
};

template <format::CallId kId, typename... P>
void Session::CompareKernelAnswer(const format::Event& ev, int64_t ret, P... p) {
  using T = format::CallTraits<kId>;
  // The recorded kernel handles among the outputs stand for their recorded values.
  ForEachField(*format::GetCall(kId), ev.args, [&](const format::FieldInfo& f, size_t index, int) {
    if (f.kind == format::FieldKind::kHandle && f.dir == format::FieldDir::kOut &&
        ev.args[index] != 0) {
      KernelHandle(ev.args[index]);
    }
  });
  ThreadState* t = CurrentThread();
  ThreadState foreign;
  if (t == nullptr) {
    InitThread(&foreign);
    t = &foreign;
  }
  format::ArgVec actual;
  auto handle_id = [this, t](uint64_t raw) { return HandleId(t, raw); };
  T::CaptureEntry(&actual, handle_id, p...);
  T::CaptureExit(&actual, handle_id, p...);
  CompareKernelOutputs(t, ev, actual, ret);
}

}  // namespace cltrace::replay::internal

#endif  // CLTRACE_REPLAYER_INTERNAL_SESSION_H_
