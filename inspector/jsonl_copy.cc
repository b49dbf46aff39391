#include "inspector/jsonl_copy.h"

#include "absl/strings/str_cat.h"
#include "format/jsonl.h"

namespace cltrace::inspector {

std::string CallsAsJsonl(const TraceModel& model, absl::Span<const int64_t> events) {
  std::string out;
  const int64_t n = static_cast<int64_t>(model.events().size());
  for (int64_t i : events) {
    if (i < 0 || i >= n) continue;
    const format::Event& e = model.events()[static_cast<size_t>(i)];
    if (!format::CheckEventLayout(e).ok()) continue;
    absl::StrAppend(
        &out,
        format::EventToJsonl(e, model.handles(), model.data().strings, &model.data().contents),
        "\n");
  }
  return out;
}

}  // namespace cltrace::inspector
