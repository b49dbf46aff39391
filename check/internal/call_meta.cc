#include "check/internal/call_meta.h"

#include <algorithm>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ddi/call_traits.h"

namespace cltrace::check::internal {
namespace {

using ddi::CallRole;
using format::FieldInfo;
using format::FieldKind;
using format::Layer;

// The checker's Op of a catalog call: its role (ddi/call_traits.h); a role the checker has no
// rule about is the layer's "other".
Op OpOf(CallRole role, Layer layer) {
  switch (role) {
    case CallRole::kNone:
      return Op::kNone;
    case CallRole::kSet:
      return Op::kSetter;
    case CallRole::kSize:
      return Op::kCalcPrivate;
    case CallRole::kCreate:
    case CallRole::kOpen:
      return Op::kCreateObject;
    case CallRole::kDestroy:
      return Op::kDestroyObject;
    case CallRole::kMap:
      return Op::kMap;
    case CallRole::kUnmap:
      return Op::kUnmap;
    case CallRole::kQueryBegin:
      return Op::kQueryBegin;
    case CallRole::kQueryEnd:
      return Op::kQueryEnd;
    case CallRole::kFlush:
      return Op::kFlush;
    case CallRole::kCaps:
      return Op::kGetCaps;
    case CallRole::kCreateDevice:
      return Op::kCreateDevice;
    case CallRole::kDestroyDevice:
      return Op::kDestroyDevice;
    case CallRole::kSizeContext:
      return Op::kCalcPrivateDeferredContextSize;
    case CallRole::kCreateContext:
      return Op::kCreateDeferredContext;
    case CallRole::kRecycleCreateContext:
      return Op::kRecycleCreateDeferredContext;
    case CallRole::kSizeCommandList:
      return Op::kCalcPrivateCommandListSize;
    case CallRole::kCreateCommandList:
      return Op::kCreateCommandList;
    case CallRole::kRecycleCreateCommandList:
      return Op::kRecycleCreateCommandList;
    case CallRole::kRecycleCommandList:
      return Op::kRecycleCommandList;
    case CallRole::kRecycleDestroyCommandList:
      return Op::kRecycleDestroyCommandList;
    case CallRole::kDestroyCommandList:
      return Op::kDestroyCommandList;
    case CallRole::kAbandonCommandList:
      return Op::kAbandonCommandList;
    case CallRole::kExecute:
      return Op::kCommandListExecute;
    case CallRole::kHandleSizes:
      return Op::kCheckHandleSizes;
    case CallRole::kLocalSize:
      return Op::kCalcHandleSize;
    case CallRole::kPresent:
      return layer == Layer::kDxgi ? Op::kDxgiPresent : Op::kPresentCb;
    case CallRole::kSetDisplayMode:
      return layer == Layer::kDxgi ? Op::kDxgiSetDisplayMode : Op::kSetDisplayModeCb;
    case CallRole::kErrorCb:
      return Op::kSetErrorCb;
    case CallRole::kAmortizedCb:
      return Op::kAmortizedCb;
    case CallRole::kDisableStagingCb:
      return Op::kDisableStagingCb;
    case CallRole::kStateRefresh:
      return Op::kStateCb;
    case CallRole::kRender:
      return Op::kRenderCb;
    case CallRole::kAllocate:
      return Op::kAllocateCb;
    case CallRole::kDeallocate:
      return Op::kDeallocateCb;
    case CallRole::kCreateKernelContext:
      return Op::kCreateContextCb;
    case CallRole::kKernelContextCb:
      return Op::kHContextCb;
    case CallRole::kKmdRender:
      return Op::kKmdRender;
    case CallRole::kKmdPatch:
      return Op::kKmdPatch;
    case CallRole::kKmdSubmit:
      return Op::kKmdSubmitCommand;
    case CallRole::kKmdInterrupt:
      return Op::kKmdInterruptRoutine;
    case CallRole::kNotifyInterrupt:
      return Op::kDxgkNotifyInterrupt;
    case CallRole::kQueueDpc:
      return Op::kDxgkQueueDpc;
    case CallRole::kDrawPrimitives2:
      return Op::kDx6DrawPrimitives2;
    case CallRole::kOther:
      break;
  }
  switch (layer) {
    case Layer::kDxgi:
      return Op::kDxgiOther;
    case Layer::kCoreLayer:
    case Layer::kKernelCb:
      return Op::kOtherCb;
    case Layer::kKmd:
    case Layer::kDxgkrnl:
      return Op::kKmdOther;
    case Layer::kDx6:
      return Op::kDx6Other;
    case Layer::kApi:
      return Op::kAnnotation;
    default:
      return Op::kOther;
  }
}

bool IsObject(const FieldInfo& f) {
  return f.kind == FieldKind::kHandle && ddi::HandleTraitsOf(f.type_index).object_type >= 0;
}

bool IsRuntimeHandle(const FieldInfo& f) {
  return f.kind == FieldKind::kHandle &&
         ddi::HandleTraitsOf(f.type_index).handle_class == ddi::HandleClass::kRuntime;
}

// Every array field, with the element offsets of its object handles.
void ArrayFields(absl::Span<const FieldInfo> fields, CallMeta& m) {
  for (size_t f = 0; f < fields.size(); ++f) {
    if (fields[f].kind != FieldKind::kArray) continue;
    ArrayField a;
    a.field = static_cast<int16_t>(f);
    auto elems = format::ElementFields(fields[f]);
    a.stride = static_cast<uint16_t>(elems.size());
    int n = 0;
    for (size_t e = 0; e < elems.size() && n < 2; ++e)
      if (IsObject(elems[e])) a.handle_elem[n++] = static_cast<int8_t>(e);
    m.arrays.push_back(a);
  }
}

// A create's handle (the object handle right before its HRT handle), its argument structure
// and the object the structure names (a view's resource).
void CreateHandles(absl::Span<const FieldInfo> fields, int16_t rt, CallMeta& m) {
  m.rt = rt;
  for (int16_t f = rt - 1; f > 0; --f) {
    if (IsObject(fields[f])) {
      m.handle = f;
      break;
    }
  }
  if (m.present != kNoField && m.handle != kNoField && m.present < m.handle) {
    // kPresent's elem_count is the number of member fields right after it.
    m.args_first = m.present + 1;
    m.args_end =
        static_cast<int16_t>(std::min<int>(m.args_first + fields[m.present].elem_count, m.handle));
    for (int16_t f = m.args_first; f < m.args_end; ++f)
      if (IsObject(fields[f])) m.dependency = f;
  }
}

// The handle roles of a device-layer call: what it creates, destroys or uses.
void DeviceHandles(absl::Span<const FieldInfo> fields, CallMeta& m) {
  int16_t rt = kNoField;
  for (size_t f = 1; f < fields.size() && rt == kNoField; ++f)
    if (IsRuntimeHandle(fields[f])) rt = static_cast<int16_t>(f);
  for (size_t f = 1; f < fields.size() && m.present == kNoField; ++f)
    if (fields[f].kind == FieldKind::kPresent) m.present = static_cast<int16_t>(f);
  const bool creates = m.op == Op::kCreateObject || m.op == Op::kCreateCommandList ||
                       m.op == Op::kRecycleCreateCommandList;
  if (creates && rt != kNoField) {
    CreateHandles(fields, rt, m);
  } else if (m.op == Op::kCreateObject) {
    // A create the catalog gives no HRT slot: not an object creation we model.
    m.op = Op::kOther;
  } else {
    for (size_t f = 1; f < fields.size(); ++f) {
      if (!IsObject(fields[f])) continue;
      if (m.handle == kNoField) m.handle = static_cast<int16_t>(f);
      m.handle_fields.push_back(static_cast<int16_t>(f));
    }
    if (m.op == Op::kDestroyObject && m.handle == kNoField) m.op = Op::kOther;
  }
  if (m.handle != kNoField) {
    m.object_type = ddi::HandleTraitsOf(fields[m.handle].type_index).object_type;
  }
}

// The fields of a device-layer call the rules read, by their catalog names.
void DeviceFields(const format::CallInfo& ci, CallMeta& m) {
  auto idx = [&](absl::string_view field) {
    return static_cast<int16_t>(format::FieldIndex(ci, field));
  };
  m.hdeferred = idx("hDeferredContext");
  m.hdrvcontext = idx("hDrvContext");
  m.hrtcorelayer = idx("hRTCoreLayer");
  m.handle_type = idx("HandleType");
  m.ddimap = idx("DDIMap");
  m.usage = idx("Usage");
  m.misc_flags = idx("MiscFlags");
  m.primary_desc = idx("pPrimaryDesc");
  m.count_in = idx("pHSizes");
  m.count_out = idx("pHSizesOut");
  m.sizes_array = idx("pHandleSize");
  for (absl::string_view slot : {"StartSlot", "StartBuffer", "Offset"}) {
    if (m.start_slot == kNoField) m.start_slot = idx(slot);
  }
}

CallMeta Build(format::CallId id) {
  const format::CallInfo& ci = *format::GetCall(id);
  const ddi::CallTraits& t = ddi::TraitsOf(id);
  auto fields = format::Fields(ci);
  CallMeta m;
  m.op = OpOf(t.role, t.layer);
  m.layer = t.layer;
  m.domain = t.domain;
  m.in_ic_table = t.in_ic_table;
  m.in_dc_table = t.in_dc_table;
  m.fixed_count = static_cast<uint16_t>(fields.size());
  // Every dc_rule= names a rule (CallMetaTest.EveryDcTableRuleIsARule); R4 if not.
  const rules::RuleInfo* dc_rule = rules::FindRule(t.dc_table_rule);
  m.dc_table_rule = dc_rule != nullptr ? dc_rule->rule : Rule::kR4;
  ArrayFields(fields, m);
  auto idx = [&](absl::string_view field) {
    return static_cast<int16_t>(format::FieldIndex(ci, field));
  };
  m.hresult = idx("hResult");
  m.hruntime = idx("hRuntimeDevice");
  m.hcontext = idx("hContext");
  if (t.layer == Layer::kAdapter) m.hdevice = idx("hAdapter");
  if (t.layer == Layer::kDevice || t.layer == Layer::kDxgi) m.hdevice = idx("hDevice");
  if (t.role == CallRole::kCreateDevice) {
    m.hdrvdevice = ddi::fields::CreateDevice::hDrvDevice;
    m.hrtcorelayer = ddi::fields::CreateDevice::hRTCoreLayer;
  } else if (t.role == CallRole::kCaps) {
    m.caps_type = ddi::fields::GetCaps::Type;
    m.caps_array = ddi::fields::GetCaps::pData_pData;
  }
  if (t.layer != Layer::kDevice) return m;
  DeviceHandles(fields, m);
  DeviceFields(ci, m);
  if (m.op == Op::kSetter) m.bind_group = static_cast<uint16_t>(t.bind_group);
  m.work = m.op == Op::kOther || m.op == Op::kMap || m.op == Op::kUnmap ||
           m.op == Op::kQueryBegin || m.op == Op::kQueryEnd || m.op == Op::kCommandListExecute;
  return m;
}

}  // namespace

const CallTable& CallTable::Get() {
  static const CallTable* table = new CallTable();
  return *table;
}

CallTable::CallTable() {
  const auto handle_types = format::HandleTypes();
  object_type_.resize(handle_types.size(), -1);
  for (size_t i = 0; i < handle_types.size(); ++i) {
    object_type_[i] = ddi::HandleTraitsOf(static_cast<uint16_t>(i)).object_type;
  }
  metas_.resize(format::Calls().size());
  for (size_t id = 1; id < metas_.size(); ++id) metas_[id] = Build(static_cast<format::CallId>(id));
  constants_ = LookUpConstants();
}

Constants CallTable::LookUpConstants() {
  auto value = [](absl::string_view e, absl::string_view n, uint64_t fallback) -> uint64_t {
    const format::EnumInfo* info = format::FindEnum(e);
    if (info == nullptr) return fallback;
    auto v = format::ValueOfName(*info, n);
    return v ? *v : fallback;
  };
  Constants c;
  c.e_outofmemory = static_cast<uint32_t>(value("HRESULT_NAMES", "E_OUTOFMEMORY", 0x8007000E));
  c.e_invalidarg = static_cast<uint32_t>(value("HRESULT_NAMES", "E_INVALIDARG", 0x80070057));
  c.deviceremoved =
      static_cast<uint32_t>(value("HRESULT_NAMES", "D3DDDIERR_DEVICEREMOVED", 0x88760870));
  c.dxgi_deviceremoved =
      static_cast<uint32_t>(value("HRESULT_NAMES", "DXGI_ERROR_DEVICE_REMOVED", 0x887A0005));
  c.usage_dynamic = value("D3D10_DDI_RESOURCE_USAGE", "D3D10_DDI_USAGE_DYNAMIC", 2);
  c.misc_shared = value("D3D10_DDI_RESOURCE_MISC_FLAG", "D3D10_DDI_RESOURCE_MISC_SHARED", 0x2);
  c.map_discard = value("D3D10_DDI_MAP", "D3D10_DDI_MAP_WRITE_DISCARD", 4);
  c.map_nooverwrite = value("D3D10_DDI_MAP", "D3D10_DDI_MAP_WRITE_NOOVERWRITE", 5);
  c.ht_commandlist = value("D3D11DDI_HANDLETYPE", "D3D11DDI_HT_COMMANDLIST", 11);
  c.caps_threading = value("D3D10_2DDICAPS_TYPE", "D3D11DDICAPS_THREADING", 128);
  c.caps_freethreaded = value("D3D11DDI_THREADING_CAPS_FLAGS", "D3D11DDICAPS_FREETHREADED", 0x1);
  c.caps_commandlists = value("D3D11DDI_THREADING_CAPS_FLAGS", "D3D11DDICAPS_COMMANDLISTS", 0x2);
  c.caps_commandlists_build2 =
      value("D3D11DDI_THREADING_CAPS_FLAGS", "D3D11DDICAPS_COMMANDLISTS_BUILD_2", 0x4);
  return c;
}

}  // namespace cltrace::check::internal
