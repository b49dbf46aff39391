// Types of the DDI call catalog's in-memory tables.
//
// The catalog (ddi/ddi_catalog.txt) is the one source of truth for every DDI function and
// runtime callback cltrace knows. At build time ddi/internal/catalog_gen.cc turns it into
// the C ABI header (ddi/ddi_abi.h), the call-id enum (ddi/call_ids.h) and constant
// tables of the types below (catalog_data.inc), which ddi/catalog.h exposes.
//
// Thread-safety: everything here is immutable constant data.
//
// Flattened fields: every call's parameters are flattened into a list of leaf fields in
// parameter order. A by-value handle/scalar is one field; a pointer to an argument structure
// contributes a presence field (kPresent, named like the parameter) followed by the
// structure's members (recursively); an `inout` scalar pointer contributes the value at entry
// (named like the parameter) and at exit (name + "Out"); an array contributes one kArray field
// whose value is 0 for a NULL pointer and 1 + element count otherwise. The element fields of
// arrays are not in the fixed list: an event stores the fixed fields first, then every
// array's elements (each element's fields in order), arrays in fixed-field order.
#ifndef CLTRACE_DDI_CATALOG_TYPES_H_
#define CLTRACE_DDI_CATALOG_TYPES_H_

#include <cstdint>

namespace cltrace::ddi {

// What a recorded 64-bit field value means.
enum class FieldKind : uint8_t {
  kU32,      // unsigned 32-bit scalar
  kI32,      // signed 32-bit scalar (stored sign-extended)
  kU64,      // unsigned 64-bit scalar
  kI64,      // signed 64-bit scalar
  kSize,     // SIZE_T
  kBool,     // BOOL (0 or 1 normally, any 32-bit value possible)
  kHresult,  // HRESULT / NTSTATUS (stored sign-extended)
  kF32,      // float, stored as its IEEE bit pattern
  kPtr,      // opaque pointer value (not a handle; never dereferenced by tools)
  kHandle,   // a handle; in events the per-trace handle id (0 = NULL)
  kEnum,     // enumeration value (enum_index names it)
  kFlags,    // bit set (enum_index names the bits)
  kPresent,  // 1 if the pointer parameter/member was non-NULL, else 0
  kArray,    // 0 = NULL pointer, else 1 + element count
  kString,   // interned string id (annotations)
};

// When the value is read relative to the call.
enum class FieldDir : uint8_t { kIn, kOut };

// Where a call is made.
enum class Layer : uint8_t {
  kAdapter,    // adapter table + driver entry point
  kDevice,     // D3D11DDI_DEVICEFUNCS (IC and DC tables)
  kDxgi,       // DXGI base functions
  kCoreLayer,  // D3D11DDI_CORELAYER_DEVICECALLBACKS (runtime -> driver answers)
  kKernelCb,   // D3DDDI_DEVICECALLBACKS (UMD -> kernel thunks)
  kKmd,        // DxgkDdi* (kernel-mode driver entry points)
  kDxgkrnl,    // DxgkCb* (kernel callbacks the KMD calls)
  kDx6,        // D3dDrawPrimitives2 and DD_D3DBUFCALLBACKS
  kApi,        // annotations: API calls of the runtime model (not DDI calls)
};

// Thread domain (ddi-spec §0.2) of the call through the IC table (or its only table).
// Calls through a DC table are always in that DC's domain.
enum class Domain : uint8_t {
  kIC,        // immediate-context domain
  kDC,        // one deferred context's domain
  kFT,        // free-threaded once FREETHREADED is reported
  kFTAlways,  // FT!: free-threaded even without threading caps
  kCallback,  // runs inside the DDI call that made it (runtime callback)
  kKernel,    // kernel/GPU scheduler, serialized
  kAny,       // not constrained (annotations, adapter)
};

// What the call returns.
// kU32: a 32-bit unsigned result (the DWORD DDHAL_DRIVER_* codes of the DX6 callbacks), stored
// zero-extended.
enum class ReturnKind : uint8_t { kVoid, kHresult, kSize, kBool, kNtstatus, kU32 };

struct EnumValueInfo {
  const char* name;
  uint64_t value;
};

struct EnumInfo {
  const char* name;
  bool is_flags;
  uint16_t first_value;  // index into EnumValues()
  uint16_t value_count;
};

struct HandleTypeInfo {
  const char* name;  // C type name, e.g. "D3D11DDI_HCOMMANDLIST"
  bool is_u32;       // D3DKMT_HANDLE-style 32-bit handle rather than a one-pointer struct
};

struct FieldInfo {
  const char* name;  // JSON name (the DDI parameter or member name)
  FieldKind kind;
  FieldDir dir;
  bool required;        // must be given in hand-written JSONL (handles the call takes/produces)
  uint16_t type_index;  // handle type (kHandle) or enum (kEnum/kFlags/kHresult names), else 0
  // For kArray: element fields at [elem_first, elem_first + elem_count) of Fields().
  // For kPresent: elem_count is the number of fields right after it that are the pointed-to
  // structure's members (meaningless when the pointer is NULL); elem_first is 0.
  uint16_t elem_first;
  uint16_t elem_count;

  // ---- Added in catalog_version 2 (defaults keep older aggregate initialisers valid) ----
  // kArray: where the element count comes from (the catalog's count= expression). The
  // recorded array holds min(count, kMaxRecordedArrayElements) elements (format/call_codec.h):
  //   count_field >= 0     count = value of that fixed field / count_divisor (for `*P` the
  //                        field is P's exit value "POut")
  //                        (times the value of count_factor_field when that is >= 0)
  //   count_in_element > 0 count = element [count_in_element] of the array itself (the length
  //                        token of a shader token stream, `count=pCode[1]`)
  //   otherwise            count = count_fixed
  int16_t count_field = -1;
  // kArray: constant count (`count=4`), or the capacity N of an embedded array `NAME[N]`.
  uint16_t count_fixed = 0;
  uint8_t count_divisor = 1;
  uint8_t count_in_element = 0;
  // kArray (outputs): fixed field whose entry value is how many elements the caller gave the
  // callee room for (P of `count=*P`, or the count field itself); -1 if not applicable.
  int16_t capacity_field = -1;
  // kArray: embedded in a structure (`NAME[N]`): never NULL, so the value is always 1 + count.
  bool embedded = false;
  // Scalar kinds: width in bits of the C type (8, 16, 32, 64); 0 for handles, presence and
  // arrays. Recorded values of narrower types never have bits above this width (signed kinds
  // hold the sign extension).
  uint8_t bits = 0;

  // ---- Added in catalog_version 4 ----
  // kArray: `count=A*B` (one element per subresource: MipLevels*ArraySize): the count is the
  // product of count_field and this fixed field; -1 otherwise.
  int16_t count_factor_field = -1;
};

struct CallInfo {
  const char* name;         // DDI name without "pfn", e.g. "RecycleCreateCommandList"
  const char* table;        // C table struct, e.g. "D3D11DDI_DEVICEFUNCS"
  const char* member;       // member name in the table, e.g. "pfnRecycleCreateCommandList"
  const char* pfn_typedef;  // C function-pointer typedef
  Layer layer;
  Domain domain;
  ReturnKind ret;
  uint16_t ret_enum;     // enum naming return values (HRESULT names), 0xffff if none
  bool in_ic_table;      // device layer: present in the immediate-context table
  bool in_dc_table;      // device layer: the runtime may call it through a DC table
  uint16_t field_first;  // fixed fields at [field_first, field_first + field_count)
  uint16_t field_count;
};

inline constexpr uint16_t kNoEnum = 0xffff;

}  // namespace cltrace::ddi

// The trace library and its users name the vocabulary format:: too.
namespace cltrace::format {
using ::cltrace::ddi::CallInfo;
using ::cltrace::ddi::Domain;
using ::cltrace::ddi::EnumInfo;
using ::cltrace::ddi::EnumValueInfo;
using ::cltrace::ddi::FieldDir;
using ::cltrace::ddi::FieldInfo;
using ::cltrace::ddi::FieldKind;
using ::cltrace::ddi::HandleTypeInfo;
using ::cltrace::ddi::kNoEnum;
using ::cltrace::ddi::Layer;
using ::cltrace::ddi::ReturnKind;
}  // namespace cltrace::format

#endif  // CLTRACE_DDI_CATALOG_TYPES_H_
