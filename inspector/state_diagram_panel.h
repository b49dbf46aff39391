// The state-diagram panel: the ddi-spec §3 machine of the selected handle's kind (command list
// when nothing is selected) with every transition labelled by how often the trace took it,
// transitions the spec lacks in red, and the selected handle's state at the cursor ringed.
// The machine is the table of rules/state_machines.h; a table below lists each edge with its
// rule, call and count.
//
// Thread-safety: UI thread only.
//
// Example:
//   StateDiagramPanel diagram;
//   diagram.Draw("State machine", model, view);
#ifndef CLTRACE_INSPECTOR_STATE_DIAGRAM_PANEL_H_
#define CLTRACE_INSPECTOR_STATE_DIAGRAM_PANEL_H_

#include <string>
#include <utility>
#include <vector>

#include "imgui.h"
#include "inspector/model.h"
#include "inspector/state_machine.h"
#include "inspector/view.h"

namespace cltrace::inspector {

class StateDiagramPanel {
 public:
  void Draw(const char* title, const TraceModel& model, View& view);

  // Last frame: the kind shown, the highlighted state (kNone if none) and where each node of
  // the machine was drawn (screen coordinates, machine node order).
  RowKind kind() const { return kind_; }
  check::State highlighted() const { return highlighted_; }
  ImVec2 NodeCenter(check::State s) const;
  float node_radius() const { return radius_; }
  const Diagram& diagram() const { return diagram_; }

 private:
  // An edge's label: anchored next to its curve, on the side `normal` points to.
  struct Label {
    ImVec2 at;
    ImVec2 normal;
    std::string line1, line2;
    ImU32 color;
    const DiagramEdge* edge;
  };
  using Boxes = std::vector<std::pair<ImVec2, ImVec2>>;  // screen rectangles already taken

  // The steps of Draw: edges (returning their labels), nodes, labels (returning the hovered
  // edge), and the table of every edge with its rule.
  std::vector<Label> DrawEdges(ImDrawList* draw) const;
  void DrawNodes(ImDrawList* draw, bool have_selection) const;
  const DiagramEdge* PlaceLabels(ImDrawList* draw, std::vector<Label>& labels) const;
  // Where a label of `size` covers the least of `placed` (*p); true if it covers nothing.
  bool FindLabelSpot(const Label& l, ImVec2 size, const Boxes& placed, ImVec2* p) const;
  void DrawEdgeTable() const;

  const TraceModel* model_ = nullptr;
  RowKind kind_ = RowKind::kCommandList;
  bool built_ = false;
  Diagram diagram_;
  check::State highlighted_ = check::State::kNone;
  ImVec2 box0_, box1_;
  float radius_ = 16;
};

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_STATE_DIAGRAM_PANEL_H_
