#include "inspector/state_diagram_panel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "inspector/label_layout.h"
#include "inspector/theme.h"

namespace cltrace::inspector {

using check::State;

namespace {

ImVec2 Add(ImVec2 a, ImVec2 b) { return ImVec2(a.x + b.x, a.y + b.y); }
ImVec2 Sub(ImVec2 a, ImVec2 b) { return ImVec2(a.x - b.x, a.y - b.y); }
ImVec2 Mul(ImVec2 a, float s) { return ImVec2(a.x * s, a.y * s); }
float Len(ImVec2 a) { return std::sqrt(a.x * a.x + a.y * a.y); }
ImVec2 Norm(ImVec2 a) {
  float l = Len(a);
  return l > 0 ? Mul(a, 1.0f / l) : ImVec2(1, 0);
}

void Arrow(ImDrawList* draw, ImVec2 tip, ImVec2 dir, ImU32 color) {
  const ImVec2 n(-dir.y, dir.x);
  const ImVec2 base = Sub(tip, Mul(dir, 9));
  draw->AddTriangleFilled(tip, Add(base, Mul(n, 4.5f)), Sub(base, Mul(n, 4.5f)), color);
}

// The state the handle of `row` is in at `seq`: its span's state; in a gap, the end state of
// the previous lifetime (Destroyed) or kNone before the first.
State StateAt(const TraceModel& m, int row, uint64_t seq) {
  if (const Span* s = m.SpanAt(row, seq)) return s->state;
  const std::vector<Span>& spans = m.rows()[row].spans;
  auto it = std::upper_bound(spans.begin(), spans.end(), seq,
                             [](uint64_t v, const Span& s) { return v < s.from; });
  if (it == spans.begin()) return State::kNone;
  return std::prev(it)->state;
}

// Edge labels must fit between nodes: "RecycleDestroyCommandList" -> "RecycleDestroyCL".
std::string Abbreviate(const std::string& calls) {
  std::string s = calls;
  for (const auto& [from, to] : {std::pair<const char*, const char*>{"CommandList", "CL"},
                                 {"DeferredContext", "DC"},
                                 {" E_OUTOFMEMORY", " E_OOM"},
                                 {"DC-table DDIs", "DC DDIs"}}) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1))
      s.replace(at, std::strlen(from), to);
  }
  return s;
}

// The name under a node: kNone is "unallocated" (U) or "none" (N) depending on the machine.
std::string NodeName(const rules::MachineTable& m, State s) {
  return std::string(s == State::kNone ? absl::string_view(m.none_name) : check::StateName(s));
}

// "unallocated -> Valid": the states of an edge, kNone named as under its node.
std::string StateNames(const rules::MachineTable& m, const DiagramEdge& e) {
  return absl::StrCat(NodeName(m, e.from), " -> ", NodeName(m, e.to));
}

}  // namespace

ImVec2 StateDiagramPanel::NodeCenter(State s) const {
  if (diagram_.machine == nullptr) return ImVec2(0, 0);
  const std::optional<NodePosition> n = NodeLayout(diagram_.machine->machine, s);
  if (!n.has_value()) return ImVec2(-1, -1);
  return ImVec2(box0_.x + radius_ + n->x * (box1_.x - box0_.x - 2 * radius_),
                box0_.y + radius_ + 14 + n->y * (box1_.y - box0_.y - 2 * radius_ - 28));
}

void StateDiagramPanel::Draw(const char* title, const TraceModel& model, View& view) {
  if (!BeginPanel(title)) return;
  const int row = view.selected_row;
  const bool have_selection = row >= 0 && row < static_cast<int>(model.rows().size());
  const RowKind kind = have_selection ? model.rows()[row].kind : RowKind::kCommandList;
  if (!built_ || model_ != &model || kind != kind_) {
    diagram_ = BuildDiagram(kind, model);
    layout_valid_ = false;
    model_ = &model;
    kind_ = kind;
    built_ = true;
  }
  highlighted_ = have_selection ? StateAt(model, row, view.cursor) : State::kNone;
  ImGui::TextUnformatted(diagram_.machine->title);
  ImGui::SameLine();
  if (have_selection) {
    ImGui::TextDisabled(" %s at seq %s: %s", model.rows()[row].label.c_str(),
                        absl::StrCat(view.cursor).c_str(),
                        std::string(check::StateName(highlighted_)).c_str());
  } else {
    ImGui::TextDisabled(" (select a handle to see its state)");
  }

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float box_h = std::max(120.0f, avail.y * 0.66f);
  box0_ = ImGui::GetCursorScreenPos();
  box1_ = ImVec2(box0_.x + avail.x, box0_.y + box_h);
  radius_ = std::clamp(box_h * 0.075f, 11.0f, 18.0f);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(box0_, box1_, IM_COL32(20, 20, 26, 255));
  // Edges first, labels last (over edges and nodes, on a dark plate so crossings stay
  // readable).
  std::vector<Label> labels = DrawEdges(draw);
  DrawNodes(draw, have_selection);
  const DiagramEdge* hovered = PlaceLabels(draw, labels);
  ImGui::Dummy(ImVec2(avail.x, box_h));
  if (hovered != nullptr) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(StateNames(*diagram_.machine, *hovered).c_str());
    ImGui::TextUnformatted(hovered->label.c_str());
    ImGui::EndTooltip();
  }
  DrawEdgeTable();
  ImGui::End();
}

std::vector<StateDiagramPanel::Label> StateDiagramPanel::DrawEdges(ImDrawList* draw) const {
  // A label sits on the outer side of its edge's bend, anchored away from it.
  std::vector<Label> labels;
  for (const DiagramEdge& e : diagram_.edges) {
    const ImVec2 a = NodeCenter(e.from), b = NodeCenter(e.to);
    if (a.x < 0 || b.x < 0) continue;
    const ImU32 color = e.illegal     ? kColorIllegalEdge
                        : e.count > 0 ? IM_COL32(215, 215, 215, 255)
                                      : IM_COL32(90, 90, 100, 255);
    const float thick = e.illegal ? 2.5f : e.count > 0 ? 1.8f : 1.0f;
    Label l;
    l.color = color;
    l.edge = &e;
    l.line1 = e.illegal     ? absl::StrCat("ILLEGAL x", e.count)
              : e.count > 0 ? absl::StrCat(e.id, " x", e.count)
                            : e.id;
    if (e.count > 0 || e.illegal) l.line2 = Abbreviate(e.calls);
    if (e.self_loop()) {
      const ImVec2 c(a.x, a.y - radius_ - 7);
      draw->AddCircle(c, 9, color, 16, thick);
      Arrow(draw, ImVec2(a.x + 5, a.y - radius_ + 1), Norm(ImVec2(0.3f, 1)), color);
      l.at = ImVec2(c.x, c.y - 10);
      l.normal = ImVec2(0, -1);
    } else {
      // Bend every edge a little to its left so A->B and B->A never overlap.
      const ImVec2 d = Norm(Sub(b, a));
      const ImVec2 n(d.y, -d.x);
      const ImVec2 ctrl = Add(Mul(Add(a, b), 0.5f), Mul(n, 16));
      const ImVec2 start = Add(a, Mul(Norm(Sub(ctrl, a)), radius_));
      const ImVec2 end = Sub(b, Mul(Norm(Sub(b, ctrl)), radius_ + 1));
      draw->AddBezierQuadratic(start, ctrl, end, color, thick, 20);
      Arrow(draw, end, Norm(Sub(end, ctrl)), color);
      // The curve's midpoint is halfway to the control point.
      l.at = Add(Mul(Add(a, b), 0.5f), Mul(n, 11));
      l.normal = n;
    }
    labels.push_back(std::move(l));
  }
  return labels;
}

void StateDiagramPanel::DrawNodes(ImDrawList* draw, bool have_selection) const {
  const rules::MachineTable& m = *diagram_.machine;
  for (State s : m.states) {
    const ImVec2 c = NodeCenter(s);
    const ImU32 fill = s == State::kNone ? IM_COL32(70, 70, 80, 255) : StateColor(s);
    if (s == highlighted_ && have_selection)
      draw->AddCircle(c, radius_ + 5, kColorCursor, 24, 3.0f);
    draw->AddCircleFilled(c, radius_, fill, 24);
    const std::string label(rules::Abbreviation(m, s));
    const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    draw->AddText(ImVec2(c.x - ts.x * 0.5f, c.y - ts.y * 0.5f), IM_COL32(0, 0, 0, 255),
                  label.c_str());
    const std::string name = NodeName(m, s);
    const ImVec2 ns = ImGui::CalcTextSize(name.c_str());
    const float nx = std::clamp(c.x - ns.x * 0.5f, box0_.x + 2, box1_.x - ns.x - 2);
    draw->AddText(ImVec2(nx, c.y + radius_ + 1), IM_COL32(170, 170, 170, 255), name.c_str());
  }
}

const DiagramEdge* StateDiagramPanel::PlaceLabels(ImDrawList* draw, std::vector<Label>& labels) {
  // Taken edges are placed first (they carry the counts); then the untaken ones, which keep
  // only their line (their names are in the table below) when there is no room. Nothing
  // overlaps: labels, nodes and node names are pairwise disjoint and inside the box
  // (label_layout.h). The layout is computed when the box or the diagram changes.
  auto taken = [](const Label& l) { return l.edge->count > 0 || l.edge->illegal; };
  std::stable_sort(labels.begin(), labels.end(),
                   [&](const Label& x, const Label& y) { return taken(x) > taken(y); });
  constexpr float kPad = 2.0f;  // the dark plate around the text
  const LabelBox bounds{box0_.x, box0_.y, box1_.x, box1_.y};
  const bool same = layout_valid_ && layout_bounds_.x0 == bounds.x0 &&
                    layout_bounds_.y0 == bounds.y0 && layout_bounds_.x1 == bounds.x1 &&
                    layout_bounds_.y1 == bounds.y1 && placed_.size() == labels.size();
  if (!same) {
    obstacles_.clear();
    for (State st : diagram_.machine->states) {
      const ImVec2 c = NodeCenter(st);
      const float r = radius_ + 5;  // with the cursor's ring
      obstacles_.push_back({c.x - r, c.y - r, c.x + r, c.y + r});
      const float w = ImGui::CalcTextSize(NodeName(*diagram_.machine, st).c_str()).x;
      const float nx = std::clamp(c.x - w * 0.5f, box0_.x + 2, box1_.x - w - 2);
      obstacles_.push_back({nx, c.y + radius_ + 1, nx + w, c.y + radius_ + 1 + 14});
    }
    // Twice: the full label, then for those without room the first line alone.
    std::vector<LabelRequest> requests;
    for (const Label& l : labels) {
      const ImVec2 s1 = ImGui::CalcTextSize(l.line1.c_str());
      const ImVec2 s2 = l.line2.empty() ? ImVec2(0, 0) : ImGui::CalcTextSize(l.line2.c_str());
      requests.push_back(
          {l.at.x, l.at.y, l.normal.x, l.normal.y, std::max(s1.x, s2.x) + 2 * kPad, s1.y + s2.y});
    }
    std::vector<std::optional<LabelBox>> full =
        inspector::PlaceLabels(bounds, obstacles_, requests);
    std::vector<LabelBox> taken_boxes = obstacles_;
    for (const std::optional<LabelBox>& b : full)
      if (b) taken_boxes.push_back(*b);
    placed_.assign(labels.size(), PlacedLabel{});
    for (size_t i = 0; i < labels.size(); ++i) {
      placed_[i].edge = labels[i].edge;
      if (full[i]) {
        placed_[i].box = *full[i];
        placed_[i].lines = labels[i].line2.empty() ? 1 : 2;
        continue;
      }
      if (!taken(labels[i])) continue;
      LabelRequest one = requests[i];
      one.width = ImGui::CalcTextSize(labels[i].line1.c_str()).x + 2 * kPad;
      one.height = ImGui::CalcTextSize(labels[i].line1.c_str()).y;
      std::optional<LabelBox> b = inspector::PlaceLabels(bounds, taken_boxes, {one}).front();
      if (!b) continue;
      taken_boxes.push_back(*b);
      placed_[i].box = *b;
      placed_[i].lines = 1;
    }
    layout_bounds_ = bounds;
    layout_valid_ = true;
  }
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const DiagramEdge* hovered = nullptr;
  for (size_t i = 0; i < labels.size(); ++i) {
    const Label& l = labels[i];
    const PlacedLabel& p = placed_[i];
    if (p.lines == 0) continue;
    const ImVec2 a(p.box.x0, p.box.y0), b(p.box.x1, p.box.y1);
    // A label moved away from its edge points back at it.
    const ImVec2 mid(0.5f * (a.x + b.x), 0.5f * (a.y + b.y));
    if (Len(Sub(mid, l.at)) > 0.5f * Len(Sub(b, a)) + 12) {
      const ImVec2 q(std::clamp(l.at.x, a.x, b.x), std::clamp(l.at.y, a.y, b.y));
      draw->AddLine(q, l.at, (l.color & 0x00ffffff) | 0x90000000, 1.0f);
    }
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    const Label& l = labels[i];
    const PlacedLabel& p = placed_[i];
    if (p.lines == 0) continue;
    const ImVec2 a(p.box.x0, p.box.y0), b(p.box.x1, p.box.y1);
    const float w = p.box.width() - 2 * kPad;
    draw->AddRectFilled(a, b, IM_COL32(20, 20, 26, 220));
    const ImVec2 s1 = ImGui::CalcTextSize(l.line1.c_str());
    draw->AddText(ImVec2(a.x + kPad + 0.5f * (w - s1.x), a.y), l.color, l.line1.c_str());
    if (p.lines == 2) {
      const ImVec2 s2 = ImGui::CalcTextSize(l.line2.c_str());
      draw->AddText(ImVec2(a.x + kPad + 0.5f * (w - s2.x), a.y + s1.y),
                    l.edge->illegal ? kColorIllegalEdge : IM_COL32(160, 160, 170, 255),
                    l.line2.c_str());
    }
    if (ImGui::IsWindowHovered() && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y &&
        mouse.y < b.y)
      hovered = l.edge;
  }
  return hovered;
}

void StateDiagramPanel::DrawEdgeTable() const {
  if (!ImGui::BeginTable("edges", 5,
                         ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg |
                             ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("spec");
  ImGui::TableSetupColumn("from -> to");
  ImGui::TableSetupColumn("times");
  ImGui::TableSetupColumn("rule");
  ImGui::TableSetupColumn("call", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  for (const DiagramEdge& e : diagram_.edges) {
    ImGui::TableNextRow();
    const ImVec4 col = e.illegal ? ImVec4(1, 0.35f, 0.35f, 1)
                       : e.count ? ImVec4(0.9f, 0.9f, 0.9f, 1)
                                 : ImVec4(0.5f, 0.5f, 0.55f, 1);
    ImGui::TableNextColumn();
    ImGui::TextColored(col, "%s", e.illegal ? "ILLEGAL" : e.id.c_str());
    ImGui::TableNextColumn();
    ImGui::TextColored(col, "%s", StateNames(*diagram_.machine, e).c_str());
    ImGui::TableNextColumn();
    ImGui::TextColored(col, "%llu", static_cast<unsigned long long>(e.count));
    ImGui::TableNextColumn();
    ImGui::TextColored(col, "%s", e.illegal ? "" : rules::RuleId(e.rule));
    ImGui::TableNextColumn();
    ImGui::TextColored(col, "%s%s", e.calls.c_str(),
                       e.illegal || e.label.find("(checker error)") == std::string::npos
                           ? ""
                           : " (checker error)");
  }
  ImGui::EndTable();
}

}  // namespace cltrace::inspector
