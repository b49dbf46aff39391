// Headless rendering through EGL surfaceless Mesa: pixels of known elements at positions the
// panels report for the same frame (never whole-image hashes, which any font or layout tweak
// would break), and the binary's --screenshot path with its exit codes.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inspector/app.h"
#include "inspector/headless.h"
#include "inspector/internal/synthetic_model.h"
#include "inspector/internal/synthetic_trace.h"
#include "inspector/theme.h"
#include "stb_image.h"

namespace cltrace::inspector {
namespace {

using check::State;

struct Rgb {
  int r, g, b;
};

Rgb ColorOf(ImU32 c) {
  return {static_cast<int>(c & 0xff), static_cast<int>((c >> 8) & 0xff),
          static_cast<int>((c >> 16) & 0xff)};
}

class ScreenshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = HeadlessRenderer::Create(1600, 900);
    ASSERT_TRUE(r.ok()) << r.status();
    renderer_ = *std::move(r);
    trace_ = testing::MakeSmallCommandListTrace({.calls = 120, .dcs = 2, .violation_cycle = 2});
    auto m = TraceModel::Build(testing::AsTraceData(trace_, "synthetic.cltrace"));
    ASSERT_TRUE(m.ok()) << m.status();
    app_.SetModel(*std::move(m));
    app_.calls().synchronous = true;
  }
  void Render() {
    for (int i = 0; i < 3; ++i) renderer_->Frame([&] { app_.Draw(); });
    pixels_ = renderer_->ReadPixels();
  }
  Rgb At(float x, float y) const {
    const size_t i = (static_cast<size_t>(y) * renderer_->width() + static_cast<size_t>(x)) * 4;
    return {pixels_[i], pixels_[i + 1], pixels_[i + 2]};
  }
  void ExpectColor(float x, float y, ImU32 color, const char* what) {
    Rgb got = At(x, y), want = ColorOf(color);
    EXPECT_EQ(got.r, want.r) << what << " at " << x << "," << y;
    EXPECT_EQ(got.g, want.g) << what << " at " << x << "," << y;
    EXPECT_EQ(got.b, want.b) << what << " at " << x << "," << y;
  }
  // The middle of the widest span of `state` on `row` in view.
  bool SpanMiddle(int row, State state, float* x, float* y) {
    const LifelinesGeometry& g = app_.lifelines().geometry();
    const Span* best = nullptr;
    for (const Span& s : app_.model()->rows()[row].spans)
      if (s.state == state && (best == nullptr || s.to - s.from > best->to - best->from)) best = &s;
    if (best == nullptr) return false;
    *x = g.XOf(0.5 * static_cast<double>(best->from + best->to));
    *y = g.RowCenterY(row);
    return g.XOf(static_cast<double>(best->to)) - g.XOf(static_cast<double>(best->from)) > 4;
  }

  std::unique_ptr<HeadlessRenderer> renderer_;
  testing::SyntheticTrace trace_;
  App app_;
  std::vector<uint8_t> pixels_;
};

TEST_F(ScreenshotTest, ValidIntervalIsGreenAtTheSelectedHandlesRow) {
  ASSERT_TRUE(app_.Select("cl1").ok());
  Render();
  const int row = app_.model()->FindRow("cl1");
  ASSERT_EQ(app_.view().selected_row, row);
  ASSERT_TRUE(app_.lifelines().geometry().RowVisible(row));
  float x, y;
  ASSERT_TRUE(SpanMiddle(row, State::kValid, &x, &y));
  ExpectColor(x, y, StateColor(State::kValid), "Valid span");
  EXPECT_EQ(ColorOf(StateColor(State::kValid)).g, 170);  // green, as in the documentation
  ASSERT_TRUE(SpanMiddle(row, State::kRecycleDestroyed, &x, &y));
  ExpectColor(x, y, StateColor(State::kRecycleDestroyed), "RecycleDestroyed span");
  // Outside the bar but inside the selected row: the selection highlight, not a state color.
  const LifelinesGeometry& g = app_.lifelines().geometry();
  Rgb band = At(x, g.RowTop(row) + 1);
  Rgb other = At(x, g.RowTop(row + 1) + 1);
  EXPECT_NE(band.b, other.b);
}

TEST_F(ScreenshotTest, DeferredContextAndLocalRowsHaveTheirColors) {
  Render();
  const int dc0 = app_.model()->FindRow("dc0");
  const int lvb0 = app_.model()->FindRow("lvb0");
  float x, y;
  ASSERT_TRUE(SpanMiddle(dc0, State::kRecording, &x, &y));
  ExpectColor(x, y, StateColor(State::kRecording), "Recording span");
  ASSERT_TRUE(SpanMiddle(lvb0, State::kClosedLocal, &x, &y));
  ExpectColor(x, y, StateColor(State::kClosedLocal), "closed local span");
}

TEST_F(ScreenshotTest, CursorLineAndDiagramHighlight) {
  ASSERT_TRUE(app_.Select("cl0").ok());
  app_.SetCursor(trace_.first_recycle_destroy_cl0 + 1);
  Render();
  const LifelinesGeometry& g = app_.lifelines().geometry();
  const float cx = g.XOf(static_cast<double>(app_.view().cursor));
  // The cursor crosses every row; below the last row it is on the empty background.
  const float below = g.RowTop(static_cast<int>(app_.model()->rows().size())) + 20;
  ASSERT_LT(below, g.visible_y1);
  Rgb c = At(std::round(cx), below);
  EXPECT_GT(c.r, 200);
  EXPECT_GT(c.g, 170);
  EXPECT_LT(c.b, 140);
  // The diagram rings the state cl0 is in at the cursor.
  StateDiagramPanel& d = app_.diagram();
  ASSERT_EQ(d.highlighted(), State::kRecycleDestroyed);
  const ImVec2 node = d.NodeCenter(State::kRecycleDestroyed);
  ExpectColor(node.x, node.y + d.node_radius() - 3, StateColor(State::kRecycleDestroyed),
              "RD node");
  Rgb ring = At(node.x - d.node_radius() - 5, node.y);
  EXPECT_GT(ring.r, 200);
  EXPECT_GT(ring.g, 170);
  // An unhighlighted node has no ring.
  const ImVec2 v = d.NodeCenter(State::kValid);
  ExpectColor(v.x, v.y + d.node_radius() - 3, StateColor(State::kValid), "V node");
  Rgb no_ring = At(v.x - d.node_radius() - 5, v.y);
  EXPECT_LT(no_ring.r, 120);
}

TEST_F(ScreenshotTest, ViolationMarkIsRedOnItsRow) {
  Render();
  const LifelinesGeometry& g = app_.lifelines().geometry();
  const int cl0 = app_.model()->FindRow("cl0");
  const float x = g.XOf(static_cast<double>(trace_.violation_execute));
  // The mark's triangle hangs from the row's top edge.
  ExpectColor(std::round(x), g.RowTop(cl0) + 1, kColorViolation, "violation mark");
}

TEST_F(ScreenshotTest, SameFrameRendersTheSameBytes) {
  Render();
  std::vector<uint8_t> first = pixels_;
  Render();
  EXPECT_TRUE(first == pixels_);
}

// ---- The binary ----------------------------------------------------------------------------

std::string Binary() {
  const char* dir = std::getenv("CLTRACE_BUILD_DIR");
  return absl::StrCat(dir ? dir : "build", "/bin/cltrace-inspector");
}

std::string Temp(const std::string& name) {
  return absl::StrCat("/tmp/inspector_shot_", getpid(), "_", name);
}

// Runs the binary; returns the exit status and stderr.
int RunInspector(const std::string& args, std::string* err) {
  const std::string err_file = Temp("stderr.txt");
  const std::string cmd = absl::StrCat(Binary(), " ", args, " 2>", err_file);
  int status = std::system(cmd.c_str());
  std::ifstream in(err_file);
  err->assign(std::istreambuf_iterator<char>(in), {});
  std::remove(err_file.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(InspectorBinaryTest, ScreenshotWritesAPngOfTheRequestedSize) {
  const std::string trace = Temp("t.cltrace"), png = Temp("t.png");
  ASSERT_TRUE(
      testing::WriteCltrace(testing::MakeSmallCommandListTrace({.calls = 500}), trace).ok());
  std::string err;
  EXPECT_EQ(RunInspector(
                absl::StrCat(trace, " --screenshot ", png, " --size 800x450 --select cl0 --at 200"),
                &err),
            0)
      << err;
  int w = 0, h = 0, n = 0;
  EXPECT_EQ(stbi_info(png.c_str(), &w, &h, &n), 1);
  EXPECT_EQ(w, 800);
  EXPECT_EQ(h, 450);
  std::remove(trace.c_str());
  std::remove(png.c_str());
}

// A damaged trace: exit 2 with the reason (naming the offset) on stderr.
TEST(InspectorBinaryTest, CorruptTraceExitsTwoWithTheReason) {
  const std::string trace = Temp("c.cltrace"), png = Temp("c.png");
  ASSERT_TRUE(
      testing::WriteCltrace(testing::MakeSmallCommandListTrace({.calls = 20000}), trace).ok());
  {
    std::fstream f(trace, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(300);
    f.put('\x55');
    f.put('\xaa');
  }
  std::string err;
  EXPECT_EQ(RunInspector(absl::StrCat(trace, " --screenshot ", png, " --size 800x450"), &err), 2);
  EXPECT_THAT(err, ::testing::HasSubstr("cltrace-inspector: "));
  EXPECT_THAT(err, ::testing::HasSubstr("offset"));
  // The picture is the dialog the window shows.
  int w = 0, h = 0, n = 0;
  EXPECT_EQ(stbi_info(png.c_str(), &w, &h, &n), 1);
  EXPECT_EQ(w, 800);
  std::remove(trace.c_str());
  std::remove(png.c_str());
}

TEST(InspectorBinaryTest, BadArgumentsExitTwo) {
  std::string err;
  EXPECT_EQ(RunInspector("", &err), 2);
  EXPECT_THAT(err, ::testing::HasSubstr("missing FILE"));
  EXPECT_EQ(RunInspector("x.cltrace --size 12", &err), 2);
  EXPECT_THAT(err, ::testing::HasSubstr("--size"));
  EXPECT_EQ(RunInspector("x.cltrace --frobnicate", &err), 2);
  EXPECT_EQ(RunInspector("/nonexistent.cltrace --screenshot /tmp/x.png", &err), 2);
  EXPECT_THAT(err, ::testing::HasSubstr("cannot open"));
}

TEST(InspectorBinaryTest, VersionPrintsTheProjectVersion) {
  const std::string out_file = Temp("version.txt");
  std::string err;
  EXPECT_EQ(RunInspector(absl::StrCat("--version >", out_file), &err), 0) << err;
  std::ifstream in(out_file);
  std::string out(std::istreambuf_iterator<char>(in), {});
  std::remove(out_file.c_str());
  EXPECT_THAT(out, ::testing::MatchesRegex("cltrace-inspector [0-9]+\\.[0-9.]+\n"));
}

TEST(InspectorBinaryTest, UnknownSelectExitsTwo) {
  std::string err;
  EXPECT_EQ(RunInspector(absl::StrCat("corpus/check/small_cl.jsonl --screenshot ", Temp("s.png"),
                                      " --select nosuch"),
                         &err),
            2);
  EXPECT_THAT(err, ::testing::HasSubstr("nosuch"));
}

}  // namespace
}  // namespace cltrace::inspector
