#include <cstring>
#include <vector>

#include "dx6/dx6_driver.h"
#include "dx6/dx6_runtime.h"
#include "gtest/gtest.h"

namespace cltrace::gpu {
namespace {

struct Dx6Fixture {
  explicit Dx6Fixture(PlantedBug bug = PlantedBug::kNone, Dx6RuntimeOptions ro = {}) {
    Dx6DriverOptions o;
    o.bug = bug;
    driver = std::make_unique<Dx6Driver>(o);
    ctx = driver->CreateContext();
    runtime = std::make_unique<Dx6Runtime>(driver->buffer_callbacks(), driver->hal_callbacks3(),
                                           driver->video_heap(), ctx, ro, &sink);
  }
  CollectingViolationSink sink;
  std::unique_ptr<Dx6Driver> driver;
  D3DHAL_HCONTEXT ctx{};
  std::unique_ptr<Dx6Runtime> runtime;
};

// A representative run: states, batched triangles through several swaps, an explicit
// write-only VB, user-memory vertices, a REQ size, then teardown.
void RunFrames(Dx6Fixture& f, int frames) {
  ASSERT_TRUE(f.runtime->Init().ok());
  auto vb = f.runtime->CreateExplicitVertexBuffer(60 * f.runtime->stride(), /*write_only=*/true);
  ASSERT_TRUE(vb.ok()) << vb.status();
  ASSERT_TRUE(f.runtime->WriteExplicit(*vb, PatternTriangles(20, f.runtime->stride(), 3)).ok());
  for (int frame = 0; frame < frames; ++frame) {
    ASSERT_TRUE(f.runtime->SetRenderState(7, frame).ok());
    for (int i = 0; i < 40; ++i) {
      ASSERT_TRUE(f.runtime
                      ->DrawTriangles(
                          PatternTriangles(3, f.runtime->stride(), static_cast<uint8_t>(frame + i)))
                      .ok());
    }
    ASSERT_TRUE(f.runtime->DrawExplicit(*vb, 0, 20).ok());
    ASSERT_TRUE(f.runtime->DrawUserMemory(PatternTriangles(2, f.runtime->stride(), 9)).ok());
    ASSERT_TRUE(f.runtime->Flush(frame == 1 ? 8192 : 0, 0).ok());
  }
}

TEST(Dx6Test, FramesRunCleanAndTearDownEverything) {
  Dx6Fixture f;
  RunFrames(f, 3);
  EXPECT_EQ(f.sink.size(), 0u) << f.sink.violations()[0].message;
  EXPECT_GT(f.driver->stats().command_swaps, 3u);
  EXPECT_GT(f.driver->stats().vertex_swaps, 1u);
  EXPECT_GT(f.runtime->stats().vidmem_command_swaps, 0u);  // the set mixes memory types
  EXPECT_EQ(f.runtime->stats().vidmem_vertex_swaps, 0u);   // implicit VBs stay in system memory
  EXPECT_EQ(f.runtime->render_states()[7], 2u);            // EXECUTEBUFFER updated lpdwRStates
  EXPECT_GT(f.driver->live_buffers(), 0u);
  ASSERT_TRUE(f.runtime->Shutdown().ok());
  EXPECT_EQ(f.driver->live_buffers(), 0u);
  EXPECT_EQ(f.driver->video_bytes_in_use(), 0u);
  EXPECT_EQ(f.driver->stats().buffers_created, f.driver->stats().buffers_destroyed);
}

struct RunResult {
  uint64_t digest;
  std::vector<std::string> log;
};

// One driver at a time: the DX6 tables carry no driver pointer (see dx6_driver.h).
RunResult RunOnce(int frames) {
  Dx6Fixture f;
  RunFrames(f, frames);
  return RunResult{f.driver->ContextDigest(f.ctx), f.runtime->log()};
}

TEST(Dx6Test, SameInputsGiveSameDigestAndLog) {
  RunResult a = RunOnce(2);
  RunResult b = RunOnce(2);
  EXPECT_EQ(a.digest, b.digest);
  EXPECT_EQ(a.log, b.log);
  RunResult c = RunOnce(3);
  EXPECT_NE(a.digest, c.digest);
}

TEST(Dx6Test, InvalidCommandGetsErrorOffsetOfFirstUnhandledCommand) {
  Dx6Fixture f;
  ASSERT_TRUE(f.runtime->Init().ok());
  ASSERT_TRUE(f.runtime->SetRenderState(1, 1).ok());  // 12 bytes
  const uint8_t unknown[] = {0x77, 0, 1, 0};
  ASSERT_TRUE(f.runtime->AppendRaw(unknown).ok());
  ASSERT_TRUE(f.runtime->SetRenderState(1, 2).ok());
  ASSERT_TRUE(f.runtime->Flush().ok());
  EXPECT_EQ(f.runtime->stats().failed_dp2, 1u);
  EXPECT_EQ(f.sink.size(), 0u);  // the driver reported it correctly
  EXPECT_NE(f.runtime->log().back().find("err=12"), std::string::npos) << f.runtime->log().back();
  EXPECT_EQ(f.runtime->render_states()[1], 1u);  // commands after the failure not applied
}

TEST(Dx6Test, VertexBeyondLengthIsReportedByTheDriver) {
  Dx6Fixture f;
  ASSERT_TRUE(f.runtime->Init().ok());
  ASSERT_TRUE(f.runtime->DrawTriangles(PatternTriangles(1, f.runtime->stride(), 1)).ok());
  Dp2Writer w;
  w.TriangleList(2, 1);  // vertices 2..4, only 3 in the VB
  ASSERT_TRUE(f.runtime->AppendRaw(w.bytes()).ok());
  ASSERT_TRUE(f.runtime->Flush().ok());
  EXPECT_EQ(f.runtime->stats().failed_dp2, 1u);
  EXPECT_EQ(f.sink.size(), 0u);
}

TEST(Dx6Test, RequestedSizeLargerThanVideoLimitIsBackedBySystemMemory) {
  Dx6Fixture f;
  ASSERT_TRUE(f.runtime->Init().ok());
  ASSERT_TRUE(f.runtime->SetRenderState(1, 1).ok());
  ASSERT_TRUE(f.runtime->Flush(/*req_command_size=*/200 * 1024, 0).ok());
  // Keep writing into the (larger) buffer handed back.
  for (int i = 0; i < 5000; ++i) ASSERT_TRUE(f.runtime->SetRenderState(2, i).ok());
  ASSERT_TRUE(f.runtime->Flush().ok());
  EXPECT_EQ(f.sink.size(), 0u);
  EXPECT_EQ(f.runtime->stats().failed_dp2, 0u);
}

TEST(Dx6Test, ExplicitVbWithoutWriteOnlyStaysInSystemMemory) {
  Dx6Fixture f;
  ASSERT_TRUE(f.runtime->Init().ok());
  const size_t video_before = f.driver->video_bytes_in_use();
  ASSERT_TRUE(f.runtime->CreateExplicitVertexBuffer(4096, /*write_only=*/false).ok());
  EXPECT_EQ(f.driver->video_bytes_in_use(), video_before);
  ASSERT_TRUE(f.runtime->CreateExplicitVertexBuffer(4096, /*write_only=*/true).ok());
  EXPECT_GT(f.driver->video_bytes_in_use(), video_before);
  EXPECT_EQ(f.sink.size(), 0u);
}

TEST(Dx6Test, PlantedR79IsDetected) {
  Dx6Fixture f(PlantedBug::kR79ImplicitVbInVidmem);
  RunFrames(f, 2);
  ASSERT_TRUE(f.sink.Has(rules::Rule::kR79));
  for (const auto& v : f.sink.violations()) EXPECT_EQ(v.rule, rules::Rule::kR79) << v.message;
}

TEST(Dx6Test, PlantedR80IsDetected) {
  Dx6Fixture f(PlantedBug::kR80BadErrorOffset);
  RunFrames(f, 1);
  ASSERT_TRUE(f.sink.Has(rules::Rule::kR80));
  for (const auto& v : f.sink.violations()) EXPECT_EQ(v.rule, rules::Rule::kR80) << v.message;
  EXPECT_NE(f.sink.violations()[0].message.find("past dwCommandLength"), std::string::npos);
}

TEST(Dx6Test, CanCreateRefusesBothTypeCaps) {
  Dx6Driver d;
  DD_CANCREATESURFACEDATA c{};
  c.dwCaps = DDSCAPS_EXECUTEBUFFER;
  c.dwCaps2 = DDSCAPS2_VERTEXBUFFER | DDSCAPS2_COMMANDBUFFER;
  c.dwLinearSize = 64;
  EXPECT_EQ(d.buffer_callbacks()->CanCreateD3DBuffer(&c), DDHAL_DRIVER_HANDLED);
  EXPECT_EQ(static_cast<uint32_t>(c.ddRVal), E_INVALIDARG);
  c.dwCaps = 0;  // not an execute buffer: not the D3D buffer callbacks' business
  EXPECT_EQ(d.buffer_callbacks()->CanCreateD3DBuffer(&c), DDHAL_DRIVER_NOTHANDLED);
}

TEST(Dx6Test, DrawPrimitives2OnUnknownContextFails) {
  Dx6Driver d;
  D3DHAL_DRAWPRIMITIVES2DATA p{};
  p.dwhContext.value = 99;
  EXPECT_EQ(d.hal_callbacks3()->DrawPrimitives2(&p), DDHAL_DRIVER_HANDLED);
  EXPECT_EQ(static_cast<uint32_t>(p.ddrval), E_INVALIDARG);
}

}  // namespace
}  // namespace cltrace::gpu
