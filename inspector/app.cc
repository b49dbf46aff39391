#include "inspector/app.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ddi/catalog.h"
#include "imgui.h"
#include "inspector/jsonl_copy.h"
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

App::CompareLayout App::CompareLayoutFor(float width, float height) {
  const float banner_h = 64;
  const float half = std::floor(width * 0.5f);
  const float life_h = std::floor((height - banner_h) * 0.55f);
  CompareLayout l;
  l.banner = {0, 0, width, banner_h};
  l.lifelines_a = {0, banner_h, half, life_h};
  l.calls_a = {0, banner_h + life_h, half, height - banner_h - life_h};
  l.lifelines_b = {half, banner_h, width - half, life_h};
  l.calls_b = {half, banner_h + life_h, width - half, height - banner_h - life_h};
  return l;
}

App::~App() {
  if (compare_thread_.joinable()) compare_thread_.join();
}

void App::StartLoading(const std::string& path, const BuildOptions& options,
                       const std::string& second) {
  path_ = path;
  options_ = options;
  loader_ = std::make_unique<Loader>();
  loader_->Start(path, options);
  status_ = Status::kLoading;
  path_b_ = second;
  if (second.empty()) return;
  loader_b_ = std::make_unique<Loader>();
  loader_b_->Start(second, options);
  compare_done_ = false;
  compare_thread_ = std::thread([this, path, second, salvage = options.salvage] {
    compare_result_ = CompareTraceFiles(path, second, salvage);
    compare_done_.store(true, std::memory_order_release);
  });
}

void App::RetryWithSalvage() {
  if (status_ != Status::kFailed || path_.empty()) return;
  if (compare_thread_.joinable()) compare_thread_.join();
  BuildOptions o = options_;
  o.salvage = true;
  StartLoading(path_, o, path_b_);
}

void App::SetModels(std::unique_ptr<TraceModel> a, std::unique_ptr<TraceModel> b,
                    TraceComparison comparison) {
  SetModel(std::move(a));
  model_b_ = std::move(b);
  path_b_ = model_b_->data().path;
  view_b_.Reset(*model_b_);
  comparison_ = std::move(comparison);
  ApplyComparison();
}

void App::ApplyComparison() {
  // The first difference selected and marked in both traces.
  const int64_t a = comparison_->EventA(*model_);
  const int64_t b = comparison_->EventB(*model_b_);
  calls_.highlight_event = a;
  calls_b_.highlight_event = b;
  lifelines_.mark_seq = a >= 0 ? static_cast<int64_t>(model_->Call(a).seq) : -1;
  lifelines_b_.mark_seq = b >= 0 ? static_cast<int64_t>(model_b_->Call(b).seq) : -1;
  if (a >= 0) Reveal(a);
  if (b >= 0) {
    view_b_.SelectEvent(*model_b_, b);
    const int r = RowForEvent(*model_b_, static_cast<size_t>(b), -1);
    if (r >= 0) view_b_.SelectRow(r);
    view_b_.EnsureVisible(*model_b_, static_cast<double>(model_b_->Call(b).seq));
  }
}

void App::Reveal(int64_t ev) {
  if (model_ == nullptr || ev < 0) return;
  view_.SelectEvent(*model_, ev);
  const int r = RowForEvent(*model_, static_cast<size_t>(ev), view_.selected_row);
  if (r >= 0) view_.SelectRow(r);
  view_.EnsureVisible(*model_, static_cast<double>(view_.cursor));
}

void App::SetModel(std::unique_ptr<TraceModel> model) {
  model_ = std::move(model);
  path_ = model_->data().path;
  view_.Reset(*model_);
  status_ = Status::kReady;
}

void App::Poll() {
  if (status_ != Status::kLoading || !loader_->done()) return;
  if (loader_b_ != nullptr && (!loader_b_->done() || !compare_done_.load())) return;
  auto fail = [&](const absl::Status& s, const std::string& path) {
    error_ = s;
    error_text_ = DescribeLoadError(s, path, options_.salvage);
    status_ = Status::kFailed;
  };
  absl::StatusOr<std::unique_ptr<TraceModel>> m = loader_->Take();
  if (!m.ok()) return fail(m.status(), path_);
  if (loader_b_ == nullptr) return SetModel(*std::move(m));
  absl::StatusOr<std::unique_ptr<TraceModel>> b = loader_b_->Take();
  loader_b_.reset();
  compare_thread_.join();
  if (!b.ok()) return fail(b.status(), path_b_);
  if (!compare_result_.ok()) return fail(compare_result_.status(), path_);
  SetModels(*std::move(m), *std::move(b), *std::move(compare_result_));
}

void App::OpenGoTo(const std::string& text) {
  if (!goto_open_ && model_ != nullptr) goto_return_ = {view_.selected_event, view_.cursor};
  goto_open_ = true;
  goto_focus_ = true;
  std::snprintf(goto_text_, sizeof(goto_text_), "%s", text.c_str());
  goto_message_.clear();
  if (!text.empty()) (void)GoTo(text);
}

absl::Status App::GoTo(const std::string& text) {
  if (model_ == nullptr) return absl::FailedPreconditionError("no trace loaded");
  absl::StatusOr<int64_t> ev = GoToSeq(*model_, text);
  goto_ok_ = ev.ok();
  if (!ev.ok()) {
    goto_message_ = std::string(ev.status().message());
    return ev.status();
  }
  Reveal(*ev);
  const CallRecord r = model_->Call(static_cast<size_t>(*ev));
  goto_message_ =
      absl::StrCat("seq ", FormatSeq(r.seq), ": ", model_->CallLabel(*ev), " on thread ", r.tid);
  return absl::OkStatus();
}

void App::OpenFind(FindMode mode, const std::string& query) {
  find_open_ = true;
  find_focus_ = true;
  find_mode_ = static_cast<int>(mode);
  std::snprintf(find_text_, sizeof(find_text_), "%s", query.c_str());
  find_message_.clear();
}

void App::FindNext(bool backwards) {
  if (model_ == nullptr) return;
  CallFilterSpec spec;
  const std::string q = find_text_;
  if (q.empty()) {
    find_message_ = "type what to find";
    return;
  }
  switch (static_cast<FindMode>(find_mode_)) {
    case FindMode::kText:
      spec.text = q;
      break;
    case FindMode::kFunction: {
      absl::string_view name = q;
      absl::ConsumePrefix(&name, "DC::");
      const format::CallId id = format::CallIdOfName(name);
      if (id == format::CallId::kInvalid) {
        find_message_ = absl::StrCat("no function named ", q, " in the catalog");
        return;
      }
      spec.call = id;
      break;
    }
    case FindMode::kHandle: {
      const int64_t id = model_->handles().Find(q);
      if (id <= 0) {
        find_message_ = absl::StrCat("no handle ", q, " in this trace");
        return;
      }
      spec.handle = static_cast<uint64_t>(id);
      break;
    }
  }
  search_.Start(*model_, spec, view_.selected_event, backwards);
  searching_ = true;
  find_message_ = "searching";
  StepFind();
}

void App::StepFind() {
  if (!searching_) return;
  if (calls_.synchronous) {
    while (!search_.Step(calls_.step_events)) {
    }
  } else {
    search_.Step(calls_.step_events);
  }
  if (!search_.done()) {
    find_message_ = absl::StrCat(
        "searching ",
        static_cast<int>(100.0 * static_cast<double>(search_.examined()) /
                         static_cast<double>(std::max<size_t>(1, model_->call_count()))),
        "%");
    return;
  }
  searching_ = false;
  if (search_.result() < 0) {
    find_message_ = "no call matches";
    return;
  }
  Reveal(search_.result());
  const CallRecord r = model_->Call(static_cast<size_t>(search_.result()));
  find_message_ = absl::StrCat("seq ", FormatSeq(r.seq), ": ",
                               model_->CallLabel(static_cast<size_t>(search_.result())),
                               search_.wrapped() ? "  (wrapped around)" : "");
}

size_t App::CopySelection() {
  if (model_ == nullptr) return 0;
  std::vector<int64_t> calls = calls_.SelectedCalls(view_);
  if (calls.empty()) {
    copy_message_ = "nothing selected to copy";
    return 0;
  }
  const std::string jsonl = CallsAsJsonl(*model_, calls);
  ImGui::SetClipboardText(jsonl.c_str());
  copy_message_ =
      absl::StrCat("copied ", calls.size(), calls.size() == 1 ? " call" : " calls", " as JSONL");
  return calls.size();
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
  if (model_ == nullptr) return;
  auto pressed = [](int key) { return ImGui::IsKeyPressed(key, true); };
  // Keys that work while typing in the dialogs.
  if (io.KeyCtrl && pressed(keys::kG)) OpenGoTo();
  if (io.KeyCtrl && pressed(keys::kF)) OpenFind(static_cast<FindMode>(find_mode_), find_text_);
  if (find_open_ && pressed(keys::kF3)) FindNext(io.KeyShift);
  if (io.WantTextInput) return;
  if (io.KeyCtrl) {
    if (pressed(keys::kC)) CopySelection();
    return;  // Ctrl+key is never a plain key
  }
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
  ImGui::Begin("Cannot open the trace", nullptr, kFixedWindowFlags);
  const LoadErrorText& t = error_text_;
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s",
                     (t.headline.empty() ? error_.ToString() : t.headline).c_str());
  ImGui::Separator();
  ImGui::TextDisabled("what the reader said:");
  ImGui::TextUnformatted(t.detail.c_str());
  if (!t.hint.empty()) {
    ImGui::Spacing();
    ImGui::TextUnformatted(t.hint.c_str());
  }
  ImGui::PopTextWrapPos();
  ImGui::Spacing();
  if (t.salvage_may_help && ImGui::Button("Open with --salvage")) RetryWithSalvage();
  if (t.salvage_may_help) ImGui::SameLine();
  ImGui::TextDisabled("Close the window to exit (status 2).");
  ImGui::End();
}

void App::DrawGoTo() {
  if (!goto_open_) return;
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos(ImVec2(d.x * 0.5f, 60), ImGuiCond_Always, ImVec2(0.5f, 0));
  ImGui::SetNextWindowSize(ImVec2(420, 0), ImGuiCond_Always);
  bool open = true;
  ImGui::Begin("Go to seq (Ctrl+G)###goto", &open, kFixedWindowFlags);
  if (goto_focus_) {
    ImGui::SetKeyboardFocusHere();
    goto_focus_ = false;
  }
  ImGui::SetNextItemWidth(-1);
  if (ImGui::InputTextWithHint("##seq", "seq, e.g. 12,345", goto_text_, sizeof(goto_text_)))
    (void)GoTo(goto_text_);  // the cursor follows the typing
  if (goto_message_.empty()) {
    ImGui::TextDisabled("Enter or Esc closes");
  } else if (goto_ok_) {
    ImGui::TextUnformatted(goto_message_.c_str());
  } else {
    ImGui::TextColored(ImVec4(1, 0.45f, 0.45f, 1), "%s", goto_message_.c_str());
  }
  ImGui::End();
  if (ImGui::IsKeyPressed(keys::kEnter) || ImGui::IsKeyPressed(keys::kKeypadEnter)) {
    if (GoTo(goto_text_).ok()) {
      open = false;
    } else {
      goto_focus_ = true;  // Enter left the box; keep typing into it
    }
  }
  if (ImGui::IsKeyPressed(keys::kEscape)) {
    // Back to where the dialog was opened.
    open = false;
    if (goto_return_.first >= 0) {
      Reveal(goto_return_.first);
    } else {
      view_.SetCursor(*model_, goto_return_.second);
    }
    view_.cursor = goto_return_.second;
  }
  goto_open_ = open;
}

void App::DrawFind() {
  StepFind();
  if (!find_open_) return;
  const Layout l = LayoutFor(ImGui::GetIO().DisplaySize.x, ImGui::GetIO().DisplaySize.y);
  ImGui::SetNextWindowPos(ImVec2(l.calls.x + l.calls.w - 8, l.calls.y + l.calls.h - 8),
                          ImGuiCond_Always, ImVec2(1, 1));
  ImGui::SetNextWindowSize(ImVec2(560, 0), ImGuiCond_Always);
  bool open = true;
  ImGui::Begin("Find (Ctrl+F)###find", &open, kFixedWindowFlags);
  static constexpr const char* kModes[] = {"text", "function", "handle"};
  ImGui::SetNextItemWidth(100);
  ImGui::Combo("##mode", &find_mode_, kModes, 3);
  ImGui::SameLine();
  if (find_focus_) {
    ImGui::SetKeyboardFocusHere();
    find_focus_ = false;
  }
  ImGui::SetNextItemWidth(240);
  if (ImGui::InputTextWithHint("##find", "name, token or argument text", find_text_,
                               sizeof(find_text_), ImGuiInputTextFlags_EnterReturnsTrue)) {
    FindNext(ImGui::GetIO().KeyShift);
    find_focus_ = true;  // Enter left the box; the next Enter finds again
  }
  ImGui::SameLine();
  if (ImGui::ArrowButton("##prev", ImGuiDir_Up)) FindNext(true);
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Down)) FindNext(false);
  ImGui::TextDisabled("Enter / F3 next, Shift previous");
  if (!find_message_.empty()) {
    ImGui::SameLine();
    ImGui::TextUnformatted(find_message_.c_str());
  }
  ImGui::End();
  if (ImGui::IsKeyPressed(keys::kEscape)) open = false;
  find_open_ = open;
}

void App::DrawCompare() {
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  const CompareLayout l = CompareLayoutFor(d.x, d.y);
  Place(l.banner);
  if (ImGui::Begin("###compare", nullptr, kFixedWindowFlags | ImGuiWindowFlags_NoTitleBar)) {
    ImGui::Text("A  %s", path_.c_str());
    ImGui::SameLine(std::floor(d.x * 0.5f));
    ImGui::Text("B  %s", path_b_.c_str());
    const bool equal = comparison_->summary.equal();
    ImGui::TextColored(equal ? ImVec4(0.5f, 0.9f, 0.5f, 1) : ImVec4(0.95f, 0.45f, 0.95f, 1), "%s",
                       comparison_->Headline().c_str());
    if (!equal) {
      ImGui::SameLine();
      ImGui::TextDisabled(
          "(cltrace diff's alignment: threads by first appearance, handles by "
          "identity; the call is marked in both)");
    }
  }
  ImGui::End();
  const std::string ta = absl::StrCat("A: ", path_, "###lifelines");
  const std::string tb = absl::StrCat("B: ", path_b_, "###lifelines_b");
  Place(l.lifelines_a);
  lifelines_.Draw(ta.c_str(), *model_, view_);
  Place(l.calls_a);
  calls_.Draw("Calls of A###calls", *model_, view_);
  Place(l.lifelines_b);
  lifelines_b_.Draw(tb.c_str(), *model_b_, view_b_);
  Place(l.calls_b);
  calls_b_.Draw("Calls of B###calls_b", *model_b_, view_b_);
}

void App::Draw() {
  Poll();
  if (status_ == Status::kLoading) return DrawLoading();
  if (status_ == Status::kFailed) return DrawError();
  if (model_ == nullptr) return;
  HandleKeys();
  if (comparing()) {
    DrawCompare();
    DrawGoTo();
    DrawFind();
    return;
  }
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
  if (details_.copy_requested) CopySelection();
  details_.copy_message = copy_message_;
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
  DrawGoTo();
  DrawFind();
}

}  // namespace cltrace::inspector
