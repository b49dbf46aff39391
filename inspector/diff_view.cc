#include "inspector/diff_view.h"

#include <memory>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "format/seq_stream.h"

namespace cltrace::inspector {
namespace {

int64_t EventOf(const TraceModel& m, uint64_t seq) { return seq == 0 ? -1 : m.EventAt(seq); }

// SeqStream::Open, its error naming the file.
absl::StatusOr<std::unique_ptr<format::SeqStream>> Open(const std::string& path,
                                                        const format::SeqStreamOptions& o) {
  absl::StatusOr<std::unique_ptr<format::SeqStream>> s = format::SeqStream::Open(path, o);
  if (!s.ok() && !absl::StrContains(s.status().message(), path))
    return absl::Status(s.status().code(), absl::StrCat(path, ": ", s.status().message()));
  return s;
}

}  // namespace

int64_t TraceComparison::EventA(const TraceModel& a) const {
  return summary.equal() ? -1 : EventOf(a, summary.first_seq_a);
}

int64_t TraceComparison::EventB(const TraceModel& b) const {
  return summary.equal() ? -1 : EventOf(b, summary.first_seq_b);
}

std::string TraceComparison::Headline() const {
  const format::DiffSummary& s = summary;
  if (s.equal())
    return absl::StrCat("equal: ", s.calls_a, " calls on ", s.threads_a,
                        s.threads_a == 1 ? " thread" : " threads");
  auto seq = [](uint64_t v) { return v == 0 ? std::string("-") : absl::StrCat(v); };
  return absl::StrCat("first difference: thread ", s.first_thread, " call ", s.first_index,
                      " (A seq ", seq(s.first_seq_a), ", B seq ", seq(s.first_seq_b),
                      "): ", s.first_what);
}

absl::StatusOr<TraceComparison> CompareTraceFiles(const std::string& a, const std::string& b,
                                                  bool salvage) {
  format::SeqStreamOptions options;
  options.salvage = salvage;
  options.gaps = false;
  absl::StatusOr<std::unique_ptr<format::SeqStream>> sa = Open(a, options);
  if (!sa.ok()) return sa.status();
  absl::StatusOr<std::unique_ptr<format::SeqStream>> sb = Open(b, options);
  if (!sb.ok()) return sb.status();
  std::ostringstream report;
  absl::StatusOr<format::DiffSummary> s = format::DiffTraces(**sa, **sb, {}, report);
  if (!s.ok()) return s.status();
  TraceComparison c;
  c.summary = *std::move(s);
  c.report = report.str();
  return c;
}

}  // namespace cltrace::inspector
