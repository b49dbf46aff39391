// D3D11 enum and flag names, as apitrace prints them, with the values the 11.0 DDI takes: the
// table the apitrace player reads enum and flag arguments with.
#ifndef CLTRACE_CORPUS_APITRACE_INTERNAL_D3D11_NAMES_H_
#define CLTRACE_CORPUS_APITRACE_INTERNAL_D3D11_NAMES_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace cltrace::apitrace::internal {

// The value of one enum or flag name; DXGI formats come from the DDI catalog.
std::optional<uint32_t> ValueOfName(absl::string_view name);

}  // namespace cltrace::apitrace::internal

#endif  // CLTRACE_CORPUS_APITRACE_INTERNAL_D3D11_NAMES_H_
