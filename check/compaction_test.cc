// The checker drops the records of finished lifetimes (CheckOptions::compact_above,
// check/internal/trackers.h): compacting after every event changes no finding and no
// transition on the golden corpus, and over a long stream of short lifetimes the records held
// stay bounded by the live handles instead of growing with the trace.
#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "check/check_trace.h"
#include "check/checker.h"
#include "check/testing/test_trace.h"
#include "check/testing/transition_log.h"
#include "format/load_trace.h"
#include "gtest/gtest.h"

namespace cltrace::check {
namespace {

using testing::TransitionLog;

// `t` repeated `reps` times with shifted positions and the same handle values every time:
// handle values come back for new lifetimes, so finished lifetimes' records can be dropped.
format::LoadedTrace Repeated(const format::LoadedTrace& t, int reps) {
  format::LoadedTrace out;
  out.handles = t.handles;
  out.strings = t.strings;
  uint64_t span = 0;
  for (const format::Event& e : t.events) span = std::max({span, e.seq, e.end});
  for (int rep = 0; rep < reps; ++rep) {
    const uint64_t shift = static_cast<uint64_t>(rep) * span;
    for (format::Event e : t.events) {
      e.seq += shift;
      if (e.end != 0) e.end += shift;
      if (e.parent != 0) e.parent += shift;
      out.events.push_back(std::move(e));
    }
  }
  return out;
}

struct CheckRun {
  std::vector<std::string> findings;
  std::vector<std::string> transitions;
  size_t records_held = 0;
};

CheckRun CheckWith(const format::LoadedTrace& t, size_t compact_above) {
  CheckOptions options;
  options.compact_above = compact_above;
  options.strings = &t.strings;
  Checker checker(options);
  TransitionLog log;
  checker.set_observer(&log);
  absl::StatusOr<CheckResult> r = checker.Run(t.events, t.handles);
  EXPECT_TRUE(r.ok()) << r.status();
  CheckRun out;
  if (!r.ok()) return out;
  for (const auto* list : {&r->violations, &r->warnings})
    for (const Violation& v : *list) out.findings.push_back(FormatViolation(v, t.handles));
  out.transitions = std::move(log.lines);
  out.records_held = checker.records_held();
  return out;
}

// Each corpus trace is checked three times over (Repeated), so that handle values come back.
TEST(CompactionTest, CompactingAfterEveryEventChangesNothingOnTheCorpus) {
  const std::vector<std::string> traces = testing::CorpusTraces();
  ASSERT_GE(traces.size(), 20u) << "run from the source root";
  size_t dropped_somewhere = 0;
  for (const std::string& path : traces) {
    SCOPED_TRACE(path);
    absl::StatusOr<format::LoadedTrace> once = format::LoadTrace(path);
    ASSERT_TRUE(once.ok()) << once.status();
    const format::LoadedTrace t = Repeated(*once, 3);
    CheckRun keep_all = CheckWith(t, std::numeric_limits<size_t>::max());
    CheckRun compacted = CheckWith(t, 0);
    EXPECT_EQ(compacted.findings, keep_all.findings);
    EXPECT_EQ(compacted.transitions, keep_all.transitions);
    if (compacted.records_held < keep_all.records_held) ++dropped_somewhere;
  }
  // Not vacuous: compaction did drop records (of the lifetimes the repetitions ended).
  EXPECT_GT(dropped_somewhere, traces.size() / 2);
}

// A long stream of short lifetimes: the corpus's smallcl trace (command lists recorded,
// executed and recycled from several threads, with their local handles and objects) repeated
// `reps` times with shifted positions, the same handle values every time, fed event by event.
TEST(CompactionTest, RecordsHeldStayBoundedOverManyShortLifetimes) {
  absl::StatusOr<format::LoadedTrace> t = format::LoadTrace("corpus/traces/smallcl.cltrace");
  ASSERT_TRUE(t.ok()) << t.status();
  uint64_t span = 0;
  for (const format::Event& e : t->events) span = std::max({span, e.seq, e.end});
  constexpr int kReps = 200;
  // The most records held over the second half of the reps (over the first: *first_half).
  auto feed = [&](size_t compact_above, uint64_t* lifetimes, size_t* first_half) {
    CheckOptions options;
    options.compact_above = compact_above;
    Checker checker(options);
    TransitionLog log;
    checker.set_observer(&log);
    checker.Begin(t->handles, nullptr);
    size_t most = 0;
    for (int rep = 0; rep < kReps; ++rep) {
      if (rep == kReps / 2) {
        *first_half = most;
        most = 0;
      }
      for (format::Event e : t->events) {
        const uint64_t shift = static_cast<uint64_t>(rep) * span;
        e.seq += shift;
        if (e.end != 0) e.end += shift;
        if (e.parent != 0) e.parent += shift;
        EXPECT_TRUE(checker.Add(e).ok());
        most = std::max(most, checker.records_held());
      }
      log.lines.clear();
    }
    *lifetimes = log.max_lifetime;
    return most;
  };
  uint64_t lifetimes = 0;
  size_t first_half = 0;
  const size_t most = feed(1024, &lifetimes, &first_half);
  // Tens of thousands of lifetimes went by (the local handles' numbers alone) ...
  EXPECT_GT(lifetimes, 20000u);
  // ... while the records held (what the handle values name, at most twice over between
  // compactions) did not grow from the first half of the stream to the second ...
  EXPECT_GT(most, 0u);
  EXPECT_LE(most, first_half) << lifetimes << " lifetimes";
  EXPECT_LE(most, 4 * t->handles.size() + 1024) << t->handles.size() << " handle values";
  // ... where without compaction every lifetime's record stays.
  uint64_t all_lifetimes = 0;
  size_t all_first_half = 0;
  const size_t all = feed(std::numeric_limits<size_t>::max(), &all_lifetimes, &all_first_half);
  EXPECT_GT(all, 8 * most);
  EXPECT_GT(all, all_first_half);
}

}  // namespace
}  // namespace cltrace::check
