// Panels driven by synthetic input frame by frame, without rendering: an ImGui context with a
// built font atlas and no backend; each frame sets io.MousePos / io.MouseDown / io.KeysDown,
// runs App::Draw, and the test asserts on the view (selection, cursor, zoom).
#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "imgui.h"
#include "inspector/app.h"
#include "inspector/headless.h"
#include "inspector/internal/synthetic_model.h"
#include "inspector/internal/synthetic_trace.h"
#include "inspector/jsonl_copy.h"
#include "inspector/lifelines_panel.h"
#include "inspector/loader.h"
#include "inspector/search.h"
#include "inspector/theme.h"

namespace cltrace::inspector {
namespace {

using check::State;

class PanelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = CreateUnrenderedContext(1600, 900);
    ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  }
  void TearDown() override { ImGui::DestroyContext(ctx_); }

  void Load(const testing::SyntheticOptions& o) {
    trace_ = testing::MakeSmallCommandListTrace(o);
    auto m = TraceModel::Build(testing::AsTraceData(trace_, "synthetic"));
    ASSERT_TRUE(m.ok()) << m.status();
    app_.SetModel(*std::move(m));
    app_.calls().synchronous = true;
    Frame();
    Frame();
  }
  void Frame() {
    ImGui::NewFrame();
    app_.Draw();
    ImGui::Render();
  }
  void MoveTo(float x, float y) {
    ImGui::GetIO().MousePos = ImVec2(x, y);
    Frame();
  }
  void Click(float x, float y) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = ImVec2(x, y);
    Frame();
    io.MouseDown[0] = true;
    Frame();
    io.MouseDown[0] = false;
    Frame();
  }
  void Key(int key, bool shift = false) {
    ImGuiIO& io = ImGui::GetIO();
    io.KeyShift = shift;
    io.KeysDown[key] = true;
    Frame();
    io.KeysDown[key] = false;
    io.KeyShift = false;
    Frame();
  }
  void CtrlKey(int key, bool shift = false) {
    ImGuiIO& io = ImGui::GetIO();
    io.KeyCtrl = true;
    Key(key, shift);
    io.KeyCtrl = false;
  }
  void Type(const std::string& text) {
    for (char c : text) {
      ImGui::GetIO().AddInputCharacter(static_cast<unsigned>(c));
      Frame();
    }
  }
  void ShiftClick(float x, float y) {
    ImGui::GetIO().KeyShift = true;
    Click(x, y);
    ImGui::GetIO().KeyShift = false;
  }
  const TraceModel& model() { return *app_.model(); }
  const LifelinesGeometry& geo() { return app_.lifelines().geometry(); }

  ImGuiContext* ctx_ = nullptr;
  App app_;
  testing::SyntheticTrace trace_;
};

TEST_F(PanelsTest, ClickOnALifelineSelectsThatHandlesNearestCall) {
  Load({.calls = 300, .dcs = 2});
  const int dc1 = model().FindRow("dc1");
  ASSERT_GE(dc1, 0);
  EXPECT_EQ(app_.view().selected_row, -1);
  ASSERT_TRUE(geo().RowVisible(dc1));
  // A place where the call at the click's position is on another handle (dc0's thread).
  double target = 0.5 * (model().first_seq() + model().end_seq());
  while (CallIsOnRow(model(), dc1,
                     static_cast<size_t>(model().EventAtOrBefore(static_cast<uint64_t>(target)))))
    target += 1;
  const float x = std::round(geo().XOf(target));
  Click(x, geo().RowCenterY(dc1));
  EXPECT_EQ(app_.view().selected_row, dc1);
  const int64_t ev = app_.view().selected_event;
  ASSERT_GE(ev, 0);
  EXPECT_TRUE(CallIsOnRow(model(), dc1, static_cast<size_t>(ev)));
  EXPECT_EQ(ev, NearestCallOnRow(model(), dc1, geo().SeqAt(x)));
  EXPECT_NE(ev, model().EventAtOrBefore(static_cast<uint64_t>(geo().SeqAt(x))));
  EXPECT_EQ(app_.view().cursor, model().Call(static_cast<size_t>(ev)).seq);
  // The diagram follows the selection: a deferred context, in its state at the cursor.
  EXPECT_EQ(app_.diagram().kind(), RowKind::kDeferredContext);
  EXPECT_EQ(app_.diagram().highlighted(), model().SpanAt(dc1, app_.view().cursor)->state);
}

TEST_F(PanelsTest, ClickOnALabelSelectsTheRowOnly) {
  Load({.calls = 300, .dcs = 2});
  const uint64_t cursor = app_.view().cursor;
  Click(geo().lane_x0 - 60, geo().RowCenterY(1));
  EXPECT_EQ(app_.view().selected_row, 1);
  EXPECT_EQ(app_.view().cursor, cursor);
}

TEST_F(PanelsTest, DragPansWithoutSelecting) {
  Load({.calls = 300, .dcs = 2});
  ImGuiIO& io = ImGui::GetIO();
  const double from = app_.view().view_from, to = app_.view().view_to;
  const float x = geo().lane_x0 + 400, y = geo().RowCenterY(0);
  io.MousePos = ImVec2(x, y);
  Frame();
  io.MouseDown[0] = true;
  Frame();
  for (int dx = 20; dx <= 100; dx += 20) MoveTo(x - static_cast<float>(dx), y);
  io.MouseDown[0] = false;
  Frame();
  const double per_px = (to - from) / (geo().lane_x1 - geo().lane_x0);
  EXPECT_NEAR(app_.view().view_from, from + 100 * per_px, 1e-6 * (to - from));
  EXPECT_NEAR(app_.view().view_to - app_.view().view_from, to - from, 1e-6 * (to - from));
  EXPECT_EQ(app_.view().selected_row, -1);
}

TEST_F(PanelsTest, WheelZoomsAroundTheMouse) {
  Load({.calls = 3000, .dcs = 2});
  const float x = geo().lane_x0 + 300;
  const double anchor = geo().SeqAt(x);
  const double width = app_.view().view_to - app_.view().view_from;
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(x, geo().RowCenterY(0));
  io.MouseWheel = 2;
  Frame();
  io.MouseWheel = 0;
  Frame();
  EXPECT_NEAR(app_.view().view_to - app_.view().view_from, width * 0.64, width * 1e-9);
  EXPECT_NEAR(geo().SeqAt(x), anchor, width * 1e-9);
}

TEST_F(PanelsTest, KeysWalkTransitionsOfTheSelectedHandle) {
  Load({.calls = 300, .dcs = 2});
  const int cl0 = model().FindRow("cl0");
  app_.view().SelectRow(cl0);
  app_.view().cursor = 0;
  const std::vector<Span>& spans = model().rows()[cl0].spans;
  Key(keys::kN);
  EXPECT_EQ(app_.view().cursor, spans[0].from);
  Key(keys::kN);
  EXPECT_EQ(app_.view().cursor, spans[1].from);
  EXPECT_EQ(model().Call(app_.view().selected_event).seq, spans[1].from);
  Key(keys::kN, /*shift=*/true);
  EXPECT_EQ(app_.view().cursor, spans[0].from);
  Key(keys::kDown);
  EXPECT_EQ(app_.view().selected_row, cl0 + 1);
}

TEST_F(PanelsTest, KeyVJumpsToTheNextFindingAndItsHandle) {
  Load({.calls = 600, .dcs = 2, .violation_cycle = 3});
  Key(keys::kV);
  const check::Violation& v = model().violations()[0];
  EXPECT_EQ(app_.view().selected_violation, 0);
  EXPECT_EQ(app_.view().cursor, v.seq);
  EXPECT_EQ(app_.view().selected_row, model().RowOfHandle(v.handle));
  EXPECT_EQ(model().Token(model().rows()[app_.view().selected_row].handle), "cl0");
  Key(keys::kV);
  EXPECT_EQ(app_.view().selected_violation, 1);
  Key(keys::kV, /*shift=*/true);
  EXPECT_EQ(app_.view().selected_violation, 0);
}

TEST_F(PanelsTest, ZoomAndFitKeys) {
  Load({.calls = 3000, .dcs = 2});
  const double width = app_.view().view_to - app_.view().view_from;
  Key(keys::kEqual);
  EXPECT_NEAR(app_.view().view_to - app_.view().view_from, width / 2, 1e-6);
  Key(keys::kRight);
  Key(keys::kHome);
  EXPECT_EQ(app_.view().view_from, static_cast<double>(model().first_seq()));
  EXPECT_NEAR(app_.view().view_to - app_.view().view_from, width, 1e-6);
}

TEST_F(PanelsTest, FilterAndClickACall) {
  Load({.calls = 600, .dcs = 2});
  CallsPanel& calls = app_.calls();
  int fn = -1;
  for (int i = 0; i < static_cast<int>(calls.functions().size()); ++i)
    if (calls.functions()[i].first == format::CallId::kRecycleDestroyCommandList) fn = i;
  ASSERT_GT(fn, 0);
  calls.function = fn;
  Frame();
  Frame();
  const uint64_t expected =
      model().call_counts()[static_cast<size_t>(format::CallId::kRecycleDestroyCommandList)];
  ASSERT_EQ(calls.filter().size(), expected);
  const float y = calls.RowCenterY(2);
  ASSERT_GT(y, 0);
  const App::Layout l = App::LayoutFor(1600, 900);
  Click(l.calls.x + 40, y);
  const size_t ev = calls.filter().at(2);
  EXPECT_EQ(app_.view().selected_event, static_cast<int64_t>(ev));
  EXPECT_EQ(app_.view().cursor, model().Call(ev).seq);
  // The call's command list becomes the selected row.
  const Row& row = model().rows()[app_.view().selected_row];
  EXPECT_EQ(row.kind, RowKind::kCommandList);
  EXPECT_EQ(row.handle, (*model().DecodeEvent(ev))->args[1]);
}

TEST_F(PanelsTest, DiagramHighlightsTheStateAtTheCursor) {
  Load({.calls = 300, .dcs = 2});
  const int cl0 = model().FindRow("cl0");
  app_.view().SelectRow(cl0);
  app_.SetCursor(trace_.first_recycle_destroy_cl0);
  Frame();
  EXPECT_EQ(app_.diagram().kind(), RowKind::kCommandList);
  EXPECT_EQ(app_.diagram().highlighted(), State::kRecycleDestroyed);
  app_.SetCursor(trace_.first_create_cl0);
  Frame();
  EXPECT_EQ(app_.diagram().highlighted(), State::kValid);
  app_.SetCursor(1);
  Frame();
  EXPECT_EQ(app_.diagram().highlighted(), State::kNone);  // not yet created: U
  app_.view().SelectRow(model().FindRow("lvb0"));
  Frame();
  EXPECT_EQ(app_.diagram().kind(), RowKind::kLocal);
}

TEST_F(PanelsTest, SelectStartsAtTheHandlesFirstTransitionInsideTheTrace) {
  Load({.calls = 3000, .dcs = 2});
  app_.view().Zoom(model(), 0.1, static_cast<double>(model().end_seq()));  // zoomed in at the end
  ASSERT_TRUE(app_.Select("cl1").ok());
  const Span& first = model().rows()[model().FindRow("cl1")].spans.front();
  EXPECT_EQ(app_.view().cursor, first.from);
  // Panned back to the start, but never before it.
  EXPECT_EQ(app_.view().view_from, static_cast<double>(model().first_seq()));
  EXPECT_GT(app_.view().view_to, static_cast<double>(first.from));
  EXPECT_FALSE(app_.Select("nosuch").ok());
}

TEST_F(PanelsTest, SummaryTabComputesOnFirstShow) {
  Load({.calls = 600, .dcs = 2});
  EXPECT_EQ(app_.summary().summary(), nullptr);
  app_.ShowTab(1);
  Frame();  // ImGui switches tabs on the frame after the request
  Frame();
  ASSERT_NE(app_.summary().summary(), nullptr);
  EXPECT_EQ(app_.summary().summary()->command_lists, 2u);
}

TEST_F(PanelsTest, LoadingInTheBackgroundThenReady) {
  const std::string path = "/tmp/inspector_panels_test_" + std::to_string(getpid()) + ".cltrace";
  ASSERT_TRUE(
      testing::WriteCltrace(testing::MakeSmallCommandListTrace({.calls = 200000, .dcs = 4}), path)
          .ok());
  app_.StartLoading(path);
  EXPECT_EQ(app_.status(), App::Status::kLoading);
  int frames = 0;
  while (app_.status() == App::Status::kLoading && frames < 100000) {
    Frame();  // the loading screen draws while the loader thread works
    ++frames;
  }
  std::remove(path.c_str());
  ASSERT_EQ(app_.status(), App::Status::kReady);
  EXPECT_EQ(app_.model()->rows().size(), 12u);
  Frame();
  EXPECT_GT(app_.lifelines().last_rects(), 0u);
}

TEST_F(PanelsTest, FailedLoadShowsTheError) {
  app_.StartLoading("/nonexistent/x.cltrace");
  for (int i = 0; i < 1000 && app_.status() == App::Status::kLoading; ++i) {
    Frame();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(app_.status(), App::Status::kFailed);
  EXPECT_EQ(app_.error().code(), absl::StatusCode::kNotFound);
  Frame();
}

TEST_F(PanelsTest, CtrlGGoesToTheTypedSeq) {
  Load({.calls = 600, .dcs = 2});
  CtrlKey(keys::kG);
  ASSERT_TRUE(app_.goto_open());
  Frame();  // the box takes the keyboard
  const CallRecord target = model().Call(200);
  const std::string typed = FormatSeq(target.end);  // an exit position, with a separator
  Type(typed);
  EXPECT_EQ(app_.view().selected_event, 200);  // the cursor follows the typing
  Key(keys::kEnter);
  EXPECT_FALSE(app_.goto_open());
  EXPECT_EQ(app_.view().selected_event, 200);
  EXPECT_EQ(app_.view().cursor, target.seq);
  const int row = app_.view().selected_row;
  ASSERT_GE(row, 0);
  EXPECT_TRUE(CallIsOnRow(model(), row, 200));
  // A seq past the end: the dialog says so and stays open.
  CtrlKey(keys::kG);
  Frame();
  Type(absl::StrCat(model().end_seq() + 10));
  Key(keys::kEnter);
  EXPECT_TRUE(app_.goto_open());
  EXPECT_THAT(app_.goto_message(), ::testing::HasSubstr("outside the trace"));
  // Esc closes it and returns to where the dialog was opened (the typing moved the cursor).
  Key(keys::kEscape);
  EXPECT_FALSE(app_.goto_open());
  EXPECT_EQ(app_.view().selected_event, 200);
  EXPECT_EQ(app_.view().cursor, target.seq);
}

TEST_F(PanelsTest, CtrlFFindsNextAndPreviousByTextFunctionAndHandle) {
  Load({.calls = 600, .dcs = 2});
  CtrlKey(keys::kF);
  ASSERT_TRUE(app_.find_open());
  Frame();
  Type("recycledestroy");
  Key(keys::kEnter);
  const CallFilterSpec spec{.text = "recycledestroy"};
  const int64_t first = FindCall(model(), spec, -1, false);
  ASSERT_GE(first, 0);
  EXPECT_EQ(app_.view().selected_event, first);
  Key(keys::kF3);
  const int64_t second = FindCall(model(), spec, first, false);
  EXPECT_EQ(app_.view().selected_event, second);
  EXPECT_GT(second, first);
  Key(keys::kF3, /*shift=*/true);
  EXPECT_EQ(app_.view().selected_event, first);
  // By function and by handle.
  app_.OpenFind(App::FindMode::kFunction, "DC::RecycleCommandList");
  app_.FindNext(false);
  EXPECT_EQ(model().Call(app_.view().selected_event).call, format::CallId::kRecycleCommandList);
  app_.OpenFind(App::FindMode::kHandle, "cl1");
  app_.FindNext(false);
  const int64_t h = app_.view().selected_event;
  EXPECT_EQ(h, FindCall(model(), {.handle = static_cast<uint64_t>(model().handles().Find("cl1"))},
                        FindCall(model(), {.call = format::CallId::kRecycleCommandList}, -1, false),
                        false));
  app_.OpenFind(App::FindMode::kHandle, "nosuch");
  app_.FindNext(false);
  EXPECT_THAT(app_.find_message(), ::testing::HasSubstr("no handle nosuch"));
  EXPECT_EQ(app_.view().selected_event, h);
}

TEST_F(PanelsTest, CtrlCCopiesTheShiftClickRangeAsExportJsonl) {
  Load({.calls = 600, .dcs = 2});
  const App::Layout l = App::LayoutFor(1600, 900);
  CallsPanel& calls = app_.calls();
  ASSERT_GT(calls.RowCenterY(6), 0);
  Click(l.calls.x + 40, calls.RowCenterY(3));
  EXPECT_EQ(app_.view().selected_event, 3);
  CtrlKey(keys::kC);
  EXPECT_EQ(std::string(ImGui::GetClipboardText()), CallsAsJsonl(model(), {3}));
  ShiftClick(l.calls.x + 40, calls.RowCenterY(6));
  EXPECT_EQ(app_.view().selected_event, 6);
  EXPECT_EQ(app_.view().range_anchor, 3);
  CtrlKey(keys::kC);
  const std::string copied = ImGui::GetClipboardText();
  EXPECT_EQ(copied, CallsAsJsonl(model(), {3, 4, 5, 6}));
  EXPECT_EQ(std::count(copied.begin(), copied.end(), '\n'), 4);
  EXPECT_THAT(app_.copy_message(), ::testing::HasSubstr("copied 4 calls"));
  // A plain click ends the range.
  Click(l.calls.x + 40, calls.RowCenterY(5));
  EXPECT_EQ(calls.SelectedCalls(app_.view()), std::vector<int64_t>{5});
}

TEST_F(PanelsTest, ClearKeepsTheSelectedCallAndShowsIt) {
  Load({.calls = 3000, .dcs = 2});
  CallsPanel& calls = app_.calls();
  int fn = -1;
  for (int i = 0; i < static_cast<int>(calls.functions().size()); ++i)
    if (calls.functions()[i].first == format::CallId::kRecycleDestroyCommandList) fn = i;
  calls.function = fn;
  Frame();
  Frame();
  const App::Layout l = App::LayoutFor(1600, 900);
  const size_t pick = 8;
  ASSERT_GT(calls.RowCenterY(pick), 0);
  Click(l.calls.x + 40, calls.RowCenterY(pick));
  const int64_t ev = app_.view().selected_event;
  ASSERT_EQ(ev, static_cast<int64_t>(calls.filter().at(pick)));
  ASSERT_GT(ev, 60);  // far below the first screen of the unfiltered list
  Click(calls.clear_button_center().x, calls.clear_button_center().y);
  Frame();
  EXPECT_EQ(calls.function, 0);
  EXPECT_EQ(calls.filter().size(), model().call_count());
  EXPECT_EQ(app_.view().selected_event, ev);
  EXPECT_GT(calls.RowCenterY(calls.filter().LowerBound(static_cast<size_t>(ev))), 0)
      << "the selected call is scrolled into view";
}

TEST_F(PanelsTest, SecondTraceOpensBesideTheFirstWithTheFirstDifferenceMarked) {
  const std::string a = "/tmp/inspector_panels_test_a_" + std::to_string(getpid()) + ".cltrace";
  const std::string b = "/tmp/inspector_panels_test_b_" + std::to_string(getpid()) + ".cltrace";
  testing::SyntheticTrace ta = testing::MakeSmallCommandListTrace({.calls = 600, .dcs = 2});
  testing::SyntheticTrace tb = ta;
  tb.events.erase(tb.events.begin() + 300);  // B lacks a call
  ASSERT_TRUE(testing::WriteCltrace(ta, a).ok());
  ASSERT_TRUE(testing::WriteCltrace(tb, b).ok());
  app_.StartLoading(a, {}, b);
  for (int i = 0; i < 100000 && app_.status() == App::Status::kLoading; ++i) Frame();
  std::remove(a.c_str());
  std::remove(b.c_str());
  ASSERT_EQ(app_.status(), App::Status::kReady) << app_.error();
  ASSERT_TRUE(app_.comparing());
  Frame();
  const TraceComparison& c = *app_.comparison();
  ASSERT_FALSE(c.summary.equal());
  EXPECT_EQ(c.summary.first_seq_a, ta.events[300].seq);
  const int64_t ea = c.EventA(model()), eb = c.EventB(*app_.model_b());
  EXPECT_EQ(app_.view().selected_event, ea);
  EXPECT_EQ(app_.view_b().selected_event, eb);
  EXPECT_EQ(app_.calls().highlight_event, ea);
  EXPECT_EQ(app_.calls_b().highlight_event, eb);
  EXPECT_EQ(app_.lifelines().mark_seq, static_cast<int64_t>(ta.events[300].seq));
  // Both traces are drawn, side by side.
  EXPECT_GT(app_.lifelines().last_rects(), 0u);
  EXPECT_GT(app_.lifelines_b().last_rects(), 0u);
  EXPECT_LT(app_.lifelines().geometry().lane_x1, app_.lifelines_b().geometry().lane_x0);
}

TEST_F(PanelsTest, DamagedTraceDialogOffersSalvage) {
  const std::string path = "/tmp/inspector_panels_test_d_" + std::to_string(getpid()) + ".cltrace";
  ASSERT_TRUE(testing::WriteCltrace(testing::MakeSmallCommandListTrace({.calls = 20000}), path,
                                    /*chunk_bytes=*/1024)
                  .ok());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    const std::streamoff size = f.tellg();
    f.seekp(size / 2);
    f.put('\x55');
    f.put('\xaa');
  }
  app_.StartLoading(path);
  for (int i = 0; i < 100000 && app_.status() == App::Status::kLoading; ++i) Frame();
  ASSERT_EQ(app_.status(), App::Status::kFailed);
  EXPECT_TRUE(app_.error_text().salvage_may_help);
  ASSERT_TRUE(app_.error_text().offset.has_value());
  EXPECT_THAT(app_.error_text().headline,
              ::testing::HasSubstr(absl::StrCat("damaged at offset ", *app_.error_text().offset)));
  Frame();
  app_.RetryWithSalvage();  // the dialog's button
  for (int i = 0; i < 100000 && app_.status() == App::Status::kLoading; ++i) Frame();
  std::remove(path.c_str());
  ASSERT_EQ(app_.status(), App::Status::kReady) << app_.error();
  EXPECT_EQ(app_.model()->data().stats.corrupt_chunks_skipped, 1u);
}

// ---- Labels never overlap and are never cut (real trace: long handle tokens) ---------------

class LabelGeometryTest : public ::testing::TestWithParam<std::pair<int, int>> {
 protected:
  void SetUp() override {
    ctx_ = CreateUnrenderedContext(GetParam().first, GetParam().second);
    ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    absl::StatusOr<std::unique_ptr<TraceModel>> m =
        LoadModel("corpus/traces/smallcl.cltrace", {}, {});
    ASSERT_TRUE(m.ok()) << m.status();
    app_.SetModel(*std::move(m));
    app_.calls().synchronous = true;
  }
  void TearDown() override { ImGui::DestroyContext(ctx_); }
  void Frames() {
    for (int i = 0; i < 3; ++i) {
      ImGui::NewFrame();
      app_.Draw();
      ImGui::Render();
    }
  }

  ImGuiContext* ctx_ = nullptr;
  App app_;
};

TEST_P(LabelGeometryTest, DiagramLabelsAreDisjointAndInsideForEveryMachine) {
  const TraceModel& m = *app_.model();
  for (RowKind kind : {RowKind::kCommandList, RowKind::kDeferredContext, RowKind::kLocal}) {
    int row = -1;
    for (int r = 0; r < static_cast<int>(m.rows().size()) && row < 0; ++r)
      if (m.rows()[r].kind == kind) row = r;
    ASSERT_GE(row, 0);
    app_.view().SelectRow(row);
    Frames();
    const StateDiagramPanel& d = app_.diagram();
    ASSERT_EQ(d.kind(), kind);
    const LabelBox box = d.diagram_box();
    std::vector<LabelBox> drawn;
    int taken = 0, taken_drawn = 0;
    for (const StateDiagramPanel::PlacedLabel& p : d.placed_labels()) {
      const bool is_taken = p.edge->count > 0 || p.edge->illegal;
      taken += is_taken;
      if (p.lines == 0) continue;
      taken_drawn += is_taken;
      EXPECT_TRUE(p.box.Inside(box)) << p.edge->label;
      for (const LabelBox& o : d.label_obstacles())
        EXPECT_FALSE(p.box.Intersects(o)) << p.edge->label << " covers a node or its name";
      for (const LabelBox& q : drawn) EXPECT_FALSE(p.box.Intersects(q)) << p.edge->label;
      drawn.push_back(p.box);
    }
    EXPECT_GT(taken, 0);
    // At these sizes every edge the trace took has its label.
    EXPECT_EQ(taken_drawn, taken) << RowKindName(kind);
  }
}

TEST_P(LabelGeometryTest, LifelineLabelsAreWholeDisjointAndInsideTheColumn) {
  Frames();
  const LifelinesGeometry& g = app_.lifelines().geometry();
  ASSERT_GT(g.labels.size(), 10u);
  const float column_x0 = g.lane_x0 - app_.lifelines().label_width;
  bool saw_local = false;
  for (size_t i = 0; i < g.labels.size(); ++i) {
    const LifelinesGeometry::RowLabel& l = g.labels[i];
    const Row& row = app_.model()->rows()[l.row];
    saw_local = saw_local || row.kind == RowKind::kLocal;
    // The whole label: "0x7e0000028000 -> 0x7e0000013000" is not cut at these sizes.
    EXPECT_EQ(l.text, row.label);
    const LabelBox column{column_x0, g.RowTop(l.row), g.lane_x0, g.RowTop(l.row) + g.row_height};
    EXPECT_TRUE(l.label.Inside(column)) << row.label;
    EXPECT_TRUE(l.tag.Inside(column)) << row.label;
    EXPECT_FALSE(l.tag.Intersects(l.label)) << row.label;
    for (size_t j = i + 1; j < g.labels.size(); ++j)
      EXPECT_FALSE(l.label.Intersects(g.labels[j].label)) << row.label;
  }
  EXPECT_TRUE(saw_local);
}

INSTANTIATE_TEST_SUITE_P(Sizes, LabelGeometryTest,
                         ::testing::Values(std::make_pair(1600, 900), std::make_pair(1280, 720)));

TEST_F(PanelsTest, ALabelTooLongForTheColumnIsElidedNotCut) {
  Load({.calls = 300, .dcs = 2});
  app_.lifelines().max_label_share = 0.05f;  // a column narrower than the labels
  app_.lifelines().min_label_width = 80.0f;
  Frame();
  const LifelinesGeometry& g = geo();
  bool elided = false;
  for (const LifelinesGeometry::RowLabel& l : g.labels) {
    EXPECT_LE(l.label.x1, g.lane_x0) << l.text;
    if (l.text != model().rows()[l.row].label) {
      elided = true;
      EXPECT_NE(l.text.find("..."), std::string::npos) << l.text;
    }
  }
  EXPECT_TRUE(elided);
}

}  // namespace
}  // namespace cltrace::inspector
