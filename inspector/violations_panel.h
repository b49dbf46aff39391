// The violations panel: the contract checker's errors and warnings (ddi-spec §5 rules) in
// seq order; selecting one moves the cursor to its call, selects its handle's row and the
// call in the calls list.
//
// Thread-safety: UI thread only.
//
// Example:
//   ViolationsPanel violations;
//   violations.Draw("Findings", model, view);
#ifndef CLTRACE_INSPECTOR_VIOLATIONS_PANEL_H_
#define CLTRACE_INSPECTOR_VIOLATIONS_PANEL_H_

#include "inspector/model.h"
#include "inspector/view.h"

namespace cltrace::inspector {

// Moves the view to finding `index` of the model (cursor, call, row, zoom position).
void JumpToViolation(const TraceModel& model, View& view, int index);

class ViolationsPanel {
 public:
  // Draws the table inside the current window (the app puts it in a tab).
  void DrawContents(const TraceModel& model, View& view);
};

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_VIOLATIONS_PANEL_H_
