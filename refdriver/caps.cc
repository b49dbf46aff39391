// The reference driver's capability checks (CheckFormatSupport, CheckMultisampleQualityLevels,
// CheckCounterInfo, CheckCounter: IC table only, §2.3) and RelocateDeviceFuncs.
//
// The answers come from one format table: what a Direct3D 11.0 (feature level 11_0) device
// supports for each DXGI 1.1 format, in the D3D10_DDI_FORMAT_SUPPORT_* bits the 11.0 DDI has.
// Capability checks never report D3DDDIERR_DEVICEREMOVED and answer after removal too (their
// reference pages); a format outside the table is E_FAIL, a NULL output E_INVALIDARG, through
// pfnSetErrorCb.
#include <cstring>

#include "refdriver/internal/common.h"
#include "refdriver/internal/tables.h"

namespace cltrace::refdriver {
namespace {

constexpr UINT kSample = D3D10_DDI_FORMAT_SUPPORT_SHADER_SAMPLE;
constexpr UINT kRt = D3D10_DDI_FORMAT_SUPPORT_RENDERTARGET;
constexpr UINT kBlend = D3D10_DDI_FORMAT_SUPPORT_BLENDABLE;
constexpr UINT kMsRt = D3D10_DDI_FORMAT_SUPPORT_MULTISAMPLE_RENDERTARGET;
constexpr UINT kMsLoad = D3D10_DDI_FORMAT_SUPPORT_MULTISAMPLE_LOAD;
// A filterable colour format a render target can use and blend, with and without MSAA.
constexpr UINT kColor = kSample | kRt | kBlend | kMsRt | kMsLoad;
// An integer colour format: a render target (no filtering, no blending).
constexpr UINT kInteger = kRt | kMsRt | kMsLoad;
// Depth formats: multisampled depth buffers (depth-stencil support has no 11.0 DDI bit).
constexpr UINT kDepth = kMsRt;
// The readable half of a depth format (its SRV format).
constexpr UINT kDepthRead = kSample | kMsLoad;
constexpr UINT kStencilRead = kMsLoad;

// Indexed by DXGI_FORMAT (0 .. DXGI_FORMAT_BC7_UNORM_SRGB). TYPELESS formats only name a
// family: nothing can be sampled or rendered as them.
constexpr UINT kFormatSupport[] = {
    0,             // UNKNOWN
    0,             // R32G32B32A32_TYPELESS
    kColor,        // R32G32B32A32_FLOAT
    kInteger,      // R32G32B32A32_UINT
    kInteger,      // R32G32B32A32_SINT
    0,             // R32G32B32_TYPELESS
    kSample,       // R32G32B32_FLOAT (render target optional in 11.0; not offered)
    0,             // R32G32B32_UINT
    0,             // R32G32B32_SINT
    0,             // R16G16B16A16_TYPELESS
    kColor,        // R16G16B16A16_FLOAT
    kColor,        // R16G16B16A16_UNORM
    kInteger,      // R16G16B16A16_UINT
    kColor,        // R16G16B16A16_SNORM
    kInteger,      // R16G16B16A16_SINT
    0,             // R32G32_TYPELESS
    kColor,        // R32G32_FLOAT
    kInteger,      // R32G32_UINT
    kInteger,      // R32G32_SINT
    0,             // R32G8X24_TYPELESS
    kDepth,        // D32_FLOAT_S8X24_UINT
    kDepthRead,    // R32_FLOAT_X8X24_TYPELESS
    kStencilRead,  // X32_TYPELESS_G8X24_UINT
    0,             // R10G10B10A2_TYPELESS
    kColor,        // R10G10B10A2_UNORM
    kInteger,      // R10G10B10A2_UINT
    kColor,        // R11G11B10_FLOAT
    0,             // R8G8B8A8_TYPELESS
    kColor,        // R8G8B8A8_UNORM
    kColor,        // R8G8B8A8_UNORM_SRGB
    kInteger,      // R8G8B8A8_UINT
    kColor,        // R8G8B8A8_SNORM
    kInteger,      // R8G8B8A8_SINT
    0,             // R16G16_TYPELESS
    kColor,        // R16G16_FLOAT
    kColor,        // R16G16_UNORM
    kInteger,      // R16G16_UINT
    kColor,        // R16G16_SNORM
    kInteger,      // R16G16_SINT
    0,             // R32_TYPELESS
    kDepth,        // D32_FLOAT
    kColor,        // R32_FLOAT
    kInteger,      // R32_UINT
    kInteger,      // R32_SINT
    0,             // R24G8_TYPELESS
    kDepth,        // D24_UNORM_S8_UINT
    kDepthRead,    // R24_UNORM_X8_TYPELESS
    kStencilRead,  // X24_TYPELESS_G8_UINT
    0,             // R8G8_TYPELESS
    kColor,        // R8G8_UNORM
    kInteger,      // R8G8_UINT
    kColor,        // R8G8_SNORM
    kInteger,      // R8G8_SINT
    0,             // R16_TYPELESS
    kColor,        // R16_FLOAT
    kDepth,        // D16_UNORM
    kColor,        // R16_UNORM
    kInteger,      // R16_UINT
    kColor,        // R16_SNORM
    kInteger,      // R16_SINT
    0,             // R8_TYPELESS
    kColor,        // R8_UNORM
    kInteger,      // R8_UINT
    kColor,        // R8_SNORM
    kInteger,      // R8_SINT
    kColor,        // A8_UNORM
    kSample,       // R1_UNORM
    kSample,       // R9G9B9E5_SHAREDEXP
    kSample,       // R8G8_B8G8_UNORM
    kSample,       // G8R8_G8B8_UNORM
    0,             // BC1_TYPELESS
    kSample,       // BC1_UNORM
    kSample,       // BC1_UNORM_SRGB
    0,             // BC2_TYPELESS
    kSample,       // BC2_UNORM
    kSample,       // BC2_UNORM_SRGB
    0,             // BC3_TYPELESS
    kSample,       // BC3_UNORM
    kSample,       // BC3_UNORM_SRGB
    0,             // BC4_TYPELESS
    kSample,       // BC4_UNORM
    kSample,       // BC4_SNORM
    0,             // BC5_TYPELESS
    kSample,       // BC5_UNORM
    kSample,       // BC5_SNORM
    0,             // B5G6R5_UNORM (required from 11.1 only; not offered)
    0,             // B5G5R5A1_UNORM (likewise)
    kColor,        // B8G8R8A8_UNORM
    kColor,        // B8G8R8X8_UNORM
    0,             // R10G10B10_XR_BIAS_A2_UNORM (scan-out only)
    0,             // B8G8R8A8_TYPELESS
    kColor,        // B8G8R8A8_UNORM_SRGB
    0,             // B8G8R8X8_TYPELESS
    kColor,        // B8G8R8X8_UNORM_SRGB
    0,             // BC6H_TYPELESS
    kSample,       // BC6H_UF16
    kSample,       // BC6H_SF16
    0,             // BC7_TYPELESS
    kSample,       // BC7_UNORM
    kSample,       // BC7_UNORM_SRGB
};
static_assert(sizeof(kFormatSupport) / sizeof(kFormatSupport[0]) == DXGI_FORMAT_BC7_UNORM_SRGB + 1);

bool KnownFormat(DXGI_FORMAT f) { return f <= DXGI_FORMAT_BC7_UNORM_SRGB; }

void APIENTRY CheckFormatSupport(D3D10DDI_HDEVICE hDevice, DXGI_FORMAT format, UINT* caps) {
  CallScope scope("CheckFormatSupport");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  CountCall(dev);
  if (caps == nullptr) {
    SetErrorIc(dev, static_cast<HRESULT>(E_INVALIDARG));
    return;
  }
  if (!KnownFormat(format)) {
    *caps = 0;
    SetErrorIc(dev, static_cast<HRESULT>(E_FAIL));
    return;
  }
  *caps = kFormatSupport[format];
}

// One standard sample pattern per supported count (2, 4, 8); 1 sample always has one level,
// 0 and more than 32 none (the page's rules).
void APIENTRY CheckMultisampleQualityLevels(D3D10DDI_HDEVICE hDevice, DXGI_FORMAT format,
                                            UINT samples, UINT* levels) {
  CallScope scope("CheckMultisampleQualityLevels");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  CountCall(dev);
  if (levels == nullptr || !KnownFormat(format)) {
    if (levels != nullptr) *levels = 0;
    SetErrorIc(dev, static_cast<HRESULT>(E_INVALIDARG));
    return;
  }
  if (samples == 1) {
    *levels = 1;
  } else if ((samples == 2 || samples == 4 || samples == 8) &&
             (kFormatSupport[format] & kMsRt) != 0) {
    *levels = 1;
  } else {
    *levels = 0;
  }
}

// No device-dependent counters: LastDeviceDependentCounter 0 (the page's value for none).
void APIENTRY CheckCounterInfo(D3D10DDI_HDEVICE hDevice, D3D10DDI_COUNTER_INFO* info) {
  CallScope scope("CheckCounterInfo");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  CountCall(dev);
  if (info == nullptr) {
    SetErrorIc(dev, static_cast<HRESULT>(E_INVALIDARG));
    return;
  }
  *info = D3D10DDI_COUNTER_INFO{};
  info->LastDeviceDependentCounter = 0;
  info->NumSimultaneousCounters = 0;
  info->NumDetectableParallelUnits = 1;
}

// No counter is supported. The page's answers: a well-known counter the device does not
// support is DXGI_ERROR_UNSUPPORTED; a device-dependent id out of range (every one: there are
// none) E_INVALIDARG. The outputs are zeroed so a caller never reads garbage.
void APIENTRY CheckCounter(D3D10DDI_HDEVICE hDevice, D3D10DDI_QUERY query,
                           D3D10DDI_COUNTER_TYPE* type, UINT* active, CHAR* name, UINT* name_length,
                           CHAR* units, UINT* units_length, CHAR* description,
                           UINT* description_length) {
  CallScope scope("CheckCounter");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  CountCall(dev);
  if (type != nullptr) *type = D3D10DDI_COUNTER_TYPE_UINT32;
  if (active != nullptr) *active = 0;
  for (auto [s, n] : {std::pair{name, name_length}, std::pair{units, units_length},
                      std::pair{description, description_length}}) {
    if (n == nullptr) continue;
    if (s != nullptr && *n > 0) s[0] = '\0';
    *n = s != nullptr && *n > 0 ? 1 : 0;
  }
  SetErrorIc(
      dev, static_cast<HRESULT>(query < D3D10DDI_COUNTER_DEVICE_DEPENDENT_0 ? DXGI_ERROR_UNSUPPORTED
                                                                            : E_INVALIDARG));
}

// The runtime copied the table it gave the driver to pDeviceFunctions: the IC's later slot
// changes (the planted R5 hot swap) go there. A DC table is never written after its creation,
// so only the arguments are checked there.
void APIENTRY RelocateDeviceFuncs(D3D10DDI_HDEVICE hDevice, D3D11DDI_DEVICEFUNCS* table) {
  CallScope scope("RelocateDeviceFuncs");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  CountCall(dev);
  if (!ArgPresent(table, "RelocateDeviceFuncs", "pDeviceFunctions")) return;
  dev->ic_table = table;
}

void APIENTRY DcRelocateDeviceFuncs(D3D10DDI_HDEVICE hDevice, D3D11DDI_DEVICEFUNCS* table) {
  CallScope scope("RelocateDeviceFuncs");
  DcCallScope dc(hDevice, rules::Rule::kR53);
  if (dc.ok()) (void)ArgPresent(table, "RelocateDeviceFuncs", "pDeviceFunctions");
}

}  // namespace

void FillCapsSlots(D3D11DDI_DEVICEFUNCS* t, bool dc) {
  t->pfnRelocateDeviceFuncs = dc ? &DcRelocateDeviceFuncs : &RelocateDeviceFuncs;
  if (dc) return;  // the capability checks are DC-excludable (§2.3)
  t->pfnCheckFormatSupport = &CheckFormatSupport;
  t->pfnCheckMultisampleQualityLevels = &CheckMultisampleQualityLevels;
  t->pfnCheckCounterInfo = &CheckCounterInfo;
  t->pfnCheckCounter = &CheckCounter;
}

}  // namespace cltrace::refdriver
