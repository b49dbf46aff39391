#include "inspector/app.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "imgui.h"
#include "inspector/theme.h"

namespace cltrace::inspector {

namespace {

void Place(const App::Rect& r) {
  ImGui::SetNextWindowPos(ImVec2(r.x, r.y), ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(r.w, r.h), ImGuiCond_Always);
}

}  // namespace

App::Layout App::LayoutFor(float width, float height) {
  const float top_h = std::floor(height * 0.54f);
  const float left_w = std::floor(width * 0.64f);
  const float calls_w = std::floor(width * 0.44f);
  const float details_w = std::floor(width * 0.22f);
  Layout l;
  l.lifelines = {0, 0, left_w, top_h};
  l.diagram = {left_w, 0, width - left_w, top_h};
  l.calls = {0, top_h, calls_w, height - top_h};
  l.details = {calls_w, top_h, details_w, height - top_h};
  l.tabs = {calls_w + details_w, top_h, width - calls_w - details_w, height - top_h};
  return l;
}

void App::StartLoading(const std::string& path, const BuildOptions& options) {
  path_ = path;
  loader_ = std::make_unique<Loader>();
  loader_->Start(path, options);
  status_ = Status::kLoading;
}

void App::SetModel(std::unique_ptr<TraceModel> model) {
  model_ = std::move(model);
  path_ = model_->data().path;
  view_.Reset(*model_);
  status_ = Status::kReady;
}

void App::Poll() {
  if (status_ != Status::kLoading || !loader_->done()) return;
  absl::StatusOr<std::unique_ptr<TraceModel>> m = loader_->Take();
  if (!m.ok()) {
    error_ = m.status();
    status_ = Status::kFailed;
    return;
  }
  SetModel(*std::move(m));
}

absl::Status App::Select(const std::string& token) {
  if (model_ == nullptr) return absl::FailedPreconditionError("no trace loaded");
  int r = model_->FindRow(token);
  if (r < 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "--select ", token, ": no command list, deferred context or local handle with that token"));
  view_.SelectRow(r);
  // Before the handle exists there is nothing to see: start at its first transition.
  const std::vector<Span>& spans = model_->rows()[r].spans;
  if (!spans.empty() && view_.cursor < spans.front().from) SetCursor(spans.front().from);
  return absl::OkStatus();
}

void App::SetCursor(uint64_t seq) {
  if (model_ == nullptr) return;
  view_.SetCursor(*model_, seq);
  view_.EnsureVisible(*model_, static_cast<double>(seq));
  std::vector<int> findings = model_->ViolationsAt(seq);
  view_.selected_violation = findings.empty() ? -1 : findings.front();
}

void App::NextTransition(bool backwards) {
  if (model_ == nullptr || view_.selected_row < 0) return;
  std::optional<uint64_t> t = backwards ? model_->PrevTransition(view_.selected_row, view_.cursor)
                                        : model_->NextTransition(view_.selected_row, view_.cursor);
  if (!t) return;
  int64_t ev = model_->EventAt(*t);
  if (ev >= 0) {
    view_.SelectEvent(*model_, ev);
  } else {
    view_.SetCursor(*model_, *t);
  }
  view_.cursor = *t;
  view_.EnsureVisible(*model_, static_cast<double>(*t));
}

void App::NextViolation(bool backwards) {
  if (model_ == nullptr) return;
  // From the selected finding when there is one (several may share a seq), else the cursor.
  int i;
  const int n = static_cast<int>(model_->violations().size());
  if (n == 0) return;
  if (view_.selected_violation >= 0 && view_.selected_violation < n &&
      model_->violations()[view_.selected_violation].seq == view_.cursor) {
    i = (view_.selected_violation + (backwards ? n - 1 : 1)) % n;
  } else {
    i = backwards ? model_->PrevViolation(view_.cursor) : model_->NextViolation(view_.cursor);
  }
  JumpToViolation(*model_, view_, i);
}

void App::HandleKeys() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput || model_ == nullptr) return;
  auto pressed = [](int key) { return ImGui::IsKeyPressed(key, true); };
  if (pressed(keys::kN)) NextTransition(io.KeyShift);
  if (pressed(keys::kP)) NextTransition(true);
  if (pressed(keys::kV)) NextViolation(io.KeyShift);
  const int rows = static_cast<int>(model_->rows().size());
  if (pressed(keys::kDown) && rows > 0) view_.SelectRow(std::min(rows - 1, view_.selected_row + 1));
  if (pressed(keys::kUp) && rows > 0) view_.SelectRow(std::max(0, view_.selected_row - 1));
  const double w = view_.view_to - view_.view_from;
  if (pressed(keys::kLeft)) view_.Pan(-0.15 * w);
  if (pressed(keys::kRight)) view_.Pan(0.15 * w);
  const double c = static_cast<double>(view_.cursor);
  const double anchor = c >= view_.view_from && c <= view_.view_to ? c : view_.view_from + 0.5 * w;
  if (pressed(keys::kEqual) || pressed(keys::kKeypadAdd)) view_.Zoom(*model_, 0.5, anchor);
  if (pressed(keys::kMinus) || pressed(keys::kKeypadSubtract)) view_.Zoom(*model_, 2.0, anchor);
  if (pressed(keys::kHome) || pressed(keys::kF)) view_.FitAll(*model_);
  if (pressed(keys::kZ) && view_.selected_row >= 0) {
    if (const Span* s = model_->SpanAt(view_.selected_row, view_.cursor)) {
      const double len = std::max<double>(8, static_cast<double>(s->to - s->from));
      view_.view_from = static_cast<double>(s->from) - len;
      view_.view_to = static_cast<double>(s->to) + len;
    }
  }
}

void App::DrawLoading() {
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos(ImVec2(d.x * 0.5f, d.y * 0.5f), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(std::min(d.x - 20, 560.0f), 0), ImGuiCond_Always);
  ImGui::Begin("Loading", nullptr, kFixedWindowFlags | ImGuiWindowFlags_NoTitleBar);
  ImGui::Text("cltrace-inspector: loading %s", path_.c_str());
  const float p = loader_ ? loader_->progress() : 0.0f;
  std::string overlay =
      absl::StrCat(loader_ ? loader_->phase() : "", " ", static_cast<int>(p * 100), "%");
  ImGui::ProgressBar(p, ImVec2(-1, 0), overlay.c_str());
  ImGui::End();
}

void App::DrawError() {
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos(ImVec2(d.x * 0.5f, d.y * 0.5f), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(std::min(d.x - 20, 760.0f), 0), ImGuiCond_Always);
  ImGui::Begin("Cannot load the trace", nullptr, kFixedWindowFlags);
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", error_.ToString().c_str());
  ImGui::PopTextWrapPos();
  ImGui::TextDisabled("Close the window to exit (status 2).");
  ImGui::End();
}

void App::Draw() {
  Poll();
  if (status_ == Status::kLoading) return DrawLoading();
  if (status_ == Status::kFailed) return DrawError();
  if (model_ == nullptr) return;
  HandleKeys();
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  const Layout l = LayoutFor(d.x, d.y);
  const std::string title = absl::StrCat("Lifelines - ", path_, "###lifelines");
  Place(l.lifelines);
  lifelines_.Draw(title.c_str(), *model_, view_);
  Place(l.diagram);
  diagram_.Draw("State machine###diagram", *model_, view_);
  Place(l.calls);
  calls_.Draw("Calls###calls", *model_, view_);
  Place(l.details);
  details_.Draw("Selected call###details", *model_, view_);
  Place(l.tabs);
  if (ImGui::Begin("###tabs", nullptr, kFixedWindowFlags | ImGuiWindowFlags_NoTitleBar)) {
    if (ImGui::BeginTabBar("tabs")) {
      std::string findings =
          absl::StrCat("Checker findings (", model_->violations().size(), ")###f");
      if (ImGui::BeginTabItem(findings.c_str(), nullptr,
                              show_tab_ == 0 ? ImGuiTabItemFlags_SetSelected : 0)) {
        violations_.DrawContents(*model_, view_);
        ImGui::EndTabItem();
      }
      if (ImGui::BeginTabItem("Summary", nullptr,
                              show_tab_ == 1 ? ImGuiTabItemFlags_SetSelected : 0)) {
        summary_.DrawContents(*model_, view_);
        ImGui::EndTabItem();
      }
      ImGui::EndTabBar();
      show_tab_ = -1;
    }
  }
  ImGui::End();
}

}  // namespace cltrace::inspector
