#include "rules/state_machines.h"

namespace cltrace::rules {
namespace {

using S = State;

// §3.1. T7e appears three times: the failed recycle-create, then the retry or the destroy the
// spec leaves silent (a runtime-model setting chooses; the checker flags neither).
constexpr State kClStates[] = {
    S::kNone,      S::kValid,       S::kRecycleDestroyed, S::kRecycled, S::kRecycleCreateFailed,
    S::kDestroyed, S::kCreateFailed};
constexpr Edge kClEdges[] = {
    {"T1", S::kNone, S::kValid, {"CreateCommandList"}, "CreateCommandList", Rule::kR46},
    {"T1e", S::kValid, S::kCreateFailed, {nullptr}, "SetErrorCb", Rule::kR21},
    {"T2", S::kValid, S::kValid, {"CommandListExecute"}, "CommandListExecute", Rule::kR40},
    {"T3",
     S::kValid,
     S::kRecycleDestroyed,
     {"RecycleDestroyCommandList"},
     "RecycleDestroyCommandList",
     Rule::kR41},
    {"T4", S::kValid, S::kDestroyed, {"DestroyCommandList"}, "DestroyCommandList", Rule::kR44},
    {"T5",
     S::kRecycleDestroyed,
     S::kRecycled,
     {"RecycleCommandList"},
     "RecycleCommandList",
     Rule::kR42},
    {"T6",
     S::kRecycleDestroyed,
     S::kDestroyed,
     {"DestroyCommandList"},
     "DestroyCommandList",
     Rule::kR44},
    {"T7",
     S::kRecycled,
     S::kValid,
     {"RecycleCreateCommandList"},
     "RecycleCreateCommandList",
     Rule::kR43},
    {"T7e",
     S::kRecycled,
     S::kRecycleCreateFailed,
     {"RecycleCreateCommandList"},
     "RecycleCreateCommandList E_OUTOFMEMORY",
     Rule::kR22},
    {"T7e",
     S::kRecycleCreateFailed,
     S::kValid,
     {"RecycleCreateCommandList"},
     "RecycleCreateCommandList (retry)",
     Rule::kR43},
    {"T7e",
     S::kRecycleCreateFailed,
     S::kDestroyed,
     {"DestroyCommandList"},
     "DestroyCommandList",
     Rule::kR44},
    {"T8", S::kRecycled, S::kDestroyed, {"DestroyCommandList"}, "DestroyCommandList", Rule::kR44},
};

// §3.2. D3 (Rec -> Rec: the runtime's QueryEnd/unmap at the start of Finish) and D6/D8 (the
// closing and unbinding calls in Clo/Abd) are not state changes; D2 stands for all of them.
constexpr State kDcStates[] = {S::kNone,          S::kRecording, S::kFinishing,
                               S::kFinishFailed,  S::kClosed,    S::kAbandoned,
                               S::kRecycleFailed, S::kDestroyed, S::kCreateFailed};
constexpr const char* kCreateCl = "CreateCommandList";
constexpr const char* kRecycleCreateCl = "RecycleCreateCommandList";
constexpr const char* kRecycleCreateDc = "RecycleCreateDeferredContext";
constexpr Edge kDcEdges[] = {
    {"D1", S::kNone, S::kRecording, {"CreateDeferredContext"}, "CreateDeferredContext", Rule::kR47},
    {"D1e", S::kRecording, S::kCreateFailed, {nullptr}, "SetErrorCb", Rule::kR48},
    {"D2", S::kRecording, S::kRecording, {nullptr}, "DC-table DDIs", Rule::kR53},
    {"D4", S::kRecording, S::kFinishing, {"RecycleCommandList"}, "RecycleCommandList", Rule::kR42},
    {"D5",
     S::kRecording,
     S::kClosed,
     {kCreateCl, kRecycleCreateCl},
     "(Recycle)CreateCommandList",
     Rule::kR52},
    {"D5",
     S::kFinishing,
     S::kClosed,
     {kCreateCl, kRecycleCreateCl},
     "(Recycle)CreateCommandList",
     Rule::kR52},
    {"D5e",
     S::kRecording,
     S::kFinishFailed,
     {kRecycleCreateCl},
     "RecycleCreateCommandList E_OUTOFMEMORY",
     Rule::kR48},
    {"D5e",
     S::kFinishing,
     S::kFinishFailed,
     {kRecycleCreateCl},
     "RecycleCreateCommandList E_OUTOFMEMORY",
     Rule::kR48},
    {"D5e", S::kClosed, S::kFinishFailed, {nullptr}, "SetErrorCb", Rule::kR48},
    {"D5e",
     S::kFinishFailed,
     S::kAbandoned,
     {"AbandonCommandList"},
     "AbandonCommandList",
     Rule::kR48},
    {"D5e", S::kFinishFailed, S::kRecording, {kRecycleCreateDc}, kRecycleCreateDc, Rule::kR48},
    {"D5e", S::kFinishFailed, S::kDestroyed, {"DestroyDevice"}, "DestroyDevice", Rule::kR48},
    {"D7", S::kRecording, S::kAbandoned, {"AbandonCommandList"}, "AbandonCommandList", Rule::kR51},
    {"D9", S::kClosed, S::kRecording, {kRecycleCreateDc}, kRecycleCreateDc, Rule::kR48},
    {"D9", S::kAbandoned, S::kRecording, {kRecycleCreateDc}, kRecycleCreateDc, Rule::kR48},
    {"D9e",
     S::kClosed,
     S::kRecycleFailed,
     {kRecycleCreateDc},
     "RecycleCreateDeferredContext E_OUTOFMEMORY",
     Rule::kR23},
    {"D9e",
     S::kAbandoned,
     S::kRecycleFailed,
     {kRecycleCreateDc},
     "RecycleCreateDeferredContext E_OUTOFMEMORY",
     Rule::kR23},
    {"D9e", S::kRecycleFailed, S::kDestroyed, {"DestroyDevice"}, "DestroyDevice", Rule::kR48},
    {"D10", S::kClosed, S::kDestroyed, {"DestroyDevice"}, "DestroyDevice", Rule::kR48},
    {"D10", S::kAbandoned, S::kDestroyed, {"DestroyDevice"}, "DestroyDevice", Rule::kR48},
    {"D11", S::kRecording, S::kDestroyed, {"DestroyDevice"}, "DestroyDevice", Rule::kR48},
};

// §3.3. The checker starts a new lifetime at every open, so L4 (C -> O) shows as N -> O.
constexpr State kLocalStates[] = {S::kNone, S::kOpen, S::kClosedLocal};
constexpr Edge kLocalEdges[] = {
    {"L1", S::kNone, S::kOpen, {nullptr}, "DC::pfnCreate* (open)", Rule::kR58},
    {"L4", S::kClosedLocal, S::kOpen, {nullptr}, "DC::pfnCreate* (reopen)", Rule::kR58},
    {"L3", S::kOpen, S::kClosedLocal, {nullptr}, "DC::pfnDestroy* (close)", Rule::kR55},
};

const MachineTable kMachines[] = {
    {Machine::kCommandList, HandleRole::kCommandList, "Command list (spec 3.1)", kClStates,
     kClEdges, "unallocated", "U"},
    {Machine::kDeferredContext, HandleRole::kDeferredContext, "Deferred context (spec 3.2)",
     kDcStates, kDcEdges, "unallocated", "U"},
    {Machine::kLocal, HandleRole::kLocal, "Context-local handle (spec 3.3)", kLocalStates,
     kLocalEdges, "none", "N"},
};

}  // namespace

absl::string_view RoleName(HandleRole r) {
  switch (r) {
    case HandleRole::kImmediateContext:
      return "immediate context";
    case HandleRole::kDeferredContext:
      return "deferred context";
    case HandleRole::kCommandList:
      return "command list";
    case HandleRole::kObject:
      return "object";
    case HandleRole::kLocal:
      return "local handle";
  }
  return "?";
}

const MachineTable& MachineOf(Machine m) { return kMachines[static_cast<size_t>(m)]; }

const MachineTable* MachineOfRole(HandleRole role) {
  for (const MachineTable& m : kMachines)
    if (m.role == role) return &m;
  return nullptr;
}

absl::string_view Abbreviation(const MachineTable& m, State s) {
  return s == State::kNone ? m.none_abbreviation : InfoOf(s).abbreviation;
}

namespace {

bool Names(const Edge& e, absl::string_view call) {
  for (const char* c : e.calls)
    if (c != nullptr && call == c) return true;
  return false;
}

}  // namespace

bool NamesCall(const MachineTable& m, absl::string_view call) {
  for (const Edge& e : m.edges)
    if (Names(e, call)) return true;
  return false;
}

bool EdgeTakes(const MachineTable& m, const Edge& e, absl::string_view call) {
  return e.calls[0] != nullptr ? Names(e, call) : !NamesCall(m, call);
}

const Edge* FindEdge(Machine m, State from, State to, absl::string_view call) {
  const MachineTable& t = MachineOf(m);
  for (const Edge& e : t.edges)
    if (e.from == from && e.to == to && EdgeTakes(t, e, call)) return &e;
  return nullptr;
}

}  // namespace cltrace::rules
