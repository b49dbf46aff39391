// Arguments and returns round-trip through the recorder for every catalog entry of the tables
// it wraps (adapter, device, DXGI, core-layer and kernel-thunk callbacks, KMD entry points,
// Dxgkrnl callbacks). One test per entry,
// generated from the catalog's per-table call lists (format/call_traits.h).
//
// Each case: pseudo-random valid args are turned into typed parameters (format's Invoke*) and
// called through the recorder's thunk for that slot; the thunk forwards to an "answering"
// implementation that writes the args' outputs (ApplyOutputs*) and returns a chosen value. The
// trace must then hold, per call, exactly those args (handles mapped back through the trace's
// handle tokens) and that return value.
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "ddi/catalog.h"
#include "format/call_traits.h"
#include "format/event_codec.h"
#include "format/testing/random_call_args.h"
#include "format/trace_reader.h"
#include "gtest/gtest.h"
#include "recorder/recorder.h"

namespace cltrace::recorder {
namespace {

using format::ArgVec;
using format::CallId;
using format::CallInfo;
using format::CallTraits;
using format::FieldInfo;
using format::FieldKind;
using format::testing::RandomReturn;
using format::testing::Rng;

// Handle ids <-> raw values (fit 32-bit kernel handles). Ids below kFirstRandomId are the
// contexts the test registers; random handles never collide with them.
constexpr uint64_t kFirstRandomId = 100;
constexpr uint64_t kAdapterId = 1, kDeviceId = 2, kLayerId = 3, kKernelId = 4;
uint64_t TestHandleRaw(uint64_t id) { return id * 16 + 0x10000; }
uint64_t TestHandleId(uint64_t raw) { return (raw - 0x10000) / 16; }

// The id of the registered context a call of `layer` takes first (adapter, device, core layer
// or kernel-thunk layer).
uint64_t ContextIdOf(format::Layer layer) {
  switch (layer) {
    case format::Layer::kAdapter:
      return kAdapterId;
    case format::Layer::kDevice:
      return kDeviceId;
    case format::Layer::kCoreLayer:
      return kLayerId;
    default:
      return kKernelId;
  }
}

struct State {
  ArgVec expected;
  int64_t ret = 0;
  format::InvokeArena arena;
  format::InvokeEnv env;
  absl::Status apply_status;
  int answered = 0;
};
State& S() {
  static State* s = new State;
  return *s;
}

// The driver / runtime side: answers with the outputs of the args under test.
template <CallId kId, typename Pfn = typename CallTraits<kId>::Pfn>
struct Answer;
template <CallId kId, typename R, typename... P>
struct Answer<kId, R (*)(P...)> {
  static R Fn(P... p) {
    State& s = S();
    ++s.answered;
    s.apply_status = CallTraits<kId>::ApplyOutputs(s.expected, s.env, p...);
    if constexpr (!std::is_void_v<R>) return static_cast<R>(s.ret);
  }
};

#define CLTRACE_ANSWER(name) reinterpret_cast<void*>(&Answer<CallId::k##name>::Fn),
void* const kAnswerAdapter[] = {CLTRACE_CALLS_D3D10_2DDI_ADAPTERFUNCS(CLTRACE_ANSWER)};
void* const kAnswerDevice[] = {CLTRACE_CALLS_D3D11DDI_DEVICEFUNCS(CLTRACE_ANSWER)};
void* const kAnswerDxgi[] = {CLTRACE_CALLS_DXGI_DDI_BASE_FUNCTIONS(CLTRACE_ANSWER)};
void* const kAnswerCore[] = {CLTRACE_CALLS_D3D11DDI_CORELAYER_DEVICECALLBACKS(CLTRACE_ANSWER)};
void* const kAnswerKernel[] = {CLTRACE_CALLS_D3DDDI_DEVICECALLBACKS(CLTRACE_ANSWER)};
void* const kAnswerKmd[] = {CLTRACE_CALLS_DRIVER_INITIALIZATION_DATA(CLTRACE_ANSWER)};
void* const kAnswerDxgkrnl[] = {CLTRACE_CALLS_DXGKRNL_INTERFACE(CLTRACE_ANSWER)};
void* const kAnswerGpuObserver[] = {CLTRACE_CALLS_CLTRACE_GPU_OBSERVER(CLTRACE_ANSWER)};
#undef CLTRACE_ANSWER

template <typename Table, size_t N>
void FillTable(Table* t, void* const (&fns)[N]) {
  static_assert(sizeof(Table) == N * sizeof(void*));
  std::memcpy(t, fns, sizeof(Table));
}

// Tables the wrapped contexts use (driver side) and get (runtime side).
struct Tables {
  D3D10_2DDI_ADAPTERFUNCS runtime_adapter{};
  D3D11DDI_DEVICEFUNCS driver_device{}, runtime_device{};
  DXGI_DDI_BASE_FUNCTIONS driver_dxgi{}, runtime_dxgi{};
  D3D11DDI_CORELAYER_DEVICECALLBACKS runtime_core{};
  const D3D11DDI_CORELAYER_DEVICECALLBACKS* driver_core = nullptr;
  D3DDDI_DEVICECALLBACKS runtime_kernel{};
  const D3DDDI_DEVICECALLBACKS* driver_kernel = nullptr;
  DRIVER_INITIALIZATION_DATA real_kmd{};
  const DRIVER_INITIALIZATION_DATA* wrapped_kmd = nullptr;
  DXGKRNL_INTERFACE real_dxgkrnl{};
  const DXGKRNL_INTERFACE* wrapped_dxgkrnl = nullptr;
  CLTRACE_GPU_OBSERVER real_gpu_observer{};
  const CLTRACE_GPU_OBSERVER* wrapped_gpu_observer = nullptr;
  // Zeroed tables whose addresses stand in for the table pointers inside creation arguments.
  D3D11DDI_DEVICEFUNCS scratch_device{};
  D3D11DDI_CORELAYER_DEVICECALLBACKS scratch_core{};
  D3DDDI_DEVICECALLBACKS scratch_kernel{};
  DXGI_DDI_BASE_FUNCTIONS scratch_dxgi{};
};
Tables& T() {
  static Tables* t = new Tables;
  return *t;
}

HRESULT APIENTRY FakeOpenAdapter(D3D10DDIARG_OPENADAPTER* args) {
  FillTable(args->pAdapterFuncs_2, kAnswerAdapter);
  args->hAdapter.pDrvPrivate = reinterpret_cast<void*>(TestHandleRaw(kAdapterId));
  return S_OK;
}

// (Re)registers every context the thunks look up; DestroyDevice and CloseAdapter unregister
// theirs, so this runs before every call.
void RegisterContexts() {
  Tables& t = T();
  D3D10DDIARG_OPENADAPTER open{};
  open.pAdapterFuncs_2 = &t.runtime_adapter;
  ASSERT_EQ(OpenAdapter(&FakeOpenAdapter, &open), S_OK);
  FillTable(&t.driver_device, kAnswerDevice);
  FillTable(&t.driver_dxgi, kAnswerDxgi);
  FillTable(&t.runtime_core, kAnswerCore);
  FillTable(&t.runtime_kernel, kAnswerKernel);
  t.driver_core = WrapCoreLayer(
      D3D10DDI_HRTCORELAYER{reinterpret_cast<void*>(TestHandleRaw(kLayerId))}, &t.runtime_core);
  t.driver_kernel =
      WrapKernelCallbacks(reinterpret_cast<void*>(TestHandleRaw(kKernelId)), &t.runtime_kernel);
  FillTable(&t.real_kmd, kAnswerKmd);
  FillTable(&t.real_dxgkrnl, kAnswerDxgkrnl);
  t.wrapped_kmd = WrapKmd(&t.real_kmd);
  t.wrapped_dxgkrnl = WrapDxgkrnl(&t.real_dxgkrnl);
  FillTable(&t.real_gpu_observer, kAnswerGpuObserver);
  t.wrapped_gpu_observer = WrapGpuObserver(&t.real_gpu_observer);
  DeviceTables d;
  d.device.pDrvPrivate = reinterpret_cast<void*>(TestHandleRaw(kDeviceId));
  d.driver_funcs = &t.driver_device;
  d.runtime_funcs = &t.runtime_device;
  d.driver_dxgi = &t.driver_dxgi;
  d.runtime_dxgi = &t.runtime_dxgi;
  ASSERT_TRUE(WrapDevice(d).ok());
}

// The thunk the runtime would call for `id`.
void* ThunkFor(const CallInfo& call, size_t slot) {
  Tables& t = T();
  switch (call.layer) {
    case format::Layer::kAdapter:
      return reinterpret_cast<void* const*>(&t.runtime_adapter)[slot];
    case format::Layer::kDevice:
      return reinterpret_cast<void* const*>(&t.runtime_device)[slot];
    case format::Layer::kDxgi:
      return reinterpret_cast<void* const*>(&t.runtime_dxgi)[slot];
    case format::Layer::kCoreLayer:
      return reinterpret_cast<void* const*>(t.driver_core)[slot];
    case format::Layer::kKernelCb:
      return reinterpret_cast<void* const*>(t.driver_kernel)[slot];
    case format::Layer::kKmd:
      return reinterpret_cast<void* const*>(t.wrapped_kmd)[slot];
    case format::Layer::kDxgkrnl:
      // Two tables in this layer: DXGKRNL_INTERFACE and the GPU observer (our own).
      if (std::string(call.table) == "CLTRACE_GPU_OBSERVER") {
        return reinterpret_cast<void* const*>(t.wrapped_gpu_observer)[slot];
      }
      return reinterpret_cast<void* const*>(t.wrapped_dxgkrnl)[slot];
    default:
      return nullptr;
  }
}

// The context handles the thunks look up, and table pointers inside creation arguments that
// the recorder reads, must be real.
void FixUp(const CallInfo& call, ArgVec* args) {
  Tables& t = T();
  auto fields = format::Fields(call);
  switch (call.layer) {
    case format::Layer::kAdapter:
    case format::Layer::kDevice:
    case format::Layer::kCoreLayer:
    case format::Layer::kKernelCb:
      (*args)[0] = ContextIdOf(call.layer);
      break;
    case format::Layer::kDxgi: {
      const int h = format::FieldIndex(call, "hDevice");
      ASSERT_GE(h, 0);
      (*args)[0] = 1;  // pPresentData present
      (*args)[h] = kDeviceId;
      break;
    }
    default:
      break;
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string name = fields[i].name;
    if (fields[i].kind != FieldKind::kPtr || (*args)[i] == 0) continue;
    const void* table = nullptr;
    if (name == "p11DeviceFuncs" || name == "p11ContextFuncs") table = &t.scratch_device;
    if (name == "p11UMCallbacks") table = &t.scratch_core;
    if (name == "pKTCallbacks") table = &t.scratch_kernel;
    if (name == "DXGIBaseDDI.pDXGIDDIBaseFunctions") table = &t.scratch_dxgi;
    if (table != nullptr) (*args)[i] = reinterpret_cast<uintptr_t>(table);
  }
}

std::string Describe(const CallInfo& call, const ArgVec& want, const ArgVec& got) {
  if (want.size() != got.size()) {
    return absl::StrFormat("%d args expected, %d recorded", want.size(), got.size());
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == got[i]) continue;
    std::string name = i < call.field_count ? format::Fields(call)[i].name : "(array element)";
    return absl::StrFormat("arg %d (%s): expected 0x%x, recorded 0x%x", i, name, want[i], got[i]);
  }
  return "equal";
}

template <CallId kId>
void RoundTrip() {
  const CallInfo& call = *format::GetCall(kId);
  const size_t slot = CallTraits<kId>::kSlotIndex;
  State& s = S();
  std::string bytes;
  Options o;
  o.sink = std::make_unique<format::StringSink>(&bytes);
  absl::StatusOr<std::unique_ptr<Recorder>> rec = Recorder::Start(std::move(o));
  ASSERT_TRUE(rec.ok()) << rec.status();

  constexpr int kSeeds = 40;
  std::vector<ArgVec> sent;
  std::vector<int64_t> returned;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    RegisterContexts();
    Rng r(seed * 7919 + static_cast<uint64_t>(kId));
    s.expected = format::testing::RandomValidArgs(call, r, kFirstRandomId);
    FixUp(call, &s.expected);
    s.ret = RandomReturn(call, r);
    s.arena.Reset();
    s.env = format::InvokeEnv{};
    s.env.handle_raw = TestHandleRaw;
    s.env.arena = &s.arena;
    s.answered = 0;
    ASSERT_TRUE(format::ValidateArgs(kId, s.expected).ok())
        << format::ValidateArgs(kId, s.expected);
    void* thunk = ThunkFor(call, slot);
    ASSERT_NE(thunk, nullptr) << "no thunk installed for " << call.name;
    absl::StatusOr<int64_t> ret = format::InvokeCall(kId, thunk, s.expected, s.env);
    ASSERT_TRUE(ret.ok()) << "seed " << seed << ": " << ret.status();
    ASSERT_EQ(s.answered, 1) << "seed " << seed << ": the thunk did not forward exactly once";
    EXPECT_EQ(*ret, s.ret) << "seed " << seed;
    EXPECT_TRUE(s.apply_status.ok()) << "seed " << seed << ": " << s.apply_status;
    sent.push_back(s.expected);
    returned.push_back(s.ret);
  }
  Stats stats = (*rec)->Stop();
  ASSERT_EQ(stats.calls, static_cast<uint64_t>(kSeeds));

  absl::StatusOr<std::unique_ptr<format::TraceReader>> reader =
      format::TraceReader::OpenBytes(bytes);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<format::Event> events;
  format::Event e;
  while ((*reader)->Next(&e)) events.push_back(e);
  ASSERT_TRUE((*reader)->status().ok()) << (*reader)->status();
  ASSERT_EQ(events.size(), static_cast<size_t>(kSeeds));
  std::sort(events.begin(), events.end(),
            [](const format::Event& a, const format::Event& b) { return a.seq < b.seq; });
  const format::CallLayout& layout = format::LayoutOf(kId);
  for (int i = 0; i < kSeeds; ++i) {
    const format::Event& got = events[static_cast<size_t>(i)];
    EXPECT_EQ(got.call, kId);
    EXPECT_EQ(got.seq, static_cast<uint64_t>(2 * i + 1));
    EXPECT_EQ(got.end, static_cast<uint64_t>(2 * i + 2));
    EXPECT_EQ(got.parent, 0u);
    EXPECT_EQ(got.ret, returned[static_cast<size_t>(i)]) << "seed " << i;
    // Handles: trace id -> token (the raw value the process saw) -> the test's id.
    ArgVec args(got.args.begin(), got.args.end());
    bool bad_token = false;
    format::VisitArgKinds(
        layout, absl::MakeConstSpan(args.data(), args.size()), [&](size_t k, FieldKind kind) {
          if (kind != FieldKind::kHandle || args[k] == 0) return;
          uint64_t raw = 0;
          absl::string_view tok = (*reader)->handles().Token(args[k]);
          if (!absl::ConsumePrefix(&tok, "0x") || !absl::SimpleHexAtoi(tok, &raw)) {
            bad_token = true;
          }
          args[k] = TestHandleId(raw);
        });
    EXPECT_FALSE(bad_token);
    EXPECT_EQ(args, sent[static_cast<size_t>(i)])
        << "seed " << i << ": " << Describe(call, sent[static_cast<size_t>(i)], args);
    if (testing::Test::HasFailure()) return;
  }
}

#define CLTRACE_ROUNDTRIP_TEST(name) \
  TEST(RecorderRoundTrip, name) { RoundTrip<CallId::k##name>(); }
CLTRACE_CALLS_D3D10_2DDI_ADAPTERFUNCS(CLTRACE_ROUNDTRIP_TEST)
CLTRACE_CALLS_D3D11DDI_DEVICEFUNCS(CLTRACE_ROUNDTRIP_TEST)
CLTRACE_CALLS_DXGI_DDI_BASE_FUNCTIONS(CLTRACE_ROUNDTRIP_TEST)
CLTRACE_CALLS_D3D11DDI_CORELAYER_DEVICECALLBACKS(CLTRACE_ROUNDTRIP_TEST)
CLTRACE_CALLS_D3DDDI_DEVICECALLBACKS(CLTRACE_ROUNDTRIP_TEST)
CLTRACE_CALLS_DRIVER_INITIALIZATION_DATA(CLTRACE_ROUNDTRIP_TEST)
CLTRACE_CALLS_DXGKRNL_INTERFACE(CLTRACE_ROUNDTRIP_TEST)
CLTRACE_CALLS_CLTRACE_GPU_OBSERVER(CLTRACE_ROUNDTRIP_TEST)
#undef CLTRACE_ROUNDTRIP_TEST

}  // namespace
}  // namespace cltrace::recorder
