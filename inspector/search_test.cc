#include "inspector/search.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inspector/internal/synthetic_model.h"
#include "inspector/internal/synthetic_trace.h"

namespace cltrace::inspector {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<TraceModel> Build(const testing::SyntheticOptions& o) {
  auto m =
      TraceModel::Build(testing::AsTraceData(testing::MakeSmallCommandListTrace(o), "synthetic"));
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

std::shared_ptr<const format::Event> Decoded(const TraceModel& m, int64_t i) {
  absl::StatusOr<std::shared_ptr<const format::Event>> e = m.DecodeEvent(static_cast<size_t>(i));
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? *e : std::make_shared<const format::Event>();
}

TEST(SearchTest, ParseSeqInputTakesDigitsWithSeparators) {
  EXPECT_EQ(*ParseSeqInput("12345"), 12345u);
  EXPECT_EQ(*ParseSeqInput(" 12,345 "), 12345u);
  EXPECT_EQ(*ParseSeqInput("1'000'000"), 1000000u);
  for (const char* bad : {"", "  ", "12a", "-3", "0x10", "1.5"}) {
    absl::StatusOr<uint64_t> s = ParseSeqInput(bad);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(SearchTest, GoToSeqSelectsTheCallAtOrBeforeTheSeq) {
  auto m = Build({.calls = 300, .dcs = 2});
  const CallRecord e = m->Call(40);
  EXPECT_EQ(*GoToSeq(*m, absl::StrCat(e.seq)), 40);
  // An exit position belongs to the call entered last before it.
  ASSERT_GT(e.end, e.seq);
  EXPECT_EQ(*GoToSeq(*m, absl::StrCat(e.end)), m->EventAtOrBefore(e.end));
  EXPECT_EQ(m->Call(*GoToSeq(*m, absl::StrCat(e.end))).seq, e.seq);
  absl::StatusOr<int64_t> past = GoToSeq(*m, absl::StrCat(m->end_seq() + 5));
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past.status().message(), HasSubstr("outside the trace"));
  EXPECT_THAT(past.status().message(), HasSubstr(absl::StrCat(m->end_seq() - 1)));
  EXPECT_FALSE(GoToSeq(*m, "abc").ok());
}

TEST(SearchTest, FindNextAndPreviousByTextWrapAround) {
  auto m = Build({.calls = 300, .dcs = 2});
  std::vector<int64_t> all;
  for (size_t i = 0; i < m->call_count(); ++i)
    if (m->Call(i).call == format::CallId::kRecycleDestroyCommandList)
      all.push_back(static_cast<int64_t>(i));
  ASSERT_GE(all.size(), 3u);
  const CallFilterSpec spec{.text = "recycledestroy"};
  EXPECT_EQ(FindCall(*m, spec, -1, false), all[0]);
  EXPECT_EQ(FindCall(*m, spec, all[0], false), all[1]);
  EXPECT_EQ(FindCall(*m, spec, all[1], true), all[0]);
  // Backwards from the first match wraps to the last one.
  CallSearch s;
  s.Start(*m, spec, all[0], /*backwards=*/true);
  while (!s.Step(7)) {
  }
  EXPECT_EQ(s.result(), all.back());
  EXPECT_TRUE(s.wrapped());
  // Forward from the last wraps to the first.
  EXPECT_EQ(FindCall(*m, spec, all.back(), false), all[0]);
}

TEST(SearchTest, FindByFunctionAndByHandle) {
  auto m = Build({.calls = 300, .dcs = 2});
  const int64_t ex = FindCall(*m, {.call = format::CallId::kCommandListExecute}, 10, false);
  ASSERT_GT(ex, 10);
  EXPECT_EQ(m->Call(ex).call, format::CallId::kCommandListExecute);
  for (int64_t i = 11; i < ex; ++i) EXPECT_NE(m->Call(i).call, format::CallId::kCommandListExecute);
  const uint64_t cl1 = static_cast<uint64_t>(m->handles().Find("cl1"));
  int64_t at = -1;
  for (int k = 0; k < 4; ++k) {
    const int64_t next = FindCall(*m, {.handle = cl1}, at, false);
    ASSERT_GE(next, 0);
    if (at >= 0) {
      ASSERT_GT(next, at);
    }
    bool has = false;
    ForEachHandle(*Decoded(*m, next), [&](uint64_t h) { has = has || h == cl1; });
    EXPECT_TRUE(has) << next;
    for (int64_t i = at + 1; i < next; ++i) {
      bool other = false;
      ForEachHandle(*Decoded(*m, i), [&](uint64_t h) { other = other || h == cl1; });
      EXPECT_FALSE(other) << "skipped call " << i;
    }
    at = next;
  }
}

TEST(SearchTest, NothingToFind) {
  auto m = Build({.calls = 300, .dcs = 2});
  EXPECT_EQ(FindCall(*m, {}, 3, false), -1);  // an empty spec finds nothing
  CallSearch s;
  s.Start(*m, {.text = "no call has this text"}, 3, false);
  while (!s.Step(50)) {
  }
  EXPECT_EQ(s.result(), -1);
  EXPECT_EQ(s.examined(), m->call_count());
}

// A click on a lifeline selects that handle's call nearest the click: checked against every
// call of the trace at every position, for every row.
TEST(SearchTest, NearestCallOnRowIsTheRowsNearestCall) {
  auto m = Build({.calls = 400, .dcs = 3});
  int differs_from_cursor_call = 0;
  for (int row = 0; row < static_cast<int>(m->rows().size()); ++row) {
    for (double seq = static_cast<double>(m->first_seq()); seq < m->end_seq(); seq += 3.5) {
      int64_t want = -1;
      double want_d = std::numeric_limits<double>::infinity();
      for (size_t i = 0; i < m->call_count(); ++i) {
        if (!CallIsOnRow(*m, row, i)) continue;
        const double d = std::abs(static_cast<double>(m->Call(i).seq) - seq);
        if (d < want_d) {
          want = static_cast<int64_t>(i);
          want_d = d;
        }
      }
      const int64_t got = NearestCallOnRow(*m, row, seq);
      ASSERT_EQ(got, want) << m->rows()[row].label << " at " << seq;
      const int64_t cursor_call = m->EventAtOrBefore(static_cast<uint64_t>(seq));
      if (cursor_call >= 0 && !CallIsOnRow(*m, row, static_cast<size_t>(cursor_call)))
        ++differs_from_cursor_call;
    }
  }
  // The call at the cursor is often on another handle: that is what the click must not pick.
  EXPECT_GT(differs_from_cursor_call, 100);
}

// With the scan capped, a click still selects a call on the row: the state change nearest it.
TEST(SearchTest, NearestCallOnRowWithACappedScanIsStillOnTheRow) {
  auto m = Build({.calls = 400, .dcs = 3});
  const int cl0 = m->FindRow("cl0");
  for (double seq = static_cast<double>(m->first_seq()); seq < m->end_seq(); seq += 7) {
    const int64_t got = NearestCallOnRow(*m, cl0, seq, /*max_scan=*/1);
    ASSERT_GE(got, 0);
    EXPECT_TRUE(CallIsOnRow(*m, cl0, static_cast<size_t>(got))) << seq;
    // Never farther than the nearest state change of the row.
    double nearest_change = 1e18;
    for (const Span& sp : m->rows()[cl0].spans)
      if (m->EventAt(sp.from) >= 0)
        nearest_change = std::min(nearest_change, std::abs(static_cast<double>(sp.from) - seq));
    EXPECT_LE(std::abs(static_cast<double>(m->Call(static_cast<size_t>(got)).seq) - seq),
              nearest_change)
        << seq;
  }
}

TEST(SearchTest, LocalRowCallsAreThoseOfItsContext) {
  auto m = Build({.calls = 300, .dcs = 2});
  const int l = m->FindRow("lvb0");
  ASSERT_GE(l, 0);
  const Row& row = m->rows()[l];
  int on = 0;
  for (size_t i = 0; i < m->call_count(); ++i) {
    if (!CallIsOnRow(*m, l, i)) continue;
    ++on;
    bool dc = false;
    ForEachHandle(*Decoded(*m, i), [&](uint64_t h) { dc = dc || h == row.context; });
    EXPECT_TRUE(dc) << i;
  }
  EXPECT_GT(on, 3);
}

}  // namespace
}  // namespace cltrace::inspector
