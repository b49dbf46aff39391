// The calls panel: every call of the trace in a virtualized table (ImGuiListClipper), filtered
// by function, thread, handle and text; selecting a call moves the cursor there. The call
// details panel shows the selected call: arguments, return value, thread, entry/exit seq, its
// parent and nested callbacks, the state changes it caused and the checker's findings on it.
//
// Thread-safety: UI thread only.
//
// Example:
//   CallsPanel calls;
//   CallDetailsPanel details;
//   calls.Draw("Calls", model, view);
//   details.Draw("Call", model, view);
#ifndef CLTRACE_INSPECTOR_CALLS_PANEL_H_
#define CLTRACE_INSPECTOR_CALLS_PANEL_H_

#include <string>
#include <vector>

#include "imgui.h"
#include "inspector/call_filter.h"
#include "inspector/model.h"
#include "inspector/view.h"

namespace cltrace::inspector {

class CallsPanel {
 public:
  void Draw(const char* title, const TraceModel& model, View& view);

  // Filter inputs (what the widgets edit; tests may set them directly).
  int function = 0;  // index into functions(): 0 = any
  int thread = 0;    // index into threads(): 0 = any
  char handle[64] = "";
  char text[128] = "";
  // Filter work per frame: events scanned per step (the time budget is checked between
  // steps; a handle or text filter decodes each call's arguments from the file, about a
  // microsecond a call), and a time budget in milliseconds. Set synchronous for
  // tests/screenshots: the whole scan happens in the frame that needs it.
  size_t step_events = 1 << 12;
  double step_ms = 6.0;
  bool synchronous = false;

  // A call drawn with the "first difference" color (the side-by-side view), -1 for none.
  int64_t highlight_event = -1;

  // The selected calls, in list order: the listed calls from view.range_anchor to
  // view.selected_event (both included), or the selected call alone. Complete once the
  // filter's scan is done.
  std::vector<int64_t> SelectedCalls(const View& view) const;

  const CallFilter& filter() const { return filter_; }
  // Screen y of the middle of list row `i` in the last frame (rows drawn then only), for
  // tests that click a row; -1 if it was not drawn.
  float RowCenterY(size_t i) const;
  // Screen position of the "clear" button's middle in the last frame (tests click it).
  ImVec2 clear_button_center() const { return clear_center_; }
  // (CallId, label) of the function combo; [0] is "any function".
  const std::vector<std::pair<format::CallId, std::string>>& functions() const {
    return functions_;
  }

 private:
  void Prepare(const TraceModel& model);
  CallFilterSpec SpecFromInputs(const TraceModel& model) const;
  // Parts of Draw: the filter widgets, this frame's share of the filter work and its status
  // line, the list of matching calls and one row of it (event `ev`).
  void DrawFilters(View& view);
  void StepFilter(const TraceModel& model, View& view);
  void DrawTable(const TraceModel& model, View& view);
  void DrawRow(const TraceModel& model, View& view, size_t ev);

  const TraceModel* model_ = nullptr;
  std::vector<std::pair<format::CallId, std::string>> functions_;
  std::vector<std::pair<int64_t, std::string>> threads_;
  CallFilter filter_;
  size_t drawn_first_ = 0, drawn_count_ = 0;
  float drawn_y0_ = 0, drawn_row_h_ = 0;
  int64_t range_lo_ = -1, range_hi_ = -1;  // the selected range of the last frame
  ImVec2 clear_center_;
};

class CallDetailsPanel {
 public:
  void Draw(const char* title, const TraceModel& model, View& view);
  // Set when its "copy as JSONL" button was pressed in the last frame (the app copies).
  bool copy_requested = false;
  // Shown next to the button (what the last copy did).
  std::string copy_message;
};

// Picks the row a click on call `event` should select: a handle of the call that has a row,
// command lists and deferred contexts before locals, preferring `current` if it is one of
// them. -1 if the call touches no row's handle.
int RowForEvent(const TraceModel& model, size_t event, int current);

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_CALLS_PANEL_H_
