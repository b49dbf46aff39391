// The kernel-thunk callbacks (D3DDDI_DEVICECALLBACKS) and the driver-side rules checked
// around them: R15 (one thread per HCONTEXT), R16 (RenderCb only from the IC domain), R17
// (PresentCb only inside PresentDXGI), R67 (no deallocation before the referencing submit),
// R71 (amortized-processing starvation), R74 (CreateContextCb first), and the draw-state check
// of the reference driver's command stream (R47/R60). The kernel's work itself is done by the
// device's KernelModel.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "refdriver/command_stream.h"
#include "runtime/internal/callbacks.h"
#include "runtime/internal/common.h"

namespace cltrace::runtime::internal {
namespace {

DeviceState* DevOf(D3DRTDEVICEHANDLE h) { return static_cast<DeviceState*>(h.handle); }

class KernelEntry {
 public:
  template <typename... A>
  KernelEntry(D3DRTDEVICEHANDLE h, const char* name, const A&... args)
      : dev_(DevOf(h)), scope_(&dev_->sink, dev_, nullptr, Table::kCallback, false, name) {
    dev_->sink.calls->fetch_add(1, std::memory_order_relaxed);
    if (dev_->sink.observer != nullptr) {
      EmitLine(&dev_->sink, 0,
               absl::StrCat("cb ", name, "(", FormatArgs(dev_->sink.names, args...), ")"));
    }
  }
  DeviceState* dev() const { return dev_; }

 private:
  DeviceState* dev_;
  FrameScope scope_;
};

// R15: HCONTEXT callbacks of one context never overlap.
class HcontextUse {
 public:
  HcontextUse(DeviceState* dev, const char* fn) : dev_(dev) {
    if (dev->hcontext_busy.fetch_add(1) != 0) {
      Report(dev, "R15", fn, "two HCONTEXT callbacks for one context in flight at once");
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

HRESULT APIENTRY AllocateCb(D3DRTDEVICEHANDLE h, D3DDDICB_ALLOCATE* a) {
  KernelEntry e(h, "AllocateCb", a);
  DeviceState* dev = e.dev();
  HRESULT hr = dev->kernel->Allocate(a);
  if (hr == S_OK && a != nullptr) {
    std::string owner = dev->sink.names.Get(a->hResource.handle);
    std::lock_guard<std::mutex> lock(dev->alloc_mu);
    for (UINT i = 0; i < a->NumAllocations; ++i) {
      uint32_t alloc = a->pAllocationInfo[i].hAllocation.value;
      dev->allocations[alloc] = AllocationInfo{owner, false, 0, false};
      if (a->hResource.handle != nullptr) {
        dev->resource_allocations[a->hResource.handle].push_back(alloc);
      }
    }
  }
  return hr;
}

HRESULT APIENTRY DeallocateCb(D3DRTDEVICEHANDLE h, const D3DDDICB_DEALLOCATE* a) {
  KernelEntry e(h, "DeallocateCb", a);
  DeviceState* dev = e.dev();
  if (a != nullptr) {
    std::lock_guard<std::mutex> lock(dev->alloc_mu);
    for (UINT i = 0; i < a->NumAllocations; ++i) {
      auto it = dev->allocations.find(a->HandleList[i].value);
      if (it != dev->allocations.end()) it->second.deallocated = true;
    }
  }
  return dev->kernel->Deallocate(a);
}

HRESULT APIENTRY CreateContextCb(D3DRTDEVICEHANDLE h, D3DDDICB_CREATECONTEXT* a) {
  KernelEntry e(h, "CreateContextCb", a);
  DeviceState* dev = e.dev();
  HRESULT hr = dev->kernel->CreateContext(a);
  if (hr == S_OK) dev->context_created = true;
  return hr;
}

HRESULT APIENTRY DestroyContextCb(D3DRTDEVICEHANDLE h, const D3DDDICB_DESTROYCONTEXT* a) {
  KernelEntry e(h, "DestroyContextCb", a);
  HcontextUse use(e.dev(), "DestroyContextCb");
  return e.dev()->kernel->DestroyContext(a);
}

HRESULT APIENTRY RenderCb(D3DRTDEVICEHANDLE h, D3DDDICB_RENDER* a) {
  KernelEntry e(h, "RenderCb", a);
  DeviceState* dev = e.dev();
  if (!dev->context_created) {
    Report(dev, "R74", "RenderCb", "pfnRenderCb before pfnCreateContextCb");
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  if (!InsideIcDomain()) {
    // Refused without touching the context's buffers: they belong to the IC domain, which
    // may be running on another thread right now.
    Report(dev, "R16", "RenderCb",
           absl::StrCat("pfnRenderCb from inside ", InnermostName(),
                        ", not an immediate-context DDI (refused)"));
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  HcontextUse use(dev, "RenderCb");
  uint32_t hcontext = a->hContext.value;
  if (const AllocationListEntry* list = dev->kernel->AllocationList(hcontext)) {
    std::lock_guard<std::mutex> lock(dev->alloc_mu);
    for (UINT i = 0; i < a->NumAllocations; ++i) {
      auto it = dev->allocations.find(list[i].hAllocation);
      if (it != dev->allocations.end() && it->second.deallocated) {
        Report(dev, "R67", "RenderCb",
               absl::StrCat("submitted commands reference allocation ", list[i].hAllocation, " of ",
                            it->second.owner, " which was already deallocated"));
      }
    }
  }
  if (const uint8_t* buf = dev->kernel->CommandBuffer(hcontext)) {
    CheckSubmittedCommands(dev, buf + a->CommandOffset, a->CommandLength);
  }
  if (++dev->submits_since_amortized > dev->options.amortized_starvation_submits &&
      !dev->r71_reported) {
    dev->r71_reported = true;
    Report(dev, "R71", "RenderCb",
           absl::StrCat(dev->submits_since_amortized - 1,
                        " submits without pfnPerformAmortizedProcessingCb"));
  }
  return dev->kernel->Render(a);
}

HRESULT APIENTRY PresentCb(D3DRTDEVICEHANDLE h, const D3DDDICB_PRESENT* a) {
  KernelEntry e(h, "PresentCb", a);
  DeviceState* dev = e.dev();
  HcontextUse use(dev, "PresentCb");
  Frame* f = CurrentDdiFrame();
  if (f == nullptr || f->table != Table::kDxgi) {
    Report(dev, "R17", "PresentCb",
           absl::StrCat("pfnPresentCb from inside ", InnermostName(), ", not PresentDXGI"));
  }
  return dev->kernel->Present(a);
}

HRESULT APIENTRY LockCb(D3DRTDEVICEHANDLE h, D3DDDICB_LOCK* a) {
  KernelEntry e(h, "LockCb", a);
  return e.dev()->kernel->Lock(a);
}

HRESULT APIENTRY UnlockCb(D3DRTDEVICEHANDLE h, const D3DDDICB_UNLOCK* a) {
  KernelEntry e(h, "UnlockCb", a);
  return e.dev()->kernel->Unlock(a);
}

HRESULT APIENTRY SetDisplayModeCb(D3DRTDEVICEHANDLE h, D3DDDICB_SETDISPLAYMODE* a) {
  KernelEntry e(h, "SetDisplayModeCb", a);
  // The DXGI table in scope has no SetDisplayModeDXGI, so no call can be legal (R17).
  Report(e.dev(), "R17", "SetDisplayModeCb",
         absl::StrCat("pfnSetDisplayModeCb from inside ", InnermostName()));
  return S_OK;
}

// Kernel services the reference model treats as always succeeding.
HRESULT APIENTRY SetPriorityCb(D3DRTDEVICEHANDLE h, const D3DDDICB_SETPRIORITY* a) {
  KernelEntry e(h, "SetPriorityCb", a);
  return S_OK;
}
HRESULT APIENTRY QueryResidencyCb(D3DRTDEVICEHANDLE h, const D3DDDICB_QUERYRESIDENCY* a) {
  KernelEntry e(h, "QueryResidencyCb", a);
  return S_OK;
}
HRESULT APIENTRY EscapeCb(D3DRTDEVICEHANDLE h, const D3DDDICB_ESCAPE* a) {
  KernelEntry e(h, "EscapeCb", a);
  HcontextUse use(e.dev(), "EscapeCb");
  return S_OK;
}
HRESULT APIENTRY CreateSynchronizationObjectCb(D3DRTDEVICEHANDLE h,
                                               D3DDDICB_CREATESYNCHRONIZATIONOBJECT* a) {
  KernelEntry e(h, "CreateSynchronizationObjectCb", a);
  return S_OK;
}
HRESULT APIENTRY DestroySynchronizationObjectCb(D3DRTDEVICEHANDLE h,
                                                const D3DDDICB_DESTROYSYNCHRONIZATIONOBJECT* a) {
  KernelEntry e(h, "DestroySynchronizationObjectCb", a);
  return S_OK;
}
HRESULT APIENTRY WaitForSynchronizationObjectCb(D3DRTDEVICEHANDLE h,
                                                const D3DDDICB_WAITFORSYNCHRONIZATIONOBJECT* a) {
  KernelEntry e(h, "WaitForSynchronizationObjectCb", a);
  HcontextUse use(e.dev(), "WaitForSynchronizationObjectCb");
  return S_OK;
}
HRESULT APIENTRY SignalSynchronizationObjectCb(D3DRTDEVICEHANDLE h,
                                               const D3DDDICB_SIGNALSYNCHRONIZATIONOBJECT* a) {
  KernelEntry e(h, "SignalSynchronizationObjectCb", a);
  HcontextUse use(e.dev(), "SignalSynchronizationObjectCb");
  return S_OK;
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
  t->pfnCreateContextCb = &CreateContextCb;
  t->pfnDestroyContextCb = &DestroyContextCb;
  t->pfnCreateSynchronizationObjectCb = &CreateSynchronizationObjectCb;
  t->pfnDestroySynchronizationObjectCb = &DestroySynchronizationObjectCb;
  t->pfnWaitForSynchronizationObjectCb = &WaitForSynchronizationObjectCb;
  t->pfnSignalSynchronizationObjectCb = &SignalSynchronizationObjectCb;
}

void CheckSubmittedCommands(DeviceState* dev, const uint8_t* data, uint32_t size) {
  if (!dev->draw_check_enabled || size < sizeof(refcmd::Generic)) return;
  refcmd::Generic first;
  std::memcpy(&first, data, sizeof(first));
  if (first.header.opcode != refcmd::kNop || first.a != refcmd::kStreamMagic) return;
  uint32_t offset = 0;
  while (offset + sizeof(refcmd::Header) <= size) {
    refcmd::Header header;
    std::memcpy(&header, data + offset, sizeof(header));
    if (header.size < sizeof(refcmd::Header) || offset + header.size > size) {
      ReportOnce(dev, "stream-corrupt", "R74", "RenderCb",
                 absl::StrCat("malformed command record at offset ", offset));
      return;
    }
    if (header.opcode == refcmd::kDraw && header.size >= sizeof(refcmd::Draw)) {
      refcmd::Draw draw;
      std::memcpy(&draw, data + offset, sizeof(draw));
      if (dev->expected_draws.empty()) {
        ReportOnce(dev, "draw-extra", "R60", "RenderCb",
                   "the driver submitted more draws than the application made");
      } else {
        DrawExpectation want = dev->expected_draws.front();
        dev->expected_draws.pop_front();
        for (uint32_t slot = 0; slot < refcmd::kDrawSlotCount; ++slot) {
          if (draw.state[slot] == want.state[slot]) continue;
          const char* rule = want.since == 1 ? "R60" : "R47";
          ReportOnce(
              dev, absl::StrCat("draw-", rule, "-", slot), rule, "RenderCb",
              absl::StrCat("a draw used ",
                           dev->sink.names.Get(reinterpret_cast<void*>(draw.state[slot])),
                           " in slot ", refcmd::DrawSlotName(slot), " but the runtime bound ",
                           dev->sink.names.Get(reinterpret_cast<void*>(want.state[slot])),
                           want.since == 1 ? " (state not cleared by CommandListExecute)"
                                           : " (state not cleared at context creation/recycle)"));
        }
      }
    }
    offset += header.size;
  }
}

}  // namespace cltrace::runtime::internal
