// The rule registry against ddi-spec's numbering and docs/rules.md, and the state-machine
// table's own consistency.
#include "rules/rules.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rules/finding.h"
#include "rules/state_machines.h"

namespace cltrace::rules {
namespace {

std::string ReadDoc() {
  std::ifstream in("docs/rules.md");  // tests run from the source root
  std::stringstream doc;
  doc << in.rdbuf();
  return doc.str();
}

TEST(RulesTest, RegistryCoversR1ToR80PlusR5aAndR66aInOrder) {
  for (int n = 1; n <= 80; ++n) EXPECT_NE(FindRule(absl::StrCat("R", n)), nullptr) << n;
  EXPECT_EQ(FindRule("R5a"), &Info(Rule::kR5a));
  EXPECT_EQ(FindRule("R66a"), &Info(Rule::kR66a));
  EXPECT_EQ(FindRule("R81"), nullptr);
  EXPECT_EQ(FindRule("GAPS"), nullptr);  // the checker's pseudo-rule is no rule of the spec
  EXPECT_EQ(Rules().size(), 82u);
  EXPECT_STREQ(RuleId(Rule::kR5a), "R5a");
  EXPECT_STREQ(RuleId(Rule::kGaps), "GAPS");
  for (size_t i = 0; i < Rules().size(); ++i) EXPECT_EQ(RuleIndex(Rules()[i].rule), i);
  // Document order: the enum compares like the numbers.
  EXPECT_LT(Rule::kR5, Rule::kR5a);
  EXPECT_LT(Rule::kR5a, Rule::kR6);
  EXPECT_LT(Rule::kR10, Rule::kR12);
}

TEST(RulesTest, DocsHaveOneSectionPerRuleAndNoOther) {
  const std::string doc = ReadDoc();
  ASSERT_FALSE(doc.empty()) << "docs/rules.md missing";
  std::set<std::string> documented;
  const std::regex heading(R"(\n### (R\d+a?) )");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), heading);
       it != std::sregex_iterator(); ++it) {
    EXPECT_TRUE(documented.insert((*it)[1]).second) << (*it)[1] << " documented twice";
  }
  std::set<std::string> registered;
  for (const RuleInfo& r : Rules()) registered.insert(r.id);
  EXPECT_EQ(documented, registered);
}

TEST(RulesTest, FindingNamesItsRule) {
  Finding f;
  f.rule = Rule::kR66a;
  EXPECT_STREQ(f.id(), "R66a");
  EXPECT_EQ(f.info().enforcement, Enforcement::kReplay);
}

TEST(RulesTest, FindingLineOfTheLiveProducers) {
  Finding f{
      .rule = Rule::kR40, .seq = 17, .handle = 0x7f00a0, .message = "Execute of a destroyed list"};
  EXPECT_EQ(FormatFindingLine(f, "CommandListExecute", LineHandle::kPrint),
            "R40 seq=17 fn=CommandListExecute handle=0x7f00a0 Execute of a destroyed list");
  EXPECT_EQ(FormatFindingLine(f, "CommandListExecute", LineHandle::kOmit),
            "R40 seq=17 fn=CommandListExecute Execute of a destroyed list");
  f.handle = 0;
  f.rule = Rule::kR5a;
  EXPECT_EQ(FormatFindingLine(f, "Flush", LineHandle::kPrint),
            "R5a seq=17 fn=Flush handle=- Execute of a destroyed list");
}

TEST(StateMachinesTest, EdgesJoinStatesOfTheirMachine) {
  for (Machine id : {Machine::kCommandList, Machine::kDeferredContext, Machine::kLocal}) {
    const MachineTable& m = MachineOf(id);
    EXPECT_EQ(m.machine, id);
    EXPECT_EQ(MachineOfRole(m.role), &m);
    EXPECT_EQ(m.states.front(), State::kNone) << m.title;
    auto has = [&](State s) {
      for (State x : m.states)
        if (x == s) return true;
      return false;
    };
    for (const Edge& e : m.edges) {
      EXPECT_TRUE(has(e.from)) << e.id;
      EXPECT_TRUE(has(e.to)) << e.id;
      EXPECT_LT(RuleIndex(e.rule), kRuleCount) << e.id;
    }
    for (State s : m.states) EXPECT_FALSE(Abbreviation(m, s).empty()) << StateName(s);
  }
  EXPECT_EQ(MachineOfRole(HandleRole::kObject), nullptr);
}

TEST(StateMachinesTest, TheSpecsForbiddenShortcutsAreNoEdges) {
  // §3.1 "Not allowed": RD -> V directly (R45), V -> RC, Execute from RD/RC.
  EXPECT_EQ(FindEdge(Machine::kCommandList, State::kRecycleDestroyed, State::kValid,
                     "RecycleCreateCommandList"),
            nullptr);
  EXPECT_EQ(FindEdge(Machine::kCommandList, State::kValid, State::kRecycled, "RecycleCommandList"),
            nullptr);
  const Edge* t5 = FindEdge(Machine::kCommandList, State::kRecycleDestroyed, State::kRecycled,
                            "RecycleCommandList");
  ASSERT_NE(t5, nullptr);
  EXPECT_STREQ(t5->id, "T5");
  EXPECT_EQ(t5->rule, Rule::kR42);
  // §3.2: RecycleCreateDeferredContext never leaves Rec (R48).
  EXPECT_EQ(FindEdge(Machine::kDeferredContext, State::kRecording, State::kClosed,
                     "RecycleCreateDeferredContext"),
            nullptr);
  // Any-call edges take any call; named edges only theirs.
  EXPECT_NE(FindEdge(Machine::kLocal, State::kNone, State::kOpen, "CreateResource"), nullptr);
  EXPECT_EQ(FindEdge(Machine::kCommandList, State::kValid, State::kDestroyed, ""), nullptr);
}

TEST(StateMachinesTest, StateTableNamesAndAbbreviations) {
  EXPECT_EQ(StateName(State::kRecycleDestroyed), "RecycleDestroyed");
  EXPECT_EQ(Abbreviation(MachineOf(Machine::kCommandList), State::kRecycleDestroyed), "RD");
  EXPECT_EQ(Abbreviation(MachineOf(Machine::kCommandList), State::kNone), "U");
  EXPECT_EQ(Abbreviation(MachineOf(Machine::kLocal), State::kNone), "N");
  EXPECT_EQ(RoleName(HandleRole::kLocal), "local handle");
}

}  // namespace
}  // namespace cltrace::rules
