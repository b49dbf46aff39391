#include "replayer/internal/call_meta.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "ddi/call_traits.h"
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

// What a kPtr field is on replay; by the parameter names the catalog gives the table and
// callback pointers of CreateDevice / CreateDeferredContext / CalcDeferredContextHandleSize.
PointerRole PointerRoleOf(absl::string_view name) {
  if (name == "p11DeviceFuncs") return PointerRole::kDeviceFuncs;
  if (name == "DXGIBaseDDI.pDXGIDDIBaseFunctions") return PointerRole::kDxgiFuncs;
  if (name == "pKTCallbacks") return PointerRole::kKernelCallbacks;
  if (name == "p11UMCallbacks") return PointerRole::kCoreCallbacks;
  if (name == "p11ContextFuncs") return PointerRole::kContextFuncs;
  if (name == "pICObject") return PointerRole::kIcObject;
  if (name == "pDeviceFunctions") return PointerRole::kRelocatedFuncs;
  return PointerRole::kInputData;
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

// Handles, pointers, array handles and whether the call has outputs to compare.
void ClassifyFields(absl::Span<const FieldInfo> fields, CallMeta& m) {
  for (size_t i = 0; i < fields.size(); ++i) {
    const FieldInfo& f = fields[i];
    if (f.kind == FieldKind::kHandle) {
      m.handles.push_back(HandleField{static_cast<uint16_t>(i), ClassOfHandleType(f.type_index)});
    } else if (f.kind == FieldKind::kPtr) {
      m.pointers.push_back(PointerField{static_cast<uint16_t>(i), PointerRoleOf(f.name)});
    } else if (f.kind == FieldKind::kArray) {
      for (const FieldInfo& e : format::ElementFields(f)) {
        if (e.kind == FieldKind::kHandle) m.array_handles = true;
      }
    }
    if (f.dir == format::FieldDir::kOut && f.kind != FieldKind::kPtr) m.has_outputs = true;
  }
}

// The fields that place a content call's bytes (format/content.h).
void ContentFields(const format::CallInfo& info, CallMeta& m) {
  auto field = [&](const char* a, const char* b) -> int16_t {
    const int i = format::FieldIndex(info, a);
    return static_cast<int16_t>(i >= 0 || b == nullptr ? i : format::FieldIndex(info, b));
  };
  m.resource_field = field("hResource", "hDstResource");
  m.subresource_field = field("Subresource", "DstSubresource");
  m.box_field = field("pDstBox", nullptr);
  m.map_type_field = field("DDIMap", nullptr);
  m.mapped_data_field = field("pData", nullptr);
  m.row_pitch_field = field("RowPitch", nullptr);
  m.depth_pitch_field = field("DepthPitch", nullptr);
  // A catalog entry with content= but without the fields that place the bytes would be a
  // catalog error: its content is then not replayable, and the plan says so.
  if (m.content_role == format::ContentRole::kInitialData) {
    // CreateResource: the bytes are placed by pCreateResource's pInitialDataUP array.
    m.content_fields_ok = format::FieldIndex(info, "pInitialDataUP") >= 0;
    return;
  }
  m.content_fields_ok =
      m.resource_field >= 0 && m.subresource_field >= 0 &&
      (m.content_role != format::ContentRole::kUploadSource ||
       (m.box_field >= 0 && m.row_pitch_field >= 0 && m.depth_pitch_field >= 0)) &&
      (m.content_role != format::ContentRole::kMap ||
       (m.map_type_field >= 0 && m.mapped_data_field >= 0 && m.row_pitch_field >= 0 &&
        m.depth_pitch_field >= 0));
}

// The first top-level handle field after `after` of class `cls`, -1 if none.
int16_t HandleAfter(absl::Span<const FieldInfo> fields, int after, HandleClass cls) {
  for (uint16_t i : TopLevelFields(fields)) {
    if (static_cast<int>(i) <= after || fields[i].kind != FieldKind::kHandle) continue;
    if (ClassOfHandleType(fields[i].type_index) == cls) return static_cast<int16_t>(i);
  }
  return -1;
}

// Issued calls: the handle a call creates or destroys, the table it goes through, the size
// queries, and the form of its argument structure.
void IssueFields(CallId id, absl::Span<const FieldInfo> fields, CallMeta& m) {
  const ddi::CallTraits& t = ddi::TraitsOf(id);
  const bool device = t.layer == Layer::kDevice;
  if (t.role == ddi::CallRole::kCreateDevice) {
    m.create_field = ddi::fields::CreateDevice::hDrvDevice;
    m.size_source = SizeSource::kPending;
  } else if (t.role == ddi::CallRole::kCreateContext) {
    m.create_field = ddi::fields::CreateDeferredContext::hDrvContext;
    m.size_source = SizeSource::kPending;
  } else if (device &&
             (ddi::CreatesObject(t.role) || t.role == ddi::CallRole::kCreateCommandList)) {
    // CreateX(hDevice, args, hX, hRTX): the first driver handle after hDevice is created; a
    // DC-table open carries the IC object in the runtime-handle slot (ddi-spec §1.1, R56).
    m.create_field = HandleAfter(fields, 0, HandleClass::kDriver);
    m.rt_field = HandleAfter(fields, m.create_field, HandleClass::kRuntime);
    m.size_source = SizeSource::kPending;  // kLocalSize when called through a DC table
  }
  if (t.role == ddi::CallRole::kDestroyDevice) {
    m.destroy_field = 0;
  } else if (device &&
             (t.role == ddi::CallRole::kDestroy || t.role == ddi::CallRole::kDestroyCommandList)) {
    m.destroy_field = HandleAfter(fields, 0, HandleClass::kDriver);
  }
  m.context_field = static_cast<int16_t>(format::FieldIndex(*m.info, "hDrvContext"));
  if (t.layer == Layer::kDxgi) {  // every DXGI argument structure starts with hDevice
    m.table_field = static_cast<int16_t>(format::FieldIndex(*m.info, "hDevice"));
  }
  m.calc_private = ddi::IsSizeQuery(t.role);
  // The argument structure of a create / CalcPrivate* call is the parameter right after the
  // device handle (pCreateResource...). A structure pointer further on is an optional extra
  // (CalcPrivateShaderSize's pSignatures may be NULL) and says nothing about the call's form.
  std::vector<uint16_t> top = TopLevelFields(fields);
  if (top.size() > 1 && fields[top[1]].kind == FieldKind::kPresent) {
    m.args_struct_field = static_cast<int16_t>(top[1]);
  }
  if (t.role == ddi::CallRole::kLocalSize) {
    m.calc_local_size = true;
    m.ic_object_field = ddi::fields::CalcDeferredContextHandleSize::pICObject;
  }
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
  ClassifyFields(fields, m);
  m.sysmem_field = static_cast<int16_t>(format::FieldIndex(*info, "pSysMemUP"));
  m.content_role = format::ContentRoleOf(id);
  if (m.content_role != format::ContentRole::kNone) ContentFields(*info, m);
  if (ddi::TraitsOf(id).role == ddi::CallRole::kCaps) {
    m.caps_size_field = ddi::fields::GetCaps::DataSize;
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
  if (m.role == Role::kIssue) IssueFields(id, fields, m);
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
  return ddi::HandleTraitsOf(type_index).handle_class;
}

uint16_t CreatedTypeOf(uint16_t type_index) {
  return type_index < ddi::kHandleTraitsCount ? ddi::HandleTraitsOf(type_index).created_as
                                              : type_index;
}

const CallMeta& CallMetaFor(CallId id) {
  static const MetaTable* table = new MetaTable();
  const size_t i = static_cast<size_t>(id);
  static const CallMeta kNone;
  return i < table->by_id.size() ? table->by_id[i] : kNone;
}

}  // namespace cltrace::replay::internal
