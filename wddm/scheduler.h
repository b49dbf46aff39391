// A discrete-event scheduler in virtual time: the clock of the GPU / kernel model.
//
// Why: the model must give the same completion order for the same inputs, so nothing in it
// reads a wall clock or runs on a thread of its own. Every asynchronous thing the model does
// (VidSch work, GPU execution, interrupts, DPCs) is an event with a virtual due time; events
// run in (due time, scheduling order), so two events due at the same instant run in the order
// they were scheduled.
//
// Thread-safety: none, except that now() may be read from any thread at any time (it returns
// a value the clock had recently; exact when the reader is serialised with the writer). The
// owner (gpu::Dxgkrnl) serialises everything else under its own lock.
//
// Example:
//   Scheduler s;
//   s.After(100, [] { /* runs at t=100 */ });
//   s.RunUntilIdle();           // s.now() == 100
#ifndef CLTRACE_WDDM_SCHEDULER_H_
#define CLTRACE_WDDM_SCHEDULER_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"

namespace cltrace::gpu {

// Virtual nanoseconds since the model was created.
using VirtualTime = uint64_t;

class Scheduler {
 public:
  using EventId = uint64_t;

  Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  VirtualTime now() const { return now_.load(std::memory_order_relaxed); }

  // Schedules `fn` at absolute time `at` (clamped to now(): the past is not reachable).
  EventId At(VirtualTime at, absl::AnyInvocable<void()> fn);
  // Schedules `fn` `delay` nanoseconds from now().
  EventId After(VirtualTime delay, absl::AnyInvocable<void()> fn) {
    return At(now() + delay, std::move(fn));
  }
  // Removes a pending event; false if it already ran or never existed.
  bool Cancel(EventId id);

  // Runs the earliest pending event (advancing now() to its due time). False if none.
  bool RunNext();
  // Runs every event due at or before `t` (including ones they schedule), then sets now() to
  // max(now(), t). Returns the number of events run.
  uint64_t RunUntil(VirtualTime t);
  // Runs events until `done()` is true or nothing is pending; returns done().
  bool RunUntilCondition(absl::FunctionRef<bool()> done);
  // Runs every pending event. Returns the number of events run.
  uint64_t RunUntilIdle();
  // Moves the clock forward without running anything (callers use RunUntil for that).
  void Advance(VirtualTime delta) { SetNow(now() + delta); }

  bool idle() const { return queue_.empty(); }
  uint64_t pending() const { return queue_.size(); }
  uint64_t events_run() const { return events_run_; }

 private:
  void SetNow(VirtualTime t) { now_.store(t, std::memory_order_relaxed); }

  // Key = (due time, sequence number): a total, deterministic order.
  std::map<std::pair<VirtualTime, EventId>, absl::AnyInvocable<void()>> queue_;
  std::map<EventId, VirtualTime> due_;  // for Cancel
  // Atomic (relaxed: there is one writer at a time) only so that observers such as
  // Dxgkrnl::NowForObserver can read the clock without the owner's lock and without a data race.
  std::atomic<VirtualTime> now_{0};
  EventId next_id_ = 1;
  uint64_t events_run_ = 0;
};

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_SCHEDULER_H_
