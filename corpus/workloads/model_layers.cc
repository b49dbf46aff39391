#include "corpus/workloads/model_layers.h"

#include <atomic>
#include <mutex>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "runtime/runtime.h"
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

template <typename Table, auto Member, typename Fn>
struct Counting;
template <typename Table, auto Member, typename R, typename... A>
struct Counting<Table, Member, R(APIENTRY*)(A...)> {
  static R APIENTRY Call(A... a) {
    g_dx6_calls.fetch_add(1, std::memory_order_relaxed);
    if constexpr (std::is_same_v<Table, DD_D3DBUFCALLBACKS>) {
      return (g_real_buffers.load()->*Member)(a...);
    } else {
      return (g_real_hal.load()->*Member)(a...);
    }
  }
};
#define CLTRACE_COUNT(T, M) &Counting<T, &T::M, decltype(T::M)>::Call
const DD_D3DBUFCALLBACKS kCountingBuffers = {
    CLTRACE_COUNT(DD_D3DBUFCALLBACKS, CanCreateD3DBuffer),
    CLTRACE_COUNT(DD_D3DBUFCALLBACKS, CreateD3DBuffer),
    CLTRACE_COUNT(DD_D3DBUFCALLBACKS, DestroyD3DBuffer),
    CLTRACE_COUNT(DD_D3DBUFCALLBACKS, LockD3DBuffer),
    CLTRACE_COUNT(DD_D3DBUFCALLBACKS, UnlockD3DBuffer),
};
const D3DHAL_CALLBACKS3 kCountingHal = {CLTRACE_COUNT(D3DHAL_CALLBACKS3, DrawPrimitives2)};
#undef CLTRACE_COUNT
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

}  // namespace cltrace::workloads
