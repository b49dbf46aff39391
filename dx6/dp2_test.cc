#include "dx6/dp2.h"

#include <vector>

#include "gtest/gtest.h"

namespace cltrace::gpu {
namespace {

TEST(Dp2Test, ParsesEveryCommandKind) {
  Dp2Writer w;
  w.RenderState(7, 1);
  w.TextureStageState(0, 1, 2);
  w.Viewport(0, 0, 640, 480);
  w.WInfo(0.5f, 100.0f);
  w.Points(4, 0);
  w.LineList(0, 2);
  w.LineStrip(1, 3);
  w.TriangleList(0, 2);
  w.TriangleStrip(2, 2);
  w.TriangleFan(0, 1);
  const uint16_t tri[] = {0, 1, 2, 3, 4, 5};
  w.IndexedTriangleList(tri);
  const uint16_t lines[] = {5, 4};
  w.IndexedLineList(lines);
  std::vector<uint8_t> ops;
  auto r = ParseDp2(w.bytes(), 6, [&](const Dp2Command& c) { ops.push_back(c.op); });
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.commands, 12u);
  EXPECT_EQ(ops.size(), 12u);
  EXPECT_EQ(r.primitives, 4u + 2 + 3 + 2 + 2 + 1 + 2 + 1);
}

TEST(Dp2Test, VertexBeyondLengthFailsAtThatCommand) {
  Dp2Writer w;
  w.RenderState(1, 2);
  const uint32_t second = static_cast<uint32_t>(w.size());
  w.TriangleList(2, 2);  // vertices 2..7
  w.RenderState(1, 3);
  auto r = ParseDp2(w.bytes(), 7, [](const Dp2Command&) {});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error_offset, second);
  EXPECT_EQ(r.commands, 1u);
}

TEST(Dp2Test, IndexedVertexBeyondLengthFails) {
  Dp2Writer w;
  const uint16_t tri[] = {0, 1, 9};
  w.IndexedTriangleList(tri);
  EXPECT_FALSE(ParseDp2(w.bytes(), 9, [](const Dp2Command&) {}).ok);
  EXPECT_TRUE(ParseDp2(w.bytes(), 10, [](const Dp2Command&) {}).ok);
}

TEST(Dp2Test, PayloadPastCommandLengthFails) {
  Dp2Writer w;
  w.RenderState(1, 2);
  std::vector<uint8_t> bytes = w.bytes();
  bytes.pop_back();  // the length given to the driver ends one byte early
  auto r = ParseDp2(bytes, 0, [](const Dp2Command&) {});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error_offset, 0u);
}

TEST(Dp2Test, TruncatedHeaderFails) {
  const uint8_t bytes[] = {8, 0, 1};
  auto r = ParseDp2(bytes, 0, [](const Dp2Command&) {});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error_offset, 0u);
}

TEST(Dp2Test, UnknownOpcodeFailsUnlessHandled) {
  Dp2Writer w;
  w.RenderState(1, 2);
  const uint8_t unknown[] = {200, 0, 1, 0, 0xAA, 0xBB};
  w.Raw(unknown);
  w.RenderState(1, 3);
  auto r = ParseDp2(w.bytes(), 0, [](const Dp2Command&) {});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error_offset, 12u);
  int unknown_calls = 0;
  auto handled = ParseDp2(
      w.bytes(), 0, [](const Dp2Command&) {},
      [&](uint8_t op, uint16_t count, absl::Span<const uint8_t>) -> int64_t {
        ++unknown_calls;
        EXPECT_EQ(op, 200);
        return 2 * count;
      });
  EXPECT_TRUE(handled.ok) << handled.error;
  EXPECT_EQ(unknown_calls, 1);
  EXPECT_EQ(handled.commands, 3u);
}

TEST(Dp2Test, EmptyStreamIsOk) {
  auto r = ParseDp2({}, 0, [](const Dp2Command&) {});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.commands, 0u);
}

}  // namespace
}  // namespace cltrace::gpu
