#include "wddm/scheduler.h"

#include <algorithm>

namespace cltrace::gpu {

Scheduler::EventId Scheduler::At(VirtualTime at, absl::AnyInvocable<void()> fn) {
  EventId id = next_id_++;
  VirtualTime due = std::max(at, now());
  queue_.emplace(std::make_pair(due, id), std::move(fn));
  due_.emplace(id, due);
  return id;
}

bool Scheduler::Cancel(EventId id) {
  auto it = due_.find(id);
  if (it == due_.end()) return false;
  queue_.erase(std::make_pair(it->second, id));
  due_.erase(it);
  return true;
}

bool Scheduler::RunNext() {
  if (queue_.empty()) return false;
  auto it = queue_.begin();
  SetNow(std::max(now(), it->first.first));
  absl::AnyInvocable<void()> fn = std::move(it->second);
  due_.erase(it->first.second);
  queue_.erase(it);
  ++events_run_;
  fn();  // may schedule or cancel other events
  return true;
}

uint64_t Scheduler::RunUntil(VirtualTime t) {
  uint64_t n = 0;
  while (!queue_.empty() && queue_.begin()->first.first <= t) {
    RunNext();
    ++n;
  }
  SetNow(std::max(now(), t));
  return n;
}

bool Scheduler::RunUntilCondition(absl::FunctionRef<bool()> done) {
  while (!done()) {
    if (!RunNext()) return done();
  }
  return true;
}

uint64_t Scheduler::RunUntilIdle() {
  uint64_t n = 0;
  while (RunNext()) ++n;
  return n;
}

}  // namespace cltrace::gpu
