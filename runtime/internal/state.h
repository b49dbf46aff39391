// Internal state of the runtime model: device, contexts, command-list handles, bindings.
//
// Thread-safety: DeviceState members are free-threaded where marked (atomics, mutexes) and
// otherwise immutable after device creation; ContextState is used only inside its context's
// domain (DomainLock), except `control` (shared with command lists of a deferred context).
#ifndef CLTRACE_RUNTIME_INTERNAL_STATE_H_
#define CLTRACE_RUNTIME_INTERNAL_STATE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ddi/ddi_abi.h"
#include "rules/state_machines.h"
#include "runtime/internal/bindings.h"
#include "runtime/internal/ddi.h"
#include "runtime/internal/driver_loader.h"
#include "runtime/internal/violations.h"
#include "runtime/kernel.h"
#include "runtime/runtime.h"
#include "wddm/draw_state.h"
#include "wddm/kernel_abi.h"
#include "wddm/kernel_stack.h"
#include "wddm/violation.h"

namespace cltrace::runtime::internal {

// The object behind an hRTCoreLayer handle: one per context. The callback table the driver
// got lives here; with probe_callback_caching its function pointers alternate between two
// generations of thunks so a driver calling a stale (cached) pointer is caught (R6).
struct CoreLayer {
  ContextState* ctx = nullptr;
  D3D11DDI_CORELAYER_DEVICECALLBACKS table{};
  std::atomic<int> generation{0};
  std::string name;  // "core:IC", "core:DC1"
};

// A driver command-list handle (IC memory) with its recycle bookkeeping.
struct ClHandle {
  void* memory = nullptr;
  size_t size = 0;           // CalcPrivateCommandListSize result
  size_t local_size = 0;     // CalcDeferredContextHandleSize(D3D11DDI_HT_COMMANDLIST) result
  ClHandle* next = nullptr;  // lock-free list link
  uint64_t serial = 0;
  bool failed_recycle = false;               // T7e: dead handle kept only for a configured destroy
  rules::State state = rules::State::kNone;  // §3.1, as the runtime's DDIs moved it
};

// Shared between a deferred context and its command lists: liveness and the lock-free list of
// recycle-destroyed handles (the "InterlockedSList" of the SCL pseudocode).
struct DcControl {
  static constexpr uint64_t kDead = 1ull << 63;
  std::atomic<uint64_t> state{0};  // kDead | number of releasers inside RecycleDestroy+push
  std::atomic<ClHandle*> pending{nullptr};

  // A releaser may RecycleDestroy and push only while the DC lives.
  bool TryEnter() {
    uint64_t s = state.load(std::memory_order_acquire);
    while ((s & kDead) == 0) {
      if (state.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) return true;
    }
    return false;
  }
  void Leave() { state.fetch_sub(1, std::memory_order_acq_rel); }
  // Marks the DC dead and waits for releasers already inside.
  void MarkDeadAndWait();
  void Push(ClHandle* h) {
    ClHandle* head = pending.load(std::memory_order_relaxed);
    do {
      h->next = head;
    } while (!pending.compare_exchange_weak(head, h, std::memory_order_release,
                                            std::memory_order_relaxed));
  }
  // Pops everything at once (no ABA: the single consumer takes the whole list).
  ClHandle* TakeAll() { return pending.exchange(nullptr, std::memory_order_acquire); }
};

// R10: an application call on a context while another thread is inside it.
class DomainLock {
 public:
  // Returns false on overlap (then waits until the other thread left).
  bool Enter();
  void Leave();

 private:
  std::atomic<uintptr_t> owner_{0};
  int depth_ = 0;
};

struct LocalHandle {
  void* memory = nullptr;
  size_t size = 0;
};

// Draw-state expectation for the kernel-side check (wddm/draw_state.h).
struct DrawExpectation {
  uint64_t state[gpu::kDrawSlotCount] = {};
  uint8_t since = 0;  // reset event before this draw: 0 creation/recycle (R47), 1 execute (R60)
};

}  // namespace cltrace::runtime::internal

namespace cltrace::runtime {

// What a recording produced; owned by the command list.
struct CommandListRecorded {
  std::vector<DeviceChild*> objects;  // references held
  std::vector<CommandList*> nested;   // references held
  std::vector<Query*> queries;        // begun or ended in the list (R61)
  std::vector<Resource*> mapped;      // dynamic resources mapped in the list (R62)
  std::vector<internal::DrawExpectation> draws;
  std::shared_ptr<internal::DcControl> control;
  Device* device = nullptr;
  DeviceContext* owner = nullptr;  // may be destroyed already; compare only, never use
  std::string name;
};

}  // namespace cltrace::runtime

namespace cltrace::runtime::internal {

enum class Phase : uint8_t {
  kNormal,
  kCreatingCommandList,  // inside Create/RecycleCreateCommandList: refresh shows DC bindings
  kClosed,               // after it until the DC is recycled: refresh shows nothing (R49)
};

struct ContextState {
  DeviceContext* self = nullptr;
  DeviceState* dev = nullptr;
  bool deferred = false;
  uint64_t serial = 0;
  std::string name;  // "IC", "DC1"
  DomainLock domain;

  D3D10DDI_HDEVICE handle{};  // IC: the device handle; DC: hDrvContext
  std::unique_ptr<uint8_t[]> dc_memory;
  size_t dc_size = 0;
  D3D11DDI_DEVICEFUNCS dc_funcs{};        // the DC table the driver filled
  D3D11DDI_DEVICEFUNCS* funcs = nullptr;  // IC: &dev->ic_funcs; DC: &dc_funcs
  CoreLayer layer;
  uint32_t flags = 0;

  Bindings bindings;
  Phase phase = Phase::kNormal;
  uint8_t last_reset = 0;  // DrawExpectation::since for the next draws

  // Queries and maps open on this context.
  absl::flat_hash_set<Query*> building;
  absl::flat_hash_map<Resource*, uint32_t> mapped;  // resource -> subresource
  int event_depth = 0;  // BeginEvent calls not yet ended (application markers)

  // Deferred contexts only.
  absl::flat_hash_map<DeviceChild*, LocalHandle> locals;       // open context-local handles
  absl::flat_hash_map<CommandList*, LocalHandle> local_lists;  // nested lists opened
  struct OpenEntry {
    DeviceChild* object = nullptr;  // exactly one of the two is set
    CommandList* list = nullptr;
  };
  std::vector<OpenEntry> open_order;
  std::unique_ptr<CommandList::Recorded> rec;
  bool has_commands = false;
  absl::flat_hash_set<Resource*> mapped_this_recording;  // first map must discard (R64)
  bool local_removed = false;                            // a DC DDI reported E_OUTOFMEMORY (R29)
  bool lost = false;              // RecycleCreateDeferredContext failed: no more recording
  bool handle_destroyed = false;  // DC::DestroyDevice already called (D9e)
  rules::State dc_state = rules::State::kNone;  // §3.2, as the runtime's DDIs moved it
  std::shared_ptr<DcControl> control;
  std::vector<ClHandle*> cache;  // RC handles (this DC's thread only)
  size_t first_cl_size = 0;      // R36

  // IC only: draw expectations for the kernel check live in DeviceState.
};

// Poisoned handle memory kept after free to catch late writes (R39, R50).
class Quarantine {
 public:
  struct Entry {
    std::unique_ptr<uint8_t[]> memory;
    size_t size = 0;
    std::string what;  // "command list CL3 after DestroyCommandList"
    rules::Rule rule = rules::Rule::kR39;
    uint64_t epoch = 0;  // Flush count when it was freed
  };
  void Add(DeviceState* dev, Entry entry);
  // Checks entries and reports modified memory: all of them with `evict_all` (then frees them
  // all), else up to RuntimeOptions::quarantine_check_entries, continuing round-robin where
  // the last check stopped; then frees the entries that have survived two Flush calls (a
  // driver's deferred destruction runs in every Flush), checking each one it frees.
  void Check(DeviceState* dev, bool evict_all);

 private:
  std::mutex mu_;
  std::deque<Entry> entries_;
  size_t next_check_ = 0;  // index into entries_ where the next bounded check starts
};

// Allocation bookkeeping for R67/R68/R70 (kernel-thunk side).
struct AllocationInfo {
  std::string owner;       // resource name
  bool destroyed = false;  // its resource's DestroyResource returned
  uint64_t destroyed_at_flush = 0;
  bool deallocated = false;
};

struct DeviceState {
  Device* self = nullptr;
  RuntimeOptions options;
  CallSink sink;
  ViolationLog violations;
  DriverLibrary driver;

  D3D10_2DDI_ADAPTERFUNCS adapter_funcs{};
  D3D10DDI_HADAPTER adapter{};
  std::unique_ptr<uint8_t[]> device_memory;
  D3D10DDI_HDEVICE hdevice{};
  D3D11DDI_DEVICEFUNCS ic_funcs{};
  DXGI_DDI_BASE_FUNCTIONS dxgi_funcs{};
  D3DDDI_DEVICECALLBACKS kt_callbacks{};
  std::vector<D3D11DDI_HANDLESIZE> handle_sizes;
  uint32_t caps = 0;

  // R5: the IC-table slots that must stay fixed after CreateDevice.
  std::vector<std::pair<size_t, void*>> fixed_slots;

  DeviceContext* immediate = nullptr;
  ContextState* ic = nullptr;

  std::atomic<int64_t> children{0};
  std::atomic<bool> released{false};
  std::atomic<bool> removed{false};
  std::atomic<bool> torn_down{false};
  std::atomic<uint64_t> serial{0};
  std::atomic<uint64_t> flushes{0};      // Flush calls started (R68 epochs)
  std::atomic<bool> misuse_done{false};  // one-shot runtime-misuse modes
  bool in_create_device = false;

  Quarantine quarantine;

  std::mutex names_mu;
  absl::flat_hash_map<std::string, uint64_t> name_counters;

  // Kernel-side checks.
  std::mutex alloc_mu;
  absl::flat_hash_map<uint32_t, AllocationInfo> allocations;
  // How many of `allocations` are destroyed and not yet deallocated: the R68 check at each
  // Flush walks `allocations` (which keeps every allocation ever made) only when some are.
  uint64_t destroyed_not_deallocated = 0;
  // Runtime resource (hRTResource) -> its allocations, to mark them at DestroyResource.
  absl::flat_hash_map<const void*, std::vector<uint32_t>> resource_allocations;
  bool context_created = false;          // R74
  std::atomic<int> hcontext_busy{0};     // R15
  uint64_t submits_since_amortized = 0;  // R71 (IC domain)
  bool r71_reported = false;
  // Draw expectations of the IC stream, in order (IC domain).
  std::deque<DrawExpectation> expected_draws;
  bool draw_check_enabled = true;
  // The driver's draw-state probe, looked up at the first submission (IC domain); without one
  // the draw-state check does nothing.
  bool draw_probe_looked_up = false;
  gpu::DecodePrivateDrawsFn draw_probe = nullptr;

  // The kernel (runtime/kernel.h). The sink turns the stack's R74-R78 reports into violation
  // lines of this device; declared before the stack so it outlives it.
  std::unique_ptr<gpu::ViolationSink> kernel_sink;
  std::unique_ptr<gpu::KernelStack> stack;
  HANDLE kdev{};                                // the kernel's device (DxgkDdiCreateDevice)
  const D3DDDI_DEVICECALLBACKS* kcb = nullptr;  // the stack's (possibly wrapped) thunk table
  bool kernel_device_destroyed = false;
  // Per HCONTEXT, the buffers the kernel handed out last (what the next pfnRenderCb submits),
  // read by the checks at RenderCb.
  struct SubmitBuffers {
    const uint8_t* command = nullptr;
    uint32_t command_size = 0;
    const gpu::UserAllocationListEntry* allocations = nullptr;
    uint32_t allocation_list_size = 0;
  };
  std::mutex buffers_mu;
  absl::flat_hash_map<HANDLE, SubmitBuffers> buffers;
};

}  // namespace cltrace::runtime::internal

#endif  // CLTRACE_RUNTIME_INTERNAL_STATE_H_
