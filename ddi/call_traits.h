// Per-call traits: what the tools know about each catalog call beyond its fields, generated
// from the attributes of its line in ddi/ddi_catalog.txt (role=, content=, dc_rule=, group=,
// domain=, tables=; a handle's class=, object=, created=). Code asks the traits instead of
// working a call's role out from its name.
//
// Everything here is constexpr data: TraitsOf(CallId::kCreateCommandList).role is a constant
// expression, so per-call code (thunks, call-site macros) pays nothing for it.
//
// Thread-safety: immutable constant data.
//
// Example:
//   if (ddi::TraitsOf(id).role == ddi::CallRole::kCreate) ...
//   int16_t f = ddi::fields::CreateDevice::hDrvDevice;  // the field index, as FieldIndex()
#ifndef CLTRACE_DDI_CALL_TRAITS_H_
#define CLTRACE_DDI_CALL_TRAITS_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "ddi/call_ids.h"
#include "ddi/call_traits_gen.h"  // enum class CallRole
#include "ddi/catalog_types.h"

namespace cltrace::ddi {

// The application bytes a call carries (format/FORMAT.md §3.8; the catalog's content=).
enum class ContentRole : uint8_t {
  kNone,
  kUploadSource,     // the source of an UpdateSubresourceUP (pSysMemUP, pDstBox, pitches)
  kMap,              // a Map: where the driver put the memory and its pitches
  kUnmap,            // an Unmap: the mapped subresource as the application left it
  kDrawPrimitives2,  // a DX6 DrawPrimitives2: its command bytes, then the vertices they draw
  kInitialData,      // a CreateResource: every pInitialDataUP[i].pSysMem region, in order
};

// Who produces a handle value (the catalog's class=).
enum class HandleClass : uint8_t {
  kDriver,   // pDrvPrivate memory the runtime allocates with the driver's CalcPrivate* size
  kRuntime,  // runtime-owned opaque value (HRT*, the kernel-thunk device handle)
  kKernel,   // 32-bit kernel handle (D3DKMT_*)
  kAdapter,  // the hAdapter the driver's OpenAdapter10_2 returned
  kOther,    // handles of the kernel-mode and DX6 layers
};

struct CallTraits {
  CallRole role = CallRole::kNone;
  ContentRole content = ContentRole::kNone;
  Layer layer = Layer::kApi;
  Domain domain = Domain::kAny;  // of a call through the IC table (or its only table)
  ReturnKind ret = ReturnKind::kVoid;
  bool in_ic_table = false;  // device layer: the runtime calls it through the IC table
  bool in_dc_table = false;  // device layer: ... and through a DC table
  // The rule a call through a DC table breaks when the catalog says the runtime never makes
  // it there (R4 by default; R12, R14, R34, R65 for the calls they name).
  const char* dc_table_rule = "R4";  // a rule id of rules/rule_list.inc
  // Setters: the call whose slots this one binds (itself unless the catalog says group=).
  CallId bind_group = CallId::kInvalid;
  const char* name = "";  // the DDI name without "pfn" ("" for kInvalid)
};

struct HandleTraits {
  HandleClass handle_class = HandleClass::kOther;
  int8_t object_type = -1;  // D3D11DDI_HANDLETYPE of an object handle, -1 otherwise
  uint16_t created_as = 0;  // handle type index the value was created as (itself mostly)
};

#include "ddi/call_traits_data.inc"

inline constexpr size_t kHandleTraitsCount = sizeof(kHandleTraits) / sizeof(kHandleTraits[0]);
static_assert(sizeof(kCallTraits) / sizeof(kCallTraits[0]) == kCallIdCount,
              "call ids and call traits disagree");

// The traits of a call; the empty traits (role kNone) for kInvalid or an unknown id.
constexpr const CallTraits& TraitsOf(CallId id) {
  const size_t i = static_cast<size_t>(id);
  return i < static_cast<size_t>(kCallIdCount) ? kCallTraits[i] : kCallTraits[0];
}
// By DDI name (without "pfn"); the empty traits if the catalog has no such call.
const CallTraits& TraitsOf(absl::string_view name);

// The traits of a handle type (by HandleTypes() index); the empty traits for an unknown index.
constexpr const HandleTraits& HandleTraitsOf(uint16_t type_index) {
  return type_index < kHandleTraitsCount ? kHandleTraits[type_index] : kHandleTraits[0];
}

// The DDI name of a call without "pfn" ("" for kInvalid).
constexpr const char* NameOf(CallId id) { return TraitsOf(id).name; }

// The catalog's spelling of a role ("create_command_list"), for messages and tests.
constexpr const char* CallRoleName(CallRole role) {
  const int i = static_cast<int>(role);
  return i < kCallRoleCount ? kCallRoleNames[i] : "?";
}

// True if the call creates a handle the way every object create does (role create or open).
constexpr bool CreatesObject(CallRole role) {
  return role == CallRole::kCreate || role == CallRole::kOpen;
}
// True if the call, made through the IC table, runs in the IC domain (domain=IC; ddi-spec
// §0.2): the runtime serializes it with the IC's other calls (R10, R16).
constexpr bool InIcDomain(CallId id) { return TraitsOf(id).domain == Domain::kIC; }
// CalcPrivate*Size of any kind: its answer sizes the next created driver handle.
constexpr bool IsSizeQuery(CallRole role) {
  return role == CallRole::kSize || role == CallRole::kSizeContext ||
         role == CallRole::kSizeCommandList;
}

}  // namespace cltrace::ddi

#endif  // CLTRACE_DDI_CALL_TRAITS_H_
