#include "wddm/model_kmd.h"

#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "wddm/command_stream.h"
#include "wddm/internal/vidmm.h"
#include "wddm/kernel_abi.h"

namespace cltrace::gpu {

struct ModelKmd::Device {
  ModelKmd* kmd;
  DXGK_DEVICEINFO info{};
};

struct ModelKmd::Context {
  Device* device;
  uint32_t node = 0;
};

struct ModelKmd::Allocation {
  uint64_t size = 0;
  uint32_t flags = 0;
};

namespace {

// The fence command every DMA buffer ends with (patched with the SubmissionFenceId).
const uint32_t kFenceWords = EncodedWords(Command::Fence(0), CommandFormat::kDma);

ModelKmd::Allocation* AllocOf(const DXGK_ALLOCATIONLIST& e) {
  return static_cast<ModelKmd::Allocation*>(e.hDeviceSpecificAllocation.handle);
}

NTSTATUS StatusForDecodeError(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kPermissionDenied:
      return Nt(STATUS_PRIVILEGED_INSTRUCTION);
    case absl::StatusCode::kInvalidArgument:
      return Nt(STATUS_ILLEGAL_INSTRUCTION);
    default:
      return Nt(STATUS_INVALID_USER_BUFFER);
  }
}

// Checks the operands of a decoded user command against the allocation list.
NTSTATUS ValidateOperands(const Command& c, const DXGK_ALLOCATIONLIST* list, uint32_t count) {
  for (uint64_t slot : c.refs) {
    if (slot >= count || AllocOf(list[slot]) == nullptr) return Nt(STATUS_INVALID_HANDLE);
  }
  auto size_of = [&](size_t i) { return AllocOf(list[c.refs[i]])->size; };
  auto fits = [](uint64_t off, uint64_t len, uint64_t size) {
    return off <= size && len <= size - off;
  };
  switch (c.op) {
    case Opcode::kUpdate:
      if (!fits(c.offset, c.size, size_of(0))) return Nt(STATUS_INVALID_USER_BUFFER);
      break;
    case Opcode::kCopyRegion:
      if (!fits(c.offset, c.size, size_of(0)) || !fits(c.src_offset, c.size, size_of(1))) {
        return Nt(STATUS_INVALID_USER_BUFFER);
      }
      break;
    default:
      break;
  }
  return Nt(STATUS_SUCCESS);
}

}  // namespace

// The C entry points: each recovers the object from its handle and forwards.
struct KmdEntryPoints {
  static NTSTATUS APIENTRY CreateDevice(DXGK_HADAPTER a, DXGKARG_CREATEDEVICE* p) {
    auto* kmd = static_cast<ModelKmd*>(a.handle);
    auto* dev = new ModelKmd::Device{kmd, {}};
    dev->info.DmaBufferSize = kmd->options_.dma_buffer_size;
    dev->info.DmaBufferSegmentSet = 0;  // DMA buffers live in system memory (aperture)
    dev->info.DmaBufferPrivateDataSize = 0;
    dev->info.AllocationListSize = kmd->options_.allocation_list_size;
    dev->info.PatchLocationListSize = kmd->options_.patch_location_list_size;
    dev->info.Flags = 0;
    p->hDevice.handle = dev;
    p->pInfo = &dev->info;
    return Nt(STATUS_SUCCESS);
  }

  static NTSTATUS APIENTRY CreateContext(DXGK_HDEVICE d, DXGKARG_CREATECONTEXT* p) {
    auto* dev = static_cast<ModelKmd::Device*>(d.handle);
    if (p->NodeOrdinal >= dev->kmd->hw_->num_nodes()) return Nt(STATUS_INVALID_PARAMETER);
    auto* ctx = new ModelKmd::Context{dev, p->NodeOrdinal};
    p->hContext.handle = ctx;
    p->ContextInfo.DmaBufferSize = dev->info.DmaBufferSize;
    p->ContextInfo.DmaBufferSegmentSet = 0;
    p->ContextInfo.DmaBufferPrivateDataSize = 0;
    p->ContextInfo.AllocationListSize = dev->info.AllocationListSize;
    p->ContextInfo.PatchLocationListSize = dev->info.PatchLocationListSize;
    return Nt(STATUS_SUCCESS);
  }

  static NTSTATUS APIENTRY CreateAllocation(DXGK_HADAPTER, DXGKARG_CREATEALLOCATION* p) {
    if (p->NumAllocations == 0 || p->pAllocationInfo == nullptr) {
      return Nt(STATUS_INVALID_PARAMETER);
    }
    // Validate everything first so a failure creates nothing.
    for (UINT i = 0; i < p->NumAllocations; ++i) {
      const DXGK_ALLOCATIONINFO& info = p->pAllocationInfo[i];
      AllocationDesc desc;
      if (info.pPrivateDriverData == nullptr || info.PrivateDriverDataSize != sizeof(desc)) {
        return Nt(STATUS_INVALID_PARAMETER);
      }
      std::memcpy(&desc, info.pPrivateDriverData, sizeof(desc));
      if (desc.magic != AllocationDesc::kMagic || desc.size == 0 ||
          (desc.alignment & (desc.alignment - 1)) != 0) {
        return Nt(STATUS_INVALID_PARAMETER);
      }
    }
    for (UINT i = 0; i < p->NumAllocations; ++i) {
      DXGK_ALLOCATIONINFO& info = p->pAllocationInfo[i];
      AllocationDesc desc;
      std::memcpy(&desc, info.pPrivateDriverData, sizeof(desc));
      auto* alloc = new ModelKmd::Allocation{desc.size, desc.flags};
      info.Alignment = desc.alignment;
      info.Size = static_cast<SIZE_T>(desc.size);
      // Segment sets are bit masks of segment ids (bit 0 = segment 1, the video segment).
      info.SupportedReadSegmentSet = 1u << (internal::kVideoSegmentId - 1);
      info.SupportedWriteSegmentSet = 1u << (internal::kVideoSegmentId - 1);
      info.EvictionSegmentSet = 0;  // evicted to system memory
      info.hAllocation.handle = alloc;
      info.Flags =
          (desc.flags & kAllocationDescCpuVisible) ? DXGK_ALLOCATIONINFOFLAGS_CPUVISIBLE : 0;
    }
    return Nt(STATUS_SUCCESS);
  }

  static NTSTATUS APIENTRY DestroyAllocation(DXGK_HADAPTER, const DXGKARG_DESTROYALLOCATION* p) {
    for (UINT i = 0; i < p->NumAllocations; ++i) {
      delete static_cast<ModelKmd::Allocation*>(p->pAllocationList[i].handle);
    }
    return Nt(STATUS_SUCCESS);
  }

  static NTSTATUS APIENTRY Render(DXGK_HCONTEXT h, DXGKARG_RENDER* p) {
    auto* ctx = static_cast<ModelKmd::Context*>(h.handle);
    ModelKmd* kmd = ctx->device->kmd;
    ++kmd->renders_;
    if (p->CommandLength % 4 != 0 || p->MultipassOffset % 4 != 0 ||
        p->MultipassOffset > p->CommandLength) {
      return Nt(STATUS_INVALID_USER_BUFFER);
    }
    absl::Span<const uint32_t> cmd(static_cast<const uint32_t*>(p->pCommand), p->CommandLength / 4);
    // The UMD's patch list must point at the reference words of its own commands.
    for (UINT i = 0; i < p->PatchLocationListInSize; ++i) {
      const D3DDDI_PATCHLOCATIONLIST& e = p->pPatchLocationListIn[i];
      if (e.AllocationIndex >= p->AllocationListSize || e.PatchOffset % 4 != 0 ||
          e.PatchOffset >= p->CommandLength || cmd[e.PatchOffset / 4] != e.AllocationIndex) {
        return Nt(STATUS_INVALID_USER_BUFFER);
      }
    }
    auto* dma = static_cast<uint32_t*>(p->pDmaBuffer);
    const size_t dma_cap = p->DmaSize / 4;
    auto* patch = static_cast<D3DDDI_PATCHLOCATIONLIST*>(p->pPatchLocationListOut);
    const size_t patch_cap = p->PatchLocationListOutSize;
    size_t written = 0, patches = 0;
    size_t pos = p->MultipassOffset / 4;
    std::vector<uint32_t> ref_offsets;
    while (pos < cmd.size()) {
      Command c;
      auto len = DecodeCommand(cmd, pos, CommandFormat::kUser, &c);
      if (!len.ok()) return StatusForDecodeError(len.status());
      NTSTATUS v = ValidateOperands(c, p->pAllocationList, p->AllocationListSize);
      if (v != Nt(STATUS_SUCCESS)) return v;
      Command out = c;
      for (uint64_t& r : out.refs) r = 0;  // placeholder until DxgkDdiPatch
      const uint32_t need = EncodedWords(out, CommandFormat::kDma);
      if (written + need + kFenceWords > dma_cap || patches + c.refs.size() > patch_cap) {
        if (written == 0) return Nt(STATUS_NO_MEMORY);  // cannot fit even alone
        break;
      }
      ref_offsets.clear();
      EncodeCommand(out, CommandFormat::kDma, absl::MakeSpan(dma + written, dma_cap - written),
                    &ref_offsets);
      for (size_t k = 0; k < ref_offsets.size(); ++k) {
        D3DDDI_PATCHLOCATIONLIST& e = patch[patches++];
        e.AllocationIndex = static_cast<UINT>(c.refs[k]);
        e.SlotId = static_cast<UINT>(k);
        e.DriverId = 0;
        e.AllocationOffset = 0;
        e.PatchOffset = static_cast<UINT>((written + ref_offsets[k]) * 4);
        e.SplitOffset = static_cast<UINT>(written * 4);  // a split may start at this command
      }
      written += need;
      pos += *len;
    }
    if (kmd->options_.bug == PlantedBug::kR78SplitOffsetOrder && patches >= 2 &&
        patch[patches - 1].SplitOffset > 0) {
      patch[patches - 1].SplitOffset = 0;  // planted: the last split point goes backwards
    }
    EncodeCommand(Command::Fence(0), CommandFormat::kDma,
                  absl::MakeSpan(dma + written, dma_cap - written), nullptr);
    written += kFenceWords;
    p->pDmaBuffer = dma + written;
    p->pPatchLocationListOut = patch + patches;
    if (pos < cmd.size()) {
      ++kmd->multipass_;
      p->MultipassOffset = static_cast<UINT>(pos * 4);
      return Nt(STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER);
    }
    p->MultipassOffset = p->CommandLength;
    return Nt(STATUS_SUCCESS);
  }

  static NTSTATUS APIENTRY Present(DXGK_HCONTEXT h, DXGKARG_PRESENT* p) {
    auto* ctx = static_cast<ModelKmd::Context*>(h.handle);
    ++ctx->device->kmd->renders_;
    // Allocation list: [0] source (back buffer), [1] destination (primary).
    if (p->AllocationListSize < 2 || AllocOf(p->pAllocationList[0]) == nullptr ||
        AllocOf(p->pAllocationList[1]) == nullptr) {
      return Nt(STATUS_INVALID_PARAMETER);
    }
    if (p->PatchLocationListSize < 2) return Nt(STATUS_NO_MEMORY);
    Command blt = Command::PresentBlt(0, 0);
    const uint32_t need = EncodedWords(blt, CommandFormat::kDma) + kFenceWords;
    if (need * 4 > p->DmaSize) return Nt(STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER);
    auto* dma = static_cast<uint32_t*>(p->pDmaBuffer);
    std::vector<uint32_t> refs;
    EncodeCommand(blt, CommandFormat::kDma, absl::MakeSpan(dma, need), &refs);
    auto* patch = static_cast<D3DDDI_PATCHLOCATIONLIST*>(p->pPatchLocationList);
    const UINT slot_of[2] = {1, 0};  // refs[0] = destination, refs[1] = source
    for (int k = 0; k < 2; ++k) {
      patch[k] = D3DDDI_PATCHLOCATIONLIST{slot_of[k], static_cast<UINT>(k),           0,
                                          0,          static_cast<UINT>(refs[k] * 4), 0};
    }
    const uint32_t blt_words = EncodedWords(blt, CommandFormat::kDma);
    EncodeCommand(Command::Fence(0), CommandFormat::kDma,
                  absl::MakeSpan(dma + blt_words, kFenceWords), nullptr);
    p->pDmaBuffer = dma + need;
    p->pPatchLocationList = patch + 2;
    return Nt(STATUS_SUCCESS);
  }

  static NTSTATUS APIENTRY BuildPagingBuffer(DXGK_HADAPTER, DXGKARG_BUILDPAGINGBUFFER* p) {
    Command c;
    switch (p->Operation) {
      case DXGK_OPERATION_TRANSFER:
        c = Command::PagingTransfer(static_cast<uint64_t>(p->DestinationSegmentAddress),
                                    static_cast<uint64_t>(p->SourceSegmentAddress),
                                    static_cast<uint32_t>(p->TransferSize));
        break;
      case DXGK_OPERATION_FILL:
        c = Command::PagingFill(static_cast<uint64_t>(p->DestinationSegmentAddress),
                                static_cast<uint32_t>(p->TransferSize), p->FillPattern);
        break;
      case DXGK_OPERATION_DISCARD_CONTENT:
        return Nt(STATUS_SUCCESS);  // nothing to move; the content is dropped
      default:
        // The model's memory layout has no aperture or physical-page operations.
        return Nt(STATUS_INVALID_PARAMETER);
    }
    const uint32_t need = EncodedWords(c, CommandFormat::kDma);
    if (need * 4 > p->DmaSize) return Nt(STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER);
    auto* dma = static_cast<uint32_t*>(p->pDmaBuffer);
    EncodeCommand(c, CommandFormat::kDma, absl::MakeSpan(dma, need), nullptr);
    p->pDmaBuffer = dma + need;
    return Nt(STATUS_SUCCESS);
  }

  static NTSTATUS APIENTRY Patch(DXGK_HADAPTER a, const DXGKARG_PATCH* p) {
    auto* kmd = static_cast<ModelKmd*>(a.handle);
    ++kmd->patches_;
    auto* dma = static_cast<uint32_t*>(p->pDmaBuffer);
    const UINT start = p->DmaBufferSubmissionStartOffset, end = p->DmaBufferSubmissionEndOffset;
    if (start > end || end > p->DmaBufferSize || start % 4 != 0 || end % 4 != 0) {
      return Nt(STATUS_INVALID_PARAMETER);
    }
    for (UINT i = 0; i < p->PatchLocationListSubmissionLength; ++i) {
      const D3DDDI_PATCHLOCATIONLIST& e =
          p->pPatchLocationList[p->PatchLocationListSubmissionStart + i];
      if (e.AllocationIndex >= p->AllocationListSize || e.PatchOffset < start ||
          e.PatchOffset + 8 > end) {
        return Nt(STATUS_INVALID_PARAMETER);
      }
      const uint64_t address =
          static_cast<uint64_t>(p->pAllocationList[e.AllocationIndex].PhysicalAddress) +
          e.AllocationOffset;
      dma[e.PatchOffset / 4] = static_cast<uint32_t>(address);
      dma[e.PatchOffset / 4 + 1] = static_cast<uint32_t>(address >> 32);
    }
    // The fence at the tail of the buffer, if this range contains it.
    if (end - start >= kFenceWords * 4) {
      size_t at = (end / 4) - kFenceWords;
      Command f;
      auto len = DecodeCommand(absl::MakeConstSpan(dma, end / 4), at, CommandFormat::kDma, &f);
      if (len.ok() && f.op == Opcode::kFence) {
        dma[at + 1] = p->SubmissionFenceId;
        dma[at + 2] = 0;
      }
    }
    kmd->patched_[static_cast<uint64_t>(p->DmaBufferPhysicalAddress) + start] =
        p->SubmissionFenceId;
    return Nt(STATUS_SUCCESS);
  }

  static NTSTATUS APIENTRY SubmitCommand(DXGK_HADAPTER a, const DXGKARG_SUBMITCOMMAND* p) {
    auto* kmd = static_cast<ModelKmd*>(a.handle);
    ++kmd->submits_;
    const UINT node = p->NodeOrdinal;
    if (node >= kmd->hw_->num_nodes() ||
        p->DmaBufferSubmissionStartOffset > p->DmaBufferSubmissionEndOffset) {
      return Nt(STATUS_INVALID_PARAMETER);  // the kernel would bugcheck 0x119
    }
    const bool paging = (p->Flags & DXGK_SUBMITCOMMANDFLAGS_PAGINGBUFFER) != 0;
    uint32_t& last = kmd->last_submitted_fence_[node];
    if (p->SubmissionFenceId <= last) {
      kmd->Violation(
          rules::Rule::kR75,
          absl::StrFormat(
              "DxgkDdiSubmitCommand on node %u: SubmissionFenceId %u does not increase (last %u)",
              node, p->SubmissionFenceId, last));
    }
    const uint64_t key =
        static_cast<uint64_t>(p->DmaBufferPhysicalAddress) + p->DmaBufferSubmissionStartOffset;
    auto it = kmd->patched_.find(key);
    if (!paging) {
      if (it == kmd->patched_.end()) {
        kmd->Violation(rules::Rule::kR76,
                       absl::StrFormat("DxgkDdiSubmitCommand of DMA buffer 0x%x+%u (fence %u) that "
                                       "DxgkDdiPatch never patched",
                                       p->DmaBufferPhysicalAddress,
                                       p->DmaBufferSubmissionStartOffset, p->SubmissionFenceId));
      } else if (it->second != p->SubmissionFenceId) {
        kmd->Violation(
            rules::Rule::kR75,
            absl::StrFormat("DMA buffer 0x%x+%u: DxgkDdiPatch got SubmissionFenceId %u, "
                            "DxgkDdiSubmitCommand %u",
                            p->DmaBufferPhysicalAddress, p->DmaBufferSubmissionStartOffset,
                            it->second, p->SubmissionFenceId));
      }
    }
    if (it != kmd->patched_.end()) kmd->patched_.erase(it);
    last = std::max(last, p->SubmissionFenceId);
    kmd->hw_->Submit(node, key, p->DmaBufferSubmissionEndOffset - p->DmaBufferSubmissionStartOffset,
                     p->SubmissionFenceId, paging);
    return Nt(STATUS_SUCCESS);
  }

  // Tells Dxgkrnl of a DMA interrupt of `node` about submission `fence` (status `n`).
  static void NotifyDmaInterrupt(ModelKmd* kmd,
                                 decltype(DXGKARGCB_NOTIFY_INTERRUPT_DATA::InterruptType) type,
                                 uint64_t fence, UINT node, const GpuEngine::NodeStatus& n,
                                 NTSTATUS status) {
    DXGKARGCB_NOTIFY_INTERRUPT_DATA d{};
    d.InterruptType = type;
    d.SubmissionFenceId = static_cast<UINT>(fence);
    d.NodeOrdinal = node;
    d.LastCompletedFenceId = static_cast<UINT>(n.completed_fence);
    d.Status = status;
    kmd->dxgkrnl_->DxgkCbNotifyInterrupt(kmd->dxgkrnl_handle_, &d);
  }

  static BOOL APIENTRY InterruptRoutine(DXGK_HADAPTER a, UINT /*MessageNumber*/) {
    auto* kmd = static_cast<ModelKmd*>(a.handle);
    GpuEngine::InterruptStatus st = kmd->hw_->ReadInterruptStatus();
    if (!st.Any()) return 0;  // not our interrupt
    const bool bug = kmd->options_.bug == PlantedBug::kR77DpcBeforeNotify;
    if (bug) kmd->dxgkrnl_->DxgkCbQueueDpc(kmd->dxgkrnl_handle_);
    for (UINT node = 0; node < st.nodes.size(); ++node) {
      const GpuEngine::NodeStatus& n = st.nodes[node];
      if (n.dma_faulted) {
        NotifyDmaInterrupt(kmd, DXGK_INTERRUPT_DMA_FAULTED, n.faulted_fence, node, n,
                           Nt(STATUS_GRAPHICS_GPU_EXCEPTION_ON_DEVICE));
      }
      if (n.dma_completed) {
        NotifyDmaInterrupt(kmd, DXGK_INTERRUPT_DMA_COMPLETED, n.completed_fence, node, n,
                           Nt(STATUS_SUCCESS));
      }
    }
    if (st.vsync) {  // CRTC-type causes after every DMA-type one (R77)
      DXGKARGCB_NOTIFY_INTERRUPT_DATA d{};
      d.InterruptType = DXGK_INTERRUPT_CRTC_VSYNC;
      kmd->dxgkrnl_->DxgkCbNotifyInterrupt(kmd->dxgkrnl_handle_, &d);
    }
    if (!bug) kmd->dxgkrnl_->DxgkCbQueueDpc(kmd->dxgkrnl_handle_);
    return 1;
  }

  static void APIENTRY DpcRoutine(DXGK_HADAPTER a) {
    auto* kmd = static_cast<ModelKmd*>(a.handle);
    kmd->dxgkrnl_->DxgkCbNotifyDpc(kmd->dxgkrnl_handle_);
  }

  static NTSTATUS APIENTRY DestroyContext(DXGK_HCONTEXT h) {
    delete static_cast<ModelKmd::Context*>(h.handle);
    return Nt(STATUS_SUCCESS);
  }

  static NTSTATUS APIENTRY DestroyDevice(DXGK_HDEVICE d) {
    delete static_cast<ModelKmd::Device*>(d.handle);
    return Nt(STATUS_SUCCESS);
  }
};

namespace {
const DRIVER_INITIALIZATION_DATA kTable = {
    KmdEntryPoints::CreateDevice,
    KmdEntryPoints::CreateContext,
    KmdEntryPoints::CreateAllocation,
    KmdEntryPoints::DestroyAllocation,
    KmdEntryPoints::Render,
    KmdEntryPoints::Present,
    KmdEntryPoints::BuildPagingBuffer,
    KmdEntryPoints::Patch,
    KmdEntryPoints::SubmitCommand,
    KmdEntryPoints::InterruptRoutine,
    KmdEntryPoints::DpcRoutine,
    KmdEntryPoints::DestroyContext,
    KmdEntryPoints::DestroyDevice,
};
}  // namespace

ModelKmd::ModelKmd(GpuEngine* hardware, ModelKmdOptions options, ViolationSink* violations)
    : hw_(hardware),
      options_(options),
      violations_(violations),
      last_submitted_fence_(hardware->num_nodes(), 0) {}

ModelKmd::~ModelKmd() = default;

const DRIVER_INITIALIZATION_DATA* ModelKmd::driver_initialization_data() const { return &kTable; }

void ModelKmd::Start(const DXGKRNL_INTERFACE* dxgkrnl, DXGKRNL_HADAPTER handle) {
  dxgkrnl_ = dxgkrnl;
  dxgkrnl_handle_ = handle;
}

void ModelKmd::Violation(rules::Rule rule, std::string message) {
  if (violations_ != nullptr)
    violations_->Report(gpu::Violation{.rule = rule, .message = std::move(message)});
}

}  // namespace cltrace::gpu
