// cltrace-inspector FILE [SECOND] [--screenshot OUT.png [--size WxH]] [--select HANDLE]
//                        [--at SEQ] [--view FROM:TO] [--tab findings|summary] [--hover X,Y]
//                        [--goto SEQ] [--find [text:|function:|handle:]QUERY] [--salvage]
//
// SECOND opens the side-by-side view of FILE and SECOND with their first difference marked.
// --goto and --find open the go-to and find dialogs with that input applied (for pictures and
// scripts; the window has Ctrl+G and Ctrl+F).
//
// --salvage skips corrupt chunks of a .cltrace (as the cltrace verbs' --salvage does);
// without it a damaged trace is not shown.
// Without --screenshot: a GLFW window (1600x900) that loads FILE in the background.
// With --screenshot: loads FILE, renders one frame offscreen (--hover puts the mouse there, for
// pictures of tooltips) (EGL surfaceless Mesa; no display
// needed), writes the PNG and exits. Exit status: 0; 1 when no window / offscreen context can
// be made; 2 on bad arguments or a trace that cannot be read (the message says why; the PNG
// then shows the dialog the window would show).
#include <GLFW/glfw3.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cltrace_version.h"
#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"
#include "inspector/app.h"
#include "inspector/headless.h"
#include "inspector/loader.h"
#include "inspector/theme.h"

namespace cltrace::inspector {
namespace {

constexpr char kUsage[] =
    "usage: cltrace-inspector FILE [SECOND] [--screenshot OUT.png] [--size WIDTHxHEIGHT]\n"
    "                         [--select HANDLE] [--at SEQ] [--view FROM:TO]\n"
    "                         [--tab findings|summary] [--hover X,Y] [--salvage]\n"
    "                         [--goto SEQ] [--find [text:|function:|handle:]QUERY]\n"
    "  SECOND: show FILE and SECOND side by side, their first difference marked\n"
    "       cltrace-inspector --help | --version\n";

struct Options {
  std::string file;
  std::string second;  // the side-by-side view
  std::optional<std::string> go_to;
  std::optional<std::pair<App::FindMode, std::string>> find;
  std::string screenshot;
  int width = 1600, height = 900;
  std::string select;
  std::optional<uint64_t> at;
  std::optional<std::pair<double, double>> view;
  int tab = -1;
  std::optional<std::pair<float, float>> hover;  // headless mouse position (tooltips)
  BuildOptions build;                            // --salvage
};

// The flags that take a value.
constexpr absl::string_view kValueFlags[] = {
    "--screenshot", "--size", "--select", "--at", "--view", "--tab", "--hover", "--goto", "--find"};

// Applies value flag `flag` (one of kValueFlags) given `v`.
absl::Status SetValueFlag(absl::string_view flag, const std::string& v, Options* o) {
  if (flag == "--screenshot") {
    o->screenshot = v;
  } else if (flag == "--size") {
    return ParseSize(v, &o->width, &o->height);
  } else if (flag == "--select") {
    o->select = v;
  } else if (flag == "--at") {
    uint64_t seq;
    if (!absl::SimpleAtoi(v, &seq))
      return absl::InvalidArgumentError(absl::StrCat("--at ", v, ": not a seq"));
    o->at = seq;
  } else if (flag == "--view") {
    std::vector<std::string> p = absl::StrSplit(v, ':');
    double from, to;
    if (p.size() != 2 || !absl::SimpleAtod(p[0], &from) || !absl::SimpleAtod(p[1], &to) ||
        to <= from)
      return absl::InvalidArgumentError(
          absl::StrCat("--view ", v, ": expected FROM:TO with FROM < TO"));
    o->view = std::make_pair(from, to);
  } else if (flag == "--tab") {
    if (v == "findings") {
      o->tab = 0;
    } else if (v == "summary") {
      o->tab = 1;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("--tab ", v, ": findings or summary"));
    }
  } else if (flag == "--goto") {
    o->go_to = v;
  } else if (flag == "--find") {
    App::FindMode mode = App::FindMode::kText;
    absl::string_view q = v;
    if (absl::ConsumePrefix(&q, "function:")) {
      mode = App::FindMode::kFunction;
    } else if (absl::ConsumePrefix(&q, "handle:")) {
      mode = App::FindMode::kHandle;
    } else {
      absl::ConsumePrefix(&q, "text:");
    }
    o->find = std::make_pair(mode, std::string(q));
  } else if (flag == "--hover") {
    std::vector<std::string> p = absl::StrSplit(v, ',');
    float x, y;
    if (p.size() != 2 || !absl::SimpleAtof(p[0], &x) || !absl::SimpleAtof(p[1], &y))
      return absl::InvalidArgumentError(absl::StrCat("--hover ", v, ": expected X,Y in pixels"));
    o->hover = std::make_pair(x, y);
  }
  return absl::OkStatus();
}

absl::StatusOr<Options> ParseArgs(int argc, char** argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (absl::c_linear_search(kValueFlags, a)) {
      if (i + 1 >= args.size())
        return absl::InvalidArgumentError(absl::StrCat(a, " needs a value"));
      if (absl::Status s = SetValueFlag(a, args[++i], &o); !s.ok()) return s;
    } else if (a == "--salvage") {
      o.build.salvage = true;
    } else if (a == "--help" || a == "-h") {
      return absl::CancelledError("");
    } else if (a == "--version") {
      return absl::CancelledError("version");
    } else if (absl::StartsWith(a, "-")) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", a));
    } else if (o.file.empty()) {
      o.file = a;
    } else if (o.second.empty()) {
      o.second = a;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument ", a));
    }
  }
  if (o.file.empty()) return absl::InvalidArgumentError("missing FILE");
  return o;
}

// --select / --at / --view on a loaded app.
absl::Status ApplyOptions(const Options& o, App& app) {
  if (!o.select.empty()) {
    absl::Status s = app.Select(o.select);
    if (!s.ok()) return s;
  }
  if (o.at) app.SetCursor(*o.at);
  if (o.view) {
    app.view().view_from = o.view->first;
    app.view().view_to = o.view->second;
  }
  if (o.tab >= 0) app.ShowTab(o.tab);
  if (o.go_to) {
    app.OpenGoTo(*o.go_to);
    if (!app.goto_message().empty() && app.view().selected_event < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("--goto ", *o.go_to, ": ", app.goto_message()));
  }
  if (o.find) {
    app.OpenFind(o.find->first, o.find->second);
    app.FindNext(false);
  }
  return absl::OkStatus();
}

int Screenshot(const Options& o) {
  App app;
  app.calls().synchronous = true;
  app.calls_b().synchronous = true;
  // The same loading as the window (the dialog on failure), waited for.
  app.StartLoading(o.file, o.build, o.second);
  while (app.status() == App::Status::kLoading) {
    app.Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  int exit_code = 0;
  if (app.status() == App::Status::kFailed) {
    std::cerr << "cltrace-inspector: " << app.error().message() << "\n";
    exit_code = 2;
  } else {
    absl::Status s = ApplyOptions(o, app);
    if (!s.ok()) {
      std::cerr << "cltrace-inspector: " << s.message() << "\n";
      return 2;
    }
  }
  absl::StatusOr<std::unique_ptr<HeadlessRenderer>> r = HeadlessRenderer::Create(o.width, o.height);
  if (!r.ok()) {
    std::cerr << "cltrace-inspector: " << r.status().message() << "\n";
    return 1;
  }
  if (o.hover) ImGui::GetIO().MousePos = ImVec2(o.hover->first, o.hover->second);
  // Frame 1 lays windows and tables out, frame 2 applies the scroll requests, frame 3 is
  // the settled picture.
  for (int i = 0; i < 3; ++i) (*r)->Frame([&] { app.Draw(); });
  absl::Status s = (*r)->WritePng(o.screenshot);
  if (!s.ok()) {
    std::cerr << "cltrace-inspector: " << s.message() << "\n";
    return 2;
  }
  return exit_code;
}

int Interactive(const Options& o) {
  if (!glfwInit()) {
    std::cerr << "cltrace-inspector: cannot open a window (no display?); use --screenshot\n";
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  GLFWwindow* window = glfwCreateWindow(
      o.width, o.height, absl::StrCat("cltrace-inspector - ", o.file).c_str(), nullptr, nullptr);
  if (window == nullptr) {
    std::cerr << "cltrace-inspector: cannot create a window; use --screenshot\n";
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  ApplyStyle();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 130");

  App app;
  app.StartLoading(o.file, o.build, o.second);
  bool applied = false, reported = false;
  int exit_code = 0;
  while (!glfwWindowShouldClose(window)) {
    // Idle frames wait for input; while loading, redraw for the progress bar.
    if (app.status() == App::Status::kLoading) {
      glfwWaitEventsTimeout(1.0 / 30);
    } else {
      glfwWaitEventsTimeout(0.25);
    }
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    app.Draw();
    if (app.status() == App::Status::kReady && !applied) {
      applied = true;
      absl::Status s = ApplyOptions(o, app);
      if (!s.ok()) std::cerr << "cltrace-inspector: " << s.message() << "\n";
    }
    if (app.status() == App::Status::kFailed && !reported) {
      reported = true;
      exit_code = 2;
      std::cerr << "cltrace-inspector: " << app.error().message() << "\n";
    }
    ImGui::Render();
    int w, h;
    glfwGetFramebufferSize(window, &w, &h);
    glViewport(0, 0, w, h);
    glClearColor(0.05f, 0.05f, 0.06f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    glfwSwapBuffers(window);
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}

}  // namespace
}  // namespace cltrace::inspector

int main(int argc, char** argv) {
  using namespace cltrace::inspector;
  absl::StatusOr<Options> o = ParseArgs(argc, argv);
  if (!o.ok()) {
    if (absl::IsCancelled(o.status())) {
      std::cout << (o.status().message() == "version" ? "cltrace-inspector " CLTRACE_VERSION "\n"
                                                      : kUsage);
      return 0;
    }
    std::cerr << "cltrace-inspector: " << o.status().message() << "\n" << kUsage;
    return 2;
  }
  return o->screenshot.empty() ? Interactive(*o) : Screenshot(*o);
}
