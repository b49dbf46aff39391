#include "inspector/state_machine.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ddi/catalog.h"

namespace cltrace::inspector {

using check::HandleRole;
using check::State;

namespace {

struct Placed {
  State state;
  NodePosition at;
};

// §3.1. Left to right: unallocated, valid, the recycle loop (RD above, RC below), destroyed.
constexpr Placed kCommandListLayout[] = {
    {State::kNone, {0.02f, 0.45f}},
    {State::kValid, {0.30f, 0.45f}},
    {State::kRecycleDestroyed, {0.66f, 0.04f}},
    {State::kRecycled, {0.66f, 0.88f}},
    {State::kRecycleCreateFailed, {0.98f, 0.88f}},
    {State::kDestroyed, {0.98f, 0.45f}},
    {State::kCreateFailed, {0.02f, 0.95f}},
};
// §3.2. The recording loop Rec -> (Fin) -> Clo/Abd -> Rec across the middle.
constexpr Placed kDeferredContextLayout[] = {
    {State::kNone, {0.02f, 0.45f}},          {State::kRecording, {0.25f, 0.45f}},
    {State::kFinishing, {0.47f, 0.04f}},     {State::kFinishFailed, {0.82f, 0.04f}},
    {State::kClosed, {0.70f, 0.45f}},        {State::kAbandoned, {0.47f, 0.92f}},
    {State::kRecycleFailed, {0.98f, 0.92f}}, {State::kDestroyed, {0.98f, 0.45f}},
    {State::kCreateFailed, {0.02f, 0.92f}},
};
// §3.3.
constexpr Placed kLocalLayout[] = {
    {State::kNone, {0.08f, 0.45f}},
    {State::kOpen, {0.50f, 0.45f}},
    {State::kClosedLocal, {0.92f, 0.45f}},
};

bool EdgeTakes(const rules::MachineTable& m, const rules::Edge& e, format::CallId call) {
  const format::CallInfo* ci = format::GetCall(call);
  return rules::EdgeTakes(m, e, ci ? absl::string_view(ci->name) : absl::string_view());
}

std::string CallName(format::CallId call, bool dc_table) {
  const format::CallInfo* ci = format::GetCall(call);
  return absl::StrCat(dc_table ? "DC::" : "", ci ? ci->name : "?");
}

}  // namespace

rules::Machine MachineOfKind(RowKind kind) {
  switch (kind) {
    case RowKind::kCommandList:
      return rules::Machine::kCommandList;
    case RowKind::kDeferredContext:
      return rules::Machine::kDeferredContext;
    case RowKind::kLocal:
      return rules::Machine::kLocal;
  }
  return rules::Machine::kCommandList;
}

std::optional<NodePosition> NodeLayout(rules::Machine machine, State state) {
  absl::Span<const Placed> layout = kCommandListLayout;
  if (machine == rules::Machine::kDeferredContext) layout = kDeferredContextLayout;
  if (machine == rules::Machine::kLocal) layout = kLocalLayout;
  for (const Placed& p : layout)
    if (p.state == state) return p.at;
  return std::nullopt;
}

Diagram BuildDiagram(RowKind kind, const TraceModel& model) {
  Diagram d;
  d.machine = &rules::MachineOf(MachineOfKind(kind));
  const rules::MachineTable& m = *d.machine;
  // One diagram edge per spec (from, to) pair: T7e appears once per pair even though the
  // table lists it in one row.
  std::vector<uint64_t> counts(m.edges.size(), 0);
  std::vector<bool> flagged(m.edges.size(), false);
  struct Extra {
    uint64_t count = 0;
    std::vector<std::string> calls;
  };
  std::map<std::pair<State, State>, Extra> extra;
  for (const TransitionCount& t : model.transitions()) {
    if (t.role != m.role) continue;
    bool matched = false;
    for (size_t i = 0; i < m.edges.size(); ++i) {
      const rules::Edge& e = m.edges[i];
      if (e.from == t.from && e.to == t.to && EdgeTakes(m, e, t.call)) {
        counts[i] += t.count;
        flagged[i] = flagged[i] || t.flagged;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    Extra& x = extra[{t.from, t.to}];
    x.count += t.count;
    std::string name = CallName(t.call, t.dc_table);
    if (std::find(x.calls.begin(), x.calls.end(), name) == x.calls.end()) x.calls.push_back(name);
  }
  for (size_t i = 0; i < m.edges.size(); ++i) {
    const rules::Edge& e = m.edges[i];
    if (e.from == e.to) {
      // Self loops are not state changes; count the calls instead.
      if (kind == RowKind::kCommandList) counts[i] = model.ic_executes() + model.nested_executes();
      if (kind == RowKind::kDeferredContext) counts[i] = model.dc_table_calls();
    }
    DiagramEdge de;
    de.from = e.from;
    de.to = e.to;
    de.id = e.id;
    de.rule = e.rule;
    de.count = counts[i];
    de.calls = e.label;
    de.label = absl::StrCat(e.id, " ", e.label, counts[i] ? absl::StrCat(" x", counts[i]) : "");
    if (flagged[i]) absl::StrAppend(&de.label, " (checker error)");
    d.edges.push_back(std::move(de));
  }
  for (auto& [key, x] : extra) {
    DiagramEdge de;
    de.from = key.first;
    de.to = key.second;
    de.count = x.count;
    de.illegal = true;
    de.calls = absl::StrJoin(x.calls, ", ");
    de.label = absl::StrCat(de.calls, " x", x.count, " (not in the spec)");
    d.edges.insert(d.edges.begin(), std::move(de));
  }
  return d;
}

}  // namespace cltrace::inspector
