#include "check/internal/call_meta.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace cltrace::check::internal {
namespace {

using format::FieldInfo;
using format::FieldKind;
using format::Layer;

// D3D11DDI_HANDLETYPE by the part of the handle type name after "DDI_H" (ddi-spec §1.3), so
// D3D10DDI_HBLENDSTATE and a later D3D11_1DDI_HBLENDSTATE both count as blend states.
int ObjectTypeOfName(absl::string_view type_name) {
  size_t at = type_name.rfind("DDI_H");
  if (at == absl::string_view::npos) return -1;
  absl::string_view rest = type_name.substr(at + 5);
  static const auto* kTypes = new absl::flat_hash_map<absl::string_view, int>({
      {"RESOURCE", 0},
      {"SHADERRESOURCEVIEW", 1},
      {"RENDERTARGETVIEW", 2},
      {"DEPTHSTENCILVIEW", 3},
      {"SHADER", 4},
      {"ELEMENTLAYOUT", 5},
      {"BLENDSTATE", 6},
      {"DEPTHSTENCILSTATE", 7},
      {"RASTERIZERSTATE", 8},
      {"SAMPLER", 9},
      {"QUERY", 10},
      {"COMMANDLIST", 11},
      {"UNORDEREDACCESSVIEW", 12},
  });
  auto it = kTypes->find(rest);
  return it == kTypes->end() ? -1 : it->second;
}

bool IsRtHandleName(absl::string_view type_name) { return absl::StrContains(type_name, "DDI_HRT"); }

const Op* ExactDeviceOp(absl::string_view name) {
  static const auto* kOps = new absl::flat_hash_map<absl::string_view, Op>({
      {"DestroyDevice", Op::kDestroyDevice},
      {"CalcPrivateDeferredContextSize", Op::kCalcPrivateDeferredContextSize},
      {"CreateDeferredContext", Op::kCreateDeferredContext},
      {"RecycleCreateDeferredContext", Op::kRecycleCreateDeferredContext},
      {"CalcPrivateCommandListSize", Op::kCalcPrivateCommandListSize},
      {"CreateCommandList", Op::kCreateCommandList},
      {"RecycleCreateCommandList", Op::kRecycleCreateCommandList},
      {"RecycleCommandList", Op::kRecycleCommandList},
      {"RecycleDestroyCommandList", Op::kRecycleDestroyCommandList},
      {"DestroyCommandList", Op::kDestroyCommandList},
      {"CommandListExecute", Op::kCommandListExecute},
      {"AbandonCommandList", Op::kAbandonCommandList},
      {"CheckDeferredContextHandleSizes", Op::kCheckHandleSizes},
      {"CalcDeferredContextHandleSize", Op::kCalcHandleSize},
      {"QueryBegin", Op::kQueryBegin},
      {"QueryEnd", Op::kQueryEnd},
      {"Flush", Op::kFlush},
  });
  auto it = kOps->find(name);
  return it == kOps->end() ? nullptr : &it->second;
}

Op KernelCbOp(absl::string_view name) {
  if (name == "RenderCb") return Op::kRenderCb;
  if (name == "PresentCb") return Op::kPresentCb;
  if (name == "SetDisplayModeCb") return Op::kSetDisplayModeCb;
  if (name == "AllocateCb") return Op::kAllocateCb;
  if (name == "DeallocateCb") return Op::kDeallocateCb;
  if (name == "CreateContextCb") return Op::kCreateContextCb;
  if (name == "EscapeCb" || name == "DestroyContextCb" ||
      name == "WaitForSynchronizationObjectCb" || name == "SignalSynchronizationObjectCb")
    return Op::kHContextCb;
  return Op::kOtherCb;
}

Rule DcTableRule(absl::string_view name) {
  if (name == "CalcDeferredContextHandleSize") return Rule::kR34;
  if (name == "QueryGetData" || name == "Flush" || name == "ResourceIsStagingBusy" ||
      name == "StagingResourceMap" || name == "StagingResourceUnmap" || name == "SetResourceMinLOD")
    return Rule::kR65;
  if (name == "CalcPrivateCommandListSize" || name == "RecycleCreateCommandList" ||
      name == "RecycleCreateDeferredContext")
    return Rule::kR12;
  if (name == "RecycleDestroyCommandList") return Rule::kR14;
  return Rule::kR4;
}

}  // namespace

bool IsSetterName(absl::string_view name) {
  if (absl::StartsWith(name, "Set")) return true;
  // Stage prefixes: Ia, Vs, Ps, Gs, Hs, Ds, Cs, So.
  return name.size() > 5 && name.substr(2, 3) == "Set" && name[0] >= 'A' && name[0] <= 'Z' &&
         name[1] >= 'a' && name[1] <= 'z';
}

const CallTable& CallTable::Get() {
  static const CallTable* table = new CallTable();
  return *table;
}

CallTable::CallTable() {
  const auto handle_types = format::HandleTypes();
  object_type_.resize(handle_types.size(), -1);
  for (size_t i = 0; i < handle_types.size(); ++i) {
    object_type_[i] = static_cast<int8_t>(ObjectTypeOfName(handle_types[i].name));
  }
  auto is_object = [&](const FieldInfo& f) {
    return f.kind == FieldKind::kHandle && ObjectTypeOfHandleType(f.type_index) >= 0;
  };
  auto is_rt = [&](const FieldInfo& f) {
    return f.kind == FieldKind::kHandle && f.type_index < handle_types.size() &&
           IsRtHandleName(handle_types[f.type_index].name);
  };

  const auto calls = format::Calls();
  metas_.resize(calls.size());
  for (size_t id = 1; id < calls.size(); ++id) {
    const format::CallInfo& ci = calls[id];
    CallMeta& m = metas_[id];
    absl::string_view name = ci.name;
    auto fields = format::Fields(ci);
    m.layer = ci.layer;
    m.domain = ci.domain;
    m.in_ic_table = ci.in_ic_table;
    m.in_dc_table = ci.in_dc_table;
    m.fixed_count = static_cast<uint16_t>(fields.size());
    m.dc_table_rule = DcTableRule(name);
    auto idx = [&](absl::string_view field) {
      return static_cast<int16_t>(format::FieldIndex(ci, field));
    };
    for (size_t f = 0; f < fields.size(); ++f) {
      if (fields[f].kind != FieldKind::kArray) continue;
      ArrayField a;
      a.field = static_cast<int16_t>(f);
      auto elems = format::ElementFields(fields[f]);
      a.stride = static_cast<uint16_t>(elems.size());
      int n = 0;
      for (size_t e = 0; e < elems.size() && n < 2; ++e)
        if (is_object(elems[e])) a.handle_elem[n++] = static_cast<int8_t>(e);
      m.arrays.push_back(a);
    }
    m.hresult = idx("hResult");
    m.hruntime = idx("hRuntimeDevice");
    m.hcontext = idx("hContext");

    switch (ci.layer) {
      case Layer::kAdapter:
        m.hdevice = idx("hAdapter");
        if (name == "CreateDevice") {
          m.op = Op::kCreateDevice;
          m.hdrvdevice = idx("hDrvDevice");
          m.hrtcorelayer = idx("hRTCoreLayer");
        } else if (name == "GetCaps") {
          m.op = Op::kGetCaps;
          m.caps_type = idx("Type");
          m.caps_array = idx("pInfo");
        } else if (absl::StartsWith(name, "CalcPrivate")) {
          m.op = Op::kCalcPrivate;
        } else {
          m.op = Op::kOther;
        }
        break;
      case Layer::kDevice: {
        m.hdevice = idx("hDevice");
        if (const Op* op = ExactDeviceOp(name)) {
          m.op = *op;
        } else if (absl::StartsWith(name, "CalcPrivate")) {
          m.op = Op::kCalcPrivate;
        } else if (absl::StartsWith(name, "Create") || absl::StartsWith(name, "Open")) {
          m.op = Op::kCreateObject;
        } else if (absl::StartsWith(name, "Destroy")) {
          m.op = Op::kDestroyObject;
        } else if (absl::EndsWith(name, "Unmap")) {
          m.op = Op::kUnmap;
        } else if (absl::StrContains(name, "Map") && idx("DDIMap") >= 0) {
          m.op = Op::kMap;
        } else if (IsSetterName(name)) {
          m.op = Op::kSetter;
        } else {
          m.op = Op::kOther;
        }
        // Handle roles.
        int16_t rt = kNoField;
        for (size_t f = 1; f < fields.size(); ++f) {
          if (is_rt(fields[f])) {
            rt = static_cast<int16_t>(f);
            break;
          }
        }
        m.present = kNoField;
        for (size_t f = 1; f < fields.size(); ++f) {
          if (fields[f].kind == FieldKind::kPresent) {
            m.present = static_cast<int16_t>(f);
            break;
          }
        }
        bool creates = m.op == Op::kCreateObject || m.op == Op::kCreateCommandList ||
                       m.op == Op::kRecycleCreateCommandList;
        if (creates && rt != kNoField) {
          m.rt = rt;
          for (int16_t f = rt - 1; f > 0; --f) {
            if (is_object(fields[f])) {
              m.handle = f;
              break;
            }
          }
          if (m.present != kNoField && m.handle != kNoField && m.present < m.handle) {
            // kPresent's elem_count is the number of member fields right after it.
            m.args_first = m.present + 1;
            m.args_end = static_cast<int16_t>(
                std::min<int>(m.args_first + fields[m.present].elem_count, m.handle));
            for (int16_t f = m.args_first; f < m.args_end; ++f)
              if (is_object(fields[f])) m.dependency = f;
          }
        } else if (m.op == Op::kCreateObject) {
          // A create the catalog gives no HRT slot: not an object creation we model.
          m.op = Op::kOther;
        } else {
          for (size_t f = 1; f < fields.size(); ++f) {
            if (!is_object(fields[f])) continue;
            if (m.handle == kNoField) m.handle = static_cast<int16_t>(f);
            m.handle_fields.push_back(static_cast<int16_t>(f));
          }
          if (m.op == Op::kDestroyObject && m.handle == kNoField) m.op = Op::kOther;
        }
        if (m.handle != kNoField) {
          m.object_type = static_cast<int8_t>(ObjectTypeOfHandleType(fields[m.handle].type_index));
        }
        m.hdeferred = idx("hDeferredContext");
        m.hdrvcontext = idx("hDrvContext");
        m.hrtcorelayer = idx("hRTCoreLayer");
        m.handle_type = idx("HandleType");
        m.ddimap = idx("DDIMap");
        m.usage = idx("Usage");
        m.misc_flags = idx("MiscFlags");
        m.count_in = idx("pHSizes");
        m.count_out = idx("pHSizesOut");
        m.sizes_array = idx("pHandleSize");
        for (absl::string_view slot : {"StartSlot", "StartBuffer", "HwStartSlot", "Offset"}) {
          if (m.start_slot == kNoField) m.start_slot = idx(slot);
        }
        if (m.op == Op::kSetter) {
          absl::string_view base = name;
          if (absl::ConsumeSuffix(&base, "WithIfaces")) {
            const format::CallInfo* canonical = format::FindCall(base);
            m.bind_group = static_cast<uint16_t>(
                canonical ? static_cast<uint16_t>(format::IdOf(*canonical)) : id);
          } else {
            m.bind_group = static_cast<uint16_t>(id);
          }
        }
        m.work = m.op == Op::kOther || m.op == Op::kMap || m.op == Op::kUnmap ||
                 m.op == Op::kQueryBegin || m.op == Op::kQueryEnd ||
                 m.op == Op::kCommandListExecute;
        break;
      }
      case Layer::kDxgi:
        m.hdevice = idx("hDevice");
        if (name == "PresentDXGI")
          m.op = Op::kDxgiPresent;
        else if (name == "SetDisplayModeDXGI")
          m.op = Op::kDxgiSetDisplayMode;
        else
          m.op = Op::kDxgiOther;
        break;
      case Layer::kCoreLayer:
        if (name == "SetErrorCb")
          m.op = Op::kSetErrorCb;
        else if (name == "PerformAmortizedProcessingCb")
          m.op = Op::kAmortizedCb;
        else if (absl::StrContains(name, "DisableDeferredStagingResourceDestruction"))
          m.op = Op::kDisableStagingCb;
        else if (absl::StartsWith(name, "State"))
          m.op = Op::kStateCb;
        else
          m.op = Op::kOtherCb;
        break;
      case Layer::kKernelCb:
        m.op = KernelCbOp(name);
        break;
      case Layer::kKmd:
        if (name == "DxgkDdiRender" || name == "DxgkDdiRenderKm")
          m.op = Op::kKmdRender;
        else if (name == "DxgkDdiPatch")
          m.op = Op::kKmdPatch;
        else if (name == "DxgkDdiSubmitCommand")
          m.op = Op::kKmdSubmitCommand;
        else if (name == "DxgkDdiInterruptRoutine")
          m.op = Op::kKmdInterruptRoutine;
        else
          m.op = Op::kKmdOther;
        break;
      case Layer::kDxgkrnl:
        if (name == "DxgkCbNotifyInterrupt")
          m.op = Op::kDxgkNotifyInterrupt;
        else if (name == "DxgkCbQueueDpc")
          m.op = Op::kDxgkQueueDpc;
        else
          m.op = Op::kKmdOther;
        break;
      case Layer::kDx6:
        m.op = name == "D3dDrawPrimitives2" ? Op::kDx6DrawPrimitives2 : Op::kDx6Other;
        break;
      case Layer::kApi:
        m.op = Op::kAnnotation;
        break;
    }
  }

  auto value = [](absl::string_view e, absl::string_view n, uint64_t fallback) -> uint64_t {
    const format::EnumInfo* info = format::FindEnum(e);
    if (info == nullptr) return fallback;
    auto v = format::ValueOfName(*info, n);
    return v ? *v : fallback;
  };
  Constants& c = constants_;
  c.e_outofmemory = static_cast<uint32_t>(value("HRESULT_NAMES", "E_OUTOFMEMORY", 0x8007000E));
  c.e_invalidarg = static_cast<uint32_t>(value("HRESULT_NAMES", "E_INVALIDARG", 0x80070057));
  c.deviceremoved =
      static_cast<uint32_t>(value("HRESULT_NAMES", "D3DDDIERR_DEVICEREMOVED", 0x88760870));
  c.dxgi_deviceremoved =
      static_cast<uint32_t>(value("HRESULT_NAMES", "DXGI_ERROR_DEVICE_REMOVED", 0x887A0005));
  c.usage_dynamic = value("D3D10_DDI_RESOURCE_USAGE", "D3D10_DDI_USAGE_DYNAMIC", 2);
  c.misc_shared = value("D3D10_DDI_RESOURCE_MISC_FLAG", "D3D10_DDI_RESOURCE_MISC_SHARED", 0x2);
  c.misc_primary =
      value("D3D10_DDI_RESOURCE_MISC_FLAG", "D3D10_DDI_RESOURCE_MISC_PRIMARY", 0x80000000);
  c.map_discard = value("D3D10_DDI_MAP", "D3D10_DDI_MAP_WRITE_DISCARD", 4);
  c.map_nooverwrite = value("D3D10_DDI_MAP", "D3D10_DDI_MAP_WRITE_NOOVERWRITE", 5);
  c.ht_commandlist = value("D3D11DDI_HANDLETYPE", "D3D11DDI_HT_COMMANDLIST", 11);
  c.caps_threading = value("D3D10_2DDICAPS_TYPE", "D3D11DDICAPS_THREADING", 128);
  c.caps_freethreaded = value("D3D11DDI_THREADING_CAPS_FLAGS", "D3D11DDICAPS_FREETHREADED", 0x1);
  c.caps_commandlists = value("D3D11DDI_THREADING_CAPS_FLAGS", "D3D11DDICAPS_COMMANDLISTS", 0x2);
  c.caps_commandlists_build2 =
      value("D3D11DDI_THREADING_CAPS_FLAGS", "D3D11DDICAPS_COMMANDLISTS_BUILD_2", 0x4);
}

}  // namespace cltrace::check::internal
