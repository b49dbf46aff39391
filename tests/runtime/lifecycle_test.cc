// The runtime model's lifecycle DDIs against the §3 state-machine table (rules/
// state_machines.h): on the smallcl and scene workloads, with fault injection and the [INF]
// option variants, every command-list, deferred-context and context-local step the runtime
// takes is an edge; each runtime-misuse mode that breaks a state machine issues exactly its
// non-edge, recorded with the mode's rule.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "corpus/workloads/scenarios.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rules/rules.h"
#include "rules/state_machines.h"
#include "runtime/options.h"
#include "runtime/runtime.h"
#include "tests/runtime/test_util.h"

namespace cltrace::testing {
namespace {

using rules::Machine;
using rules::State;
using runtime::Device;
using runtime::LifecycleNonEdge;
using runtime::Misuse;

// Runs `scenario` on a fresh device with `options` and driver configuration `driver_config`,
// and returns the lifecycle steps of the run (device teardown included).
runtime::LifecycleSteps RunAndStep(const std::string& scenario,
                                   runtime::RuntimeOptions options = {},
                                   const std::string& driver_config = "") {
  ResetViolations();
  runtime::ClearProcessLifecycleSteps();
  SetDriverConfig(driver_config);
  Device* d = nullptr;
  EXPECT_EQ(Device::Create(options, &d), S_OK);
  SetDriverConfig("");
  if (d == nullptr) return {};
  workloads::ScenarioOptions o;
  o.threads = 3;
  o.frames = 8;
  o.misuse = options.misuse;
  EXPECT_TRUE(workloads::RunScenario(scenario, d, o).ok());
  d->Release();
  return runtime::ProcessLifecycleSteps();
}

std::string Describe(const LifecycleNonEdge& n) {
  const rules::MachineTable& m = rules::MachineOf(n.machine);
  return absl::StrCat(m.title, ": ", n.call, " ", rules::Abbreviation(m, n.from), " -> ",
                      rules::Abbreviation(m, n.to), " (", rules::RuleId(n.rule), ")");
}

std::vector<std::string> NonEdges(const runtime::LifecycleSteps& s) {
  std::vector<std::string> out;
  for (const LifecycleNonEdge& n : s.non_edges) out.push_back(Describe(n));
  return out;
}

void ExpectAllEdges(const runtime::LifecycleSteps& s, bool locals = true) {
  EXPECT_EQ(s.non_edge_count, 0u) << ::testing::PrintToString(NonEdges(s));
  EXPECT_GT(s.edges[static_cast<int>(Machine::kCommandList)], 0u);
  EXPECT_GT(s.edges[static_cast<int>(Machine::kDeferredContext)], 0u);
  if (locals) {
    EXPECT_GT(s.edges[static_cast<int>(Machine::kLocal)], 0u);
  }
}

TEST(LifecycleTest, EveryLifecycleDdiOfSmallclIsATableEdge) {
  ExpectAllEdges(RunAndStep("smallcl"));
}

TEST(LifecycleTest, EveryLifecycleDdiOfSceneIsATableEdge) { ExpectAllEdges(RunAndStep("scene")); }

TEST(LifecycleTest, FailedCreatesAndRecyclesTakeTheFailureEdges) {
  // T7e, D5e (both continuations), D9e, T1e.
  for (bool abandon : {true, false}) {
    runtime::RuntimeOptions o;
    o.abandon_after_failed_create = abandon;
    o.destroy_after_failed_recycle_create = !abandon;
    ExpectAllEdges(RunAndStep("smallcl", o, "oom:RecycleCreateCommandList=2,5,9"));
    ExpectAllEdges(RunAndStep("smallcl", o, "oom:CreateCommandList=1,4"));
  }
  runtime::RuntimeOptions keep_dc;
  keep_dc.destroy_dc_after_failed_recycle = false;
  ExpectAllEdges(RunAndStep("smallcl", {}, "oom:RecycleCreateDeferredContext=3,7"));
  ExpectAllEdges(RunAndStep("smallcl", keep_dc, "oom:RecycleCreateDeferredContext=3,7"));
}

TEST(LifecycleTest, OptionVariantsTakeOnlyEdges) {
  runtime::RuntimeOptions o;
  o.recycle_command_lists = false;  // T4 only
  o.abandon_before_destroy_idle_dc = false;
  o.destroy_cached_lists_before_dc = false;
  ExpectAllEdges(RunAndStep("smallcl", o));
  runtime::RuntimeOptions ic;
  ic.nested_execute_handle = runtime::NestedExecuteHandle::kIc;
  ExpectAllEdges(RunAndStep("scene", ic), /*locals=*/true);
}

struct MisuseCase {
  Misuse misuse;
  rules::Rule rule;
  Machine machine;
  State from;
  State to;
  const char* call;
};

class MisuseNonEdgeTest : public ::testing::TestWithParam<MisuseCase> {};

TEST_P(MisuseNonEdgeTest, TheMisuseIsTheRunsOnlyNonEdge) {
  const MisuseCase& c = GetParam();
  runtime::RuntimeOptions o;
  o.misuse = c.misuse;
  runtime::LifecycleSteps s = RunAndStep("smallcl", o);
  ASSERT_GT(s.non_edge_count, 0u);
  // R40/R44 misuse once; R45/R46 at every recycle (the first 64 are kept).
  ASSERT_EQ(s.non_edges.size(), std::min<uint64_t>(s.non_edge_count, 64));
  for (const LifecycleNonEdge& n : s.non_edges) {
    EXPECT_EQ(n.rule, c.rule) << Describe(n);
    EXPECT_EQ(n.machine, c.machine) << Describe(n);
    EXPECT_EQ(n.from, c.from) << Describe(n);
    EXPECT_EQ(n.to, c.to) << Describe(n);
    EXPECT_STREQ(n.call, c.call) << Describe(n);
    // It is no edge of the table, by any call.
    EXPECT_EQ(rules::FindEdge(n.machine, n.from, n.to, n.call), nullptr) << Describe(n);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, MisuseNonEdgeTest,
    ::testing::Values(MisuseCase{Misuse::kR40, rules::Rule::kR40, Machine::kCommandList,
                                 State::kRecycleDestroyed, State::kValid, "CommandListExecute"},
                      MisuseCase{Misuse::kR44, rules::Rule::kR44, Machine::kCommandList,
                                 State::kDestroyed, State::kDestroyed, "DestroyCommandList"},
                      MisuseCase{Misuse::kR45, rules::Rule::kR45, Machine::kCommandList,
                                 State::kRecycleDestroyed, State::kValid,
                                 "RecycleCreateCommandList"},
                      MisuseCase{Misuse::kR46, rules::Rule::kR46, Machine::kDeferredContext,
                                 State::kClosed, State::kFinishing, "RecycleCommandList"}),
    [](const ::testing::TestParamInfo<MisuseCase>& i) {
      return std::string(rules::RuleId(i.param.rule));
    });

// R41 breaks no single machine: T3 (V -> RD) is an edge; what R41 forbids is taking it after
// the owning deferred context (another machine) was destroyed.
TEST(LifecycleTest, MisuseR41TakesOnlyEdges) {
  runtime::RuntimeOptions o;
  o.misuse = Misuse::kR41;
  ExpectAllEdges(RunAndStep("smallcl", o));
}

}  // namespace
}  // namespace cltrace::testing
