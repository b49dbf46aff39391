// Level-of-detail for lifelines: which rectangles to draw for one row at one zoom. Spans at
// least `min_px` wide are drawn as they are; runs of narrower spans fold into one marked block.
// The cost is proportional to the pixels, not to the spans: every step either emits a span at
// least `min_px` wide or advances the block's end by at least `min_px`, and each step is one
// binary search, so a row costs O(width / min_px * log spans) whether it holds ten spans or
// ten million.
//
// Thread-safety: pure functions.
//
// Example:
//   FoldParams p{.view_from = 0, .view_to = 1e6, .width = 1200, .min_px = 3};
//   std::vector<FoldedSpan> out;
//   FoldSpans(row.spans, p, &out);
//   for (const FoldedSpan& f : out) Draw(f.x0, f.x1, f.folded() ? kMarked : Color(f.state));
#ifndef CLTRACE_INSPECTOR_LIFELINE_FOLD_H_
#define CLTRACE_INSPECTOR_LIFELINE_FOLD_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "inspector/model.h"

namespace cltrace::inspector {

struct FoldParams {
  double view_from = 0;  // seq at x = 0
  double view_to = 1;    // seq at x = width; > view_from
  float width = 1;       // pixels
  float min_px = 3;      // narrower spans fold
  // A folded block ends once it is this wide (0 = never): at full zoom a row of a million
  // spans shows as a sequence of blocks whose colors sample the states instead of one bar.
  float max_fold_px = 0;
};

struct FoldedSpan {
  float x0 = 0, x1 = 0;  // pixels from the lane's left edge, clipped to [0, width]
  uint32_t first = 0;    // spans[first, first + count) are drawn by this rectangle
  uint32_t count = 0;
  // count == 1: the span's state. Folded: the majority of the states at 1/4, 1/2 and 3/4
  // of the block (three binary searches; which state dominates a block is not knowable
  // without visiting its spans, and a single sample aliases with periodic traces).
  check::State state = check::State::kNone;
  bool folded() const { return count > 1; }
};

// Appends the rectangles of `spans` (sorted by from, non-overlapping) for the view to `out`,
// left to right. A lone narrow span is widened to min_px (never folded with nothing).
void FoldSpans(absl::Span<const Span> spans, const FoldParams& params,
               std::vector<FoldedSpan>* out);

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_LIFELINE_FOLD_H_
