#include "format/call_codec.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "ddi/catalog.h"
#include "format/internal/trace_test_util.h"
#include "format/testing/random_call_args.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

using testing::RandomReturn;
using testing::Rng;
using testing::SignExtend;

// ---- Round trip over every catalog entry --------------------------------------------------------
//
// For each call (generated tests in call_codec_roundtrip_test.inc): make pseudo-random but
// valid args, InvokeCall them into a generated "capturing implementation" with the call's C
// signature, which captures what it was given (CaptureEntry), answers with the outputs of the
// args (ApplyOutputs) and captures again (CaptureExit). The captured args must equal the
// originals, and so must the args InvokeCall captured around the call (InvokeEnv::actual).

// Handle ids <-> raw values: an invertible mapping whose raw values fit 32-bit handles.
uint64_t TestHandleRaw(uint64_t id) { return id * 16 + 0x10000; }
uint64_t TestHandleId(uint64_t raw) { return (raw - 0x10000) / 16; }

struct RoundTripState {
  ArgVec expected;  // the args under test (the capturing implementation's answers)
  ArgVec captured;  // what the capturing implementation recorded
  int64_t ret = 0;  // what it returns
  InvokeArena arena;
  InvokeEnv env;
  absl::Status apply_status;
};

RoundTripState& State() {
  static RoundTripState* state = new RoundTripState;
  return *state;
}

std::string Describe(const CallInfo& call, const ArgVec& want, const ArgVec& got) {
  if (want.size() != got.size())
    return absl::StrFormat("%d args expected, %d captured", want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == got[i]) continue;
    std::string name = i < call.field_count ? Fields(call)[i].name : "(array element)";
    return absl::StrFormat("arg %d (%s): expected 0x%x, captured 0x%x", i, name, want[i], got[i]);
  }
  return "equal";
}

void RoundTrip(CallId id, void* capturing_pfn) {
  const CallInfo& call = *GetCall(id);
  RoundTripState& s = State();
  for (uint64_t seed = 0; seed < 40; ++seed) {
    Rng r(seed * 7919 + static_cast<uint64_t>(id));
    s.expected = testing::RandomValidArgs(call, r, /*first_handle_id=*/1);
    s.ret = RandomReturn(call, r);
    s.captured.clear();
    s.arena.Reset();
    ArgVec actual;
    s.env = InvokeEnv{};
    s.env.handle_raw = TestHandleRaw;
    s.env.handle_id = TestHandleId;
    s.env.arena = &s.arena;
    s.env.actual = &actual;
    ASSERT_TRUE(ValidateArgs(id, s.expected).ok()) << ValidateArgs(id, s.expected);
    absl::StatusOr<int64_t> ret = InvokeCall(id, capturing_pfn, s.expected, s.env);
    ASSERT_TRUE(ret.ok()) << "seed " << seed << ": " << ret.status();
    EXPECT_EQ(*ret, s.ret) << "seed " << seed;
    EXPECT_TRUE(s.apply_status.ok()) << "seed " << seed << ": " << s.apply_status;
    EXPECT_EQ(s.captured, s.expected)
        << "seed " << seed << ": " << Describe(call, s.expected, s.captured);
    EXPECT_EQ(actual, s.expected) << "seed " << seed << ": " << Describe(call, s.expected, actual);
    if (::testing::Test::HasFailure()) return;
  }
}

#include "format/call_codec_roundtrip_test.inc"

// ---- Capture ----------------------------------------------------------------------------------

uint64_t IdOfRaw(uint64_t raw) { return raw + 1000; }

TEST(CallCodecCaptureTest, ScalarsAreSignExtendedAndFloatsKeepTheirBits) {
  ArgVec args;
  D3D10DDI_HDEVICE dev{reinterpret_cast<void*>(0x5500)};
  CaptureEntryDrawIndexed(&args, IdOfRaw, dev, 36, 3, -5);
  CaptureExitDrawIndexed(&args, IdOfRaw, dev, 36, 3, -5);
  EXPECT_EQ(args, (ArgVec{0x5500 + 1000, 36, 3, 0xfffffffffffffffbull}));

  D3D10DDI_HDEPTHSTENCILVIEW dsv{reinterpret_cast<void*>(0x77)};
  CaptureEntryClearDepthStencilView(&args, IdOfRaw, dev, dsv, D3D10_DDI_CLEAR_DEPTH, -0.5f, 0xff);
  CaptureExitClearDepthStencilView(&args, IdOfRaw, dev, dsv, D3D10_DDI_CLEAR_DEPTH, -0.5f, 0xff);
  EXPECT_EQ(args, (ArgVec{0x5500 + 1000, 0x77 + 1000, 1, 0xbf000000u, 0xff}));
}

// DXGKARG_CREATEDEVICE.pInfo is an output pointer: NULL at entry, the KMD's own structure at
// exit. Its presence is captured at exit, beside the members read through it, so a trace
// never holds a "NULL" pointer with values in its members (which export used to drop).
TEST(CallCodecCaptureTest, OutputPointerPresenceIsCapturedAtExit) {
  const testing::CreateDeviceInfoFields create_device = testing::FindCreateDeviceInfo();
  ASSERT_GE(create_device.present, 0);
  ASSERT_GE(create_device.size, 0);
  const int present = create_device.present, size = create_device.size;
  ArgVec args;
  DXGK_HADAPTER adapter{};
  adapter.handle = reinterpret_cast<void*>(0x40);
  DXGKARG_CREATEDEVICE create{};
  CaptureEntryDxgkDdiCreateDevice(&args, IdOfRaw, adapter, &create);
  EXPECT_EQ(args[present], 0u);
  DXGK_DEVICEINFO info{};
  info.DmaBufferSize = 4096;
  create.pInfo = &info;  // what the KMD does
  CaptureExitDxgkDdiCreateDevice(&args, IdOfRaw, adapter, &create);
  EXPECT_EQ(args[present], 1u);
  EXPECT_EQ(args[size], 4096u);
}

TEST(CallCodecCaptureTest, NullHandleIsIdZeroWithoutAskingTheFunctor) {
  ArgVec args;
  int calls = 0;
  auto ids = [&](uint64_t raw) {
    ++calls;
    return raw;
  };
  CaptureEntryPsSetShader(&args, ids, D3D10DDI_HDEVICE{reinterpret_cast<void*>(8)},
                          D3D10DDI_HSHADER{nullptr});
  EXPECT_EQ(args, (ArgVec{8, 0}));
  EXPECT_EQ(calls, 1);
}

TEST(CallCodecCaptureTest, TwoPassHandleSizeQueryRecordsNullArrayThenElements) {
  D3D10DDI_HDEVICE dev{reinterpret_cast<void*>(0x10)};
  ArgVec args;
  UINT count = 0;
  CaptureEntryCheckDeferredContextHandleSizes(&args, IdOfRaw, dev, &count, nullptr);
  count = 2;  // the driver answers the first pass
  CaptureExitCheckDeferredContextHandleSizes(&args, IdOfRaw, dev, &count, nullptr);
  EXPECT_EQ(args, (ArgVec{0x10 + 1000, 0, 2, 0}));

  D3D11DDI_HANDLESIZE sizes[2] = {};
  CaptureEntryCheckDeferredContextHandleSizes(&args, IdOfRaw, dev, &count, sizes);
  sizes[0] = {D3D11DDI_HT_COMMANDLIST, 64};
  sizes[1] = {D3D10DDI_HT_RESOURCE, 128};
  CaptureExitCheckDeferredContextHandleSizes(&args, IdOfRaw, dev, &count, sizes);
  EXPECT_EQ(args, (ArgVec{0x10 + 1000, 2, 2, 3, 11, 64, 0, 128}));
  EXPECT_TRUE(ValidateArgs(CallId::kCheckDeferredContextHandleSizes, args).ok());
}

TEST(CallCodecCaptureTest, OutputArrayIsCappedAtTheCallersRoom) {
  // A driver claiming more entries than the runtime made room for is recorded with only what
  // fits (never reading past the buffer); the mismatch then shows in validation.
  D3D10DDI_HDEVICE dev{reinterpret_cast<void*>(0x10)};
  ArgVec args;
  UINT count = 1;
  D3D11DDI_HANDLESIZE sizes[1] = {{D3D11DDI_HT_COMMANDLIST, 64}};
  CaptureEntryCheckDeferredContextHandleSizes(&args, IdOfRaw, dev, &count, sizes);
  count = 5;
  CaptureExitCheckDeferredContextHandleSizes(&args, IdOfRaw, dev, &count, sizes);
  EXPECT_EQ(args, (ArgVec{0x10 + 1000, 1, 5, 2, 11, 64}));
  absl::Status st = ValidateArgs(CallId::kCheckDeferredContextHandleSizes, args);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
}

TEST(CallCodecCaptureTest, LongArrayIsTruncatedAndReportedAsUnreplayable) {
  const UINT n = kMaxRecordedArrayElements + 10;
  std::vector<D3D10DDI_HRESOURCE> buffers(n, D3D10DDI_HRESOURCE{reinterpret_cast<void*>(4)});
  std::vector<UINT> strides(n, 16), offsets(n, 0);
  D3D10DDI_HDEVICE dev{reinterpret_cast<void*>(0x10)};
  ArgVec args;
  CaptureEntryIaSetVertexBuffers(&args, IdOfRaw, dev, 0, n, buffers.data(), strides.data(),
                                 offsets.data());
  CaptureExitIaSetVertexBuffers(&args, IdOfRaw, dev, 0, n, buffers.data(), strides.data(),
                                offsets.data());
  ASSERT_EQ(args.size(), 6u + 3u * kMaxRecordedArrayElements);
  EXPECT_EQ(args[2], n);                               // the true count stays
  EXPECT_EQ(args[3], 1u + kMaxRecordedArrayElements);  // the array is capped
  absl::Status st = ValidateArgs(CallId::kIaSetVertexBuffers, args);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
  EXPECT_NE(st.message().find("truncated"), absl::string_view::npos) << st;
}

TEST(CallCodecCaptureTest, ShaderCodeUsesItsLengthToken) {
  const UINT code[] = {0xfffe0400, 5, 0x11, 0x22, 0x33, 0xdead};  // 5 tokens + trailing junk
  D3D10DDI_HDEVICE dev{reinterpret_cast<void*>(0x10)};
  ArgVec args;
  CaptureEntryCreateComputeShader(&args, IdOfRaw, dev, code, D3D10DDI_HSHADER{nullptr},
                                  D3D10DDI_HRTSHADER{nullptr});
  CaptureExitCreateComputeShader(&args, IdOfRaw, dev, code, D3D10DDI_HSHADER{nullptr},
                                 D3D10DDI_HRTSHADER{nullptr});
  EXPECT_EQ(args, (ArgVec{0x10 + 1000, 6, 0, 0, 0xfffe0400, 5, 0x11, 0x22, 0x33}));
}

TEST(CallCodecCaptureTest, EmbeddedArrayRecordsOnlyItsCountedElements) {
  D3DDDICB_RENDER render{};
  render.BroadcastContextCount = 2;
  render.BroadcastContext[0] = reinterpret_cast<HANDLE>(uintptr_t{7});
  render.BroadcastContext[1] = reinterpret_cast<HANDLE>(uintptr_t{9});
  render.BroadcastContext[2] =
      reinterpret_cast<HANDLE>(uintptr_t{11});  // beyond the count: not recorded
  ArgVec args;
  auto id = [](uint64_t raw) { return raw; };
  HANDLE dev = reinterpret_cast<void*>(1);
  CaptureEntryRenderCb(&args, id, dev, &render);
  CaptureExitRenderCb(&args, id, dev, &render);
  const CallInfo& call = *GetCall(CallId::kRenderCb);
  const int bc = FieldIndex(call, "BroadcastContext");
  EXPECT_EQ(args[bc], 3u);
  EXPECT_EQ(args.size(), call.field_count + 2u);
  EXPECT_EQ(args[call.field_count], 7u);
  EXPECT_EQ(args[call.field_count + 1], 9u);
}

// count=MipLevels*ArraySize: pInitialDataUP holds one entry per subresource; pMipInfoList one
// per mip; pPrimaryDesc's members are recorded when it is there.
TEST(CallCodecCaptureTest, InitialDataHasOneEntryPerSubresource) {
  const D3D10DDI_MIPINFO mips[2] = {{8, 4, 1, 8, 4, 1}, {4, 2, 1, 4, 2, 1}};
  static char bytes[6][64];
  D3D10_DDIARG_SUBRESOURCE_UP up[6] = {};
  for (int i = 0; i < 6; ++i) up[i] = {bytes[i], 32, 0};
  DXGI_DDI_PRIMARY_DESC primary{};
  primary.ModeDesc.Width = 8;
  D3D11DDIARG_CREATERESOURCE a{};
  a.pMipInfoList = mips;
  a.pInitialDataUP = up;
  a.ResourceDimension = D3D10DDIRESOURCE_TEXTURE2D;
  a.MipLevels = 2;
  a.ArraySize = 3;
  a.pPrimaryDesc = &primary;
  ArgVec args;
  auto id = [](uint64_t raw) { return raw; };
  D3D10DDI_HDEVICE dev{reinterpret_cast<void*>(1)};
  CaptureEntryCalcPrivateResourceSize(&args, id, dev, &a);
  CaptureExitCalcPrivateResourceSize(&args, id, dev, &a);
  const CallInfo& call = *GetCall(CallId::kCalcPrivateResourceSize);
  EXPECT_EQ(args[FieldIndex(call, "pMipInfoList")], 1u + 2);
  EXPECT_EQ(args[FieldIndex(call, "pInitialDataUP")], 1u + 6);
  EXPECT_EQ(args[FieldIndex(call, "pPrimaryDesc")], 1u);
  EXPECT_EQ(args[FieldIndex(call, "pPrimaryDesc.ModeDesc.Width")], 8u);
  ASSERT_EQ(args.size(), call.field_count + 2u * 6 + 6u * 3);
  EXPECT_EQ(args[call.field_count + 6], 4u);  // mip 1 TexelWidth
  // Initial data: pSysMem, SysMemPitch, SysMemSlicePitch per subresource.
  EXPECT_EQ(args[call.field_count + 12], reinterpret_cast<uint64_t>(bytes[0]));
  EXPECT_EQ(args[call.field_count + 12 + 5 * 3], reinterpret_cast<uint64_t>(bytes[5]));
  EXPECT_TRUE(ValidateArgs(CallId::kCalcPrivateResourceSize, args).ok());
  // A count that disagrees with MipLevels x ArraySize is refused.
  ArgVec bad = args;
  bad[FieldIndex(call, "ArraySize")] = 2;
  absl::Status s = ValidateArgs(CallId::kCalcPrivateResourceSize, bad);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("pInitialDataUP"));
}

// ---- Invoke -------------------------------------------------------------------------------------

struct Seen {
  D3D10DDI_HDEVICE device{};
  UINT index_count = 0;
  INT base_vertex = 0;
  const void* sys_mem = nullptr;
  const D3D10_DDI_BOX* box = nullptr;
  D3D10_DDI_BOX box_copy{};
};
Seen& LastSeen() {
  static Seen seen;
  return seen;
}
void APIENTRY SeeDrawIndexed(D3D10DDI_HDEVICE hDevice, UINT IndexCount, UINT, INT Base) {
  LastSeen().device = hDevice;
  LastSeen().index_count = IndexCount;
  LastSeen().base_vertex = Base;
}
void APIENTRY SeeUpdate(D3D10DDI_HDEVICE, D3D10DDI_HRESOURCE, UINT, const D3D10_DDI_BOX* pBox,
                        PVOID pSysMemUP, UINT, UINT) {
  LastSeen().sys_mem = pSysMemUP;
  LastSeen().box = pBox;
  if (pBox != nullptr) LastSeen().box_copy = *pBox;
}

InvokeEnv PlainEnv(InvokeArena* arena) {
  InvokeEnv env;
  env.handle_raw = [](uint64_t id) { return id * 0x100; };
  env.arena = arena;
  return env;
}

TEST(CallCodecInvokeTest, RebuildsTypedParametersAndMapsHandles) {
  InvokeArena arena;
  ArgVec args = {3, 36, 0, 0xfffffffffffffffbull};
  absl::StatusOr<int64_t> ret = InvokeCall(
      CallId::kDrawIndexed, reinterpret_cast<void*>(&SeeDrawIndexed), args, PlainEnv(&arena));
  ASSERT_TRUE(ret.ok()) << ret.status();
  EXPECT_EQ(*ret, 0);
  EXPECT_EQ(LastSeen().device.pDrvPrivate, reinterpret_cast<void*>(0x300));
  EXPECT_EQ(LastSeen().index_count, 36u);
  EXPECT_EQ(LastSeen().base_vertex, -5);
}

TEST(CallCodecInvokeTest, PointersGoThroughThePointerFunctorAndNullStructsStayNull) {
  InvokeArena arena;
  InvokeEnv env = PlainEnv(&arena);
  static char payload[16];
  std::string mapped_field;
  env.pointer = [&](const FieldInfo& f, uint64_t recorded) -> void* {
    mapped_field = f.name;
    return recorded == 0xabc ? payload : nullptr;
  };
  // hDevice, hDstResource, DstSubresource, pDstBox (absent) + 6 box members, pSysMemUP, pitches
  const CallInfo& call = *GetCall(CallId::kResourceUpdateSubresourceUP);
  ArgVec args(call.field_count, 0);
  args[0] = 1;
  args[FieldIndex(call, "pSysMemUP")] = 0xabc;
  ASSERT_TRUE(InvokeCall(CallId::kResourceUpdateSubresourceUP, reinterpret_cast<void*>(&SeeUpdate),
                         args, env)
                  .ok());
  EXPECT_EQ(LastSeen().sys_mem, payload);
  EXPECT_EQ(mapped_field, "pSysMemUP");
  EXPECT_EQ(LastSeen().box, nullptr);

  args[FieldIndex(call, "pDstBox")] = 1;
  args[FieldIndex(call, "right")] = 640;
  args[FieldIndex(call, "left")] = SignExtend(static_cast<uint32_t>(-4), 32);
  ASSERT_TRUE(InvokeCall(CallId::kResourceUpdateSubresourceUP, reinterpret_cast<void*>(&SeeUpdate),
                         args, env)
                  .ok());
  ASSERT_NE(LastSeen().box, nullptr);
  EXPECT_EQ(LastSeen().box_copy.right, 640);
  EXPECT_EQ(LastSeen().box_copy.left, -4);
}

// ---- Hostile args: each problem gets its specific error -----------------------------------------

absl::Status Invoke(CallId id, const ArgVec& args) {
  InvokeArena arena;
  // Never reached for bad args; any function of the right shape would do.
  return InvokeCall(id, reinterpret_cast<void*>(&SeeDrawIndexed), args, PlainEnv(&arena)).status();
}

void ExpectError(const absl::Status& st, absl::StatusCode code, absl::string_view words) {
  EXPECT_EQ(st.code(), code) << st;
  EXPECT_NE(st.message().find(words), absl::string_view::npos) << st;
}

TEST(CallCodecHostileTest, TooFewArgs) {
  ExpectError(Invoke(CallId::kDrawIndexed, {1, 2, 3}), absl::StatusCode::kInvalidArgument,
              "DrawIndexed: 3 args, but the call has 4 fields");
}

TEST(CallCodecHostileTest, TrailingArgs) {
  ExpectError(Invoke(CallId::kDrawIndexed, {1, 2, 3, 4, 5}), absl::StatusCode::kInvalidArgument,
              "1 trailing args");
}

TEST(CallCodecHostileTest, ValueWiderThanItsType) {
  const CallInfo& call = *GetCall(CallId::kClearDepthStencilView);
  ArgVec args(call.field_count, 0);
  args[FieldIndex(call, "Stencil")] = 0x100;
  ExpectError(ValidateArgs(CallId::kClearDepthStencilView, args),
              absl::StatusCode::kInvalidArgument, "(Stencil) = 0x100 does not fit its 8-bit type");
  ExpectError(Invoke(CallId::kDrawIndexed, {1, 1ull << 32, 0, 0}),
              absl::StatusCode::kInvalidArgument, "(IndexCount)");
}

TEST(CallCodecHostileTest, SignedValueNotSignExtended) {
  ExpectError(Invoke(CallId::kDrawIndexed, {1, 2, 3, 0x80000000u}),
              absl::StatusCode::kInvalidArgument, "not a sign-extended 32-bit value");
}

TEST(CallCodecHostileTest, PresenceFlagOtherThanZeroOrOne) {
  const CallInfo& call = *GetCall(CallId::kCreateCommandList);
  ArgVec args(call.field_count, 0);
  args[1] = 2;
  ExpectError(ValidateArgs(CallId::kCreateCommandList, args), absl::StatusCode::kInvalidArgument,
              "presence flag but holds 2");
}

TEST(CallCodecHostileTest, HugeArrayLength) {
  // hDevice, StartBuffer, NumBuffers, phBuffers, pStrides, pOffsets
  ArgVec args = {1, 0, 2, 1ull << 40, 0, 0};
  ExpectError(Invoke(CallId::kIaSetVertexBuffers, args), absl::StatusCode::kInvalidArgument,
              "more than the 65536 ever recorded");
}

TEST(CallCodecHostileTest, HugeCountFieldWithShortArray) {
  ArgVec args = {1, 0, 0xffffffff, 3, 0, 0, 7, 8};
  ExpectError(Invoke(CallId::kIaSetVertexBuffers, args), absl::StatusCode::kInvalidArgument,
              "holds 2 elements but its count says 4294967295");
}

TEST(CallCodecHostileTest, ArgsEndInsideAnArray) {
  ArgVec args = {1, 0, 3, 4, 0, 0, 7, 8};
  ExpectError(Invoke(CallId::kIaSetVertexBuffers, args), absl::StatusCode::kInvalidArgument,
              "args end inside array phBuffers");
}

TEST(CallCodecHostileTest, ArrayTruncatedAtRecordTime) {
  ArgVec args = {1, 0, kMaxRecordedArrayElements + 1, 1 + kMaxRecordedArrayElements, 0, 0};
  args.resize(args.size() + kMaxRecordedArrayElements, 5);
  ExpectError(Invoke(CallId::kIaSetVertexBuffers, args), absl::StatusCode::kUnimplemented,
              "truncated at record time");
}

TEST(CallCodecHostileTest, TokenStreamWithoutLengthToken) {
  // hDevice, pCode[], hShader, hRTShader; one token cannot hold the length token [1].
  ExpectError(Invoke(CallId::kCreateComputeShader, {1, 2, 0, 0, 0xfffe0400}),
              absl::StatusCode::kInvalidArgument, "too few to hold its length token");
}

TEST(CallCodecHostileTest, TokenStreamLengthDisagrees) {
  ExpectError(Invoke(CallId::kCreateComputeShader, {1, 4, 0, 0, 0xfffe0400, 9, 0}),
              absl::StatusCode::kInvalidArgument, "holds 3 elements but its count says 9");
}

TEST(CallCodecHostileTest, EmbeddedCountBeyondCapacity) {
  const CallInfo& call = *GetCall(CallId::kWaitForSynchronizationObjectCb);
  ArgVec args(call.field_count, 0);
  args[1] = 1;  // pData present
  args[FieldIndex(call, "ObjectCount")] = 33;
  args[FieldIndex(call, "ObjectHandleArray")] = 1 + 33;
  args.resize(args.size() + 33, 1);
  ExpectError(ValidateArgs(CallId::kWaitForSynchronizationObjectCb, args),
              absl::StatusCode::kInvalidArgument, "exceeds the 32 elements");
}

TEST(CallCodecHostileTest, HugeOutputCapacity) {
  // hDevice, pHSizes (room), pHSizesOut, pHandleSize
  ArgVec args = {1, 0xffffffff, 0, 1};
  ExpectError(Invoke(CallId::kCheckDeferredContextHandleSizes, args),
              absl::StatusCode::kInvalidArgument, "asks for room for more than 65536");
}

TEST(CallCodecHostileTest, HandleTooWideForAKernelHandle) {
  // A sync object is a 32-bit D3DKMT_HANDLE (a kernel context is a HANDLE).
  const CallInfo& call = *GetCall(CallId::kDestroySynchronizationObjectCb);
  ArgVec args = {1, 1, 7};  // hDevice, pData, hSyncObject
  ASSERT_EQ(args.size(), call.field_count);
  InvokeArena arena;
  InvokeEnv env = PlainEnv(&arena);
  env.handle_raw = [](uint64_t id) { return id << 32; };
  absl::Status st = InvokeCall(CallId::kDestroySynchronizationObjectCb,
                               reinterpret_cast<void*>(&SeeDrawIndexed), args, env)
                        .status();
  ExpectError(st, absl::StatusCode::kInvalidArgument, "too wide for a 32-bit handle");
}

TEST(CallCodecHostileTest, BadCallIdNullFunctionAndIncompleteEnv) {
  InvokeArena arena;
  ExpectError(InvokeCall(static_cast<CallId>(kCallIdCount),
                         reinterpret_cast<void*>(&SeeDrawIndexed), {}, PlainEnv(&arena))
                  .status(),
              absl::StatusCode::kInvalidArgument, "unknown call id");
  ExpectError(InvokeCall(CallId::kDraw, nullptr, {1, 2, 3}, PlainEnv(&arena)).status(),
              absl::StatusCode::kFailedPrecondition, "NULL pfnDraw");
  InvokeEnv no_arena = PlainEnv(nullptr);
  ExpectError(InvokeCall(CallId::kDrawIndexed, reinterpret_cast<void*>(&SeeDrawIndexed),
                         {1, 2, 3, 4}, no_arena)
                  .status(),
              absl::StatusCode::kFailedPrecondition, "arena is not set");
  InvokeEnv no_handles;
  no_handles.arena = &arena;
  ExpectError(InvokeCall(CallId::kDrawIndexed, reinterpret_cast<void*>(&SeeDrawIndexed),
                         {1, 2, 3, 4}, no_handles)
                  .status(),
              absl::StatusCode::kFailedPrecondition, "handle_raw is not set");
}

TEST(CallCodecHostileTest, RecordedOutputLargerThanTheCallersBuffer) {
  // The recorded answer has 3 handle sizes but the live caller only has room for 1.
  ArgVec recorded = {1, 3, 3, 4, 11, 64, 0, 128, 1, 32};
  ASSERT_TRUE(ValidateArgs(CallId::kCheckDeferredContextHandleSizes, recorded).ok());
  InvokeArena arena;
  UINT room = 1;
  D3D11DDI_HANDLESIZE one[1] = {};
  absl::Status st = ApplyOutputsCheckDeferredContextHandleSizes(recorded, PlainEnv(&arena),
                                                                D3D10DDI_HDEVICE{}, &room, one);
  ExpectError(st, absl::StatusCode::kOutOfRange, "has 3 elements but the caller gave room for 1");
  EXPECT_EQ(one[0].DriverPrivateSize, 0u);  // nothing written past or into the buffer
}

TEST(CallCodecArenaTest, ZeroedAlignedAndReusable) {
  InvokeArena arena;
  auto* a = static_cast<unsigned char*>(arena.Allocate(100));
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a[i], 0);
  std::memset(a, 0xff, 100);
  void* empty = arena.Allocate(0);
  EXPECT_NE(empty, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(empty) % alignof(std::max_align_t), 0u);
  void* big = arena.Allocate(1 << 20);  // larger than a block
  EXPECT_NE(big, nullptr);
  arena.Reset();
  EXPECT_EQ(arena.bytes_in_use(), 0u);
  auto* b = static_cast<unsigned char*>(arena.Allocate(100));
  for (int i = 0; i < 100; ++i) ASSERT_EQ(b[i], 0);  // reused memory is zeroed again
}

}  // namespace
}  // namespace cltrace::format
