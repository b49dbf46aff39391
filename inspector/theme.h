// Colors and style of the inspector: one color per handle state (Valid in green, as in the
// command-list figure of the documentation), the legend, and the ImGui style.
//
// Thread-safety: constant tables; ApplyStyle touches the current ImGui context.
//
// Example:
//   draw->AddRectFilled(a, b, StateColor(rules::State::kValid));
#ifndef CLTRACE_INSPECTOR_THEME_H_
#define CLTRACE_INSPECTOR_THEME_H_

#include <cstdint>

#include "absl/types/span.h"
#include "imgui.h"
#include "rules/state_machines.h"

namespace cltrace::inspector {

// Packed RGBA (ImGui's IM_COL32 layout) of a state's fill.
ImU32 StateColor(rules::State s);
// Short legend text ("Valid (V)"), from the state table of rules/state_machines.h.
const char* StateLegend(rules::State s);

// The states in legend order.
absl::Span<const rules::State> LegendStates();

inline constexpr ImU32 kColorFolded = IM_COL32(255, 255, 255, 150);  // folded-block marks
inline constexpr ImU32 kColorCursor = IM_COL32(255, 230, 60, 255);
inline constexpr ImU32 kColorViolation = IM_COL32(235, 40, 40, 255);
inline constexpr ImU32 kColorSelectedRow = IM_COL32(70, 90, 140, 110);
inline constexpr ImU32 kColorIllegalEdge = IM_COL32(235, 50, 50, 255);
// The side-by-side view's first difference: its call's row and its mark on the lifelines.
inline constexpr ImU32 kColorDifference = IM_COL32(200, 60, 200, 150);
inline constexpr ImU32 kColorDifferenceMark = IM_COL32(240, 100, 240, 255);

// The inspector's windows are laid out by the app: none moves, resizes or collapses.
inline constexpr ImGuiWindowFlags kFixedWindowFlags =
    ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse;

// Begins a panel's fixed window. False when there is nothing to draw (the window is already
// ended); true when the caller draws its content and then calls ImGui::End().
bool BeginPanel(const char* title);

// Dark style, slightly tighter spacing than ImGui's default.
void ApplyStyle();

// Draws the color legend inline (one swatch + text per state), wrapping at the window edge.
void DrawLegend();

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_THEME_H_
