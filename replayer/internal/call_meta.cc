#include "replayer/internal/call_meta.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "format/call_traits.h"

namespace cltrace::replay::internal {
namespace {

using format::CallId;
using format::FieldInfo;
using format::FieldKind;
using format::Layer;

struct SlotEntry {
  CallId id;
  size_t offset;
};

// Function-pointer offsets of every slot of the tables the replayer calls through or serves.
#define CLTRACE_REPLAY_SLOT(Name) \
  SlotEntry{CallId::k##Name, format::CallTraits<CallId::k##Name>::kSlotOffset},
constexpr SlotEntry kSlots[] = {
    CLTRACE_CALLS_D3D10_2DDI_ADAPTERFUNCS(CLTRACE_REPLAY_SLOT)
        CLTRACE_CALLS_D3D11DDI_DEVICEFUNCS(CLTRACE_REPLAY_SLOT)
            CLTRACE_CALLS_DXGI_DDI_BASE_FUNCTIONS(CLTRACE_REPLAY_SLOT)
                CLTRACE_CALLS_D3D11DDI_CORELAYER_DEVICECALLBACKS(CLTRACE_REPLAY_SLOT)
                    CLTRACE_CALLS_D3DDDI_DEVICECALLBACKS(CLTRACE_REPLAY_SLOT)};
#undef CLTRACE_REPLAY_SLOT

Role RoleOf(Layer layer) {
  switch (layer) {
    case Layer::kAdapter:
    case Layer::kDevice:
    case Layer::kDxgi:
      return Role::kIssue;
    case Layer::kCoreLayer:
    case Layer::kKernelCb:
      return Role::kCallback;
    case Layer::kKmd:
    case Layer::kDxgkrnl:
    case Layer::kApi:
      return Role::kIgnore;
    case Layer::kDx6:
      return Role::kDx6;
  }
  return Role::kInvalid;
}

// Indices of the fixed fields that are parameters or members of by-value structures, i.e. not
// members of a structure reached through a pointer.
std::vector<uint16_t> TopLevelFields(absl::Span<const FieldInfo> fields) {
  std::vector<uint16_t> top;
  for (size_t i = 0; i < fields.size(); ++i) {
    top.push_back(static_cast<uint16_t>(i));
    if (fields[i].kind == FieldKind::kPresent) i += fields[i].elem_count;
  }
  return top;
}

CallMeta Build(CallId id) {
  CallMeta m;
  const format::CallInfo* info = format::GetCall(id);
  if (info == nullptr || id == CallId::kInvalid) return m;
  m.info = info;
  m.layer = info->layer;
  m.role = RoleOf(info->layer);
  for (const SlotEntry& s : kSlots) {
    if (s.id == id) m.slot_offset = s.offset;
  }
  absl::Span<const FieldInfo> fields = format::Fields(*info);
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldInfo& f = fields[i];
    if (f.kind == FieldKind::kHandle) {
      m.handles.push_back(HandleField{static_cast<uint16_t>(i), ClassOfHandleType(f.type_index)});
    } else if (f.kind == FieldKind::kPtr) {
      const absl::string_view name = f.name;
      PointerRole role = PointerRole::kInputData;
      if (name == "p11DeviceFuncs") {
        role = PointerRole::kDeviceFuncs;
      } else if (name == "pDXGIBaseDDI") {
        role = PointerRole::kDxgiFuncs;
      } else if (name == "pKTCallbacks") {
        role = PointerRole::kKernelCallbacks;
      } else if (name == "p11UMCallbacks") {
        role = PointerRole::kCoreCallbacks;
      } else if (name == "p11ContextFuncs") {
        role = PointerRole::kContextFuncs;
      } else if (name == "pICObject") {
        role = PointerRole::kIcObject;
      }
      m.pointers.push_back(PointerField{static_cast<uint16_t>(i), role});
    } else if (f.kind == FieldKind::kArray) {
      for (const FieldInfo& e : format::ElementFields(f)) {
        if (e.kind == FieldKind::kHandle) m.array_handles = true;
      }
    }
    if (f.dir == format::FieldDir::kOut && f.kind != FieldKind::kPtr) m.has_outputs = true;
  }
  m.sysmem_field = static_cast<int16_t>(format::FieldIndex(*info, "pSysMemUP"));
  m.content_role = format::ContentRoleOf(id);
  if (m.content_role != format::ContentRole::kNone) {
    auto field = [&](const char* a, const char* b) -> int16_t {
      const int i = format::FieldIndex(*info, a);
      return static_cast<int16_t>(i >= 0 || b == nullptr ? i : format::FieldIndex(*info, b));
    };
    m.resource_field = field("hResource", "hDstResource");
    m.subresource_field = field("Subresource", "DstSubresource");
    m.box_field = field("pDstBox", nullptr);
    m.map_type_field = field("DDIMap", nullptr);
    m.mapped_data_field = field("pData", nullptr);
    m.row_pitch_field = field("RowPitch", nullptr);
    m.depth_pitch_field = field("DepthPitch", nullptr);
    // A catalog entry of a content typedef without the fields that place the bytes would be
    // a catalog error: its content is then not replayable, and the plan says so.
    m.content_fields_ok =
        m.resource_field >= 0 && m.subresource_field >= 0 &&
        (m.content_role != format::ContentRole::kUploadSource ||
         (m.box_field >= 0 && m.row_pitch_field >= 0 && m.depth_pitch_field >= 0)) &&
        (m.content_role != format::ContentRole::kMap ||
         (m.map_type_field >= 0 && m.mapped_data_field >= 0 && m.row_pitch_field >= 0 &&
          m.depth_pitch_field >= 0));
  }
  if (id == CallId::kGetCaps) {
    m.caps_size_field = static_cast<int16_t>(format::FieldIndex(*info, "DataSize"));
  }
  if (info->layer == Layer::kKernelCb) {
    for (size_t i = 0; i < fields.size(); ++i) {
      const absl::string_view name = fields[i].name;
      if (fields[i].dir == format::FieldDir::kOut && fields[i].kind == FieldKind::kU32 &&
          (absl::EndsWith(name, "Size") || absl::EndsWith(name, "SizeOut"))) {
        m.buffer_size_outputs.push_back(static_cast<uint16_t>(i));
      }
    }
  }
  if (m.role != Role::kIssue) return m;

  const absl::string_view name = info->name;
  auto driver_handle_after = [&](uint16_t after) -> int16_t {
    for (uint16_t i : TopLevelFields(fields)) {
      if (i <= after || fields[i].kind != FieldKind::kHandle) continue;
      if (ClassOfHandleType(fields[i].type_index) == HandleClass::kDriver) {
        return static_cast<int16_t>(i);
      }
    }
    return -1;
  };
  auto runtime_handle_after = [&](int16_t after) -> int16_t {
    for (uint16_t i : TopLevelFields(fields)) {
      if (static_cast<int16_t>(i) <= after || fields[i].kind != FieldKind::kHandle) continue;
      if (ClassOfHandleType(fields[i].type_index) == HandleClass::kRuntime) {
        return static_cast<int16_t>(i);
      }
    }
    return -1;
  };

  if (id == CallId::kCreateDevice) {
    m.create_field = static_cast<int16_t>(format::FieldIndex(*info, "hDrvDevice"));
    m.size_source = SizeSource::kPending;
  } else if (id == CallId::kCreateDeferredContext) {
    m.create_field = static_cast<int16_t>(format::FieldIndex(*info, "hDrvContext"));
    m.size_source = SizeSource::kPending;
  } else if (info->layer == Layer::kDevice &&
             (absl::StartsWith(name, "Create") || absl::StartsWith(name, "Open"))) {
    // CreateX(hDevice, args, hX, hRTX): the first driver handle after hDevice is created; a
    // DC-table open carries the IC object in the runtime-handle slot (ddi-spec §1.1, R56).
    m.create_field = driver_handle_after(0);
    m.rt_field = runtime_handle_after(m.create_field);
    m.size_source = SizeSource::kPending;  // kLocalSize when called through a DC table
  }
  if (info->layer == Layer::kDevice && absl::StartsWith(name, "Destroy")) {
    m.destroy_field = id == CallId::kDestroyDevice ? 0 : driver_handle_after(0);
  }
  m.context_field = static_cast<int16_t>(format::FieldIndex(*info, "hDrvContext"));
  if (id == CallId::kPresentDXGI) {
    m.table_field = static_cast<int16_t>(format::FieldIndex(*info, "hDevice"));
  }
  m.calc_private = absl::StartsWith(name, "CalcPrivate");
  // The argument structure of a create / CalcPrivate* call is the parameter right after the
  // device handle (pCreateResource...). A structure pointer further on is an optional extra
  // (CalcPrivateShaderSize's pSignatures may be NULL) and says nothing about the call's form.
  {
    std::vector<uint16_t> top = TopLevelFields(fields);
    if (top.size() > 1 && fields[top[1]].kind == FieldKind::kPresent) {
      m.args_struct_field = static_cast<int16_t>(top[1]);
    }
  }
  if (id == CallId::kCalcDeferredContextHandleSize) {
    m.calc_local_size = true;
    m.ic_object_field = static_cast<int16_t>(format::FieldIndex(*info, "pICObject"));
  }
  return m;
}

struct MetaTable {
  std::vector<CallMeta> by_id;
  MetaTable() {
    const size_t n = format::Calls().size();
    by_id.reserve(n);
    for (size_t i = 0; i < n; ++i) by_id.push_back(Build(static_cast<CallId>(i)));
  }
};

}  // namespace

HandleClass ClassOfHandleType(uint16_t type_index) {
  absl::Span<const format::HandleTypeInfo> types = format::HandleTypes();
  if (type_index >= types.size()) return HandleClass::kOther;
  const absl::string_view name = types[type_index].name;
  if (name == "D3D10DDI_HADAPTER") return HandleClass::kAdapter;
  if (absl::StartsWith(name, "DXGK_") || absl::StartsWith(name, "DD_") ||
      absl::StartsWith(name, "D3DHAL_")) {
    return HandleClass::kOther;
  }
  if (types[type_index].is_u32) return HandleClass::kKernel;
  if (absl::StrContains(name, "HRT") || name == "D3DRTDEVICEHANDLE") return HandleClass::kRuntime;
  return HandleClass::kDriver;
}

uint16_t CreatedTypeOf(uint16_t type_index) {
  static const std::vector<uint16_t>* canonical = [] {
    auto* v = new std::vector<uint16_t>();
    absl::Span<const format::HandleTypeInfo> types = format::HandleTypes();
    auto find = [&](absl::string_view name) -> int {
      for (size_t i = 0; i < types.size(); ++i) {
        if (name == types[i].name) return static_cast<int>(i);
      }
      return -1;
    };
    for (size_t i = 0; i < types.size(); ++i) {
      const absl::string_view name = types[i].name;
      int to = static_cast<int>(i);
      if (name == "DXGI_DDI_HDEVICE") to = find("D3D10DDI_HDEVICE");
      if (name == "DXGI_DDI_HRESOURCE") to = find("D3D10DDI_HRESOURCE");
      v->push_back(static_cast<uint16_t>(to < 0 ? i : to));
    }
    return v;
  }();
  return type_index < canonical->size() ? (*canonical)[type_index] : type_index;
}

const CallMeta& CallMetaFor(CallId id) {
  static const MetaTable* table = new MetaTable();
  const size_t i = static_cast<size_t>(id);
  static const CallMeta kNone;
  return i < table->by_id.size() ? table->by_id[i] : kNone;
}

}  // namespace cltrace::replay::internal
