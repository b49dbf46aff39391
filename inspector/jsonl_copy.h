// "Copy as JSONL": calls of a model as the lines `cltrace export` writes for them (the canonical
// JSONL of format/jsonl.h: handle tokens, string and content tables of the trace), one line per
// call with a newline after each, for the clipboard. A selection pasted into a file is a JSONL
// trace `cltrace import` reads back.
//
// Thread-safety: pure functions over an immutable model.
//
// Example:
//   ImGui::SetClipboardText(CallsAsJsonl(model, {view.selected_event}).c_str());
#ifndef CLTRACE_INSPECTOR_JSONL_COPY_H_
#define CLTRACE_INSPECTOR_JSONL_COPY_H_

#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "inspector/model.h"

namespace cltrace::inspector {

// The export lines of events `events` (indices into the model's calls, in the order given).
// A call whose arguments do not fit the catalog (export refuses those) is skipped; indices
// out of range are skipped.
std::string CallsAsJsonl(const TraceModel& model, absl::Span<const int64_t> events);

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_JSONL_COPY_H_
