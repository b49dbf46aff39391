#include "ddi/call_traits.h"

#include "ddi/catalog.h"

namespace cltrace::ddi {

const CallTraits& TraitsOf(absl::string_view name) { return TraitsOf(CallIdOfName(name)); }

}  // namespace cltrace::ddi
