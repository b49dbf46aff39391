// Entry point and adapter/device functions of the reference driver: OpenAdapter10_2, GetCaps
// (FREETHREADED | COMMANDLISTS_BUILD_2), CreateDevice (tables, callback tables kept by
// pointer, GPU context), and the IC DestroyDevice that finishes all deferred destruction.
#include <new>

#include "refdriver/internal/common.h"
#include "refdriver/internal/ops.h"
#include "refdriver/internal/tables.h"

namespace cltrace::refdriver {
namespace {

struct Adapter {
  Config config;
  D3D10DDI_HRTADAPTER rt{};
};

constexpr UINT64 kSupportedVersion = (uint64_t{11} << 48) | (uint64_t{1} << 32) | 4;

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
  auto* adapter = static_cast<Adapter*>(hAdapter.pDrvPrivate);
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
  if (args->pDXGIBaseDDI != nullptr) FillDxgiTable(args->pDXGIBaseDDI);
  HRESULT hr = CreateGpuContext(dev);
  if (hr != S_OK) {
    dev->~Device();
    return hr;
  }
  // Staging destruction may stay deferred in this driver; only legal right here (R7).
  dev->callbacks->pfnDisableDeferredStagingResourceDestruction(dev->rt_core_layer);
  return S_OK;
}

HRESULT APIENTRY CloseAdapter(D3D10DDI_HADAPTER hAdapter) {
  CallScope scope("CloseAdapter");
  delete static_cast<Adapter*>(hAdapter.pDrvPrivate);
  return S_OK;
}

}  // namespace

void APIENTRY DestroyDevice(D3D10DDI_HDEVICE hDevice) {
  CallScope scope("DestroyDevice");
  Device* dev = AsDevice(hDevice);
  {
    IcDomainScope domain(dev);
    if (HasCommands(dev)) IcSubmit(dev);
    // Every deferred destruction is finished before DestroyDevice returns (R70).
    if (!dev->config.Has(Bug::kR70)) DrainDeferred(dev);
    DestroyGpuContext(dev);
  }
  dev->~Device();
}

CLTRACE_DDI_EXPORT HRESULT APIENTRY OpenAdapter10_2(D3D10DDIARG_OPENADAPTER* args) {
  CallScope scope("OpenAdapter10_2");
  if (args == nullptr || args->pAdapterFuncs == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  auto* adapter = new Adapter();
  adapter->config = CurrentConfig();
  adapter->rt = args->hRTAdapter;
  if (!adapter->config.violations_path.empty()) SetViolationFile(adapter->config.violations_path);
  args->hAdapter.pDrvPrivate = adapter;
  D3D10_2DDI_ADAPTERFUNCS* f = args->pAdapterFuncs;
  f->pfnCalcPrivateDeviceSize = &CalcPrivateDeviceSize;
  f->pfnCreateDevice = &CreateDevice;
  f->pfnCloseAdapter = &CloseAdapter;
  f->pfnGetSupportedVersions = &GetSupportedVersions;
  f->pfnGetCaps = &GetCaps;
  return S_OK;
}

}  // namespace cltrace::refdriver
