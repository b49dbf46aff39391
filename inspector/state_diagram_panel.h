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
#include "inspector/label_layout.h"
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

  // The edge labels of the last frame: where each was drawn (lines 0: not drawn, no room; 1:
  // the first line only; 2: both), the node and node-name rectangles they avoid, and the
  // diagram's box. Labels and obstacles are pairwise disjoint and inside the box.
  struct PlacedLabel {
    const DiagramEdge* edge = nullptr;
    LabelBox box;
    int lines = 0;
  };
  const std::vector<PlacedLabel>& placed_labels() const { return placed_; }
  const std::vector<LabelBox>& label_obstacles() const { return obstacles_; }
  LabelBox diagram_box() const { return {box0_.x, box0_.y, box1_.x, box1_.y}; }

 private:
  // An edge's label: anchored next to its curve, on the side `normal` points to.
  struct Label {
    ImVec2 at;
    ImVec2 normal;
    std::string line1, line2;
    ImU32 color;
    const DiagramEdge* edge;
  };

  // The steps of Draw: edges (returning their labels), nodes, labels (returning the hovered
  // edge), and the table of every edge with its rule.
  std::vector<Label> DrawEdges(ImDrawList* draw) const;
  void DrawNodes(ImDrawList* draw, bool have_selection) const;
  const DiagramEdge* PlaceLabels(ImDrawList* draw, std::vector<Label>& labels);
  void DrawEdgeTable() const;

  const TraceModel* model_ = nullptr;
  RowKind kind_ = RowKind::kCommandList;
  bool built_ = false;
  Diagram diagram_;
  check::State highlighted_ = check::State::kNone;
  ImVec2 box0_, box1_;
  float radius_ = 16;
  // The label layout, recomputed when the box or the diagram changes.
  bool layout_valid_ = false;
  LabelBox layout_bounds_;
  std::vector<PlacedLabel> placed_;
  std::vector<LabelBox> obstacles_;
};

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_STATE_DIAGRAM_PANEL_H_
