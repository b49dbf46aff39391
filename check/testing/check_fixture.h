// Test fixture for the checker tests: a TestTrace plus the legal building blocks of the
// runtime call sequences of ddi-spec §4, so each rule test reads as "legal flow, then the
// one call that breaks (or nearly breaks) the rule".
//
// Conventions: the immediate context is "ic" (core layer "rtic", runtime device "rtdev",
// HCONTEXT "hctx"), deferred contexts "dcN" (core layer "rtdcN"). IC calls run on thread 1,
// DC calls on thread 2 unless a test says otherwise.
//
// Thread-safety: none (test helper).
#ifndef CLTRACE_CHECK_TESTING_CHECK_FIXTURE_H_
#define CLTRACE_CHECK_TESTING_CHECK_FIXTURE_H_

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "check/check_trace.h"
#include "check/checker.h"
#include "check/testing/test_trace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::check::testing {

// The matchers every checker test asserts with.
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class CheckTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kIcThread = 1;
  static constexpr uint32_t kDcThread = 2;

  CheckResult Run() {
    absl::StatusOr<CheckResult> r = Check(t.events(), t.handles(), options);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *std::move(r) : CheckResult();
  }
  // Rule ids of the violations, in report order.
  std::vector<std::string> Errors() {
    std::vector<std::string> ids;
    last_ = Run();
    for (const Violation& v : last_.violations) ids.push_back(v.id());
    // CLTRACE_SHOW_FINDINGS=1 prints every run's report (handy when writing a new test).
    if (std::getenv("CLTRACE_SHOW_FINDINGS") != nullptr) std::cerr << Report();
    return ids;
  }
  std::vector<std::string> Warnings() {
    std::vector<std::string> ids;
    last_ = Run();
    for (const Violation& v : last_.warnings) ids.push_back(v.id());
    return ids;
  }
  // The report of the last Errors()/Warnings() run, for failure messages.
  std::string Report() const {
    std::string out;
    for (const Violation& v : last_.violations)
      absl::StrAppend(&out, FormatViolation(v, t.handles()), "\n");
    for (const Violation& v : last_.warnings)
      absl::StrAppend(&out, FormatViolation(v, t.handles()), "\n");
    return out;
  }
  const CheckResult& last() const { return last_; }

  // §4.1: caps, device creation (with its GPU context), handle-size query.
  void Device(const std::string& ic = "ic") {
    t.On(kIcThread);
    t.Call("GetCaps", {{"hAdapter", "adapter"},
                       {"Type", "D3D11DDICAPS_THREADING"},
                       {"pData.pData", "5"},
                       {"DataSize", "4"}});
    t.Call("CalcPrivateDeviceSize", {{"hAdapter", "adapter"}}, "512");
    t.Begin("CreateDevice", {{"hAdapter", "adapter"},
                             {"hDrvDevice", ic},
                             {"hRTCoreLayer", "rt" + ic},
                             {"hRTDevice", "rtdev"}});
    t.Call("CreateContextCb", {{"hDevice", "rtdev"},
                               {"hContext", "hctx"},
                               {"CommandBufferSize", "65536"},
                               {"AllocationListSize", "256"},
                               {"PatchLocationListSize", "256"}});
    t.End();
    t.Call("CheckDeferredContextHandleSizes",
           {{"hDevice", ic}, {"pHSizes", "0"}, {"pHSizesOut", "6"}});
    t.Call("CheckDeferredContextHandleSizes",
           {{"hDevice", ic},
            {"pHSizes", "6"},
            {"pHSizesOut", "6"},
            {"pHandleSize",
             "D3D10DDI_HT_RESOURCE:64,D3D10DDI_HT_SHADERRESOURCEVIEW:16,D3D10DDI_HT_QUERY:32,"
             "D3D11DDI_HT_COMMANDLIST:16,D3D11DDI_HT_COMMANDLIST:24,D3D10DDI_HT_BLENDSTATE:8"}});
  }
  // §4.3.
  void Dc(const std::string& dc, const std::string& ic = "ic") {
    t.On(kIcThread);
    t.Call("CalcPrivateDeferredContextSize", {{"hDevice", ic}}, "1024");
    t.Call("CreateDeferredContext",
           {{"hDevice", ic}, {"hDrvContext", dc}, {"hRTCoreLayer", "rt" + dc}});
  }
  // A call with its arguments and return value.
  struct CallSpec {
    std::string fn;
    Args args;
    std::string ret;
  };
  // A DC-handle-size answer: the handle type and its size.
  struct HandleSize {
    std::string type;
    std::string size;
  };
  // §4.2's create protocol on the current thread: the private-size query, the create, then
  // the IC's CalcDeferredContextHandleSize of the new object.
  void SizedCreate(const CallSpec& size_query, const std::string& create, const Args& args,
                   const HandleSize& handle) {
    t.Call(size_query.fn, size_query.args, size_query.ret);
    t.Call(create, args);
    t.Call("CalcDeferredContextHandleSize", {{"hDevice", "ic"}, {"HandleType", handle.type}},
           handle.size);
  }
  // §4.2 for a buffer resource.
  void Resource(const std::string& h, bool dynamic = false, Args extra = {}) {
    t.On(kIcThread);
    Args args = {{"hDevice", "ic"},
                 {"hResource", h},
                 {"hRTResource", "rt_" + h},
                 {"ResourceDimension", "D3D10DDIRESOURCE_BUFFER"},
                 {"Usage", dynamic ? "D3D10_DDI_USAGE_DYNAMIC" : "D3D10_DDI_USAGE_DEFAULT"}};
    args.insert(args.end(), extra.begin(), extra.end());
    SizedCreate({"CalcPrivateResourceSize", {{"hDevice", "ic"}}, "128"}, "CreateResource", args,
                {"D3D10DDI_HT_RESOURCE", "64"});
  }
  void Srv(const std::string& h, const std::string& resource) {
    t.On(kIcThread);
    SizedCreate({"CalcPrivateShaderResourceViewSize", {{"hDevice", "ic"}}, "32"},
                "CreateShaderResourceView",
                {{"hDevice", "ic"},
                 {"hDrvResource", resource},
                 {"hShaderResourceView", h},
                 {"hRTShaderResourceView", "rt_" + h}},
                {"D3D10DDI_HT_SHADERRESOURCEVIEW", "16"});
  }
  void Query(const std::string& h) {
    t.On(kIcThread);
    SizedCreate({"CalcPrivateQuerySize", {{"hDevice", "ic"}}, "32"}, "CreateQuery",
                {{"hDevice", "ic"},
                 {"Query", "D3D10DDI_QUERY_OCCLUSION"},
                 {"hQuery", h},
                 {"hRTQuery", "rt_" + h}},
                {"D3D10DDI_HT_QUERY", "32"});
  }
  // §4.2 for a buffer whose CreateResource makes one allocation (pfnAllocateCb) named
  // `alloc`; `extra` adds CreateResource arguments (MiscFlags, Usage, ...).
  void AllocatedResource(const std::string& h, const std::string& alloc, Args extra = {}) {
    t.On(kIcThread).Call("CalcPrivateResourceSize", {{"hDevice", "ic"}}, "128");
    Args args = {{"hDevice", "ic"}, {"hResource", h}, {"hRTResource", "rt_" + h}};
    args.insert(args.end(), extra.begin(), extra.end());
    t.Begin("CreateResource", args);
    t.Call("AllocateCb", {{"hDevice", "rtdev"},
                          {"hResource", "rt_" + h},
                          {"NumAllocations", "1"},
                          {"pAllocationInfo", alloc + ":0:0:0:0:0"}});
    t.End();
    t.Call("CalcDeferredContextHandleSize",
           {{"hDevice", "ic"}, {"HandleType", "D3D10DDI_HT_RESOURCE"}}, "64");
  }
  // §4.4: DC-local open of an IC object (fn = the DC-table create, e.g. CreateResource).
  void Open(const std::string& dc, const std::string& local, const std::string& ic_handle,
            const std::string& fn = "CreateResource", Args extra = {}) {
    t.On(kDcThread);
    const std::string field = fn == "CreateResource"             ? "hResource"
                              : fn == "CreateQuery"              ? "hQuery"
                              : fn == "CreateShaderResourceView" ? "hShaderResourceView"
                              : fn == "CreateCommandList"        ? "hCommandList"
                                                                 : "?";
    const std::string rt = fn == "CreateResource"             ? "hRTResource"
                           : fn == "CreateQuery"              ? "hRTQuery"
                           : fn == "CreateShaderResourceView" ? "hRTShaderResourceView"
                                                              : "hRTCommandList";
    Args args = {{"hDevice", dc}, {field, local}, {rt, ic_handle}};
    args.insert(args.end(), extra.begin(), extra.end());
    t.Call(fn, args);
  }
  void Close(const std::string& dc, const std::string& local,
             const std::string& fn = "DestroyResource") {
    t.On(kDcThread);
    const std::string field = fn == "DestroyResource"             ? "hResource"
                              : fn == "DestroyQuery"              ? "hQuery"
                              : fn == "DestroyShaderResourceView" ? "hShaderResourceView"
                                                                  : "hCommandList";
    t.Call(fn, {{"hDevice", dc}, {field, local}});
  }
  // §4.5 steps 2-5 making a new command list (no recycled handle in the cache).
  void FinishNew(const std::string& dc, const std::string& cl,
                 const std::vector<std::string>& drained = {}) {
    t.On(kDcThread);
    for (const std::string& d : drained)
      t.Call("RecycleCommandList", {{"hDevice", dc}, {"hCommandList", d}});
    CreateList(dc, cl);
  }
  // The arguments of the IC's CreateCommandList (or RecycleCreateCommandList) of list `cl` for
  // `dc`.
  static Args CreateListArgs(const std::string& dc, const std::string& cl) {
    return {{"hDevice", "ic"},
            {"hDeferredContext", dc},
            {"hCommandList", cl},
            {"hRTCommandList", "rt_" + cl}};
  }
  // §4.5 step 4 on the current thread: the size query, CreateCommandList(cl) for `dc` and
  // the list's handle size `handle_size`.
  void CreateList(const std::string& dc, const std::string& cl,
                  const std::string& handle_size = "16") {
    SizedCreate(
        {"CalcPrivateCommandListSize", {{"hDevice", "ic"}, {"hDeferredContext", dc}}, "256"},
        "CreateCommandList", CreateListArgs(dc, cl), {"D3D11DDI_HT_COMMANDLIST", handle_size});
  }
  // §4.5 steps 2-3 with a recycled handle: drain, then RecycleCreateCommandList(cl) returning
  // `ret`.
  void FinishRecycled(const std::string& dc, const std::string& cl,
                      const std::vector<std::string>& drained, const std::string& ret = "S_OK") {
    t.On(kDcThread);
    for (const std::string& d : drained)
      t.Call("RecycleCommandList", {{"hDevice", dc}, {"hCommandList", d}});
    t.Call("RecycleCreateCommandList", CreateListArgs(dc, cl), ret);
  }
  // §4.5 step 5.
  void RecycleDc(const std::string& dc, const std::string& ret = "S_OK") {
    t.On(kDcThread);
    t.Call("RecycleCreateDeferredContext",
           {{"hDevice", "ic"}, {"hDrvContext", dc}, {"hRTCoreLayer", "rt" + dc}}, ret);
  }
  void Execute(const std::string& cl) {
    t.On(kIcThread);
    t.Call("CommandListExecute", {{"hDevice", "ic"}, {"hCommandList", cl}});
  }
  void RecycleDestroy(const std::string& cl) {
    t.On(kIcThread);
    t.Call("RecycleDestroyCommandList", {{"hDevice", "ic"}, {"hCommandList", cl}});
  }
  void DestroyCl(const std::string& cl) {
    t.On(kIcThread);
    t.Call("DestroyCommandList", {{"hDevice", "ic"}, {"hCommandList", cl}});
  }
  // Binds one vertex buffer (res "0": unbinds slot 0) through ctx's table.
  void BindVb(const std::string& ctx, const std::string& res, const std::string& stride = "16") {
    t.On(ctx == "ic" ? kIcThread : kDcThread);
    t.Call("IaSetVertexBuffers", {{"hDevice", ctx},
                                  {"StartBuffer", "0"},
                                  {"NumBuffers", "1"},
                                  {"phBuffers", res},
                                  {"pStrides", stride},
                                  {"pOffsets", "0"}});
  }
  void Draw(const std::string& ctx) {
    t.On(ctx == "ic" ? kIcThread : kDcThread);
    t.Call("Draw", {{"hDevice", ctx}, {"VertexCount", "3"}});
  }
  // Callback `cb` made inside DDI call `fn` on thread `tid` (the whole DDI call).
  void CallbackInside(uint32_t tid, const std::string& fn, const Args& fn_args,
                      const std::string& cb, const Args& cb_args) {
    t.On(tid).Begin(fn, fn_args);
    t.Call(cb, cb_args);
    t.End();
  }
  // A state refresh on the current thread: the runtime's State<stage>ShaderCb on core layer
  // `rt` (stage "Vs", "Ps", ...), the driver re-setting a null shader through `ctx` inside it.
  void ShaderRefresh(const std::string& stage, const std::string& rt, const std::string& ctx) {
    t.Begin("State" + stage + "ShaderCb", {{"hRuntimeDevice", rt}});
    t.Call(stage + "SetShader", {{"hDevice", ctx}, {"hShader", "0"}});
    t.End();
  }
  // A whole small command list on dc: record a draw, finish into cl, recycle the DC.
  void SmallList(const std::string& dc, const std::string& cl) {
    Draw(dc);
    FinishNew(dc, cl);
    RecycleDc(dc);
  }

  TestTrace t;
  CheckOptions options;

 private:
  CheckResult last_;
};

// A CheckTest whose trace starts with the device (§4.1) and one deferred context "dc1" (§4.3).
class DcTest : public CheckTest {
 protected:
  void SetUp() override {
    Device();
    Dc("dc1");
  }
};

}  // namespace cltrace::check::testing

#endif  // CLTRACE_CHECK_TESTING_CHECK_FIXTURE_H_
