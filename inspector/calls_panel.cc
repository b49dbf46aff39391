#include "inspector/calls_panel.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"
#include "inspector/header_table.h"
#include "inspector/lifelines_panel.h"
#include "inspector/theme.h"

namespace cltrace::inspector {
namespace {

std::string ArgsText(const TraceModel& m, const format::Event& e) {
  if (!format::CheckEventLayout(e).ok()) return "(arguments do not match the catalog)";
  return format::ArgsToText(e, m.handles(), m.strings());
}

// Splits "a=1, b=[x, y], c={..}" at the commas outside brackets.
std::vector<std::string> SplitArgs(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      if (i + 1 < s.size() && s[i + 1] == ' ') ++i;
      continue;
    }
    cur.push_back(c);
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// A combo of `width` pixels choosing *selected among the labels of `items`.
template <typename Key>
void SelectionCombo(const char* id, float width,
                    const std::vector<std::pair<Key, std::string>>& items, int* selected) {
  ImGui::SetNextItemWidth(width);
  if (!ImGui::BeginCombo(id, items[*selected].second.c_str())) return;
  for (int i = 0; i < static_cast<int>(items.size()); ++i) {
    if (ImGui::Selectable(items[i].second.c_str(), i == *selected)) *selected = i;
  }
  ImGui::EndCombo();
}

}  // namespace

int RowForEvent(const TraceModel& model, size_t event, int current) {
  std::vector<uint64_t> hs;
  absl::StatusOr<std::shared_ptr<const format::Event>> e = model.DecodeEvent(event);
  if (!e.ok()) return -1;
  HandleFieldsOf(**e, &hs);
  int best = -1, best_rank = 99;
  for (uint64_t h : hs) {
    int r = model.RowOfHandle(h);
    if (r < 0) continue;
    if (r == current) return r;
    // A DC-table call names its DC first (hDevice); the object it acts on says more.
    int rank = model.rows()[r].kind == RowKind::kCommandList ? 0
               : model.rows()[r].kind == RowKind::kLocal     ? 1
                                                             : 2;
    if (rank < best_rank) {
      best = r;
      best_rank = rank;
    }
  }
  return best;
}

void CallsPanel::Prepare(const TraceModel& model) {
  if (model_ == &model) return;
  model_ = &model;
  functions_.clear();
  functions_.emplace_back(format::CallId::kInvalid, "any function");
  std::vector<std::pair<std::string, format::CallId>> present;
  const std::vector<uint64_t>& counts = model.call_counts();
  for (size_t c = 1; c < counts.size(); ++c) {
    if (counts[c] == 0) continue;
    present.emplace_back(format::GetCall(static_cast<uint32_t>(c))->name,
                         static_cast<format::CallId>(c));
  }
  std::sort(present.begin(), present.end());
  for (const auto& [name, id] : present)
    functions_.emplace_back(
        id, absl::StrCat(name, " (", FormatSeq(counts[static_cast<size_t>(id)]), ")"));
  threads_.clear();
  threads_.emplace_back(-1, "any thread");
  for (const auto& [tid, n] : model.thread_counts())
    threads_.emplace_back(tid, absl::StrCat("thread ", tid, " (", FormatSeq(n), ")"));
  function = 0;
  thread = 0;
  filter_.Reset(model, {});
}

CallFilterSpec CallsPanel::SpecFromInputs(const TraceModel& model) const {
  CallFilterSpec spec;
  if (function > 0 && function < static_cast<int>(functions_.size()))
    spec.call = functions_[function].first;
  if (thread > 0 && thread < static_cast<int>(threads_.size())) spec.tid = threads_[thread].first;
  if (handle[0] != '\0') {
    int64_t id = model.handles().Find(handle);
    spec.handle = id > 0 ? static_cast<uint64_t>(id) : ~uint64_t{0};  // unknown: nothing matches
  }
  spec.text = text;
  return spec;
}

void CallsPanel::Draw(const char* title, const TraceModel& model, View& view) {
  if (!BeginPanel(title)) return;
  Prepare(model);
  DrawFilters(view);
  StepFilter(model, view);
  DrawTable(model, view);
  ImGui::End();
}

void CallsPanel::DrawFilters(View& view) {
  SelectionCombo("##function", 210, functions_, &function);
  ImGui::SameLine();
  SelectionCombo("##thread", 130, threads_, &thread);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  ImGui::InputTextWithHint("##handle", "handle", handle, sizeof(handle));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(120);
  ImGui::InputTextWithHint("##text", "text", text, sizeof(text));
  ImGui::SameLine();
  const bool clear = ImGui::Button("clear");
  clear_center_ = ImVec2(0.5f * (ImGui::GetItemRectMin().x + ImGui::GetItemRectMax().x),
                         0.5f * (ImGui::GetItemRectMin().y + ImGui::GetItemRectMax().y));
  if (clear) {
    // Clearing the filters keeps the selected call and brings it into view.
    function = 0;
    thread = 0;
    handle[0] = '\0';
    text[0] = '\0';
    view.scroll_calls = true;
  }
}

void CallsPanel::StepFilter(const TraceModel& model, View& view) {
  CallFilterSpec spec = SpecFromInputs(model);
  if (!(spec == filter_.spec())) {
    filter_.Reset(model, spec);
    view.scroll_calls = true;  // the selected call stays in view (once the scan reaches it)
  }
  if (synchronous) {
    while (!filter_.Step(step_events)) {
    }
  } else {
    const auto start = std::chrono::steady_clock::now();
    while (!filter_.Step(step_events) &&
           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                   .count() < step_ms) {
    }
  }
  if (filter_.done()) {
    ImGui::Text("%s of %s calls", FormatSeq(filter_.size()).c_str(),
                FormatSeq(model.call_count()).c_str());
  } else {
    ImGui::Text("%s matches so far", FormatSeq(filter_.size()).c_str());
    ImGui::SameLine();
    ImGui::ProgressBar(filter_.progress(), ImVec2(160, 0));
  }
}

void CallsPanel::DrawTable(const TraceModel& model, View& view) {
  const ImGuiTableFlags flags = ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_SizingFixedFit;
  if (!BeginHeaderTable("calls", flags,
                        {{"seq", 78}, {"tid", 30}, {"call", 200}, {"arguments"}, {"ret", 60}})) {
    return;
  }
  const float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
  if (view.scroll_calls && view.selected_event >= 0 &&
      (filter_.done() ||
       filter_.size() > filter_.LowerBound(static_cast<size_t>(view.selected_event)))) {
    const size_t pos = filter_.LowerBound(static_cast<size_t>(view.selected_event));
    const float y = static_cast<float>(pos) * row_h;
    const float h = ImGui::GetWindowHeight() - 2 * row_h;
    if (y < ImGui::GetScrollY() || y > ImGui::GetScrollY() + h)
      ImGui::SetScrollY(std::max(0.0f, y - 0.4f * h));
  }
  if (view.selected_event < 0 || filter_.done() ||
      filter_.size() > filter_.LowerBound(static_cast<size_t>(view.selected_event)))
    view.scroll_calls = false;
  ImGuiListClipper clipper;
  // The selected range, as call indices (the list is in call order).
  int64_t range_lo = view.selected_event, range_hi = view.selected_event;
  if (view.range_anchor >= 0 && view.selected_event >= 0) {
    range_lo = std::min(view.range_anchor, view.selected_event);
    range_hi = std::max(view.range_anchor, view.selected_event);
  }
  range_lo_ = range_lo;
  range_hi_ = range_hi;
  clipper.Begin(static_cast<int>(filter_.size()), row_h);
  drawn_count_ = 0;
  drawn_row_h_ = row_h;
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (i == clipper.DisplayStart && clipper.DisplayEnd - clipper.DisplayStart > 1) {
        drawn_first_ = static_cast<size_t>(i);
        drawn_count_ = static_cast<size_t>(clipper.DisplayEnd - clipper.DisplayStart);
        drawn_y0_ = ImGui::GetCursorScreenPos().y;
      }
      DrawRow(model, view, filter_.at(static_cast<size_t>(i)));
    }
  }
  ImGui::EndTable();
}

void CallsPanel::DrawRow(const TraceModel& model, View& view, size_t ev) {
  const CallRecord e = model.Call(ev);
  ImGui::PushID(static_cast<int>(ev));
  std::string seq = FormatSeq(e.seq);
  const int64_t at = static_cast<int64_t>(ev);
  if (at == highlight_event) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, kColorDifference);
  if (ImGui::Selectable(seq.c_str(), at >= range_lo_ && at <= range_hi_,
                        ImGuiSelectableFlags_SpanAllColumns)) {
    // Shift+click extends the selection from the call selected before.
    const int64_t anchor = view.range_anchor >= 0 ? view.range_anchor : view.selected_event;
    const bool extend = ImGui::GetIO().KeyShift && anchor >= 0;
    view.SelectEvent(model, at);
    if (extend) view.range_anchor = anchor;
    view.scroll_calls = false;  // it is on screen
    int r = RowForEvent(model, ev, view.selected_row);
    if (r >= 0) view.SelectRow(r);
    view.EnsureVisible(model, static_cast<double>(e.seq));
  }
  ImGui::PopID();
  ImGui::TableNextColumn();
  ImGui::Text("%u", e.tid);
  ImGui::TableNextColumn();
  const bool callback = e.parent != 0;
  std::string label = model.CallLabel(ev);
  if (callback) label = absl::StrCat("  ", label);
  if (model.ViolationsAt(e.seq).empty()) {
    ImGui::TextUnformatted(label.c_str());
  } else {
    ImGui::TextColored(ImVec4(1, 0.35f, 0.35f, 1), "%s", label.c_str());
  }
  ImGui::TableNextColumn();
  absl::StatusOr<std::shared_ptr<const format::Event>> full = model.DecodeEvent(ev);
  std::string args = full.ok() ? ArgsText(model, **full) : std::string(full.status().message());
  ImGui::TextUnformatted(args.c_str());
  ImGui::TableNextColumn();
  std::string ret = e.end == 0  ? std::string("(no return)")
                    : full.ok() ? format::RetToText(**full)
                                : std::string("?");
  ImGui::TextUnformatted(ret.c_str());
}

std::vector<int64_t> CallsPanel::SelectedCalls(const View& view) const {
  std::vector<int64_t> out;
  if (view.selected_event < 0) return out;
  if (view.range_anchor < 0) return {view.selected_event};
  const size_t lo = static_cast<size_t>(std::min(view.range_anchor, view.selected_event));
  const size_t hi = static_cast<size_t>(std::max(view.range_anchor, view.selected_event));
  for (size_t i = filter_.LowerBound(lo); i < filter_.size() && filter_.at(i) <= hi; ++i)
    out.push_back(static_cast<int64_t>(filter_.at(i)));
  return out;
}

float CallsPanel::RowCenterY(size_t i) const {
  if (i < drawn_first_ || i >= drawn_first_ + drawn_count_) return -1;
  return drawn_y0_ + (static_cast<float>(i - drawn_first_) + 0.5f) * drawn_row_h_ -
         ImGui::GetStyle().CellPadding.y;
}

void CallDetailsPanel::Draw(const char* title, const TraceModel& model, View& view) {
  if (!BeginPanel(title)) return;
  const int64_t ev = view.selected_event;
  if (ev < 0 || ev >= static_cast<int64_t>(model.call_count())) {
    ImGui::TextDisabled("select a call (calls list, or click a lifeline)");
    ImGui::End();
    return;
  }
  absl::StatusOr<std::shared_ptr<const format::Event>> decoded =
      model.DecodeEvent(static_cast<size_t>(ev));
  if (!decoded.ok()) {
    ImGui::TextWrapped("%s", std::string(decoded.status().message()).c_str());
    ImGui::End();
    return;
  }
  const format::Event& e = **decoded;
  const format::CallInfo* ci = format::GetCall(e.call);

  copy_requested = ImGui::SmallButton("copy as JSONL (Ctrl+C)");
  if (!copy_message.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", copy_message.c_str());
  }
  ImGui::Text("%s", model.CallLabel(static_cast<size_t>(ev)).c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("%s", ci ? std::string(format::LayerName(ci->layer)).c_str() : "");
  ImGui::Text("thread %u   entry seq %s   exit seq %s", e.tid, FormatSeq(e.seq).c_str(),
              e.end ? FormatSeq(e.end).c_str() : "never (the process died inside it)");
  if (e.end != 0 && ci != nullptr && ci->ret != format::ReturnKind::kVoid)
    ImGui::Text("returned %s", format::RetToText(e).c_str());
  if (e.annotation != 0)
    ImGui::Text("API call: %s", std::string(model.strings().Token(e.annotation)).c_str());
  if (e.parent != 0) {
    int64_t p = model.EventAt(e.parent);
    std::string label = p >= 0 ? absl::StrCat("inside ", model.CallLabel(static_cast<size_t>(p)),
                                              " (seq ", FormatSeq(e.parent), ")")
                               : absl::StrCat("inside seq ", e.parent, " (not in the trace)");
    if (ImGui::SmallButton(label.c_str()) && p >= 0) view.SelectEvent(model, p);
  }
  ImGui::Separator();
  if (ImGui::BeginTable("args", 2,
                        ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("field", ImGuiTableColumnFlags_WidthFixed, 110);
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
    for (const std::string& a : SplitArgs(ArgsText(model, e))) {
      const size_t eq = a.find('=');
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", eq == std::string::npos ? "" : a.substr(0, eq).c_str());
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", eq == std::string::npos ? a.c_str() : a.substr(eq + 1).c_str());
    }
    ImGui::EndTable();
  }
  // State changes this call caused.
  bool header = false;
  for (int r = 0; r < static_cast<int>(model.rows().size()); ++r) {
    int i = model.SpanIndexAt(r, e.seq);
    if (i < 0) continue;
    const Row& row = model.rows()[r];
    const Span& s = row.spans[i];
    if (s.from != e.seq) continue;
    if (!header) {
      ImGui::Separator();
      ImGui::TextUnformatted("state changes:");
      header = true;
    }
    const char* before =
        i > 0 && row.spans[i - 1].lifetime == s.lifetime && row.spans[i - 1].to == s.from
            ? check::StateName(row.spans[i - 1].state).data()
            : "(new)";
    ImGui::PushID(r);
    std::string t = absl::StrCat(row.label, ": ", before, " -> ", check::StateName(s.state));
    if (ImGui::Selectable(t.c_str(), view.selected_row == r)) view.SelectRow(r);
    ImGui::PopID();
  }
  std::vector<int> findings = model.ViolationsAt(e.seq);
  if (!findings.empty()) {
    ImGui::Separator();
    for (int vi : findings) {
      const check::Violation& v = model.violations()[vi];
      ImGui::TextColored(ImVec4(1, 0.35f, 0.35f, 1), "%s %s:", v.id(),
                         v.severity == check::Severity::kError ? "error" : "warning");
      ImGui::SameLine();
      ImGui::TextWrapped("%s", v.message.c_str());
    }
  }
  std::vector<size_t> children = model.Children(static_cast<size_t>(ev));
  if (!children.empty()) {
    ImGui::Separator();
    ImGui::Text("nested calls (%zu):", children.size());
    for (size_t c : children) {
      absl::StatusOr<std::shared_ptr<const format::Event>> ce = model.DecodeEvent(c);
      if (!ce.ok()) continue;
      ImGui::PushID(static_cast<int>(c));
      std::string t = absl::StrCat(FormatSeq((*ce)->seq), "  ", model.CallLabel(c), "(",
                                   ArgsText(model, **ce), ")");
      if (ImGui::Selectable(t.c_str(), false)) view.SelectEvent(model, static_cast<int64_t>(c));
      ImGui::PopID();
    }
  }
  ImGui::End();
}

}  // namespace cltrace::inspector
