#include "inspector/state_diagram_panel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
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

bool StateDiagramPanel::FindLabelSpot(const Label& l, ImVec2 size, const Boxes& placed,
                                      ImVec2* p) const {
  float best_overlap = 1e30f;
  // Tries the outer side of the bend, then alternately further out and on the inner side
  // (a label on the inner side hangs the other way).
  for (int attempt = 0; attempt < 16; ++attempt) {
    const ImVec2 dir = attempt % 2 == 0 ? l.normal : Mul(l.normal, -1);
    const float offset = attempt == 1 ? 22.0f : 7.0f * static_cast<float>((attempt + 1) / 2);
    ImVec2 q = attempt == 0 ? l.at : Add(l.at, Mul(dir, offset));
    q.x -= dir.x < -0.35f ? size.x : dir.x > 0.35f ? 0 : 0.5f * size.x;
    q.y -= dir.y < -0.35f ? size.y : dir.y > 0.35f ? 0 : 0.5f * size.y;
    q.x = std::clamp(q.x, box0_.x + 1, box1_.x - size.x - 1);
    q.y = std::clamp(q.y, box0_.y + 1, box1_.y - size.y - 1);
    float overlap = 0;
    for (const auto& [a, b] : placed) {
      const float w = std::min(q.x + size.x + 2, b.x) - std::max(q.x - 2, a.x);
      const float h = std::min(q.y + size.y, b.y) - std::max(q.y, a.y);
      if (w > 0 && h > 0) overlap += w * h;
    }
    if (overlap < best_overlap) {
      best_overlap = overlap;
      *p = q;  // a taken edge's label goes where it covers the least
    }
    if (overlap == 0) return true;
  }
  return false;
}

const DiagramEdge* StateDiagramPanel::PlaceLabels(ImDrawList* draw,
                                                  std::vector<Label>& labels) const {
  // Taken edges are placed first; a label that would cover one already placed moves away
  // from its edge along the edge's normal until it is clear (or gives up after a few steps).
  auto taken = [](const Label& l) { return l.edge->count > 0 || l.edge->illegal; };
  std::stable_sort(labels.begin(), labels.end(),
                   [&](const Label& x, const Label& y) { return taken(x) > taken(y); });
  // Nodes and their names are obstacles too.
  Boxes placed;
  for (State s : diagram_.machine->states) {
    const ImVec2 c = NodeCenter(s);
    placed.emplace_back(ImVec2(c.x - radius_, c.y - radius_), ImVec2(c.x + radius_, c.y + radius_));
    const float w = ImGui::CalcTextSize(NodeName(*diagram_.machine, s).c_str()).x;
    const float nx = std::clamp(c.x - w * 0.5f, box0_.x + 2, box1_.x - w - 2);
    placed.emplace_back(ImVec2(nx, c.y + radius_), ImVec2(nx + w, c.y + radius_ + 14));
  }
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const DiagramEdge* hovered = nullptr;
  for (const Label& l : labels) {
    const ImVec2 s1 = ImGui::CalcTextSize(l.line1.c_str());
    const ImVec2 s2 = l.line2.empty() ? ImVec2(0, 0) : ImGui::CalcTextSize(l.line2.c_str());
    const ImVec2 size(std::max(s1.x, s2.x), s1.y + s2.y);
    ImVec2 p;
    // An edge the trace never took keeps its line; its name is in the table below.
    if (!FindLabelSpot(l, size, placed, &p) && !taken(l)) continue;
    const ImVec2 q(p.x + size.x, p.y + size.y);
    placed.emplace_back(p, q);
    draw->AddRectFilled(ImVec2(p.x - 2, p.y), ImVec2(q.x + 2, q.y), IM_COL32(20, 20, 26, 200));
    draw->AddText(ImVec2(p.x + 0.5f * (size.x - s1.x), p.y), l.color, l.line1.c_str());
    if (!l.line2.empty())
      draw->AddText(ImVec2(p.x + 0.5f * (size.x - s2.x), p.y + s1.y),
                    l.edge->illegal ? kColorIllegalEdge : IM_COL32(160, 160, 170, 255),
                    l.line2.c_str());
    if (ImGui::IsWindowHovered() && mouse.x >= p.x && mouse.x < q.x && mouse.y >= p.y &&
        mouse.y < q.y)
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
