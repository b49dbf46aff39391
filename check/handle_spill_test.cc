// The checker moves finished handle histories out of memory and back (CheckOptions::
// spill_after, check/internal/handle_spill.h): moving out everything it may, at every event,
// changes no finding and no transition on the golden corpus, whether the handle values come
// back (restored) or not; and over a long stream of handle values that are never reused, the
// slots and records in memory stay bounded where without it they grow with the trace.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "check/check_trace.h"
#include "check/checker.h"
#include "check/testing/test_trace.h"
#include "check/testing/transition_log.h"
#include "format/load_trace.h"
#include "format/stable_names.h"
#include "gtest/gtest.h"

namespace cltrace::check {
namespace {

using testing::TransitionLog;

uint64_t Span(const format::LoadedTrace& t) {
  uint64_t span = 0;
  for (const format::Event& e : t.events) span = std::max({span, e.seq, e.end});
  return span;
}

// `e` shifted to repetition `rep`; with `fresh`, every handle id it names (or those `only`
// selects) is that of repetition `rep` (a value the trace has not used before), else the
// same ids every time.
format::Event Shifted(format::Event e, uint64_t rep, uint64_t span, uint64_t ids, bool fresh,
                      const std::vector<bool>* only = nullptr) {
  const uint64_t shift = rep * span;
  e.seq += shift;
  if (e.end != 0) e.end += shift;
  if (e.parent != 0) e.parent += shift;
  if (fresh && rep > 0) {
    format::ForEachField(&e, [&](const format::FieldInfo& f, uint64_t* v) {
      if (f.kind != format::FieldKind::kHandle || *v == 0) return;
      if (only == nullptr || (*v < only->size() && (*only)[*v])) *v += rep * ids;
    });
  }
  return e;
}

// The handle ids of `t` that are not contexts, core layers, devices, adapters or command
// lists (by the field each is first named in): resources, views, states, local handles and
// allocations -- what a program makes and destroys by the thousand.
std::vector<bool> ObjectHandles(const format::LoadedTrace& t) {
  std::vector<bool> object(t.handles.size(), false), seen(t.handles.size(), false);
  for (format::Event e : t.events) {
    const format::CallInfo* call = format::GetCall(e.call);
    format::ForEachField(&e, [&](const format::FieldInfo& f, uint64_t* v) {
      if (f.kind != format::FieldKind::kHandle || *v == 0 || *v >= seen.size() || seen[*v]) return;
      seen[*v] = true;
      const std::string kind = format::HandleKind(*call, f);
      object[*v] = kind == "res" || kind == "rtres" || kind == "allocation";
    });
  }
  return object;
}

// The handle table of `reps` repetitions with fresh ids: repetition r's id i + r * size()
// spells the original token with "/r" appended.
format::TokenTable FreshHandles(const format::TokenTable& h, uint64_t reps) {
  format::TokenTable out;
  for (uint64_t rep = 0; rep < reps; ++rep) {
    for (uint64_t id = (rep == 0 ? 1 : 0); id < h.size(); ++id) {
      const std::string token =
          id == 0 ? absl::StrCat("<unused ", rep, ">")
                  : (rep == 0 ? std::string(h.Token(id)) : absl::StrCat(h.Token(id), "/", rep));
      EXPECT_TRUE(out.Define(out.size(), token)) << token;
    }
  }
  return out;
}

struct StreamRun {
  std::vector<std::string> findings;
  std::vector<std::string> transitions;
  Checker::HandleMemory memory;
};

StreamRun Stream(const format::LoadedTrace& t, const format::TokenTable& handles, int reps,
                 bool fresh, uint64_t spill_after, bool observe) {
  CheckOptions options;
  options.compact_above = 0;  // a compaction (and a move out) after every event
  options.spill_after = spill_after;
  options.strings = &t.strings;
  Checker checker(options);
  TransitionLog log;
  if (observe) checker.set_observer(&log);
  checker.Begin(handles, nullptr);
  const uint64_t span = Span(t);
  for (int rep = 0; rep < reps; ++rep) {
    for (const format::Event& e : t.events) {
      absl::Status st = checker.Add(Shifted(e, rep, span, t.handles.size(), fresh));
      EXPECT_TRUE(st.ok()) << st;
    }
  }
  StreamRun out;
  out.memory = checker.handle_memory();
  CheckResult r = checker.Finish();
  for (const auto* list : {&r.violations, &r.warnings})
    for (const Violation& v : *list) out.findings.push_back(FormatViolation(v, handles));
  out.transitions = std::move(log.lines);
  return out;
}

TEST(HandleSpillTest, MovingOutAtEveryEventChangesNothingOnTheCorpus) {
  const std::vector<std::string> traces = testing::CorpusTraces();
  ASSERT_GE(traces.size(), 20u) << "run from the source root";
  uint64_t moved_out = 0, brought_back = 0;
  for (const std::string& path : traces) {
    absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(path);
    ASSERT_TRUE(t.ok()) << t.status();
    const format::TokenTable fresh = FreshHandles(t->handles, 3);
    for (bool fresh_ids : {false, true}) {
      SCOPED_TRACE(absl::StrCat(path, fresh_ids ? " (fresh handle values)" : " (same values)"));
      const format::TokenTable& h = fresh_ids ? fresh : t->handles;
      for (bool observe : {false, true}) {
        StreamRun kept = Stream(*t, h, 3, fresh_ids, /*spill_after=*/0, observe);
        StreamRun moved = Stream(*t, h, 3, fresh_ids, /*spill_after=*/1, observe);
        EXPECT_EQ(moved.findings, kept.findings);
        EXPECT_EQ(moved.transitions, kept.transitions);
        EXPECT_EQ(kept.memory.moved_out, 0u);
        moved_out += moved.memory.moved_out;
        brought_back += moved.memory.brought_back;
      }
    }
  }
  // Not vacuous: histories moved out, and some came back when their handle was named again.
  EXPECT_GT(moved_out, 1000u);
  EXPECT_GT(brought_back, 100u);
}

// An observer told when lifetimes end keeps everything in memory (it is told when a record
// is dropped).
TEST(HandleSpillTest, NothingMovesOutForAnObserverOfEndings) {
  class Endings : public TransitionLog {
   public:
    bool WantsEndings() const override { return true; }
  };
  absl::StatusOr<format::LoadedTrace> t = format::LoadTrace("corpus/traces/smallcl.cltrace");
  ASSERT_TRUE(t.ok()) << t.status();
  CheckOptions options;
  options.compact_above = 0;
  options.spill_after = 1;
  Checker checker(options);
  Endings log;
  checker.set_observer(&log);
  checker.Begin(t->handles, nullptr);
  for (int rep = 0; rep < 3; ++rep)
    for (const format::Event& e : t->events)
      ASSERT_TRUE(checker.Add(Shifted(e, rep, Span(*t), 0, false)).ok());
  EXPECT_EQ(checker.handle_memory().moved_out, 0u);
}

// smallcl (command lists recorded, executed and recycled from several threads, with their
// local handles, objects and allocations) repeated with fresh handle values each time for
// everything but its devices, contexts and command lists, as a program whose resources,
// views and DC-local handles each live at a new address (`cltrace-workload scene`). (Contexts
// and command lists never move out: a trace that makes them by the thousand at fresh
// addresses still grows.)
TEST(HandleSpillTest, MemoryStaysBoundedWhenHandleValuesAreNeverReused) {
  absl::StatusOr<format::LoadedTrace> t = format::LoadTrace("corpus/traces/smallcl.cltrace");
  ASSERT_TRUE(t.ok()) << t.status();
  constexpr int kReps = 300;
  const format::TokenTable handles = FreshHandles(t->handles, kReps);
  const std::vector<bool> objects = ObjectHandles(*t);
  const uint64_t span = Span(*t);
  // The most slots and records held over the first and the second half of the stream.
  struct Most {
    size_t slots[2] = {0, 0};
    size_t records[2] = {0, 0};
    Checker::HandleMemory end;
  };
  auto feed = [&](uint64_t spill_after) {
    CheckOptions options;
    options.compact_above = 256;
    options.spill_after = spill_after;
    Checker checker(options);
    checker.Begin(handles, nullptr);
    Most most;
    for (int rep = 0; rep < kReps; ++rep) {
      const int half = rep < kReps / 2 ? 0 : 1;
      for (const format::Event& e : t->events) {
        EXPECT_TRUE(checker.Add(Shifted(e, rep, span, t->handles.size(), true, &objects)).ok());
        const Checker::HandleMemory m = checker.handle_memory();
        most.slots[half] = std::max(most.slots[half], m.slots);
        most.records[half] = std::max(most.records[half], m.records);
      }
    }
    most.end = checker.handle_memory();
    return most;
  };
  const Most moved = feed(/*spill_after=*/4 * span);
  const Most kept = feed(/*spill_after=*/0);
  SCOPED_TRACE(
      absl::StrCat(t->handles.size(), " handle ids a repetition, ", t->events.size(), " events"));
  // Without moving out, the slots (and the records they name) grow with the stream ...
  EXPECT_GT(kept.slots[1], kept.slots[0] + kept.slots[0] / 2);
  EXPECT_GT(kept.records[1], kept.records[0]);
  // ... with it, the second half holds no more than the first, ...
  EXPECT_GT(moved.end.moved_out, 1000u);
  EXPECT_LE(moved.slots[1], moved.slots[0]);
  EXPECT_LE(moved.records[1], moved.records[0]);
  // ... and far less than all of it.
  EXPECT_LT(moved.slots[1] * 4, kept.slots[1]);
  EXPECT_LT(moved.records[1] * 2, kept.records[1]);
}

}  // namespace
}  // namespace cltrace::check
