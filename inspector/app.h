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
//
// Thread-safety: UI thread only (the loader runs its own thread).
//
// Example:
//   App app;
//   app.StartLoading("t.cltrace");
//   while (running) { ImGui::NewFrame(); app.Draw(); ImGui::Render(); ... }
#ifndef CLTRACE_INSPECTOR_APP_H_
#define CLTRACE_INSPECTOR_APP_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "inspector/calls_panel.h"
#include "inspector/lifelines_panel.h"
#include "inspector/loader.h"
#include "inspector/model.h"
#include "inspector/state_diagram_panel.h"
#include "inspector/summary_panel.h"
#include "inspector/view.h"
#include "inspector/violations_panel.h"

namespace cltrace::inspector {

// GLFW key codes (GLFW/glfw3.h) for io.KeysDown.
namespace keys {
inline constexpr int kN = 'N', kP = 'P', kV = 'V', kF = 'F', kZ = 'Z';
inline constexpr int kMinus = 45, kEqual = 61;
inline constexpr int kRight = 262, kLeft = 263, kDown = 264, kUp = 265, kHome = 268;
inline constexpr int kKeypadSubtract = 333, kKeypadAdd = 334;
}  // namespace keys

class App {
 public:
  enum class Status { kEmpty, kLoading, kReady, kFailed };

  App() = default;

  // Starts loading in the background; Draw shows progress until it is done.
  void StartLoading(const std::string& path, const BuildOptions& options = {});
  // Uses a model built elsewhere (headless rendering, tests).
  void SetModel(std::unique_ptr<TraceModel> model);
  // Picks up a finished load; called by Draw, callable by platform code that must wait.
  void Poll();

  // Draws every window. Call between ImGui::NewFrame and ImGui::Render.
  void Draw();

  Status status() const { return status_; }
  const absl::Status& error() const { return error_; }
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

 private:
  void DrawLoading();
  void DrawError();
  void HandleKeys();

  Status status_ = Status::kEmpty;
  int show_tab_ = -1;
  absl::Status error_;
  std::string path_;
  std::unique_ptr<Loader> loader_;
  std::unique_ptr<TraceModel> model_;
  View view_;
  LifelinesPanel lifelines_;
  StateDiagramPanel diagram_;
  CallsPanel calls_;
  CallDetailsPanel details_;
  ViolationsPanel violations_;
  SummaryPanel summary_;
};

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_APP_H_
