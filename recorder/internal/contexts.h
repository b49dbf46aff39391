// What the recorder knows about each wrapped table, found from a call's first parameter.
//
//   AdapterCtx    hAdapter                 the driver's adapter table
//   DeviceCtx     hDevice (IC or a DC)     the driver's device table for that context, the
//                                          snapshot used to notice slot rewrites (R5), the
//                                          runtime's table holding our thunks
//   CoreLayerCtx  hRTCoreLayer             the runtime's core-layer callbacks and the table of
//                                          thunks the driver got, kept in step (R6)
//   KernelCtx     HANDLE        the runtime's kernel-thunk callbacks
//
// Table mutations:
// - R5: the driver owns the device table the recorder handed it; a thunk reads the slot at
//   call time (so a legal hot swap is followed) and compares it with the snapshot. A change is
//   noted on the event ("R5 slot-rewrite ...") and mirrored into the runtime's table by
//   swapping our thunk for its other generation, so the runtime still sees a changed slot.
//   The background thread compares whole tables too, for slots not called afterwards.
// - R6: at the entry of every DDI call the runtime's callback table of the context is compared
//   with the copy taken at the last look (one memcmp); a replaced pointer moves that slot of
//   the driver's table to the next generation of thunks. A driver that cached a pointer calls
//   an old generation's thunk: the call is forwarded to the runtime pointer that generation
//   stood for (the runtime sees exactly what it would have seen) and noted ("R6 ...").
//
// Thread-safety: contexts are created before the runtime can use their handles and never
// freed (device contexts are recycled only after DestroyDevice); the fields the hot path reads
// are written before the handle is published in its HandleMap or are atomics.
#ifndef CLTRACE_RECORDER_INTERNAL_CONTEXTS_H_
#define CLTRACE_RECORDER_INTERNAL_CONTEXTS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "ddi/ddi_abi.h"
#include "format/call_traits.h"
#include "recorder/internal/handle_map.h"

namespace cltrace::recorder::internal {

using AdapterTable = D3D10_2DDI_ADAPTERFUNCS;
using DeviceTable = D3D11DDI_DEVICEFUNCS;
using DxgiTable = DXGI_DDI_BASE_FUNCTIONS;
using CoreTable = D3D11DDI_CORELAYER_DEVICECALLBACKS;
using KernelTable = D3DDDI_DEVICECALLBACKS;

// A function table's slot count (its catalog traits).
template <typename Table>
inline constexpr size_t kSlots = format::TableTraits<Table>::kSlotCount;
inline constexpr size_t kDeviceSlots = kSlots<DeviceTable>;
inline constexpr size_t kCoreSlots = kSlots<CoreTable>;
inline constexpr size_t kKernelSlots = kSlots<KernelTable>;
inline constexpr size_t kAdapterSlots = kSlots<AdapterTable>;
inline constexpr size_t kDxgiSlots = kSlots<DxgiTable>;

// The process-wide kernel-layer tables (KMD, Dxgkrnl, GPU observer) and DX6's.
using KmdTable = DRIVER_INITIALIZATION_DATA;
using DxgkrnlTable = DXGKRNL_INTERFACE;
using GpuObserverTable = CLTRACE_GPU_OBSERVER;
using Dx6BufferTable = DD_D3DBUFCALLBACKS;
using Dx6HalTable = D3DHAL_CALLBACKS3;

// Thunk generations: the device table needs two (a swap must change the pointer), the
// core-layer callbacks four (a driver caching a pointer across up to three runtime swaps is
// still told apart from one calling through the table).
inline constexpr int kDeviceGenerations = 2;
inline constexpr int kCoreGenerations = 4;

// Slot access on tables seen as arrays of pointers (every table is one: call_traits.h
// static_asserts it). Relaxed atomics: the other side may rewrite a slot at any time.
inline void* LoadSlot(const void* table, size_t index) {
  return __atomic_load_n(static_cast<void* const*>(table) + index, __ATOMIC_RELAXED);
}
inline void StoreSlot(void* table, size_t index, void* value) {
  __atomic_store_n(static_cast<void**>(table) + index, value, __ATOMIC_RELAXED);
}

struct CoreLayerCtx {
  uintptr_t key = 0;
  const CoreTable* runtime = nullptr;  // read at call time
  CoreTable mirror{};                  // runtime's pointers as of the last look
  CoreTable driver{};                  // what the driver was given
  std::atomic<uint8_t> gen[kCoreSlots] = {};
  void* target[kCoreGenerations][kCoreSlots] = {};  // runtime pointer per generation
  std::mutex mu;                                    // Resync only
};

struct KernelCtx {
  uintptr_t key = 0;
  const KernelTable* runtime = nullptr;  // read at call time
  KernelTable driver{};
};

struct DeviceCtx {
  uintptr_t key = 0;
  bool is_dc = false;
  const DeviceTable* driver = nullptr;       // the driver's table (read at call time)
  DeviceTable owned_driver{};                // storage when the recorder handed the table out
  DeviceTable snapshot{};                    // driver slots as last seen (R5)
  DeviceTable* runtime = nullptr;            // the runtime's table (our thunks), may be null
  std::atomic<char*> pending_note{nullptr};  // background-detected rewrite, for the next call
  // Background thread only: a changed slot's value at the periodic check that first saw it. The
  // periodic check reports a rewrite only when a later check still sees the same unreported
  // value, so a rewrite made inside a call that checks the table on its way out (Flush, ...) is
  // always noted on that call, never on whichever call the 50 ms tick happened to fall in.
  DeviceTable background_seen{};
  CoreLayerCtx* layer = nullptr;
  KernelCtx* kernel = nullptr;             // IC only
  DeviceCtx* ic = nullptr;                 // the immediate context (itself for the IC)
  const DxgiTable* dxgi_driver = nullptr;  // IC only
  DxgiTable owned_dxgi{};
  DxgiTable* dxgi_runtime = nullptr;
};

struct AdapterCtx {
  uintptr_t key = 0;
  AdapterTable driver{};
  AdapterTable* runtime = nullptr;
};

// The kernel-layer tables (KMD entry points, Dxgkrnl callbacks) and the DX6 driver's tables
// (D3D buffer callbacks, DrawPrimitives2) are process-wide: one real table each, the calls
// carry their own handles, so no per-context lookup is needed.
struct KernelLayerTables {
  std::atomic<const KmdTable*> kmd{nullptr};
  std::atomic<const DxgkrnlTable*> dxgkrnl{nullptr};
  std::atomic<const GpuObserverTable*> gpu_observer{nullptr};
  std::atomic<const Dx6BufferTable*> dx6_buffers{nullptr};
  std::atomic<const Dx6HalTable*> dx6_hal{nullptr};
  KmdTable kmd_thunks{};                   // what WrapKmd hands out
  DxgkrnlTable dxgkrnl_thunks{};           // what WrapDxgkrnl hands out
  GpuObserverTable gpu_observer_thunks{};  // what WrapGpuObserver hands out
  Dx6BufferTable dx6_buffer_thunks{};      // what WrapDx6Buffers hands out
  Dx6HalTable dx6_hal_thunks{};            // what WrapDx6Hal hands out
};
KernelLayerTables& KernelLayer();

struct Registry {
  HandleMap<AdapterCtx> adapters;
  HandleMap<DeviceCtx> devices;
  HandleMap<CoreLayerCtx> layers;
  HandleMap<KernelCtx> kernels;
};
// Created during static initialisation and never destroyed (thunks may run during exit); no
// thunk can run before a context was registered, so the hot path reads it without a guard.
extern Registry* const g_registry;
inline Registry& Contexts() { return *g_registry; }

// The thunk tables, by generation (thunks.cc).
extern void* const kDeviceThunks[kDeviceGenerations][kDeviceSlots];
extern void* const kCoreThunks[kCoreGenerations][kCoreSlots];
extern void* const kKernelThunks[kKernelSlots];
extern void* const kAdapterThunks[kAdapterSlots];
extern void* const kDxgiThunks[kDxgiSlots];
extern void* const kKmdThunks[kSlots<KmdTable>];
extern void* const kDxgkrnlThunks[kSlots<DxgkrnlTable>];
extern void* const kGpuObserverThunks[kSlots<GpuObserverTable>];
extern void* const kDx6BufferThunks[kSlots<Dx6BufferTable>];
extern void* const kDx6HalThunks[kSlots<Dx6HalTable>];

// R6: brings the driver's callback table in step with the runtime's. Hot path: one
// comparison of the two tables (TablesDiffer: AVX2 when the CPU has it).
void ResyncCoreLayer(CoreLayerCtx* layer);
bool TablesDifferAvx2(const void* a, const void* b);
extern const bool g_have_avx2;
inline bool TablesDiffer(const void* a, const void* b) {
  if (g_have_avx2) return TablesDifferAvx2(a, b);
  return std::memcmp(a, b, sizeof(CoreTable)) != 0;
}
inline void SyncCoreLayer(CoreLayerCtx* layer) {
  if (__builtin_expect(TablesDiffer(layer->runtime, &layer->mirror), 0)) {
    ResyncCoreLayer(layer);
  }
}

// R5: slot `index` of ctx's driver table no longer holds the snapshot value. Updates the
// snapshot (once per change across threads), mirrors the change into the runtime's table and
// returns the note for the event (nullptr if another thread already reported it).
char* OnSlotRewrite(DeviceCtx* ctx, size_t index);
// Compares every slot of ctx's driver table with the snapshot; returns the notes of the
// rewrites found (nullptr if none).
char* CheckDeviceTable(DeviceCtx* ctx);
// Background check of every device table (drain thread); notes go to the context's next call.
// Compares every device table with its snapshot. `periodic` (the background thread's tick)
// reports a changed slot only on its second sighting; the final check reports at once.
void CheckAllDeviceTables(bool periodic);

// Registration used by the creating thunks and the public API.
CoreLayerCtx* WrapCoreLayerTable(uintptr_t key, const CoreTable* runtime);
KernelCtx* WrapKernelTable(uintptr_t key, const KernelTable* runtime);
DeviceCtx* NewDeviceCtx();
void RecycleDeviceCtx(DeviceCtx* ctx);
// Fills the runtime's table with thunks for every non-null slot of the driver's table and
// takes the snapshot.
void InstallDeviceThunks(DeviceCtx* ctx);
void InstallDxgiThunks(DeviceCtx* ctx);
// A call whose handle the recorder does not know: forwards to the most recently created
// context of that kind (best effort; reported once on stderr and in the trace).
DeviceCtx* UnknownDevice(const char* fn, const void* handle);
CoreLayerCtx* UnknownLayer(const char* fn, const void* handle);
KernelCtx* UnknownKernel(const char* fn, const void* handle);
AdapterCtx* UnknownAdapter(const char* fn, const void* handle);

}  // namespace cltrace::recorder::internal

#endif  // CLTRACE_RECORDER_INTERNAL_CONTEXTS_H_
