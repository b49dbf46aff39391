#include "inspector/jsonl_copy.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "format/jsonl.h"

namespace cltrace::inspector {

std::string CallsAsJsonl(const TraceModel& model, absl::Span<const int64_t> events) {
  std::string out;
  const int64_t n = static_cast<int64_t>(model.call_count());
  for (int64_t i : events) {
    if (i < 0 || i >= n) continue;
    absl::StatusOr<std::shared_ptr<const format::Event>> decoded =
        model.DecodeEvent(static_cast<size_t>(i));
    if (!decoded.ok()) continue;
    const format::Event& e = **decoded;
    if (!format::CheckEventLayout(e).ok()) continue;
    absl::StrAppend(
        &out, format::EventToJsonl(e, model.handles(), model.strings(), &model.contents()), "\n");
  }
  return out;
}

}  // namespace cltrace::inspector
