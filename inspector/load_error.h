// The words of the inspector's "cannot open the trace" dialog, without ImGui: what happened, in
// a sentence, where (the file offset or JSONL line the reader named), and what to do — for a
// damaged .cltrace, reopen it with --salvage (skip the corrupt chunks, as `cltrace check
// --salvage` does).
//
// Thread-safety: pure function.
//
// Example:
//   LoadErrorText t = DescribeLoadError(status, "t.cltrace", /*salvage=*/false);
//   // t.headline: "t.cltrace is damaged at offset 300"
#ifndef CLTRACE_INSPECTOR_LOAD_ERROR_H_
#define CLTRACE_INSPECTOR_LOAD_ERROR_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "inspector/model.h"

namespace cltrace::inspector {

struct LoadErrorText {
  std::string headline;            // one line: "FILE is damaged at offset 300"
  std::string detail;              // the reader's message, as it said it
  std::string hint;                // what to do next ("" when there is nothing to suggest)
  std::optional<uint64_t> offset;  // the byte offset the reader named
  std::optional<uint64_t> line;    // the JSONL line it named
  bool salvage_may_help = false;   // a damaged chunk of a .cltrace opened without --salvage
};

LoadErrorText DescribeLoadError(const absl::Status& status, const std::string& path, bool salvage);

// The line a salvaged trace shows over its lifelines: how much --salvage skipped; "" when
// nothing was.
std::string SalvageNotice(const TraceData& data);

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_LOAD_ERROR_H_
