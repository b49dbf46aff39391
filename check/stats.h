// `cltrace stats`: recycle hit rate, command lists per Finish, handles alive over time and
// callbacks per DDI, computed from the checker's transitions in the same single pass.
//
// Thread-safety: plain values; ComputeStats is reentrant.
//
// Example:
//   absl::StatusOr<TraceStats> s = ComputeStats(events, handles);
//   std::cout << s->recycle_hit_rate();
#ifndef CLTRACE_CHECK_STATS_H_
#define CLTRACE_CHECK_STATS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "check/checker.h"
#include "format/event.h"

namespace cltrace::check {

struct AliveSample {
  uint64_t seq = 0;
  uint32_t command_lists = 0;      // IC command lists in Valid, RecycleDestroyed, Recycled
  uint32_t deferred_contexts = 0;  // not destroyed
  uint32_t objects = 0;            // IC objects alive
  uint32_t locals = 0;             // DC-local handles open
};

struct CallbackCount {
  std::string ddi;       // "IC::Flush", "DC::DrawIndexed", "(none)" for top-level callbacks
  std::string callback;  // "RenderCb"
  uint64_t count = 0;
};

struct TraceStats {
  uint64_t calls = 0;
  // Command-list handles.
  uint64_t creates = 0;          // IC CreateCommandList (T1)
  uint64_t recycle_creates = 0;  // IC RecycleCreateCommandList returning S_OK (T7)
  uint64_t recycle_create_failures = 0;
  uint64_t create_failures = 0;
  uint64_t recycle_destroys = 0;
  uint64_t destroys = 0;
  // Finishes: one per command list made (Create or RecycleCreate on a recording DC).
  uint64_t finishes = 0;
  uint64_t failed_finishes = 0;
  uint64_t abandons = 0;
  // RecycleCommandList calls per Finish (the drained lock-free list): value -> finishes.
  std::map<uint32_t, uint64_t> recycled_per_finish;
  uint64_t ic_executes = 0;
  uint64_t nested_executes = 0;
  std::vector<AliveSample> alive;        // evenly spaced over the trace
  AliveSample peak;                      // per column maximum (seq: where command lists peaked)
  std::vector<CallbackCount> callbacks;  // by count, descending

  double recycle_hit_rate() const {
    uint64_t made = creates + recycle_creates;
    return made ? static_cast<double>(recycle_creates) / static_cast<double>(made) : 0.0;
  }
  double recycled_per_finish_mean() const;
};

// ComputeStats for a trace fed event by event in seq order (format/seq_stream.h): holds the
// calls still open, the handles' states and one entry per change of the alive counts.
// `replay` re-reads the trace (Checker::Begin). Add's errors are ComputeStats'.
//
// Memory: the checker's live state (CheckOptions::compact_above) and up to `max_deltas`
// changes of the alive counts (16 bytes each); a trace with more is read a second time
// (`replay`) at Finish to take the alive-over-time samples.
class StatsBuilder {
 public:
  StatsBuilder(const format::TokenTable& handles, TraceReplay replay, uint32_t samples = 16,
               size_t max_deltas = size_t{1} << 18);
  ~StatsBuilder();
  absl::Status Add(const format::Event& e);
  TraceStats Finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
  const format::TokenTable* handles_ = nullptr;
};

// `samples` = number of rows of the alive-over-time table (at least 1); `max_deltas` as for
// StatsBuilder.
absl::StatusOr<TraceStats> ComputeStats(absl::Span<const format::Event> events,
                                        const format::TokenTable& handles, uint32_t samples = 16,
                                        size_t max_deltas = size_t{1} << 18);

}  // namespace cltrace::check

#endif  // CLTRACE_CHECK_STATS_H_
