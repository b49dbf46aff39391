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

// §3.1. Left to right: unallocated, valid, the recycle loop (RD above, RC below), destroyed.
const Machine& CommandListMachine() {
  static const Machine* m = new Machine{
      HandleRole::kCommandList,
      "Command list (spec 3.1)",
      {
          {State::kNone, "U", 0.02f, 0.45f},
          {State::kValid, "V", 0.30f, 0.45f},
          {State::kRecycleDestroyed, "RD", 0.66f, 0.04f},
          {State::kRecycled, "RC", 0.66f, 0.88f},
          {State::kRecycleCreateFailed, "RC!", 0.98f, 0.88f},
          {State::kDestroyed, "X", 0.98f, 0.45f},
          {State::kCreateFailed, "X'", 0.02f, 0.95f},
      },
      {
          {"T1", State::kNone, State::kValid, {"CreateCommandList"}, "CreateCommandList"},
          {"T1e", State::kValid, State::kCreateFailed, {}, "SetErrorCb"},
          {"T2", State::kValid, State::kValid, {"CommandListExecute"}, "CommandListExecute"},
          {"T3",
           State::kValid,
           State::kRecycleDestroyed,
           {"RecycleDestroyCommandList"},
           "RecycleDestroyCommandList"},
          {"T4", State::kValid, State::kDestroyed, {"DestroyCommandList"}, "DestroyCommandList"},
          {"T5",
           State::kRecycleDestroyed,
           State::kRecycled,
           {"RecycleCommandList"},
           "RecycleCommandList"},
          {"T6",
           State::kRecycleDestroyed,
           State::kDestroyed,
           {"DestroyCommandList"},
           "DestroyCommandList"},
          {"T7",
           State::kRecycled,
           State::kValid,
           {"RecycleCreateCommandList"},
           "RecycleCreateCommandList"},
          {"T7e",
           State::kRecycled,
           State::kRecycleCreateFailed,
           {"RecycleCreateCommandList"},
           "RecycleCreateCommandList E_OUTOFMEMORY"},
          {"T7e",
           State::kRecycleCreateFailed,
           State::kValid,
           {"RecycleCreateCommandList"},
           "RecycleCreateCommandList (retry)"},
          {"T7e",
           State::kRecycleCreateFailed,
           State::kDestroyed,
           {"DestroyCommandList"},
           "DestroyCommandList"},
          {"T8", State::kRecycled, State::kDestroyed, {"DestroyCommandList"}, "DestroyCommandList"},
      }};
  return *m;
}

// §3.2. The recording loop Rec -> (Fin) -> Clo/Abd -> Rec across the middle.
const Machine& DeferredContextMachine() {
  static const Machine* m = new Machine{
      HandleRole::kDeferredContext,
      "Deferred context (spec 3.2)",
      {
          {State::kNone, "U", 0.02f, 0.45f},
          {State::kRecording, "Rec", 0.25f, 0.45f},
          {State::kFinishing, "Fin", 0.47f, 0.04f},
          {State::kFinishFailed, "Fin!", 0.82f, 0.04f},
          {State::kClosed, "Clo", 0.70f, 0.45f},
          {State::kAbandoned, "Abd", 0.47f, 0.92f},
          {State::kRecycleFailed, "Rec!", 0.98f, 0.92f},
          {State::kDestroyed, "X", 0.98f, 0.45f},
          {State::kCreateFailed, "X'", 0.02f, 0.92f},
      },
      {
          {"D1",
           State::kNone,
           State::kRecording,
           {"CreateDeferredContext"},
           "CreateDeferredContext"},
          {"D1e", State::kRecording, State::kCreateFailed, {}, "SetErrorCb"},
          {"D2", State::kRecording, State::kRecording, {}, "DC-table DDIs"},
          {"D4",
           State::kRecording,
           State::kFinishing,
           {"RecycleCommandList"},
           "RecycleCommandList"},
          {"D5",
           State::kRecording,
           State::kClosed,
           {"CreateCommandList", "RecycleCreateCommandList"},
           "(Recycle)CreateCommandList"},
          {"D5",
           State::kFinishing,
           State::kClosed,
           {"CreateCommandList", "RecycleCreateCommandList"},
           "(Recycle)CreateCommandList"},
          {"D5e",
           State::kRecording,
           State::kFinishFailed,
           {"RecycleCreateCommandList"},
           "RecycleCreateCommandList E_OUTOFMEMORY"},
          {"D5e",
           State::kFinishing,
           State::kFinishFailed,
           {"RecycleCreateCommandList"},
           "RecycleCreateCommandList E_OUTOFMEMORY"},
          {"D5e", State::kClosed, State::kFinishFailed, {}, "SetErrorCb"},
          {"D5e",
           State::kFinishFailed,
           State::kAbandoned,
           {"AbandonCommandList"},
           "AbandonCommandList"},
          {"D5e",
           State::kFinishFailed,
           State::kRecording,
           {"RecycleCreateDeferredContext"},
           "RecycleCreateDeferredContext"},
          {"D5e", State::kFinishFailed, State::kDestroyed, {"DestroyDevice"}, "DestroyDevice"},
          {"D7",
           State::kRecording,
           State::kAbandoned,
           {"AbandonCommandList"},
           "AbandonCommandList"},
          {"D9",
           State::kClosed,
           State::kRecording,
           {"RecycleCreateDeferredContext"},
           "RecycleCreateDeferredContext"},
          {"D9",
           State::kAbandoned,
           State::kRecording,
           {"RecycleCreateDeferredContext"},
           "RecycleCreateDeferredContext"},
          {"D9e",
           State::kClosed,
           State::kRecycleFailed,
           {"RecycleCreateDeferredContext"},
           "RecycleCreateDeferredContext E_OUTOFMEMORY"},
          {"D9e",
           State::kAbandoned,
           State::kRecycleFailed,
           {"RecycleCreateDeferredContext"},
           "RecycleCreateDeferredContext E_OUTOFMEMORY"},
          {"D9e", State::kRecycleFailed, State::kDestroyed, {"DestroyDevice"}, "DestroyDevice"},
          {"D10", State::kClosed, State::kDestroyed, {"DestroyDevice"}, "DestroyDevice"},
          {"D10", State::kAbandoned, State::kDestroyed, {"DestroyDevice"}, "DestroyDevice"},
          {"D11", State::kRecording, State::kDestroyed, {"DestroyDevice"}, "DestroyDevice"},
      }};
  return *m;
}

// §3.3. The checker starts a new lifetime at every open, so L4 (C -> O) shows as N -> O.
const Machine& LocalMachine() {
  static const Machine* m =
      new Machine{HandleRole::kLocal,
                  "Context-local handle (spec 3.3)",
                  {
                      {State::kNone, "N", 0.08f, 0.45f},
                      {State::kOpen, "O", 0.50f, 0.45f},
                      {State::kClosedLocal, "C", 0.92f, 0.45f},
                  },
                  {
                      {"L1", State::kNone, State::kOpen, {}, "DC::pfnCreate* (open)"},
                      {"L4", State::kClosedLocal, State::kOpen, {}, "DC::pfnCreate* (reopen)"},
                      {"L3", State::kOpen, State::kClosedLocal, {}, "DC::pfnDestroy* (close)"},
                  }};
  return *m;
}

bool EdgeTakes(const MachineEdge& e, format::CallId call) {
  if (e.calls.empty()) return true;
  const format::CallInfo* ci = format::GetCall(call);
  if (ci == nullptr) return false;
  for (const char* c : e.calls)
    if (absl::string_view(c) == ci->name) return true;
  return false;
}

std::string CallName(format::CallId call, bool dc_table) {
  const format::CallInfo* ci = format::GetCall(call);
  return absl::StrCat(dc_table ? "DC::" : "", ci ? ci->name : "?");
}

}  // namespace

const Machine& MachineFor(RowKind kind) {
  switch (kind) {
    case RowKind::kCommandList:
      return CommandListMachine();
    case RowKind::kDeferredContext:
      return DeferredContextMachine();
    case RowKind::kLocal:
      return LocalMachine();
  }
  return CommandListMachine();
}

bool IsLegal(RowKind kind, State from, State to, format::CallId call) {
  for (const MachineEdge& e : MachineFor(kind).edges)
    if (e.from == from && e.to == to && EdgeTakes(e, call)) return true;
  return false;
}

Diagram BuildDiagram(RowKind kind, const TraceModel& model) {
  Diagram d;
  d.machine = &MachineFor(kind);
  const Machine& m = *d.machine;
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
      const MachineEdge& e = m.edges[i];
      if (e.from == t.from && e.to == t.to && EdgeTakes(e, t.call)) {
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
    const MachineEdge& e = m.edges[i];
    if (e.from == e.to) {
      // Self loops are not state changes; count the calls instead.
      if (kind == RowKind::kCommandList) counts[i] = model.ic_executes() + model.nested_executes();
      if (kind == RowKind::kDeferredContext) counts[i] = model.dc_table_calls();
    }
    DiagramEdge de;
    de.from = e.from;
    de.to = e.to;
    de.id = e.id;
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
