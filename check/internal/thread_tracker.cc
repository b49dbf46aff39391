#include "check/internal/thread_tracker.h"

namespace cltrace::check::internal {

const PendingCalc* ThreadTracker::Pending(uint32_t tid) const {
  for (const PendingCalc& p : pending_)
    if (p.tid == tid) return &p;
  return nullptr;
}

void ThreadTracker::Expect(const PendingCalc& p) {
  for (PendingCalc& old : pending_) {
    if (old.tid == p.tid) {
      old = p;
      return;
    }
  }
  pending_.push_back(p);
}

std::optional<PendingCalc> ThreadTracker::Take(uint32_t tid, uint64_t seq) {
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i].tid != tid) continue;
    if (seq < pending_[i].after) return std::nullopt;
    PendingCalc p = pending_[i];
    pending_[i] = pending_.back();
    pending_.pop_back();
    return p;
  }
  return std::nullopt;
}

void ThreadTracker::Cancel(uint32_t tid, uint64_t create_seq) {
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i].tid == tid && pending_[i].create_seq == create_seq) {
      pending_[i] = pending_.back();
      pending_.pop_back();
      return;
    }
  }
}

}  // namespace cltrace::check::internal
