// Every state change the checker emits for a command list, a deferred context or a local
// handle is an edge of the §3 table (rules/state_machines.h), over the whole golden corpus
// (corpus/traces: clean runs and every planted bug and misuse mode), which the inspector draws
// — unless the checker reports an error on that call about that handle (the misuse traces
// take the illegal RD -> V shortcut, which is R45).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "check/checker.h"
#include "check/testing/test_trace.h"
#include "format/catalog.h"
#include "format/load_trace.h"
#include "gtest/gtest.h"
#include "rules/state_machines.h"

namespace cltrace::check {
namespace {

using rules::Edge;
using rules::MachineTable;

class EdgeCollector : public TransitionObserver {
 public:
  void OnTransition(const TransitionEvent& t) override {
    const MachineTable* m = rules::MachineOfRole(t.role);
    if (m == nullptr) return;  // IC objects and the immediate context have no §3 machine
    const format::CallInfo* ci = format::GetCall(t.call);
    const std::string call = ci ? ci->name : "";
    const Edge* e = rules::FindEdge(m->machine, t.from, t.to, call);
    if (e == nullptr) {
      missing.push_back(
          {t.seq, t.handle,
           absl::StrCat(m->title, ": ", StateName(t.from), " -> ", StateName(t.to), " by ",
                        t.dc_table ? "DC::" : "", call, " (seq ", t.seq, ")")});
      return;
    }
    ++taken[absl::StrCat(e->id, " ", StateName(e->from), "->", StateName(e->to))];
  }

  struct Missing {
    uint64_t seq;
    uint64_t handle;
    std::string text;
  };
  std::vector<Missing> missing;  // transitions that are no edge of the table
  std::map<std::string, int> taken;
};

TEST(StateTableTest, EveryTransitionTheCheckerEmitsOnTheCorpusIsATableEdge) {
  const std::vector<std::string> traces = testing::CorpusTraces();
  ASSERT_GE(traces.size(), 20u) << "run from the source root";
  EdgeCollector edges;
  int off_table = 0;
  for (const std::string& path : traces) {
    SCOPED_TRACE(path);
    absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(path);
    ASSERT_TRUE(t.ok()) << t.status();
    Checker checker(CheckOptions{});
    checker.set_observer(&edges);
    absl::StatusOr<CheckResult> r = checker.Run(t->events, t->handles);
    ASSERT_TRUE(r.ok()) << r.status();
    for (const EdgeCollector::Missing& m : edges.missing) {
      bool reported = false;
      for (const Violation& v : r->violations)
        reported = reported || (v.seq == m.seq && v.handle == m.handle);
      if (!reported) ADD_FAILURE() << "not a table edge and not reported: " << m.text;
      ++off_table;
    }
    edges.missing.clear();
  }
  EXPECT_GT(off_table, 0) << "the R45 misuse trace takes RD -> V";
  // Not vacuous: the corpus takes the spec's main edges of all three machines.
  for (const char* id :
       {"T1 None->Valid", "T3 Valid->RecycleDestroyed", "T5 RecycleDestroyed->Recycled",
        "T7 Recycled->Valid", "D1 None->Recording", "D5 Finishing->Closed", "D9 Closed->Recording",
        "L1 None->Open", "L3 Open->Closed"}) {
    EXPECT_GT(edges.taken[id], 0) << id << " never taken";
  }
}

TEST(StateTableTest, AnEmittedTransitionOutsideTheTableIsReported) {
  // The collector itself: R45's RD -> V shortcut is no edge.
  EdgeCollector edges;
  TransitionEvent t{};
  t.role = HandleRole::kCommandList;
  t.from = State::kRecycleDestroyed;
  t.to = State::kValid;
  t.call = format::CallId::kInvalid;
  edges.OnTransition(t);
  ASSERT_EQ(edges.missing.size(), 1u);
  EXPECT_NE(edges.missing[0].text.find("RecycleDestroyed -> Valid"), std::string::npos);
}

}  // namespace
}  // namespace cltrace::check
