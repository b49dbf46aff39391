// Lifecycle analysis: for every handle lifetime its state intervals (state, from-seq,
// to-seq, the call that caused each transition, the owning deferred context), for every
// deferred context likewise, and for every context-local handle its open/close interval in
// the recording it belongs to. Built from the contract checker's transitions, so the
// inspector, `cltrace lifecycle` and `cltrace check` agree on every state.
//
// Thread-safety: plain values; AnalyzeLifecycle is reentrant.
//
// Example:
//   absl::StatusOr<Lifecycle> lc = AnalyzeLifecycle(events, handles);
//   for (const Lifetime& l : lc->lifetimes) if (l.role == HandleRole::kCommandList) ...
#ifndef CLTRACE_CHECK_LIFECYCLE_H_
#define CLTRACE_CHECK_LIFECYCLE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "check/checker.h"
#include "check/states.h"
#include "format/event.h"

namespace cltrace::check {

// One state a lifetime was in: [from_seq, to_seq). to_seq == 0: still in it at trace end.
struct Interval {
  State state = State::kNone;
  uint64_t from_seq = 0;
  uint64_t to_seq = 0;
  // The call that entered this state; kInvalid for a context already in it when a trace
  // fragment began.
  format::CallId cause = format::CallId::kInvalid;
  bool dc_table = false;  // ... through a DC table
  // Command lists: the DC that owned the list when it entered this state; locals: their DC.
  uint64_t context = 0;
};

struct Lifetime {
  HandleRole role = HandleRole::kObject;
  uint64_t handle = 0;     // handle id
  uint32_t lifetime = 0;   // unique per role (see TransitionEvent::lifetime)
  uint64_t context = 0;    // command lists: owning DC (last one); locals: their DC
  uint64_t ic_handle = 0;  // locals: the IC object / command list they stand for
  uint32_t recording = 0;  // locals: recording of their DC they were opened in
  std::vector<Interval> intervals;

  uint64_t first_seq() const { return intervals.empty() ? 0 : intervals.front().from_seq; }
  // The interval containing `seq`, or nullptr.
  const Interval* At(uint64_t seq) const;
};

struct Lifecycle {
  uint64_t calls = 0;
  std::vector<Lifetime> lifetimes;  // by first transition
  // The contract check ran alongside (same pass).
  CheckResult check;

  // Lifetimes of one handle id (every role), in order.
  std::vector<const Lifetime*> Of(uint64_t handle) const;
};

absl::StatusOr<Lifecycle> AnalyzeLifecycle(absl::Span<const format::Event> events,
                                           const format::TokenTable& handles,
                                           const CheckOptions& options = {});

// A lifetime as a streaming LifecycleBuilder hands it on: lifetime()'s fields, and its
// intervals in order through ForEachInterval. Intervals over the builder's budget waited in
// a temporary file (lifetime().intervals holds only those that did not).
class StreamedLifetime {
 public:
  virtual ~StreamedLifetime() = default;
  virtual const Lifetime& lifetime() const = 0;
  // Calls `fn` for every interval, in order; an error when the temporary file failed.
  virtual absl::Status ForEachInterval(absl::FunctionRef<void(const Interval&)> fn) const = 0;
};

// AnalyzeLifecycle for a trace fed event by event in seq order (format/seq_stream.h): holds
// the calls still open, the handles' states and the lifetimes found. `replay` re-reads the
// trace (Checker::Begin). Add's errors are AnalyzeLifecycle's.
//
// Streaming out (the second constructor): only the lifetimes `wanted` (asked with the first
// transition of each) are held, and each goes to `sink` as soon as it is over and every
// lifetime that began before it went (the order of Lifecycle::lifetimes); FinishStream hands
// on the rest and returns the Lifecycle without lifetimes. Memory then follows the lifetimes
// that began since the oldest one still going, not the trace; their finished intervals are
// held up to `interval_budget` in all, the rest wait in a temporary file (held in memory
// when none can be made) until their lifetime goes to the sink.
class LifecycleBuilder {
 public:
  using Wanted = std::function<bool(const TransitionEvent& first)>;
  using Sink = std::function<void(const StreamedLifetime&)>;
  static constexpr size_t kDefaultIntervalBudget = size_t{1} << 16;
  LifecycleBuilder(const format::TokenTable& handles, TraceReplay replay,
                   const CheckOptions& options = {});
  LifecycleBuilder(const format::TokenTable& handles, TraceReplay replay,
                   const CheckOptions& options, Wanted wanted, Sink sink,
                   size_t interval_budget = kDefaultIntervalBudget);
  ~LifecycleBuilder();
  absl::Status Add(const format::Event& e);
  Lifecycle Finish();
  Lifecycle FinishStream();
  // Lifetimes held now, and the checker's records (Checker::records_held).
  size_t lifetimes_held() const;
  size_t records_held() const;
  // Streaming: finished intervals held in memory now, the most held at once, and how many
  // went to the temporary file.
  size_t intervals_held() const;
  size_t most_intervals_held() const;
  uint64_t intervals_spilled() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The timeline of one lifetime as text (what `cltrace lifecycle` prints): its header line
// and one line per interval.
std::string FormatLifetimeHeader(const Lifetime& l, const format::TokenTable& handles);
std::string FormatInterval(const Lifetime& l, const Interval& iv,
                           const format::TokenTable& handles);
// The timeline of one lifetime as text (what `cltrace lifecycle` prints).
std::string FormatLifetime(const Lifetime& l, const format::TokenTable& handles);

}  // namespace cltrace::check

#endif  // CLTRACE_CHECK_LIFECYCLE_H_
