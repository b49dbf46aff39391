// The DDI call sequences of ddi-spec §4, asserted call by call against readable golden
// transcripts (tests/runtime/golden/*.txt; regenerate with CLTRACE_UPDATE_GOLDEN=1 from the
// source root). Every scenario here is single-threaded, so transcripts are deterministic.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/runtime.h"
#include "tests/runtime/test_util.h"

namespace cltrace::testing {
namespace {

using runtime::Stage;
using runtime::View;
using ::testing::IsEmpty;

class GoldenTest : public ::testing::Test {
 protected:
  void Start(const std::string& driver_config = "",
             runtime::RuntimeOptions options = runtime::RuntimeOptions()) {
    options.observer = &transcript_;
    device_ = NewDevice(driver_config, options);
    ASSERT_NE(device_, nullptr);
    ic_ = device_->GetImmediateContext();
  }
  // Releases the device and compares the transcript; no violations may have been detected.
  void Finish(const char* golden) {
    device_->Release();
    device_ = nullptr;
    SetDriverConfig("");
    ExpectGolden(golden, transcript_.Text());
    EXPECT_THAT(AllViolations(), IsEmpty());
  }
  Resource* Buffer(uint32_t bind, D3D10_DDI_RESOURCE_USAGE usage = D3D10_DDI_USAGE_DEFAULT) {
    return NewBuffer(device_, bind, usage);
  }
  DeviceContext* Deferred() {
    DeviceContext* dc = nullptr;
    EXPECT_EQ(device_->CreateDeferredContext(0, &dc), S_OK);
    return dc;
  }
  // The copy scenarios: two shader-resource buffers, src_ created (and released) first.
  void CreateCopyBuffers() {
    src_ = Buffer(D3D10_DDI_BIND_SHADER_RESOURCE);
    dst_ = Buffer(D3D10_DDI_BIND_SHADER_RESOURCE);
  }
  // Records a copy src_ -> dst_ on `dc` and finishes it into *cl (no state restore).
  void RecordCopy(DeviceContext* dc, CommandList** cl) {
    dc->CopyResource(dst_, src_);
    ASSERT_EQ(dc->FinishCommandList(FALSE, cl), S_OK);
  }
  // Releases the copy buffers, flushes the immediate context and checks the transcript.
  void FinishCopy(const char* golden) {
    src_->Release();
    dst_->Release();
    ic_->Flush();
    Finish(golden);
  }

  Transcript transcript_;
  Device* device_ = nullptr;
  DeviceContext* ic_ = nullptr;
  Resource* src_ = nullptr;
  Resource* dst_ = nullptr;
};

// §4.1 bring-up (GetCaps, CreateDevice with CreateContextCb, two-pass
// CheckDeferredContextHandleSizes) and §4.9 device teardown.
TEST_F(GoldenTest, DeviceBringUpAndTeardown) {
  Start();
  Finish("device_bringup");
}

// §4.2: CalcPrivate*Size, Create*, CalcDeferredContextHandleSize; IC destroys (deferred).
TEST_F(GoldenTest, ObjectCreationAndDestruction) {
  Start();
  Resource* r = Buffer(D3D10_DDI_BIND_SHADER_RESOURCE);
  View* v = nullptr;
  ASSERT_EQ(device_->CreateView(runtime::ViewKind::kShaderResource, r, runtime::ViewDesc(), &v),
            S_OK);
  std::vector<uint32_t> code = ShaderCode(8);
  runtime::Shader* vs = nullptr;
  ASSERT_EQ(device_->CreateShader(Stage::kVS, code.data(), &vs), S_OK);
  vs->Release();
  v->Release();
  r->Release();
  ic_->Flush();
  Finish("object_creation");
}

// §4.3 deferred-context creation; release of an idle context (abandon first, [INF] D11).
TEST_F(GoldenTest, DeferredContextCreateAndRelease) {
  Start();
  DeviceContext* dc = Deferred();
  dc->Release();
  Finish("deferred_context");
}

// §4.4/§4.5 first FinishCommandList of a context: first-bind local opens, fresh handle
// (CalcPrivateCommandListSize + CreateCommandList + CalcDeferredContextHandleSize), closing
// of local handles, RecycleCreateDeferredContext; the list outlives its context and is
// destroyed with DestroyCommandList (§4.6 else-branch).
TEST_F(GoldenTest, FinishFreshHandle) {
  Start();
  CreateCopyBuffers();
  DeviceContext* dc = Deferred();
  CommandList* cl = nullptr;
  ASSERT_NO_FATAL_FAILURE(RecordCopy(dc, &cl));
  dc->Release();
  ic_->ExecuteCommandList(cl, FALSE);
  cl->Release();
  FinishCopy("finish_fresh_handle");
}

// The small-command-list recycling loop (SCL pseudocode): release while the context lives
// (RecycleDestroyCommandList onto the lock-free list), next Finish drains it with
// RecycleCommandList and reuses it with RecycleCreateCommandList (no size query); the context
// dies with a cached handle (DestroyCommandList before its DestroyDevice).
TEST_F(GoldenTest, FinishRecycledHandle) {
  Start();
  CreateCopyBuffers();
  DeviceContext* dc = Deferred();
  for (int i = 0; i < 3; ++i) {
    CommandList* cl = nullptr;
    ASSERT_NO_FATAL_FAILURE(RecordCopy(dc, &cl));
    ic_->ExecuteCommandList(cl, FALSE);
    cl->Release();
  }
  dc->Release();
  FinishCopy("finish_recycled_handle");
}

// §4.7 abandon: a context released with recorded work and bindings: AbandonCommandList, the
// per-binding unbinds, the local closes (views before resources), DestroyDevice.
TEST_F(GoldenTest, AbandonOnRelease) {
  Start();
  Resource* cb = Buffer(D3D10_DDI_BIND_CONSTANT_BUFFER);
  Resource* tex = Buffer(D3D10_DDI_BIND_SHADER_RESOURCE);
  View* srv = nullptr;
  ASSERT_EQ(device_->CreateView(runtime::ViewKind::kShaderResource, tex, runtime::ViewDesc(), &srv),
            S_OK);
  DeviceContext* dc = Deferred();
  dc->SetConstantBuffers(Stage::kVS, 0, 1, &cb);
  dc->SetShaderResources(Stage::kPS, 0, 1, &srv);
  dc->Draw(3, 0);
  dc->Release();
  srv->Release();
  tex->Release();
  cb->Release();
  Finish("abandon_on_release");
}

// §4.8 ExecuteCommandList with RestoreContextState: the driver's refresh probes during
// CommandListExecute see the pre-execute bindings; the runtime re-binds them afterwards.
// Also FinishCommandList with RestoreDeferredContextState (§4.5 step 6).
TEST_F(GoldenTest, ExecuteAndFinishWithRestore) {
  Start();
  Resource* vb = Buffer(D3D10_DDI_BIND_VERTEX_BUFFER);
  Resource* cb = Buffer(D3D10_DDI_BIND_CONSTANT_BUFFER);
  DeviceContext* dc = Deferred();
  const uint32_t stride = 16, offset = 0;
  dc->IASetVertexBuffers(0, 1, &vb, &stride, &offset);
  dc->Draw(3, 0);
  CommandList* cl = nullptr;
  ASSERT_EQ(dc->FinishCommandList(TRUE, &cl), S_OK);
  ic_->SetConstantBuffers(Stage::kPS, 0, 1, &cb);
  ic_->ExecuteCommandList(cl, TRUE);
  ic_->Draw(3, 0);
  cl->Release();
  dc->Release();
  ic_->ClearState();
  vb->Release();
  cb->Release();
  ic_->Flush();
  Finish("execute_with_restore");
}

// §4.4 nested: a deferred context executes another context's list through a context-local
// command-list handle (DC::CreateCommandList with hRT = the IC handle).
TEST_F(GoldenTest, NestedExecution) {
  Start();
  CreateCopyBuffers();
  DeviceContext* inner_dc = Deferred();
  CommandList* inner = nullptr;
  ASSERT_NO_FATAL_FAILURE(RecordCopy(inner_dc, &inner));
  DeviceContext* outer_dc = Deferred();
  outer_dc->ExecuteCommandList(inner, FALSE);
  CommandList* outer = nullptr;
  ASSERT_EQ(outer_dc->FinishCommandList(FALSE, &outer), S_OK);
  ic_->ExecuteCommandList(outer, FALSE);
  outer->Release();
  inner->Release();
  outer_dc->Release();
  inner_dc->Release();
  FinishCopy("nested_execution");
}

// D5e/T7e: RecycleCreateCommandList fails with E_OUTOFMEMORY (by return value): the handle is
// dead (no destroy by default), the abandon sequence runs, Finish returns E_OUTOFMEMORY.
TEST_F(GoldenTest, FailedRecycleCreate) {
  Start("oom:RecycleCreateCommandList=1");
  CreateCopyBuffers();
  DeviceContext* dc = Deferred();
  CommandList* cl = nullptr;
  ASSERT_NO_FATAL_FAILURE(RecordCopy(dc, &cl));
  cl->Release();  // recycle-destroyed onto the list
  dc->CopyResource(dst_, src_);
  EXPECT_EQ(dc->FinishCommandList(FALSE, &cl), static_cast<HRESULT>(E_OUTOFMEMORY));
  EXPECT_EQ(cl, nullptr);
  dc->Release();
  FinishCopy("failed_recycle_create");
}

// T1e: CreateCommandList reports E_OUTOFMEMORY through pfnSetErrorCb on the IC core layer.
TEST_F(GoldenTest, FailedCreateCommandList) {
  Start("oom:CreateCommandList=1");
  Resource* src = Buffer(D3D10_DDI_BIND_SHADER_RESOURCE);
  DeviceContext* dc = Deferred();
  dc->CopyResource(src, src);
  CommandList* cl = nullptr;
  EXPECT_EQ(dc->FinishCommandList(FALSE, &cl), static_cast<HRESULT>(E_OUTOFMEMORY));
  dc->Release();
  src->Release();
  Finish("failed_create_command_list");
}

// §4.5 step 1: Finish ends a begun query and unmaps a mapped dynamic buffer first (R52).
TEST_F(GoldenTest, FinishEndsQueriesAndUnmaps) {
  Start();
  Resource* cb = Buffer(D3D10_DDI_BIND_CONSTANT_BUFFER, D3D10_DDI_USAGE_DYNAMIC);
  runtime::Query* q = nullptr;
  ASSERT_EQ(device_->CreateQuery(D3D10DDI_QUERY_OCCLUSION, &q), S_OK);
  DeviceContext* dc = Deferred();
  dc->Begin(q);
  runtime::MappedSubresource m;
  ASSERT_EQ(dc->Map(cb, 0, D3D10_DDI_MAP_WRITE_DISCARD, 0, &m), S_OK);
  CommandList* cl = nullptr;
  ASSERT_EQ(dc->FinishCommandList(FALSE, &cl), S_OK);
  ic_->ExecuteCommandList(cl, FALSE);
  cl->Release();
  dc->Release();
  q->Release();
  cb->Release();
  Finish("finish_ends_queries");
}

// §4.10 / seed 002: the two synchronous-destruction idioms on the immediate context.
TEST_F(GoldenTest, SynchronousDestructionIdioms) {
  Start();
  Resource* r = Buffer(D3D10_DDI_BIND_CONSTANT_BUFFER);
  ic_->SetConstantBuffers(Stage::kPS, 0, 1, &r);
  ic_->Draw(3, 0);
  r->Release();       // final release: still bound, not destroyed yet
  ic_->ClearState();  // unbinding destroys it (deferred in the driver)
  ic_->Flush();       // the driver frees it
  runtime::Query* event = nullptr;
  ASSERT_EQ(device_->CreateQuery(D3D10DDI_QUERY_EVENT, &event), S_OK);
  Resource* r2 = Buffer(D3D10_DDI_BIND_CONSTANT_BUFFER);
  ic_->SetConstantBuffers(Stage::kPS, 0, 1, &r2);
  ic_->Draw(3, 0);
  r2->Release();
  ic_->ClearState();
  ic_->Flush();
  ic_->End(event);
  uint32_t done = 0;
  while (ic_->GetData(event, &done, sizeof(done), 0) == S_FALSE) {
  }
  ic_->Flush();
  event->Release();
  Finish("sync_destruction");
}

}  // namespace
}  // namespace cltrace::testing
