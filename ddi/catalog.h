// Queries over the DDI call catalog (generated from ddi/ddi_catalog.txt).
//
// Thread-safety: all functions are safe to call from any thread (constant data; the name
// index is built once, thread-safely, on first use).
//
// Example:
//   const CallInfo* ci = FindCall("RecycleCreateCommandList");
//   for (const FieldInfo& f : Fields(*ci)) std::cout << f.name << "\n";
#ifndef CLTRACE_DDI_CATALOG_H_
#define CLTRACE_DDI_CATALOG_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ddi/call_ids.h"
#include "ddi/catalog_types.h"

namespace cltrace::ddi {

// The catalog_version of the catalog compiled into this binary.
int CatalogVersion();

// Every call; index = static_cast<int>(CallId). Entry 0 is a placeholder for kInvalid.
absl::Span<const CallInfo> Calls();
// nullptr for kInvalid or an out-of-range id.
const CallInfo* GetCall(CallId id);
const CallInfo* GetCall(uint32_t id);
// Looks a call up by its DDI name (without "pfn"); nullptr if unknown.
const CallInfo* FindCall(absl::string_view name);
CallId IdOf(const CallInfo& call);
// The id of the call named `name`, CallId::kInvalid if unknown.
CallId CallIdOfName(absl::string_view name);

// The fixed (non-element) fields of a call, in event order.
absl::Span<const FieldInfo> Fields(const CallInfo& call);
// The element fields of an array field.
absl::Span<const FieldInfo> ElementFields(const FieldInfo& array_field);
// Index of a fixed field by name within the call, or -1.
int FieldIndex(const CallInfo& call, absl::string_view name);

absl::Span<const EnumInfo> Enums();
absl::Span<const EnumValueInfo> EnumValues(const EnumInfo& e);
const EnumInfo* FindEnum(absl::string_view name);
absl::Span<const HandleTypeInfo> HandleTypes();

// Symbolic value of an enum (exact match) or flags (all bits named, joined by '|');
// nullopt if it cannot be named. Zero flags have no name.
std::optional<std::string> NameOfValue(const EnumInfo& e, uint64_t value);
// Parses a symbolic name ("E_OUTOFMEMORY", "A|B" for flags); nullopt if unknown.
std::optional<uint64_t> ValueOfName(const EnumInfo& e, absl::string_view name);

// HRESULT names (S_OK, E_OUTOFMEMORY, D3DDDIERR_DEVICEREMOVED...).
const EnumInfo& HresultNames();
// "E_OUTOFMEMORY" or "0x8876ffff" for an HRESULT value.
std::string HresultToString(int32_t hr);

// Short names used in messages and JSON.
absl::string_view LayerName(Layer layer);
absl::string_view DomainName(Domain domain);

}  // namespace cltrace::ddi

// The trace library and its users name the vocabulary format:: too.
namespace cltrace::format {
using ::cltrace::ddi::CallIdOfName;
using ::cltrace::ddi::CallInfo;
using ::cltrace::ddi::Calls;
using ::cltrace::ddi::CatalogVersion;
using ::cltrace::ddi::DomainName;
using ::cltrace::ddi::ElementFields;
using ::cltrace::ddi::Enums;
using ::cltrace::ddi::EnumValues;
using ::cltrace::ddi::FieldIndex;
using ::cltrace::ddi::Fields;
using ::cltrace::ddi::FindCall;
using ::cltrace::ddi::FindEnum;
using ::cltrace::ddi::GetCall;
using ::cltrace::ddi::HandleTypes;
using ::cltrace::ddi::HresultNames;
using ::cltrace::ddi::HresultToString;
using ::cltrace::ddi::IdOf;
using ::cltrace::ddi::LayerName;
using ::cltrace::ddi::NameOfValue;
using ::cltrace::ddi::ValueOfName;
}  // namespace cltrace::format

#endif  // CLTRACE_DDI_CATALOG_H_
