#include "inspector/theme.h"

namespace cltrace::inspector {

using rules::State;

ImU32 StateColor(State s) {
  switch (s) {
    case State::kValid:
      return IM_COL32(46, 170, 70, 255);  // green, as in the figure
    case State::kRecycleDestroyed:
      return IM_COL32(225, 140, 30, 255);  // amber: released
    case State::kRecycled:
      return IM_COL32(60, 120, 210, 255);  // blue: in the cache
    case State::kRecycleCreateFailed:
      return IM_COL32(200, 60, 140, 255);
    case State::kRecording:
      return IM_COL32(80, 200, 210, 255);  // cyan
    case State::kFinishing:
      return IM_COL32(230, 210, 80, 255);  // yellow
    case State::kClosed:
      return IM_COL32(150, 120, 210, 255);  // violet: zombie
    case State::kAbandoned:
      return IM_COL32(190, 80, 60, 255);  // brick
    case State::kFinishFailed:
      return IM_COL32(220, 50, 110, 255);
    case State::kRecycleFailed:
      return IM_COL32(220, 50, 110, 255);
    case State::kOpen:
      return IM_COL32(200, 180, 120, 255);  // sand: local open
    case State::kClosedLocal:
      return IM_COL32(95, 95, 105, 255);  // grey: local closed
    case State::kAlive:
      return IM_COL32(120, 120, 120, 255);
    case State::kCreateFailed:
      return IM_COL32(160, 60, 200, 255);  // purple: dead at birth
    case State::kDestroyed:
      return IM_COL32(215, 215, 215, 255);  // light grey end mark
    case State::kNone:
      break;
  }
  return IM_COL32(60, 60, 60, 255);
}

const char* StateLegend(State s) { return rules::InfoOf(s).legend; }

absl::Span<const State> LegendStates() {
  static constexpr State kStates[] = {
      State::kValid,       State::kRecycleDestroyed, State::kRecycled,  State::kRecording,
      State::kFinishing,   State::kClosed,           State::kAbandoned, State::kOpen,
      State::kClosedLocal, State::kFinishFailed,     State::kDestroyed,
  };
  return kStates;
}

bool BeginPanel(const char* title) {
  if (ImGui::Begin(title, nullptr, kFixedWindowFlags)) return true;
  ImGui::End();
  return false;
}

void ApplyStyle() {
  ImGui::StyleColorsDark();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowRounding = 0.0f;
  s.FrameRounding = 2.0f;
  s.WindowPadding = ImVec2(6, 6);
  s.ItemSpacing = ImVec2(6, 4);
  s.CellPadding = ImVec2(4, 1);
  s.Colors[ImGuiCol_WindowBg] = ImVec4(0.09f, 0.09f, 0.11f, 1.0f);
  s.Colors[ImGuiCol_ChildBg] = ImVec4(0.07f, 0.07f, 0.09f, 1.0f);
}

void DrawLegend() {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float h = ImGui::GetTextLineHeight();
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  bool first = true;
  auto item = [&](ImU32 color, const char* text, bool marked) {
    const float w = h + 4 + ImGui::CalcTextSize(text).x;
    if (!first) {
      ImGui::SameLine(0, 14);
      if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
    }
    first = false;
    ImVec2 p = ImGui::GetCursorScreenPos();
    draw->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + h, p.y + h - 1), color);
    if (marked) {
      draw->AddLine(ImVec2(p.x, p.y + 2), ImVec2(p.x + h, p.y + 2), kColorFolded, 2.0f);
      draw->AddLine(ImVec2(p.x, p.y + h - 2), ImVec2(p.x + h, p.y + h - 2), kColorFolded, 2.0f);
    }
    ImGui::Dummy(ImVec2(h + 2, h));
    ImGui::SameLine(0, 2);
    ImGui::TextUnformatted(text);
  };
  for (State s : LegendStates()) item(StateColor(s), StateLegend(s), false);
  item(StateColor(State::kValid), "folded (zoom in)", true);
  item(kColorViolation, "checker finding", false);
}

}  // namespace cltrace::inspector
