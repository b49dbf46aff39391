#include "inspector/lifeline_fold.h"

#include <vector>

#include "gtest/gtest.h"

namespace cltrace::inspector {
namespace {

using check::State;

// Contiguous spans of the given lengths starting at `start`, alternating V / RD / RC.
std::vector<Span> Spans(uint64_t start, const std::vector<uint64_t>& lengths) {
  static const State kCycle[] = {State::kValid, State::kRecycleDestroyed, State::kRecycled};
  std::vector<Span> out;
  uint64_t at = start;
  for (size_t i = 0; i < lengths.size(); ++i) {
    Span s;
    s.from = at;
    s.to = at + lengths[i];
    s.state = kCycle[i % 3];
    out.push_back(s);
    at = s.to;
  }
  return out;
}

FoldParams View(double from, double to, float width) {
  FoldParams p;
  p.view_from = from;
  p.view_to = to;
  p.width = width;
  p.min_px = 3;
  return p;
}

TEST(FoldTest, WideSpansAreDrawnAsTheyAre) {
  std::vector<Span> s = Spans(0, {100, 200, 700});
  std::vector<FoldedSpan> out;
  FoldSpans(s, View(0, 1000, 1000), &out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FLOAT_EQ(out[0].x0, 0);
  EXPECT_FLOAT_EQ(out[0].x1, 100);
  EXPECT_FLOAT_EQ(out[1].x0, 100);
  EXPECT_FLOAT_EQ(out[1].x1, 300);
  EXPECT_EQ(out[2].state, State::kRecycled);
  EXPECT_FALSE(out[2].folded());
}

TEST(FoldTest, SpansOutsideTheViewAreSkippedAndEdgesClipped) {
  std::vector<Span> s = Spans(0, {100, 200, 700});
  std::vector<FoldedSpan> out;
  FoldSpans(s, View(150, 350, 200), &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].first, 1u);
  EXPECT_FLOAT_EQ(out[0].x0, 0);
  EXPECT_FLOAT_EQ(out[0].x1, 150);
  EXPECT_FLOAT_EQ(out[1].x0, 150);
  EXPECT_FLOAT_EQ(out[1].x1, 200);
}

TEST(FoldTest, RunOfNarrowSpansFoldsIntoOneMarkedBlock) {
  // 1 px per seq: 50 spans of 1 px between two wide ones.
  std::vector<uint64_t> lengths = {100};
  lengths.insert(lengths.end(), 50, 1);
  lengths.push_back(100);
  std::vector<Span> s = Spans(0, lengths);
  std::vector<FoldedSpan> out;
  FoldSpans(s, View(0, 250, 250), &out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FALSE(out[0].folded());
  EXPECT_TRUE(out[1].folded());
  EXPECT_EQ(out[1].first, 1u);
  EXPECT_EQ(out[1].count, 50u);
  EXPECT_FLOAT_EQ(out[1].x0, 100);
  EXPECT_FLOAT_EQ(out[1].x1, 150);
  EXPECT_EQ(out[2].first, 51u);
}

TEST(FoldTest, LoneNarrowSpanIsWidenedNotFolded) {
  std::vector<Span> s = Spans(0, {100, 1, 100});
  std::vector<FoldedSpan> out;
  FoldSpans(s, View(0, 201, 201), &out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FALSE(out[1].folded());
  EXPECT_EQ(out[1].state, State::kRecycleDestroyed);
  EXPECT_FLOAT_EQ(out[1].x1 - out[1].x0, 3);
}

TEST(FoldTest, WideGapEndsABlock) {
  std::vector<Span> a = Spans(0, {1, 1, 1, 1});
  std::vector<Span> b = Spans(100, {1, 1, 1, 1});
  a.insert(a.end(), b.begin(), b.end());
  std::vector<FoldedSpan> out;
  FoldSpans(a, View(0, 200, 200), &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].count, 4u);
  EXPECT_EQ(out[1].first, 4u);
  EXPECT_EQ(out[1].count, 4u);
}

TEST(FoldTest, MaxFoldWidthSplitsLongBlocks) {
  std::vector<Span> s = Spans(0, std::vector<uint64_t>(1000, 1));
  std::vector<FoldedSpan> out;
  FoldParams p = View(0, 1000, 100);  // 10 spans per pixel
  p.max_fold_px = 12;
  FoldSpans(s, p, &out);
  ASSERT_GT(out.size(), 5u);
  uint32_t covered = 0;
  for (const FoldedSpan& f : out) {
    EXPECT_TRUE(f.folded());
    EXPECT_LE(f.x1 - f.x0, 12 + 3 + 0.01f);
    EXPECT_EQ(f.first, covered);  // blocks tile the spans in order, none lost
    covered += f.count;
  }
  EXPECT_EQ(covered, 1000u);
}

TEST(FoldTest, CostIsBoundedByPixelsNotSpans) {
  std::vector<Span> s = Spans(0, std::vector<uint64_t>(2'000'000, 1));
  std::vector<FoldedSpan> out;
  FoldParams p = View(0, 2'000'000, 1000);
  p.max_fold_px = 12;
  FoldSpans(s, p, &out);
  // One block per max_fold_px (at most ~1000 / 12), never one per span.
  EXPECT_LE(out.size(), 1000u / 12 + 2);
  uint64_t covered = 0;
  for (const FoldedSpan& f : out) covered += f.count;
  EXPECT_EQ(covered, 2'000'000u);
}

TEST(FoldTest, FoldedBlockTakesTheMajorityOfThreeSamples) {
  std::vector<Span> s;
  for (int i = 0; i < 10; ++i) {
    Span a;
    a.from = static_cast<uint64_t>(i);
    a.to = a.from + 1;
    a.state = i < 5 ? State::kValid : State::kRecycled;
    s.push_back(a);
  }
  std::vector<FoldedSpan> out;
  FoldSpans(s, View(0, 100, 100), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].count, 10u);
  EXPECT_EQ(out[0].state, State::kRecycled);  // samples at 2.5 (V), 5 (RC), 7.5 (RC)
}

TEST(FoldTest, EmptyInputsDrawNothing) {
  std::vector<FoldedSpan> out;
  FoldSpans({}, View(0, 100, 100), &out);
  std::vector<Span> s = Spans(0, {10});
  FoldSpans(s, View(100, 100, 100), &out);  // empty view
  FoldSpans(s, View(0, 100, 0), &out);      // no pixels
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace cltrace::inspector
