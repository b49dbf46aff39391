#include "inspector/headless.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>

#include <cfloat>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "imgui.h"
#include "imgui_impl_opengl3.h"
#include "inspector/theme.h"
#include "stb_image_write.h"

namespace cltrace::inspector {

namespace {

// The key map the GLFW backend sets (io.KeysDown indices are GLFW key codes), so that
// widgets see Enter, Escape, arrows and editing keys the same way without a window.
void MapGlfwKeys(ImGuiIO& io) {
  io.KeyMap[ImGuiKey_Tab] = 258;
  io.KeyMap[ImGuiKey_LeftArrow] = 263;
  io.KeyMap[ImGuiKey_RightArrow] = 262;
  io.KeyMap[ImGuiKey_UpArrow] = 265;
  io.KeyMap[ImGuiKey_DownArrow] = 264;
  io.KeyMap[ImGuiKey_PageUp] = 266;
  io.KeyMap[ImGuiKey_PageDown] = 267;
  io.KeyMap[ImGuiKey_Home] = 268;
  io.KeyMap[ImGuiKey_End] = 269;
  io.KeyMap[ImGuiKey_Insert] = 260;
  io.KeyMap[ImGuiKey_Delete] = 261;
  io.KeyMap[ImGuiKey_Backspace] = 259;
  io.KeyMap[ImGuiKey_Space] = 32;
  io.KeyMap[ImGuiKey_Enter] = 257;
  io.KeyMap[ImGuiKey_Escape] = 256;
  io.KeyMap[ImGuiKey_KeyPadEnter] = 335;
  io.KeyMap[ImGuiKey_A] = 'A';
  io.KeyMap[ImGuiKey_C] = 'C';
  io.KeyMap[ImGuiKey_V] = 'V';
  io.KeyMap[ImGuiKey_X] = 'X';
  io.KeyMap[ImGuiKey_Y] = 'Y';
  io.KeyMap[ImGuiKey_Z] = 'Z';
}

}  // namespace

class HeadlessRenderer::Impl {
 public:
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  GLuint fbo = 0, color = 0;
  ImGuiContext* imgui = nullptr;
  bool backend = false;

  ~Impl() {
    if (imgui != nullptr) {
      ImGui::SetCurrentContext(imgui);
      if (backend) ImGui_ImplOpenGL3_Shutdown();
      ImGui::DestroyContext(imgui);
    }
    if (fbo != 0) glDeleteFramebuffers(1, &fbo);
    if (color != 0) glDeleteRenderbuffers(1, &color);
    if (context != EGL_NO_CONTEXT) {
      eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext(display, context);
    }
    if (display != EGL_NO_DISPLAY) eglTerminate(display);
  }
};

absl::Status ParseSize(const std::string& s, int* width, int* height) {
  std::vector<std::string> parts = absl::StrSplit(s, 'x');
  int w = 0, h = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &w) || !absl::SimpleAtoi(parts[1], &h) ||
      w < 64 || h < 64 || w > 8192 || h > 8192)
    return absl::InvalidArgumentError(
        absl::StrCat("--size ", s, ": expected WIDTHxHEIGHT, each 64 .. 8192 (e.g. 1600x900)"));
  *width = w;
  *height = h;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<HeadlessRenderer>> HeadlessRenderer::Create(int width, int height) {
  std::unique_ptr<HeadlessRenderer> r(new HeadlessRenderer());
  r->width_ = width;
  r->height_ = height;
  r->impl_ = std::make_unique<Impl>();
  Impl& x = *r->impl_;
  auto get_platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
      eglGetProcAddress("eglGetPlatformDisplayEXT"));
  if (get_platform_display == nullptr)
    return absl::UnavailableError("EGL: eglGetPlatformDisplayEXT is missing");
  x.display = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
  EGLint major = 0, minor = 0;
  if (x.display == EGL_NO_DISPLAY || !eglInitialize(x.display, &major, &minor)) {
    x.display = EGL_NO_DISPLAY;
    return absl::UnavailableError(
        absl::StrCat("EGL: no surfaceless Mesa display (error 0x", absl::Hex(eglGetError()), ")"));
  }
  if (!eglBindAPI(EGL_OPENGL_API)) return absl::UnavailableError("EGL: no desktop OpenGL");
  x.context = eglCreateContext(x.display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, nullptr);
  if (x.context == EGL_NO_CONTEXT)
    return absl::UnavailableError(
        absl::StrCat("EGL: cannot create a context (error 0x", absl::Hex(eglGetError()), ")"));
  if (!eglMakeCurrent(x.display, EGL_NO_SURFACE, EGL_NO_SURFACE, x.context))
    return absl::UnavailableError("EGL: cannot make the context current");
  glGenRenderbuffers(1, &x.color);
  glBindRenderbuffer(GL_RENDERBUFFER, x.color);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glGenFramebuffers(1, &x.fbo);
  glBindFramebuffer(GL_FRAMEBUFFER, x.fbo);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, x.color);
  if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
    return absl::UnavailableError("GL: the offscreen framebuffer is incomplete");

  IMGUI_CHECKVERSION();
  x.imgui = ImGui::CreateContext();
  ImGui::SetCurrentContext(x.imgui);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.LogFilename = nullptr;
  io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
  io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  MapGlfwKeys(io);
  ApplyStyle();
  if (!ImGui_ImplOpenGL3_Init("#version 130"))
    return absl::UnavailableError("ImGui: the OpenGL 3 backend failed to initialize");
  x.backend = true;
  return r;
}

HeadlessRenderer::~HeadlessRenderer() = default;

ImGuiContext* CreateUnrenderedContext(int width, int height) {
  ImGuiContext* ctx = ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
  io.DeltaTime = 1.0f / 60.0f;
  unsigned char* pixels;
  int w, h;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  io.Fonts->SetTexID(reinterpret_cast<ImTextureID>(1));
  MapGlfwKeys(io);
  ApplyStyle();
  return ctx;
}

void HeadlessRenderer::Frame(const std::function<void()>& draw) {
  ImGui::SetCurrentContext(impl_->imgui);
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(static_cast<float>(width_), static_cast<float>(height_));
  io.DeltaTime = 1.0f / 60.0f;
  ImGui_ImplOpenGL3_NewFrame();
  ImGui::NewFrame();
  draw();
  ImGui::Render();
  glBindFramebuffer(GL_FRAMEBUFFER, impl_->fbo);
  glViewport(0, 0, width_, height_);
  glClearColor(0.05f, 0.05f, 0.06f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  glFinish();
}

std::vector<uint8_t> HeadlessRenderer::ReadPixels() const {
  const size_t row = static_cast<size_t>(width_) * 4;
  std::vector<uint8_t> gl(row * static_cast<size_t>(height_));
  glBindFramebuffer(GL_FRAMEBUFFER, impl_->fbo);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, gl.data());
  // GL's origin is the bottom-left corner; images start at the top.
  std::vector<uint8_t> out(gl.size());
  for (int y = 0; y < height_; ++y)
    std::memcpy(&out[static_cast<size_t>(y) * row], &gl[static_cast<size_t>(height_ - 1 - y) * row],
                row);
  return out;
}

absl::Status HeadlessRenderer::WritePng(const std::string& path) const {
  std::vector<uint8_t> px = ReadPixels();
  if (!stbi_write_png(path.c_str(), width_, height_, 4, px.data(), width_ * 4))
    return absl::InternalError(absl::StrCat(path, ": cannot write the PNG"));
  return absl::OkStatus();
}

}  // namespace cltrace::inspector
