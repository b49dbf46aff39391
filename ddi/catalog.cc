#include "ddi/catalog.h"

// The catalog's tables and lookups by id, with nothing of Abseil that is not header-only: the
// recorder's shim links this file (tests/recorder/shim_deps_test.cc). Name <-> value
// conversions are in catalog_names.cc, lookups by name in catalog_index.cc.

#include <iterator>

#include "ddi/ddi_abi.h"

namespace cltrace::ddi {
namespace {

#include "ddi/catalog_data.inc"

static_assert(sizeof(kCalls) / sizeof(kCalls[0]) == kCallIdCount,
              "call id enum and call table disagree");

}  // namespace

int CatalogVersion() { return CLTRACE_CATALOG_VERSION; }

absl::Span<const CallInfo> Calls() { return absl::MakeConstSpan(kCalls); }

const CallInfo* GetCall(uint32_t id) {
  if (id == 0 || id >= static_cast<uint32_t>(kCallIdCount)) return nullptr;
  return &kCalls[id];
}
const CallInfo* GetCall(CallId id) { return GetCall(static_cast<uint32_t>(id)); }

CallId IdOf(const CallInfo& call) { return static_cast<CallId>(&call - kCalls); }

absl::Span<const FieldInfo> Fields(const CallInfo& call) {
  return absl::MakeConstSpan(kFields + call.field_first, call.field_count);
}

absl::Span<const FieldInfo> ElementFields(const FieldInfo& f) {
  if (f.kind != FieldKind::kArray) return {};
  return absl::MakeConstSpan(kFields + f.elem_first, f.elem_count);
}

int FieldIndex(const CallInfo& call, absl::string_view name) {
  auto fields = Fields(call);
  for (size_t i = 0; i < fields.size(); ++i)
    if (name == fields[i].name) return static_cast<int>(i);
  return -1;
}

absl::Span<const EnumInfo> Enums() { return absl::MakeConstSpan(kEnums); }

absl::Span<const EnumValueInfo> EnumValues(const EnumInfo& e) {
  return absl::MakeConstSpan(kEnumValues + e.first_value, e.value_count);
}

const EnumInfo* FindEnum(absl::string_view name) {
  for (const EnumInfo& e : kEnums)
    if (name == e.name) return &e;
  return nullptr;
}

absl::Span<const HandleTypeInfo> HandleTypes() { return absl::MakeConstSpan(kHandleTypes); }

namespace {

// Short names indexed by the enumerator's value (declaration order in catalog_types.h).
constexpr absl::string_view kLayerNames[] = {"adapter", "device",  "dxgi", "corelayer", "kernelcb",
                                             "kmd",     "dxgkrnl", "dx6",  "api"};
static_assert(std::size(kLayerNames) == static_cast<size_t>(Layer::kApi) + 1);
constexpr absl::string_view kDomainNames[] = {"IC", "DC", "FT", "FT!", "CB", "KM", "any"};
static_assert(std::size(kDomainNames) == static_cast<size_t>(Domain::kAny) + 1);

// names[e], or "?" for a value outside the enumeration (a corrupt byte).
template <typename Enum, size_t N>
absl::string_view NameIn(const absl::string_view (&names)[N], Enum e) {
  const size_t i = static_cast<size_t>(e);
  return i < N ? names[i] : "?";
}

}  // namespace

absl::string_view LayerName(Layer layer) { return NameIn(kLayerNames, layer); }

absl::string_view DomainName(Domain domain) { return NameIn(kDomainNames, domain); }

}  // namespace cltrace::ddi
