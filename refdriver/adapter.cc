// Entry point and adapter/device functions of the reference driver: OpenAdapter10_2, GetCaps
// (FREETHREADED | COMMANDLISTS_BUILD_2), CreateDevice (tables, callback tables kept by
// pointer, GPU context), and the IC DestroyDevice that finishes all deferred destruction.
#include <mutex>
#include <new>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "refdriver/internal/common.h"
#include "refdriver/internal/ops.h"
#include "refdriver/internal/tables.h"

namespace cltrace::refdriver {
namespace {

struct Adapter {
  Config config;
  D3D10DDI_HRTADAPTER rt{};
};

// Adapters are the driver's own allocations (freed at CloseAdapter), so their handles are
// validated against this registry rather than by reading their memory.
struct Adapters {
  std::mutex mu;
  absl::flat_hash_set<const void*> live;
};
Adapters& LiveAdapters() {
  static Adapters* adapters = new Adapters();  // never destroyed: calls may come at exit
  return *adapters;
}

// The live adapter behind `h`; nullptr (reported R39) otherwise.
Adapter* AdapterOf(D3D10DDI_HADAPTER h, const char* fn) {
  Adapters& a = LiveAdapters();
  std::lock_guard<std::mutex> lock(a.mu);
  if (!a.live.contains(h.pDrvPrivate)) {
    Report(rules::Rule::kR39, h.pDrvPrivate,
           absl::StrCat(fn,
                        ": hAdapter is not an open adapter of this driver (closed or never "
                        "opened)"));
    return nullptr;
  }
  return static_cast<Adapter*>(h.pDrvPrivate);
}

// The one interface this driver implements: D3D11.0 (Microsoft's encoding, ddi_abi.h).
constexpr UINT64 kSupportedVersion = D3D11_0_DDI_SUPPORTED;

SIZE_T APIENTRY CalcPrivateDeviceSize(D3D10DDI_HADAPTER, const D3D10DDIARG_CALCPRIVATEDEVICESIZE*) {
  CallScope scope("CalcPrivateDeviceSize");
  return sizeof(Device);
}

HRESULT APIENTRY GetSupportedVersions(D3D10DDI_HADAPTER, UINT32* entries, UINT64* versions) {
  CallScope scope("GetSupportedVersions");
  if (entries == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  if (versions != nullptr && *entries >= 1) versions[0] = kSupportedVersion;
  *entries = 1;
  return S_OK;
}

HRESULT APIENTRY GetCaps(D3D10DDI_HADAPTER, const D3D10_2DDIARG_GETCAPS* caps) {
  CallScope scope("GetCaps");
  if (caps == nullptr || caps->pData == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  if (caps->Type == D3D11DDICAPS_THREADING) {
    if (caps->DataSize < sizeof(D3D11DDI_THREADING_CAPS)) return static_cast<HRESULT>(E_INVALIDARG);
    auto* t = static_cast<D3D11DDI_THREADING_CAPS*>(caps->pData);
    t->Caps = D3D11DDICAPS_FREETHREADED | D3D11DDICAPS_COMMANDLISTS_BUILD_2;
    return S_OK;
  }
  std::memset(caps->pData, 0, caps->DataSize);  // no optional features
  return S_OK;
}

HRESULT APIENTRY CreateDevice(D3D10DDI_HADAPTER hAdapter, D3D10DDIARG_CREATEDEVICE* args) {
  CallScope scope("CreateDevice");
  Adapter* adapter = AdapterOf(hAdapter, "CreateDevice");
  if (adapter == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  if (!ArgPresent(args, "CreateDevice", "pCreateData") ||
      !HandleMemoryPresent(args->hDrvDevice.pDrvPrivate, "CreateDevice", "hDrvDevice") ||
      !ArgPresent(args->pKTCallbacks, "CreateDevice", "pKTCallbacks") ||
      !ArgPresent(args->p11UMCallbacks, "CreateDevice", "p11UMCallbacks") ||
      !ArgPresent(args->p11DeviceFuncs, "CreateDevice", "p11DeviceFuncs")) {
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  if (const char* kind = ObjectKind(args->hDrvDevice.pDrvPrivate)) {
    Report(rules::Rule::kR57, args->hDrvDevice.pDrvPrivate,
           absl::StrCat("CreateDevice into the memory of ", kind));
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  auto* dev = new (args->hDrvDevice.pDrvPrivate) Device();
  dev->config = adapter->config;
  dev->rt_device = args->hRTDevice;
  dev->rt_core_layer = args->hRTCoreLayer;
  // Callback tables are kept by pointer and called through every time (R6).
  dev->kt = args->pKTCallbacks;
  dev->callbacks = args->p11UMCallbacks;
  dev->ic_table = args->p11DeviceFuncs;
  if (dev->config.Has(Bug::kR6)) {
    dev->cached_amortized = args->p11UMCallbacks->pfnPerformAmortizedProcessingCb;
  }
  FillIcTable(args->p11DeviceFuncs);
  if (args->DXGIBaseDDI.pDXGIDDIBaseFunctions != nullptr)
    FillDxgiTable(args->DXGIBaseDDI.pDXGIDDIBaseFunctions);
  HRESULT hr = CreateGpuContext(dev);
  if (hr != S_OK) {
    dev->magic = 0;  // no DestroyDevice follows a failed create
    ForgetAliases(dev);
    dev->~Device();
    return hr;
  }
  // Staging destruction may stay deferred in this driver; only legal right here (R7).
  dev->callbacks->pfnDisableDeferredStagingResourceDestruction(dev->rt_core_layer);
  return S_OK;
}

HRESULT APIENTRY CloseAdapter(D3D10DDI_HADAPTER hAdapter) {
  CallScope scope("CloseAdapter");
  Adapters& a = LiveAdapters();
  {
    std::lock_guard<std::mutex> lock(a.mu);
    if (a.live.erase(hAdapter.pDrvPrivate) == 0) {
      Report(rules::Rule::kR39, hAdapter.pDrvPrivate,
             "CloseAdapter: hAdapter is not an open adapter of this driver (closed twice?)");
      return static_cast<HRESULT>(E_INVALIDARG);
    }
  }
  delete static_cast<Adapter*>(hAdapter.pDrvPrivate);
  return S_OK;
}

}  // namespace

void APIENTRY DestroyDevice(D3D10DDI_HDEVICE hDevice) {
  CallScope scope("DestroyDevice");
  // A second DestroyDevice (or one on a deferred context's handle) is reported here, R39/R57.
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  {
    IcDomainScope domain(dev);
    if (HasCommands(dev)) IcSubmit(dev);
    // Every deferred destruction is finished before DestroyDevice returns (R70).
    if (!dev->config.Has(Bug::kR70)) DrainDeferred(dev);
    DestroyGpuContext(dev);
  }
  // The runtime destroys every child before the device (ddi-spec §4.9); a deferred context
  // left alive would later reach this device's freed memory, so it dies with the device.
  if (size_t left = RetireDeferredContextsOf(dev); left > 0) {
    Report(rules::Rule::kR48, dev,
           absl::StrCat("IC DestroyDevice with ", left,
                        " deferred context(s) not destroyed (children go first, §4.9)"));
  }
  dev->magic = 0;  // later calls with this handle are reported, R39
  ForgetAliases(dev);
  dev->~Device();
}

CLTRACE_DDI_EXPORT HRESULT APIENTRY OpenAdapter10_2(D3D10DDIARG_OPENADAPTER* args) {
  CallScope scope("OpenAdapter10_2");
  if (args == nullptr || args->pAdapterFuncs_2 == nullptr)
    return static_cast<HRESULT>(E_INVALIDARG);
  // Like a hardware driver, ask the kernel-mode driver for its private adapter data through the
  // runtime's adapter callbacks (the model's KMD has none to give: zeroed bytes are fine).
  if (args->pAdapterCallbacks != nullptr &&
      args->pAdapterCallbacks->pfnQueryAdapterInfoCb != nullptr) {
    uint8_t kmd_info[16] = {};
    D3DDDICB_QUERYADAPTERINFO query{kmd_info, sizeof(kmd_info)};
    const HRESULT hr =
        args->pAdapterCallbacks->pfnQueryAdapterInfoCb(args->hRTAdapter.handle, &query);
    if (hr != S_OK) return hr;
  }
  auto* adapter = new Adapter();
  {
    Adapters& a = LiveAdapters();
    std::lock_guard<std::mutex> lock(a.mu);
    a.live.insert(adapter);
  }
  adapter->config = CurrentConfig();
  adapter->rt = args->hRTAdapter;
  if (!adapter->config.violations_path.empty()) SetViolationFile(adapter->config.violations_path);
  args->hAdapter.pDrvPrivate = adapter;
  D3D10_2DDI_ADAPTERFUNCS* f = args->pAdapterFuncs_2;
  f->pfnCalcPrivateDeviceSize = &CalcPrivateDeviceSize;
  f->pfnCreateDevice = &CreateDevice;
  f->pfnCloseAdapter = &CloseAdapter;
  f->pfnGetSupportedVersions = &GetSupportedVersions;
  f->pfnGetCaps = &GetCaps;
  return S_OK;
}

}  // namespace cltrace::refdriver
