// GpuTracker: the kernel side of a trace -- kernel-thunk callbacks (pfnRenderCb,
// pfnPresentCb, pfnAllocateCb/pfnDeallocateCb, HCONTEXT exclusivity), the GPU model's
// kernel-mode driver calls (DxgkDdiRender/Patch/SubmitCommand, interrupts, fences), DX6
// buffers -- and the checks judged only once a call has returned (deadlines). It consumes
// kernel callbacks, KMD/dxgkrnl and DX6 calls, and from the IC: Flush, DestroyDevice and
// destroyed resources (AddDeadline). It reports R15-R18, R67-R70, R74-R80 and the IC-submit
// part of R71 (through ContextTracker::OnIcSubmit). Peers ask whether an object's
// allocations are freed (Deallocated).
//
// Thread-safety: none (one per Checker, which is single-threaded).
//
// Example:
//   if (e.seq > t.gpu.next_deadline()) t.gpu.ResolveDeadlines(e.seq);
//   t.gpu.OnKernelCallback(e, m);
#ifndef CLTRACE_CHECK_INTERNAL_GPU_TRACKER_H_
#define CLTRACE_CHECK_INTERNAL_GPU_TRACKER_H_

#include <cstdint>
#include <deque>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "check/internal/context_tracker.h"
#include "check/internal/tracker.h"

namespace cltrace::check::internal {

class HandleSpill;

struct Allocation {
  int32_t obj = -1;  // resource it was allocated for (-1 unknown)
  uint64_t alloc_seq = 0;
  uint64_t dealloc_seq = 0;
  uint64_t dealloc_parent = 0;  // enclosing call of the pfnDeallocateCb
};

// A check that can only be judged once a call has returned (its exit position passed).
struct Deadline {
  enum Kind : uint8_t {
    kFlushDeallocates,
    kFlushDrainsIdle,
    kPrimaryDeallocated,
    kDeviceDrained,
    kIsr
  } kind;
  uint64_t at = 0;  // exit position of the call
  uint64_t seq = 0;
  uint32_t tid = 0;
  CallId call = CallId::kInvalid;
  int32_t index = -1;  // object, context or ISR record
  std::vector<int32_t> objs;
  uint64_t render = 0;  // kFlushDrainsIdle: the retired pfnRenderCb and its fence
  uint64_t fence = 0;
};

// A deadline of `kind` about record `index`, judged once call `e` has returned.
inline Deadline DeadlineOf(Deadline::Kind kind, const Event& e, int32_t index) {
  Deadline d;
  d.kind = kind;
  d.at = EndOf(e);
  d.seq = e.seq;
  d.tid = e.tid;
  d.call = e.call;
  d.index = index;
  return d;
}

// R68: a submission (pfnRenderCb) on its way through the kernel to a fence.
struct Submission {
  int32_t ctx = -1;
  uint64_t render = 0;  // seq of the pfnRenderCb
};

// One DxgkDdiInterruptRoutine in flight (R77).
struct Isr {
  uint64_t seq = 0;
  bool notified = false;
  bool dpc_after_notify = false;
  bool crtc_seen = false;
};

// Sizes the UMD may fill for one HCONTEXT (R74).
struct ContextBuffers {
  uint64_t command = 0;
  uint64_t allocations = 0;
  uint64_t patches = 0;
};

// What the kernel side knows of one immediate context (device).
struct DeviceWork {
  uint64_t submitted_through = 0;         // enclosing call of the last pfnRenderCb (R67)
  std::vector<int32_t> destroyed_shared;  // shared resources destroyed since the last Flush
  // R68: other destroyed resources with allocations not yet deallocated (pruned at Flush),
  // and the latest pfnRenderCb (seq) whose submission the GPU is known to have retired
  // (kernel-layer events of the trace: DxgkDdiRender, DxgkDdiSubmitCommand, fence retired).
  std::vector<int32_t> destroyed_queued;
  uint64_t retired_render = 0;
  uint64_t retired_fence = 0;  // the fence that retired it
};

// A DX6 D3D buffer surface (R79).
struct Surface {
  uint64_t caps = 0;
  uint64_t caps2 = 0;
  bool video = false;
};

class GpuTracker : public TrackerBase {
 public:
  GpuTracker(CheckEnv& env, Trackers& peers) : TrackerBase(env, peers) {}

  void OnKernelCallback(const Event& e, const CallMeta& m);
  void OnKmdCall(const Event& e, const CallMeta& m);
  void OnDx6Call(const Event& e, const CallMeta& m);
  // IC calls with consequences judged when they return (R68, R70).
  void OnFlush(const Event& e, int32_t ic);
  void OnDeviceDestroyed(const Event& e, int32_t ic);
  // IC resource `o` was destroyed: its allocations are due (R68 at a Flush, R69 at once).
  void OnResourceDestroyed(const Event& e, int32_t o);

  void AddDeadline(Deadline d) {
    next_deadline_ = std::min(next_deadline_, d.at);
    deadlines_.push_back(std::move(d));
  }
  // The earliest exit position a pending deadline waits for.
  uint64_t next_deadline() const { return next_deadline_; }
  // Judges the deadlines whose call returned before position `now`.
  void ResolveDeadlines(uint64_t now);
  // True if every allocation of object `o` was deallocated at or before position `by`.
  bool Deallocated(int32_t o, uint64_t by) const;
  // The allocations made for object `o` (indexes into allocations()).
  absl::Span<const int32_t> AllocationsOf(int32_t o) const {
    auto it = obj_allocs_.find(o);
    return it == obj_allocs_.end() ? absl::Span<const int32_t>() : absl::MakeConstSpan(it->second);
  }
  const std::deque<Allocation>& allocations() const { return allocs_; }

  // Compaction (Trackers::Compact). MarkRefs: the objects queued for deadlines and R68, and
  // every object with an allocation not yet deallocated (R70 counts those at DestroyDevice).
  // MarkAllocations, once the objects are decided: the allocations of kept objects.
  // First: forgets the destroyed resources queued for a Flush that are already deallocated.
  void ForgetDeallocated();
  void MarkRefs(RecordMarks& marks) const;
  void MarkAllocations(RecordMarks& marks) const;
  void Compact(const RecordRemap& r);

 private:
  friend class HandleSpill;  // moves finished records out of memory and back
  struct Parent;             // the enclosing call of a callback and its context
  void EnterHContext(const Event& e, uint64_t hcontext);
  void OnCreateContextCb(const Event& e);
  void OnRenderCb(const Event& e, const CallMeta& m, const Parent& p);
  void CheckRenderBuffers(const Event& e, uint64_t hc);
  void OnAllocateCb(const Event& e, const CallMeta& m, const Parent& p);
  void OnDeallocateCb(const Event& e, const CallMeta& m, const Parent& p);
  // pfnPresentCb / pfnSetDisplayModeCb only inside the DXGI call `expected`, on its thread.
  void CheckDxgiCallback(const Event& e, const Parent& p, Op expected, uint64_t hc);
  void CheckSplits(const Event& e, const CallMeta& m, absl::string_view array);
  void OnKmdRender(const Event& e);
  void OnKmdSubmit(const Event& e);
  void OnInterrupt(const Event& e, const CallMeta& m);
  void RetireFence(uint64_t fence);
  void ResolveDeadline(const Deadline& d);
  void CheckDx6Swaps(const Event& e);
  DeviceWork& Device(int32_t ic) {
    if (static_cast<size_t>(ic) >= devices_.size()) devices_.resize(ic + 1);
    return devices_[ic];
  }
  int16_t Field(const Event& e, absl::string_view name) const {
    return static_cast<int16_t>(format::FieldIndex(*format::GetCall(e.call), name));
  }

  std::deque<Allocation> allocs_;  // fixed-size blocks, as ObjectTracker's objects
  absl::flat_hash_map<int32_t, absl::InlinedVector<int32_t, 1>> obj_allocs_;  // object -> allocs
  std::vector<DeviceWork> devices_;                                           // by IC
  std::vector<Deadline> deadlines_;
  uint64_t next_deadline_ = kNeverReturned;
  std::vector<Isr> isrs_;
  absl::flat_hash_map<uint64_t, DomainSlot> hcontext_domain_;  // R15
  absl::flat_hash_map<uint64_t, ContextBuffers> buffers_;      // R74, by HCONTEXT
  bool context_created_ = false;                               // R74
  // R75/R76: DMA buffer (physical address, start, end) -> fence id given to DxgkDdiPatch.
  absl::flat_hash_map<std::tuple<uint64_t, uint64_t, uint64_t>, uint64_t> patched_;
  absl::flat_hash_map<uint64_t, uint64_t> engine_fence_;  // (node << 32 | engine) -> fence
  std::vector<Surface> surfaces_;
  // R68: DMA buffer physical address -> the pfnRenderCb whose DxgkDdiRender filled it; fence
  // id -> that submission once DxgkDdiSubmitCommand gave it a fence.
  absl::flat_hash_map<uint64_t, Submission> dma_owner_;
  absl::flat_hash_map<uint64_t, Submission> fence_owner_;
};

}  // namespace cltrace::check::internal

#endif  // CLTRACE_CHECK_INTERNAL_GPU_TRACKER_H_
