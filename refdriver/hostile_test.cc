// Hostile calls into the reference driver (what replay mutation fuzzing produces: NULL argument
// structures, NULL handles, handles of the wrong kind, a second DestroyDevice). The driver must
// report each one as a violation with its rule number and keep working; it must never crash.
//
// The test loads build/lib/libcltrace_refdriver.so with dlopen and drives it through the C ABI
// only (OpenAdapter10_2 -> adapter table -> CreateDevice), with the GPU model's kernel
// (gpu::KernelStack) behind pKTCallbacks and no-op core-layer callbacks that record the
// errors the driver reports through pfnSetErrorCb.
#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "ddi/ddi_abi.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "refdriver/command_stream.h"
#include "wddm/draw_state.h"
#include "wddm/kernel_stack.h"

namespace cltrace::refdriver {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

std::vector<HRESULT>& Errors() {
  static std::vector<HRESULT> errors;
  return errors;
}

// A callback that does nothing (the state-refresh callbacks: nothing is bound in these tests).
template <typename F>
struct Noop;
template <typename R, typename... A>
struct Noop<R(APIENTRY*)(A...)> {
  static R APIENTRY Call(A...) {
    if constexpr (!std::is_void_v<R>) return R{};
  }
};

void APIENTRY RecordError(D3D10DDI_HRTCORELAYER, HRESULT hr) { Errors().push_back(hr); }

D3D11DDI_CORELAYER_DEVICECALLBACKS CoreLayerCallbacks() {
  D3D11DDI_CORELAYER_DEVICECALLBACKS c{};
#define CLTRACE_NOOP(M) c.M = &Noop<decltype(c.M)>::Call;
  CLTRACE_NOOP(pfnStateVsConstBufCb)
  CLTRACE_NOOP(pfnStatePsSrvCb)
  CLTRACE_NOOP(pfnStatePsShaderCb)
  CLTRACE_NOOP(pfnStatePsSamplerCb)
  CLTRACE_NOOP(pfnStateVsShaderCb)
  CLTRACE_NOOP(pfnStatePsConstBufCb)
  CLTRACE_NOOP(pfnStateIaInputLayoutCb)
  CLTRACE_NOOP(pfnStateIaVertexBufCb)
  CLTRACE_NOOP(pfnStateIaIndexBufCb)
  CLTRACE_NOOP(pfnStateGsConstBufCb)
  CLTRACE_NOOP(pfnStateGsShaderCb)
  CLTRACE_NOOP(pfnStateIaPrimitiveTopologyCb)
  CLTRACE_NOOP(pfnStateVsSrvCb)
  CLTRACE_NOOP(pfnStateVsSamplerCb)
  CLTRACE_NOOP(pfnStateGsSrvCb)
  CLTRACE_NOOP(pfnStateGsSamplerCb)
  CLTRACE_NOOP(pfnStateOmRenderTargetsCb)
  CLTRACE_NOOP(pfnStateOmBlendStateCb)
  CLTRACE_NOOP(pfnStateOmDepthStateCb)
  CLTRACE_NOOP(pfnStateRsRastStateCb)
  CLTRACE_NOOP(pfnStateSoTargetsCb)
  CLTRACE_NOOP(pfnStateRsViewportsCb)
  CLTRACE_NOOP(pfnStateRsScissorCb)
  CLTRACE_NOOP(pfnDisableDeferredStagingResourceDestruction)
  CLTRACE_NOOP(pfnStateTextFilterSizeCb)
  CLTRACE_NOOP(pfnStateHsSrvCb)
  CLTRACE_NOOP(pfnStateHsShaderCb)
  CLTRACE_NOOP(pfnStateHsSamplerCb)
  CLTRACE_NOOP(pfnStateHsConstBufCb)
  CLTRACE_NOOP(pfnStateDsSrvCb)
  CLTRACE_NOOP(pfnStateDsShaderCb)
  CLTRACE_NOOP(pfnStateDsSamplerCb)
  CLTRACE_NOOP(pfnStateDsConstBufCb)
  CLTRACE_NOOP(pfnPerformAmortizedProcessingCb)
  CLTRACE_NOOP(pfnStateCsSrvCb)
  CLTRACE_NOOP(pfnStateCsUavCb)
  CLTRACE_NOOP(pfnStateCsShaderCb)
  CLTRACE_NOOP(pfnStateCsSamplerCb)
  CLTRACE_NOOP(pfnStateCsConstBufCb)
#undef CLTRACE_NOOP
  c.pfnSetErrorCb = &RecordError;
  return c;
}

// The driver library and its out-of-band functions (refdriver/refdriver.h).
struct Library {
  Library() {
    handle = dlopen(CLTRACE_REFDRIVER_LIB, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return;
    open_adapter = reinterpret_cast<HRESULT(APIENTRY*)(D3D10DDIARG_OPENADAPTER*)>(
        dlsym(handle, "OpenAdapter10_2"));
    configure = reinterpret_cast<int (*)(const char*)>(dlsym(handle, "CltraceRefDriverConfigure"));
    violations =
        reinterpret_cast<size_t (*)(char*, size_t)>(dlsym(handle, "CltraceRefDriverViolations"));
    clear = reinterpret_cast<void (*)()>(dlsym(handle, "CltraceRefDriverClearViolations"));
  }
  bool ok() const {
    return open_adapter != nullptr && configure != nullptr && violations != nullptr &&
           clear != nullptr;
  }
  void* handle = nullptr;
  HRESULT(APIENTRY* open_adapter)(D3D10DDIARG_OPENADAPTER*) = nullptr;
  int (*configure)(const char*) = nullptr;
  size_t (*violations)(char*, size_t) = nullptr;
  void (*clear)() = nullptr;
};

Library& Lib() {
  static Library* lib = new Library();  // stays loaded: the driver's state is process-wide
  return *lib;
}

// Every violation line the driver reported since the last Clear.
std::vector<std::string> Violations() {
  std::string text(Lib().violations(nullptr, 0) + 1, '\0');
  text.resize(Lib().violations(text.data(), text.size()));
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    lines.emplace_back(line);
  }
  return lines;
}

// OpenAdapter10_2 queries the kernel-mode driver's adapter data through the runtime's
// D3DDDI_ADAPTERCALLBACKS (Microsoft's OPENADAPTER layout) and fails when the query fails.
HANDLE g_queried_adapter = nullptr;
HRESULT g_query_answer = S_OK;
HRESULT APIENTRY QueryAdapterInfo(HANDLE hAdapter, const D3DDDICB_QUERYADAPTERINFO* data) {
  g_queried_adapter = hAdapter;
  if (data == nullptr || data->pPrivateDriverData == nullptr) return E_INVALIDARG;
  return g_query_answer;
}

TEST(RefdriverAdapterTest, OpenAdapterQueriesTheAdapterInfoThroughTheRuntimesCallbacks) {
  ASSERT_TRUE(Lib().ok()) << dlerror();
  const D3DDDI_ADAPTERCALLBACKS callbacks{&QueryAdapterInfo, nullptr};
  D3D10_2DDI_ADAPTERFUNCS funcs{};
  D3D10DDIARG_OPENADAPTER open{};
  int rt_adapter = 0;
  open.hRTAdapter.handle = &rt_adapter;
  open.pAdapterCallbacks = &callbacks;
  open.pAdapterFuncs_2 = &funcs;
  g_query_answer = S_OK;
  ASSERT_EQ(Lib().open_adapter(&open), S_OK);
  EXPECT_EQ(g_queried_adapter, &rt_adapter);
  ASSERT_NE(funcs.pfnCloseAdapter, nullptr);
  EXPECT_EQ(funcs.pfnCloseAdapter(open.hAdapter), S_OK);
  g_query_answer = static_cast<HRESULT>(E_FAIL);
  D3D10_2DDI_ADAPTERFUNCS untouched{};
  open.pAdapterFuncs_2 = &untouched;
  EXPECT_EQ(Lib().open_adapter(&open), static_cast<HRESULT>(E_FAIL));
  EXPECT_EQ(untouched.pfnCreateDevice, nullptr);
}

// One adapter and one device of the driver on the GPU model's kernel. Handle memory is owned
// here and kept until the end of the test, so calls on destroyed handles read valid memory
// (as they do under the runtime model's and the replayer's quarantine).
class HostileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Lib().ok()) << dlerror();
    ASSERT_EQ(Lib().configure(config_), 0);
    Lib().clear();
    Errors().clear();
    open_.pAdapterFuncs_2 = &adapter_;
    ASSERT_EQ(Lib().open_adapter(&open_), S_OK);
    absl::StatusOr<HANDLE> kdev = stack_.kernel().CreateDevice();
    ASSERT_TRUE(kdev.ok()) << kdev.status();
    kdev_ = *kdev;
    D3D10DDIARG_CREATEDEVICE args{};
    args.hRTDevice.handle = kdev_;
    args.pKTCallbacks = const_cast<D3DDDI_DEVICECALLBACKS*>(stack_.device_callbacks());
    args.p11DeviceFuncs = &ic_;
    args.hDrvDevice.pDrvPrivate =
        Memory(adapter_.pfnCalcPrivateDeviceSize(open_.hAdapter, nullptr));
    args.hRTCoreLayer.handle = &ic_layer_;
    args.p11UMCallbacks = &callbacks_;
    ASSERT_EQ(adapter_.pfnCreateDevice(open_.hAdapter, &args), S_OK);
    dev_ = args.hDrvDevice;
  }

  void TearDown() override {
    if (!destroyed_) ic_.pfnDestroyDevice(dev_);
    (void)stack_.kernel().DestroyDevice(kdev_);
    adapter_.pfnCloseAdapter(open_.hAdapter);
    Lib().configure(nullptr);
  }

  void* Memory(size_t size) {
    memory_.push_back(std::make_unique<uint8_t[]>(size));  // zeroed, like the runtime's
    return memory_.back().get();
  }

  D3D10DDI_HRESOURCE NewBuffer() {
    D3D11DDIARG_CREATERESOURCE a = BufferDesc();
    D3D10DDI_HRESOURCE r{Memory(ic_.pfnCalcPrivateResourceSize(dev_, &a))};
    ic_.pfnCreateResource(dev_, &a, r, D3D10DDI_HRTRESOURCE{&a});
    return r;
  }

  static D3D11DDIARG_CREATERESOURCE BufferDesc() {
    D3D11DDIARG_CREATERESOURCE a{};
    static constexpr D3D10DDI_MIPINFO kMip{256, 1, 1, 256, 1, 1};
    a.pMipInfoList = &kMip;
    a.ResourceDimension = D3D10DDIRESOURCE_BUFFER;
    a.MipLevels = 1;
    a.ArraySize = 1;
    a.SampleDesc.Count = 1;
    return a;
  }

  // A deferred context of the device (its table in dc_).
  D3D10DDI_HDEVICE NewDeferredContext() {
    D3D11DDIARG_CALCPRIVATEDEFERREDCONTEXTSIZE calc{};
    D3D11DDIARG_CREATEDEFERREDCONTEXT a{};
    a.p11ContextFuncs = &dc_;
    a.hDrvContext.pDrvPrivate = Memory(ic_.pfnCalcPrivateDeferredContextSize(dev_, &calc));
    a.hRTCoreLayer.handle = &dc_layer_;
    a.p11UMCallbacks = &callbacks_;
    ic_.pfnCreateDeferredContext(dev_, &a);
    return a.hDrvContext;
  }

  // Opens `ic` context-locally on `dc` (the runtime's first use of a resource on a DC).
  D3D10DDI_HRESOURCE OpenLocal(D3D10DDI_HDEVICE dc, D3D10DDI_HRESOURCE ic) {
    D3D10DDI_HRESOURCE local{
        Memory(ic_.pfnCalcDeferredContextHandleSize(dev_, D3D10DDI_HT_RESOURCE, ic.pDrvPrivate))};
    dc_.pfnCreateResource(dc, nullptr, local, D3D10DDI_HRTRESOURCE{ic.pDrvPrivate});
    return local;
  }

  // The driver still works: a full object life cycle with a submit reports nothing.
  void ExpectDriverStillWorks() {
    Lib().clear();
    D3D10DDI_HRESOURCE r = NewBuffer();
    ic_.pfnResourceCopy(dev_, r, r);
    ic_.pfnFlush(dev_);
    ic_.pfnDestroyResource(dev_, r);
    ic_.pfnFlush(dev_);
    EXPECT_THAT(Violations(), IsEmpty());
  }

  const char* config_ = "";
  gpu::CollectingViolationSink kernel_violations_;
  gpu::KernelStack stack_{gpu::KernelStackOptions{}, &kernel_violations_};
  HANDLE kdev_{};
  D3D10DDIARG_OPENADAPTER open_{};
  D3D10_2DDI_ADAPTERFUNCS adapter_{};
  D3D11DDI_DEVICEFUNCS ic_{};
  D3D11DDI_DEVICEFUNCS dc_{};
  D3D11DDI_CORELAYER_DEVICECALLBACKS callbacks_ = CoreLayerCallbacks();
  int ic_layer_ = 0, dc_layer_ = 0;
  D3D10DDI_HDEVICE dev_{};
  bool destroyed_ = false;
  std::vector<std::unique_ptr<uint8_t[]>> memory_;
};

TEST_F(HostileTest, CreateResourceWithNullArgumentsIsReportedR56) {
  D3D10DDI_HRESOURCE r{Memory(ic_.pfnCalcPrivateResourceSize(dev_, nullptr))};
  ic_.pfnCreateResource(dev_, nullptr, r, D3D10DDI_HRTRESOURCE{});
  EXPECT_THAT(Violations(), ElementsAre(AllOf(StartsWith("R56 "), HasSubstr("fn=CreateResource"),
                                              HasSubstr("pCreateResource is NULL"))));
  // The handle is an (empty) resource: its destroy is an ordinary one.
  Lib().clear();
  ic_.pfnDestroyResource(dev_, r);
  EXPECT_THAT(Violations(), IsEmpty());
  ExpectDriverStillWorks();
}

TEST_F(HostileTest, CreateResourceWithoutHandleMemoryIsReportedR39) {
  D3D11DDIARG_CREATERESOURCE a = BufferDesc();
  const uint64_t before = stack_.kernel().stats().allocations;
  ic_.pfnCreateResource(dev_, &a, D3D10DDI_HRESOURCE{}, D3D10DDI_HRTRESOURCE{});
  EXPECT_THAT(Violations(), ElementsAre(AllOf(StartsWith("R39 "), HasSubstr("fn=CreateResource"),
                                              HasSubstr("hResource (the handle memory) is NULL"))));
  EXPECT_EQ(stack_.kernel().stats().allocations, before);  // nothing was allocated for it
  ExpectDriverStillWorks();
}

TEST_F(HostileTest, IcDestroyResourceGivenContextLocalHandleIsReportedR57) {
  D3D10DDI_HRESOURCE r = NewBuffer();
  D3D10DDI_HDEVICE dc = NewDeferredContext();
  D3D10DDI_HRESOURCE local = OpenLocal(dc, r);
  ASSERT_THAT(Violations(), IsEmpty());
  ic_.pfnDestroyResource(dev_, local);
  EXPECT_THAT(Violations(),
              ElementsAre(AllOf(StartsWith("R57 "), HasSubstr("fn=DestroyResource"),
                                HasSubstr("given a context-local handle where an IC object "
                                          "handle is expected"))));
  // Nothing was destroyed: the local handle closes and the resource goes in the right order.
  Lib().clear();
  dc_.pfnDestroyResource(dc, local);
  dc_.pfnDestroyDevice(dc);
  ic_.pfnDestroyResource(dev_, r);
  EXPECT_THAT(Violations(), IsEmpty());
  ExpectDriverStillWorks();
}

TEST_F(HostileTest, ContextLocalOpenIntoIcHandleMemoryIsReportedR57) {
  D3D10DDI_HRESOURCE r = NewBuffer();
  D3D10DDI_HDEVICE dc = NewDeferredContext();
  // The IC handle's memory passed as the local handle: opening would overwrite the resource.
  dc_.pfnCreateResource(dc, nullptr, r, D3D10DDI_HRTRESOURCE{r.pDrvPrivate});
  EXPECT_THAT(Violations(), ElementsAre(AllOf(StartsWith("R57 "), HasSubstr("fn=CreateResource"),
                                              HasSubstr("context-local open into the memory of "
                                                        "an IC object"))));
  Lib().clear();
  dc_.pfnDestroyDevice(dc);
  ic_.pfnDestroyResource(dev_, r);  // still an intact resource
  EXPECT_THAT(Violations(), IsEmpty());
  ExpectDriverStillWorks();
}

TEST_F(HostileTest, IcCreateIntoLiveObjectMemoryIsReportedR57) {
  D3D10DDI_HRESOURCE r = NewBuffer();
  const uint64_t before = stack_.kernel().stats().allocations;
  D3D11DDIARG_CREATERESOURCE a = BufferDesc();
  ic_.pfnCreateResource(dev_, &a, r, D3D10DDI_HRTRESOURCE{&a});
  EXPECT_THAT(Violations(), ElementsAre(AllOf(StartsWith("R57 "), HasSubstr("fn=CreateResource"),
                                              HasSubstr("into the memory of an IC object"))));
  EXPECT_EQ(stack_.kernel().stats().allocations, before);
  Lib().clear();
  ic_.pfnDestroyResource(dev_, r);  // the first resource is intact
  EXPECT_THAT(Violations(), IsEmpty());
  ExpectDriverStillWorks();
}

TEST_F(HostileTest, IcDestroyOfWrongObjectTypeIsReportedR57) {
  D3D10DDI_HRESOURCE r = NewBuffer();
  ic_.pfnDestroyShader(dev_, D3D10DDI_HSHADER{r.pDrvPrivate});
  EXPECT_THAT(Violations(), ElementsAre(AllOf(StartsWith("R57 "), HasSubstr("fn=DestroyShader"),
                                              HasSubstr("IC handle of type 0, expected 4"))));
  Lib().clear();
  ic_.pfnDestroyResource(dev_, r);
  EXPECT_THAT(Violations(), IsEmpty());
}

TEST_F(HostileTest, SecondDestroyOfAResourceIsReportedR39) {
  D3D10DDI_HRESOURCE r = NewBuffer();
  ic_.pfnDestroyResource(dev_, r);
  ASSERT_THAT(Violations(), IsEmpty());
  ic_.pfnDestroyResource(dev_, r);
  EXPECT_THAT(Violations(), ElementsAre(AllOf(StartsWith("R39 "), HasSubstr("fn=DestroyResource"),
                                              HasSubstr("not a live object of this driver"))));
  ExpectDriverStillWorks();
}

TEST_F(HostileTest, SecondIcDestroyDeviceIsReportedR39) {
  ic_.pfnDestroyDevice(dev_);
  ASSERT_THAT(Violations(), IsEmpty());
  ic_.pfnDestroyDevice(dev_);
  destroyed_ = true;
  EXPECT_THAT(Violations(), ElementsAre(AllOf(StartsWith("R39 "), HasSubstr("fn=DestroyDevice"),
                                              HasSubstr("hDevice is not a live device"))));
  // Any other IC call with the dead handle is reported the same way.
  Lib().clear();
  ic_.pfnFlush(dev_);
  EXPECT_THAT(Violations(), ElementsAre(AllOf(StartsWith("R39 "), HasSubstr("fn=Flush"))));
}

TEST_F(HostileTest, IcCallWithDeferredContextAsDeviceIsReportedR57) {
  D3D10DDI_HDEVICE dc = NewDeferredContext();
  ic_.pfnFlush(dc);
  ic_.pfnDestroyDevice(dc);
  EXPECT_THAT(Violations(),
              ElementsAre(AllOf(StartsWith("R57 "), HasSubstr("fn=Flush"),
                                HasSubstr("hDevice of an IC-table call is a deferred context")),
                          AllOf(StartsWith("R57 "), HasSubstr("fn=DestroyDevice"))));
  Lib().clear();
  dc_.pfnDestroyDevice(dc);  // the deferred context was not harmed
  EXPECT_THAT(Violations(), IsEmpty());
  ExpectDriverStillWorks();
}

TEST_F(HostileTest, NullArgumentStructuresOfOtherDdisAreReportedR56) {
  ic_.pfnCreateDeferredContext(dev_, nullptr);
  D3D10DDI_HRESOURCE r = NewBuffer();
  ic_.pfnResourceMap(dev_, r, 0, D3D10_DDI_MAP_WRITE_DISCARD, 0, nullptr);
  D3D10DDI_HSHADERRESOURCEVIEW v{Memory(ic_.pfnCalcPrivateShaderResourceViewSize(dev_, nullptr))};
  ic_.pfnCreateShaderResourceView(dev_, nullptr, v, D3D10DDI_HRTSHADERRESOURCEVIEW{});
  EXPECT_THAT(Violations(),
              ElementsAre(AllOf(StartsWith("R56 "), HasSubstr("fn=CreateDeferredContext"),
                                HasSubstr("pCreateDeferredContext is NULL")),
                          AllOf(StartsWith("R56 "), HasSubstr("fn=ResourceMap"),
                                HasSubstr("pMappedSubResource is NULL")),
                          AllOf(StartsWith("R56 "), HasSubstr("fn=CreateShaderResourceView"),
                                HasSubstr("the view description is NULL"))));
  Lib().clear();
  ic_.pfnDestroyShaderResourceView(dev_, v);
  ic_.pfnDestroyResource(dev_, r);
  EXPECT_THAT(Violations(), IsEmpty());
  ExpectDriverStillWorks();
}

// The slots of the full table (issue #14) check their arguments like every other DDI: a format
// outside the table and a NULL answer go back through pfnSetErrorCb (E_FAIL, E_INVALIDARG, as
// their reference pages say), handles of the wrong kind or already destroyed are reported.
TEST_F(HostileTest, FullTableSlotsCheckTheirArguments) {
  UINT caps = 123;
  ic_.pfnCheckFormatSupport(dev_, static_cast<DXGI_FORMAT>(500), &caps);
  EXPECT_EQ(caps, 0u);
  ic_.pfnCheckFormatSupport(dev_, DXGI_FORMAT_R8G8B8A8_UNORM, nullptr);
  ic_.pfnCheckFormatSupport(dev_, DXGI_FORMAT_R8G8B8A8_UNORM, &caps);
  EXPECT_EQ(caps, static_cast<UINT>(D3D10_DDI_FORMAT_SUPPORT_SHADER_SAMPLE |
                                    D3D10_DDI_FORMAT_SUPPORT_RENDERTARGET |
                                    D3D10_DDI_FORMAT_SUPPORT_BLENDABLE |
                                    D3D10_DDI_FORMAT_SUPPORT_MULTISAMPLE_RENDERTARGET |
                                    D3D10_DDI_FORMAT_SUPPORT_MULTISAMPLE_LOAD));
  UINT levels = 9;
  ic_.pfnCheckMultisampleQualityLevels(dev_, DXGI_FORMAT_R32G32B32_FLOAT, 4, &levels);
  EXPECT_EQ(levels, 0u);  // not a multisample render-target format
  ic_.pfnCheckMultisampleQualityLevels(dev_, DXGI_FORMAT_R8G8B8A8_UNORM, 4, &levels);
  EXPECT_EQ(levels, 1u);
  EXPECT_EQ(Errors(), (std::vector<HRESULT>{static_cast<HRESULT>(E_FAIL),
                                            static_cast<HRESULT>(E_INVALIDARG)}));
  D3D10DDI_HRESOURCE r = NewBuffer();
  ic_.pfnCopyStructureCount(dev_, r, 0, D3D11DDI_HUNORDEREDACCESSVIEW{r.pDrvPrivate});
  ic_.pfnDestroyResource(dev_, r);
  ic_.pfnResourceResolveSubresource(dev_, r, 0, r, 0, DXGI_FORMAT_R8G8B8A8_UNORM);
  EXPECT_THAT(Violations(),
              ElementsAre(AllOf(StartsWith("R57 "), HasSubstr("fn=CopyStructureCount")),
                          AllOf(StartsWith("R39 "), HasSubstr("fn=ResourceResolveSubresource")),
                          AllOf(StartsWith("R39 "), HasSubstr("fn=ResourceResolveSubresource"))));
  ExpectDriverStillWorks();
}

// The §3 state checks take their legality from the edge table (rules/state_machines.h); each
// non-edge is reported with the rule and text it always had.
class StateEdgeTest : public HostileTest {
 protected:
  // A command list of `dc` created into fresh handle memory (D5 Rec -> Clo, T1 U -> V), and
  // the DC recycled back to Recording (D9).
  D3D11DDI_HCOMMANDLIST NewCommandList(D3D10DDI_HDEVICE dc) {
    D3D11DDIARG_CREATECOMMANDLIST a{dc};
    D3D11DDI_HCOMMANDLIST cl{Memory(ic_.pfnCalcPrivateCommandListSize(dev_, &a))};
    ic_.pfnCreateCommandList(dev_, &a, cl, D3D11DDI_HRTCOMMANDLIST{&a});
    RecycleDc(dc);
    return cl;
  }
  HRESULT RecycleDc(D3D10DDI_HDEVICE dc) {
    D3D11DDIARG_CREATEDEFERREDCONTEXT a{};
    a.p11ContextFuncs = &dc_;
    a.hDrvContext = dc;
    a.hRTCoreLayer.handle = &dc_layer_;
    a.p11UMCallbacks = &callbacks_;
    return ic_.pfnRecycleCreateDeferredContext(dev_, &a);
  }
  HRESULT RecycleCreate(D3D10DDI_HDEVICE dc, D3D11DDI_HCOMMANDLIST cl) {
    D3D11DDIARG_CREATECOMMANDLIST a{dc};
    return ic_.pfnRecycleCreateCommandList(dev_, &a, cl, D3D11DDI_HRTCOMMANDLIST{&a});
  }
};

TEST_F(StateEdgeTest, DeferredContextNonEdgesKeepTheirRulesAndTexts) {
  D3D10DDI_HDEVICE dc = NewDeferredContext();
  EXPECT_EQ(RecycleDc(dc), S_OK);  // Rec -> Rec: no D9
  dc_.pfnAbandonCommandList(dc);   // D7
  dc_.pfnAbandonCommandList(dc);   // Abd -> Abd: none
  EXPECT_THAT(
      Violations(),
      ElementsAre(AllOf(StartsWith("R48 "), HasSubstr("fn=RecycleCreateDeferredContext"),
                        HasSubstr("RecycleCreateDeferredContext in state Recording (only after "
                                  "AbandonCommandList or Create/RecycleCreateCommandList)")),
                  AllOf(StartsWith("R51 "), HasSubstr("fn=AbandonCommandList"),
                        HasSubstr("AbandonCommandList on a deferred context in state Abandoned"))));
  Lib().clear();
  EXPECT_EQ(RecycleDc(dc), S_OK);  // D9 from Abd
  // RecycleCommandList of a handle that is no command list still takes the DC to Fin (D4).
  dc_.pfnRecycleCommandList(dc, D3D11DDI_HCOMMANDLIST{Memory(64)});
  dc_.pfnAbandonCommandList(dc);  // Fin -> Abd is D5e only after a failed create
  EXPECT_EQ(RecycleDc(dc), S_OK);
  dc_.pfnRecycleCommandList(dc, D3D11DDI_HCOMMANDLIST{Memory(64)});
  dc_.pfnDestroyDevice(dc);  // Fin -> X: none
  EXPECT_THAT(
      Violations(),
      ElementsAre(StartsWith("R42 "),
                  AllOf(StartsWith("R51 "),
                        HasSubstr("AbandonCommandList on a deferred context in state Finishing")),
                  StartsWith("R42 "),
                  AllOf(StartsWith("R48 "), HasSubstr("fn=DestroyDevice"),
                        HasSubstr("DestroyDevice in the middle of FinishCommandList"))));
}

TEST_F(StateEdgeTest, CommandListNonEdgesKeepTheirRulesAndTexts) {
  D3D10DDI_HDEVICE dc = NewDeferredContext();
  D3D11DDI_HCOMMANDLIST cl = NewCommandList(dc);
  ASSERT_THAT(Violations(), IsEmpty());
  EXPECT_EQ(RecycleCreate(dc, cl), S_OK);  // V -> V: no T7
  EXPECT_EQ(RecycleDc(dc), S_OK);
  ic_.pfnRecycleDestroyCommandList(dev_, cl);  // T3
  EXPECT_EQ(RecycleCreate(dc, cl), S_OK);      // RD -> V: the shortcut R45 names
  dc_.pfnRecycleCommandList(dc, cl);           // Clo: after the create in one Finish
  EXPECT_THAT(
      Violations(),
      ElementsAre(AllOf(StartsWith("R43 "), HasSubstr("fn=RecycleCreateCommandList"),
                        HasSubstr("on a handle in state Valid (expected Recycled)")),
                  AllOf(StartsWith("R45 "), HasSubstr("(RD->V shortcut)")),
                  AllOf(StartsWith("R46 "), HasSubstr("fn=RecycleCommandList"),
                        HasSubstr("RecycleCommandList after Create/RecycleCreateCommandList")),
                  AllOf(StartsWith("R42 "), HasSubstr("fn=RecycleCommandList"),
                        HasSubstr("on a handle in state Valid (expected RecycleDestroyed)"))));
  Lib().clear();
  D3D11DDIARG_CREATECOMMANDLIST a{dc};
  ic_.pfnCreateCommandList(dev_, &a, D3D11DDI_HCOMMANDLIST{Memory(256)},
                           D3D11DDI_HRTCOMMANDLIST{&a});  // Clo -> Clo: no D5
  EXPECT_THAT(Violations(),
              ElementsAre(AllOf(StartsWith("R53 "), HasSubstr("fn=CreateCommandList"),
                                HasSubstr("command list created from a deferred context in state "
                                          "Closed (expected Recording/Finishing)"))));
}

TEST_F(StateEdgeTest, LocalHandleNonEdgesKeepTheirRulesAndTexts) {
  D3D10DDI_HDEVICE dc = NewDeferredContext();
  D3D10DDI_HRESOURCE r = NewBuffer();
  D3D10DDI_HRESOURCE local = OpenLocal(dc, r);                                     // L1
  dc_.pfnCreateResource(dc, nullptr, local, D3D10DDI_HRTRESOURCE{r.pDrvPrivate});  // O -> O
  dc_.pfnDestroyResource(dc, local);                                               // L3
  dc_.pfnDestroyResource(dc, local);                                               // C -> C
  EXPECT_THAT(Violations(), ElementsAre(AllOf(StartsWith("R58 "), HasSubstr("fn=CreateResource"),
                                              HasSubstr("opened twice without a close")),
                                        AllOf(StartsWith("R57 "), HasSubstr("fn=DestroyResource"),
                                              HasSubstr("close of a handle that is not open"))));
}

// T7e: after RecycleCreateCommandList failed, retrying it on the handle is an edge of the
// table (the spec leaves retry or destroy to the runtime); it builds a working command list.
class RecycleCreateRetryTest : public StateEdgeTest {
 protected:
  RecycleCreateRetryTest() { config_ = "oom:RecycleCreateCommandList=1"; }
};

TEST_F(RecycleCreateRetryTest, RetryAfterAFailedRecycleCreateIsAccepted) {
  D3D10DDI_HDEVICE dc = NewDeferredContext();
  D3D11DDI_HCOMMANDLIST cl = NewCommandList(dc);
  ic_.pfnRecycleDestroyCommandList(dev_, cl);
  dc_.pfnRecycleCommandList(dc, cl);
  EXPECT_EQ(RecycleCreate(dc, cl), static_cast<HRESULT>(E_OUTOFMEMORY));  // T7e, D5e
  EXPECT_EQ(RecycleCreate(dc, cl), S_OK);                                 // T7e retry
  ic_.pfnCommandListExecute(dev_, cl);                                    // T2: it is Valid
  EXPECT_THAT(Violations(), IsEmpty());
}

// A device removal reported from CreateResource fails the create: the runtime frees the handle
// without DestroyResource, so the driver must not have allocated anything for it (else R70 at
// DestroyDevice; seen when threads made the removal land on a CreateResource).
class RemovedTest : public HostileTest {
 protected:
  RemovedTest() { config_ = "removed=2"; }
};

TEST_F(RemovedTest, CreateResourceThatReportsRemovalAllocatesNothing) {
  const uint64_t before = stack_.kernel().stats().allocations;
  D3D11DDIARG_CREATERESOURCE a = BufferDesc();
  D3D10DDI_HRESOURCE r{Memory(ic_.pfnCalcPrivateResourceSize(dev_, &a))};  // call 1
  ic_.pfnCreateResource(dev_, &a, r, D3D10DDI_HRTRESOURCE{&a});            // call 2
  EXPECT_THAT(Errors(), ElementsAre(static_cast<HRESULT>(D3DDDIERR_DEVICEREMOVED)));
  EXPECT_EQ(stack_.kernel().stats().allocations, before);
  EXPECT_THAT(Violations(), IsEmpty());
}

// pInitialDataUP: the resource starts with the application's bytes (subresource 0, rows
// SysMemPitch apart), read through pMipInfoList's size; a primary is told by pPrimaryDesc.
TEST_F(HostileTest, InitialDataFillsTheResource) {
  D3D11DDIARG_CREATERESOURCE t = BufferDesc();
  t.ResourceDimension = D3D10DDIRESOURCE_TEXTURE2D;
  t.Usage = D3D10_DDI_USAGE_DYNAMIC;
  t.Format = 28;  // R8G8B8A8_UNORM
  const D3D10DDI_MIPINFO mip{2, 2, 1, 2, 2, 1};
  t.pMipInfoList = &mip;
  // Two rows of 8 bytes, 12 bytes apart in the application's memory.
  const uint8_t src[20] = {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 9, 10, 11, 12, 13, 14, 15, 16};
  const D3D10_DDIARG_SUBRESOURCE_UP up{const_cast<uint8_t*>(src), 12, 24};
  t.pInitialDataUP = &up;
  DXGI_DDI_PRIMARY_DESC primary{};
  t.pPrimaryDesc = &primary;
  t.BindFlags = D3D10_DDI_BIND_RENDER_TARGET | D3D10_DDI_BIND_PRESENT;
  D3D10DDI_HRESOURCE tex{Memory(ic_.pfnCalcPrivateResourceSize(dev_, &t))};
  ic_.pfnCreateResource(dev_, &t, tex, D3D10DDI_HRTRESOURCE{&t});
  D3D10DDI_MAPPED_SUBRESOURCE m{};
  ic_.pfnResourceMap(dev_, tex, 0, D3D10_DDI_MAP_READ, 0, &m);
  ASSERT_NE(m.pData, nullptr);
  ASSERT_EQ(m.RowPitch, 8u);
  const auto* got = static_cast<const uint8_t*>(m.pData);
  EXPECT_EQ(std::vector<uint8_t>(got, got + 16),
            (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}));
  ic_.pfnResourceUnmap(dev_, tex, 0);
  EXPECT_THAT(Violations(), IsEmpty());
}

// Not hostile, but a contract recorders rely on: the pitches Map reports describe memory the
// driver handed out (a recorder copies exactly that region at Unmap, format/content.h).
TEST_F(HostileTest, MapPitchesDescribeTheMappedMemory) {
  D3D11DDIARG_CREATERESOURCE t = BufferDesc();
  t.ResourceDimension = D3D10DDIRESOURCE_TEXTURE2D;
  t.Usage = D3D10_DDI_USAGE_DYNAMIC;
  t.Format = 28;  // R8G8B8A8_UNORM
  const D3D10DDI_MIPINFO mip{32, 8, 1, 32, 8, 1};
  t.pMipInfoList = &mip;
  D3D10DDI_HRESOURCE tex{Memory(ic_.pfnCalcPrivateResourceSize(dev_, &t))};
  ic_.pfnCreateResource(dev_, &t, tex, D3D10DDI_HRTRESOURCE{&t});
  D3D10DDI_MAPPED_SUBRESOURCE m{};
  ic_.pfnResourceMap(dev_, tex, 0, D3D10_DDI_MAP_WRITE_DISCARD, 0, &m);
  ASSERT_NE(m.pData, nullptr);
  EXPECT_EQ(m.RowPitch, 32u * 4);
  EXPECT_EQ(m.DepthPitch, 32u * 4 * 8);
  std::memset(m.pData, 0x5a, m.DepthPitch);  // the whole subresource is the driver's memory
  ic_.pfnResourceUnmap(dev_, tex, 0);

  D3D10DDI_HRESOURCE buf = NewBuffer();
  ic_.pfnDynamicIABufferMapDiscard(dev_, buf, 0, D3D10_DDI_MAP_WRITE_DISCARD, 0, &m);
  ASSERT_NE(m.pData, nullptr);
  EXPECT_EQ(m.DepthPitch, 256u);
  ic_.pfnDynamicIABufferUnmap(dev_, buf, 0);
  EXPECT_THAT(Violations(), IsEmpty());
}

// The draw-state probe (wddm/draw_state.h) the runtime model uses for R47/R60: the exported
// decoder reads the driver's own records, ignores other payloads and rejects malformed ones.
void CollectDraw(void* ctx, const uint64_t* handles) {
  static_cast<std::vector<std::vector<uint64_t>>*>(ctx)->emplace_back(
      handles, handles + gpu::kDrawSlotCount);
}

std::vector<uint32_t> Payload(const std::vector<uint8_t>& records) {
  std::vector<uint32_t> words(2 + records.size() / 4);
  words[0] = static_cast<uint32_t>(refcmd::kStreamMagic);
  words[1] = static_cast<uint32_t>(refcmd::kStreamMagic >> 32);
  std::memcpy(words.data() + 2, records.data(), records.size());
  return words;
}

template <typename T>
void Append(std::vector<uint8_t>* out, const T& record) {
  const auto* p = reinterpret_cast<const uint8_t*>(&record);
  out->insert(out->end(), p, p + sizeof(record));
}

TEST(DrawStateProbeTest, DecodesDrawRecordsIgnoresOthersAndRejectsMalformedOnes) {
  ASSERT_NE(Lib().handle, nullptr) << dlerror();
  auto decode = reinterpret_cast<gpu::DecodePrivateDrawsFn>(
      dlsym(Lib().handle, gpu::kDecodePrivateDrawsSymbol));
  ASSERT_NE(decode, nullptr);

  refcmd::Draw draw{};
  draw.header = {refcmd::kDraw, sizeof(refcmd::Draw)};
  draw.count = 3;
  draw.state[refcmd::kSlotVs] = 0x1000;
  draw.state[refcmd::kSlotRasterizer] = 0x2000;
  refcmd::Generic set{{refcmd::kSet, sizeof(refcmd::Generic)}, 1, 0, 0x1000};
  std::vector<uint8_t> records;
  Append(&records, set);
  Append(&records, draw);
  std::vector<uint32_t> words = Payload(records);
  std::vector<std::vector<uint64_t>> draws;
  EXPECT_EQ(decode(words.data(), words.size(), &CollectDraw, &draws), gpu::kPrivateDrawsOk);
  ASSERT_EQ(draws.size(), 1u);
  EXPECT_EQ(draws[0][gpu::kSlotVs], 0x1000u);
  EXPECT_EQ(draws[0][gpu::kSlotRasterizer], 0x2000u);
  EXPECT_EQ(draws[0][gpu::kSlotPs], 0u);

  // Another driver's private command: not ours, no draws.
  std::vector<uint32_t> foreign = {0x12345678, 0x9abcdef0, 7, 8};
  draws.clear();
  EXPECT_EQ(decode(foreign.data(), foreign.size(), &CollectDraw, &draws), gpu::kPrivateDrawsOk);
  EXPECT_THAT(draws, IsEmpty());

  // A record claiming more bytes than the payload holds.
  refcmd::Generic bad{{refcmd::kCopy, 4096}, 0, 0, 0};
  records.clear();
  Append(&records, bad);
  words = Payload(records);
  EXPECT_EQ(decode(words.data(), words.size(), &CollectDraw, &draws), gpu::kPrivateDrawsMalformed);
  EXPECT_THAT(draws, IsEmpty());
}

}  // namespace
}  // namespace cltrace::refdriver
