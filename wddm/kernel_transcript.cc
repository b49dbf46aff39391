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

std::string HrName(int32_t v) {
  switch (static_cast<uint32_t>(v)) {
    case S_OK:
      return "S_OK";
    case E_OUTOFMEMORY:
      return "E_OUTOFMEMORY";
    case E_INVALIDARG:
      return "E_INVALIDARG";
    case D3DDDIERR_WASSTILLDRAWING:
      return "D3DDDIERR_WASSTILLDRAWING";
    case D3DDDIERR_DEVICEREMOVED:
      return "D3DDDIERR_DEVICEREMOVED";
    case D3DDDIERR_PRIVILEGEDINSTRUCTION:
      return "D3DDDIERR_PRIVILEGEDINSTRUCTION";
    case D3DDDIERR_INVALIDINSTRUCTION:
      return "D3DDDIERR_INVALIDINSTRUCTION";
    case D3DDDIERR_INVALIDHANDLE:
      return "D3DDDIERR_INVALIDHANDLE";
    case D3DDDIERR_CANTRENDERLOCKEDALLOCATION:
      return "D3DDDIERR_CANTRENDERLOCKEDALLOCATION";
    case D3DDDIERR_INVALIDUSERBUFFER:
      return "D3DDDIERR_INVALIDUSERBUFFER";
  }
  return absl::StrFormat("0x%08x", static_cast<uint32_t>(v));
}

std::string NtName(int32_t v) {
  switch (static_cast<uint32_t>(v)) {
    case STATUS_SUCCESS:
      return "STATUS_SUCCESS";
    case STATUS_INVALID_PARAMETER:
      return "STATUS_INVALID_PARAMETER";
    case STATUS_NO_MEMORY:
      return "STATUS_NO_MEMORY";
    case STATUS_ILLEGAL_INSTRUCTION:
      return "STATUS_ILLEGAL_INSTRUCTION";
    case STATUS_PRIVILEGED_INSTRUCTION:
      return "STATUS_PRIVILEGED_INSTRUCTION";
    case STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER:
      return "STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER";
    case STATUS_GRAPHICS_INVALID_USER_BUFFER:
      return "STATUS_GRAPHICS_INVALID_USER_BUFFER";
    case STATUS_GRAPHICS_GPU_EXCEPTION_ON_DEVICE:
      return "STATUS_GRAPHICS_GPU_EXCEPTION_ON_DEVICE";
    case STATUS_INVALID_HANDLE:
      return "STATUS_INVALID_HANDLE";
  }
  return absl::StrFormat("0x%08x", static_cast<uint32_t>(v));
}

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

std::string CtxName(D3DKMT_HCONTEXT h) { return absl::StrCat("ctx", h.value); }
std::string AllocName(D3DKMT_HALLOCATION h) { return absl::StrCat("a", h.value); }

// ---- kernel-thunk callbacks ----------------------------------------------------------------
HRESULT APIENTRY AllocateCb(D3DRTDEVICEHANDLE h, D3DDDICB_ALLOCATE* p) {
  std::vector<std::string> sizes;
  for (UINT i = 0; i < p->NumAllocations; ++i) {
    AllocationDesc d;
    if (p->pAllocationInfo[i].PrivateDriverDataSize == sizeof(d)) {
      std::memcpy(&d, p->pAllocationInfo[i].pPrivateDriverData, sizeof(d));
      sizes.push_back(absl::StrCat(d.size, (d.flags & kAllocationDescPrimary) ? "p" : ""));
    }
  }
  size_t l = T().Begin("kernelcb",
                       absl::StrFormat("AllocateCb(%s n=%u size=[%s]%s)", T().Name(h.handle, "dev"),
                                       p->NumAllocations, absl::StrJoin(sizes, ","),
                                       p->hResource.handle ? " resource" : ""));
  HRESULT hr = T().callbacks_->pfnAllocateCb(h, p);
  std::vector<std::string> out;
  for (UINT i = 0; i < p->NumAllocations; ++i)
    out.push_back(AllocName(p->pAllocationInfo[i].hAllocation));
  T().End(l, absl::StrFormat(
                 "%s [%s]%s", HrName(hr), absl::StrJoin(out, ","),
                 p->hKMResource.value ? absl::StrCat(" kmres=", p->hKMResource.value) : ""));
  return hr;
}

HRESULT APIENTRY DeallocateCb(D3DRTDEVICEHANDLE h, const D3DDDICB_DEALLOCATE* p) {
  std::vector<std::string> ids;
  for (UINT i = 0; i < p->NumAllocations; ++i) ids.push_back(AllocName(p->HandleList[i]));
  size_t l = T().Begin("kernelcb",
                       absl::StrFormat("DeallocateCb(%s res=%u [%s])", T().Name(h.handle, "dev"),
                                       p->hResource.value, absl::StrJoin(ids, ",")));
  HRESULT hr = T().callbacks_->pfnDeallocateCb(h, p);
  T().End(l, HrName(hr));
  return hr;
}

HRESULT APIENTRY SetPriorityCb(D3DRTDEVICEHANDLE h, const D3DDDICB_SETPRIORITY* p) {
  size_t l = T().Begin("kernelcb", absl::StrFormat("SetPriorityCb(%s n=%u)",
                                                   T().Name(h.handle, "dev"), p->NumAllocations));
  HRESULT hr = T().callbacks_->pfnSetPriorityCb(h, p);
  T().End(l, HrName(hr));
  return hr;
}

HRESULT APIENTRY QueryResidencyCb(D3DRTDEVICEHANDLE h, const D3DDDICB_QUERYRESIDENCY* p) {
  size_t l = T().Begin("kernelcb", absl::StrFormat("QueryResidencyCb(%s n=%u)",
                                                   T().Name(h.handle, "dev"), p->NumAllocations));
  HRESULT hr = T().callbacks_->pfnQueryResidencyCb(h, p);
  std::vector<std::string> st;
  for (UINT i = 0; !Failed(hr) && i < p->NumAllocations; ++i)
    st.push_back(absl::StrCat(p->pResidencyStatus[i]));
  T().End(l, absl::StrFormat("%s [%s]", HrName(hr), absl::StrJoin(st, ",")));
  return hr;
}

HRESULT APIENTRY SetDisplayModeCb(D3DRTDEVICEHANDLE h, D3DDDICB_SETDISPLAYMODE* p) {
  size_t l = T().Begin("kernelcb",
                       absl::StrFormat("SetDisplayModeCb(%s primary=%s)", T().Name(h.handle, "dev"),
                                       AllocName(p->hPrimaryAllocation)));
  HRESULT hr = T().callbacks_->pfnSetDisplayModeCb(h, p);
  T().End(l, HrName(hr));
  return hr;
}

HRESULT APIENTRY PresentCb(D3DRTDEVICEHANDLE h, const D3DDDICB_PRESENT* p) {
  size_t l = T().Begin("kernelcb",
                       absl::StrFormat("PresentCb(%s %s src=%s dst=%s)", T().Name(h.handle, "dev"),
                                       CtxName(p->hContext), AllocName(p->hSrcAllocation),
                                       AllocName(p->hDstAllocation)));
  HRESULT hr = T().callbacks_->pfnPresentCb(h, p);
  T().End(l, HrName(hr));
  return hr;
}

HRESULT APIENTRY RenderCb(D3DRTDEVICEHANDLE h, D3DDDICB_RENDER* p) {
  size_t l = T().Begin(
      "kernelcb",
      absl::StrFormat(
          "RenderCb(%s %s CommandOffset=%u CommandLength=%u NumAllocations=%u NumPatchLocations=%u "
          "Flags=0x%x)",
          T().Name(h.handle, "dev"), CtxName(p->hContext), p->CommandOffset, p->CommandLength,
          p->NumAllocations, p->NumPatchLocations, p->Flags));
  HRESULT hr = T().callbacks_->pfnRenderCb(h, p);
  T().End(l, absl::StrFormat("%s NewCommandBufferSize=%u NewAllocationListSize=%u "
                             "NewPatchLocationListSize=%u QueuedBufferCount=%u",
                             HrName(hr), p->NewCommandBufferSize, p->NewAllocationListSize,
                             p->NewPatchLocationListSize, p->QueuedBufferCount));
  return hr;
}

HRESULT APIENTRY LockCb(D3DRTDEVICEHANDLE h, D3DDDICB_LOCK* p) {
  size_t l =
      T().Begin("kernelcb", absl::StrFormat("LockCb(%s %s Flags=0x%x)", T().Name(h.handle, "dev"),
                                            AllocName(p->hAllocation), p->Flags));
  HRESULT hr = T().callbacks_->pfnLockCb(h, p);
  T().End(l, HrName(hr));
  return hr;
}

HRESULT APIENTRY UnlockCb(D3DRTDEVICEHANDLE h, const D3DDDICB_UNLOCK* p) {
  size_t l = T().Begin("kernelcb", absl::StrFormat("UnlockCb(%s n=%u)", T().Name(h.handle, "dev"),
                                                   p->NumAllocations));
  HRESULT hr = T().callbacks_->pfnUnlockCb(h, p);
  T().End(l, HrName(hr));
  return hr;
}

HRESULT APIENTRY EscapeCb(D3DRTDEVICEHANDLE h, const D3DDDICB_ESCAPE* p) {
  size_t l = T().Begin(
      "kernelcb",
      absl::StrFormat("EscapeCb(%s size=%u)", T().Name(h.handle, "dev"), p->PrivateDriverDataSize));
  HRESULT hr = T().callbacks_->pfnEscapeCb(h, p);
  T().End(l, HrName(hr));
  return hr;
}

HRESULT APIENTRY CreateContextCb(D3DRTDEVICEHANDLE h, D3DDDICB_CREATECONTEXT* p) {
  size_t l = T().Begin("kernelcb", absl::StrFormat("CreateContextCb(%s NodeOrdinal=%u)",
                                                   T().Name(h.handle, "dev"), p->NodeOrdinal));
  HRESULT hr = T().callbacks_->pfnCreateContextCb(h, p);
  T().End(l, absl::StrFormat("%s %s CommandBufferSize=%u AllocationListSize=%u "
                             "PatchLocationListSize=%u",
                             HrName(hr), CtxName(p->hContext), p->CommandBufferSize,
                             p->AllocationListSize, p->PatchLocationListSize));
  return hr;
}

HRESULT APIENTRY DestroyContextCb(D3DRTDEVICEHANDLE h, const D3DDDICB_DESTROYCONTEXT* p) {
  size_t l = T().Begin(
      "kernelcb",
      absl::StrFormat("DestroyContextCb(%s %s)", T().Name(h.handle, "dev"), CtxName(p->hContext)));
  HRESULT hr = T().callbacks_->pfnDestroyContextCb(h, p);
  T().End(l, HrName(hr));
  return hr;
}

HRESULT APIENTRY CreateSyncCb(D3DRTDEVICEHANDLE h, D3DDDICB_CREATESYNCHRONIZATIONOBJECT* p) {
  size_t l = T().Begin("kernelcb", absl::StrFormat("CreateSynchronizationObjectCb(%s type=%u)",
                                                   T().Name(h.handle, "dev"), p->Info.Type));
  HRESULT hr = T().callbacks_->pfnCreateSynchronizationObjectCb(h, p);
  T().End(l, absl::StrFormat("%s sync%u", HrName(hr), p->hSyncObject.value));
  return hr;
}

HRESULT APIENTRY DestroySyncCb(D3DRTDEVICEHANDLE h,
                               const D3DDDICB_DESTROYSYNCHRONIZATIONOBJECT* p) {
  size_t l =
      T().Begin("kernelcb", absl::StrFormat("DestroySynchronizationObjectCb(%s sync%u)",
                                            T().Name(h.handle, "dev"), p->hSyncObject.value));
  HRESULT hr = T().callbacks_->pfnDestroySynchronizationObjectCb(h, p);
  T().End(l, HrName(hr));
  return hr;
}

std::string SyncList(UINT n, const D3DKMT_HSYNCOBJECT* a) {
  std::vector<std::string> v;
  for (UINT i = 0; i < n && i < 32; ++i) v.push_back(absl::StrCat("sync", a[i].value));
  return absl::StrJoin(v, ",");
}

HRESULT APIENTRY WaitSyncCb(D3DRTDEVICEHANDLE h, const D3DDDICB_WAITFORSYNCHRONIZATIONOBJECT* p) {
  size_t l = T().Begin("kernelcb", absl::StrFormat("WaitForSynchronizationObjectCb(%s %s [%s])",
                                                   T().Name(h.handle, "dev"), CtxName(p->hContext),
                                                   SyncList(p->ObjectCount, p->ObjectHandleArray)));
  HRESULT hr = T().callbacks_->pfnWaitForSynchronizationObjectCb(h, p);
  T().End(l, HrName(hr));
  return hr;
}

HRESULT APIENTRY SignalSyncCb(D3DRTDEVICEHANDLE h, const D3DDDICB_SIGNALSYNCHRONIZATIONOBJECT* p) {
  size_t l = T().Begin("kernelcb", absl::StrFormat("SignalSynchronizationObjectCb(%s %s [%s])",
                                                   T().Name(h.handle, "dev"), CtxName(p->hContext),
                                                   SyncList(p->ObjectCount, p->ObjectHandleArray)));
  HRESULT hr = T().callbacks_->pfnSignalSynchronizationObjectCb(h, p);
  T().End(l, HrName(hr));
  return hr;
}

const D3DDDI_DEVICECALLBACKS kCallbacks = {
    AllocateCb,       DeallocateCb,  SetPriorityCb,   QueryResidencyCb,
    SetDisplayModeCb, PresentCb,     RenderCb,        LockCb,
    UnlockCb,         EscapeCb,      CreateContextCb, DestroyContextCb,
    CreateSyncCb,     DestroySyncCb, WaitSyncCb,      SignalSyncCb,
};

// ---- KMD entry points ------------------------------------------------------------------------
NTSTATUS APIENTRY KCreateDevice(DXGK_HADAPTER a, DXGKARG_CREATEDEVICE* p) {
  size_t l = T().Begin("kmd", absl::StrFormat("DxgkDdiCreateDevice(Flags=0x%x)", p->Flags));
  NTSTATUS s = T().kmd_->DxgkDdiCreateDevice(a, p);
  std::string info;
  if (p->pInfo != nullptr) {
    info = absl::StrFormat(" DmaBufferSize=%u AllocationListSize=%u PatchLocationListSize=%u",
                           p->pInfo->DmaBufferSize, p->pInfo->AllocationListSize,
                           p->pInfo->PatchLocationListSize);
  }
  T().End(l, absl::StrCat(NtName(s), " ", T().NewName(p->hDevice.handle, "kd"), info));
  return s;
}

NTSTATUS APIENTRY KCreateContext(DXGK_HDEVICE d, DXGKARG_CREATECONTEXT* p) {
  size_t l = T().Begin("kmd", absl::StrFormat("DxgkDdiCreateContext(%s NodeOrdinal=%u)",
                                              T().Name(d.handle, "kd"), p->NodeOrdinal));
  NTSTATUS s = T().kmd_->DxgkDdiCreateContext(d, p);
  T().End(l, absl::StrFormat("%s %s DmaBufferSize=%u", NtName(s),
                             T().NewName(p->hContext.handle, "kc"), p->ContextInfo.DmaBufferSize));
  return s;
}

NTSTATUS APIENTRY KCreateAllocation(DXGK_HADAPTER a, DXGKARG_CREATEALLOCATION* p) {
  size_t l = T().Begin(
      "kmd", absl::StrFormat("DxgkDdiCreateAllocation(NumAllocations=%u)", p->NumAllocations));
  NTSTATUS s = T().kmd_->DxgkDdiCreateAllocation(a, p);
  std::vector<std::string> out;
  for (UINT i = 0; s == Nt(STATUS_SUCCESS) && i < p->NumAllocations; ++i) {
    out.push_back(absl::StrFormat("%s Size=%u",
                                  T().NewName(p->pAllocationInfo[i].hAllocation.handle, "ka"),
                                  p->pAllocationInfo[i].Size));
  }
  T().End(l, absl::StrFormat("%s [%s]", NtName(s), absl::StrJoin(out, ", ")));
  return s;
}

NTSTATUS APIENTRY KDestroyAllocation(DXGK_HADAPTER a, const DXGKARG_DESTROYALLOCATION* p) {
  std::vector<std::string> ids;
  for (UINT i = 0; i < p->NumAllocations; ++i)
    ids.push_back(T().Name(p->pAllocationList[i].handle, "ka"));
  size_t l =
      T().Begin("kmd", absl::StrFormat("DxgkDdiDestroyAllocation([%s])", absl::StrJoin(ids, ",")));
  NTSTATUS s = T().kmd_->DxgkDdiDestroyAllocation(a, p);
  T().End(l, NtName(s));
  return s;
}

std::string SplitOffsets(const D3DDDI_PATCHLOCATIONLIST* first, const void* end) {
  std::vector<std::string> v;
  for (const auto* e = first; e < static_cast<const D3DDDI_PATCHLOCATIONLIST*>(end); ++e) {
    v.push_back(absl::StrFormat("%u@%u/%u", e->AllocationIndex, e->PatchOffset, e->SplitOffset));
  }
  return absl::StrJoin(v, " ");
}

NTSTATUS APIENTRY KRender(DXGK_HCONTEXT c, DXGKARG_RENDER* p) {
  size_t l = T().Begin(
      "kmd",
      absl::StrFormat(
          "DxgkDdiRender(%s CommandLength=%u AllocationListSize=%u PatchLocationListInSize=%u "
          "MultipassOffset=%u DmaSize=%u DmaBuffer=0x%x)",
          T().Name(c.handle, "kc"), p->CommandLength, p->AllocationListSize,
          p->PatchLocationListInSize, p->MultipassOffset, p->DmaSize, p->DmaBufferPhysicalAddress));
  auto* dma0 = static_cast<uint8_t*>(p->pDmaBuffer);
  auto* patch0 = static_cast<D3DDDI_PATCHLOCATIONLIST*>(p->pPatchLocationListOut);
  NTSTATUS s = T().kmd_->DxgkDdiRender(c, p);
  T().End(l, absl::StrFormat("%s dma=%u MultipassOffset=%u patches(index@patch/split)=[%s]",
                             NtName(s), static_cast<uint8_t*>(p->pDmaBuffer) - dma0,
                             p->MultipassOffset, SplitOffsets(patch0, p->pPatchLocationListOut)));
  return s;
}

NTSTATUS APIENTRY KPresent(DXGK_HCONTEXT c, DXGKARG_PRESENT* p) {
  size_t l = T().Begin("kmd", absl::StrFormat("DxgkDdiPresent(%s Flags=0x%x DmaSize=%u)",
                                              T().Name(c.handle, "kc"), p->Flags, p->DmaSize));
  auto* dma0 = static_cast<uint8_t*>(p->pDmaBuffer);
  auto* patch0 = static_cast<D3DDDI_PATCHLOCATIONLIST*>(p->pPatchLocationList);
  NTSTATUS s = T().kmd_->DxgkDdiPresent(c, p);
  T().End(l, absl::StrFormat("%s dma=%u patches(index@patch/split)=[%s]", NtName(s),
                             static_cast<uint8_t*>(p->pDmaBuffer) - dma0,
                             SplitOffsets(patch0, p->pPatchLocationList)));
  return s;
}

NTSTATUS APIENTRY KBuildPagingBuffer(DXGK_HADAPTER a, DXGKARG_BUILDPAGINGBUFFER* p) {
  size_t l = T().Begin(
      "kmd",
      absl::StrFormat(
          "DxgkDdiBuildPagingBuffer(Operation=%u %s TransferSize=%u src=%u:0x%x dst=%u:0x%x)",
          p->Operation, T().Name(p->hAllocation.handle, "ka"), p->TransferSize, p->SourceSegmentId,
          p->SourceSegmentAddress, p->DestinationSegmentId, p->DestinationSegmentAddress));
  auto* before = static_cast<uint32_t*>(p->pDmaBuffer);
  NTSTATUS s = T().kmd_->DxgkDdiBuildPagingBuffer(a, p);
  T().End(l, NtName(s));
  if (s == Nt(STATUS_SUCCESS)) {
    DecodeDma(before, 0, static_cast<uint32_t*>(p->pDmaBuffer) - before);
  }
  return s;
}

NTSTATUS APIENTRY KPatch(DXGK_HADAPTER a, const DXGKARG_PATCH* p) {
  size_t l = T().Begin(
      "kmd", absl::StrFormat("DxgkDdiPatch(%s DmaBuffer=0x%x [%u,%u) patches [%u,+%u) "
                             "SubmissionFenceId=%u Flags=0x%x)",
                             p->hContext.handle ? T().Name(p->hContext.handle, "kc") : "paging",
                             p->DmaBufferPhysicalAddress, p->DmaBufferSubmissionStartOffset,
                             p->DmaBufferSubmissionEndOffset, p->PatchLocationListSubmissionStart,
                             p->PatchLocationListSubmissionLength, p->SubmissionFenceId, p->Flags));
  NTSTATUS s = T().kmd_->DxgkDdiPatch(a, p);
  T().End(l, NtName(s));
  DecodeDma(static_cast<const uint32_t*>(p->pDmaBuffer), p->DmaBufferSubmissionStartOffset / 4,
            p->DmaBufferSubmissionEndOffset / 4);
  return s;
}

NTSTATUS APIENTRY KSubmitCommand(DXGK_HADAPTER a, const DXGKARG_SUBMITCOMMAND* p) {
  size_t l = T().Begin(
      "kmd", absl::StrFormat("DxgkDdiSubmitCommand(%s DmaBuffer=0x%x [%u,%u) SubmissionFenceId=%u "
                             "NodeOrdinal=%u Flags=0x%x)",
                             p->hContext.handle ? T().Name(p->hContext.handle, "kc") : "paging",
                             p->DmaBufferPhysicalAddress, p->DmaBufferSubmissionStartOffset,
                             p->DmaBufferSubmissionEndOffset, p->SubmissionFenceId, p->NodeOrdinal,
                             p->Flags));
  NTSTATUS s = T().kmd_->DxgkDdiSubmitCommand(a, p);
  T().End(l, NtName(s));
  return s;
}

BOOL APIENTRY KInterruptRoutine(DXGK_HADAPTER a, UINT msg) {
  size_t l = T().Begin("kmd", absl::StrFormat("DxgkDdiInterruptRoutine(MessageNumber=%u)", msg));
  BOOL b = T().kmd_->DxgkDdiInterruptRoutine(a, msg);
  T().End(l, b ? "TRUE" : "FALSE");
  return b;
}

void APIENTRY KDpcRoutine(DXGK_HADAPTER a) {
  size_t l = T().Begin("kmd", "DxgkDdiDpcRoutine()");
  T().kmd_->DxgkDdiDpcRoutine(a);
  T().End(l, "");
}

NTSTATUS APIENTRY KDestroyContext(DXGK_HCONTEXT c) {
  size_t l =
      T().Begin("kmd", absl::StrFormat("DxgkDdiDestroyContext(%s)", T().Name(c.handle, "kc")));
  NTSTATUS s = T().kmd_->DxgkDdiDestroyContext(c);
  T().End(l, NtName(s));
  return s;
}

NTSTATUS APIENTRY KDestroyDevice(DXGK_HDEVICE d) {
  size_t l =
      T().Begin("kmd", absl::StrFormat("DxgkDdiDestroyDevice(%s)", T().Name(d.handle, "kd")));
  NTSTATUS s = T().kmd_->DxgkDdiDestroyDevice(d);
  T().End(l, NtName(s));
  return s;
}

const DRIVER_INITIALIZATION_DATA kKmd = {
    KCreateDevice,  KCreateContext,    KCreateAllocation,  KDestroyAllocation,
    KRender,        KPresent,          KBuildPagingBuffer, KPatch,
    KSubmitCommand, KInterruptRoutine, KDpcRoutine,        KDestroyContext,
    KDestroyDevice,
};

// ---- Dxgkrnl callbacks -----------------------------------------------------------------------
void APIENTRY CbNotifyInterrupt(DXGKRNL_HADAPTER h, const DXGKARGCB_NOTIFY_INTERRUPT_DATA* p) {
  size_t l = T().Begin(
      "dxgkrnl",
      absl::StrFormat("DxgkCbNotifyInterrupt(%s SubmissionFenceId=%u NodeOrdinal=%u)",
                      InterruptName(p->InterruptType), p->SubmissionFenceId, p->NodeOrdinal));
  T().dxgkrnl_->DxgkCbNotifyInterrupt(h, p);
  T().End(l, "");
}

BOOL APIENTRY CbQueueDpc(DXGKRNL_HADAPTER h) {
  size_t l = T().Begin("dxgkrnl", "DxgkCbQueueDpc()");
  BOOL b = T().dxgkrnl_->DxgkCbQueueDpc(h);
  T().End(l, b ? "TRUE" : "FALSE");
  return b;
}

void APIENTRY CbNotifyDpc(DXGKRNL_HADAPTER h) {
  size_t l = T().Begin("dxgkrnl", "DxgkCbNotifyDpc()");
  T().dxgkrnl_->DxgkCbNotifyDpc(h);
  T().End(l, "");
}

const DXGKRNL_INTERFACE kDxgkrnl = {CbNotifyInterrupt, CbQueueDpc, CbNotifyDpc};

// ---- GPU observer (our own table) ------------------------------------------------------------
void APIENTRY ObsGpuFenceRetired(DXGKRNL_HADAPTER h, UINT node, UINT64 fence, UINT64 digest,
                                 BOOL paging) {
  size_t l = T().Begin("dxgkrnl", absl::StrFormat("GpuFenceRetired(NodeOrdinal=%u FenceId=%u "
                                                  "ContentDigest=0x%016x%s)",
                                                  node, fence, digest, paging ? " Paging" : ""));
  T().observer_->pfnGpuFenceRetired(h, node, fence, digest, paging);
  T().End(l, "");
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
