#include "inspector/violations_panel.h"

#include <string>

#include "imgui.h"
#include "inspector/header_table.h"
#include "inspector/lifelines_panel.h"

namespace cltrace::inspector {

void JumpToViolation(const TraceModel& model, View& view, int index) {
  if (index < 0 || index >= static_cast<int>(model.violations().size())) return;
  const check::Violation& v = model.violations()[index];
  view.selected_violation = index;
  int64_t ev = model.EventAt(v.seq);
  if (ev >= 0) {
    view.SelectEvent(model, ev);
  } else {
    view.SetCursor(model, v.seq);
  }
  if (v.handle != 0) {
    int r = model.RowOfHandle(v.handle);
    if (r >= 0) view.SelectRow(r);
  }
  view.EnsureVisible(model, static_cast<double>(v.seq));
}

void ViolationsPanel::DrawContents(const TraceModel& model, View& view) {
  const std::vector<check::Violation>& vs = model.violations();
  if (vs.empty()) {
    ImGui::TextColored(ImVec4(0.4f, 0.85f, 0.45f, 1),
                       "The checker found nothing: every handle followed its state machine.");
    return;
  }
  ImGui::Text("%llu errors, %llu warnings%s", static_cast<unsigned long long>(model.error_count()),
              static_cast<unsigned long long>(vs.size() - model.error_count()),
              model.dropped_findings() ? " (more dropped: over the limit)" : "");
  ImGui::SameLine();
  ImGui::TextDisabled("  V / shift+V: next / previous");
  const ImGuiTableFlags flags = ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
  if (!BeginHeaderTable("violations", flags,
                        {{"seq", 70}, {"rule", 40}, {"handle", 60}, {"finding"}})) {
    return;
  }
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(vs.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const check::Violation& v = vs[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(i);
      std::string seq = FormatSeq(v.seq);
      if (ImGui::Selectable(seq.c_str(), view.selected_violation == i,
                            ImGuiSelectableFlags_SpanAllColumns))
        JumpToViolation(model, view, i);
      ImGui::PopID();
      const ImVec4 col = v.severity == check::Severity::kError ? ImVec4(1, 0.4f, 0.4f, 1)
                                                               : ImVec4(1, 0.8f, 0.35f, 1);
      ImGui::TableNextColumn();
      ImGui::TextColored(col, "%s", v.id());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(model.Token(v.handle).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(v.message.c_str());
    }
  }
  ImGui::EndTable();
}

}  // namespace cltrace::inspector
