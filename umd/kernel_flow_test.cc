// End-to-end tests of the kernel side: UMD helper -> kernel thunks -> model KMD -> GPU.
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/testing/golden.h"
#include "umd/synthetic_frames.h"
#include "umd/umd_context.h"
#include "wddm/content_model.h"
#include "wddm/digest.h"
#include "wddm/dxgkrnl.h"
#include "wddm/kernel_stack.h"
#include "wddm/kernel_transcript.h"

namespace cltrace::gpu {
namespace {

// A UMD-side view of one device on a fresh kernel stack.
struct Frame {
  explicit Frame(KernelStackOptions o = {}, TableWrappers w = {},
                 PlantedBug umd_bug = PlantedBug::kNone)
      : stack(o, &sink, std::move(w)) {
    dev = stack.kernel().CreateDevice().value();
    umd = std::make_unique<UmdDevice>(stack.device_callbacks(), dev, umd_bug);
  }
  // Allocates 4 KiB into *a and submits a clear of it to `value` on `ctx` (flushed, not waited
  // for).
  void SubmitClearedAllocation(UmdContext& ctx, uint64_t value, D3DKMT_HALLOCATION* a) {
    *a = umd->Allocate(4096).value();
    ASSERT_TRUE(ctx.Emit(Command::Clear(a->value, value)).ok());
    ASSERT_TRUE(ctx.Flush().ok());
  }
  // Context `ctx` waits for sync object `sync` (pfnWaitForSynchronizationObjectCb); returns
  // the callback's result.
  HRESULT WaitFor(const UmdContext& ctx, D3DKMT_HSYNCOBJECT sync) {
    D3DDDICB_WAITFORSYNCHRONIZATIONOBJECT w{};
    w.hContext = ctx.handle();
    w.ObjectCount = 1;
    w.ObjectHandleArray[0] = sync;
    return stack.device_callbacks()->pfnWaitForSynchronizationObjectCb(dev, &w);
  }
  // The same on a new context, kept in `ctx`.
  void SubmitClearedOnNewContext(uint64_t value, D3DKMT_HALLOCATION* a) {
    ctx = umd->CreateContext(0).value();
    SubmitClearedAllocation(*ctx, value, a);
  }
  std::string Violations() const {
    std::string s;
    for (const auto& v : sink.violations()) absl::StrAppend(&s, v.id(), " ", v.message, "\n");
    return s;
  }
  CollectingViolationSink sink;
  KernelStack stack;
  HANDLE dev{};
  std::unique_ptr<UmdDevice> umd;
  std::unique_ptr<UmdContext> ctx;  // SubmitClearedOnNewContext's
};

// The callbacks of the full D3D11.0 D3DDDI_DEVICECALLBACKS table the model used to leave out:
// a display without overlay planes refuses to create one (D3DDDIERR_NOTAVAILABLE) and knows no
// overlay handle; the async-callback switch and the private display format are accepted for
// the one video present source and refused for another.
TEST(KernelFlowTest, OverlayAsyncAndDisplayFormatCallbacksAnswerAsADisplayWithoutOverlays) {
  Frame f;
  const D3DDDI_DEVICECALLBACKS* cb = f.stack.device_callbacks();
  ASSERT_NE(cb->pfnCreateOverlayCb, nullptr);
  D3DDDICB_CREATEOVERLAY create{};
  create.OverlayInfo.hAllocation = f.umd->Allocate(4096).value();
  EXPECT_EQ(cb->pfnCreateOverlayCb(f.dev, &create), static_cast<HRESULT>(D3DDDIERR_NOTAVAILABLE));
  EXPECT_EQ(create.hKernelOverlay, 0u);
  create.VidPnSourceId = 1;
  EXPECT_EQ(cb->pfnCreateOverlayCb(f.dev, &create), static_cast<HRESULT>(E_INVALIDARG));
  D3DDDICB_UPDATEOVERLAY update{};
  D3DDDICB_FLIPOVERLAY flip{};
  D3DDDICB_DESTROYOVERLAY destroy{};
  EXPECT_EQ(cb->pfnUpdateOverlayCb(f.dev, &update), static_cast<HRESULT>(E_INVALIDARG));
  EXPECT_EQ(cb->pfnFlipOverlayCb(f.dev, &flip), static_cast<HRESULT>(E_INVALIDARG));
  EXPECT_EQ(cb->pfnDestroyOverlayCb(f.dev, &destroy), static_cast<HRESULT>(E_INVALIDARG));
  EXPECT_EQ(cb->pfnSetAsyncCallbacksCb(f.dev, 1), S_OK);
  D3DDDICB_SETDISPLAYPRIVATEDRIVERFORMAT format{};
  format.PrivateDriverFormatAttribute = 7;
  EXPECT_EQ(cb->pfnSetDisplayPrivateDriverFormatCb(f.dev, &format), S_OK);
  format.VidPnSourceId = 3;
  EXPECT_EQ(cb->pfnSetDisplayPrivateDriverFormatCb(f.dev, &format),
            static_cast<HRESULT>(E_INVALIDARG));
  // Every slot of the table is filled.
  for (size_t i = 0; i < sizeof(D3DDDI_DEVICECALLBACKS) / sizeof(void*); ++i) {
    EXPECT_NE(reinterpret_cast<void* const*>(cb)[i], nullptr) << "slot " << i;
  }
  EXPECT_EQ(f.Violations(), "");
}

TEST(KernelFlowTest, OneFrameProducesExpectedDigests) {
  Frame f;
  auto ctx = f.umd->CreateContext(0);
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  auto rt = f.umd->Allocate(4096).value();
  auto vb = f.umd->Allocate(1024).value();
  auto primary = f.umd->Allocate(4096, kAllocationDescPrimary).value();
  const char data[] = "vertices";
  ASSERT_TRUE((*ctx)->Emit(Command::Clear(rt.value, 0xFF0000FF)).ok());
  ASSERT_TRUE(
      (*ctx)->Emit(Command::Update(vb.value, 0, sizeof(data), HashBytes(data, sizeof(data)))).ok());
  const uint64_t in[] = {vb.value};
  ASSERT_TRUE((*ctx)->Emit(Command::Draw(rt.value, in, 0x1234, 3, 0, 1)).ok());
  ASSERT_TRUE((*ctx)->Present(rt, primary).ok());
  ASSERT_TRUE(f.stack.kernel().WaitIdle().ok());

  // The same operations on a bare content model.
  ContentModel m;
  ASSERT_TRUE(m.Create(1, 4096).ok());
  ASSERT_TRUE(m.Create(2, 1024).ok());
  ASSERT_TRUE(m.Create(3, 4096).ok());
  ASSERT_TRUE(m.Clear(1, 0xFF0000FF).ok());
  ASSERT_TRUE(m.Update(2, 0, sizeof(data), HashBytes(data, sizeof(data))).ok());
  const AllocationId ins[] = {2};
  ASSERT_TRUE(m.Draw(1, 0x1234, 3, 0, 1, ins).ok());
  ASSERT_TRUE(m.Copy(3, 1).ok());
  EXPECT_EQ(f.stack.kernel().AllocationDigest(rt), m.Digest(1));
  EXPECT_EQ(f.stack.kernel().AllocationDigest(vb), m.Digest(2));
  EXPECT_EQ(f.stack.kernel().AllocationDigest(primary), m.Digest(3));
  EXPECT_EQ(f.sink.size(), 0u) << f.Violations();
  auto st = f.stack.kernel().stats();
  EXPECT_EQ(st.submissions, 2u);  // the render DMA buffer and the present
  EXPECT_EQ(st.paging_buffers, 2u);
  EXPECT_EQ(st.vsyncs, 1u);
  EXPECT_EQ(f.stack.kernel().completed_fence(0), 4u);  // 2 paging + 2 DMA buffers
}

// ---- golden transcript ----------------------------------------------------------------------

// CLTRACE_UMD_TESTDATA (umd/CMakeLists.txt), not __FILE__: a compiler cache with a base
// directory makes __FILE__ relative to the build directory.
std::string GoldenPath(const char* name) { return absl::StrCat(CLTRACE_UMD_TESTDATA, "/", name); }

// One frame at the kernel layer: device and context creation, allocations, a draw, a flush, a
// present, completion (interrupts and DPCs), teardown.
std::string OneFrameTranscript() {
  KernelTranscript t;
  KernelStackOptions o;
  Frame f(o, t.Wrappers());
  t.SetClock([&] { return f.stack.kernel().NowForObserver(); });
  t.Note("# create");
  auto ctx = f.umd->CreateContext(0).value();
  auto rt = f.umd->Allocate(4096).value();
  auto vb = f.umd->Allocate(1024).value();
  auto primary = f.umd->Allocate(4096, kAllocationDescPrimary).value();
  t.Note("# draw");
  const char data[] = "triangle";
  EXPECT_TRUE(ctx->Emit(Command::Clear(rt.value, 0xFF202020)).ok());
  EXPECT_TRUE(
      ctx->Emit(Command::Update(vb.value, 0, sizeof(data), HashBytes(data, sizeof(data)))).ok());
  const uint64_t in[] = {vb.value};
  EXPECT_TRUE(ctx->Emit(Command::Draw(rt.value, in, 0xABCD, 3, 0, 1)).ok());
  t.Note("# flush");
  EXPECT_TRUE(ctx->Flush().ok());
  t.Note("# present");
  EXPECT_TRUE(ctx->Present(rt, primary).ok());
  t.Note("# completion");
  EXPECT_TRUE(f.stack.kernel().WaitIdle().ok());
  t.Note(absl::StrFormat("# digests rt=%016x vb=%016x primary=%016x",
                         f.stack.kernel().AllocationDigest(rt).value(),
                         f.stack.kernel().AllocationDigest(vb).value(),
                         f.stack.kernel().AllocationDigest(primary).value()));
  t.Note("# teardown");
  EXPECT_TRUE(ctx->Destroy().ok());
  EXPECT_TRUE(f.stack.kernel().DestroyDevice(f.dev).ok());
  EXPECT_EQ(f.sink.size(), 0u) << f.Violations();
  return t.Text();
}

TEST(KernelGoldenTest, OneFrameKernelLayer) {
  const std::string path = GoldenPath("one_frame_kernel.golden.txt");
  const std::string got = OneFrameTranscript();
  // Only CLTRACE_UPDATE_GOLDEN=1 rewrites it (tests/testing/golden.h); review the diff.
  EXPECT_TRUE(cltrace::testing::MatchesGolden(path, got));
}

// ---- determinism ----------------------------------------------------------------------------

struct RunRecord {
  std::string transcript;
  SyntheticFrameResult result;
};

RunRecord RunWorkload(SyntheticFrameOptions o, KernelStackOptions ko = {}) {
  KernelTranscript t;
  CollectingViolationSink sink;
  KernelStack stack(ko, &sink, t.Wrappers());
  t.SetClock([&] { return stack.kernel().NowForObserver(); });
  o.transcript = &t;
  auto r = RunSyntheticFrames(stack, o);
  EXPECT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(sink.size(), 0u);
  return RunRecord{t.Text(), r.ok() ? *r : SyntheticFrameResult{}};
}

TEST(KernelDeterminismTest, TwoRunsGiveIdenticalEventStreamsAndDigests) {
  SyntheticFrameOptions o;
  o.frames = 4;
  o.wait_each_frame = false;  // let CPU calls and completions interleave
  RunRecord a = RunWorkload(o), b = RunWorkload(o);
  EXPECT_EQ(a.transcript, b.transcript);
  EXPECT_EQ(a.result.final_combined_digest, b.result.final_combined_digest);
  EXPECT_EQ(a.result.virtual_time_ns, b.result.virtual_time_ns);
  EXPECT_GT(a.result.submissions, 4u);
  EXPECT_NE(a.transcript.find("[interrupt]"), std::string::npos);
}

TEST(KernelDeterminismTest, DigestsDoNotDependOnTimingOrMemoryPressure) {
  SyntheticFrameOptions o;
  o.frames = 3;
  RunRecord base = RunWorkload(o);
  KernelStackOptions slow;
  slow.kernel.gpu.per_command_ns = 50000;  // a much slower GPU: different interleaving
  slow.kernel.timing.dpc_latency_ns = 20000;
  RunRecord s = RunWorkload(o, slow);
  EXPECT_NE(base.transcript, s.transcript);
  EXPECT_EQ(base.result.primary_digests, s.result.primary_digests);
  KernelStackOptions tight;
  tight.kernel.video_memory_bytes = 160 * 1024;  // forces eviction and page-ins
  RunRecord t = RunWorkload(o, tight);
  EXPECT_EQ(base.result.primary_digests, t.result.primary_digests);
  EXPECT_NE(t.transcript.find("Operation=0"), std::string::npos);  // TRANSFER (paging) happened
  KernelStackOptions small_dma;
  small_dma.kmd.dma_buffer_size = 256;  // multipass DxgkDdiRender
  RunRecord m = RunWorkload(o, small_dma);
  EXPECT_EQ(base.result.primary_digests, m.result.primary_digests);
  EXPECT_NE(m.transcript.find("STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER"), std::string::npos);
  // And the frames do differ from each other.
  ASSERT_EQ(base.result.primary_digests.size(), 3u);
  EXPECT_NE(base.result.primary_digests[0], base.result.primary_digests[1]);
}

// ---- planted bugs ---------------------------------------------------------------------------

// Runs the synthetic workload with one planted bug; returns the violations.
std::vector<Violation> RunWithBug(PlantedBug bug) {
  CollectingViolationSink sink;
  KernelStackOptions ko;
  ko.bug = bug;
  KernelStack stack(ko, &sink);
  SyntheticFrameOptions o;
  o.frames = 2;
  o.umd_bug = bug;
  (void)RunSyntheticFrames(stack, o);  // a planted bug may make later calls fail
  return sink.violations();
}

class PlantedBugTest : public ::testing::TestWithParam<rules::Rule> {};

TEST_P(PlantedBugTest, DetectedWithItsRuleOnly) {
  const rules::Rule rule = GetParam();
  std::vector<Violation> v = RunWithBug(PlantedBugFromRule(rule));
  ASSERT_FALSE(v.empty()) << rules::RuleId(rule) << " not detected";
  for (const Violation& x : v) EXPECT_EQ(x.rule, rule) << x.message;
}

INSTANTIATE_TEST_SUITE_P(KernelRules, PlantedBugTest,
                         ::testing::Values(rules::Rule::kR74, rules::Rule::kR75, rules::Rule::kR76,
                                           rules::Rule::kR77, rules::Rule::kR78),
                         [](const auto& info) { return std::string(rules::RuleId(info.param)); });

TEST(PlantedBugSideEffectsTest, CleanRunHasNoViolations) {
  EXPECT_TRUE(RunWithBug(PlantedBug::kNone).empty());
}

TEST(PlantedBugSideEffectsTest, R76UnpatchedBufferFaultsOnTheGpu) {
  CollectingViolationSink sink;
  KernelStackOptions ko;
  ko.bug = PlantedBug::kR76SubmitUnpatched;
  KernelStack stack(ko, &sink);
  SyntheticFrameOptions o;
  o.frames = 1;
  ASSERT_TRUE(RunSyntheticFrames(stack, o).ok());
  EXPECT_GT(stack.kernel().stats().faults, 0u);
}

// ---- kernel-thunk contract details ---------------------------------------------------------

TEST(KernelFlowTest, RenderCbOnUnknownContextIsR74) {
  Frame f;
  D3DDDICB_RENDER r{};
  r.hContext = reinterpret_cast<HANDLE>(uintptr_t{42});
  EXPECT_EQ(static_cast<uint32_t>(f.stack.device_callbacks()->pfnRenderCb(f.dev, &r)),
            E_INVALIDARG);
  ASSERT_TRUE(f.sink.Has(rules::Rule::kR74));
}

TEST(KernelFlowTest, RenderCbBeyondHandedOutSizesIsR74) {
  Frame f;
  D3DDDICB_CREATECONTEXT cc{};
  ASSERT_EQ(f.stack.device_callbacks()->pfnCreateContextCb(f.dev, &cc), 0);
  D3DDDICB_RENDER r{};
  r.hContext = cc.hContext;
  r.CommandLength = cc.CommandBufferSize + 4;
  EXPECT_EQ(static_cast<uint32_t>(f.stack.device_callbacks()->pfnRenderCb(f.dev, &r)),
            D3DDDIERR_INVALIDUSERBUFFER);
  ASSERT_TRUE(f.sink.Has(rules::Rule::kR74));
  // The kernel still handed out fresh buffers: the UMD must continue in them.
  EXPECT_NE(r.pNewCommandBuffer, nullptr);
  EXPECT_EQ(r.NewCommandBufferSize, cc.CommandBufferSize);
}

TEST(KernelFlowTest, PrivilegedInstructionInUserBufferIsRejected) {
  Frame f;
  D3DDDICB_CREATECONTEXT cc{};
  ASSERT_EQ(f.stack.device_callbacks()->pfnCreateContextCb(f.dev, &cc), 0);
  std::vector<uint32_t> words;
  AppendCommand(Command::Fence(1), CommandFormat::kDma, &words, nullptr);
  std::memcpy(cc.pCommandBuffer, words.data(), words.size() * 4);
  D3DDDICB_RENDER r{};
  r.hContext = cc.hContext;
  r.CommandLength = static_cast<UINT>(words.size() * 4);
  EXPECT_EQ(static_cast<uint32_t>(f.stack.device_callbacks()->pfnRenderCb(f.dev, &r)),
            D3DDDIERR_PRIVILEGEDINSTRUCTION);
  EXPECT_EQ(f.sink.size(), 0u);
}

TEST(KernelFlowTest, UnknownAllocationInListIsInvalidHandle) {
  Frame f;
  D3DDDICB_CREATECONTEXT cc{};
  ASSERT_EQ(f.stack.device_callbacks()->pfnCreateContextCb(f.dev, &cc), 0);
  std::vector<uint32_t> words;
  AppendCommand(Command::Clear(0, 1), CommandFormat::kUser, &words, nullptr);
  std::memcpy(cc.pCommandBuffer, words.data(), words.size() * 4);
  static_cast<UserAllocationListEntry*>(cc.pAllocationList)[0] = {D3DKMT_HALLOCATION{777}, 1};
  D3DDDICB_RENDER r{};
  r.hContext = cc.hContext;
  r.CommandLength = static_cast<UINT>(words.size() * 4);
  r.NumAllocations = 1;
  EXPECT_EQ(static_cast<uint32_t>(f.stack.device_callbacks()->pfnRenderCb(f.dev, &r)),
            D3DDDIERR_INVALIDHANDLE);
}

TEST(KernelFlowTest, OversizedCommandGetsResizedBuffer) {
  KernelStackOptions o;
  o.kmd.dma_buffer_size = 256;
  Frame f(o);
  auto ctx = f.umd->CreateContext(0).value();
  std::vector<uint32_t> payload(200, 7);  // 804 bytes: larger than the 256-byte buffer
  ASSERT_TRUE(ctx->Emit(Command::Private(payload)).ok());
  EXPECT_GE(ctx->command_buffer_size(), 804u);
  ASSERT_TRUE(ctx->Flush().ok());
  ASSERT_TRUE(f.stack.kernel().WaitIdle().ok());
  EXPECT_EQ(f.sink.size(), 0u) << f.Violations();
}

TEST(KernelFlowTest, SplitsDmaBufferWhenAllocationsDoNotFitTogether) {
  KernelStackOptions o;
  o.kernel.video_memory_bytes = 3 * 4096;
  Frame f(o);
  auto ctx = f.umd->CreateContext(0).value();
  std::vector<D3DKMT_HALLOCATION> a;
  for (int i = 0; i < 5; ++i) a.push_back(f.umd->Allocate(4096).value());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(ctx->Emit(Command::Clear(a[i].value, 100 + i)).ok());
  ASSERT_TRUE(ctx->Flush().ok());
  ASSERT_TRUE(f.stack.kernel().WaitIdle().ok());
  EXPECT_GE(f.stack.kernel().stats().splits, 1u);
  ContentModel m;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(m.Create(10 + i, 4096).ok());
    ASSERT_TRUE(m.Clear(10 + i, 100 + i).ok());
    EXPECT_EQ(f.stack.kernel().AllocationDigest(a[i]), m.Digest(10 + i)) << i;
  }
  EXPECT_EQ(f.sink.size(), 0u) << f.Violations();
}

TEST(KernelFlowTest, DeallocateWhileInFlightIsDeferred) {
  Frame f;
  D3DKMT_HALLOCATION a;
  ASSERT_NO_FATAL_FAILURE(f.SubmitClearedOnNewContext(1, &a));
  const uint64_t live = f.stack.kernel().stats().allocations;
  ASSERT_TRUE(f.umd->Deallocate(a).ok());  // after pfnRenderCb (R67), before completion
  EXPECT_EQ(f.stack.kernel().stats().allocations, live);  // still referenced by queued work
  ASSERT_TRUE(f.stack.kernel().WaitIdle().ok());
  EXPECT_EQ(f.stack.kernel().stats().allocations, live - 1);
  EXPECT_FALSE(f.umd->Deallocate(a).ok());  // gone
}

TEST(KernelFlowTest, LockWaitsForGpuAndUnlockWritesContent) {
  Frame f;
  auto ctx = f.umd->CreateContext(0).value();
  auto a = f.umd->Allocate(64, kAllocationDescCpuVisible).value();
  ASSERT_TRUE(ctx->Emit(Command::Clear(a.value, 1)).ok());
  ASSERT_TRUE(ctx->Flush().ok());
  const auto* cb = f.stack.device_callbacks();
  D3DDDICB_LOCK lk{};
  lk.hAllocation = a;
  lk.Flags = D3DDDICB_LOCKFLAGS_DONOTWAIT;
  EXPECT_EQ(static_cast<uint32_t>(cb->pfnLockCb(f.dev, &lk)), D3DDDIERR_WASSTILLDRAWING);
  lk.Flags = 0;
  ASSERT_EQ(cb->pfnLockCb(f.dev, &lk), 0);
  std::memset(lk.pData, 0x5A, 64);
  // Rendering a locked allocation is refused.
  ASSERT_TRUE(ctx->Emit(Command::Clear(a.value, 2)).ok());
  EXPECT_EQ(ctx->Flush().code(), absl::StatusCode::kInvalidArgument);
  D3DDDICB_UNLOCK ul{};
  ul.NumAllocations = 1;
  ul.phAllocations = &a;
  ASSERT_EQ(cb->pfnUnlockCb(f.dev, &ul), 0);
  std::vector<uint8_t> bytes(64, 0x5A);
  ContentModel m;
  ASSERT_TRUE(m.Create(1, 64).ok());
  ASSERT_TRUE(m.Update(1, 0, 64, HashBytes(bytes.data(), 64)).ok());
  EXPECT_EQ(f.stack.kernel().AllocationDigest(a), m.Digest(1));
}

TEST(KernelFlowTest, EscapeQueriesDigestAndResidency) {
  Frame f;
  D3DKMT_HALLOCATION a;
  ASSERT_NO_FATAL_FAILURE(f.SubmitClearedOnNewContext(9, &a));
  ASSERT_TRUE(f.stack.kernel().WaitIdle().ok());
  EscapeData e;
  e.code = kEscapeQueryDigest;
  e.hAllocation = a.value;
  D3DDDICB_ESCAPE esc{};
  esc.pPrivateDriverData = &e;
  esc.PrivateDriverDataSize = sizeof(e);
  ASSERT_EQ(f.stack.device_callbacks()->pfnEscapeCb(f.dev, &esc), 0);
  EXPECT_EQ(e.result, f.stack.kernel().AllocationDigest(a).value());
  e.code = kEscapeQueryResidency;
  ASSERT_EQ(f.stack.device_callbacks()->pfnEscapeCb(f.dev, &esc), 0);
  EXPECT_EQ(e.result, 1u);
  D3DDDI_RESIDENCYSTATUS status = 0;
  D3DDDICB_QUERYRESIDENCY q{};
  q.NumAllocations = 1;
  q.HandleList = &a;
  q.pResidencyStatus = &status;
  ASSERT_EQ(f.stack.device_callbacks()->pfnQueryResidencyCb(f.dev, &q), 0);
  EXPECT_EQ(status, D3DDDI_RESIDENCYSTATUS_RESIDENTINGPUMEMORY);
}

// D3DDDICB_DEALLOCATE / SETPRIORITY / QUERYRESIDENCY name a resource by the runtime's HANDLE
// that AllocateCb associated the allocations with (d3dumddi.h), not by a kernel handle.
TEST(KernelFlowTest, RuntimeResourceHandleNamesItsAllocations) {
  Frame f;
  int runtime_resource = 0, other = 0;  // the runtime's resource handles: any addresses
  ASSERT_TRUE(f.umd->Allocate(4096, 0, D3D10DDI_HRTRESOURCE{&runtime_resource}).ok());
  const auto* cb = f.stack.device_callbacks();
  D3DDDI_RESIDENCYSTATUS status = 0;
  D3DDDICB_QUERYRESIDENCY q{};
  q.hResource = &runtime_resource;
  q.pResidencyStatus = &status;
  ASSERT_EQ(cb->pfnQueryResidencyCb(f.dev, &q), 0);
  EXPECT_NE(status, 0u);
  UINT priority = 7;
  D3DDDICB_SETPRIORITY prio{};
  prio.hResource = &runtime_resource;
  prio.pPriorities = &priority;
  EXPECT_EQ(cb->pfnSetPriorityCb(f.dev, &prio), 0);
  q.hResource = &other;
  EXPECT_EQ(static_cast<uint32_t>(cb->pfnQueryResidencyCb(f.dev, &q)), E_INVALIDARG);
  D3DDDICB_DEALLOCATE d{};
  d.hResource = &runtime_resource;
  ASSERT_EQ(cb->pfnDeallocateCb(f.dev, &d), 0);
  q.hResource = &runtime_resource;  // gone with its allocations
  EXPECT_EQ(static_cast<uint32_t>(cb->pfnQueryResidencyCb(f.dev, &q)), E_INVALIDARG);
}

TEST(KernelFlowTest, WaitOnSignalOrdersWorkAcrossNodes) {
  Frame f;
  auto copy_ctx = f.umd->CreateContext(1).value();
  auto gfx_ctx = f.umd->CreateContext(0).value();
  auto src = f.umd->Allocate(4096).value();
  auto dst = f.umd->Allocate(4096).value();
  const auto* cb = f.stack.device_callbacks();
  D3DDDICB_CREATESYNCHRONIZATIONOBJECT cs{};
  cs.Info.Type = D3DDDI_SEMAPHORE;
  cs.Info.Semaphore.MaxCount = 4;
  ASSERT_EQ(cb->pfnCreateSynchronizationObjectCb(f.dev, &cs), 0);
  // The graphics context waits for the copy context's signal before copying src -> dst.
  ASSERT_EQ(f.WaitFor(*gfx_ctx, cs.hSyncObject), 0);
  ASSERT_TRUE(gfx_ctx->Emit(Command::Copy(dst.value, src.value)).ok());
  ASSERT_TRUE(gfx_ctx->Flush().ok());
  ASSERT_TRUE(copy_ctx->Emit(Command::Clear(src.value, 0xC0FFEE)).ok());
  ASSERT_TRUE(copy_ctx->Flush().ok());
  D3DDDICB_SIGNALSYNCHRONIZATIONOBJECT s{};
  s.hContext = copy_ctx->handle();
  s.ObjectCount = 1;
  s.ObjectHandleArray[0] = cs.hSyncObject;
  ASSERT_EQ(cb->pfnSignalSynchronizationObjectCb(f.dev, &s), 0);
  ASSERT_TRUE(f.stack.kernel().WaitIdle().ok());
  EXPECT_EQ(f.stack.kernel().AllocationDigest(dst), f.stack.kernel().AllocationDigest(src));
  EXPECT_EQ(f.sink.size(), 0u) << f.Violations();
}

TEST(KernelFlowTest, UnsignalledWaitIsReportedByWaitIdle) {
  Frame f;
  auto ctx = f.umd->CreateContext(0).value();
  const auto* cb = f.stack.device_callbacks();
  D3DDDICB_CREATESYNCHRONIZATIONOBJECT cs{};
  cs.Info.Type = D3DDDI_SYNCHRONIZATION_MUTEX;
  ASSERT_EQ(cb->pfnCreateSynchronizationObjectCb(f.dev, &cs), 0);
  ASSERT_EQ(f.WaitFor(*ctx, cs.hSyncObject), 0);
  EXPECT_EQ(f.stack.kernel().WaitIdle().code(), absl::StatusCode::kFailedPrecondition);
}

// R66: a command list reads the alias it discarded to, whatever the IC does before execute;
// after execute the IC's current alias is the list's last one.
TEST(KernelFlowTest, CommandListRenamingKeepsRecordedContent) {
  Frame f;
  auto ctx = f.umd->CreateContext(0).value();
  auto rt = f.umd->Allocate(4096).value();
  constexpr uint64_t kKey = 7;
  DynamicAliasTable ic;
  auto a1 = f.umd->Allocate(256).value();
  ic.Set(kKey, a1.value);
  ASSERT_TRUE(ctx->Emit(Command::Update(a1.value, 0, 4, 111)).ok());
  // Deferred context: discard -> a2, write, draw.
  CommandRecording rec;
  auto a2 = f.umd->Allocate(256).value();
  rec.RecordRename(kKey, a2.value);
  ASSERT_TRUE(rec.Emit(Command::Update(a2.value, 0, 4, 222)).ok());
  const uint64_t in2[] = {a2.value};
  ASSERT_TRUE(rec.Emit(Command::Draw(rt.value, in2, 1, 3, 0, 1)).ok());
  // IC discards again before the list executes -> a3 with other content.
  auto a3 = f.umd->Allocate(256).value();
  ic.Set(kKey, a3.value);
  ASSERT_TRUE(ctx->Emit(Command::Update(a3.value, 0, 4, 333)).ok());
  ASSERT_TRUE(ctx->Splice(rec, &ic).ok());
  EXPECT_EQ(ic.Get(kKey), a2.value);
  ASSERT_TRUE(ctx->Flush().ok());
  ASSERT_TRUE(f.stack.kernel().WaitIdle().ok());
  ContentModel m;
  ASSERT_TRUE(m.Create(1, 4096).ok());
  ASSERT_TRUE(m.Create(2, 256).ok());
  ASSERT_TRUE(m.Update(2, 0, 4, 222).ok());
  const AllocationId ins[] = {2};
  ASSERT_TRUE(m.Draw(1, 1, 3, 0, 1, ins).ok());
  EXPECT_EQ(f.stack.kernel().AllocationDigest(rt), m.Digest(1));
}

// pfnAllocateCb / pfnDeallocateCb are free-threaded (R18): concurrent callers are serialised by
// the kernel's lock while the immediate context keeps submitting.
TEST(KernelFlowTest, AllocateCbIsSafeFromManyThreads) {
  Frame f;
  auto ctx = f.umd->CreateContext(0).value();
  auto rt = f.umd->Allocate(4096).value();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto a = f.umd->Allocate(256 + i);
        ASSERT_TRUE(a.ok());
        ASSERT_TRUE(f.umd->Deallocate(*a).ok());
      }
    });
  }
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(ctx->Emit(Command::Clear(rt.value, i)).ok());
    ASSERT_TRUE(ctx->Flush().ok());
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(f.stack.kernel().WaitIdle().ok());
  EXPECT_EQ(f.stack.kernel().stats().allocations, 1u);
  EXPECT_EQ(f.sink.size(), 0u) << f.Violations();
}

TEST(KernelFlowTest, DestroyDeviceReleasesLeftovers) {
  Frame f;
  D3DKMT_HALLOCATION a;
  ASSERT_NO_FATAL_FAILURE(f.SubmitClearedOnNewContext(1, &a));
  ASSERT_TRUE(f.stack.kernel().DestroyDevice(f.dev).ok());
  EXPECT_EQ(f.stack.kernel().stats().allocations, 0u);
  EXPECT_TRUE(f.stack.kernel().AllocationDigests().empty());
}

// ---- GPU observer (GpuFenceRetired) -------------------------------------------------------

// Stateless C wrappers need globals: the calls the observer saw, and the table it wraps.
struct Retired {
  uint32_t node = 0;
  uint64_t fence = 0;
  uint64_t digest = 0;
  bool paging = false;
};
std::vector<Retired>* g_retired = nullptr;
const CLTRACE_GPU_OBSERVER* g_real_observer = nullptr;

void APIENTRY RecordRetired(DXGKRNL_HADAPTER h, UINT node, UINT64 fence, UINT64 digest,
                            BOOL paging) {
  g_retired->push_back({node, fence, digest, paging != 0});
  g_real_observer->pfnGpuFenceRetired(h, node, fence, digest, paging);
}
const CLTRACE_GPU_OBSERVER kRecordingObserver = {RecordRetired};

class GpuObserverTest : public ::testing::Test {
 protected:
  GpuObserverTest() { g_retired = &retired_; }
  ~GpuObserverTest() override { g_retired = nullptr; }
  static TableWrappers Wrappers() {
    TableWrappers w;
    w.gpu_observer = [](const CLTRACE_GPU_OBSERVER* real) {
      g_real_observer = real;
      return &kRecordingObserver;
    };
    return w;
  }
  std::vector<Retired> retired_;
};

TEST_F(GpuObserverTest, EveryRetiredFenceOnceInOrderWithTheContentItLeft) {
  Frame f({}, Wrappers());
  auto ctx = f.umd->CreateContext(0).value();
  auto a = f.umd->Allocate(4096).value();
  // Three submissions: clear to 1, to 2, to 1 again.
  for (uint64_t value : {1, 2, 1}) {
    ASSERT_TRUE(ctx->Emit(Command::Clear(a.value, value)).ok());
    ASSERT_TRUE(ctx->Flush().ok());
    ASSERT_TRUE(f.stack.kernel().WaitIdle().ok());
  }
  const auto st = f.stack.kernel().stats();
  ASSERT_EQ(retired_.size(), st.submissions + st.paging_buffers);
  ASSERT_EQ(st.paging_buffers, 1u);  // the first use pages `a` in (FILL)
  ASSERT_EQ(retired_.size(), 4u);
  for (size_t i = 0; i < retired_.size(); ++i) {
    EXPECT_EQ(retired_[i].node, 0u) << i;
    EXPECT_EQ(retired_[i].fence, i + 1) << i;  // each fence once, in order
  }
  EXPECT_EQ(f.stack.kernel().completed_fence(0), 4u);
  // The paging fence wrote no content (a fill changes no digest); then each clear wrote `a`.
  ContentModel m;
  EXPECT_TRUE(retired_[0].paging);
  EXPECT_EQ(retired_[0].digest, m.CombinedDigest());
  ASSERT_TRUE(m.Create(a.value, 4096).ok());
  ASSERT_TRUE(m.Clear(a.value, 1).ok());
  EXPECT_FALSE(retired_[1].paging);
  EXPECT_EQ(retired_[1].digest, m.CombinedDigest());
  ASSERT_TRUE(m.Clear(a.value, 2).ok());
  EXPECT_EQ(retired_[2].digest, m.CombinedDigest());
  // Different content, different digests; the same content again, the same digest.
  EXPECT_NE(retired_[1].digest, retired_[2].digest);
  EXPECT_EQ(retired_[3].digest, retired_[1].digest);
  EXPECT_EQ(f.sink.size(), 0u) << f.Violations();
}

// The digest is the content when the GPU finished the entry, not when the DPC retired it: a
// change the CPU makes in between (a new allocation) is not in it.
TEST_F(GpuObserverTest, DigestIsTakenAtCompletionNotWhenTheDpcRuns) {
  KernelStackOptions o;
  o.kernel.timing.dpc_latency_ns = 1000000;  // the DPC runs 1 ms (virtual) after the ISR
  Frame f(o, Wrappers());
  D3DKMT_HALLOCATION a;
  ASSERT_NO_FATAL_FAILURE(f.SubmitClearedOnNewContext(7, &a));
  f.stack.kernel().RunFor(100000);  // the GPU is done; the DPC has not run
  EXPECT_EQ(f.stack.kernel().hardware().completed_fence(0), 2u);
  EXPECT_TRUE(retired_.empty());
  auto b = f.umd->Allocate(4096).value();
  ASSERT_TRUE(f.stack.kernel().WaitIdle().ok());
  ASSERT_EQ(retired_.size(), 2u);
  ContentModel m;
  ASSERT_TRUE(m.Create(a.value, 4096).ok());
  ASSERT_TRUE(m.Clear(a.value, 7).ok());
  EXPECT_EQ(retired_[1].fence, 2u);
  EXPECT_EQ(retired_[1].digest, m.CombinedDigest());
  ASSERT_TRUE(m.Create(b.value, 4096).ok());
  EXPECT_EQ(f.stack.kernel().CombinedDigest(), m.CombinedDigest());
  EXPECT_NE(retired_[1].digest, f.stack.kernel().CombinedDigest());
}

// The digest is what the entry wrote, not the whole content model: an allocation another
// thread creates right before or right after the completion (a map-discard's AllocateCb racing
// the GPU; which side it lands on follows the kernel lock order, which a recording does not
// pin down for every call) leaves the fence's digest alone.
TEST_F(GpuObserverTest, DigestDoesNotDependOnWhichSideOfTheCompletionAnotherCallLands) {
  auto run = [this](bool allocate_before_completion) {
    retired_.clear();
    Frame f({}, Wrappers());
    auto ctx = f.umd->CreateContext(0).value();
    auto a = f.umd->Allocate(4096).value();
    auto c = f.umd->Allocate(4096).value();  // exists all along, never written
    (void)c;
    EXPECT_TRUE(ctx->Emit(Command::Clear(a.value, 7)).ok());
    EXPECT_TRUE(ctx->Flush().ok());
    if (allocate_before_completion) {
      (void)f.umd->Allocate(4096).value();
      EXPECT_LT(f.stack.kernel().hardware().completed_fence(0), 2u);
    } else {
      f.stack.kernel().RunFor(100000);
      EXPECT_EQ(f.stack.kernel().hardware().completed_fence(0), 2u);
      (void)f.umd->Allocate(4096).value();
    }
    EXPECT_TRUE(f.stack.kernel().WaitIdle().ok());
    EXPECT_EQ(f.sink.size(), 0u) << f.Violations();
    EXPECT_EQ(retired_.size(), 2u);
    ContentModel m;
    EXPECT_TRUE(m.Create(a.value, 4096).ok());
    EXPECT_TRUE(m.Clear(a.value, 7).ok());
    return retired_.size() == 2 && retired_[1].fence == 2 &&
                   retired_[1].digest == m.CombinedDigest()
               ? retired_[1].digest
               : 0;
  };
  const uint64_t before = run(true), after = run(false);
  EXPECT_NE(before, 0u);
  EXPECT_EQ(before, after);
}

// The same calls on the same timing retire the same fences with the same digests (a replay
// relies on it).
TEST_F(GpuObserverTest, TwoRunsRetireTheSameFencesWithTheSameDigests) {
  auto run = [] {
    std::vector<Retired> seen;
    g_retired = &seen;
    {
      CollectingViolationSink sink;
      KernelStack stack(KernelStackOptions{}, &sink, Wrappers());
      SyntheticFrameOptions so;
      so.frames = 3;
      so.wait_each_frame = false;  // let CPU calls and completions interleave
      EXPECT_TRUE(RunSyntheticFrames(stack, so).ok());
      EXPECT_EQ(sink.size(), 0u);
    }
    std::vector<std::string> out;
    for (const Retired& r : seen) {
      out.push_back(absl::StrFormat("%u/%u/%016x/%d", r.node, r.fence, r.digest, r.paging));
    }
    return out;
  };
  const std::vector<std::string> a = run(), b = run();
  g_retired = &retired_;
  EXPECT_GT(a.size(), 6u);
  EXPECT_EQ(a, b);
}

// Observer calls are kernel-layer calls: a recording holds them, so the process-wide count
// (what a workload reports as the calls a trace of it holds) includes them.
TEST_F(GpuObserverTest, ObserverCallsAreCountedWithTheKernelLayer) {
  KernelTranscript t;
  Frame f({}, t.Wrappers());
  EXPECT_NE(f.stack.gpu_observer_table(), nullptr);
  const uint64_t before = ProcessKernelLayerCalls();
  const size_t first_line = t.lines().size();
  D3DKMT_HALLOCATION a;
  ASSERT_NO_FATAL_FAILURE(f.SubmitClearedOnNewContext(3, &a));
  ASSERT_TRUE(f.stack.kernel().WaitIdle().ok());
  uint64_t kernel_layer_lines = 0, observer_lines = 0;
  for (size_t i = first_line; i < t.lines().size(); ++i) {
    const std::string& l = t.lines()[i];
    if (l.find(" kmd ") != std::string::npos || l.find(" dxgkrnl ") != std::string::npos) {
      ++kernel_layer_lines;
    }
    if (l.find("GpuFenceRetired(") != std::string::npos) ++observer_lines;
  }
  EXPECT_EQ(observer_lines, 2u);  // the paging buffer's fence and the DMA buffer's
  EXPECT_EQ(ProcessKernelLayerCalls() - before, kernel_layer_lines);
}

}  // namespace
}  // namespace cltrace::gpu
