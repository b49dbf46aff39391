#include "inspector/lifeline_fold.h"

#include <algorithm>
#include <limits>

namespace cltrace::inspector {

using check::State;

namespace {

// std::lower_bound for a target expected near `first`: probes first+1, +2, +4 ... then
// bisects the last gap. O(log distance) and, unlike a bisection of the whole remaining row,
// its early probes stay in cache lines just read — at 10 M spans a frame is bound by memory
// latency, not by comparisons.
template <typename Less>
const Span* GallopLowerBound(const Span* first, const Span* last, Less less) {
  size_t step = 1;
  const Span* lo = first;
  while (lo + step < last && less(lo[step])) {
    lo += step;
    step *= 2;
  }
  const Span* hi = lo + step < last ? lo + step + 1 : last;
  if (lo != first || (first < last && less(*first))) ++lo;
  return std::partition_point(lo, hi, less);
}

}  // namespace

void FoldSpans(absl::Span<const Span> spans, const FoldParams& p, std::vector<FoldedSpan>* out) {
  if (spans.empty() || p.view_to <= p.view_from || p.width <= 0) return;
  const double scale = p.width / (p.view_to - p.view_from);  // pixels per seq
  const double min_seq = p.min_px / scale;                   // seqs per min_px
  auto px = [&](double seq) { return static_cast<float>((seq - p.view_from) * scale); };
  auto clip = [&](float x) { return std::clamp(x, 0.0f, p.width); };
  const Span* begin = spans.data();
  const Span* end = begin + spans.size();
  // Spans do not overlap, so `to` is sorted like `from`.
  const Span* it = std::upper_bound(begin, end, p.view_from, [](double v, const Span& s) {
    return v < static_cast<double>(s.to);
  });
  while (it != end && static_cast<double>(it->from) < p.view_to) {
    const double len = static_cast<double>(it->to - it->from);
    if (len >= min_seq) {
      out->push_back({clip(px(static_cast<double>(it->from))),
                      clip(px(static_cast<double>(it->to))), static_cast<uint32_t>(it - begin), 1,
                      it->state});
      ++it;
      continue;
    }
    // A narrow span: fold it with every following span that ends less than min_px after
    // the block's current end and is itself narrow or starts within the block.
    const Span* next = it + 1;
    double block_end = static_cast<double>(it->to);
    const double block_cap = p.max_fold_px > 0
                                 ? static_cast<double>(it->from) + p.max_fold_px / scale
                                 : std::numeric_limits<double>::infinity();
    while (next != end && static_cast<double>(next->from) < p.view_to && block_end < block_cap) {
      const double limit = block_end + min_seq;
      const Span* k = GallopLowerBound(
          next, end, [limit](const Span& s) { return static_cast<double>(s.to) < limit; });
      if (k != next) {  // spans [next, k) end within min_px: all part of the block
        block_end = static_cast<double>((k - 1)->to);
        next = k;
        continue;
      }
      // `next` reaches at least min_px past the block. Take it only if it is narrow and
      // starts close (a short gap); each such step moves the end by >= min_seq.
      const double gap = static_cast<double>(next->from) - block_end;
      const double nlen = static_cast<double>(next->to - next->from);
      if (gap < min_seq && nlen < min_seq) {
        block_end = static_cast<double>(next->to);
        ++next;
        continue;
      }
      break;
    }
    FoldedSpan f;
    f.first = static_cast<uint32_t>(it - begin);
    f.count = static_cast<uint32_t>(next - it);
    float x0 = px(static_cast<double>(it->from));
    float x1 = std::max(px(block_end), x0 + p.min_px);
    f.x0 = clip(x0);
    f.x1 = clip(x1);
    if (f.count == 1) {
      f.state = it->state;
    } else {
      // The state at a quarter, half and three quarters of the block; the majority wins
      // (the middle when all differ). One sample alone aliases with periodic traces.
      auto at = [&](double t) {
        const double seq =
            static_cast<double>(it->from) + t * (block_end - static_cast<double>(it->from));
        const Span* m = std::upper_bound(
            it, next, seq, [](double v, const Span& s) { return v < static_cast<double>(s.from); });
        return (m == it ? it : m - 1)->state;
      };
      const State a = at(0.25), b = at(0.5), c = at(0.75);
      f.state = (a == c) ? a : b;
    }
    if (f.x1 > f.x0) out->push_back(f);
    it = next;
  }
}

}  // namespace cltrace::inspector
