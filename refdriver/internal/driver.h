// Internal data model of the reference driver.
//
// Every driver object lives in handle memory the runtime allocated with the size a
// CalcPrivate* / CalcDeferredContextHandleSize function returned (placement-constructed). The
// handle-validity state machines of ddi-spec §3 are NOT kept in that memory: a call on a
// destroyed handle must be detected without touching its memory (R39), so the states live in
// side tables of the device, keyed by the handle's pDrvPrivate address:
//   - IC command-list handles: Device::cls_ (U/V/RD/RC/X, §3.1)
//   - deferred-context handles: Device::dcs_ (Rec/Fin/Clo/Abd/X, §3.2)
//   - context-local handles: DeferredContext::locals_ (N/O/C, §3.3; DC domain only)
//
// Thread-safety: Device members are annotated; DeferredContext members are touched only from
// that context's domain (R10, checked by Domain).
#ifndef CLTRACE_REFDRIVER_INTERNAL_DRIVER_H_
#define CLTRACE_REFDRIVER_INTERNAL_DRIVER_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "ddi/ddi_abi.h"
#include "refdriver/command_stream.h"
#include "refdriver/internal/config.h"
#include "refdriver/internal/domain.h"
#include "refdriver/internal/pipeline_state.h"
#include "refdriver/internal/report.h"
#include "rules/state_machines.h"
#include "umd/command_recording.h"
#include "umd/umd_context.h"

namespace cltrace::refdriver {

inline constexpr uint32_t kIcObjectMagic = 0x4f434943;     // "CICO"
inline constexpr uint32_t kLocalObjectMagic = 0x4f4c4344;  // "DCLO"
inline constexpr uint32_t kCommandListMagic = 0x4c434943;  // "CICL"
inline constexpr uint32_t kContextMagic = 0x58544344;      // "DCTX"
inline constexpr uint32_t kDeviceMagic = 0x56454443;       // "CDEV"

// D3D11DDI_HANDLETYPE values the driver supports as context-local handles.
inline constexpr uint32_t kHandleTypeCount = 13;

struct Device;
struct DeferredContext;

// An IC object (resource, view, shader, layout, state object, sampler, query).
struct IcObject {
  uint32_t magic = kIcObjectMagic;
  uint32_t type = 0;                   // D3D11DDI_HANDLETYPE
  uint64_t id = 0;                     // driver-wide serial number (for messages)
  std::atomic<int32_t> local_open{0};  // context-local handles currently open on any DC (R54)
  // Resources: what Map reports (see Backing; texels are 4 bytes in this model): a texture's
  // rows and slices as laid out in `memory`, a buffer's backing. Kept in padding, so handle
  // sizes (CalcPrivateResourceSize, which recordings hold) do not change.
  uint32_t row_pitch = 0;
  IcObject* dependency = nullptr;  // views: their resource
  // Resources.
  uint32_t usage = 0;
  uint32_t bind_flags = 0;
  uint32_t misc_flags = 0;
  uint32_t allocation = 0;  // D3DKMT_HANDLE from pfnAllocateCb (0: none)
  uint64_t byte_size = 0;
  uint8_t* memory = nullptr;  // CPU backing (maps, copies); owned
  // Unused since the map-discard aliases are kept in the device's AliasBook (ops.h); kept so
  // that sizeof(IcObject), which CalcPrivate*Size answers and traces record, stays the same.
  std::mutex unused_alias_mu;
  std::vector<uint32_t> unused_alias_allocations;
  bool ic_mapped = false;  // mapped on the IC (IC domain only)
  // Queries: 0 idle, 1 building, 2 issued (IC domain only).
  int8_t ic_query_state = 0;
  // Resources: created with a pPrimaryDesc (a swap chain's scanned-out buffer). In padding.
  bool primary = false;
  uint32_t query_type = 0;
  uint32_t depth_pitch = 0;  // resources: see row_pitch
  uint64_t query_fence = 0;
};

// Bytes of a resource's CPU backing `memory` (and of each DC rename alias): its size, at least
// 16; a resource the CPU may map (dynamic, staging) whole up to 64 MiB, so the pitches Map
// reports describe memory that exists (a recorder copies exactly that much at Unmap); others
// up to 1 MiB (copies only).
inline uint64_t Backing(const IcObject* o) {
  const bool mappable =
      o->usage == 2 /* D3D10_DDI_USAGE_DYNAMIC */ || o->usage == 3 /* D3D10_DDI_USAGE_STAGING */;
  const uint64_t cap = mappable ? uint64_t{64} << 20 : uint64_t{1} << 20;
  return std::min<uint64_t>(std::max<uint64_t>(o->byte_size, 16), cap);
}

// A context-local handle's memory.
struct LocalObject {
  uint32_t magic = kLocalObjectMagic;
  uint32_t type = 0;
  void* ic = nullptr;  // IcObject* or, for D3D11DDI_HT_COMMANDLIST, CommandList*
  LocalObject* dependency = nullptr;
  uint32_t bind_refs = 0;  // how many DC bindings point here (driver bookkeeping)
  uint32_t reserved = 0;
};

// The bindings a command list leaves the GPU with (IC handles), for the slots the draw-state
// check sees. Executing a list first leaves the context in this state; CommandListExecute then
// clears it (R60).
struct EndState {
  void* input_layout = nullptr;
  void* shader[kStageCount] = {};
  void* vb0 = nullptr;
  void* ib = nullptr;
  void* vs_cb0 = nullptr;
  void* ps_cb0 = nullptr;
  void* ps_srv0 = nullptr;
  void* ps_sampler0 = nullptr;
  void* rtv0 = nullptr;
  void* dsv = nullptr;
  void* blend = nullptr;
  void* depth_stencil = nullptr;
  void* rasterizer = nullptr;
};

// The recording of a deferred context, and the content of a command list.
struct Recording {
  // What CommandListExecute splices into the IC's command buffer: GPU commands referencing
  // allocation handles, the refcmd records in gpu::Command::Private, and the map-discard
  // renames (R66).
  gpu::CommandRecording gpu;
  // The dynamic resources renamed in this recording: alias allocation and its CPU memory.
  absl::flat_hash_map<const IcObject*, std::pair<uint32_t, uint8_t*>> renamed;
  std::vector<uint8_t> stream;        // the refcmd records alone (size drives the R72 cadence)
  std::vector<uint32_t> allocations;  // referenced allocations (deduplicated lazily)
  std::vector<IcObject*> queries;     // queries begun or ended in it (R61)
  std::vector<IcObject*> mapped;      // dynamic resources mapped in it (R62)
  std::vector<std::unique_ptr<uint8_t[]>> aliases;  // map-discard renames it owns
  uint64_t bytes_since_pump = 0;                    // DC amortized-processing cadence (R72)
  EndState end_state;                               // filled when the list is created

  void Clear() {
    gpu.Clear();
    renamed.clear();
    stream.clear();
    allocations.clear();
    queries.clear();
    mapped.clear();
    aliases.clear();
    bytes_since_pump = 0;
    end_state = EndState();
  }
};

// An IC command-list handle's memory.
struct CommandList {
  uint32_t magic = kCommandListMagic;
  uint64_t id = 0;
  void* owner_dc = nullptr;  // hDrvContext of the DC that recorded it
  Recording content;
};

// A command list's state (§3.1) in the table of rules/state_machines.h: kValid,
// kRecycleDestroyed, kRecycled, kDestroyed, kCreateFailed (T1e) or kRecycleCreateFailed (T7e).
using ClState = rules::State;
// True if `call` takes a command list from `from` to `to` in the §3.1 table.
inline bool IsClEdge(ClState from, ClState to, const char* call) {
  return rules::FindEdge(rules::Machine::kCommandList, from, to, call) != nullptr;
}

struct ClEntry {
  ClState state = ClState::kValid;
  void* owner_dc = nullptr;       // DC that recorded it (cache owner once recycled)
  bool destroy_tolerant = false;  // failed RecycleCreate: a later Destroy is a no-op (T7e)
};

// A deferred context's state (§3.2) in the same table: kRecording, kFinishing, kClosed,
// kAbandoned or kDestroyed.
using DcState = rules::State;

struct DcEntry {
  Device* device = nullptr;
  DcState state = DcState::kRecording;
  bool recycle_failed = false;  // failed RecycleCreateDeferredContext: destroy is tolerated (D9e)
  bool create_failed = false;   // failed Create/RecycleCreateCommandList: Finishing may go
                                // straight to recycle/destroy after the closes (D5e)
};

// True if `call` takes a deferred context from `from` to `to` in the §3.2 table (D2's "any
// DC-table DDI" excludes the lifecycle DDIs: rules::EdgeTakes).
inline bool IsDcEdge(DcState from, DcState to, const char* call) {
  return rules::FindEdge(rules::Machine::kDeferredContext, from, to, call) != nullptr;
}
// The §3.2 table state of a DC entry: Finishing after a failed create is D5e's FinishFailed.
inline DcState TableState(const DcEntry& e) {
  return e.state == DcState::kFinishing && e.create_failed ? DcState::kFinishFailed : e.state;
}
// True if a DC::pfnCreate* (to kOpen) or DC::pfnDestroy* (to kClosedLocal) takes a local handle
// that is open (`open`) or not from its state to `to` in the §3.3 table.
inline bool IsLocalEdge(bool open, rules::State to) {
  return rules::FindEdge(rules::Machine::kLocal, open ? rules::State::kOpen : rules::State::kNone,
                         to, "") != nullptr;
}

// Process-wide registry of deferred-context handles (sharded by address): a DC-table call must
// be validated without reading the handle memory, which the runtime frees after DestroyDevice.
// Returns false if the handle was never a DC of this driver.
bool LookupDc(const void* handle, DcEntry* out);
void SetDcState(const void* handle, const DcEntry& entry);
// Applies `update` to the entry under the shard lock; false if unknown.
bool UpdateDc(const void* handle, absl::FunctionRef<void(DcEntry&)> update);
// IC DestroyDevice: destroys every deferred context of `dev` that is still alive (the runtime
// should have destroyed them first) and marks it destroyed; returns how many there were.
size_t RetireDeferredContextsOf(const Device* dev);

// A context-local handle's state on one DC (§3.3).
struct LocalEntry {
  uint32_t type = 0;
  void* ic = nullptr;
  void* dependency_local = nullptr;
  int open_dependents = 0;  // open local views of this local resource (R55)
};

// Queue entry of deferred destruction (CD10, R67–R70).
struct DeferredDestruction {
  uint64_t object_id = 0;
  uint32_t allocation = 0;       // to pfnDeallocateCb
  uint8_t* memory = nullptr;     // CPU backing to free
  Recording content;             // a destroyed command list's data
  void* stale_handle = nullptr;  // R39 bug: the destroyed handle memory it still writes to
};

// One deferred context (placement-constructed in hDrvContext).
struct DeferredContext {
  uint32_t magic = kContextMagic;
  uint64_t id = 0;
  Device* device = nullptr;
  D3D10DDI_HRTCORELAYER rt_core_layer{};
  const D3D11DDI_CORELAYER_DEVICECALLBACKS* callbacks = nullptr;           // by pointer (R6)
  PFND3D11DDI_PERFORM_AMORTIZED_PROCESSING_CB cached_amortized = nullptr;  // R6 bug only
  PFND3D10DDI_STATE_OM_RENDERTARGETS_CB cached_refresh = nullptr;          // R6 bug only
  Domain domain;
  PipelineState state;  // local handles
  Recording rec;
  absl::flat_hash_map<void*, LocalEntry> locals;  // open local handles
  absl::flat_hash_map<void*, void*> ic_to_local;  // IC object -> its open local handle
  absl::flat_hash_set<void*> building_queries;    // local query handles begun, not ended
  absl::flat_hash_set<void*> mapped_resources;    // local resources currently mapped
  absl::flat_hash_set<const IcObject*> mapped_this_recording;  // first map must discard (R64)
  bool closing_started = false;  // a local close happened in this Clo/Abd phase (R51)
  bool local_oom_reported = false;
  bool r16_done = false;            // planted bug R16 fires once per DC
  void* last_used_local = nullptr;  // planted bug R50 only
  uint64_t cl_size = 0;             // first CalcPrivateCommandListSize answer
  uint64_t finishes = 0;            // command lists produced (read by the R36 planted bug)
};

// The device / immediate context (placement-constructed in hDrvDevice).
struct Device {
  uint32_t magic = kDeviceMagic;
  Config config;
  D3D10DDI_HRTDEVICE rt_device{};
  D3D10DDI_HRTCORELAYER rt_core_layer{};
  const D3DDDI_DEVICECALLBACKS* kt = nullptr;                     // by pointer (R6)
  const D3D11DDI_CORELAYER_DEVICECALLBACKS* callbacks = nullptr;  // by pointer (R6)
  D3D11DDI_DEVICEFUNCS* ic_table = nullptr;                       // R5 bug rewrites a slot here
  PFND3D11DDI_PERFORM_AMORTIZED_PROCESSING_CB cached_amortized = nullptr;  // R6 bug only
  std::atomic<uint64_t> next_id{1};

  // IC domain.
  Domain ic_domain;
  PipelineState ic_state;
  // The kernel side (umd/umd_context.h): allocations, the IC's GPU context and its command
  // buffer (commands in the GPU model's user format, refcmd records in kPrivate commands).
  std::unique_ptr<gpu::UmdDevice> umd;
  std::unique_ptr<gpu::UmdContext> gpu_ctx;
  gpu::DynamicAliasTable aliases;  // IC's current allocation per dynamic resource (R66)
  bool app_pending = false;        // application commands since the last submit
  bool in_preamble = false;        // re-emitting state after a submit
  bool context_created = false;
  uint32_t front_buffer = 0;  // primary allocation presents blt into (0: none yet)
  HANDLE hcontext = nullptr;  // the IC's kernel context (d3dumddi.h: a HANDLE)
  uint64_t submits = 0;
  uint64_t completed_fence = 0;
  bool r5_done = false;

  // Free-threaded state.
  std::atomic<uint64_t> ddi_calls{0};
  std::atomic<bool> removed{false};
  std::atomic<uint64_t> fault_counters[static_cast<int>(FaultSite::kCount)] = {};

  std::mutex cls_mu;
  absl::flat_hash_map<void*, ClEntry> cls;
  std::mutex deferred_mu;
  std::vector<DeferredDestruction> deferred;
};

}  // namespace cltrace::refdriver

#endif  // CLTRACE_REFDRIVER_INTERNAL_DRIVER_H_
