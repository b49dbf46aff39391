// The three handle-validity state machines of ddi-spec §3 as diagrams: the table of
// rules/state_machines.h (states as nodes with a fixed layout, its edges as the legal ones) and
// what a trace did on top — how often it took each edge, and the edges it took that the table
// does not have (drawn red).
//
// Thread-safety: the layout is constant; BuildDiagram is a pure function.
//
// Example:
//   Diagram d = BuildDiagram(RowKind::kCommandList, model);
//   for (const DiagramEdge& e : d.edges) if (e.illegal) ...  // e.g. RD -> V (R45)
#ifndef CLTRACE_INSPECTOR_STATE_MACHINE_H_
#define CLTRACE_INSPECTOR_STATE_MACHINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "check/states.h"
#include "ddi/call_ids.h"
#include "inspector/model.h"
#include "rules/state_machines.h"

namespace cltrace::inspector {

// The §3 machine (rules/state_machines.h: states, abbreviations, edges and their rules) a row
// kind follows: command list, deferred context or local handle.
rules::Machine MachineOfKind(RowKind kind);

// Where a state's node sits in the drawing: [0, 1] x [0, 1], left to right = a handle's life.
// nullopt for a state the machine does not have.
struct NodePosition {
  float x, y;
};
std::optional<NodePosition> NodeLayout(rules::Machine machine, check::State state);

// An edge as the diagram shows it for one trace.
struct DiagramEdge {
  check::State from;
  check::State to;
  std::string id;                         // spec id ("T3"), empty for an edge the spec lacks
  rules::Rule rule = rules::Rule::kGaps;  // the rule guarding the edge (table edges only)
  std::string label;                      // "T3 RecycleDestroyCommandList x812"
  std::string calls;     // "RecycleDestroyCommandList"; illegal edges: every call seen on it
  uint64_t count = 0;    // times the trace took it (0: legal, never taken)
  bool illegal = false;  // the spec lacks it, or the checker reported an error on it
  bool self_loop() const { return from == to; }
};

struct Diagram {
  const rules::MachineTable* machine = nullptr;
  std::vector<DiagramEdge> edges;
};

// Merges the spec's edges with the model's transition counts for `kind`. Observed transitions
// matching a spec edge (states and call) add to it; others become illegal edges, one per
// (from, to) pair with their calls listed, ahead of the spec's edges. Self loops that are not state
// changes (command-list execution T2, DC-table calls while recording D2) come from the model's call
// counts.
Diagram BuildDiagram(RowKind kind, const TraceModel& model);

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_STATE_MACHINE_H_
