// Real threads: deferred contexts recording and finishing concurrently while the immediate
// context executes and releases (smallcl, scene), free-threaded creates racing immediate work,
// the runtime's R10 enforcement, the [INF] option variants, and application misuse the runtime
// refuses (R61, R62, R64, R65). Also built with -DCLTRACE_TSAN=ON (no data race allowed).
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "corpus/workloads/bug_modes.h"
#include "corpus/workloads/scenarios.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/runtime.h"
#include "tests/runtime/test_util.h"

namespace cltrace::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// Runs workload scenario `name` on a fresh device from four threads, eight frames; no
// violation may be detected.
void RunOnFourThreads(const std::string& name) {
  Device* d = NewDevice();
  workloads::ScenarioOptions o;
  o.threads = 4;
  o.frames = 8;
  EXPECT_TRUE(workloads::RunScenario(name, d, o).ok());
  d->Release();
  EXPECT_THAT(AllViolations(), IsEmpty());
}

// The most map-discard aliases the reference driver held at once since the last call
// (refdriver/refdriver.h), 0 if it is not loaded.
uint64_t PeakAliases() {
  void* lib = dlopen("libcltrace_refdriver.so", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return 0;
  auto fn = reinterpret_cast<uint64_t (*)(int)>(dlsym(lib, "CltraceRefDriverPeakAliases"));
  const uint64_t n = fn != nullptr ? fn(1) : 0;
  dlclose(lib);
  return n;
}

// Issue #16 item 6: a deferred context's map-discard aliases (R66) are freed once no command
// list can execute them and they are not current, so the scene's memory does not grow with its
// frames: the most aliases alive at once over 60 frames stay below twice those over 10 (the
// threads' timing moves the peak a little; when aliases went only with their resources, six
// times as many).
TEST(ThreadsTest, SceneMapDiscardAliasesStayBoundedOverFrames) {
  auto peak_over = [](int frames) {
    Device* d = NewDevice();
    workloads::ScenarioOptions o;
    o.threads = 2;
    o.frames = frames;
    PeakAliases();  // starts counting from here
    EXPECT_TRUE(workloads::RunScenario("scene", d, o).ok());
    d->Release();
    return PeakAliases();
  };
  const uint64_t few = peak_over(10);
  const uint64_t many = peak_over(60);
  EXPECT_GT(few, 0u);
  EXPECT_LT(many, 2 * few) << "peak over 10 frames " << few << ", over 60 " << many;
  EXPECT_THAT(AllViolations(), IsEmpty());
}

TEST(ThreadsTest, SmallCommandListsFromFourThreads) { RunOnFourThreads("smallcl"); }

TEST(ThreadsTest, SceneFromFourThreads) { RunOnFourThreads("scene"); }

// Creates and destroys are free-threaded: they run while the IC records and flushes.
TEST(ThreadsTest, FreeThreadedCreatesRaceImmediateWork) {
  Device* d = NewDevice();
  DeviceContext* ic = d->GetImmediateContext();
  std::atomic<bool> stop{false};
  std::vector<std::thread> creators;
  for (int t = 0; t < 3; ++t) {
    creators.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        Resource* r = NewBuffer(d, D3D10_DDI_BIND_SHADER_RESOURCE);
        runtime::View* v = nullptr;
        EXPECT_EQ(d->CreateView(runtime::ViewKind::kShaderResource, r, runtime::ViewDesc(), &v),
                  S_OK);
        v->Release();
        r->Release();
      }
    });
  }
  Resource* cb = NewBuffer(d, D3D10_DDI_BIND_CONSTANT_BUFFER);
  std::thread icthread([&] {
    while (!stop.load()) {
      ic->SetConstantBuffers(runtime::Stage::kVS, 0, 1, &cb);
      ic->Draw(3, 0);
      ic->Flush();
    }
  });
  for (std::thread& t : creators) t.join();
  stop.store(true);
  icthread.join();
  cb->Release();
  d->Release();
  EXPECT_THAT(AllViolations(), IsEmpty());
}

// R10: two application threads inside one deferred context at once. The runtime reports the
// misuse and serializes, so the driver never sees an overlap.
class BlockingObserver : public runtime::DdiObserver {
 public:
  void OnLine(int, absl::string_view line) override {
    // Inside FinishCommandList (a refresh callback from the driver): let the other thread try
    // to enter the same deferred context, then continue.
    if (!armed_.load() || !absl::StrContains(line, "cb StateVsShaderCb")) return;
    if (fired_.exchange(true)) return;
    start_other_.store(true);
    while (!other_trying_.load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::atomic<bool> armed_{false};
  std::atomic<bool> fired_{false};
  std::atomic<bool> start_other_{false};
  std::atomic<bool> other_trying_{false};
};

TEST(ThreadsTest, ApplicationOverlapOnOneContextIsReportedAsR10) {
  BlockingObserver observer;
  runtime::RuntimeOptions options;
  options.observer = &observer;
  Device* d = NewDevice("", options);
  Resource* r = NewBuffer(d, D3D10_DDI_BIND_SHADER_RESOURCE);
  DeviceContext* dc = nullptr;
  ASSERT_EQ(d->CreateDeferredContext(0, &dc), S_OK);
  dc->CopyResource(r, r);
  std::thread other([&] {
    while (!observer.start_other_.load()) std::this_thread::yield();
    observer.other_trying_.store(true);
    dc->CopyResource(r, r);  // overlaps the FinishCommandList below
  });
  observer.armed_.store(true);
  CommandList* cl = nullptr;
  ASSERT_EQ(dc->FinishCommandList(FALSE, &cl), S_OK);
  other.join();
  std::vector<rules::Finding> findings = d->Findings();
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule, rules::Rule::kR10);
  EXPECT_THAT(findings[0].message, HasSubstr("CopyResource"));
  EXPECT_EQ(findings[0].handle, 0u);
  cl->Release();
  dc->Release();
  r->Release();
  d->Release();
  std::vector<std::string> v = AllViolations();
  ASSERT_THAT(v, ElementsAre(StartsWith("R10 ")));
  EXPECT_THAT(v[0], HasSubstr("CopyResource"));
}

// The named settings of the spec's open questions ([INF]) all give clean runs.
struct Variant {
  const char* name;
  const char* driver_config;
  void (*apply)(runtime::RuntimeOptions*);
};

class OptionVariantTest : public ::testing::TestWithParam<Variant> {};

TEST_P(OptionVariantTest, SceneAndSmallClAreClean) {
  runtime::RuntimeOptions options;
  GetParam().apply(&options);
  for (const char* scenario : {"smallcl", "scene"}) {
    Device* d = NewDevice(GetParam().driver_config, options);
    workloads::ScenarioOptions o;
    o.threads = 3;
    o.frames = 6;
    EXPECT_TRUE(workloads::RunScenario(scenario, d, o).ok()) << scenario;
    d->Release();
    EXPECT_THAT(AllViolations(), IsEmpty()) << scenario;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Variants, OptionVariantTest,
    ::testing::Values(
        Variant{"NestedIcHandle", "nested_execute_handle=ic",
                [](runtime::RuntimeOptions* o) {
                  o->nested_execute_handle = runtime::NestedExecuteHandle::kIc;
                }},
        Variant{"DestroyAfterFailedRecycleCreate", "oom:RecycleCreateCommandList=2,3,7",
                [](runtime::RuntimeOptions* o) { o->destroy_after_failed_recycle_create = true; }},
        Variant{"KeepDcAfterFailedRecycle", "oom:RecycleCreateDeferredContext=2,9",
                [](runtime::RuntimeOptions* o) { o->destroy_dc_after_failed_recycle = false; }},
        Variant{"CloseAfterFailedCreate", "oom:CreateCommandList=1,5",
                [](runtime::RuntimeOptions* o) { o->abandon_after_failed_create = false; }},
        Variant{"NoAbandonForIdleDc", "",
                [](runtime::RuntimeOptions* o) { o->abandon_before_destroy_idle_dc = false; }},
        Variant{"CachedListsAfterDc", "",
                [](runtime::RuntimeOptions* o) { o->destroy_cached_lists_before_dc = false; }},
        Variant{"NoRecycling", "",
                [](runtime::RuntimeOptions* o) { o->recycle_command_lists = false; }},
        Variant{"DeviceRemoved", "removed=700", [](runtime::RuntimeOptions*) {}}),
    [](const ::testing::TestParamInfo<Variant>& info) { return info.param.name; });

// R39/R50: a bounded quarantine check (one block per Present or Flush, round-robin) still
// finds the planted writes to freed handle memory: every block is checked at the latest when
// it leaves the quarantine.
TEST(QuarantineTest, BoundedChecksStillFindWritesToFreedHandleMemory) {
#if defined(__SANITIZE_THREAD__)
  // The planted writes race with the runtime's check by design (the driver writes memory it
  // freed while the runtime reads it): ThreadSanitizer would rightly stop here.
  GTEST_SKIP() << "planted data race";
#endif
  for (const char* rule : {"R39", "R50"}) {
    runtime::RuntimeOptions options;
    options.quarantine_check_entries = 1;
    Device* d = NewDevice(workloads::DriverConfigFor(rule), options);
    workloads::ScenarioOptions o;
    o.threads = 3;
    o.frames = 12;
    EXPECT_TRUE(workloads::RunScenario("smallcl", d, o).ok()) << rule;
    d->Release();
    std::vector<std::string> v = AllViolations();
    ASSERT_FALSE(v.empty()) << rule << " not detected with a one-block check";
    for (const std::string& line : v) EXPECT_TRUE(absl::StartsWith(line, rule)) << line;
  }
}

// D3D11 refuses a mip chain longer than the largest dimension allows (or than 15 levels) and
// more than 2048 array slices before the driver sees them; the runtime model did not, and a
// hostile MipLevels made it allocate a D3D10DDI_MIPINFO per level (std::bad_alloc).
TEST(ApiValidationTest, ImpossibleMipChainsAndArraysAreRefusedBeforeTheDriver) {
  Device* d = NewDevice();
  const uint64_t calls = runtime::ProcessCallCount();
  runtime::ResourceDesc desc;
  desc.dimension = D3D10DDIRESOURCE_TEXTURE2D;
  desc.bind_flags = D3D10_DDI_BIND_SHADER_RESOURCE;
  desc.width = 4;
  desc.height = 2;
  Resource* r = nullptr;
  for (uint32_t mips : {4u, 16u, 0x80000000u}) {
    desc.mip_levels = mips;  // 4x2 has a chain of three levels
    EXPECT_EQ(d->CreateResource(desc, &r), static_cast<HRESULT>(E_INVALIDARG)) << mips;
    EXPECT_EQ(r, nullptr);
  }
  desc.mip_levels = 1;
  desc.array_size = 2049;
  EXPECT_EQ(d->CreateResource(desc, &r), static_cast<HRESULT>(E_INVALIDARG));
  EXPECT_EQ(runtime::ProcessCallCount(), calls) << "the driver was called";
  desc.mip_levels = 3;
  desc.array_size = 2048;
  ASSERT_EQ(d->CreateResource(desc, &r), S_OK);
  r->Release();
  d->Release();
  EXPECT_THAT(AllViolations(), IsEmpty());
}

// ---- application misuse the runtime refuses and reports ----

TEST(MisuseTest, ExecuteWithQueryBegunOnTargetIsRefusedR61) {
  Device* d = NewDevice();
  DeviceContext* ic = d->GetImmediateContext();
  runtime::Query* q = nullptr;
  ASSERT_EQ(d->CreateQuery(D3D10DDI_QUERY_OCCLUSION, &q), S_OK);
  DeviceContext* dc = nullptr;
  ASSERT_EQ(d->CreateDeferredContext(0, &dc), S_OK);
  dc->Begin(q);
  dc->End(q);
  CommandList* cl = nullptr;
  ASSERT_EQ(dc->FinishCommandList(FALSE, &cl), S_OK);
  ic->Begin(q);
  ic->ExecuteCommandList(cl, FALSE);
  ic->End(q);
  cl->Release();
  dc->Release();
  q->Release();
  d->Release();
  EXPECT_THAT(AllViolations(), ElementsAre(StartsWith("R61 ")));
}

TEST(MisuseTest, ExecuteWithResourceMappedOnTargetIsRefusedR62) {
  Device* d = NewDevice();
  DeviceContext* ic = d->GetImmediateContext();
  Resource* cb = NewBuffer(d, D3D10_DDI_BIND_CONSTANT_BUFFER, D3D10_DDI_USAGE_DYNAMIC);
  DeviceContext* dc = nullptr;
  ASSERT_EQ(d->CreateDeferredContext(0, &dc), S_OK);
  runtime::MappedSubresource m;
  ASSERT_EQ(dc->Map(cb, 0, D3D10_DDI_MAP_WRITE_DISCARD, 0, &m), S_OK);
  dc->Unmap(cb, 0);
  CommandList* cl = nullptr;
  ASSERT_EQ(dc->FinishCommandList(FALSE, &cl), S_OK);
  ASSERT_EQ(ic->Map(cb, 0, D3D10_DDI_MAP_WRITE_DISCARD, 0, &m), S_OK);
  ic->ExecuteCommandList(cl, FALSE);
  ic->Unmap(cb, 0);
  cl->Release();
  dc->Release();
  cb->Release();
  d->Release();
  EXPECT_THAT(AllViolations(), ElementsAre(StartsWith("R62 ")));
}

TEST(MisuseTest, DeferredMapRulesR64) {
  Device* d = NewDevice();
  Resource* plain = NewBuffer(d, D3D10_DDI_BIND_CONSTANT_BUFFER);
  Resource* dyn = NewBuffer(d, D3D10_DDI_BIND_CONSTANT_BUFFER, D3D10_DDI_USAGE_DYNAMIC);
  DeviceContext* dc = nullptr;
  ASSERT_EQ(d->CreateDeferredContext(0, &dc), S_OK);
  runtime::MappedSubresource m;
  EXPECT_EQ(dc->Map(plain, 0, D3D10_DDI_MAP_WRITE_DISCARD, 0, &m),
            static_cast<HRESULT>(E_INVALIDARG));
  EXPECT_EQ(dc->Map(dyn, 0, D3D10_DDI_MAP_WRITE_NOOVERWRITE, 0, &m),
            static_cast<HRESULT>(E_INVALIDARG));
  dc->Release();
  dyn->Release();
  plain->Release();
  d->Release();
  EXPECT_THAT(AllViolations(), ElementsAre(StartsWith("R64 "), StartsWith("R64 ")));
}

TEST(MisuseTest, ImmediateOnlyCallsOnDeferredContextR65) {
  Device* d = NewDevice();
  runtime::Query* q = nullptr;
  ASSERT_EQ(d->CreateQuery(D3D10DDI_QUERY_EVENT, &q), S_OK);
  DeviceContext* dc = nullptr;
  ASSERT_EQ(d->CreateDeferredContext(0, &dc), S_OK);
  dc->Flush();
  uint32_t data = 0;
  EXPECT_EQ(dc->GetData(q, &data, sizeof(data), 0), static_cast<HRESULT>(E_INVALIDARG));
  dc->Release();
  q->Release();
  d->Release();
  EXPECT_THAT(AllViolations(), ElementsAre(StartsWith("R65 "), StartsWith("R65 ")));
}

}  // namespace
}  // namespace cltrace::testing
