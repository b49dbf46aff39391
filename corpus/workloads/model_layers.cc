#include "corpus/workloads/model_layers.h"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "runtime/runtime.h"
#include "wddm/counting_call.h"
#include "wddm/kernel_stack.h"

namespace cltrace::workloads {
namespace {

std::mutex& Mu() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
std::vector<std::string>& Lines() {
  static std::vector<std::string>* lines = new std::vector<std::string>;
  return *lines;
}

std::atomic<uint64_t> g_dx6_calls{0};
std::atomic<const DD_D3DBUFCALLBACKS*> g_real_buffers{nullptr};
std::atomic<const D3DHAL_CALLBACKS3*> g_real_hal{nullptr};

#define CLTRACE_COUNT_BUFFERS(M) \
  CLTRACE_COUNTING_CALL(g_dx6_calls, g_real_buffers, DD_D3DBUFCALLBACKS, M)
#define CLTRACE_COUNT_HAL(M) CLTRACE_COUNTING_CALL(g_dx6_calls, g_real_hal, D3DHAL_CALLBACKS3, M)
const DD_D3DBUFCALLBACKS kCountingBuffers = {
    CLTRACE_COUNT_BUFFERS(CanCreateD3DBuffer), CLTRACE_COUNT_BUFFERS(CreateD3DBuffer),
    CLTRACE_COUNT_BUFFERS(DestroyD3DBuffer),   CLTRACE_COUNT_BUFFERS(LockD3DBuffer),
    CLTRACE_COUNT_BUFFERS(UnlockD3DBuffer),
};
const D3DHAL_CALLBACKS3 kCountingHal = {CLTRACE_COUNT_HAL(DrawPrimitives2)};
#undef CLTRACE_COUNT_BUFFERS
#undef CLTRACE_COUNT_HAL
static_assert(sizeof(DD_D3DBUFCALLBACKS) == 5 * sizeof(void*), "a DX6 buffer callback is missing");
static_assert(sizeof(D3DHAL_CALLBACKS3) == sizeof(void*), "a D3DHAL_CALLBACKS3 entry is missing");

}  // namespace

void ModelViolationSink::Report(const gpu::Violation& v) {
  std::lock_guard<std::mutex> lock(Mu());
  Lines().push_back(absl::StrCat(v.id(), " fn=", layer_, " ", v.message));
}

std::vector<std::string> ModelViolations() {
  std::lock_guard<std::mutex> lock(Mu());
  return Lines();
}

uint64_t Dx6Calls() { return g_dx6_calls.load(); }

const DD_D3DBUFCALLBACKS* CountingBufferCallbacks(const DD_D3DBUFCALLBACKS* real) {
  g_real_buffers.store(real);
  return &kCountingBuffers;
}

const D3DHAL_CALLBACKS3* CountingHalCallbacks3(const D3DHAL_CALLBACKS3* real) {
  g_real_hal.store(real);
  return &kCountingHal;
}

uint64_t AllLayerCalls() {
  return runtime::ProcessCallCount() + gpu::ProcessKernelLayerCalls() + Dx6Calls();
}

std::vector<std::string> AllViolations() {
  std::vector<std::string> lines = runtime::ProcessViolations();
  std::vector<std::string> driver = runtime::ProcessDriverViolations();
  lines.insert(lines.end(), driver.begin(), driver.end());
  std::vector<std::string> model = ModelViolations();
  lines.insert(lines.end(), model.begin(), model.end());
  return lines;
}

int PrintViolationsAndCalls(bool run_ok, std::FILE* out) {
  const std::vector<std::string> lines = AllViolations();
  for (const std::string& line : lines) std::fprintf(out, "%s\n", line.c_str());
  std::fprintf(out, "calls: %llu\n", static_cast<unsigned long long>(AllLayerCalls()));
  if (!run_ok) return 2;
  return lines.empty() ? 0 : 1;
}

}  // namespace cltrace::workloads
