// Offscreen rendering of ImGui frames without any display server: EGL on Mesa's surfaceless
// platform (EGL_PLATFORM_SURFACELESS_MESA, a context without a config), a framebuffer object,
// the opengl3 backend, glReadPixels, PNG through stb_image_write. Mesa's llvmpipe renders the
// same bytes run after run, so screenshots can be compared pixel by pixel.
//
// Thread-safety: one renderer per process at a time (it owns the current ImGui context and
// makes its GL context current on the creating thread).
//
// Example:
//   auto r = HeadlessRenderer::Create(1600, 900);
//   if (!r.ok()) return r.status();
//   for (int i = 0; i < 3; ++i) (*r)->Frame([&] { app.Draw(); });
//   CLTRACE_RETURN_IF_ERROR((*r)->WritePng("out.png"));
#ifndef CLTRACE_INSPECTOR_HEADLESS_H_
#define CLTRACE_INSPECTOR_HEADLESS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct ImGuiContext;

namespace cltrace::inspector {

// A current ImGui context of width × height (inspector style, no .ini file, font atlas built,
// the GLFW backend's key map) without any renderer: frames are built, not rasterized (tests,
// benchmarks). The caller destroys it.
ImGuiContext* CreateUnrenderedContext(int width, int height);

class HeadlessRenderer {
 public:
  // Creates the EGL context, the framebuffer and an ImGui context (inspector style, no .ini
  // file). Unavailable if EGL or the surfaceless platform is missing.
  static absl::StatusOr<std::unique_ptr<HeadlessRenderer>> Create(int width, int height);
  ~HeadlessRenderer();
  HeadlessRenderer(const HeadlessRenderer&) = delete;
  HeadlessRenderer& operator=(const HeadlessRenderer&) = delete;

  // One frame: ImGui::NewFrame, `draw`, ImGui::Render, rasterized into the framebuffer.
  // The mouse is outside the window unless `mouse_x/y` are set before.
  void Frame(const std::function<void()>& draw);

  // RGBA8, top row first.
  std::vector<uint8_t> ReadPixels() const;
  absl::Status WritePng(const std::string& path) const;
  int width() const { return width_; }
  int height() const { return height_; }

  class Impl;

 private:
  HeadlessRenderer() = default;
  int width_ = 0, height_ = 0;
  std::unique_ptr<Impl> impl_;
};

// Parses "1600x900". InvalidArgument unless both are 64 .. 8192.
absl::Status ParseSize(const std::string& s, int* width, int* height);

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_HEADLESS_H_
