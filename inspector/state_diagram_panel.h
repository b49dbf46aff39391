// The state-diagram panel: the ddi-spec §3 machine of the selected handle's kind (command list
// when nothing is selected) with every transition labelled by how often the trace took it,
// transitions the spec lacks in red, and the selected handle's state at the cursor ringed.
// A table below lists each edge with its call and count.
//
// Thread-safety: UI thread only.
//
// Example:
//   StateDiagramPanel diagram;
//   diagram.Draw("State machine", model, view);
#ifndef CLTRACE_INSPECTOR_STATE_DIAGRAM_PANEL_H_
#define CLTRACE_INSPECTOR_STATE_DIAGRAM_PANEL_H_

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
