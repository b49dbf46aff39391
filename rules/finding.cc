#include "rules/finding.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cltrace::rules {

std::string FormatFindingLine(const Finding& f, absl::string_view fn, LineHandle handle) {
  if (handle == LineHandle::kOmit) {
    return absl::StrCat(f.id(), " seq=", f.seq, " fn=", fn, " ", f.message);
  }
  if (f.handle == 0)
    return absl::StrCat(f.id(), " seq=", f.seq, " fn=", fn, " handle=- ", f.message);
  return absl::StrFormat("%s seq=%d fn=%s handle=0x%x %s", f.id(), f.seq, fn, f.handle, f.message);
}

}  // namespace cltrace::rules
