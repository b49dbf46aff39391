// Context registration, table installation and the table-mutation checks (R5, R6), plus the
// public wrapping API of recorder/recorder.h.
#include "recorder/internal/contexts.h"

#include <immintrin.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "ddi/catalog.h"
#include "recorder/internal/core.h"
#include "recorder/recorder.h"

namespace cltrace::recorder {
namespace internal {
namespace {

std::atomic<DeviceCtx*> g_last_device{nullptr};
std::atomic<CoreLayerCtx*> g_last_layer{nullptr};
std::atomic<KernelCtx*> g_last_kernel{nullptr};
std::atomic<AdapterCtx*> g_last_adapter{nullptr};
std::atomic<bool> g_unknown_reported{false};

std::mutex g_pool_mu;
std::vector<DeviceCtx*>& DevicePool() {
  static auto* pool = new std::vector<DeviceCtx*>();
  return *pool;
}

// A handle no context was registered for: reported (once per process), and the thunk goes on
// with the most recent context of that kind (`last`, null if none).
template <typename Ctx>
Ctx* ReportUnknown(const char* kind, const char* fn, const void* handle,
                   const std::atomic<Ctx*>& last) {
  if (!g_unknown_reported.exchange(true)) {
    std::fprintf(stderr,
                 "cltrace recorder: %s called with %s handle %p that was never created through "
                 "the recorder; forwarding to the most recent one (reported once)\n",
                 fn, kind, handle);
  }
  return last.load(std::memory_order_acquire);
}

const char* MemberOf(CallId id) {
  const format::CallInfo* ci = format::GetCall(id);
  return ci != nullptr ? ci->member : "?";
}

}  // namespace

Registry* const g_registry = new Registry;

KernelLayerTables& KernelLayer() {
  static KernelLayerTables* t = new KernelLayerTables;  // never destroyed
  return *t;
}

namespace {

// Installs `real` as the process-wide table of a kernel layer and returns the thunk table.
template <typename Table, size_t N>
const Table* WrapProcessTable(std::atomic<const Table*>* slot, Table* thunks, const Table* real,
                              void* const (&thunk_fns)[N]) {
  static_assert(sizeof(Table) == N * sizeof(void*));
  if (real == nullptr || real == thunks) return real;  // nothing to wrap, or already ours
  static std::mutex mu;
  std::lock_guard<std::mutex> l(mu);
  slot->store(real, std::memory_order_release);
  for (size_t k = 0; k < N; ++k) {
    StoreSlot(thunks, k, LoadSlot(real, k) != nullptr ? thunk_fns[k] : nullptr);
  }
  return thunks;
}

}  // namespace

const bool g_have_avx2 = __builtin_cpu_supports("avx2");

__attribute__((target("avx2"))) bool TablesDifferAvx2(const void* a, const void* b) {
  constexpr size_t kLanes = sizeof(CoreTable) / 32;
  constexpr size_t kTail = sizeof(CoreTable) % 32;
  static_assert(kTail % 8 == 0);
  const auto* pa = static_cast<const char*>(a);
  const auto* pb = static_cast<const char*>(b);
  __m256i acc = _mm256_setzero_si256();
  for (size_t i = 0; i < kLanes; ++i) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pa + 32 * i));
    const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pb + 32 * i));
    acc = _mm256_or_si256(acc, _mm256_xor_si256(x, y));
  }
  uint64_t tail = 0;
  for (size_t i = 0; i < kTail; i += 8) {
    uint64_t ta, tb;
    std::memcpy(&ta, pa + 32 * kLanes + i, 8);
    std::memcpy(&tb, pb + 32 * kLanes + i, 8);
    tail |= ta ^ tb;
  }
  return !_mm256_testz_si256(acc, acc) || tail != 0;
}

CoreLayerCtx* WrapCoreLayerTable(uintptr_t key, const CoreTable* runtime) {
  Registry& r = Contexts();
  CoreLayerCtx* l = r.layers.Find(key);
  if (l != nullptr && l->runtime == runtime) return l;  // a recycle passes the same table
  if (l == nullptr) l = new CoreLayerCtx;
  std::lock_guard<std::mutex> lock(l->mu);
  l->key = key;
  l->runtime = runtime;
  for (size_t k = 0; k < kCoreSlots; ++k) {
    void* fn = LoadSlot(runtime, k);
    StoreSlot(&l->mirror, k, fn);
    l->target[0][k] = fn;
    l->gen[k].store(0, std::memory_order_relaxed);
    StoreSlot(&l->driver, k, fn != nullptr ? kCoreThunks[0][k] : nullptr);
  }
  r.layers.Insert(key, l);
  g_last_layer.store(l, std::memory_order_release);
  return l;
}

void ResyncCoreLayer(CoreLayerCtx* l) {
  std::lock_guard<std::mutex> lock(l->mu);
  for (size_t k = 0; k < kCoreSlots; ++k) {
    void* now = LoadSlot(l->runtime, k);
    if (now == LoadSlot(&l->mirror, k)) continue;
    const uint8_t g =
        static_cast<uint8_t>((l->gen[k].load(std::memory_order_relaxed) + 1) % kCoreGenerations);
    l->target[g][k] = now;
    StoreSlot(&l->driver, k, now != nullptr ? kCoreThunks[g][k] : nullptr);
    l->gen[k].store(g, std::memory_order_release);
    StoreSlot(&l->mirror, k, now);
  }
}

KernelCtx* WrapKernelTable(uintptr_t key, const KernelTable* runtime) {
  Registry& r = Contexts();
  KernelCtx* k = r.kernels.Find(key);
  if (k == nullptr) k = new KernelCtx;
  k->key = key;
  k->runtime = runtime;
  for (size_t i = 0; i < kKernelSlots; ++i) {
    StoreSlot(&k->driver, i, LoadSlot(runtime, i) != nullptr ? kKernelThunks[i] : nullptr);
  }
  r.kernels.Insert(key, k);
  g_last_kernel.store(k, std::memory_order_release);
  return k;
}

DeviceCtx* NewDeviceCtx() {
  DeviceCtx* ctx = nullptr;
  {
    std::lock_guard<std::mutex> l(g_pool_mu);
    if (!DevicePool().empty()) {
      ctx = DevicePool().back();
      DevicePool().pop_back();
    }
  }
  if (ctx == nullptr) return new DeviceCtx;
  ctx->key = 0;
  ctx->is_dc = false;
  ctx->driver = nullptr;
  ctx->owned_driver = DeviceTable{};
  ctx->snapshot = DeviceTable{};
  ctx->runtime = nullptr;
  std::free(ctx->pending_note.exchange(nullptr));
  ctx->layer = nullptr;
  ctx->kernel = nullptr;
  ctx->ic = nullptr;
  ctx->dxgi_driver = nullptr;
  ctx->owned_dxgi = DxgiTable{};
  ctx->dxgi_runtime = nullptr;
  return ctx;
}

void RecycleDeviceCtx(DeviceCtx* ctx) {
  DeviceCtx* expected = ctx;
  g_last_device.compare_exchange_strong(expected, nullptr);
  std::lock_guard<std::mutex> l(g_pool_mu);
  DevicePool().push_back(ctx);
}

void InstallDeviceThunks(DeviceCtx* ctx) {
  for (size_t k = 0; k < kDeviceSlots; ++k) {
    void* fn = LoadSlot(ctx->driver, k);
    StoreSlot(&ctx->snapshot, k, fn);
    if (ctx->runtime != nullptr) {
      StoreSlot(ctx->runtime, k, fn != nullptr ? kDeviceThunks[0][k] : nullptr);
    }
  }
  if (!ctx->is_dc) g_last_device.store(ctx, std::memory_order_release);
}

void InstallDxgiThunks(DeviceCtx* ctx) {
  if (ctx->dxgi_runtime == nullptr || ctx->dxgi_driver == nullptr) return;
  for (size_t k = 0; k < kDxgiSlots; ++k) {
    StoreSlot(ctx->dxgi_runtime, k,
              LoadSlot(ctx->dxgi_driver, k) != nullptr ? kDxgiThunks[k] : nullptr);
  }
}

char* OnSlotRewrite(DeviceCtx* ctx, size_t index) {
  void* now = LoadSlot(ctx->driver, index);
  void* old = LoadSlot(&ctx->snapshot, index);
  if (now == old) return nullptr;
  // One reporter per change, whichever thread (a thunk or the background check) sees it first.
  if (!__atomic_compare_exchange_n(reinterpret_cast<void**>(&ctx->snapshot) + index, &old, now,
                                   false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
    return nullptr;
  }
  // Keep the runtime's view faithful: its slot changes too (to our other generation's thunk,
  // or to NULL), so a runtime that checks its table (R5) still notices.
  if (ctx->runtime != nullptr) {
    void* cur = LoadSlot(ctx->runtime, index);
    void* next = now == nullptr                   ? nullptr
                 : cur == kDeviceThunks[0][index] ? kDeviceThunks[1][index]
                                                  : kDeviceThunks[0][index];
    StoreSlot(ctx->runtime, index, next);
  }
  char text[320];
  std::snprintf(text, sizeof(text),
                "table-rewrite (R5): D3D11DDI_DEVICEFUNCS.%s of %s %p changed by the driver "
                "from %p to %p",
                MemberOf(format::TableTraits<DeviceTable>::kCalls[index]),
                ctx->is_dc ? "deferred context" : "immediate context",
                reinterpret_cast<void*>(ctx->key), old, now);
  return MakeNote(text);
}

char* CheckDeviceTable(DeviceCtx* ctx) {
  char* notes = nullptr;
  if (ctx->driver == nullptr) return notes;
  for (size_t k = 0; k < kDeviceSlots; ++k) {
    if (LoadSlot(ctx->driver, k) != LoadSlot(&ctx->snapshot, k)) {
      notes = JoinNotes(notes, OnSlotRewrite(ctx, k));
    }
  }
  return notes;
}

// The periodic check's half of the two-sighting rule (see DeviceCtx::background_seen): true when
// slot k's change may be reported now.
static bool SeenTwice(DeviceCtx* ctx, size_t k) {
  void* now = LoadSlot(ctx->driver, k);
  if (now == LoadSlot(&ctx->snapshot, k)) return false;
  if (LoadSlot(&ctx->background_seen, k) == now) return true;
  StoreSlot(&ctx->background_seen, k, now);
  return false;
}

void CheckAllDeviceTables(bool periodic) {
  Contexts().devices.ForEach([periodic](DeviceCtx* ctx) {
    if (ctx->driver == nullptr) return;
    char* notes = nullptr;
    if (!periodic) {
      notes = CheckDeviceTable(ctx);
    } else {
      for (size_t k = 0; k < kDeviceSlots; ++k) {
        if (SeenTwice(ctx, k)) notes = JoinNotes(notes, OnSlotRewrite(ctx, k));
      }
    }
    if (notes != nullptr) {
      char* prev = ctx->pending_note.exchange(nullptr);
      ctx->pending_note.store(JoinNotes(prev, notes));
    }
  });
}

DeviceCtx* UnknownDevice(const char* fn, const void* handle) {
  return ReportUnknown("device", fn, handle, g_last_device);
}
CoreLayerCtx* UnknownLayer(const char* fn, const void* handle) {
  return ReportUnknown("core-layer", fn, handle, g_last_layer);
}
KernelCtx* UnknownKernel(const char* fn, const void* handle) {
  return ReportUnknown("runtime device", fn, handle, g_last_kernel);
}
AdapterCtx* UnknownAdapter(const char* fn, const void* handle) {
  return ReportUnknown("adapter", fn, handle, g_last_adapter);
}

}  // namespace internal

using internal::Contexts;

HRESULT OpenAdapter(PFND3D10DDI_OPENADAPTER driver_open_adapter, D3D10DDIARG_OPENADAPTER* args) {
  if (driver_open_adapter == nullptr || args == nullptr) {
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  auto* a = new internal::AdapterCtx;
  D3D10DDIARG_OPENADAPTER sub = *args;
  sub.pAdapterFuncs_2 = &a->driver;
  const HRESULT hr = driver_open_adapter(&sub);
  args->hAdapter = sub.hAdapter;
  if (hr != static_cast<HRESULT>(S_OK)) {
    delete a;
    return hr;
  }
  a->key = reinterpret_cast<uintptr_t>(sub.hAdapter.pDrvPrivate);
  a->runtime = args->pAdapterFuncs_2;
  if (a->runtime != nullptr) {
    for (size_t k = 0; k < internal::kAdapterSlots; ++k) {
      internal::StoreSlot(
          a->runtime, k,
          internal::LoadSlot(&a->driver, k) != nullptr ? internal::kAdapterThunks[k] : nullptr);
    }
  }
  if (a->key != 0) Contexts().adapters.Insert(a->key, a);
  internal::g_last_adapter.store(a, std::memory_order_release);
  return hr;
}

const D3D11DDI_CORELAYER_DEVICECALLBACKS* WrapCoreLayer(
    D3D10DDI_HRTCORELAYER layer, const D3D11DDI_CORELAYER_DEVICECALLBACKS* runtime_callbacks) {
  if (layer.handle == nullptr || runtime_callbacks == nullptr) return runtime_callbacks;
  return &internal::WrapCoreLayerTable(reinterpret_cast<uintptr_t>(layer.handle), runtime_callbacks)
              ->driver;
}

const DRIVER_INITIALIZATION_DATA* WrapKmd(const DRIVER_INITIALIZATION_DATA* real) {
  internal::KernelLayerTables& t = internal::KernelLayer();
  return internal::WrapProcessTable(&t.kmd, &t.kmd_thunks, real, internal::kKmdThunks);
}

const DXGKRNL_INTERFACE* WrapDxgkrnl(const DXGKRNL_INTERFACE* real) {
  internal::KernelLayerTables& t = internal::KernelLayer();
  return internal::WrapProcessTable(&t.dxgkrnl, &t.dxgkrnl_thunks, real, internal::kDxgkrnlThunks);
}

const CLTRACE_GPU_OBSERVER* WrapGpuObserver(const CLTRACE_GPU_OBSERVER* real) {
  internal::KernelLayerTables& t = internal::KernelLayer();
  return internal::WrapProcessTable(&t.gpu_observer, &t.gpu_observer_thunks, real,
                                    internal::kGpuObserverThunks);
}

const DD_D3DBUFCALLBACKS* WrapDx6Buffers(const DD_D3DBUFCALLBACKS* real) {
  internal::KernelLayerTables& t = internal::KernelLayer();
  return internal::WrapProcessTable(&t.dx6_buffers, &t.dx6_buffer_thunks, real,
                                    internal::kDx6BufferThunks);
}

const D3DHAL_CALLBACKS3* WrapDx6Hal(const D3DHAL_CALLBACKS3* real) {
  internal::KernelLayerTables& t = internal::KernelLayer();
  return internal::WrapProcessTable(&t.dx6_hal, &t.dx6_hal_thunks, real, internal::kDx6HalThunks);
}

const D3DDDI_DEVICECALLBACKS* WrapKernelCallbacks(HANDLE device,
                                                  const D3DDDI_DEVICECALLBACKS* runtime_callbacks) {
  if (device == nullptr || runtime_callbacks == nullptr) return runtime_callbacks;
  return &internal::WrapKernelTable(reinterpret_cast<uintptr_t>(device), runtime_callbacks)->driver;
}

void UnwrapDevice(D3D10DDI_HDEVICE device) {
  internal::Registry& r = Contexts();
  internal::DeviceCtx* ctx = r.devices.Find(device.pDrvPrivate);
  if (ctx == nullptr) return;
  r.devices.Erase(device.pDrvPrivate);
  internal::RecycleDeviceCtx(ctx);
}

}  // namespace cltrace::recorder
