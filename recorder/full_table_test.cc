// Issue #14: the recorder wraps and records every slot of the full tables. A driver that fills
// all 150 D3D11DDI_DEVICEFUNCS slots and all 7 DXGI_DDI_BASE_FUNCTIONS slots (a no-op of the
// slot's own type each), under a runtime whose D3DDDI_DEVICECALLBACKS has all 22 entries: the
// runtime's tables come back with a thunk in every slot the driver filled and the driver's
// callback table with one in every slot the runtime filled; calling each slot once puts
// exactly one event per slot in the trace, with that slot's function name, and the slot
// order is Microsoft's (ddi/testing/ms_tables.h).
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "ddi/catalog.h"
#include "ddi/testing/ms_tables.h"
#include "format/call_traits.h"
#include "gtest/gtest.h"
#include "recorder/internal/fake_driver.h"
#include "recorder/internal/recording_testing.h"
#include "recorder/recorder.h"

namespace cltrace::recorder {
namespace {

using format::CallId;

// A no-op of exactly the slot's type.
template <typename Pfn>
struct Stub;
template <typename R, typename... P>
struct Stub<R(APIENTRY*)(P...)> {
  static R APIENTRY Fn(P...) {
    if constexpr (!std::is_void_v<R>) return R{};
  }
};

#define CLTRACE_STUB(Name) \
  reinterpret_cast<void*>(&Stub<format::CallTraits<CallId::k##Name>::Pfn>::Fn),
void* const kDeviceStubs[] = {CLTRACE_CALLS_D3D11DDI_DEVICEFUNCS(CLTRACE_STUB)};
void* const kDxgiStubs[] = {CLTRACE_CALLS_DXGI_DDI_BASE_FUNCTIONS(CLTRACE_STUB)};
void* const kKernelStubs[] = {CLTRACE_CALLS_D3DDDI_DEVICECALLBACKS(CLTRACE_STUB)};
#undef CLTRACE_STUB
static_assert(sizeof(kDeviceStubs) == sizeof(D3D11DDI_DEVICEFUNCS));
static_assert(sizeof(kDxgiStubs) == sizeof(DXGI_DDI_BASE_FUNCTIONS));
static_assert(sizeof(kKernelStubs) == sizeof(D3DDDI_DEVICECALLBACKS));

// What the full driver saw at CreateDevice: the callback table the recorder handed it.
const D3DDDI_DEVICECALLBACKS* g_driver_kt = nullptr;
const D3D11DDI_CORELAYER_DEVICECALLBACKS* g_driver_core = nullptr;
HANDLE g_rt_device{};

HRESULT APIENTRY FullCreateDevice(D3D10DDI_HADAPTER, D3D10DDIARG_CREATEDEVICE* a) {
  g_driver_kt = a->pKTCallbacks;
  g_driver_core = a->p11UMCallbacks;
  g_rt_device = a->hRTDevice.handle;
  std::memcpy(a->p11DeviceFuncs, kDeviceStubs, sizeof(kDeviceStubs));
  std::memcpy(a->DXGIBaseDDI.pDXGIDDIBaseFunctions, kDxgiStubs, sizeof(kDxgiStubs));
  return S_OK;
}

HRESULT APIENTRY FullOpenAdapter(D3D10DDIARG_OPENADAPTER* a) {
  HRESULT hr = testing::FakeOpenAdapter10_2(a);
  a->pAdapterFuncs_2->pfnCreateDevice = &FullCreateDevice;
  return hr;
}

HRESULT APIENTRY RecordedFullOpenAdapter(D3D10DDIARG_OPENADAPTER* a) {
  return OpenAdapter(&FullOpenAdapter, a);
}

// Calls a slot with `first` and value-initialized (zero, NULL) other arguments.
template <typename Pfn>
struct Caller;
template <typename R, typename First, typename... Rest>
struct Caller<R(APIENTRY*)(First, Rest...)> {
  static void Call(void* fn, First first) {
    reinterpret_cast<R(APIENTRY*)(First, Rest...)>(fn)(first, Rest{}...);
  }
};

// Calls a DXGI slot with a zeroed argument structure whose hDevice is `h`.
template <typename Pfn>
struct DxgiCaller;
template <typename Arg>
struct DxgiCaller<HRESULT(APIENTRY*)(Arg*)> {
  static void Call(void* fn, D3D10DDI_HDEVICE h) {
    Arg a{};
    a.hDevice.handle = h.pDrvPrivate;
    reinterpret_cast<HRESULT(APIENTRY*)(Arg*)>(fn)(&a);
  }
};

void* SlotOf(const void* table, size_t i) { return static_cast<void* const*>(table)[i]; }

class FullTableTest : public testing::RecordingTest {};

TEST_F(FullTableTest, EverySlotOfTheFullTablesIsWrappedAndRecordedOnce) {
  auto rec = Start();
  testing::FakeRuntime rt;
  // The runtime fills every kernel callback (no-ops).
  std::memcpy(&rt.device().kt, kKernelStubs, sizeof(kKernelStubs));
  ASSERT_EQ(rt.Create(&RecordedFullOpenAdapter), S_OK);
  testing::FakeRtContext& ic = rt.ic();
  const D3D10DDI_HDEVICE h = ic.handle;

  // A proxy never leaves a slot the other side filled empty.
  constexpr size_t kDevice = sizeof(D3D11DDI_DEVICEFUNCS) / sizeof(void*);
  constexpr size_t kDxgi = sizeof(DXGI_DDI_BASE_FUNCTIONS) / sizeof(void*);
  constexpr size_t kKernel = sizeof(D3DDDI_DEVICECALLBACKS) / sizeof(void*);
  ASSERT_EQ(kDevice, 150u);
  ASSERT_EQ(kDxgi, 7u);
  ASSERT_EQ(kKernel, 22u);
  for (size_t i = 0; i < kDevice; ++i) {
    EXPECT_NE(SlotOf(&ic.funcs, i), nullptr) << "device slot " << i;
    EXPECT_NE(SlotOf(&ic.funcs, i), kDeviceStubs[i]) << "device slot " << i << " not wrapped";
  }
  for (size_t i = 0; i < kDxgi; ++i) {
    EXPECT_NE(SlotOf(&rt.dxgi(), i), nullptr) << "DXGI slot " << i;
    EXPECT_NE(SlotOf(&rt.dxgi(), i), kDxgiStubs[i]) << "DXGI slot " << i << " not wrapped";
  }
  ASSERT_NE(g_driver_kt, nullptr);
  for (size_t i = 0; i < kKernel; ++i) {
    EXPECT_NE(SlotOf(g_driver_kt, i), nullptr) << "kernel callback " << i;
    EXPECT_NE(SlotOf(g_driver_kt, i), kKernelStubs[i]) << "kernel callback " << i << " not wrapped";
  }

  // The other two tables: the adapter table (the fake driver fills 4 of its 5 slots) and the
  // core-layer callbacks (the fake runtime fills a few): filled exactly where the other side
  // filled them.
  testing::FakeRtContext core_reference;
  testing::fake_rt::InitCallbacks(&core_reference);
  ASSERT_NE(g_driver_core, nullptr);
  for (size_t i = 0; i < sizeof(D3D11DDI_CORELAYER_DEVICECALLBACKS) / sizeof(void*); ++i) {
    EXPECT_EQ(SlotOf(g_driver_core, i) != nullptr, SlotOf(&core_reference.callbacks, i) != nullptr)
        << "core-layer callback " << i;
  }
  D3D10_2DDI_ADAPTERFUNCS adapter_reference{};
  D3D10DDIARG_OPENADAPTER open{};
  open.pAdapterFuncs_2 = &adapter_reference;
  ASSERT_EQ(FullOpenAdapter(&open), S_OK);
  for (size_t i = 0; i < sizeof(D3D10_2DDI_ADAPTERFUNCS) / sizeof(void*); ++i) {
    EXPECT_EQ(SlotOf(&rt.adapter_funcs(), i) != nullptr, SlotOf(&adapter_reference, i) != nullptr)
        << "adapter slot " << i;
  }

  // Each slot once: the device table (DestroyDevice last: it ends the device), the DXGI table
  // (each argument structure starts with hDevice), the kernel callbacks as the driver calls
  // them.
  const size_t destroy = format::CallTraits<CallId::kDestroyDevice>::kSlotIndex;
  size_t i = 0;
#define CLTRACE_CALL_DEVICE(Name)                                                        \
  if (i++ != destroy) {                                                                  \
    Caller<format::CallTraits<CallId::k##Name>::Pfn>::Call(SlotOf(&ic.funcs, i - 1), h); \
  }
  CLTRACE_CALLS_D3D11DDI_DEVICEFUNCS(CLTRACE_CALL_DEVICE)
#undef CLTRACE_CALL_DEVICE
  i = 0;
#define CLTRACE_CALL_DXGI(Name) \
  DxgiCaller<format::CallTraits<CallId::k##Name>::Pfn>::Call(SlotOf(&rt.dxgi(), i++), h);
  CLTRACE_CALLS_DXGI_DDI_BASE_FUNCTIONS(CLTRACE_CALL_DXGI)
#undef CLTRACE_CALL_DXGI
  i = 0;
#define CLTRACE_CALL_KERNEL(Name) \
  Caller<format::CallTraits<CallId::k##Name>::Pfn>::Call(SlotOf(g_driver_kt, i++), g_rt_device);
  CLTRACE_CALLS_D3DDDI_DEVICECALLBACKS(CLTRACE_CALL_KERNEL)
#undef CLTRACE_CALL_KERNEL
  ic.funcs.pfnDestroyDevice(h);
  rec->Stop();

  format::testing::ReadResult t = testing::ReadRecording(bytes_);
  ASSERT_TRUE(t.status.ok()) << t.status;
  std::map<std::string, std::map<std::string, int>> by_table;
  for (const format::Event& e : t.events) {
    const format::CallInfo* c = format::GetCall(e.call);
    ASSERT_NE(c, nullptr);
    by_table[c->table][c->member]++;
  }
  // Exactly one call per slot, named as Microsoft names the slot.
  auto expect_once = [&](const char* table, const std::vector<std::string>& members) {
    const std::map<std::string, int>& seen = by_table[table];
    int total = 0;
    for (const auto& [member, n] : seen) total += n;
    EXPECT_EQ(total, static_cast<int>(members.size())) << table;
    EXPECT_EQ(seen.size(), members.size()) << table;
    for (const std::string& m : members) {
      auto it = seen.find(m);
      EXPECT_TRUE(it != seen.end() && it->second == 1)
          << table << "." << m << " recorded " << (it == seen.end() ? 0 : it->second) << " times";
    }
  };
#define CLTRACE_MEMBER(table, index, member) #member,
  expect_once("D3D11DDI_DEVICEFUNCS", {CLTRACE_MS_DEVICEFUNCS(CLTRACE_MEMBER)});
  expect_once("DXGI_DDI_BASE_FUNCTIONS", {CLTRACE_MS_DXGI_BASE_FUNCTIONS(CLTRACE_MEMBER)});
  expect_once("D3DDDI_DEVICECALLBACKS", {CLTRACE_MS_DEVICECALLBACKS(CLTRACE_MEMBER)});
#undef CLTRACE_MEMBER
}

}  // namespace
}  // namespace cltrace::recorder
