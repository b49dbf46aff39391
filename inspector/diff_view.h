// The model of the inspector's side-by-side view of two traces: the alignment and first
// difference of `cltrace diff` (format/trace_diff.h: calls matched per thread, handles and
// threads by identity, not by value), and where that difference is in each trace's model.
//
// Thread-safety: pure functions.
//
// Example:
//   absl::StatusOr<TraceComparison> c = CompareTraceFiles("a.cltrace", "b.cltrace", false);
//   if (c.ok() && !c->summary.equal()) view_b.SelectEvent(model_b, c->EventB(model_b));
#ifndef CLTRACE_INSPECTOR_DIFF_VIEW_H_
#define CLTRACE_INSPECTOR_DIFF_VIEW_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "format/trace_diff.h"
#include "inspector/model.h"

namespace cltrace::inspector {

struct TraceComparison {
  format::DiffSummary summary;
  // What `cltrace diff A B` prints: the first difference with the calls before it on its
  // thread, both calls in normalised JSONL ("equal: ..." when equal).
  std::string report;

  // The first differing call in A / B as an event index of that trace's model, -1 when equal
  // or when that trace has no such call (the other trace has more calls on that thread).
  int64_t EventA(const TraceModel& a) const;
  int64_t EventB(const TraceModel& b) const;
  // One line for a banner: "first difference: thread 1 call 12 (A seq 40, B seq 40): ...".
  std::string Headline() const;
};

// Compares the two trace files as `cltrace diff` does (read as streams, .cltrace or JSONL;
// `salvage` skips corrupt chunks of either). Errors name the file and the offset or line.
absl::StatusOr<TraceComparison> CompareTraceFiles(const std::string& a, const std::string& b,
                                                  bool salvage);

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_DIFF_VIEW_H_
