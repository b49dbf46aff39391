// The three handle-validity state machines of ddi-spec §3 as diagrams: states as nodes with a
// fixed layout, the spec's transitions as legal edges, and what a trace did on top — how often
// it took each edge, and the edges it took that the spec does not have (drawn red).
//
// Thread-safety: the machine tables are constant; BuildDiagram is a pure function.
//
// Example:
//   Diagram d = BuildDiagram(RowKind::kCommandList, model);
//   for (const DiagramEdge& e : d.edges) if (e.illegal) ...  // e.g. RD -> V (R45)
#ifndef CLTRACE_INSPECTOR_STATE_MACHINE_H_
#define CLTRACE_INSPECTOR_STATE_MACHINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "check/states.h"
#include "ddi/call_ids.h"
#include "inspector/model.h"

namespace cltrace::inspector {

struct MachineNode {
  check::State state;
  const char* label;  // short spec name: "V", "RD", "Rec"
  float x, y;         // layout in [0, 1] x [0, 1], left to right = a handle's life
};

// One transition of the spec's tables (§3.1 T*, §3.2 D*, §3.3 L*).
struct MachineEdge {
  const char* id;  // "T3"
  check::State from;
  check::State to;
  // The calls that take it (catalog names, DC-table calls included), empty = any call
  // (e.g. SetErrorCb of a failed create, or every DC::pfnCreate* of a local open).
  std::vector<const char*> calls;
  const char* label;  // what to print on the edge when the trace never took it
};

struct Machine {
  check::HandleRole role;
  const char* title;  // "Command list (§3.1)"
  std::vector<MachineNode> nodes;
  std::vector<MachineEdge> edges;
};

// The machine of a row kind (command list, deferred context, local handle).
const Machine& MachineFor(RowKind kind);

// An edge as the diagram shows it for one trace.
struct DiagramEdge {
  check::State from;
  check::State to;
  std::string id;        // spec id ("T3"), empty for an edge the spec lacks
  std::string label;     // "T3 RecycleDestroyCommandList x812"
  std::string calls;     // "RecycleDestroyCommandList"; illegal edges: every call seen on it
  uint64_t count = 0;    // times the trace took it (0: legal, never taken)
  bool illegal = false;  // the spec lacks it, or the checker reported an error on it
  bool self_loop() const { return from == to; }
};

struct Diagram {
  const Machine* machine = nullptr;
  std::vector<DiagramEdge> edges;
};

// Merges the spec's edges with the model's transition counts for `kind`. Observed transitions
// matching a spec edge (states and call) add to it; others become illegal edges, one per
// (from, to) pair with their calls listed, ahead of the spec's edges. Self loops that are not state
// changes (command-list execution T2, DC-table calls while recording D2) come from the model's call
// counts.
Diagram BuildDiagram(RowKind kind, const TraceModel& model);

// True if the spec has a transition from `from` to `to` through `call` for `kind`.
bool IsLegal(RowKind kind, check::State from, check::State to, format::CallId call);

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_STATE_MACHINE_H_
