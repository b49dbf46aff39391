// What the panels share: the selected handle row, the cursor (a position on the trace's seq
// axis), the selected call and the lifelines' zoom. Panels read it and change it; the app owns
// it. No ImGui here, so tests can set up and inspect a view directly.
//
// Thread-safety: UI thread only.
//
// Example:
//   View v;
//   v.Reset(model);
//   v.SelectEvent(model, model.EventAt(120));  // cursor 120, calls list scrolls there
#ifndef CLTRACE_INSPECTOR_VIEW_H_
#define CLTRACE_INSPECTOR_VIEW_H_

#include <algorithm>
#include <cstdint>

#include "inspector/model.h"

namespace cltrace::inspector {

struct View {
  int selected_row = -1;
  uint64_t cursor = 0;          // seq
  int64_t selected_event = -1;  // call index (TraceModel::Call)
  // Shift+click in the calls list: the other end of a selected range of listed calls
  // (-1: the selection is selected_event alone).
  int64_t range_anchor = -1;
  int selected_violation = -1;  // index into model.violations()
  double view_from = 0;         // lifelines show [view_from, view_to)
  double view_to = 1;
  // One-frame requests: the calls list scrolls to selected_event, the lifelines scroll
  // vertically to selected_row.
  bool scroll_calls = false;
  bool scroll_rows = false;

  void Reset(const TraceModel& m) {
    *this = View();
    view_from = static_cast<double>(m.first_seq());
    view_to = static_cast<double>(std::max(m.end_seq(), m.first_seq() + 1));
    cursor = m.first_seq();
  }
  void FitAll(const TraceModel& m) {
    view_from = static_cast<double>(m.first_seq());
    view_to = static_cast<double>(std::max(m.end_seq(), m.first_seq() + 1));
  }
  // Moves the cursor; the selected call becomes the last call entered at or before it.
  void SetCursor(const TraceModel& m, uint64_t seq) {
    cursor = seq;
    selected_event = m.EventAtOrBefore(seq);
    range_anchor = -1;
    scroll_calls = true;
  }
  void SelectEvent(const TraceModel& m, int64_t event) {
    if (event < 0 || event >= static_cast<int64_t>(m.call_count())) return;
    selected_event = event;
    range_anchor = -1;
    cursor = m.Call(static_cast<size_t>(event)).seq;
    scroll_calls = true;
  }
  void SelectRow(int row) {
    selected_row = row;
    scroll_rows = true;
  }
  // Pans (keeping the zoom) so that `seq` is on screen with a 5% margin: centered on it, then
  // moved back inside the trace's ends where the zoom allows (a cursor near the start must
  // not leave half the lanes empty).
  void EnsureVisible(const TraceModel& m, double seq) {
    const double w = view_to - view_from;
    if (seq >= view_from + 0.05 * w && seq <= view_to - 0.05 * w) return;
    view_from = seq - 0.5 * w;
    view_to = seq + 0.5 * w;
    const double first = static_cast<double>(m.first_seq());
    const double end = static_cast<double>(std::max(m.end_seq(), m.first_seq() + 1));
    if (view_to > end) Pan(end - view_to);
    if (view_from < first) Pan(first - view_from);
  }
  // Zooms by `factor` (< 1 zooms in) keeping `anchor` at the same place; never narrower than
  // 8 positions and never wider than the trace (plus nothing else: panning past the ends is
  // allowed, it shows empty lanes).
  void Zoom(const TraceModel& m, double factor, double anchor) {
    const double full =
        static_cast<double>(std::max(m.end_seq(), m.first_seq() + 1) - m.first_seq());
    double w = std::clamp((view_to - view_from) * factor, 8.0, full * 1.05);
    const double t = (anchor - view_from) / (view_to - view_from);
    view_from = anchor - t * w;
    view_to = view_from + w;
  }
  void Pan(double delta_seq) {
    view_from += delta_seq;
    view_to += delta_seq;
  }
};

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_VIEW_H_
