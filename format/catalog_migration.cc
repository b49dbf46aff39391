#include "format/catalog_migration.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ddi/catalog.h"
#include "format/call_codec.h"

namespace cltrace::format {
namespace {

// The fixed fields of a call in an older catalog, in that catalog's event order, each named as
// this build names the field that holds the same value ("" for a field this build dropped;
// "a|b" for a value this build holds in two fields).
struct OldLayout {
  CallId call;
  std::vector<absl::string_view> fields;
  bool void_now = false;  // the call returns nothing in this build (old return value dropped)
};

// A view call of version 2: hDevice, the structure (its presence, hDrvResource, Format,
// ResourceDimension, then `view`), then `after`.
OldLayout View(CallId call, absl::string_view present, std::vector<absl::string_view> view,
               std::vector<absl::string_view> after) {
  OldLayout l{call, {"hDevice", present, "hDrvResource", "Format", "ResourceDimension"}, false};
  l.fields.insert(l.fields.end(), view.begin(), view.end());
  l.fields.insert(l.fields.end(), after.begin(), after.end());
  return l;
}

const std::vector<OldLayout>& Version2Layouts() {
  static const auto* layouts = new std::vector<OldLayout>{
      // v2: ... hDrvDevice, pDXGIBaseDDI, hRTCoreLayer, p11UMCallbacks, Flags. The DXGI table
      // pointer is DXGI_DDI_BASE_ARGS's function-table member now; the DXGI callbacks and
      // ppfnRetrieveSubObject were not recorded (NULL).
      {CallId::kCreateDevice,
       {"hAdapter", "pCreateData", "hRTDevice", "Interface", "Version", "pKTCallbacks",
        "p11DeviceFuncs", "hDrvDevice", "DXGIBaseDDI.pDXGIDDIBaseFunctions", "hRTCoreLayer",
        "p11UMCallbacks", "Flags"},
       false},
      // v2: Type, pData (a pointer), pInfo (the caps array), DataSize. Its pointer sat where
      // Microsoft's pInfo sits and its array was the caps the driver wrote, i.e. pData.
      {CallId::kGetCaps, {"hAdapter", "pData", "Type", "pInfo", "pData.pData", "DataSize"}, false},
      // v2: the 11.1 shape, BOOL Flush(hDevice, FlushFlags).
      {CallId::kFlush, {"hDevice", ""}, true},
      // Views, v2: hDrvResource, Format, ResourceDimension, then FirstElement, NumElements
      // (SRV, UAV) or MipSlice (RTV, DSV: where Microsoft's DSV has Flags) in place of the
      // union, which this build records through one alternative (Tex2D; Buffer for UAVs).
      View(CallId::kCalcPrivateShaderResourceViewSize, "pCreateShaderResourceView",
           {"Tex2D.MostDetailedMip", "Tex2D.FirstArraySlice"}, {}),
      View(CallId::kCreateShaderResourceView, "pCreateShaderResourceView",
           {"Tex2D.MostDetailedMip", "Tex2D.FirstArraySlice"},
           {"hShaderResourceView", "hRTShaderResourceView"}),
      View(CallId::kCalcPrivateRenderTargetViewSize, "pCreateRenderTargetView", {"Tex2D.MipSlice"},
           {}),
      View(CallId::kCreateRenderTargetView, "pCreateRenderTargetView", {"Tex2D.MipSlice"},
           {"hRenderTargetView", "hRTRenderTargetView"}),
      View(CallId::kCalcPrivateDepthStencilViewSize, "pCreateDepthStencilView", {"Tex2D.MipSlice"},
           {}),
      View(CallId::kCreateDepthStencilView, "pCreateDepthStencilView", {"Tex2D.MipSlice"},
           {"hDepthStencilView", "hRTDepthStencilView"}),
      View(CallId::kCalcPrivateUnorderedAccessViewSize, "pCreateUnorderedAccessView",
           {"Buffer.FirstElement", "Buffer.NumElements"}, {}),
      View(CallId::kCreateUnorderedAccessView, "pCreateUnorderedAccessView",
           {"Buffer.FirstElement", "Buffer.NumElements"},
           {"hUnorderedAccessView", "hRTUnorderedAccessView"}),
  };
  return *layouts;
}

// Catalog versions 2 and 3 recorded D3D11DDIARG_CREATERESOURCE (CalcPrivateResourceSize,
// CreateResource) in the project's own layout: these structure fields, no arrays, then
// `after`. Version 4 has Microsoft's (pMipInfoList, pInitialDataUP, SampleDesc, pPrimaryDesc).
constexpr absl::string_view kVersion3CreateResource[] = {
    "hDevice",   "pCreateResource", "ResourceDimension",
    "Usage",     "BindFlags",       "MapFlags",
    "MiscFlags", "Format",          "Width",
    "Height",    "Depth",           "MipLevels",
    "ArraySize", "SampleCount",     "ByteStride"};
// Version 3's invented MiscFlags bit for a primary; Microsoft's runtime passes pPrimaryDesc.
constexpr uint64_t kVersion3MiscPrimary = 0x80000000;

// Rewrites a version-3 CalcPrivateResourceSize / CreateResource into version 4's layout:
//   Width, Height, Depth  -> pMipInfoList: MipLevels entries, entry m TexelWidth/Height/Depth =
//                            max(1, size >> m) (a buffer: Width, 1, 1), Physical* = Texel*;
//                            NULL when the structure was NULL or MipLevels 0
//   SampleCount           -> SampleDesc.Count (Quality 0)
//   MiscFlags bit 0x80000000 (MISC_PRIMARY) -> cleared; pPrimaryDesc present, its ModeDesc
//                            Width/Height/Format those of the resource, every other member 0
//   pInitialDataUP        -> NULL (version 3 never passed initial data)
//   every other field     -> the field of the same name
void MigrateVersion3CreateResource(Event* e) {
  const CallInfo& ci = *GetCall(e->call);
  const absl::Span<const FieldInfo> now = Fields(ci);
  constexpr size_t kOldStruct = std::size(kVersion3CreateResource);
  const size_t old_fixed = kOldStruct + (e->call == CallId::kCreateResource ? 2 : 0);
  auto old = [&](size_t i) -> uint64_t { return i < e->args.size() ? e->args[i] : 0; };
  absl::InlinedVector<uint64_t, 8> args(now.size(), 0);
  auto set = [&](absl::string_view name, uint64_t v) {
    const int at = FieldIndex(ci, name);
    if (at >= 0) args[static_cast<size_t>(at)] = v;
  };
  uint64_t width = 0, height = 0, depth = 0, misc = 0, format = 0, dimension = 0, mips = 0;
  for (size_t i = 0; i < kOldStruct; ++i) {
    const absl::string_view name = kVersion3CreateResource[i];
    const uint64_t v = old(i);
    if (name == "Width") {
      width = v;
    } else if (name == "Height") {
      height = v;
    } else if (name == "Depth") {
      depth = v;
    } else if (name == "SampleCount") {
      set("SampleDesc.Count", v);
    } else if (name == "MiscFlags") {
      misc = v;
      set(name, v & ~kVersion3MiscPrimary);
    } else {
      if (name == "Format") format = v;
      if (name == "ResourceDimension") dimension = v;
      if (name == "MipLevels") mips = v;
      set(name, v);
    }
  }
  if (e->call == CallId::kCreateResource) {
    set("hResource", old(kOldStruct));
    set("hRTResource", old(kOldStruct + 1));
  }
  const bool present = old(1) != 0;
  if (present && (misc & kVersion3MiscPrimary) != 0) {
    set("pPrimaryDesc", 1);
    set("pPrimaryDesc.ModeDesc.Width", width);
    set("pPrimaryDesc.ModeDesc.Height", height);
    set("pPrimaryDesc.ModeDesc.Format", format);
  }
  // pMipInfoList: the first array, so its elements come first after the fixed fields.
  const uint64_t n = present ? std::min<uint64_t>(mips, kMaxRecordedArrayElements) : 0;
  set("pMipInfoList", n == 0 ? 0 : 1 + n);
  constexpr uint64_t kBuffer = 1;  // D3D10DDIRESOURCE_BUFFER
  for (uint64_t m = 0; m < n; ++m) {
    auto level = [&](uint64_t size) {
      return std::max<uint64_t>(size >> std::min<uint64_t>(m, 63), 1);
    };
    const uint64_t w = dimension == kBuffer ? width : level(width);
    const uint64_t h = dimension == kBuffer ? 1 : level(height);
    const uint64_t d = dimension == kBuffer ? 1 : level(depth);
    for (uint64_t v : {w, h, d, w, h, d}) args.push_back(v);
  }
  // Any values after the old fixed fields (a malformed event) are kept for validation to see.
  for (size_t i = old_fixed; i < e->args.size(); ++i) args.push_back(e->args[i]);
  e->args = std::move(args);
}

// Catalog version 4 gave the D3DDDICB_* kernel-thunk structures Microsoft's (Windows 7)
// layouts and the callbacks Microsoft's parameter names; versions 2 and 3 recorded these
// calls alike. Their fields as versions 2 and 3 recorded them:
const std::vector<OldLayout>& Version3Layouts() {
  static const auto* layouts = new std::vector<OldLayout>{
      // v3: GetCaps(hAdapter, pCaps): the structure's pointer is Microsoft's pData now, so its
      // pData member (the caps array) is recorded as pData.pData.
      {CallId::kGetCaps, {"hAdapter", "pData", "Type", "pInfo", "pData.pData", "DataSize"}},
      // v3: LockCb(hDevice, pLockData); D3DDDICB_LOCK's own pData is pData.pData now.
      {CallId::kLockCb,
       {"hDevice", "pData", "hAllocation", "PrivateDriverData", "NumPages", "pPages", "pData.pData",
        "Flags", "GpuVirtualAddress"}},
      // v3: EscapeCb(hDevice, ...) without D3DDDICB_ESCAPE's hDevice member; Microsoft's first
      // parameter is hAdapter. The runtime's device handle was passed there: it fills both.
      {CallId::kEscapeCb,
       {"hAdapter|hDevice", "pData", "Flags", "pPrivateDriverData", "PrivateDriverDataSize",
        "hContext"}},
      // v3: no hResource (Microsoft's leading member: NULL, the allocations are listed).
      {CallId::kQueryResidencyCb,
       {"hDevice", "pData", "NumAllocations", "HandleList", "pResidencyStatus"}},
      // v3: hResource was a kernel resource handle, which Microsoft's structures do not carry
      // (theirs is the runtime's resource HANDLE); no recorder set it (the allocations were
      // listed), so it is dropped. SETPRIORITY's list is Microsoft's HandleList.
      {CallId::kDeallocateCb, {"hDevice", "pData", "", "NumAllocations", "HandleList"}},
      {CallId::kSetPriorityCb,
       {"hDevice", "pData", "", "NumAllocations", "HandleList", "pPriorities"}},
      // v3: an hContext Microsoft's structure does not have, and Info flattened (with a fence
      // value of D3DDDI_SYNCHRONIZATIONOBJECTINFO2). Info is Microsoft's union now, recorded
      // through the semaphore's view (Translate moves a mutex's InitialState into MaxCount).
      {CallId::kCreateSynchronizationObjectCb,
       {"hDevice", "pData", "", "Info.Type", "", "Info.Semaphore.MaxCount",
        "Info.Semaphore.InitialCount", "", "hSyncObject"}},
  };
  return *layouts;
}

// Rewrites e's fixed fields from `old` into this build's layout of its call.
void Translate(const OldLayout& old, Event* e) {
  if (e->call == CallId::kCreateSynchronizationObjectCb && e->args.size() >= 6 &&
      e->args[3] == 1 /* D3DDDI_SYNCHRONIZATION_MUTEX */) {
    // A mutex's InitialState is the union's first word, the semaphore view's MaxCount.
    e->args[5] = e->args[4];
  }
  const CallInfo& ci = *GetCall(e->call);
  const absl::Span<const FieldInfo> now = Fields(ci);
  const size_t old_fixed = old.fields.size();
  absl::InlinedVector<uint64_t, 8> args(now.size(), 0);
  for (size_t i = 0; i < old_fixed && i < e->args.size(); ++i) {
    for (absl::string_view name : absl::StrSplit(old.fields[i], '|', absl::SkipEmpty())) {
      const int at = FieldIndex(ci, name);
      if (at >= 0) args[static_cast<size_t>(at)] = e->args[i];
    }
  }
  // Array elements follow the fixed fields; the arrays are the same ones in the same order.
  for (size_t i = old_fixed; i < e->args.size(); ++i) args.push_back(e->args[i]);
  e->args = std::move(args);
  if (old.void_now) e->ret = 0;
}

}  // namespace

absl::Status CheckCatalogVersion(uint32_t file_version) {
  const uint32_t own = static_cast<uint32_t>(CatalogVersion());
  if (file_version == 0 || (file_version >= kOldestReadableCatalogVersion && file_version <= own))
    return absl::OkStatus();
  if (file_version > own) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "recorded with catalog version %d, cannot be read by this build (catalog version %d): "
        "the trace is newer than this build; use a newer cltrace",
        file_version, own));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "recorded with catalog version %d, cannot be read by this build (catalog version %d): "
      "its field layouts predate catalog version %d, the oldest this build translates; "
      "re-record the trace",
      file_version, own, kOldestReadableCatalogVersion));
}

void MigrateEvent(uint32_t file_version, Event* e) {
  if (file_version != 2 && file_version != 3) return;
  if (e->call == CallId::kCalcPrivateResourceSize || e->call == CallId::kCreateResource) {
    MigrateVersion3CreateResource(e);  // the same layout in versions 2 and 3
    return;
  }
  // A version-2 layout, where the call has one, is the call's version-2 shape (it differs
  // from version 3 too); otherwise versions 2 and 3 recorded the call alike.
  if (file_version == 2) {
    for (const OldLayout& old : Version2Layouts()) {
      if (old.call != e->call) continue;
      Translate(old, e);
      return;
    }
  }
  for (const OldLayout& old : Version3Layouts()) {
    if (old.call != e->call) continue;
    Translate(old, e);
    return;
  }
}

}  // namespace cltrace::format
