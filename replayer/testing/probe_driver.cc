// A driver library for the replayer's content tests: the least of a D3D11 user-mode driver
// that resources can be created, updated and mapped on (immediate and deferred contexts), and
// a log of the bytes it was handed. It makes no callbacks. What it logs, one line per call:
//   upload R sub S: HEX    an UpdateSubresourceUP: the rows of the region at pSysMemUP
//   unmap R sub S: HEX     an Unmap: the rows of the whole mapped subresource as it is now
//   initial R sub S: HEX   a CreateResource's pInitialDataUP[S]: the rows of subresource S
//                          (mip S % MipLevels) at its pSysMem, read with its SysMemPitch
// where R numbers the immediate-context resources in creation order (a deferred context's
// local handle names its IC resource), rows are read with the pitches the call (upload) or
// the probe's own Map (unmap) gives, and HEX leaves out the gaps between rows. Every Map fills
// its memory with 0xee first, so an unmap line shows exactly what was written into the map.
//
// Geometry: buffers (bytes), and textures of a 4-byte format (mip 0, slice 0 only). The map
// pitches are the probe's own: a texture row is padded by `row_pad` bytes, and a buffer maps
// at most `buffer_limit` bytes (0: all of it); both set with CltraceProbeConfigure. The memory
// of a map is exactly what its pitches describe (heap, so an overrun corrupts the heap).
//
// Out-of-band interface (extern "C"): CltraceProbeConfigure(row_pad, buffer_limit),
// CltraceProbeLog() (the log so far, valid until the next call into the probe),
// CltraceProbeReset() (clears the log and numbers resources from 1 again; the configuration
// stays).
//
// Thread-safety: a mutex guards the log and the resources; the replay calls a deferred
// context from its own thread.
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "ddi/ddi_abi.h"

namespace {

constexpr uint32_t kBuffer = 1;  // D3D10DDIRESOURCE_BUFFER

struct Resource {
  uint32_t number = 0;  // creation order, from 1
  uint32_t dimension = 0;
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> map;  // the memory of the current map
  uint32_t row_pitch = 0, depth_pitch = 0;
};

// What the replayer allocates for a resource handle (CalcPrivateResourceSize): a pointer to
// the IC resource (a deferred context's local handle points at the same one).
struct ResourceHandle {
  Resource* resource;
};

struct State {
  std::mutex mu;
  std::string log;
  std::string log_copy;
  uint32_t row_pad = 0;
  uint32_t buffer_limit = 0;
  uint32_t resources = 0;
};

State& S() {
  static State* s = new State();
  return *s;
}

Resource* Of(D3D10DDI_HRESOURCE h) {
  return h.pDrvPrivate == nullptr ? nullptr : static_cast<ResourceHandle*>(h.pDrvPrivate)->resource;
}

void AppendHex(std::string* out, const uint8_t* p, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; ++i) {
    out->push_back(kHex[p[i] >> 4]);
    out->push_back(kHex[p[i] & 15]);
  }
}

// Rows of `rows` × `row_bytes` at `pitch`.
void LogRows(const char* what, const Resource* r, uint32_t sub, const uint8_t* p,
             uint32_t row_bytes, uint32_t rows, uint32_t pitch) {
  std::string& log = S().log;
  log += what;
  // One append per piece: GCC 12's -Wrestrict misfires on chains of std::string operator+.
  log += " ";
  log += std::to_string(r->number);
  log += " sub ";
  log += std::to_string(sub);
  log += ": ";
  for (uint32_t y = 0; y < rows; ++y) AppendHex(&log, p + uint64_t{y} * pitch, row_bytes);
  log += "\n";
}

void APIENTRY UpdateSubresourceUP(D3D10DDI_HDEVICE, D3D10DDI_HRESOURCE dst, UINT sub,
                                  const D3D10_DDI_BOX* box, PVOID data, UINT row_pitch, UINT) {
  std::lock_guard<std::mutex> lock(S().mu);
  Resource* r = Of(dst);
  if (r == nullptr || data == nullptr) return;
  uint32_t row_bytes, rows = 1;
  if (r->dimension == kBuffer) {
    row_bytes = box != nullptr ? static_cast<uint32_t>(box->right - box->left) : r->width;
  } else {
    row_bytes = 4 * (box != nullptr ? static_cast<uint32_t>(box->right - box->left) : r->width);
    rows = box != nullptr ? static_cast<uint32_t>(box->bottom - box->top) : r->height;
  }
  LogRows("upload", r, sub, static_cast<const uint8_t*>(data), row_bytes, rows, row_pitch);
}

void APIENTRY Map(D3D10DDI_HDEVICE, D3D10DDI_HRESOURCE h, UINT, D3D10_DDI_MAP, D3D10_DDI_MAP_FLAG,
                  D3D10DDI_MAPPED_SUBRESOURCE* out) {
  std::lock_guard<std::mutex> lock(S().mu);
  Resource* r = Of(h);
  if (r == nullptr || out == nullptr) return;
  if (r->dimension == kBuffer) {
    const uint32_t n =
        S().buffer_limit != 0 && S().buffer_limit < r->width ? S().buffer_limit : r->width;
    r->row_pitch = r->depth_pitch = n;
    r->map.assign(n, 0xee);
  } else {
    r->row_pitch = 4 * r->width + S().row_pad;
    r->depth_pitch = r->row_pitch * r->height;
    r->map.assign(uint64_t{r->row_pitch} * (r->height - 1) + 4 * r->width, 0xee);
  }
  out->pData = r->map.data();
  out->RowPitch = r->row_pitch;
  out->DepthPitch = r->depth_pitch;
}

void APIENTRY Unmap(D3D10DDI_HDEVICE, D3D10DDI_HRESOURCE h, UINT sub) {
  std::lock_guard<std::mutex> lock(S().mu);
  Resource* r = Of(h);
  if (r == nullptr || r->map.empty()) return;
  if (r->dimension == kBuffer) {
    LogRows("unmap", r, sub, r->map.data(), static_cast<uint32_t>(r->map.size()), 1, 0);
  } else {
    LogRows("unmap", r, sub, r->map.data(), 4 * r->width, r->height, r->row_pitch);
  }
  r->map.clear();
}

SIZE_T APIENTRY CalcPrivateResourceSize(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATERESOURCE*) {
  return sizeof(ResourceHandle);
}

void APIENTRY CreateResource(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATERESOURCE* a,
                             D3D10DDI_HRESOURCE h, D3D10DDI_HRTRESOURCE rt) {
  std::lock_guard<std::mutex> lock(S().mu);
  auto* handle = static_cast<ResourceHandle*>(h.pDrvPrivate);
  if (a == nullptr) {
    // A deferred context's open of an IC resource: the runtime-handle slot carries it.
    handle->resource =
        rt.handle == nullptr ? nullptr : static_cast<ResourceHandle*>(rt.handle)->resource;
    return;
  }
  auto* r = new Resource();
  r->number = ++S().resources;
  r->dimension = a->ResourceDimension;
  // The most detailed mip's size (pMipInfoList[0]).
  const bool sized = a->pMipInfoList != nullptr && a->MipLevels > 0;
  r->width = sized ? a->pMipInfoList[0].TexelWidth : 0;
  r->height = sized && a->pMipInfoList[0].TexelHeight != 0 ? a->pMipInfoList[0].TexelHeight : 1;
  handle->resource = r;
  if (a->pInitialDataUP == nullptr || !sized) return;
  for (uint32_t s = 0; s < a->MipLevels * a->ArraySize; ++s) {
    const D3D10_DDIARG_SUBRESOURCE_UP& up = a->pInitialDataUP[s];
    if (up.pSysMem == nullptr) continue;
    const D3D10DDI_MIPINFO& mip = a->pMipInfoList[s % a->MipLevels];
    const uint32_t row_bytes = r->dimension == kBuffer ? r->width : 4 * mip.TexelWidth;
    const uint32_t rows = r->dimension == kBuffer || mip.TexelHeight == 0 ? 1 : mip.TexelHeight;
    LogRows("initial", r, s, static_cast<const uint8_t*>(up.pSysMem), row_bytes, rows,
            up.SysMemPitch);
  }
}

void APIENTRY DestroyResource(D3D10DDI_HDEVICE, D3D10DDI_HRESOURCE) {}

SIZE_T APIENTRY CalcDeferredContextHandleSize(D3D10DDI_HDEVICE, D3D11DDI_HANDLETYPE, PVOID) {
  return sizeof(ResourceHandle);
}

void FillTable(D3D11DDI_DEVICEFUNCS* t, bool deferred);

SIZE_T APIENTRY CalcPrivateDeferredContextSize(D3D10DDI_HDEVICE,
                                               const D3D11DDIARG_CALCPRIVATEDEFERREDCONTEXTSIZE*) {
  return 64;
}

void APIENTRY CreateDeferredContext(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATEDEFERREDCONTEXT* a) {
  if (a != nullptr && a->p11ContextFuncs != nullptr) FillTable(a->p11ContextFuncs, true);
}

void APIENTRY DestroyDevice(D3D10DDI_HDEVICE) {}

void FillTable(D3D11DDI_DEVICEFUNCS* t, bool deferred) {
  t->pfnResourceUpdateSubresourceUP = &UpdateSubresourceUP;
  t->pfnDefaultConstantBufferUpdateSubresourceUP = &UpdateSubresourceUP;
  t->pfnDynamicIABufferMapDiscard = &Map;
  t->pfnDynamicIABufferMapNoOverwrite = &Map;
  t->pfnDynamicConstantBufferMapDiscard = &Map;
  t->pfnDynamicResourceMapDiscard = &Map;
  t->pfnDynamicIABufferUnmap = &Unmap;
  t->pfnDynamicConstantBufferUnmap = &Unmap;
  t->pfnDynamicResourceUnmap = &Unmap;
  t->pfnCreateResource = &CreateResource;
  t->pfnDestroyResource = &DestroyResource;
  t->pfnDestroyDevice = &DestroyDevice;
  if (!deferred) {
    t->pfnResourceMap = &Map;
    t->pfnResourceUnmap = &Unmap;
    t->pfnStagingResourceMap = &Map;
    t->pfnStagingResourceUnmap = &Unmap;
    t->pfnCalcPrivateResourceSize = &CalcPrivateResourceSize;
    t->pfnCalcDeferredContextHandleSize = &CalcDeferredContextHandleSize;
    t->pfnCalcPrivateDeferredContextSize = &CalcPrivateDeferredContextSize;
    t->pfnCreateDeferredContext = &CreateDeferredContext;
  }
}

SIZE_T APIENTRY CalcPrivateDeviceSize(D3D10DDI_HADAPTER, const D3D10DDIARG_CALCPRIVATEDEVICESIZE*) {
  return 64;
}

HRESULT APIENTRY CreateDevice(D3D10DDI_HADAPTER, D3D10DDIARG_CREATEDEVICE* a) {
  if (a == nullptr || a->p11DeviceFuncs == nullptr) return static_cast<HRESULT>(0x80070057);
  FillTable(a->p11DeviceFuncs, false);
  return 0;
}

HRESULT APIENTRY CloseAdapter(D3D10DDI_HADAPTER) { return 0; }

}  // namespace

extern "C" __attribute__((visibility("default"))) HRESULT APIENTRY
OpenAdapter10_2(D3D10DDIARG_OPENADAPTER* open) {
  if (open == nullptr || open->pAdapterFuncs_2 == nullptr) return static_cast<HRESULT>(0x80070057);
  static int adapter;
  open->hAdapter.pDrvPrivate = &adapter;
  open->pAdapterFuncs_2->pfnCalcPrivateDeviceSize = &CalcPrivateDeviceSize;
  open->pAdapterFuncs_2->pfnCreateDevice = &CreateDevice;
  open->pAdapterFuncs_2->pfnCloseAdapter = &CloseAdapter;
  return 0;
}

extern "C" __attribute__((visibility("default"))) void CltraceProbeConfigure(
    uint32_t row_pad, uint32_t buffer_limit) {
  std::lock_guard<std::mutex> lock(S().mu);
  S().row_pad = row_pad;
  S().buffer_limit = buffer_limit;
}

extern "C" __attribute__((visibility("default"))) const char* CltraceProbeLog() {
  std::lock_guard<std::mutex> lock(S().mu);
  S().log_copy = S().log;
  return S().log_copy.c_str();
}

extern "C" __attribute__((visibility("default"))) void CltraceProbeReset() {
  std::lock_guard<std::mutex> lock(S().mu);
  S().log.clear();
  S().resources = 0;
}
