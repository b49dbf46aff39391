#include "inspector/summary_panel.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "ddi/catalog.h"
#include "imgui.h"
#include "inspector/header_table.h"
#include "inspector/lifelines_panel.h"

namespace cltrace::inspector {
namespace {

// A row of a two-column count table: `label`, then the count.
void CountRow(absl::string_view label, uint64_t n) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(label.data(), label.data() + label.size());
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(FormatSeq(n).c_str());
}

}  // namespace

void SummaryPanel::DrawContents(const TraceModel& model, View& view) {
  (void)view;
  if (model_ != &model || summary_ == nullptr) {
    model_ = &model;
    summary_ = std::make_unique<Summary>(Summarize(model, 160));
  }
  const Summary& s = *summary_;
  ImGui::Text("%s calls on %zu threads; %llu command-list handles, %llu deferred contexts",
              FormatSeq(s.calls).c_str(), s.threads.size(),
              static_cast<unsigned long long>(s.command_lists),
              static_cast<unsigned long long>(s.deferred_contexts));
  ImGui::Text("recycle rate %.1f%%  (%s RecycleCreateCommandList of %s lists made)",
              100.0 * s.recycle_rate(), FormatSeq(s.recycle_creates).c_str(),
              FormatSeq(s.creates + s.recycle_creates).c_str());
  ImGui::Text("%s recycle-destroys, %s destroys; findings: %llu errors, %llu warnings",
              FormatSeq(s.recycle_destroys).c_str(), FormatSeq(s.destroys).c_str(),
              static_cast<unsigned long long>(s.errors),
              static_cast<unsigned long long>(s.warnings));
  const float w = ImGui::GetContentRegionAvail().x;
  auto plot = [&](const char* label, const std::vector<float>& v) {
    const float peak = v.empty() ? 0.0f : *std::max_element(v.begin(), v.end());
    std::string overlay = absl::StrCat(label, " (peak ", static_cast<int64_t>(peak), ")");
    ImGui::PlotLines(absl::StrCat("##", label).c_str(), v.data(), static_cast<int>(v.size()), 0,
                     overlay.c_str(), 0.0f, std::max(1.0f, peak * 1.1f), ImVec2(w, 34));
  };
  ImGui::TextDisabled("alive over the trace (seq %s .. %s):", FormatSeq(model.first_seq()).c_str(),
                      FormatSeq(model.end_seq()).c_str());
  plot("command lists alive", s.alive_command_lists);
  plot("deferred contexts alive", s.alive_deferred_contexts);
  plot("local handles open", s.open_locals);
  const ImGuiTableFlags flags = ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
  const float h = ImGui::GetContentRegionAvail().y;
  if (BeginHeaderTable("functions", flags, {{"function"}, {"calls", 80}}, ImVec2(w * 0.62f, h))) {
    for (const auto& [call, n] : s.functions) CountRow(format::GetCall(call)->name, n);
    ImGui::EndTable();
  }
  ImGui::SameLine();
  if (BeginHeaderTable("threads", flags, {{"thread"}, {"calls", 70}}, ImVec2(0, h))) {
    for (const auto& [tid, n] : s.threads) CountRow(absl::StrCat(tid), n);
    ImGui::EndTable();
  }
}

}  // namespace cltrace::inspector
