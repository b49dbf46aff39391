// gpu::Dxgkrnl: the C tables a UMD and the KMD call (D3DDDI_DEVICECALLBACKS, DXGKRNL_INTERFACE)
// and the public API. Each entry validates its handle, takes the model lock and calls into
// Dxgkrnl::Impl (wddm/internal/dxgkrnl_impl.h; the work itself is in wddm/dxgkrnl_thunks.cc and
// wddm/dxgkrnl_vidsch.cc).
#include "wddm/dxgkrnl.h"

#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "wddm/internal/dxgkrnl_impl.h"

namespace cltrace::gpu {

// ---- C entry points ------------------------------------------------------------------------
namespace {

using Impl = Dxgkrnl::Impl;

// Every kernel-thunk callback: validate the device handle, take the model lock, charge the
// call's virtual CPU time (running what became due), then do the work.
template <typename Fn>
HRESULT Enter(HANDLE h, const void* p, Fn fn) {
  Impl::KDevice* d = Impl::Dev(h);
  if (d == nullptr || p == nullptr) return Hr(E_INVALIDARG);
  Impl* k = d->k;
  std::lock_guard<std::mutex> lock(k->mu);
  k->Tick();
  return fn(k, d);
}

// The kernel-thunk callback that is Impl method `Method` on the device (through Enter).
template <auto Method>
struct Forward;
template <typename Arg, HRESULT (Impl::*Method)(Impl::KDevice*, Arg*)>
struct Forward<Method> {
  static HRESULT APIENTRY Call(HANDLE h, Arg* p) {
    return Enter(h, p, [&](Impl* k, Impl::KDevice* d) { return (k->*Method)(d, p); });
  }
};

// Wait and Signal queue a sync packet of their kind on the context.
template <typename Arg, Impl::Packet::Kind kKind>
HRESULT APIENTRY SyncPacketCb(HANDLE h, const Arg* p) {
  return Enter(h, p, [&](Impl* k, Impl::KDevice* d) {
    return k->QueueSyncPacket(d, p->hContext, p->ObjectCount, p->ObjectHandleArray, kKind);
  });
}

HRESULT APIENTRY SetAsyncCallbacksCb(HANDLE h, BOOL enable) {
  return Enter(h, &enable,
               [&](Impl* k, Impl::KDevice* d) { return k->SetAsyncCallbacks(d, enable); });
}

const D3DDDI_DEVICECALLBACKS kDeviceCallbacks = {
    &Forward<&Impl::Allocate>::Call,
    &Forward<&Impl::Deallocate>::Call,
    &Forward<&Impl::SetPriority>::Call,
    &Forward<&Impl::QueryResidency>::Call,
    &Forward<&Impl::SetDisplayMode>::Call,
    &Forward<&Impl::Present>::Call,
    &Forward<&Impl::Render>::Call,
    &Forward<&Impl::Lock>::Call,
    &Forward<&Impl::Unlock>::Call,
    &Forward<&Impl::Escape>::Call,
    &Forward<&Impl::CreateOverlay>::Call,
    &Forward<&Impl::UpdateOverlay>::Call,
    &Forward<&Impl::FlipOverlay>::Call,
    &Forward<&Impl::DestroyOverlay>::Call,
    &Forward<&Impl::CreateContext>::Call,
    &Forward<&Impl::DestroyContext>::Call,
    &Forward<&Impl::CreateSync>::Call,
    &Forward<&Impl::DestroySync>::Call,
    &SyncPacketCb<D3DDDICB_WAITFORSYNCHRONIZATIONOBJECT, Impl::Packet::kWait>,
    &SyncPacketCb<D3DDDICB_SIGNALSYNCHRONIZATIONOBJECT, Impl::Packet::kSignal>,
    &SetAsyncCallbacksCb,
    &Forward<&Impl::SetDisplayPrivateDriverFormat>::Call,
};

// DXGKRNL_INTERFACE: called by the KMD from inside entry points Dxgkrnl made under its lock.
Impl* KernelOf(DXGKRNL_HADAPTER h) { return static_cast<Impl*>(h.handle); }

void APIENTRY DxgkCbNotifyInterrupt(DXGKRNL_HADAPTER h, const DXGKARGCB_NOTIFY_INTERRUPT_DATA* p) {
  if (Impl* k = KernelOf(h); k != nullptr && p != nullptr) k->NotifyInterrupt(p);
}
BOOL APIENTRY DxgkCbQueueDpc(DXGKRNL_HADAPTER h) {
  Impl* k = KernelOf(h);
  return k != nullptr ? k->QueueDpc() : 0;
}
void APIENTRY DxgkCbNotifyDpc(DXGKRNL_HADAPTER h) {
  if (Impl* k = KernelOf(h)) k->NotifyDpc();
}

const DXGKRNL_INTERFACE kDxgkrnlInterface = {DxgkCbNotifyInterrupt, DxgkCbQueueDpc,
                                             DxgkCbNotifyDpc};

// CLTRACE_GPU_OBSERVER: the observation point itself does nothing; what matters is that the
// call crosses a C table a recorder (or a replay) can wrap.
void APIENTRY GpuFenceRetired(DXGKRNL_HADAPTER, UINT, UINT64, UINT64, BOOL) {}

const CLTRACE_GPU_OBSERVER kGpuObserver = {GpuFenceRetired};

}  // namespace

// ---- public API --------------------------------------------------------------------------
Dxgkrnl::Dxgkrnl(DxgkrnlOptions options, ViolationSink* violations)
    : impl_(std::make_unique<Impl>(options, violations)) {}

Dxgkrnl::~Dxgkrnl() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl* k = impl_.get();
  // Like process teardown: whatever the UMD left is destroyed without waiting for the GPU
  // (the GPU and its memory go away with us).
  for (Impl::Node& n : k->nodes) {
    for (Impl::InFlight& f : n.in_flight) {
      if (f.packet != nullptr && f.last_portion) delete f.packet;
    }
    n.in_flight.clear();
  }
  for (auto& [id, c] : k->contexts) {
    // Queued packets (including one whose earlier split portions were in flight: only the
    // entry of a last portion owns its packet).
    for (Impl::Packet* pk : c->queue) delete pk;
    c->queue.clear();
  }
  if (k->kmd == nullptr) return;
  for (auto& [id, c] : k->contexts) k->kmd->DxgkDdiDestroyContext(c->kmd);
  k->contexts.clear();
  std::vector<uint32_t> left;
  for (auto& [id, a] : k->allocations) left.push_back(id);
  k->Release(left);
  for (auto& [id, d] : k->devices) {
    k->kmd->DxgkDdiDestroyDevice(d->kmd);
    d->magic = 0;
  }
  k->devices.clear();
}

GpuEngine& Dxgkrnl::hardware() { return impl_->gpu; }
const DXGKRNL_INTERFACE* Dxgkrnl::dxgkrnl_interface() const { return &kDxgkrnlInterface; }
DXGKRNL_HADAPTER Dxgkrnl::dxgkrnl_handle() { return DXGKRNL_HADAPTER{impl_.get()}; }
const D3DDDI_DEVICECALLBACKS* Dxgkrnl::device_callbacks() const { return &kDeviceCallbacks; }

void Dxgkrnl::StartAdapter(const DRIVER_INITIALIZATION_DATA* kmd, DXGK_HADAPTER adapter) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->kmd = kmd;
  impl_->kmd_adapter = adapter;
}

const CLTRACE_GPU_OBSERVER* Dxgkrnl::gpu_observer() const { return &kGpuObserver; }

void Dxgkrnl::SetGpuObserver(const CLTRACE_GPU_OBSERVER* observer) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->observer = observer;
}

absl::StatusOr<HANDLE> Dxgkrnl::CreateDevice() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl* k = impl_.get();
  if (k->kmd == nullptr) return absl::FailedPreconditionError("CreateDevice before StartAdapter");
  k->Tick();
  auto d = std::make_unique<Impl::KDevice>();
  d->k = k;
  d->id = k->next_device++;
  DXGKARG_CREATEDEVICE args{};
  args.Flags = 0;
  NTSTATUS s = k->kmd->DxgkDdiCreateDevice(k->kmd_adapter, &args);
  if (s != Nt(STATUS_SUCCESS)) {
    return absl::InternalError(
        absl::StrFormat("DxgkDdiCreateDevice failed: 0x%08x", static_cast<uint32_t>(s)));
  }
  if (args.pInfo == nullptr || args.pInfo->DmaBufferSize < 64 ||
      args.pInfo->DmaBufferSize % 4 != 0 || args.pInfo->AllocationListSize == 0 ||
      args.pInfo->PatchLocationListSize == 0) {
    return absl::InternalError("DxgkDdiCreateDevice returned unusable DXGK_DEVICEINFO");
  }
  d->kmd = args.hDevice;
  d->info = *args.pInfo;
  HANDLE h{d.get()};
  k->devices.emplace(d->id, std::move(d));
  return h;
}

absl::Status Dxgkrnl::DestroyDevice(HANDLE device) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl* k = impl_.get();
  Impl::KDevice* d = Impl::Dev(device);
  if (d == nullptr || d->k != k) return absl::InvalidArgumentError("DestroyDevice: unknown device");
  k->Tick();
  std::vector<Impl::KContext*> mine;
  for (auto& [id, c] : k->contexts) {
    if (c->device == d) mine.push_back(c.get());
  }
  for (Impl::KContext* c : mine) k->DrainContext(c);
  for (Impl::KContext* c : mine) k->DestroyContextNow(c);
  std::vector<uint32_t> left;
  for (auto& [id, a] : k->allocations) {
    if (a->device == d) left.push_back(id);
  }
  k->Release(left);
  k->kmd->DxgkDdiDestroyDevice(d->kmd);
  d->magic = 0;
  k->devices.erase(d->id);
  return absl::OkStatus();
}

std::optional<DXGK_DEVICEINFO> Dxgkrnl::device_info(HANDLE device) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl::KDevice* d = Impl::Dev(device);
  if (d == nullptr || d->k != impl_.get()) return std::nullopt;
  return d->info;
}

VirtualTime Dxgkrnl::now() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->sched.now();
}

VirtualTime Dxgkrnl::NowForObserver() const { return impl_->sched.now(); }

void Dxgkrnl::RunFor(VirtualTime ns) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->sched.RunUntil(impl_->sched.now() + ns);
}

absl::Status Dxgkrnl::WaitIdle() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl* k = impl_.get();
  k->sched.RunUntilIdle();
  for (auto& [id, c] : k->contexts) {
    if (!c->queue.empty() || c->outstanding != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "context ", id, " has ", c->queue.size(),
          " queued items that can never run (a wait on an unsignalled synchronization object?)"));
    }
  }
  return absl::OkStatus();
}

std::optional<uint64_t> Dxgkrnl::AllocationDigest(D3DKMT_HALLOCATION allocation) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->content.Digest(allocation.value);
}

std::vector<std::pair<uint32_t, uint64_t>> Dxgkrnl::AllocationDigests() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (const auto& [id, a] : impl_->allocations) {
    out.emplace_back(id, impl_->content.Digest(id).value_or(0));
  }
  return out;
}

uint64_t Dxgkrnl::CombinedDigest() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->content.CombinedDigest();
}

std::optional<uint32_t> Dxgkrnl::AllocationSegment(D3DKMT_HALLOCATION allocation) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->vidmm.Contains(allocation.value)) return std::nullopt;
  return impl_->vidmm.SegmentOf(allocation.value);
}

Dxgkrnl::Stats Dxgkrnl::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Stats s = impl_->stats;
  s.allocations = impl_->allocations.size();
  return s;
}

uint64_t Dxgkrnl::completed_fence(uint32_t node) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return node < impl_->nodes.size() ? impl_->nodes[node].notified_completed : 0;
}

}  // namespace cltrace::gpu
