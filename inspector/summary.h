// The summary panel's numbers: calls per function and per thread, the recycle rate of command
// lists (RecycleCreateCommandList hits over all lists made), and handles alive over time,
// all derived from the model's rows and counts (no second pass over the events).
//
// Thread-safety: a pure function of an immutable model.
//
// Example:
//   Summary s = Summarize(model, 200);
//   printf("recycle rate %.1f%%\n", 100 * s.recycle_rate());
#ifndef CLTRACE_INSPECTOR_SUMMARY_H_
#define CLTRACE_INSPECTOR_SUMMARY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ddi/call_ids.h"
#include "inspector/model.h"

namespace cltrace::inspector {

struct Summary {
  uint64_t calls = 0;
  std::vector<std::pair<format::CallId, uint64_t>> functions;  // by count, descending
  std::vector<std::pair<uint32_t, uint64_t>> threads;          // by tid
  uint64_t creates = 0;           // T1 (CreateCommandList that left the list Valid)
  uint64_t recycle_creates = 0;   // T7
  uint64_t recycle_destroys = 0;  // T3
  uint64_t destroys = 0;          // T4, T6, T8 and the T7e destroy
  uint64_t command_lists = 0, deferred_contexts = 0, local_rows = 0;
  uint64_t errors = 0, warnings = 0;
  // Handles alive at evenly spaced positions of the trace: command lists in a live state,
  // deferred contexts not destroyed, local handles open.
  std::vector<uint64_t> sample_seq;
  std::vector<float> alive_command_lists, alive_deferred_contexts, open_locals;

  double recycle_rate() const {
    uint64_t made = creates + recycle_creates;
    return made ? static_cast<double>(recycle_creates) / static_cast<double>(made) : 0.0;
  }
};

// `samples` >= 2 points of the alive-over-time curves.
Summary Summarize(const TraceModel& model, int samples);

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_SUMMARY_H_
