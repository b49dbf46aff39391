// Counting wrappers for the members of C function tables (the kernel stack's KMD and Dxgkrnl
// tables, the workloads' DX6 callbacks): a wrapper counts every call, then forwards it to the
// same member of the real table.
//
// Thread-safety: the wrappers may be called from any thread; the real table is published
// through an atomic pointer before the first call.
//
// Example:
//   std::atomic<uint64_t> g_calls{0};
//   std::atomic<const DXGKRNL_INTERFACE*> g_real{nullptr};
//   const DXGKRNL_INTERFACE kCounting = {
//       CLTRACE_COUNTING_CALL(g_calls, g_real, DXGKRNL_INTERFACE, DxgkCbNotifyInterrupt), ...};
#ifndef CLTRACE_WDDM_COUNTING_CALL_H_
#define CLTRACE_WDDM_COUNTING_CALL_H_

#include <atomic>
#include <cstdint>

#include "ddi/ddi_abi.h"

namespace cltrace::gpu {

// Call has the type of table member kMember (a function pointer of type Fn): it adds 1 to
// *kCounter and calls the same member of the table *kReal points to.
template <std::atomic<uint64_t>* kCounter, auto* kReal, auto kMember, typename Fn>
struct CountingCall;
template <std::atomic<uint64_t>* kCounter, auto* kReal, auto kMember, typename R, typename... A>
struct CountingCall<kCounter, kReal, kMember, R(APIENTRY*)(A...)> {
  static R APIENTRY Call(A... a) {
    kCounter->fetch_add(1, std::memory_order_relaxed);
    return (kReal->load(std::memory_order_acquire)->*kMember)(a...);
  }
};

}  // namespace cltrace::gpu

// The counting wrapper of member M of table type T, counting in `counter` and forwarding to
// the table `real` (a std::atomic<const T*>) points to.
#define CLTRACE_COUNTING_CALL(counter, real, T, M) \
  &::cltrace::gpu::CountingCall<&counter, &real, &T::M, decltype(T::M)>::Call

#endif  // CLTRACE_WDDM_COUNTING_CALL_H_
