#include "inspector/lifelines_panel.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ddi/catalog.h"
#include "inspector/label_layout.h"
#include "inspector/load_error.h"
#include "inspector/search.h"
#include "inspector/theme.h"

namespace cltrace::inspector {

using check::State;

std::string FormatSeq(uint64_t seq) {
  std::string digits = absl::StrCat(seq);
  std::string out;
  const int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    out.push_back(digits[i]);
    if ((n - 1 - i) % 3 == 0 && i != n - 1) out.push_back(',');
  }
  return out;
}

namespace {

// The smallest 1/2/5 x 10^k at least `raw`.
double NiceStep(double raw) {
  double p = std::pow(10.0, std::floor(std::log10(std::max(raw, 1.0))));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return std::max(1.0, m * p);
  return 10 * p;
}

constexpr ImU32 kLabelColor[] = {
    IM_COL32(235, 235, 235, 255),  // command list
    IM_COL32(120, 215, 230, 255),  // deferred context
    IM_COL32(170, 170, 170, 255),  // local
};
constexpr const char* kKindTag[] = {"CL", "DC", "  L"};
// Space between a row's label and its lane.
constexpr float kLabelGap = 6.0f;

float LabelIndent(RowKind k) { return k == RowKind::kLocal ? 40.0f : 28.0f; }

float TextWidth(absl::string_view t) {
  return ImGui::CalcTextSize(t.data(), t.data() + t.size()).x;
}

}  // namespace

const std::vector<uint64_t>& LifelinesPanel::RowViolations(const TraceModel& model, int row) {
  if (violations_model_ != &model) {
    violations_model_ = &model;
    row_violations_.assign(model.rows().size(), {});
    absl::flat_hash_map<uint64_t, std::vector<int>> rows_of;
    for (int r = 0; r < static_cast<int>(model.rows().size()); ++r)
      rows_of[model.rows()[r].handle].push_back(r);
    for (const check::Violation& v : model.violations()) {
      auto it = rows_of.find(v.handle);
      if (it == rows_of.end()) continue;
      for (int r : it->second) row_violations_[r].push_back(v.seq);
    }
  }
  return row_violations_[row];
}

void LifelinesPanel::DrawAxis(const TraceModel& model, const View& view) {
  (void)model;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float h = ImGui::GetTextLineHeight() + 8;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  draw->AddRectFilled(ImVec2(p.x, p.y), ImVec2(geo_.lane_x1, p.y + h), IM_COL32(30, 30, 36, 255));
  draw->AddText(ImVec2(p.x + 4, p.y + 4), IM_COL32(200, 200, 200, 255), "handle");
  const char* seq_label = "seq ->";
  draw->AddText(ImVec2(geo_.lane_x0 - ImGui::CalcTextSize(seq_label).x - 6, p.y + 4),
                IM_COL32(150, 150, 150, 255), seq_label);
  const double range = view.view_to - view.view_from;
  const float lane_w = geo_.lane_x1 - geo_.lane_x0;
  const double step = NiceStep(range * 120.0 / std::max(lane_w, 1.0f));
  draw->PushClipRect(ImVec2(geo_.lane_x0, p.y), ImVec2(geo_.lane_x1, p.y + h), true);
  for (double t = std::ceil(std::max(view.view_from, 0.0) / step) * step; t < view.view_to;
       t += step) {
    const float x = geo_.XOf(t);
    draw->AddLine(ImVec2(x, p.y + h - 6), ImVec2(x, p.y + h), IM_COL32(200, 200, 200, 255));
    std::string label = FormatSeq(static_cast<uint64_t>(t));
    draw->AddText(ImVec2(x + 3, p.y + 2), IM_COL32(200, 200, 200, 255), label.c_str());
  }
  draw->PopClipRect();
  ImGui::Dummy(ImVec2(geo_.lane_x1 - p.x, h));
  geo_.axis_y = p.y + h;
}

void LifelinesPanel::Draw(const char* title, const TraceModel& model, View& view) {
  if (!BeginPanel(title)) return;
  const std::vector<Row>& rows = model.rows();
  ImGui::Text("%zu handle rows, %s state spans, %s calls   view: seq %s .. %s", rows.size(),
              FormatSeq(model.span_count()).c_str(), FormatSeq(model.call_count()).c_str(),
              FormatSeq(static_cast<uint64_t>(std::max(view.view_from, 0.0))).c_str(),
              FormatSeq(static_cast<uint64_t>(std::max(view.view_to, 0.0))).c_str());
  if (const std::string notice = SalvageNotice(model.data()); !notice.empty())
    ImGui::TextColored(ImVec4(1, 0.7f, 0.3f, 1), "%s", notice.c_str());
  // The key hint only where it fits whole.
  constexpr const char* kHint = " wheel zoom, drag pan, click select; N/P transition, V finding";
  ImGui::SameLine();
  if (ImGui::CalcTextSize(kHint).x <= ImGui::GetContentRegionAvail().x) {
    ImGui::TextDisabled("%s", kHint);
  } else {
    ImGui::NewLine();
  }
  DrawLegend();

  const ImGuiStyle& style = ImGui::GetStyle();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (labels_model_ != &model) {
    labels_model_ = &model;
    widest_label_ = 0;
    for (const Row& row : rows)
      widest_label_ =
          std::max(widest_label_, LabelIndent(row.kind) + TextWidth(row.label) + kLabelGap);
  }
  label_width = std::clamp(widest_label_, min_label_width,
                           std::max(min_label_width, max_label_share * (right - origin.x)));
  geo_.labels.clear();
  geo_.lane_x0 = origin.x + label_width;
  geo_.lane_x1 = std::max(geo_.lane_x0 + 10.0f, right - style.ScrollbarSize);
  geo_.view_from = view.view_from;
  geo_.view_to = view.view_to;
  DrawAxis(model, view);

  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(0, 0));
  ImGui::BeginChild("rows", ImVec2(0, 0), false,
                    ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_AlwaysVerticalScrollbar);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 child_pos = ImGui::GetWindowPos();
  geo_.visible_y0 = child_pos.y;
  geo_.visible_y1 = child_pos.y + ImGui::GetWindowHeight();
  geo_.rows_y0 = ImGui::GetCursorScreenPos().y;

  if (view.scroll_rows && view.selected_row >= 0) {
    const float top = static_cast<float>(view.selected_row) * geo_.row_height;
    const float h = geo_.visible_y1 - geo_.visible_y0;
    if (top < ImGui::GetScrollY() || top + geo_.row_height > ImGui::GetScrollY() + h)
      ImGui::SetScrollY(std::max(0.0f, top - 0.4f * h));
  }
  view.scroll_rows = false;

  // Grid lines at the axis ticks help reading positions off far rows.
  {
    const double step = NiceStep((view.view_to - view.view_from) * 120.0 /
                                 std::max(geo_.lane_x1 - geo_.lane_x0, 1.0f));
    draw->PushClipRect(ImVec2(geo_.lane_x0, geo_.visible_y0), ImVec2(geo_.lane_x1, geo_.visible_y1),
                       true);
    for (double t = std::ceil(std::max(view.view_from, 0.0) / step) * step; t < view.view_to;
         t += step) {
      const float x = geo_.XOf(t);
      draw->AddLine(ImVec2(x, geo_.visible_y0), ImVec2(x, geo_.visible_y1),
                    IM_COL32(255, 255, 255, 18));
    }
    draw->PopClipRect();
  }

  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool hovered = ImGui::IsWindowHovered();
  int hovered_row = -1;
  if (hovered && mouse.y >= geo_.rows_y0) {
    hovered_row = static_cast<int>((mouse.y - geo_.rows_y0) / geo_.row_height);
    if (hovered_row >= static_cast<int>(rows.size())) hovered_row = -1;
  }
  last_rects_ = 0;
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(rows.size()), geo_.row_height);
  while (clipper.Step()) {
    for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
      DrawRow(model, view, r, geo_.RowTop(r), draw, r == hovered_row, mouse.x);
      ImGui::Dummy(ImVec2(geo_.lane_x1 - child_pos.x, geo_.row_height));
    }
  }
  clipper.End();
  if (rows.empty()) {
    ImGui::SetCursorScreenPos(ImVec2(geo_.lane_x0 + 8, geo_.rows_y0 + 8));
    ImGui::TextDisabled("no command lists, deferred contexts or local handles in this trace");
  }

  // The cursor across every row.
  const float cx = geo_.XOf(static_cast<double>(view.cursor));
  if (cx >= geo_.lane_x0 && cx <= geo_.lane_x1)
    draw->AddLine(ImVec2(cx, geo_.visible_y0), ImVec2(cx, geo_.visible_y1), kColorCursor, 1.5f);

  if (mark_seq >= 0) {
    const float mx = geo_.XOf(static_cast<double>(mark_seq));
    if (mx >= geo_.lane_x0 && mx <= geo_.lane_x1)
      draw->AddLine(ImVec2(mx, geo_.visible_y0), ImVec2(mx, geo_.visible_y1), kColorDifferenceMark,
                    2.0f);
  }
  HandleMouse(model, view);
  ImGui::EndChild();
  ImGui::PopStyleVar();
  ImGui::End();
}

void LifelinesPanel::DrawRow(const TraceModel& model, const View& view, int r, float y,
                             ImDrawList* draw, bool hovered_row, float mouse_x) {
  const Row& row = model.rows()[r];
  const float x0 = geo_.lane_x0 - label_width;
  const float y1 = y + geo_.row_height;
  if (r == view.selected_row) {
    draw->AddRectFilled(ImVec2(x0, y), ImVec2(geo_.lane_x1, y1), kColorSelectedRow);
  } else if (r % 2 == 1) {
    draw->AddRectFilled(ImVec2(x0, y), ImVec2(geo_.lane_x1, y1), IM_COL32(255, 255, 255, 8));
  }
  // Label column.
  // The column is as wide as the longest label (up to a share of the panel); a label that is
  // still too long is shortened in the middle, never clipped.
  const int kind = static_cast<int>(row.kind);
  const float text_h = ImGui::GetTextLineHeight();
  const float ty = y + 0.5f * (geo_.row_height - text_h);
  const float tag_w = ImGui::CalcTextSize(kKindTag[kind]).x;
  draw->AddText(ImVec2(x0 + 4, ty), IM_COL32(120, 120, 130, 255), kKindTag[kind]);
  const float lx = x0 + LabelIndent(row.kind);
  const std::string text = ElideToWidth(row.label, geo_.lane_x0 - kLabelGap - lx,
                                        [](absl::string_view t) { return TextWidth(t); });
  draw->AddText(ImVec2(lx, ty), kLabelColor[kind], text.c_str());
  geo_.labels.push_back({r,
                         {x0 + 4, ty, x0 + 4 + tag_w, ty + text_h},
                         {lx, ty, lx + TextWidth(text), ty + text_h},
                         text});

  // Lane.
  draw->PushClipRect(ImVec2(geo_.lane_x0, y), ImVec2(geo_.lane_x1, y1), true);
  FoldParams p;
  p.view_from = view.view_from;
  p.view_to = view.view_to;
  p.width = geo_.lane_x1 - geo_.lane_x0;
  p.min_px = min_px;
  p.max_fold_px = max_fold_px;
  fold_.clear();
  FoldSpans(row.spans, p, &fold_);
  const float by0 = y + geo_.bar_inset, by1 = y1 - geo_.bar_inset;
  const FoldedSpan* hovered = nullptr;
  for (const FoldedSpan& f : fold_) {
    const float a = geo_.lane_x0 + f.x0, b = geo_.lane_x0 + f.x1;
    draw->AddRectFilled(ImVec2(a, by0), ImVec2(b, by1), StateColor(f.state));
    if (f.folded()) {
      draw->AddLine(ImVec2(a, by0 + 1), ImVec2(b, by0 + 1), kColorFolded, 2.0f);
      draw->AddLine(ImVec2(a, by1 - 1), ImVec2(b, by1 - 1), kColorFolded, 2.0f);
    }
    if (hovered_row && mouse_x >= a && mouse_x < std::max(b, a + 1)) hovered = &f;
  }
  last_rects_ += fold_.size();
  // Findings of the checker on this handle.
  const std::vector<uint64_t>& marks = RowViolations(model, r);
  if (!marks.empty()) {
    auto it = std::lower_bound(marks.begin(), marks.end(),
                               static_cast<uint64_t>(std::max(view.view_from, 0.0)));
    float last_x = -1e9f;
    for (; it != marks.end() && static_cast<double>(*it) < view.view_to; ++it) {
      const float x = geo_.XOf(static_cast<double>(*it));
      if (x - last_x < 2.0f) continue;
      last_x = x;
      draw->AddLine(ImVec2(x, y + 1), ImVec2(x, y1 - 1), kColorViolation, 2.0f);
      draw->AddTriangleFilled(ImVec2(x - 4, y), ImVec2(x + 4, y), ImVec2(x, y + 6),
                              kColorViolation);
    }
  }
  draw->PopClipRect();
  if (hovered != nullptr && !dragging_ && ImGui::IsWindowHovered()) Tooltip(model, r, *hovered);
}

void LifelinesPanel::Tooltip(const TraceModel& model, int r, const FoldedSpan& f) {
  const Row& row = model.rows()[r];
  const Span& first = row.spans[f.first];
  const Span& last = row.spans[f.first + f.count - 1];
  ImGui::BeginTooltip();
  ImGui::Text("%s  (%s)", row.label.c_str(), std::string(RowKindName(row.kind)).c_str());
  if (f.folded()) {
    ImGui::Text("%u state spans folded here (each under %.0f px): zoom in to see them", f.count,
                min_px);
    ImGui::Text("seq %s .. %s", FormatSeq(first.from).c_str(), FormatSeq(last.to).c_str());
    ImGui::Text("state at the middle: %s", std::string(check::StateName(f.state)).c_str());
  } else {
    const format::CallInfo* ci = format::GetCall(first.cause);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(StateColor(first.state)), "%s",
                       std::string(check::StateName(first.state)).c_str());
    int64_t ev = model.EventAt(first.from);
    std::string thread =
        ev >= 0 ? absl::StrCat(model.Call(static_cast<size_t>(ev)).tid) : std::string("?");
    if (ci != nullptr) {
      ImGui::Text("entered by %s%s at seq %s on thread %s", first.dc_table ? "DC::" : "", ci->name,
                  FormatSeq(first.from).c_str(), thread.c_str());
    } else {
      ImGui::Text("already in this state when the trace began");
    }
    ImGui::Text("seq %s .. %s  (%s positions)", FormatSeq(first.from).c_str(),
                FormatSeq(first.to).c_str(), FormatSeq(first.to - first.from).c_str());
    if (row.lifetimes > 1) ImGui::Text("one of %u lifetimes of this handle value", row.lifetimes);
    if (row.kind == RowKind::kLocal)
      ImGui::Text("local handle on %s for %s", model.Token(row.context).c_str(),
                  model.Token(row.ic_handle).c_str());
    if (row.kind == RowKind::kCommandList && row.context != 0)
      ImGui::Text("owning deferred context: %s", model.Token(row.context).c_str());
    for (int vi : model.ViolationsAt(first.from)) {
      const check::Violation& v = model.violations()[vi];
      if (v.handle != row.handle) continue;
      ImGui::TextColored(ImVec4(1, 0.35f, 0.35f, 1), "%s: %s", v.id(), v.message.c_str());
    }
  }
  ImGui::EndTooltip();
}

void LifelinesPanel::HandleMouse(const TraceModel& model, View& view) {
  ImGuiIO& io = ImGui::GetIO();
  const ImVec2 mouse = io.MousePos;
  const bool hovered = ImGui::IsWindowHovered();
  const bool in_lanes = mouse.x >= geo_.lane_x0 && mouse.x < geo_.lane_x1;
  if (hovered && io.MouseWheel != 0.0f) {
    if (!in_lanes || io.KeyShift) {
      ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseWheel * 3 * geo_.row_height);
    } else {
      view.Zoom(model, std::pow(0.8, static_cast<double>(io.MouseWheel)), geo_.SeqAt(mouse.x));
    }
  }
  if (hovered && io.MouseWheelH != 0.0f)
    view.Pan(-io.MouseWheelH * 0.1 * (view.view_to - view.view_from));
  if (hovered && ImGui::IsMouseClicked(0)) {
    pressed_ = true;
    dragging_ = false;
    press_pos_ = mouse;
    press_from_ = view.view_from;
    press_to_ = view.view_to;
  }
  if (!pressed_) return;
  const float dx = mouse.x - press_pos_.x;
  if (ImGui::IsMouseDown(0)) {
    if (std::fabs(dx) > 3.0f || dragging_) {
      dragging_ = true;
      const double shift = -dx / (geo_.lane_x1 - geo_.lane_x0) * (press_to_ - press_from_);
      view.view_from = press_from_ + shift;
      view.view_to = press_to_ + shift;
    }
    return;
  }
  // Released.
  pressed_ = false;
  if (dragging_) {
    dragging_ = false;
    return;
  }
  if (press_pos_.y < geo_.rows_y0) return;
  const int r = static_cast<int>((press_pos_.y - geo_.rows_y0) / geo_.row_height);
  if (r < 0 || r >= static_cast<int>(model.rows().size())) return;
  view.selected_row = r;
  if (press_pos_.x >= geo_.lane_x0 && press_pos_.x < geo_.lane_x1) {
    // The call of this row's handle nearest the click, never a call on another handle.
    const double seq = std::max(geo_.SeqAt(press_pos_.x), 0.0);
    const int64_t ev = NearestCallOnRow(model, r, seq);
    if (ev >= 0) {
      view.SelectEvent(model, ev);
    } else {
      view.SetCursor(model, static_cast<uint64_t>(std::llround(seq)));
      view.selected_event = -1;
    }
  }
}

}  // namespace cltrace::inspector
