#include "wddm/kernel_transcript.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "wddm/command_stream.h"
#include "wddm/dxgkrnl.h"
#include "wddm/kernel_abi.h"

namespace cltrace::gpu {
namespace {

KernelTranscript* g_active = nullptr;

// A status code and its name.
struct CodeName {
  uint32_t code;
  const char* name;
};
#define CLTRACE_CODE_NAME(code) \
  { static_cast<uint32_t>(code), #code }

constexpr CodeName kHresultNames[] = {
    CLTRACE_CODE_NAME(S_OK),
    CLTRACE_CODE_NAME(E_OUTOFMEMORY),
    CLTRACE_CODE_NAME(E_INVALIDARG),
    CLTRACE_CODE_NAME(D3DDDIERR_WASSTILLDRAWING),
    CLTRACE_CODE_NAME(D3DDDIERR_DEVICEREMOVED),
    CLTRACE_CODE_NAME(D3DDDIERR_PRIVILEGEDINSTRUCTION),
    CLTRACE_CODE_NAME(D3DDDIERR_INVALIDINSTRUCTION),
    CLTRACE_CODE_NAME(D3DDDIERR_INVALIDHANDLE),
    CLTRACE_CODE_NAME(D3DDDIERR_CANTRENDERLOCKEDALLOCATION),
    CLTRACE_CODE_NAME(D3DDDIERR_INVALIDUSERBUFFER),
};

constexpr CodeName kNtstatusNames[] = {
    CLTRACE_CODE_NAME(STATUS_SUCCESS),
    CLTRACE_CODE_NAME(STATUS_INVALID_PARAMETER),
    CLTRACE_CODE_NAME(STATUS_NO_MEMORY),
    CLTRACE_CODE_NAME(STATUS_ILLEGAL_INSTRUCTION),
    CLTRACE_CODE_NAME(STATUS_PRIVILEGED_INSTRUCTION),
    CLTRACE_CODE_NAME(STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER),
    CLTRACE_CODE_NAME(STATUS_INVALID_USER_BUFFER),
    CLTRACE_CODE_NAME(STATUS_GRAPHICS_GPU_EXCEPTION_ON_DEVICE),
    CLTRACE_CODE_NAME(STATUS_INVALID_HANDLE),
};
#undef CLTRACE_CODE_NAME

// The name of `v` in `names`, else its hex value.
std::string NameOf(absl::Span<const CodeName> names, int32_t v) {
  for (const CodeName& n : names) {
    if (n.code == static_cast<uint32_t>(v)) return n.name;
  }
  return absl::StrFormat("0x%08x", static_cast<uint32_t>(v));
}

std::string HrName(int32_t v) { return NameOf(kHresultNames, v); }
std::string NtName(int32_t v) { return NameOf(kNtstatusNames, v); }

const char* InterruptName(uint32_t t) {
  switch (t) {
    case DXGK_INTERRUPT_DMA_COMPLETED:
      return "DMA_COMPLETED";
    case DXGK_INTERRUPT_DMA_PREEMPTED:
      return "DMA_PREEMPTED";
    case DXGK_INTERRUPT_CRTC_VSYNC:
      return "CRTC_VSYNC";
    case DXGK_INTERRUPT_DMA_FAULTED:
      return "DMA_FAULTED";
  }
  return "?";
}

KernelTranscript& T() { return *g_active; }

// One forwarded call in the transcript: its `entry` line on `layer`, then `forward()` (the
// wrapped table's function), then `result` of what it returned appended to the entry line.
template <typename Forward, typename Result>
auto Logged(absl::string_view layer, std::string entry, Forward forward, Result result) {
  const size_t l = T().Begin(layer, std::move(entry));
  auto r = forward();
  T().End(l, result(r));
  return r;
}

// A kernel-thunk callback, which answers an HRESULT.
template <typename Forward>
HRESULT LoggedCb(std::string entry, Forward forward) {
  return Logged("kernelcb", std::move(entry), forward, [](HRESULT hr) { return HrName(hr); });
}

// A KMD entry point, which answers an NTSTATUS.
template <typename Forward>
NTSTATUS LoggedKmd(std::string entry, Forward forward) {
  return Logged("kmd", std::move(entry), forward, [](NTSTATUS s) { return NtName(s); });
}

// A call that answers nothing.
template <typename Forward>
void LoggedVoid(absl::string_view layer, std::string entry, Forward forward) {
  const size_t l = T().Begin(layer, std::move(entry));
  forward();
  T().End(l, "");
}

// Decodes DMA words [from, to) into detail lines.
void DecodeDma(const uint32_t* words, size_t from, size_t to) {
  absl::Span<const uint32_t> all(words, to);
  size_t pos = from;
  while (pos < to) {
    Command c;
    auto len = DecodeCommand(all, pos, CommandFormat::kDma, &c);
    if (!len.ok()) {
      T().Detail(absl::StrCat("| <", len.status().message(), ">"));
      return;
    }
    T().Detail(absl::StrFormat("| +%u %s", pos * 4, FormatCommand(c)));
    pos += *len;
  }
}

std::string CtxName(HANDLE h) { return absl::StrCat("ctx", reinterpret_cast<uintptr_t>(h)); }
std::string AllocName(D3DKMT_HALLOCATION h) { return absl::StrCat("a", h.value); }

// ---- kernel-thunk callbacks ----------------------------------------------------------------
HRESULT APIENTRY AllocateCb(HANDLE h, D3DDDICB_ALLOCATE* p) {
  std::vector<std::string> sizes;
  for (UINT i = 0; i < p->NumAllocations; ++i) {
    AllocationDesc d;
    if (p->pAllocationInfo[i].PrivateDriverDataSize == sizeof(d)) {
      std::memcpy(&d, p->pAllocationInfo[i].pPrivateDriverData, sizeof(d));
      sizes.push_back(absl::StrCat(d.size, (d.flags & kAllocationDescPrimary) ? "p" : ""));
    }
  }
  return Logged(
      "kernelcb",
      absl::StrFormat("AllocateCb(%s n=%u size=[%s]%s)", T().Name(h, "dev"), p->NumAllocations,
                      absl::StrJoin(sizes, ","), p->hResource ? " resource" : ""),
      [&] { return T().callbacks_->pfnAllocateCb(h, p); },
      [&](HRESULT hr) {
        std::vector<std::string> out;
        for (UINT i = 0; i < p->NumAllocations; ++i)
          out.push_back(AllocName(p->pAllocationInfo[i].hAllocation));
        return absl::StrFormat(
            "%s [%s]%s", HrName(hr), absl::StrJoin(out, ","),
            p->hKMResource.value ? absl::StrCat(" kmres=", p->hKMResource.value) : "");
      });
}

HRESULT APIENTRY DeallocateCb(HANDLE h, const D3DDDICB_DEALLOCATE* p) {
  std::vector<std::string> ids;
  for (UINT i = 0; i < p->NumAllocations; ++i) ids.push_back(AllocName(p->HandleList[i]));
  return LoggedCb(
      absl::StrFormat("DeallocateCb(%s res=%s [%s])", T().Name(h, "dev"),
                      p->hResource ? T().Name(p->hResource, "res") : "0", absl::StrJoin(ids, ",")),
      [&] { return T().callbacks_->pfnDeallocateCb(h, p); });
}

HRESULT APIENTRY SetPriorityCb(HANDLE h, D3DDDICB_SETPRIORITY* p) {
  return LoggedCb(absl::StrFormat("SetPriorityCb(%s n=%u)", T().Name(h, "dev"), p->NumAllocations),
                  [&] { return T().callbacks_->pfnSetPriorityCb(h, p); });
}

HRESULT APIENTRY QueryResidencyCb(HANDLE h, const D3DDDICB_QUERYRESIDENCY* p) {
  return Logged(
      "kernelcb",
      absl::StrFormat("QueryResidencyCb(%s n=%u)", T().Name(h, "dev"), p->NumAllocations),
      [&] { return T().callbacks_->pfnQueryResidencyCb(h, p); },
      [&](HRESULT hr) {
        std::vector<std::string> st;
        for (UINT i = 0; !Failed(hr) && i < p->NumAllocations; ++i)
          st.push_back(absl::StrCat(p->pResidencyStatus[i]));
        return absl::StrFormat("%s [%s]", HrName(hr), absl::StrJoin(st, ","));
      });
}

HRESULT APIENTRY SetDisplayModeCb(HANDLE h, D3DDDICB_SETDISPLAYMODE* p) {
  HRESULT hr = LoggedCb(absl::StrFormat("SetDisplayModeCb(%s primary=%s)", T().Name(h, "dev"),
                                        AllocName(p->hPrimaryAllocation)),
                        [&] { return T().callbacks_->pfnSetDisplayModeCb(h, p); });
  return hr;
}

HRESULT APIENTRY PresentCb(HANDLE h, const D3DDDICB_PRESENT* p) {
  return LoggedCb(
      absl::StrFormat("PresentCb(%s %s src=%s dst=%s)", T().Name(h, "dev"), CtxName(p->hContext),
                      AllocName(p->hSrcAllocation), AllocName(p->hDstAllocation)),
      [&] { return T().callbacks_->pfnPresentCb(h, p); });
}

HRESULT APIENTRY RenderCb(HANDLE h, D3DDDICB_RENDER* p) {
  return Logged(
      "kernelcb",
      absl::StrFormat(
          "RenderCb(%s %s CommandOffset=%u CommandLength=%u NumAllocations=%u NumPatchLocations=%u "
          "Flags=0x%x)",
          T().Name(h, "dev"), CtxName(p->hContext), p->CommandOffset, p->CommandLength,
          p->NumAllocations, p->NumPatchLocations, p->Flags),
      [&] { return T().callbacks_->pfnRenderCb(h, p); },
      [&](HRESULT hr) -> std::string {
        return absl::StrFormat(
            "%s NewCommandBufferSize=%u NewAllocationListSize=%u "
            "NewPatchLocationListSize=%u QueuedBufferCount=%u",
            HrName(hr), p->NewCommandBufferSize, p->NewAllocationListSize,
            p->NewPatchLocationListSize, p->QueuedBufferCount);
      });
}

HRESULT APIENTRY LockCb(HANDLE h, D3DDDICB_LOCK* p) {
  return LoggedCb(absl::StrFormat("LockCb(%s %s Flags=0x%x)", T().Name(h, "dev"),
                                  AllocName(p->hAllocation), p->Flags),
                  [&] { return T().callbacks_->pfnLockCb(h, p); });
}

HRESULT APIENTRY UnlockCb(HANDLE h, const D3DDDICB_UNLOCK* p) {
  HRESULT hr = LoggedCb(absl::StrFormat("UnlockCb(%s n=%u)", T().Name(h, "dev"), p->NumAllocations),
                        [&] { return T().callbacks_->pfnUnlockCb(h, p); });
  return hr;
}

HRESULT APIENTRY EscapeCb(HANDLE h, const D3DDDICB_ESCAPE* p) {
  return LoggedCb(
      absl::StrFormat("EscapeCb(%s size=%u)", T().Name(h, "dev"), p->PrivateDriverDataSize),
      [&] { return T().callbacks_->pfnEscapeCb(h, p); });
}

HRESULT APIENTRY CreateContextCb(HANDLE h, D3DDDICB_CREATECONTEXT* p) {
  return Logged(
      "kernelcb",
      absl::StrFormat("CreateContextCb(%s NodeOrdinal=%u)", T().Name(h, "dev"), p->NodeOrdinal),
      [&] { return T().callbacks_->pfnCreateContextCb(h, p); },
      [&](HRESULT hr) -> std::string {
        return absl::StrFormat(
            "%s %s CommandBufferSize=%u AllocationListSize=%u "
            "PatchLocationListSize=%u",
            HrName(hr), CtxName(p->hContext), p->CommandBufferSize, p->AllocationListSize,
            p->PatchLocationListSize);
      });
}

HRESULT APIENTRY DestroyContextCb(HANDLE h, const D3DDDICB_DESTROYCONTEXT* p) {
  return LoggedCb(
      absl::StrFormat("DestroyContextCb(%s %s)", T().Name(h, "dev"), CtxName(p->hContext)),
      [&] { return T().callbacks_->pfnDestroyContextCb(h, p); });
}

HRESULT APIENTRY CreateSyncCb(HANDLE h, D3DDDICB_CREATESYNCHRONIZATIONOBJECT* p) {
  return Logged(
      "kernelcb",
      absl::StrFormat("CreateSynchronizationObjectCb(%s type=%u)", T().Name(h, "dev"),
                      p->Info.Type),
      [&] { return T().callbacks_->pfnCreateSynchronizationObjectCb(h, p); },
      [&](HRESULT hr) -> std::string {
        return absl::StrFormat("%s sync%u", HrName(hr), p->hSyncObject.value);
      });
}

HRESULT APIENTRY DestroySyncCb(HANDLE h, const D3DDDICB_DESTROYSYNCHRONIZATIONOBJECT* p) {
  return LoggedCb(absl::StrFormat("DestroySynchronizationObjectCb(%s sync%u)", T().Name(h, "dev"),
                                  p->hSyncObject.value),
                  [&] { return T().callbacks_->pfnDestroySynchronizationObjectCb(h, p); });
}

std::string SyncList(UINT n, const D3DKMT_HSYNCOBJECT* a) {
  std::vector<std::string> v;
  for (UINT i = 0; i < n && i < 32; ++i) v.push_back(absl::StrCat("sync", a[i].value));
  return absl::StrJoin(v, ",");
}

HRESULT APIENTRY WaitSyncCb(HANDLE h, const D3DDDICB_WAITFORSYNCHRONIZATIONOBJECT* p) {
  return LoggedCb(
      absl::StrFormat("WaitForSynchronizationObjectCb(%s %s [%s])", T().Name(h, "dev"),
                      CtxName(p->hContext), SyncList(p->ObjectCount, p->ObjectHandleArray)),
      [&] { return T().callbacks_->pfnWaitForSynchronizationObjectCb(h, p); });
}

HRESULT APIENTRY SignalSyncCb(HANDLE h, const D3DDDICB_SIGNALSYNCHRONIZATIONOBJECT* p) {
  return LoggedCb(
      absl::StrFormat("SignalSynchronizationObjectCb(%s %s [%s])", T().Name(h, "dev"),
                      CtxName(p->hContext), SyncList(p->ObjectCount, p->ObjectHandleArray)),
      [&] { return T().callbacks_->pfnSignalSynchronizationObjectCb(h, p); });
}

HRESULT APIENTRY CreateOverlayCb(HANDLE h, D3DDDICB_CREATEOVERLAY* p) {
  return LoggedCb(absl::StrFormat("CreateOverlayCb(%s source=%u %s)", T().Name(h, "dev"),
                                  p->VidPnSourceId, AllocName(p->OverlayInfo.hAllocation)),
                  [&] { return T().callbacks_->pfnCreateOverlayCb(h, p); });
}

HRESULT APIENTRY UpdateOverlayCb(HANDLE h, const D3DDDICB_UPDATEOVERLAY* p) {
  return LoggedCb(
      absl::StrFormat("UpdateOverlayCb(%s overlay%u)", T().Name(h, "dev"), p->hKernelOverlay),
      [&] { return T().callbacks_->pfnUpdateOverlayCb(h, p); });
}

HRESULT APIENTRY FlipOverlayCb(HANDLE h, const D3DDDICB_FLIPOVERLAY* p) {
  return LoggedCb(
      absl::StrFormat("FlipOverlayCb(%s overlay%u)", T().Name(h, "dev"), p->hKernelOverlay),
      [&] { return T().callbacks_->pfnFlipOverlayCb(h, p); });
}

HRESULT APIENTRY DestroyOverlayCb(HANDLE h, const D3DDDICB_DESTROYOVERLAY* p) {
  return LoggedCb(
      absl::StrFormat("DestroyOverlayCb(%s overlay%u)", T().Name(h, "dev"), p->hKernelOverlay),
      [&] { return T().callbacks_->pfnDestroyOverlayCb(h, p); });
}

HRESULT APIENTRY SetAsyncCallbacksCb(HANDLE h, BOOL enable) {
  return LoggedCb(absl::StrFormat("SetAsyncCallbacksCb(%s Enable=%d)", T().Name(h, "dev"), enable),
                  [&] { return T().callbacks_->pfnSetAsyncCallbacksCb(h, enable); });
}

HRESULT APIENTRY SetDisplayPrivateDriverFormatCb(HANDLE h,
                                                 const D3DDDICB_SETDISPLAYPRIVATEDRIVERFORMAT* p) {
  return LoggedCb(
      absl::StrFormat("SetDisplayPrivateDriverFormatCb(%s source=%u attr=%u)", T().Name(h, "dev"),
                      p->VidPnSourceId, p->PrivateDriverFormatAttribute),
      [&] { return T().callbacks_->pfnSetDisplayPrivateDriverFormatCb(h, p); });
}

// Every slot of D3DDDI_DEVICECALLBACKS, in its order.
const D3DDDI_DEVICECALLBACKS kCallbacks = {
    AllocateCb,
    DeallocateCb,
    SetPriorityCb,
    QueryResidencyCb,
    SetDisplayModeCb,
    PresentCb,
    RenderCb,
    LockCb,
    UnlockCb,
    EscapeCb,
    CreateOverlayCb,
    UpdateOverlayCb,
    FlipOverlayCb,
    DestroyOverlayCb,
    CreateContextCb,
    DestroyContextCb,
    CreateSyncCb,
    DestroySyncCb,
    WaitSyncCb,
    SignalSyncCb,
    SetAsyncCallbacksCb,
    SetDisplayPrivateDriverFormatCb,
};

// ---- KMD entry points ------------------------------------------------------------------------
NTSTATUS APIENTRY KCreateDevice(DXGK_HADAPTER a, DXGKARG_CREATEDEVICE* p) {
  return Logged(
      "kmd", absl::StrFormat("DxgkDdiCreateDevice(Flags=0x%x)", p->Flags),
      [&] { return T().kmd_->DxgkDdiCreateDevice(a, p); },
      [&](NTSTATUS s) {
        std::string info;
        if (p->pInfo != nullptr) {
          info = absl::StrFormat(" DmaBufferSize=%u AllocationListSize=%u PatchLocationListSize=%u",
                                 p->pInfo->DmaBufferSize, p->pInfo->AllocationListSize,
                                 p->pInfo->PatchLocationListSize);
        }
        return absl::StrCat(NtName(s), " ", T().NewName(p->hDevice.handle, "kd"), info);
      });
}

NTSTATUS APIENTRY KCreateContext(DXGK_HDEVICE d, DXGKARG_CREATECONTEXT* p) {
  return Logged(
      "kmd",
      absl::StrFormat("DxgkDdiCreateContext(%s NodeOrdinal=%u)", T().Name(d.handle, "kd"),
                      p->NodeOrdinal),
      [&] { return T().kmd_->DxgkDdiCreateContext(d, p); },
      [&](NTSTATUS s) -> std::string {
        return absl::StrFormat("%s %s DmaBufferSize=%u", NtName(s),
                               T().NewName(p->hContext.handle, "kc"), p->ContextInfo.DmaBufferSize);
      });
}

NTSTATUS APIENTRY KCreateAllocation(DXGK_HADAPTER a, DXGKARG_CREATEALLOCATION* p) {
  return Logged(
      "kmd", absl::StrFormat("DxgkDdiCreateAllocation(NumAllocations=%u)", p->NumAllocations),
      [&] { return T().kmd_->DxgkDdiCreateAllocation(a, p); },
      [&](NTSTATUS s) {
        std::vector<std::string> out;
        for (UINT i = 0; s == Nt(STATUS_SUCCESS) && i < p->NumAllocations; ++i) {
          out.push_back(absl::StrFormat("%s Size=%u",
                                        T().NewName(p->pAllocationInfo[i].hAllocation.handle, "ka"),
                                        p->pAllocationInfo[i].Size));
        }
        return absl::StrFormat("%s [%s]", NtName(s), absl::StrJoin(out, ", "));
      });
}

NTSTATUS APIENTRY KDestroyAllocation(DXGK_HADAPTER a, const DXGKARG_DESTROYALLOCATION* p) {
  std::vector<std::string> ids;
  for (UINT i = 0; i < p->NumAllocations; ++i)
    ids.push_back(T().Name(p->pAllocationList[i].handle, "ka"));
  return LoggedKmd(absl::StrFormat("DxgkDdiDestroyAllocation([%s])", absl::StrJoin(ids, ",")),
                   [&] { return T().kmd_->DxgkDdiDestroyAllocation(a, p); });
}

std::string SplitOffsets(const D3DDDI_PATCHLOCATIONLIST* first, const void* end) {
  std::vector<std::string> v;
  for (const auto* e = first; e < static_cast<const D3DDDI_PATCHLOCATIONLIST*>(end); ++e) {
    v.push_back(absl::StrFormat("%u@%u/%u", e->AllocationIndex, e->PatchOffset, e->SplitOffset));
  }
  return absl::StrJoin(v, " ");
}

NTSTATUS APIENTRY KRender(DXGK_HCONTEXT c, DXGKARG_RENDER* p) {
  auto* dma0 = static_cast<uint8_t*>(p->pDmaBuffer);
  auto* patch0 = static_cast<D3DDDI_PATCHLOCATIONLIST*>(p->pPatchLocationListOut);
  return Logged(
      "kmd",
      absl::StrFormat(
          "DxgkDdiRender(%s CommandLength=%u AllocationListSize=%u PatchLocationListInSize=%u "
          "MultipassOffset=%u DmaSize=%u DmaBuffer=0x%x)",
          T().Name(c.handle, "kc"), p->CommandLength, p->AllocationListSize,
          p->PatchLocationListInSize, p->MultipassOffset, p->DmaSize, p->DmaBufferPhysicalAddress),
      [&] { return T().kmd_->DxgkDdiRender(c, p); },
      [&](NTSTATUS s) -> std::string {
        return absl::StrFormat("%s dma=%u MultipassOffset=%u patches(index@patch/split)=[%s]",
                               NtName(s), static_cast<uint8_t*>(p->pDmaBuffer) - dma0,
                               p->MultipassOffset, SplitOffsets(patch0, p->pPatchLocationListOut));
      });
}

NTSTATUS APIENTRY KPresent(DXGK_HCONTEXT c, DXGKARG_PRESENT* p) {
  auto* dma0 = static_cast<uint8_t*>(p->pDmaBuffer);
  auto* patch0 = static_cast<D3DDDI_PATCHLOCATIONLIST*>(p->pPatchLocationList);
  return Logged(
      "kmd",
      absl::StrFormat("DxgkDdiPresent(%s Flags=0x%x DmaSize=%u)", T().Name(c.handle, "kc"),
                      p->Flags, p->DmaSize),
      [&] { return T().kmd_->DxgkDdiPresent(c, p); },
      [&](NTSTATUS s) -> std::string {
        return absl::StrFormat("%s dma=%u patches(index@patch/split)=[%s]", NtName(s),
                               static_cast<uint8_t*>(p->pDmaBuffer) - dma0,
                               SplitOffsets(patch0, p->pPatchLocationList));
      });
}

NTSTATUS APIENTRY KBuildPagingBuffer(DXGK_HADAPTER a, DXGKARG_BUILDPAGINGBUFFER* p) {
  auto* before = static_cast<uint32_t*>(p->pDmaBuffer);
  NTSTATUS s = LoggedKmd(
      absl::StrFormat(
          "DxgkDdiBuildPagingBuffer(Operation=%u %s TransferSize=%u src=%u:0x%x dst=%u:0x%x)",
          p->Operation, T().Name(p->hAllocation.handle, "ka"), p->TransferSize, p->SourceSegmentId,
          p->SourceSegmentAddress, p->DestinationSegmentId, p->DestinationSegmentAddress),
      [&] { return T().kmd_->DxgkDdiBuildPagingBuffer(a, p); });
  if (s == Nt(STATUS_SUCCESS)) {
    DecodeDma(before, 0, static_cast<uint32_t*>(p->pDmaBuffer) - before);
  }
  return s;
}

NTSTATUS APIENTRY KPatch(DXGK_HADAPTER a, const DXGKARG_PATCH* p) {
  NTSTATUS s = LoggedKmd(
      absl::StrFormat("DxgkDdiPatch(%s DmaBuffer=0x%x [%u,%u) patches [%u,+%u) "
                      "SubmissionFenceId=%u Flags=0x%x)",
                      p->hContext.handle ? T().Name(p->hContext.handle, "kc") : "paging",
                      p->DmaBufferPhysicalAddress, p->DmaBufferSubmissionStartOffset,
                      p->DmaBufferSubmissionEndOffset, p->PatchLocationListSubmissionStart,
                      p->PatchLocationListSubmissionLength, p->SubmissionFenceId, p->Flags),
      [&] { return T().kmd_->DxgkDdiPatch(a, p); });
  DecodeDma(static_cast<const uint32_t*>(p->pDmaBuffer), p->DmaBufferSubmissionStartOffset / 4,
            p->DmaBufferSubmissionEndOffset / 4);
  return s;
}

NTSTATUS APIENTRY KSubmitCommand(DXGK_HADAPTER a, const DXGKARG_SUBMITCOMMAND* p) {
  return LoggedKmd(
      absl::StrFormat("DxgkDdiSubmitCommand(%s DmaBuffer=0x%x [%u,%u) SubmissionFenceId=%u "
                      "NodeOrdinal=%u Flags=0x%x)",
                      p->hContext.handle ? T().Name(p->hContext.handle, "kc") : "paging",
                      p->DmaBufferPhysicalAddress, p->DmaBufferSubmissionStartOffset,
                      p->DmaBufferSubmissionEndOffset, p->SubmissionFenceId, p->NodeOrdinal,
                      p->Flags),
      [&] { return T().kmd_->DxgkDdiSubmitCommand(a, p); });
}

BOOL APIENTRY KInterruptRoutine(DXGK_HADAPTER a, UINT msg) {
  return Logged(
      "kmd", absl::StrFormat("DxgkDdiInterruptRoutine(MessageNumber=%u)", msg),
      [&] { return T().kmd_->DxgkDdiInterruptRoutine(a, msg); },
      [&](BOOL b) -> std::string { return b ? "TRUE" : "FALSE"; });
}

void APIENTRY KDpcRoutine(DXGK_HADAPTER a) {
  LoggedVoid("kmd", "DxgkDdiDpcRoutine()", [&] { T().kmd_->DxgkDdiDpcRoutine(a); });
}

NTSTATUS APIENTRY KDestroyContext(DXGK_HCONTEXT c) {
  return LoggedKmd(absl::StrFormat("DxgkDdiDestroyContext(%s)", T().Name(c.handle, "kc")),
                   [&] { return T().kmd_->DxgkDdiDestroyContext(c); });
}

NTSTATUS APIENTRY KDestroyDevice(DXGK_HDEVICE d) {
  return LoggedKmd(absl::StrFormat("DxgkDdiDestroyDevice(%s)", T().Name(d.handle, "kd")),
                   [&] { return T().kmd_->DxgkDdiDestroyDevice(d); });
}

const DRIVER_INITIALIZATION_DATA kKmd = {
    KCreateDevice,  KCreateContext,    KCreateAllocation,  KDestroyAllocation,
    KRender,        KPresent,          KBuildPagingBuffer, KPatch,
    KSubmitCommand, KInterruptRoutine, KDpcRoutine,        KDestroyContext,
    KDestroyDevice,
};

// ---- Dxgkrnl callbacks -----------------------------------------------------------------------
void APIENTRY CbNotifyInterrupt(DXGKRNL_HADAPTER h, const DXGKARGCB_NOTIFY_INTERRUPT_DATA* p) {
  LoggedVoid("dxgkrnl",
             absl::StrFormat("DxgkCbNotifyInterrupt(%s SubmissionFenceId=%u NodeOrdinal=%u)",
                             InterruptName(p->InterruptType), p->SubmissionFenceId, p->NodeOrdinal),
             [&] { T().dxgkrnl_->DxgkCbNotifyInterrupt(h, p); });
}

BOOL APIENTRY CbQueueDpc(DXGKRNL_HADAPTER h) {
  return Logged(
      "dxgkrnl", "DxgkCbQueueDpc()", [&] { return T().dxgkrnl_->DxgkCbQueueDpc(h); },
      [&](BOOL b) -> std::string { return b ? "TRUE" : "FALSE"; });
}

void APIENTRY CbNotifyDpc(DXGKRNL_HADAPTER h) {
  LoggedVoid("dxgkrnl", "DxgkCbNotifyDpc()", [&] { T().dxgkrnl_->DxgkCbNotifyDpc(h); });
}

const DXGKRNL_INTERFACE kDxgkrnl = {CbNotifyInterrupt, CbQueueDpc, CbNotifyDpc};

// ---- GPU observer (our own table) ------------------------------------------------------------
void APIENTRY ObsGpuFenceRetired(DXGKRNL_HADAPTER h, UINT node, UINT64 fence, UINT64 digest,
                                 BOOL paging) {
  LoggedVoid("dxgkrnl",
             absl::StrFormat("GpuFenceRetired(NodeOrdinal=%u FenceId=%u "
                             "ContentDigest=0x%016x%s)",
                             node, fence, digest, paging ? " Paging" : ""),
             [&] { T().observer_->pfnGpuFenceRetired(h, node, fence, digest, paging); });
}

const CLTRACE_GPU_OBSERVER kObserver = {ObsGpuFenceRetired};

}  // namespace

KernelTranscript::KernelTranscript() { g_active = this; }

KernelTranscript::~KernelTranscript() {
  if (g_active == this) g_active = nullptr;
}

TableWrappers KernelTranscript::Wrappers() {
  TableWrappers w;
  w.kmd = [this](const DRIVER_INITIALIZATION_DATA* t) {
    kmd_ = t;
    return &kKmd;
  };
  w.dxgkrnl = [this](const DXGKRNL_INTERFACE* t) {
    dxgkrnl_ = t;
    return &kDxgkrnl;
  };
  w.device_callbacks = [this](const D3DDDI_DEVICECALLBACKS* t) {
    callbacks_ = t;
    return &kCallbacks;
  };
  w.gpu_observer = [this](const CLTRACE_GPU_OBSERVER* t) {
    observer_ = t;
    return &kObserver;
  };
  return w;
}

namespace {
std::string ThreadNow() {
  const char* k = KernelExecutionContext();
  return k == nullptr ? std::string() : std::string(k);
}
}  // namespace

void KernelTranscript::Note(absl::string_view text) {
  lines_.push_back(std::string(text));
  line_thread_.push_back("");
}

size_t KernelTranscript::Begin(absl::string_view layer, std::string call) {
  const VirtualTime t = clock_ ? clock_() : 0;
  const std::string thread = ThreadNow();
  int& depth = depth_[thread];
  const std::string tag = thread.empty() ? std::string() : absl::StrCat("[", thread, "] ");
  lines_.push_back(
      absl::StrFormat("t=%-9u %-12s%s%-8s %s", t, tag, std::string(2 * depth, ' '), layer, call));
  line_thread_.push_back(thread);
  ++depth;
  return lines_.size() - 1;
}

void KernelTranscript::End(size_t line, std::string result) {
  --depth_[line_thread_[line]];
  if (!result.empty()) absl::StrAppend(&lines_[line], " -> ", result);
}

void KernelTranscript::Detail(std::string text) {
  const std::string thread = ThreadNow();
  lines_.push_back(
      absl::StrCat(std::string(24, ' '), std::string(2 * depth_[thread] + 2, ' '), text));
  line_thread_.push_back(thread);
}

std::string KernelTranscript::NewName(const void* p, const char* prefix) {
  std::string name = absl::StrCat(prefix, ++counters_[prefix]);
  names_[p] = name;
  return name;
}

std::string KernelTranscript::Name(const void* p, const char* prefix) {
  if (p == nullptr) return "null";
  auto it = names_.find(p);
  if (it != names_.end()) return it->second;
  return NewName(p, prefix);
}

std::string KernelTranscript::Text() const {
  return absl::StrCat(absl::StrJoin(lines_, "\n"), "\n");
}

}  // namespace cltrace::gpu
