// The lifelines panel: one row per handle (command lists, then each deferred context with its
// local handles indented below it), state-colored spans over the seq axis, the cursor, the
// checker's findings as red marks. Wheel zooms around the mouse, dragging pans, a click selects
// the row and moves the cursor; hovering shows the state, the call that entered it, its seq
// range and thread. Runs of spans narrower than min_px fold into marked blocks (see
// lifeline_fold.h), so a frame costs the same for ten spans or ten million.
//
// Thread-safety: UI thread only.
//
// Example:
//   LifelinesPanel lifelines;
//   lifelines.Draw("Lifelines", model, view);  // between ImGui::NewFrame and ImGui::Render
#ifndef CLTRACE_INSPECTOR_LIFELINES_PANEL_H_
#define CLTRACE_INSPECTOR_LIFELINES_PANEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "imgui.h"
#include "inspector/label_layout.h"
#include "inspector/lifeline_fold.h"
#include "inspector/model.h"
#include "inspector/view.h"

namespace cltrace::inspector {

// Where things were drawn in the last frame (screen pixels), for tests and screenshots.
struct LifelinesGeometry {
  float lane_x0 = 0, lane_x1 = 0;        // the spans' area
  float rows_y0 = 0;                     // top of row 0 (scrolled; may be above the window)
  float visible_y0 = 0, visible_y1 = 0;  // the rows' clip rectangle
  float row_height = 18;
  float bar_inset = 3;  // a span's bar is [row top + inset, row bottom - inset]
  float axis_y = 0;     // bottom of the axis strip
  double view_from = 0, view_to = 1;

  float XOf(double seq) const {
    return lane_x0 +
           static_cast<float>((seq - view_from) / (view_to - view_from)) * (lane_x1 - lane_x0);
  }
  double SeqAt(float x) const {
    return view_from + (x - lane_x0) / (lane_x1 - lane_x0) * (view_to - view_from);
  }
  float RowTop(int row) const { return rows_y0 + static_cast<float>(row) * row_height; }
  float RowCenterY(int row) const { return RowTop(row) + 0.5f * row_height; }
  bool RowVisible(int row) const {
    return RowTop(row) >= visible_y0 && RowTop(row) + row_height <= visible_y1;
  }
  // The label column of each row drawn: its kind tag and its label, as drawn (elided when
  // the column could not fit it), with their text rectangles.
  struct RowLabel {
    int row;
    LabelBox tag, label;
    std::string text;
  };
  std::vector<RowLabel> labels;
};

class LifelinesPanel {
 public:
  // Begins/ends its own window named `title`.
  void Draw(const char* title, const TraceModel& model, View& view);

  const LifelinesGeometry& geometry() const { return geo_; }
  // Rectangles emitted in the last frame (a cost measure for benchmarks and tests).
  uint64_t last_rects() const { return last_rects_; }

  // A seq marked across every row (the side-by-side view's first difference), -1 for none.
  int64_t mark_seq = -1;

  float min_px = 3.0f;
  float max_fold_px = 12.0f;
  // The label column: as wide as the widest label, at least min_label_width and at most
  // max_label_share of the panel (labels beyond are elided in the middle). label_width is
  // the width of the last frame.
  float min_label_width = 190.0f;
  float max_label_share = 0.4f;
  float label_width = 190.0f;

 private:
  void DrawAxis(const TraceModel& model, const View& view);
  void DrawRow(const TraceModel& model, const View& view, int row, float y, ImDrawList* draw,
               bool hovered_row, float mouse_x);
  void HandleMouse(const TraceModel& model, View& view);
  void Tooltip(const TraceModel& model, int row, const FoldedSpan& f);
  const std::vector<uint64_t>& RowViolations(const TraceModel& model, int row);

  LifelinesGeometry geo_;
  std::vector<FoldedSpan> fold_;
  uint64_t last_rects_ = 0;
  // Drag-to-pan state.
  bool pressed_ = false;
  bool dragging_ = false;
  ImVec2 press_pos_;
  double press_from_ = 0, press_to_ = 0;
  // Findings per row (seqs), built on first use for the current model.
  const TraceModel* violations_model_ = nullptr;
  std::vector<std::vector<uint64_t>> row_violations_;
  // Widest label of the model (its pixels), measured once per model.
  const TraceModel* labels_model_ = nullptr;
  float widest_label_ = 0;
};

// "12,345,678".
std::string FormatSeq(uint64_t seq);

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_LIFELINES_PANEL_H_
