#include "inspector/label_layout.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace cltrace::inspector {
namespace {

// The box of a label of size (w, h) hung at point (x, y) on the side `dir` points to.
LabelBox HangAt(float x, float y, float dx, float dy, float w, float h) {
  float x0 = x, y0 = y;
  x0 -= dx < -0.35f ? w : dx > 0.35f ? 0 : 0.5f * w;
  y0 -= dy < -0.35f ? h : dy > 0.35f ? 0 : 0.5f * h;
  return {x0, y0, x0 + w, y0 + h};
}

}  // namespace

std::vector<std::optional<LabelBox>> PlaceLabels(const LabelBox& bounds,
                                                 const std::vector<LabelBox>& obstacles,
                                                 const std::vector<LabelRequest>& labels,
                                                 float gap) {
  std::vector<std::optional<LabelBox>> out;
  out.reserve(labels.size());
  std::vector<LabelBox> taken = obstacles;
  auto free = [&](const LabelBox& b) {
    if (!b.Inside(bounds)) return false;
    const LabelBox g = b.Grown(gap);
    return std::none_of(taken.begin(), taken.end(),
                        [&](const LabelBox& t) { return g.Intersects(t); });
  };
  // Candidate offsets beyond the preferred ones: rings of positions `step` apart, nearest first.
  constexpr float kStep = 4.0f;
  const int max_ring =
      static_cast<int>(std::ceil(std::max(bounds.width(), bounds.height()) / kStep));
  for (const LabelRequest& l : labels) {
    std::optional<LabelBox> found;
    if (l.width <= bounds.width() && l.height <= bounds.height()) {
      // Preferred: beside the anchor on the normal's side, a little further out, the other side.
      for (float off : {0.0f, 7.0f, 14.0f}) {
        for (float side : {1.0f, -1.0f}) {
          const float dx = side * l.normal_x, dy = side * l.normal_y;
          LabelBox b =
              HangAt(l.anchor_x + dx * off, l.anchor_y + dy * off, dx, dy, l.width, l.height);
          if (free(b)) {
            found = b;
            break;
          }
        }
        if (found) break;
      }
      // Then the nearest free spot around the preferred box, ring by ring, clamped into the
      // bounds (a clamped candidate repeats at most a few times per ring).
      const LabelBox pref =
          HangAt(l.anchor_x, l.anchor_y, l.normal_x, l.normal_y, l.width, l.height);
      for (int ring = 1; ring <= max_ring && !found; ++ring) {
        std::optional<LabelBox> best;
        float best_d = 0;
        for (int i = -ring; i <= ring; ++i) {
          for (int j = -ring; j <= ring; ++j) {
            if (std::max(std::abs(i), std::abs(j)) != ring) continue;
            float x0 =
                std::clamp(pref.x0 + static_cast<float>(i) * kStep, bounds.x0, bounds.x1 - l.width);
            float y0 = std::clamp(pref.y0 + static_cast<float>(j) * kStep, bounds.y0,
                                  bounds.y1 - l.height);
            LabelBox b{x0, y0, x0 + l.width, y0 + l.height};
            if (!free(b)) continue;
            const float d = std::hypot(x0 - pref.x0, y0 - pref.y0);
            if (!best || d < best_d) {
              best = b;
              best_d = d;
            }
          }
        }
        found = best;
      }
    }
    if (found) taken.push_back(*found);
    out.push_back(found);
  }
  return out;
}

std::string ElideToWidth(absl::string_view text, float max_width,
                         const std::function<float(absl::string_view)>& measure) {
  if (measure(text) <= max_width) return std::string(text);
  if (measure("...") > max_width) return "";
  // Keep as much of both ends as fits: the start names the handle, the end what it stands for.
  size_t keep = text.size();
  while (keep > 0) {
    --keep;
    const size_t head = (keep + 1) / 2, tail = keep / 2;
    std::string s =
        absl::StrCat(text.substr(0, head), "...", text.substr(text.size() - tail, tail));
    if (measure(s) <= max_width) return s;
  }
  return "...";
}

}  // namespace cltrace::inspector
