// catalog_gen: the per-call traits (ddi/call_traits_gen.h: the CallRole enum, and
// ddi/call_traits_data.inc: the constant tables ddi/call_traits.h exposes).
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ddi/internal/catalog_gen_model.h"

namespace cltrace::catalog_gen {

const std::vector<RoleName>& Roles() {
  static const std::vector<RoleName> kRoles = {
      {"none", "not a catalog call"},
      {"other", "work without a role of its own (draws, copies, clears, dispatches ...)"},
      {"set", "binds pipeline state (Set*, the stage setters)"},
      {"size", "CalcPrivate*Size: the size of the next created driver handle"},
      {"create", "creates an object (resource, view, shader, state object, query ...)"},
      {"open", "opens an object (a shared resource): creates a handle like `create`"},
      {"destroy", "destroys an object"},
      {"map", "maps a subresource"},
      {"unmap", "unmaps a subresource"},
      {"query_begin", "pfnQueryBegin"},
      {"query_end", "pfnQueryEnd"},
      {"flush", "pfnFlush"},
      {"caps", "pfnGetCaps"},
      {"create_device", "pfnCreateDevice"},
      {"destroy_device", "pfnDestroyDevice"},
      {"size_context", "pfnCalcPrivateDeferredContextSize"},
      {"create_context", "pfnCreateDeferredContext"},
      {"recycle_create_context", "pfnRecycleCreateDeferredContext"},
      {"size_command_list", "pfnCalcPrivateCommandListSize"},
      {"create_command_list", "pfnCreateCommandList"},
      {"recycle_create_command_list", "pfnRecycleCreateCommandList"},
      {"recycle_command_list", "pfnRecycleCommandList"},
      {"recycle_destroy_command_list", "pfnRecycleDestroyCommandList"},
      {"destroy_command_list", "pfnDestroyCommandList"},
      {"abandon_command_list", "pfnAbandonCommandList"},
      {"execute", "pfnCommandListExecute"},
      {"handle_sizes", "pfnCheckDeferredContextHandleSizes"},
      {"local_size", "CalcDeferredContextHandleSize (DC-local handles, §3.3)"},
      {"present", "presents (DXGI Present, the PresentCb thunk)"},
      {"set_display_mode", "sets the display mode (DXGI, the SetDisplayModeCb thunk)"},
      {"error_cb", "pfnSetErrorCb"},
      {"amortized_cb", "pfnPerformAmortizedProcessingCb"},
      {"disable_staging_cb", "pfnDisableDeferredStagingResourceDestruction"},
      {"state_refresh", "a core-layer State*Cb: the runtime re-sends bound state"},
      {"render", "kernel thunk RenderCb: submits a command buffer"},
      {"allocate", "kernel thunk AllocateCb"},
      {"deallocate", "kernel thunk DeallocateCb"},
      {"create_kernel_context", "kernel thunk CreateContextCb"},
      {"kernel_context_cb", "another kernel thunk bound to one HCONTEXT"},
      {"kmd_render", "DxgkDdiRender / DxgkDdiRenderKm"},
      {"kmd_patch", "pfnDxgkDdiPatch"},
      {"kmd_submit", "pfnDxgkDdiSubmitCommand"},
      {"kmd_interrupt", "pfnDxgkDdiInterruptRoutine"},
      {"notify_interrupt", "pfnDxgkCbNotifyInterrupt"},
      {"queue_dpc", "pfnDxgkCbQueueDpc"},
      {"draw_primitives2", "D3dDrawPrimitives2 (DX6)"},
  };
  return kRoles;
}

namespace {

// "create_command_list" -> "kCreateCommandList".
std::string Enumerator(const std::string& snake) {
  std::string out = "k";
  bool upper = true;
  for (char ch : snake) {
    if (ch == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(ch - 'a' + 'A') : ch;
    upper = false;
  }
  return out;
}

// The D3D11DDI_HANDLETYPE value object= names.
std::string ObjectValue(const Catalog& c, const Type& t) {
  if (t.object.empty()) return "-1";
  for (const EnumVal& v : Lookup(c, "D3D11DDI_HANDLETYPE", t.line).values) {
    if (v.name == t.object) return v.value;
  }
  Die(t.line, "object= is not a D3D11DDI_HANDLETYPE value: " + t.object);
}

std::string CallLine(const Catalog& c, const Fn& f) {
  const Table& tab = TableOf(c, f);
  std::string content = "kNone";
  if (f.content == "upload") content = "kUploadSource";
  if (f.content == "map") content = "kMap";
  if (f.content == "unmap") content = "kUnmap";
  if (f.content == "dp2") content = "kDrawPrimitives2";
  if (f.content == "initial") content = "kInitialData";
  return "    {CallRole::" + Enumerator(f.role) + ", ContentRole::" + content +
         ", Layer::" + LayerEnumerator(tab) + ", Domain::" + DomainEnumerator(tab, f) +
         ", ReturnKind::" + ReturnEnumerator(c, f) + ", " + (f.ic ? "true" : "false") + ", " +
         (f.dc ? "true" : "false") + ", " + "\"R" + std::to_string(f.dc_rule) + "\"" +
         ", CallId::k" + (f.group.empty() ? f.name : f.group) + ", \"" + f.name + "\"},\n";
}

// `struct Name { static constexpr int16_t field = i; ... };` for the fixed fields of a call
// ("pCreateResource.Width" becomes pCreateResource_Width).
std::string FieldStruct(const CallTree& t) {
  std::ostringstream o;
  o << "struct " << t.fn->name << " {\n";
  std::set<std::string> seen;
  for (size_t i = 0; i < t.fields.size(); ++i) {
    std::string name = t.fields[i].name;
    for (char& ch : name)
      if (ch == '.') ch = '_';
    if (name == t.fn->name) name += "_";      // a member may not be named like its class
    if (!seen.insert(name).second) continue;  // the first, as FieldIndex finds it
    o << "  static constexpr int16_t " << name << " = " << i << ";\n";
  }
  o << "};\n";
  return o.str();
}

}  // namespace

std::string EmitDdiTraitsEnum() {
  std::ostringstream o;
  o << "// Generated by ddi/internal/catalog_gen from ddi/ddi_catalog.txt. Do not edit.\n"
       "// Included by ddi/call_traits.h.\n"
       "#ifndef CLTRACE_DDI_CALL_TRAITS_GEN_H_\n#define CLTRACE_DDI_CALL_TRAITS_GEN_H_\n\n"
       "#include <cstdint>\n\nnamespace cltrace::ddi {\n\n"
       "// What a call does for the tools (the catalog's role=).\n"
       "enum class CallRole : uint8_t {\n";
  for (const RoleName& r : Roles())
    o << "  " << Enumerator(r.name) << ",  // " << r.comment << "\n";
  o << "};\n\ninline constexpr int kCallRoleCount = " << Roles().size()
    << ";\n\n// The catalog's spelling of each role, by CallRole.\n"
       "inline constexpr const char* kCallRoleNames[] = {\n";
  for (const RoleName& r : Roles()) o << "    \"" << r.name << "\",\n";
  o << "};\n\n}  // namespace cltrace::ddi\n\n#endif  // CLTRACE_DDI_CALL_TRAITS_GEN_H_\n";
  return o.str();
}

std::string EmitDdiTraits(const Catalog& c, const std::vector<CallTree>& trees) {
  std::ostringstream o;
  o << "// Generated by ddi/internal/catalog_gen from ddi/ddi_catalog.txt. Do not edit.\n"
       "// Included by ddi/call_traits.h inside namespace cltrace::ddi.\n\n"
       "// By CallId; entry 0 is kInvalid.\n"
       "inline constexpr CallTraits kCallTraits[] = {\n    {},\n";
  for (const CallTree& t : trees) o << CallLine(c, *t.fn);
  o << "};\n\n// By handle type index (HandleTypes()); entry 0 is no type.\n"
       "inline constexpr HandleTraits kHandleTraits[] = {\n    {},\n";
  for (const std::string& h : c.handle_names) {
    const Type& t = c.types.at(h);
    std::string cls = Enumerator(t.handle_class);
    int created = t.created.empty() ? t.handle_index : Lookup(c, t.created, t.line).handle_index;
    o << "    {HandleClass::" << cls << ", " << ObjectValue(c, t) << ", " << created << "},  // "
      << h << "\n";
  }
  o << "};\n\n// Fixed-field indices by call: fields::CreateDevice::hDrvDevice.\nnamespace fields "
       "{\n\n";
  for (const CallTree& t : trees) o << FieldStruct(t) << "\n";
  o << "}  // namespace fields\n";
  return o.str();
}

}  // namespace cltrace::catalog_gen
