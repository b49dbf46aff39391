#include "recorder/internal/timebase.h"

#include <algorithm>

namespace cltrace::recorder::internal {

Timebase::Timebase(size_t max_samples) : max_samples_(std::max<size_t>(max_samples, 8)) {
  samples_.reserve(max_samples_ + 1);
  samples_.push_back({0, 0});
}

void Timebase::Add(uint64_t counter, int64_t ns) {
  Sample& last = samples_.back();
  if (counter < last.counter) counter = last.counter;
  if (ns < last.ns) ns = last.ns;
  if (counter == last.counter) {
    // No new positions. Keep the first sample with this counter (an upper bound for the
    // positions before it) and move a second one (the lower bound for the ones after).
    if (samples_.size() >= 2 && samples_[samples_.size() - 2].counter == counter) {
      last.ns = ns;
      return;
    }
    if (ns == last.ns) return;
  }
  samples_.push_back({counter, ns});
  if (samples_.size() > max_samples_) Thin();
}

void Timebase::Thin() {
  // Drop every other sample of the older half (never the first or the newest ones).
  const size_t half = samples_.size() / 2;
  std::vector<Sample> kept;
  kept.reserve(max_samples_ + 1);
  kept.push_back(samples_[0]);
  for (size_t i = 1; i < half; ++i) {
    if (i % 2 == 0) kept.push_back(samples_[i]);
  }
  kept.insert(kept.end(), samples_.begin() + static_cast<ptrdiff_t>(std::max<size_t>(half, 1)),
              samples_.end());
  samples_.swap(kept);
  hint_ = 1;
}

int64_t Timebase::AtSlow(uint64_t seq) {
  const size_t n = samples_.size();
  if (n < 2 || seq > samples_.back().counter) return samples_.back().ns;
  // The bracket: the first sample whose counter >= seq, and the one before it (the last with
  // a smaller counter, thanks to the duplicate rule in Add).
  size_t i = hint_;
  if (!(i < n && samples_[i].counter >= seq && samples_[i - 1].counter < seq)) {
    auto it = std::lower_bound(samples_.begin() + 1, samples_.end(), seq,
                               [](const Sample& s, uint64_t v) { return s.counter < v; });
    i = static_cast<size_t>(it - samples_.begin());
    hint_ = i;
  }
  return samples_[i - 1].ns;
}

}  // namespace cltrace::recorder::internal
