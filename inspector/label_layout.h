// Label placement without ImGui, so that labels never overlap each other or what they label
// and never get cut by their panel: the state diagram's edge labels and the lifelines' row
// labels. Geometry only (screen pixels, y down); the panels draw what this decides and tests
// check the rectangles.
//
// Thread-safety: pure functions.
//
// Example:
//   std::vector<std::optional<LabelBox>> at =
//       PlaceLabels({0, 0, 600, 300}, node_boxes, {{.anchor_x = 120, .anchor_y = 80,
//                                                   .normal_x = 0, .normal_y = -1,
//                                                   .width = 90, .height = 28}});
#ifndef CLTRACE_INSPECTOR_LABEL_LAYOUT_H_
#define CLTRACE_INSPECTOR_LABEL_LAYOUT_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cltrace::inspector {

// [x0, x1) x [y0, y1).
struct LabelBox {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float width() const { return x1 - x0; }
  float height() const { return y1 - y0; }
  bool Intersects(const LabelBox& o) const {
    return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1;
  }
  bool Inside(const LabelBox& outer) const {
    return x0 >= outer.x0 && y0 >= outer.y0 && x1 <= outer.x1 && y1 <= outer.y1;
  }
  // Grown by `m` on every side.
  LabelBox Grown(float m) const { return {x0 - m, y0 - m, x1 + m, y1 + m}; }
};

struct LabelRequest {
  // The point the label belongs next to (an edge's midpoint) and the side it prefers (unit
  // vector away from the edge).
  float anchor_x = 0, anchor_y = 0;
  float normal_x = 0, normal_y = -1;
  float width = 0, height = 0;
};

// Places `labels` in order (earlier ones get the better spots): each at the free spot nearest
// its preferred place — beside the anchor on the normal's side, then the other side, then
// rings of candidate positions further and further out — where it lies inside `bounds` and
// keeps `gap` pixels from every obstacle and every label placed before it. nullopt for a label
// with no such spot anywhere in `bounds` (the caller shortens or omits it). So the returned
// boxes are pairwise disjoint, disjoint from the obstacles and inside `bounds`.
std::vector<std::optional<LabelBox>> PlaceLabels(const LabelBox& bounds,
                                                 const std::vector<LabelBox>& obstacles,
                                                 const std::vector<LabelRequest>& labels,
                                                 float gap = 2.0f);

// `text` shortened in the middle with "..." so that measure(result) <= max_width (the whole
// text when it fits; "" if not even "..." fits). `measure` returns a string's pixel width.
std::string ElideToWidth(absl::string_view text, float max_width,
                         const std::function<float(absl::string_view)>& measure);

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_LABEL_LAYOUT_H_
