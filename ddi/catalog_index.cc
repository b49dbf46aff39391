// Lookup of catalog calls by name (ddi/catalog.h). Apart from catalog.cc so that code that only
// reads the tables by id (the recorder's shim) links no hash table.
#include "absl/container/flat_hash_map.h"
#include "ddi/catalog.h"

namespace cltrace::ddi {

const CallInfo* FindCall(absl::string_view name) {
  static const auto* index = [] {
    auto* m = new absl::flat_hash_map<absl::string_view, uint16_t>();
    const absl::Span<const CallInfo> calls = Calls();
    for (uint16_t i = 1; i < calls.size(); ++i) (*m)[calls[i].name] = i;
    return m;
  }();
  auto it = index->find(name);
  return it == index->end() ? nullptr : &Calls()[it->second];
}

CallId CallIdOfName(absl::string_view name) {
  const CallInfo* call = FindCall(name);
  return call == nullptr ? CallId::kInvalid : IdOf(*call);
}

}  // namespace cltrace::ddi
