// The kernel-thunk callbacks (D3DDDI_DEVICECALLBACKS) and the driver-side rules checked
// around them: R15 (one thread per HCONTEXT), R16 (RenderCb only from the IC domain), R17
// (PresentCb only inside PresentDXGI), R67 (no deallocation before the referencing submit),
// R71 (amortized-processing starvation), R74 (CreateContextCb first), and the draw-state check
// (R47/R60) through the driver's draw-state probe (wddm/draw_state.h). The kernel's work itself is
// done by the device's gpu::KernelStack: every thunk forwards through the stack's C table with the
// kernel's device handle (runtime/kernel.h).
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "runtime/internal/callbacks.h"
#include "runtime/internal/common.h"
#include "wddm/command_stream.h"
#include "wddm/draw_state.h"

namespace cltrace::runtime::internal {
namespace {

DeviceState* DevOf(HANDLE h) { return static_cast<DeviceState*>(h); }

// Remembers the buffers the kernel handed out for `hcontext` (the next RenderCb submits them).
void NoteBuffers(DeviceState* dev, HANDLE hcontext, const void* command, uint32_t command_size,
                 const void* allocations, uint32_t allocation_list_size) {
  std::lock_guard<std::mutex> lock(dev->buffers_mu);
  dev->buffers[hcontext] = DeviceState::SubmitBuffers{
      static_cast<const uint8_t*>(command), command_size,
      static_cast<const gpu::UserAllocationListEntry*>(allocations), allocation_list_size};
}

std::optional<DeviceState::SubmitBuffers> BuffersOf(DeviceState* dev, HANDLE hcontext) {
  std::lock_guard<std::mutex> lock(dev->buffers_mu);
  auto it = dev->buffers.find(hcontext);
  if (it == dev->buffers.end()) return std::nullopt;
  return it->second;
}

class KernelEntry {
 public:
  template <typename... A>
  KernelEntry(HANDLE h, ddi::CallId id, const A&... args)
      : dev_(DevOf(h)),
        scope_(&dev_->sink, dev_, nullptr, Table::kCallback, false, ddi::NameOf(id), id) {
    const char* name = ddi::NameOf(id);
    dev_->sink.calls->fetch_add(1, std::memory_order_relaxed);
    if (dev_->sink.observer != nullptr) {
      EmitLine(&dev_->sink, 0,
               absl::StrCat("cb ", name, "(", FormatArgs(dev_->sink.names, args...), ")"));
    }
  }
  DeviceState* dev() const { return dev_; }
  const char* name() { return scope_.frame().name; }

 private:
  DeviceState* dev_;
  FrameScope scope_;
};

// R15: HCONTEXT callbacks of one context never overlap.
class HcontextUse {
 public:
  HcontextUse(DeviceState* dev, const char* fn) : dev_(dev) {
    if (dev->hcontext_busy.fetch_add(1) != 0) {
      Report(dev, rules::Rule::kR15, fn,
             "two HCONTEXT callbacks for one context in flight at once");
    }
  }
  ~HcontextUse() { dev_->hcontext_busy.fetch_sub(1); }

 private:
  DeviceState* dev_;
};

bool InsideIcDomain() {
  Frame* f = CurrentDdiFrame();
  return f != nullptr && f->ic_domain;
}

const char* InnermostName() {
  Frame* f = CurrentDdiFrame();
  return f == nullptr ? "no DDI call" : f->name;
}

HRESULT APIENTRY AllocateCb(HANDLE h, D3DDDICB_ALLOCATE* a) {
  KernelEntry e(h, ddi::CallId::kAllocateCb, a);
  DeviceState* dev = e.dev();
  HRESULT hr = dev->kcb->pfnAllocateCb(dev->kdev, a);
  if (hr == S_OK && a != nullptr) {
    std::string owner = dev->sink.names.Get(a->hResource);
    std::lock_guard<std::mutex> lock(dev->alloc_mu);
    for (UINT i = 0; i < a->NumAllocations; ++i) {
      uint32_t alloc = a->pAllocationInfo[i].hAllocation.value;
      AllocationInfo& info = dev->allocations[alloc];
      if (info.destroyed && !info.deallocated) --dev->destroyed_not_deallocated;  // reused
      info = AllocationInfo{owner, false, 0, false};
      if (a->hResource != nullptr) {
        dev->resource_allocations[a->hResource].push_back(alloc);
      }
    }
  }
  return hr;
}

HRESULT APIENTRY DeallocateCb(HANDLE h, const D3DDDICB_DEALLOCATE* a) {
  KernelEntry e(h, ddi::CallId::kDeallocateCb, a);
  DeviceState* dev = e.dev();
  if (a != nullptr) {
    std::lock_guard<std::mutex> lock(dev->alloc_mu);
    for (UINT i = 0; i < a->NumAllocations; ++i) {
      auto it = dev->allocations.find(a->HandleList[i].value);
      if (it == dev->allocations.end()) continue;
      if (it->second.destroyed && !it->second.deallocated) --dev->destroyed_not_deallocated;
      it->second.deallocated = true;
    }
  }
  return dev->kcb->pfnDeallocateCb(dev->kdev, a);
}

HRESULT APIENTRY CreateContextCb(HANDLE h, D3DDDICB_CREATECONTEXT* a) {
  KernelEntry e(h, ddi::CallId::kCreateContextCb, a);
  DeviceState* dev = e.dev();
  HRESULT hr = dev->kcb->pfnCreateContextCb(dev->kdev, a);
  if (hr == S_OK) {
    dev->context_created = true;
    NoteBuffers(dev, a->hContext, a->pCommandBuffer, a->CommandBufferSize, a->pAllocationList,
                a->AllocationListSize);
  }
  return hr;
}

HRESULT APIENTRY DestroyContextCb(HANDLE h, const D3DDDICB_DESTROYCONTEXT* a) {
  KernelEntry e(h, ddi::CallId::kDestroyContextCb, a);
  HcontextUse use(e.dev(), e.name());
  HRESULT hr = e.dev()->kcb->pfnDestroyContextCb(e.dev()->kdev, a);
  if (hr == S_OK && a != nullptr) {
    std::lock_guard<std::mutex> lock(e.dev()->buffers_mu);
    e.dev()->buffers.erase(a->hContext);
  }
  return hr;
}

HRESULT APIENTRY RenderCb(HANDLE h, D3DDDICB_RENDER* a) {
  KernelEntry e(h, ddi::CallId::kRenderCb, a);
  DeviceState* dev = e.dev();
  if (!dev->context_created) {
    Report(dev, rules::Rule::kR74, e.name(), "pfnRenderCb before pfnCreateContextCb");
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  if (!InsideIcDomain()) {
    // Refused without touching the context's buffers: they belong to the IC domain, which
    // may be running on another thread right now.
    Report(dev, rules::Rule::kR16, e.name(),
           absl::StrCat("pfnRenderCb from inside ", InnermostName(),
                        ", not an immediate-context DDI (refused)"));
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  HcontextUse use(dev, e.name());
  HANDLE hcontext = a->hContext;
  // Out-of-range offsets/counts are the kernel's R74 check; only what lies inside the buffers
  // handed out is read here.
  if (std::optional<DeviceState::SubmitBuffers> b = BuffersOf(dev, hcontext)) {
    if (b->allocations != nullptr) {
      std::lock_guard<std::mutex> lock(dev->alloc_mu);
      for (UINT i = 0; i < a->NumAllocations && i < b->allocation_list_size; ++i) {
        uint32_t handle = b->allocations[i].hAllocation.value;
        auto it = dev->allocations.find(handle);
        if (it != dev->allocations.end() && it->second.deallocated) {
          Report(dev, rules::Rule::kR67, e.name(),
                 absl::StrCat("submitted commands reference allocation ", handle, " of ",
                              it->second.owner, " which was already deallocated"));
        }
      }
    }
    if (b->command != nullptr && a->CommandOffset <= b->command_size &&
        a->CommandLength <= b->command_size - a->CommandOffset) {
      CheckSubmittedCommands(dev, b->command + a->CommandOffset, a->CommandLength);
    }
  }
  if (++dev->submits_since_amortized > dev->options.amortized_starvation_submits &&
      !dev->r71_reported) {
    dev->r71_reported = true;
    Report(dev, rules::Rule::kR71, e.name(),
           absl::StrCat(dev->submits_since_amortized - 1,
                        " submits without pfnPerformAmortizedProcessingCb"));
  }
  HRESULT hr = dev->kcb->pfnRenderCb(dev->kdev, a);
  // The kernel hands out the next buffers also when the submission failed (R74).
  NoteBuffers(dev, hcontext, a->pNewCommandBuffer, a->NewCommandBufferSize, a->pNewAllocationList,
              a->NewAllocationListSize);
  return hr;
}

HRESULT APIENTRY PresentCb(HANDLE h, const D3DDDICB_PRESENT* a) {
  KernelEntry e(h, ddi::CallId::kPresentCb, a);
  DeviceState* dev = e.dev();
  HcontextUse use(dev, e.name());
  Frame* f = CurrentDdiFrame();
  if (f == nullptr || f->table != Table::kDxgi) {
    Report(dev, rules::Rule::kR17, e.name(),
           absl::StrCat("pfnPresentCb from inside ", InnermostName(), ", not PresentDXGI"));
  }
  return dev->kcb->pfnPresentCb(dev->kdev, a);
}

HRESULT APIENTRY LockCb(HANDLE h, D3DDDICB_LOCK* a) {
  KernelEntry e(h, ddi::CallId::kLockCb, a);
  return e.dev()->kcb->pfnLockCb(e.dev()->kdev, a);
}

HRESULT APIENTRY UnlockCb(HANDLE h, const D3DDDICB_UNLOCK* a) {
  KernelEntry e(h, ddi::CallId::kUnlockCb, a);
  return e.dev()->kcb->pfnUnlockCb(e.dev()->kdev, a);
}

HRESULT APIENTRY SetDisplayModeCb(HANDLE h, D3DDDICB_SETDISPLAYMODE* a) {
  KernelEntry e(h, ddi::CallId::kSetDisplayModeCb, a);
  Frame* f = CurrentDdiFrame();
  if (f == nullptr || f->id != ddi::CallId::kSetDisplayModeDXGI) {
    Report(e.dev(), rules::Rule::kR17, e.name(),
           absl::StrCat("pfnSetDisplayModeCb from inside ", InnermostName(),
                        ", not SetDisplayModeDXGI"));
  }
  return e.dev()->kcb->pfnSetDisplayModeCb(e.dev()->kdev, a);
}

// The overlay callbacks: the kernel model's display has no overlay plane (CreateOverlayCb
// answers D3DDDIERR_NOTAVAILABLE, the others E_INVALIDARG, as for a device without overlays).
HRESULT APIENTRY CreateOverlayCb(HANDLE h, D3DDDICB_CREATEOVERLAY* a) {
  KernelEntry e(h, ddi::CallId::kCreateOverlayCb, a);
  return e.dev()->kcb->pfnCreateOverlayCb(e.dev()->kdev, a);
}
HRESULT APIENTRY UpdateOverlayCb(HANDLE h, const D3DDDICB_UPDATEOVERLAY* a) {
  KernelEntry e(h, ddi::CallId::kUpdateOverlayCb, a);
  return e.dev()->kcb->pfnUpdateOverlayCb(e.dev()->kdev, a);
}
HRESULT APIENTRY FlipOverlayCb(HANDLE h, const D3DDDICB_FLIPOVERLAY* a) {
  KernelEntry e(h, ddi::CallId::kFlipOverlayCb, a);
  return e.dev()->kcb->pfnFlipOverlayCb(e.dev()->kdev, a);
}
HRESULT APIENTRY DestroyOverlayCb(HANDLE h, const D3DDDICB_DESTROYOVERLAY* a) {
  KernelEntry e(h, ddi::CallId::kDestroyOverlayCb, a);
  return e.dev()->kcb->pfnDestroyOverlayCb(e.dev()->kdev, a);
}
HRESULT APIENTRY SetAsyncCallbacksCb(HANDLE h, BOOL enable) {
  KernelEntry e(h, ddi::CallId::kSetAsyncCallbacksCb, enable);
  return e.dev()->kcb->pfnSetAsyncCallbacksCb(e.dev()->kdev, enable);
}
HRESULT APIENTRY SetDisplayPrivateDriverFormatCb(HANDLE h,
                                                 const D3DDDICB_SETDISPLAYPRIVATEDRIVERFORMAT* a) {
  KernelEntry e(h, ddi::CallId::kSetDisplayPrivateDriverFormatCb, a);
  return e.dev()->kcb->pfnSetDisplayPrivateDriverFormatCb(e.dev()->kdev, a);
}

// Kernel services without UMD-boundary checks of their own.
HRESULT APIENTRY SetPriorityCb(HANDLE h, D3DDDICB_SETPRIORITY* a) {
  KernelEntry e(h, ddi::CallId::kSetPriorityCb, a);
  return e.dev()->kcb->pfnSetPriorityCb(e.dev()->kdev, a);
}
HRESULT APIENTRY QueryResidencyCb(HANDLE h, const D3DDDICB_QUERYRESIDENCY* a) {
  KernelEntry e(h, ddi::CallId::kQueryResidencyCb, a);
  return e.dev()->kcb->pfnQueryResidencyCb(e.dev()->kdev, a);
}
HRESULT APIENTRY EscapeCb(HANDLE h, const D3DDDICB_ESCAPE* a) {
  KernelEntry e(h, ddi::CallId::kEscapeCb, a);
  HcontextUse use(e.dev(), e.name());
  return e.dev()->kcb->pfnEscapeCb(e.dev()->kdev, a);
}
HRESULT APIENTRY CreateSynchronizationObjectCb(HANDLE h, D3DDDICB_CREATESYNCHRONIZATIONOBJECT* a) {
  KernelEntry e(h, ddi::CallId::kCreateSynchronizationObjectCb, a);
  return e.dev()->kcb->pfnCreateSynchronizationObjectCb(e.dev()->kdev, a);
}
HRESULT APIENTRY DestroySynchronizationObjectCb(HANDLE h,
                                                const D3DDDICB_DESTROYSYNCHRONIZATIONOBJECT* a) {
  KernelEntry e(h, ddi::CallId::kDestroySynchronizationObjectCb, a);
  return e.dev()->kcb->pfnDestroySynchronizationObjectCb(e.dev()->kdev, a);
}
HRESULT APIENTRY WaitForSynchronizationObjectCb(HANDLE h,
                                                const D3DDDICB_WAITFORSYNCHRONIZATIONOBJECT* a) {
  KernelEntry e(h, ddi::CallId::kWaitForSynchronizationObjectCb, a);
  HcontextUse use(e.dev(), e.name());
  return e.dev()->kcb->pfnWaitForSynchronizationObjectCb(e.dev()->kdev, a);
}
HRESULT APIENTRY SignalSynchronizationObjectCb(HANDLE h,
                                               const D3DDDICB_SIGNALSYNCHRONIZATIONOBJECT* a) {
  KernelEntry e(h, ddi::CallId::kSignalSynchronizationObjectCb, a);
  HcontextUse use(e.dev(), e.name());
  return e.dev()->kcb->pfnSignalSynchronizationObjectCb(e.dev()->kdev, a);
}

// One draw the driver's probe decoded against the runtime's expectation (R47/R60).
void CheckDraw(DeviceState* dev, const uint64_t* used) {
  if (dev->expected_draws.empty()) {
    ReportOnce(dev, "draw-extra", rules::Rule::kR60, ddi::NameOf(ddi::CallId::kRenderCb),
               "the driver submitted more draws than the application made");
    return;
  }
  DrawExpectation want = dev->expected_draws.front();
  dev->expected_draws.pop_front();
  for (uint32_t slot = 0; slot < gpu::kDrawSlotCount; ++slot) {
    if (used[slot] == want.state[slot]) continue;
    const rules::Rule rule = want.since == 1 ? rules::Rule::kR60 : rules::Rule::kR47;
    ReportOnce(
        dev, absl::StrCat("draw-", rules::RuleId(rule), "-", slot), rule,
        ddi::NameOf(ddi::CallId::kRenderCb),
        absl::StrCat("a draw used ", dev->sink.names.Get(reinterpret_cast<void*>(used[slot])),
                     " in slot ", gpu::DrawSlotName(slot), " but the runtime bound ",
                     dev->sink.names.Get(reinterpret_cast<void*>(want.state[slot])),
                     want.since == 1 ? " (state not cleared by CommandListExecute)"
                                     : " (state not cleared at context creation/recycle)"));
  }
}

void OnProbedDraw(void* ctx, const uint64_t* handles) {
  CheckDraw(static_cast<DeviceState*>(ctx), handles);
}

}  // namespace

void FillKernelCallbacks(D3DDDI_DEVICECALLBACKS* t) {
  t->pfnAllocateCb = &AllocateCb;
  t->pfnDeallocateCb = &DeallocateCb;
  t->pfnSetPriorityCb = &SetPriorityCb;
  t->pfnQueryResidencyCb = &QueryResidencyCb;
  t->pfnSetDisplayModeCb = &SetDisplayModeCb;
  t->pfnPresentCb = &PresentCb;
  t->pfnRenderCb = &RenderCb;
  t->pfnLockCb = &LockCb;
  t->pfnUnlockCb = &UnlockCb;
  t->pfnEscapeCb = &EscapeCb;
  t->pfnCreateOverlayCb = &CreateOverlayCb;
  t->pfnUpdateOverlayCb = &UpdateOverlayCb;
  t->pfnFlipOverlayCb = &FlipOverlayCb;
  t->pfnDestroyOverlayCb = &DestroyOverlayCb;
  t->pfnCreateContextCb = &CreateContextCb;
  t->pfnDestroyContextCb = &DestroyContextCb;
  t->pfnCreateSynchronizationObjectCb = &CreateSynchronizationObjectCb;
  t->pfnDestroySynchronizationObjectCb = &DestroySynchronizationObjectCb;
  t->pfnWaitForSynchronizationObjectCb = &WaitForSynchronizationObjectCb;
  t->pfnSignalSynchronizationObjectCb = &SignalSynchronizationObjectCb;
  t->pfnSetAsyncCallbacksCb = &SetAsyncCallbacksCb;
  t->pfnSetDisplayPrivateDriverFormatCb = &SetDisplayPrivateDriverFormatCb;
}

void CheckSubmittedCommands(DeviceState* dev, const uint8_t* data, uint32_t size) {
  if (!dev->draw_check_enabled || size < 4) return;
  if (!dev->draw_probe_looked_up) {
    dev->draw_probe_looked_up = true;
    dev->draw_probe = dev->driver.DecodePrivateDraws();
  }
  if (dev->draw_probe == nullptr) return;
  // The buffer is in the GPU model's user format (wddm/README.md); a driver's own records ride
  // in kPrivate commands, which only the driver's probe (wddm/draw_state.h) can read. A buffer
  // that does not decode is the kernel's business (it rejects it and reports R74 where the UMD
  // is at fault), so decoding simply stops there.
  std::vector<uint32_t> words(size / 4);
  std::memcpy(words.data(), data, words.size() * 4);
  size_t pos = 0;
  while (pos < words.size()) {
    gpu::Command c;
    absl::StatusOr<uint32_t> len = gpu::DecodeCommand(words, pos, gpu::CommandFormat::kUser, &c);
    if (!len.ok()) {
      // The draws of this submission cannot be matched with the application's any more (the
      // UMD wrote elsewhere, R74): the check stops for this device rather than misreport.
      dev->draw_check_enabled = false;
      return;
    }
    pos += *len;
    if (c.op != gpu::Opcode::kPrivate) continue;
    if (dev->draw_probe(c.payload.data(), c.payload.size(), &OnProbedDraw, dev) ==
        gpu::kPrivateDrawsMalformed) {
      ReportOnce(
          dev, "stream-corrupt", rules::Rule::kR74, ddi::NameOf(ddi::CallId::kRenderCb),
          absl::StrCat("malformed driver-private records in a private command at word ", pos));
      return;
    }
  }
}

}  // namespace cltrace::runtime::internal
