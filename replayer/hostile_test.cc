// Hostile and malformed traces: each is bad input (exit 2) with the seq and a clear message,
// found before the call reaches the driver; none crashes the replayer.
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"
#include "format/load_trace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "replayer/internal/plan.h"
#include "replayer/replay.h"

namespace cltrace::replay {
namespace {

using ::testing::HasSubstr;

// Device bring-up of tests/replay/small_cl.jsonl (GetCaps, CalcPrivateDeviceSize, CreateDevice
// with its callbacks): every hostile trace below starts with it.
constexpr char kBringUp[] =
    R"({"seq":10,"tid":1,"fn":"GetCaps","args":{"hAdapter":"adapter","Type":"D3D11DDICAPS_THREADING","pInfo":0,"pData.pData":[5],"DataSize":4},"ret":"S_OK"}
{"seq":20,"tid":1,"fn":"CalcPrivateDeviceSize","args":{"hAdapter":"adapter","Interface":720906,"Version":131072},"ret":9056}
{"seq":30,"tid":1,"fn":"CreateDevice","args":{"hAdapter":"adapter","hRTDevice":"rtdev","Interface":720906,"Version":131072,"pKTCallbacks":"0x2000","p11DeviceFuncs":"0x3000","hDrvDevice":"ic","DXGIBaseDDI.pDXGIDDIBaseFunctions":"0x4000","hRTCoreLayer":"rtcore.ic","p11UMCallbacks":"0x5000"},"ret":"S_OK"}
{"seq":40,"tid":1,"fn":"CreateContextCb","args":{"hDevice":"rtdev","hContext":"0x1","pCommandBuffer":"0xb0000","CommandBufferSize":65536,"pAllocationList":"0xb1000","AllocationListSize":512,"pPatchLocationList":"0xb2000","PatchLocationListSize":512},"ret":"S_OK","parent":30}
{"seq":50,"tid":1,"fn":"DisableDeferredStagingResourceDestruction","args":{"hRuntimeDevice":"rtcore.ic"},"parent":30}
)";

struct Result {
  ReplayResult result;
  std::string report;
};

Result Replay(const std::string& jsonl) {
  Result out;
  absl::StatusOr<format::JsonlTrace> trace = format::ParseJsonl(jsonl);
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return out;
  ReplayOptions options;
  options.driver_path = CLTRACE_REFDRIVER_LIB;
  options.threads = ThreadMode::kSingle;
  absl::StatusOr<ReplayResult> r = cltrace::replay::Replay(options, trace->events, trace->handles,
                                                           trace->strings, trace->contents);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return out;
  out.result = *r;
  out.report = FormatReport(*r, trace->events, trace->handles, trace->strings, options);
  EXPECT_EQ(r->outcome, Outcome::kBadInput) << out.report;
  std::ostringstream o, e;
  EXPECT_EQ(
      RunReplay(options, trace->events, trace->handles, trace->strings, trace->contents, o, e),
      kExitBadInput);
  return out;
}

// Replays `jsonl` and expects it refused as bad input at `seq`, the message containing
// `message`.
void ExpectRefusedAt(const std::string& jsonl, uint64_t seq, const std::string& message) {
  Result r = Replay(jsonl);
  EXPECT_EQ(r.result.bad_seq, seq);
  EXPECT_THAT(r.result.bad_message, HasSubstr(message));
}

TEST(HostileTraceTest, CallOnADeviceNoCallCreated) {
  Result r = Replay(absl::StrCat(
      kBringUp, R"({"seq":60,"tid":1,"fn":"Draw","args":{"hDevice":"nowhere","VertexCount":3}})"));
  EXPECT_EQ(r.report,
            "replay: bad input at seq 60 (fn Draw, tid 1): hDevice nowhere is not a device or "
            "deferred context created earlier\n");
}

TEST(HostileTraceTest, HandleUsedBeforeAnyCallCreatedIt) {
  Result r = Replay(absl::StrCat(
      kBringUp,
      R"({"seq":60,"tid":1,"fn":"ResourceCopy","args":{"hDevice":"ic","hDstResource":"ghost","hSrcResource":"ghost"}})"));
  EXPECT_EQ(r.result.bad_seq, 60u);
  EXPECT_EQ(r.result.bad_message, "handle ghost (hDstResource) is used before any call created it");
}

TEST(HostileTraceTest, HandleInAnArrayUsedBeforeCreation) {
  Result r = Replay(absl::StrCat(
      kBringUp,
      R"({"seq":60,"tid":1,"fn":"IaSetVertexBuffers","args":{"hDevice":"ic","StartBuffer":0,"NumBuffers":1,"phBuffers":["ghost"],"pStrides":[16],"pOffsets":[0]}})"));
  EXPECT_EQ(r.result.bad_message, "handle ghost (phBuffers) is used before any call created it");
}

TEST(HostileTraceTest, CreateWithoutASizeQuery) {
  Result r = Replay(absl::StrCat(
      kBringUp,
      R"({"seq":60,"tid":1,"fn":"CreateResource","args":{"hDevice":"ic","ResourceDimension":"D3D10DDIRESOURCE_BUFFER","MipLevels":1,"pMipInfoList":[{"TexelWidth":16,"TexelHeight":1,"TexelDepth":1,"PhysicalWidth":16,"PhysicalHeight":1,"PhysicalDepth":1}],"hResource":"buf","hRTResource":"rtbuf"}})"));
  EXPECT_EQ(r.result.bad_message,
            "creates buf (hResource) but no CalcPrivate*Size was answered before it on thread 1");
}

TEST(HostileTraceTest, ContextLocalOpenWithoutItsHandleSize) {
  Result r = Replay(absl::StrCat(
      kBringUp,
      R"({"seq":60,"tid":1,"fn":"CalcPrivateResourceSize","args":{"hDevice":"ic","ResourceDimension":"D3D10DDIRESOURCE_BUFFER","MipLevels":1,"pMipInfoList":[{"TexelWidth":16,"TexelHeight":1,"TexelDepth":1,"PhysicalWidth":16,"PhysicalHeight":1,"PhysicalDepth":1}]},"ret":88}
{"seq":70,"tid":1,"fn":"CreateResource","args":{"hDevice":"ic","ResourceDimension":"D3D10DDIRESOURCE_BUFFER","MipLevels":1,"pMipInfoList":[{"TexelWidth":16,"TexelHeight":1,"TexelDepth":1,"PhysicalWidth":16,"PhysicalHeight":1,"PhysicalDepth":1}],"hResource":"buf","hRTResource":"rtbuf"}}
{"seq":80,"tid":2,"fn":"CalcPrivateDeferredContextSize","args":{"pCalcPrivateDeferredContextSize":true,"hDevice":"ic"},"ret":9080}
{"seq":90,"tid":2,"fn":"CreateDeferredContext","args":{"hDevice":"ic","p11ContextFuncs":"0x6000","hDrvContext":"dc1","hRTCoreLayer":"rtcore.dc1","p11UMCallbacks":"0x7000"}}
{"seq":100,"tid":2,"fn":"CreateResource","args":{"hDevice":"dc1","pCreateResource":null,"hResource":"dc1.buf","hRTResource":"buf"}})"));
  EXPECT_EQ(r.result.bad_seq, 100u);
  EXPECT_EQ(r.result.bad_message,
            "context-local open of buf: no CalcDeferredContextHandleSize was answered for it "
            "before");
}

TEST(HostileTraceTest, PointerNamingNoHandle) {
  Result r = Replay(absl::StrCat(
      kBringUp,
      R"({"seq":60,"tid":1,"fn":"CalcDeferredContextHandleSize","args":{"hDevice":"ic","pICObject":"0xdead0000"},"ret":32})"));
  EXPECT_EQ(r.result.bad_message, "pICObject 0xdead0000 names no handle an earlier call created");
}

TEST(HostileTraceTest, ImpossibleKernelBufferSize) {
  std::string trace = kBringUp;
  trace.replace(trace.find("\"CommandBufferSize\":65536"), 25, "\"CommandBufferSize\":4294967295");
  ExpectRefusedAt(trace, 40,
                  "impossible size: CommandBufferSize = 4294967295 asks for a 4294967295-"
                  "byte kernel buffer");
}

TEST(HostileTraceTest, ImpossibleRecordedHandleSize) {
  std::string trace = kBringUp;
  trace.replace(trace.find("\"ret\":9056"), 10, "\"ret\":5000000000");
  ExpectRefusedAt(trace, 20, "impossible size: the recorded driver answered 5000000000 bytes");
}

TEST(HostileTraceTest, ImpossibleSourceDataSize) {
  Result r = Replay(absl::StrCat(
      kBringUp,
      R"({"seq":60,"tid":1,"fn":"ResourceUpdateSubresourceUP","args":{"hDevice":"ic","hDstResource":"ic","pDstBox":{},"left":0,"right":16,"top":0,"bottom":4096,"front":0,"back":4096,"pSysMemUP":"0x1000","RowPitch":65536,"DepthPitch":268435456}})"));
  EXPECT_THAT(r.result.bad_message, HasSubstr("impossible size: the box and pitches describe"));
}

TEST(HostileTraceTest, ImpossibleCapsSize) {
  std::string trace = kBringUp;
  // pData's element count follows DataSize, so the codec's validation names the mismatch.
  trace.replace(trace.find("\"DataSize\":4"), 12, "\"DataSize\":4000000000");
  ExpectRefusedAt(trace, 10, "pData");
}

TEST(HostileTraceTest, DdiCallNestedInADdiCall) {
  ExpectRefusedAt(absl::StrCat(kBringUp,
                               R"({"seq":60,"tid":1,"fn":"Flush","args":{"hDevice":"ic"},"end":80}
{"seq":70,"tid":1,"fn":"Flush","args":{"hDevice":"ic"},"parent":60})"),
                  70, "a DDI call made directly inside DDI call seq 60");
}

TEST(HostileTraceTest, CallbackNestedInACallback) {
  ExpectRefusedAt(absl::StrCat(kBringUp,
                               R"({"seq":60,"tid":1,"fn":"Flush","args":{"hDevice":"ic"},"end":90}
{"seq":70,"tid":1,"fn":"PerformAmortizedProcessingCb","args":{"hRuntimeDevice":"rtcore.ic"},"parent":60,"end":85}
{"seq":80,"tid":1,"fn":"SetErrorCb","args":{"hRuntimeDevice":"rtcore.ic","hResult":"E_FAIL"},"parent":70})"),
                  80, "made inside callback seq 70");
}

// DX6 (replayer/internal/dx6_replay.h): the DX6 runtime creates its command buffer and locks
// it; every hostile DX6 trace below starts with that.
constexpr char kDx6Buffer[] =
    R"({"seq":100,"tid":1,"fn":"CreateD3DBuffer","args":{"pCreateSurface":true,"lpDDSurface":"cmd","dwCaps":"DDSCAPS_EXECUTEBUFFER","dwCapsOut":"DDSCAPS_SYSTEMMEMORY|DDSCAPS_EXECUTEBUFFER","dwCaps2":"DDSCAPS2_COMMANDBUFFER","dwLinearSize":4096,"fpVidMem":"0x9000"},"ret":"DDHAL_DRIVER_HANDLED"}
{"seq":110,"tid":1,"fn":"LockD3DBuffer","args":{"pLockData":true,"lpDDSurface":"cmd","dwFlags":"DDLOCK_WAIT","lpSurfData":"0x9000"},"ret":"DDHAL_DRIVER_HANDLED"}
)";

TEST(HostileTraceTest, Dx6CallOnASurfaceNoCallCreated) {
  Result r = Replay(absl::StrCat(
      kDx6Buffer,
      R"({"seq":120,"tid":1,"fn":"LockD3DBuffer","args":{"pLockData":true,"lpDDSurface":"ghost","dwFlags":"DDLOCK_WAIT","lpSurfData":"0x9000"},"ret":"DDHAL_DRIVER_HANDLED"})"));
  EXPECT_EQ(r.report,
            "replay: bad input at seq 120 (fn LockD3DBuffer, tid 1): surface ghost (lpDDSurface) "
            "is used before a CreateD3DBuffer created it or a D3dDrawPrimitives2 handed it back\n");
}

TEST(HostileTraceTest, Dx6SurfaceUsedAfterItsDestroy) {
  ExpectRefusedAt(
      absl::StrCat(
          kDx6Buffer,
          R"({"seq":120,"tid":1,"fn":"DestroyD3DBuffer","args":{"pDestroySurface":true,"lpDDSurface":"cmd"},"ret":"DDHAL_DRIVER_HANDLED"}
{"seq":130,"tid":1,"fn":"D3dDrawPrimitives2","args":{"pdp":true,"dwhContext":"0x1","dwFlags":"D3DHALDP2_SWAPCOMMANDBUFFER","lpDDCommands":"cmd","lpDDCommandsOut":"cmd"},"ret":"DDHAL_DRIVER_HANDLED"})"),
      130, "surface cmd (lpDDCommands) is used after seq 120 destroyed it");
}

TEST(HostileTraceTest, Dx6CallsNestedInD3D11CallsOrTheOtherWayRound) {
  // The D3D11 and DX6 layers replay into different drivers; a trace that nests one in the
  // other was not made by any runtime.
  ExpectRefusedAt(absl::StrCat(kBringUp,
                               R"({"seq":60,"tid":1,"fn":"Flush","args":{"hDevice":"ic"},"end":90}
{"seq":70,"tid":1,"fn":"CanCreateD3DBuffer","args":{"pCanCreateSurface":true,"dwCaps":"DDSCAPS_EXECUTEBUFFER","dwLinearSize":64},"ret":"DDHAL_DRIVER_HANDLED","parent":60})"),
                  70,
                  "CanCreateD3DBuffer made inside seq 60 (Flush); DX6-layer calls are "
                  "top-level runtime calls");

  ExpectRefusedAt(
      absl::StrCat(
          kBringUp, kDx6Buffer,
          R"({"seq":120,"tid":1,"fn":"UnlockD3DBuffer","args":{"pUnlockData":true,"lpDDSurface":"cmd"},"ret":"DDHAL_DRIVER_HANDLED","end":140}
{"seq":130,"tid":1,"fn":"SetErrorCb","args":{"hRuntimeDevice":"rtcore.ic","hResult":"E_FAIL"},"parent":120})"),
      130, "SetErrorCb made inside seq 120 (UnlockD3DBuffer)");
}

TEST(HostileTraceTest, Dx6CallWithoutItsArgumentStructure) {
  ExpectRefusedAt(
      absl::StrCat(
          kDx6Buffer,
          R"({"seq":120,"tid":1,"fn":"D3dDrawPrimitives2","args":{"pdp":null},"ret":"DDHAL_DRIVER_HANDLED"})"),
      120, "without its argument structure (pdp is NULL)");
}

TEST(HostileTraceTest, Dx6ContentOfTheWrongSizeOrOnACallThatTakesNone) {
  // 8 command bytes recorded for a 12-byte dwCommandLength.
  ExpectRefusedAt(
      absl::StrCat(
          kDx6Buffer,
          R"({"seq":120,"tid":1,"fn":"D3dDrawPrimitives2","args":{"pdp":true,"dwhContext":"0x1","dwFlags":"D3DHALDP2_SWAPCOMMANDBUFFER","lpDDCommands":"cmd","lpDDCommandsOut":"cmd","dwCommandLength":12},"ret":"DDHAL_DRIVER_HANDLED","content":"0800010007000000"})"),
      120, "its content has 8 bytes, but dwCommandLength 12 and 0 vertex bytes");

  ExpectRefusedAt(
      absl::StrCat(
          kDx6Buffer,
          R"({"seq":120,"tid":1,"fn":"UnlockD3DBuffer","args":{"pUnlockData":true,"lpDDSurface":"cmd"},"ret":"DDHAL_DRIVER_HANDLED","content":"00"})"),
      120, "UnlockD3DBuffer carries content");
}

TEST(HostileTraceTest, OverlappingDx6Calls) {
  ExpectRefusedAt(
      absl::StrCat(
          kDx6Buffer,
          R"({"seq":120,"tid":1,"fn":"UnlockD3DBuffer","args":{"pUnlockData":true,"lpDDSurface":"cmd"},"ret":"DDHAL_DRIVER_HANDLED","end":140}
{"seq":130,"tid":2,"fn":"LockD3DBuffer","args":{"pLockData":true,"lpDDSurface":"cmd","dwFlags":"DDLOCK_WAIT","lpSurfData":"0x9000"},"ret":"DDHAL_DRIVER_HANDLED","end":135})"),
      130, "starts before DX6-layer call seq 120 returned");
}

TEST(HostileTraceTest, TruncatedOrForeignDx6EventsOfACorpusTrace) {
  // The binary dp2 trace through the same plan: a DX6 event whose fields were cut short, and
  // one naming a handle id the trace never defined.
  absl::StatusOr<format::LoadedTrace> trace =
      format::LoadTrace(CLTRACE_SOURCE_DIR "/corpus/traces/dp2.cltrace");
  ASSERT_TRUE(trace.ok()) << trace.status();
  size_t dp2 = 0;
  while (dp2 < trace->events.size() &&
         trace->events[dp2].call != format::CallId::kD3dDrawPrimitives2) {
    ++dp2;
  }
  ASSERT_LT(dp2, trace->events.size());
  internal::BadInput bad;
  std::vector<format::Event> events = trace->events;
  events[dp2].args.resize(5);
  internal::Plan plan;
  EXPECT_FALSE(internal::BuildPlan(events, trace->handles, trace->contents, 0, &plan, &bad));
  EXPECT_EQ(bad.seq, events[dp2].seq);
  EXPECT_EQ(bad.call, format::CallId::kD3dDrawPrimitives2);

  events = trace->events;
  events[dp2].args[format::FieldIndex(*format::GetCall(events[dp2].call), "lpDDCommands")] =
      trace->handles.size() + 5;
  internal::Plan plan2;
  EXPECT_FALSE(internal::BuildPlan(events, trace->handles, trace->contents, 0, &plan2, &bad));
  EXPECT_EQ(bad.seq, events[dp2].seq);
  EXPECT_THAT(bad.message, HasSubstr("is not defined by the trace"));
}

TEST(HostileTraceTest, EventsWithForeignHandleIdsOrBadOrder) {
  // Binary traces are checked by the same plan: a handle id the trace never defined, a seq out
  // of order and a parent that does not exist.
  absl::StatusOr<format::JsonlTrace> trace = format::ParseJsonl(kBringUp);
  ASSERT_TRUE(trace.ok());
  internal::Plan plan;
  internal::BadInput bad;
  std::vector<format::Event> events = trace->events;
  events[1].args[0] = 999;  // CalcPrivateDeviceSize hAdapter
  EXPECT_FALSE(internal::BuildPlan(events, trace->handles, trace->contents, 0, &plan, &bad));
  EXPECT_EQ(bad.message, "handle id 999 is not defined by the trace");

  events = trace->events;
  std::swap(events[0], events[1]);
  internal::Plan plan2;
  EXPECT_FALSE(internal::BuildPlan(events, trace->handles, trace->contents, 0, &plan2, &bad));
  EXPECT_THAT(bad.message, HasSubstr("not in strictly increasing seq order"));

  events = trace->events;
  events[3].parent = 31;  // CreateContextCb inside a seq nothing has
  internal::Plan plan3;
  EXPECT_FALSE(internal::BuildPlan(events, trace->handles, trace->contents, 0, &plan3, &bad));
  EXPECT_EQ(bad.message, "parent seq 31 names no earlier call");

  events = trace->events;
  events[3].tid = 2;  // a callback of thread 1's CreateDevice on thread 2
  internal::Plan plan4;
  EXPECT_FALSE(internal::BuildPlan(events, trace->handles, trace->contents, 0, &plan4, &bad));
  EXPECT_THAT(bad.message, HasSubstr("from thread 2"));

  events = trace->events;
  events[1].args.push_back(7);  // a trailing value
  internal::Plan plan5;
  EXPECT_FALSE(internal::BuildPlan(events, trace->handles, trace->contents, 0, &plan5, &bad));
  EXPECT_THAT(bad.message, HasSubstr("trailing"));
}

TEST(HostileTraceTest, CorpusTracesWithoutADeviceAreBadInput) {
  // corpus/jsonl/cl_recycle.jsonl starts mid-session (no CreateDevice): its device is unknown.
  std::ifstream in(CLTRACE_SOURCE_DIR "/corpus/jsonl/cl_recycle.jsonl");
  std::stringstream ss;
  ss << in.rdbuf();
  Result r = Replay(ss.str());
  EXPECT_EQ(r.report,
            "replay: bad input at seq 10 (fn CalcPrivateDeferredContextSize, tid 200): hDevice ic "
            "is not a device or deferred context created earlier\n");
}

TEST(SysMemBytesTest, BoxAndPitches) {
  const format::CallInfo* ci = format::FindCall("ResourceUpdateSubresourceUP");
  ASSERT_NE(ci, nullptr);
  std::vector<uint64_t> args(format::Fields(*ci).size(), 0);
  auto set = [&](const char* name, uint64_t v) { args[format::FieldIndex(*ci, name)] = v; };
  EXPECT_EQ(internal::SysMemBytes(format::IdOf(*ci), args), 64u * 1024);  // no box
  set("pDstBox", 1);
  set("right", 4);
  set("bottom", 2);
  set("back", 3);
  set("RowPitch", 100);
  set("DepthPitch", 1000);
  EXPECT_EQ(internal::SysMemBytes(format::IdOf(*ci), args), 2u * 1000 + 1 * 100 + 4 * 16);
}

}  // namespace
}  // namespace cltrace::replay
