#include "inspector/model.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inspector/internal/synthetic_model.h"
#include "inspector/internal/synthetic_trace.h"
#include "inspector/loader.h"
#include "inspector/state_machine.h"
#include "inspector/summary.h"

namespace cltrace::inspector {
namespace {

using check::State;
using ::testing::ElementsAre;
using testing::MakeSmallCommandListTrace;
using testing::SyntheticOptions;
using testing::SyntheticTrace;

std::unique_ptr<TraceModel> Build(SyntheticTrace t) {
  TraceData d = testing::AsTraceData(std::move(t), "synthetic");
  absl::StatusOr<std::unique_ptr<TraceModel>> m = TraceModel::Build(std::move(d));
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

std::vector<std::string> Labels(const TraceModel& m) {
  std::vector<std::string> out;
  for (const Row& r : m.rows()) out.push_back(r.label);
  return out;
}

TEST(ModelTest, RowsAreCommandListsThenEachContextWithItsLocals) {
  auto m = Build(MakeSmallCommandListTrace({.calls = 300, .dcs = 2}));
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(Labels(*m), ElementsAre("cl0", "cl1", "dc0", "lvb0 -> vb", "dc1", "lvb1 -> vb"));
  EXPECT_EQ(m->rows()[0].kind, RowKind::kCommandList);
  EXPECT_EQ(m->rows()[2].kind, RowKind::kDeferredContext);
  EXPECT_EQ(m->rows()[3].kind, RowKind::kLocal);
  EXPECT_EQ(m->rows()[3].group, 2);
  EXPECT_EQ(m->rows()[5].group, 4);
  EXPECT_EQ(m->Token(m->rows()[0].context), "dc0");
}

TEST(ModelTest, SpanAtGivesTheCheckersStates) {
  SyntheticTrace t = MakeSmallCommandListTrace({.calls = 300, .dcs = 2});
  const uint64_t create = t.first_create_cl0, release = t.first_recycle_destroy_cl0;
  auto m = Build(std::move(t));
  const int cl0 = m->FindRow("cl0");
  ASSERT_EQ(cl0, 0);
  EXPECT_EQ(m->SpanAt(cl0, create - 1), nullptr);  // not yet created
  ASSERT_NE(m->SpanAt(cl0, create), nullptr);
  EXPECT_EQ(m->SpanAt(cl0, create)->state, State::kValid);
  EXPECT_EQ(m->SpanAt(cl0, create)->cause, format::CallId::kCreateCommandList);
  EXPECT_EQ(m->SpanAt(cl0, release - 1)->state, State::kValid);
  EXPECT_EQ(m->SpanAt(cl0, release)->state, State::kRecycleDestroyed);
  EXPECT_FALSE(m->SpanAt(cl0, release)->dc_table);
  // Next cycle: RecycleCommandList on dc0's table, then RecycleCreateCommandList.
  const Span* next = m->SpanAt(cl0, *m->NextTransition(cl0, release));
  EXPECT_EQ(next->state, State::kRecycled);
  EXPECT_TRUE(next->dc_table);
  EXPECT_EQ(m->SpanAt(cl0, *m->NextTransition(cl0, next->from))->state, State::kValid);
  EXPECT_TRUE(m->violations().empty());
}

TEST(ModelTest, SpansAreSortedContiguousAndEndAtTheTraceEnd) {
  auto m = Build(MakeSmallCommandListTrace({.calls = 2000, .dcs = 3}));
  uint64_t total = 0;
  for (const Row& r : m->rows()) {
    ASSERT_FALSE(r.spans.empty()) << r.label;
    for (size_t i = 0; i < r.spans.size(); ++i) {
      EXPECT_LT(r.spans[i].from, r.spans[i].to);
      if (i > 0) {
        EXPECT_EQ(r.spans[i - 1].to, r.spans[i].from) << r.label << " span " << i;
      }
    }
    EXPECT_EQ(r.spans.back().to, m->end_seq()) << r.label;
    total += r.spans.size();
  }
  EXPECT_EQ(total, m->span_count());
}

TEST(ModelTest, PrevAndNextTransitionWalkTheRow) {
  auto m = Build(MakeSmallCommandListTrace({.calls = 300, .dcs = 1}));
  const int dc0 = m->FindRow("dc0");
  const std::vector<Span>& spans = m->rows()[dc0].spans;
  ASSERT_GE(spans.size(), 4u);
  EXPECT_EQ(m->NextTransition(dc0, 0), spans[0].from);
  EXPECT_EQ(m->NextTransition(dc0, spans[1].from), spans[2].from);
  EXPECT_EQ(m->PrevTransition(dc0, spans[2].from), spans[1].from);
  EXPECT_EQ(m->PrevTransition(dc0, spans[2].from + 1), spans[2].from);
  EXPECT_EQ(m->PrevTransition(dc0, spans[0].from), std::nullopt);
  EXPECT_EQ(m->NextTransition(dc0, spans.back().from), std::nullopt);
  EXPECT_EQ(m->NextTransition(-1, 0), std::nullopt);
}

TEST(ModelTest, InjectedViolationsAreFoundInSeqOrder) {
  SyntheticTrace t = MakeSmallCommandListTrace({.calls = 600, .dcs = 2, .violation_cycle = 3});
  const uint64_t execute = t.violation_execute, recreate = t.violation_recycle_create;
  ASSERT_NE(execute, 0u);
  ASSERT_GT(recreate, execute);
  auto m = Build(std::move(t));
  ASSERT_GE(m->error_count(), 2u);
  std::vector<int> at_execute = m->ViolationsAt(execute);
  ASSERT_FALSE(at_execute.empty());
  EXPECT_STREQ(m->violations()[at_execute[0]].id(), "R40");
  EXPECT_EQ(m->Token(m->violations()[at_execute[0]].handle), "cl0");
  std::vector<int> at_recreate = m->ViolationsAt(recreate);
  ASSERT_FALSE(at_recreate.empty());
  bool r45 = false;
  for (int i : at_recreate) r45 = r45 || std::string(m->violations()[i].id()) == "R45";
  EXPECT_TRUE(r45);
  // Navigation: from the start the first finding is the execute; it wraps at the end.
  EXPECT_EQ(m->violations()[m->NextViolation(0)].seq, execute);
  EXPECT_EQ(m->NextViolation(m->violations().back().seq), 0);
  EXPECT_EQ(m->violations()[m->PrevViolation(execute)].seq, m->violations().back().seq);
}

TEST(ModelTest, IllegalTransitionIsCountedFlaggedAndRedInTheDiagram) {
  auto m = Build(MakeSmallCommandListTrace({.calls = 600, .dcs = 2, .violation_cycle = 3}));
  bool found = false;
  for (const TransitionCount& t : m->transitions()) {
    if (t.role == check::HandleRole::kCommandList && t.from == State::kRecycleDestroyed &&
        t.to == State::kValid) {
      found = true;
      EXPECT_EQ(t.count, 1u);
      EXPECT_TRUE(t.flagged);
      EXPECT_EQ(t.call, format::CallId::kRecycleCreateCommandList);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(rules::FindEdge(rules::Machine::kCommandList, State::kRecycleDestroyed, State::kValid,
                            "RecycleCreateCommandList"),
            nullptr);
  Diagram d = BuildDiagram(RowKind::kCommandList, *m);
  int illegal = 0;
  for (const DiagramEdge& e : d.edges) {
    if (!e.illegal) continue;
    ++illegal;
    EXPECT_EQ(e.from, State::kRecycleDestroyed);
    EXPECT_EQ(e.to, State::kValid);
    EXPECT_EQ(e.count, 1u);
    EXPECT_THAT(e.label, ::testing::HasSubstr("RecycleCreateCommandList"));
  }
  EXPECT_EQ(illegal, 1);
}

TEST(ModelTest, DiagramLaysOutEveryStateOfTheTableAndNamesEachEdgesRule) {
  auto m = Build(MakeSmallCommandListTrace({.calls = 200, .dcs = 1}));
  for (RowKind kind : {RowKind::kCommandList, RowKind::kDeferredContext, RowKind::kLocal}) {
    Diagram d = BuildDiagram(kind, *m);
    ASSERT_EQ(d.machine, &rules::MachineOf(MachineOfKind(kind)));
    for (State s : d.machine->states)
      EXPECT_TRUE(NodeLayout(d.machine->machine, s).has_value())
          << d.machine->title << ": " << check::StateName(s);
    size_t table_edges = 0;
    for (const DiagramEdge& e : d.edges) {
      if (e.illegal) continue;
      ++table_edges;
      const rules::Edge* spec = rules::FindEdge(d.machine->machine, e.from, e.to, "");
      if (spec == nullptr) continue;  // an edge taken by named calls only
      EXPECT_EQ(e.rule, spec->rule) << e.id;
    }
    EXPECT_EQ(table_edges, d.machine->edges.size()) << d.machine->title;
  }
  Diagram cl = BuildDiagram(RowKind::kCommandList, *m);
  int t3 = 0;
  for (const DiagramEdge& e : cl.edges) {
    if (e.id != "T3") continue;
    ++t3;
    EXPECT_EQ(e.rule, rules::Rule::kR41);
  }
  EXPECT_EQ(t3, 1);
}

TEST(ModelTest, DiagramCountsMatchTheCalls) {
  auto m = Build(MakeSmallCommandListTrace({.calls = 1200, .dcs = 3}));
  const uint64_t releases =
      m->call_counts()[static_cast<size_t>(format::CallId::kRecycleDestroyCommandList)];
  const uint64_t executes =
      m->call_counts()[static_cast<size_t>(format::CallId::kCommandListExecute)];
  ASSERT_GT(releases, 10u);
  Diagram d = BuildDiagram(RowKind::kCommandList, *m);
  uint64_t t3 = 0, t2 = 0;
  for (const DiagramEdge& e : d.edges) {
    EXPECT_FALSE(e.illegal) << e.label;
    if (e.id == "T3") t3 = e.count;
    if (e.id == "T2") t2 = e.count;
  }
  EXPECT_EQ(t3, releases);
  EXPECT_EQ(t2, executes);
  EXPECT_EQ(m->ic_executes(), executes);
  Diagram dc = BuildDiagram(RowKind::kDeferredContext, *m);
  uint64_t d9 = 0;
  for (const DiagramEdge& e : dc.edges)
    if (e.id == "D9" && e.from == State::kClosed) d9 = e.count;
  EXPECT_EQ(d9,
            m->call_counts()[static_cast<size_t>(format::CallId::kRecycleCreateDeferredContext)]);
}

TEST(ModelTest, DcTableCallsAreMarked) {
  auto m = Build(MakeSmallCommandListTrace({.calls = 100, .dcs = 1}));
  int64_t draw = -1, execute = -1;
  for (size_t i = 0; i < m->call_count(); ++i) {
    if (draw < 0 && m->Call(i).call == format::CallId::kDraw) draw = static_cast<int64_t>(i);
    if (execute < 0 && m->Call(i).call == format::CallId::kCommandListExecute)
      execute = static_cast<int64_t>(i);
  }
  ASSERT_GE(draw, 0);
  ASSERT_GE(execute, 0);
  EXPECT_TRUE(m->ViaDcTable(draw));
  EXPECT_EQ(m->CallLabel(draw), "DC::Draw");
  EXPECT_FALSE(m->ViaDcTable(execute));
  EXPECT_EQ(m->CallLabel(execute), "CommandListExecute");
}

TEST(ModelTest, EventLookupBySeq) {
  auto m = Build(MakeSmallCommandListTrace({.calls = 100, .dcs = 1}));
  const CallRecord e = m->Call(10);
  EXPECT_EQ(m->EventAt(e.seq), 10);
  EXPECT_EQ(m->EventAt(e.seq + 1), -1);  // an exit position
  EXPECT_EQ(m->EventAtOrBefore(e.seq + 1), 10);
  EXPECT_EQ(m->EventAtOrBefore(0), -1);
}

TEST(ModelTest, SummaryCountsRecyclingAndAliveHandles) {
  auto m = Build(MakeSmallCommandListTrace({.calls = 1200, .dcs = 3}));
  Summary s = Summarize(*m, 50);
  EXPECT_EQ(s.creates, 3u);
  const uint64_t recycles =
      m->call_counts()[static_cast<size_t>(format::CallId::kRecycleCreateCommandList)];
  EXPECT_EQ(s.recycle_creates, recycles);
  EXPECT_NEAR(s.recycle_rate(), static_cast<double>(recycles) / (recycles + 3), 1e-9);
  EXPECT_EQ(s.command_lists, 3u);
  EXPECT_EQ(s.deferred_contexts, 3u);
  ASSERT_EQ(s.alive_deferred_contexts.size(), 50u);
  EXPECT_EQ(s.alive_deferred_contexts.front(), 0.0f);           // before the first create
  EXPECT_EQ(s.alive_deferred_contexts[25], 3.0f);               // never destroyed
  EXPECT_EQ(s.alive_command_lists[25], 3.0f);                   // Valid, RD or RC: alive throughout
  EXPECT_EQ(s.functions.front().first, format::CallId::kDraw);  // two per recording
  EXPECT_EQ(s.calls, m->call_count());
}

TEST(ModelTest, HandCheckedJsonlTrace) {
  absl::StatusOr<std::unique_ptr<TraceModel>> m = LoadModel("corpus/check/small_cl.jsonl", {}, {});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(Labels(**m), ElementsAre("cl1", "dc1", "lvb -> vb"));
  EXPECT_EQ((*m)->error_count(), 0u);
  // Import renumbers positions (every call gets its exit position); line N is event N - 1.
  const TraceModel& t = **m;
  auto line = [&](int n) { return t.Call(n - 1).seq; };
  auto state = [&](int row, uint64_t seq) {
    const Span* s = t.SpanAt(row, seq);
    return s ? s->state : State::kNone;
  };
  const int cl1 = t.FindRow("cl1");
  EXPECT_EQ(state(cl1, line(7)), State::kNone);               // not created yet
  EXPECT_EQ(state(cl1, line(8)), State::kValid);              // CreateCommandList
  EXPECT_EQ(state(cl1, line(13)), State::kRecycleDestroyed);  // RecycleDestroyCommandList
  EXPECT_EQ(state(cl1, line(15)), State::kRecycled);          // RecycleCommandList
  EXPECT_EQ(state(cl1, line(16)), State::kValid);             // RecycleCreateCommandList
  const int local = t.FindRow("lvb");
  ASSERT_GE(local, 0);
  EXPECT_EQ(t.rows()[local].kind, RowKind::kLocal);
  EXPECT_EQ(state(local, line(4)), State::kOpen);          // DC CreateResource
  EXPECT_EQ(state(local, line(10)), State::kClosedLocal);  // DC DestroyResource
}

TEST(ModelTest, ReleasedListExecutedShowsItsFindings) {
  absl::StatusOr<std::unique_ptr<TraceModel>> m =
      LoadModel("corpus/check/released_list_executed.jsonl", {}, {});
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<std::string> rules;
  for (const check::Violation& v : (*m)->violations()) rules.push_back(v.id());
  EXPECT_THAT(rules, ::testing::IsSupersetOf({"R40", "R45", "R44"}));
}

TEST(ModelTest, NestedCallsAreChildren) {
  absl::StatusOr<std::unique_ptr<TraceModel>> m =
      LoadModel("corpus/jsonl/cl_recycle.jsonl", {}, {});
  ASSERT_TRUE(m.ok()) << m.status();
  // Line 8: CommandListExecute with a SetErrorCb inside.
  const int64_t execute = 7;
  ASSERT_EQ((*m)->Call(execute).call, format::CallId::kCommandListExecute);
  ASSERT_GE(execute, 0);
  std::vector<size_t> children = (*m)->Children(static_cast<size_t>(execute));
  ASSERT_EQ(children.size(), 1u);
  EXPECT_EQ((*m)->Call(children[0]).call, format::CallId::kSetErrorCb);
}

}  // namespace
}  // namespace cltrace::inspector
