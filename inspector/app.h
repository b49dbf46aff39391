// The inspector application: loads a trace in the background (progress bar meanwhile), then
// lays out the panels — lifelines and the state diagram on top, calls, the selected call and
// the findings/summary tabs below — and handles the keyboard. Platform code (the GLFW window,
// the EGL headless renderer, tests) owns the ImGui context and calls Draw once per frame
// between ImGui::NewFrame and ImGui::Render.
//
// Keys (io.KeysDown indices are GLFW key codes, which the GLFW backend writes; the headless
// path and tests write the same codes):
//   N / P (or shift+N)   next / previous transition of the selected handle
//   V / shift+V          next / previous checker finding
//   Up / Down            previous / next handle row
//   Left / Right         pan;  = / -  zoom in / out;  Home or F  fit the whole trace
//   Z                    zoom to the selected handle's span at the cursor
//   Ctrl+G               go to seq (a small dialog; the cursor follows as you type, Enter
//                        keeps it there, Esc returns)
//   Ctrl+F               find (text, function or handle); Enter / F3 next, shift previous
//   Ctrl+C               copy the selected call, or the shift+click range, as JSONL
//
// Two traces (StartLoading with a second path, or SetModels): the side-by-side view, A on the
// left and B on the right, each with its lifelines and calls, the first difference of
// `cltrace diff` selected in both and marked (diff_view.h).
//
// Thread-safety: UI thread only (the loader runs its own thread).
//
// Example:
//   App app;
//   app.StartLoading("t.cltrace");
//   while (running) { ImGui::NewFrame(); app.Draw(); ImGui::Render(); ... }
#ifndef CLTRACE_INSPECTOR_APP_H_
#define CLTRACE_INSPECTOR_APP_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "inspector/calls_panel.h"
#include "inspector/diff_view.h"
#include "inspector/lifelines_panel.h"
#include "inspector/load_error.h"
#include "inspector/loader.h"
#include "inspector/model.h"
#include "inspector/search.h"
#include "inspector/state_diagram_panel.h"
#include "inspector/summary_panel.h"
#include "inspector/view.h"
#include "inspector/violations_panel.h"

namespace cltrace::inspector {

// GLFW key codes (GLFW/glfw3.h) for io.KeysDown.
namespace keys {
inline constexpr int kN = 'N', kP = 'P', kV = 'V', kF = 'F', kZ = 'Z';
inline constexpr int kC = 'C', kG = 'G';
inline constexpr int kEscape = 256, kEnter = 257, kKeypadEnter = 335, kF3 = 292;
inline constexpr int kMinus = 45, kEqual = 61;
inline constexpr int kRight = 262, kLeft = 263, kDown = 264, kUp = 265, kHome = 268;
inline constexpr int kKeypadSubtract = 333, kKeypadAdd = 334;
}  // namespace keys

class App {
 public:
  enum class Status { kEmpty, kLoading, kReady, kFailed };

  App() = default;
  ~App();  // joins the comparison thread
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Starts loading in the background; Draw shows progress until it is done. With `second`,
  // also loads it and compares the two (the side-by-side view).
  void StartLoading(const std::string& path, const BuildOptions& options = {},
                    const std::string& second = "");
  // Uses a model built elsewhere (headless rendering, tests).
  void SetModel(std::unique_ptr<TraceModel> model);
  // The side-by-side view of models built elsewhere and their comparison.
  void SetModels(std::unique_ptr<TraceModel> a, std::unique_ptr<TraceModel> b,
                 TraceComparison comparison);
  // Picks up a finished load; called by Draw, callable by platform code that must wait.
  void Poll();

  // Draws every window. Call between ImGui::NewFrame and ImGui::Render.
  void Draw();

  Status status() const { return status_; }
  const absl::Status& error() const { return error_; }
  // The failed load's dialog text (status kFailed).
  const LoadErrorText& error_text() const { return error_text_; }
  // The dialog's "Open with --salvage" button: loads the same file again, salvaging.
  void RetryWithSalvage();
  float load_progress() const { return loader_ ? loader_->progress() : 0.0f; }
  const TraceModel* model() const { return model_.get(); }
  View& view() { return view_; }

  // --select HANDLE: selects its row (the cursor moves to its first transition if it is
  // earlier). InvalidArgument if the token names no row.
  absl::Status Select(const std::string& token);
  // --at SEQ: cursor (and selected call) at seq, panned into view.
  void SetCursor(uint64_t seq);

  // Brings the findings (0) or summary (1) tab to the front on the next frame.
  void ShowTab(int tab) { show_tab_ = tab; }

  // Keyboard actions (also bound to keys; exposed for tests and the headless flags).
  void NextTransition(bool backwards);
  void NextViolation(bool backwards);

  // Go to seq: opens the dialog with `text` typed in (--goto). GoTo selects the call the
  // text names (search.h GoToSeq) and its handle's row; the error says why not.
  void OpenGoTo(const std::string& text = "");
  bool goto_open() const { return goto_open_; }
  const std::string& goto_message() const { return goto_message_; }
  absl::Status GoTo(const std::string& text);

  // Find: what the find bar searches for. Mode text (name, tokens, arguments), function
  // (a catalog name, "DC::" allowed) or handle (a token).
  enum class FindMode { kText, kFunction, kHandle };
  void OpenFind(FindMode mode = FindMode::kText, const std::string& query = "");
  bool find_open() const { return find_open_; }
  // Starts searching from the selected call; the result is selected when the search ends
  // (in this frame when calls().synchronous, else over the next frames).
  void FindNext(bool backwards);
  const std::string& find_message() const { return find_message_; }

  // Copies the selected calls (CallsPanel::SelectedCalls) as JSONL to the clipboard;
  // returns how many.
  size_t CopySelection();
  const std::string& copy_message() const { return copy_message_; }

  // The side-by-side view (two traces): B's model, view and panels, the comparison.
  bool comparing() const { return model_b_ != nullptr; }
  const TraceModel* model_b() const { return model_b_.get(); }
  View& view_b() { return view_b_; }
  LifelinesPanel& lifelines_b() { return lifelines_b_; }
  CallsPanel& calls_b() { return calls_b_; }
  const std::optional<TraceComparison>& comparison() const { return comparison_; }

  LifelinesPanel& lifelines() { return lifelines_; }
  StateDiagramPanel& diagram() { return diagram_; }
  CallsPanel& calls() { return calls_; }
  CallDetailsPanel& details() { return details_; }
  ViolationsPanel& violations() { return violations_; }
  SummaryPanel& summary() { return summary_; }

  // Window rectangles of the layout for a display size (x, y, w, h), for tests.
  struct Rect {
    float x, y, w, h;
  };
  struct Layout {
    Rect lifelines, diagram, calls, details, tabs;
  };
  static Layout LayoutFor(float width, float height);
  // The side-by-side view: the banner across the top, then A's and B's lifelines and calls.
  struct CompareLayout {
    Rect banner, lifelines_a, calls_a, lifelines_b, calls_b;
  };
  static CompareLayout CompareLayoutFor(float width, float height);

 private:
  void DrawLoading();
  void DrawError();
  void HandleKeys();
  void DrawGoTo();
  void DrawFind();
  void StepFind();
  void DrawCompare();
  void ApplyComparison();
  // Selects call `ev` of the main trace, its handle's row, and brings it into view.
  void Reveal(int64_t ev);

  Status status_ = Status::kEmpty;
  int show_tab_ = -1;
  absl::Status error_;
  std::string path_;
  BuildOptions options_;
  LoadErrorText error_text_;
  std::unique_ptr<Loader> loader_;
  std::unique_ptr<TraceModel> model_;
  View view_;
  LifelinesPanel lifelines_;
  StateDiagramPanel diagram_;
  CallsPanel calls_;
  CallDetailsPanel details_;
  ViolationsPanel violations_;
  SummaryPanel summary_;

  bool goto_open_ = false, goto_focus_ = false;
  char goto_text_[32] = "";
  std::string goto_message_;
  bool goto_ok_ = false;
  std::pair<int64_t, uint64_t> goto_return_{-1, 0};  // selected call and cursor before it

  bool find_open_ = false, find_focus_ = false;
  int find_mode_ = 0;  // FindMode
  char find_text_[128] = "";
  std::string find_message_;
  CallSearch search_;
  bool searching_ = false;

  std::string copy_message_;

  // The side-by-side view.
  std::string path_b_;
  std::unique_ptr<Loader> loader_b_;
  std::thread compare_thread_;
  std::atomic<bool> compare_done_{false};
  absl::StatusOr<TraceComparison> compare_result_ = absl::UnknownError("not compared");
  std::unique_ptr<TraceModel> model_b_;
  View view_b_;
  LifelinesPanel lifelines_b_;
  CallsPanel calls_b_;
  std::optional<TraceComparison> comparison_;
};

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_APP_H_
