// Timebase: entry timestamps derived from positions, so the hot path reads no clock.
//
// The background thread adds a sample (counter, time) at every poll: the value of the
// position counter and the time it was read. Every position <= counter was taken before
// `time`, every later one after it. A call with entry position s between two samples
// (c0 < s <= c1) therefore entered within [t0, t1]; At(s) returns t0, the start of that
// bracket: a lower bound that is exact to within one poll interval. (Interpolating inside the
// bracket would invent precision the samples do not have, and the varying deltas cost about a
// byte per call in the compressed trace; the start of the bracket costs almost nothing.) When
// nothing happened between polls the bracket's start moves to the later time.
//
// Old samples are thinned (merging two brackets into one is still a valid, looser bracket),
// so memory stays bounded however long a trace runs.
//
// Thread-safety: single-threaded (the background thread).
//
// Example:
//   Timebase tb;           // sample (0, 0): the trace's start
//   tb.Add(10, 1000);      // positions 1..10 were taken in [0, 1000] ns
//   tb.Add(30, 2000);      // positions 11..30 in [1000, 2000] ns
//   tb.At(5);              // 0
//   tb.At(11);             // 1000
#ifndef CLTRACE_RECORDER_INTERNAL_TIMEBASE_H_
#define CLTRACE_RECORDER_INTERNAL_TIMEBASE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cltrace::recorder::internal {

class Timebase {
 public:
  explicit Timebase(size_t max_samples = 16384);

  // Samples must come with non-decreasing counters and times.
  void Add(uint64_t counter, int64_t ns);
  // Lower bound of the entry time of position `seq` (>= 1), exact to within one bracket.
  // Positions beyond the last sample get its time.
  int64_t At(uint64_t seq) {
    // Inline: consecutive events nearly always fall in the bracket of the previous one.
    const size_t i = hint_;
    if (i < samples_.size() && samples_[i].counter >= seq && samples_[i - 1].counter < seq) {
      return samples_[i - 1].ns;
    }
    return AtSlow(seq);
  }

  size_t size() const { return samples_.size(); }
  uint64_t last_counter() const { return samples_.back().counter; }

 private:
  struct Sample {
    uint64_t counter;
    int64_t ns;
  };
  void Thin();
  int64_t AtSlow(uint64_t seq);

  size_t max_samples_;
  std::vector<Sample> samples_;
  size_t hint_ = 1;  // bracket [hint_-1, hint_] used last
};

}  // namespace cltrace::recorder::internal

#endif  // CLTRACE_RECORDER_INTERNAL_TIMEBASE_H_
