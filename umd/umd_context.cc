#include "umd/umd_context.h"

#include <vector>

#include "absl/strings/str_format.h"

namespace cltrace::gpu {

absl::Status StatusFromHresult(HRESULT hr, absl::string_view what) {
  if (!Failed(hr)) return absl::OkStatus();
  std::string msg = absl::StrFormat("%s failed: HRESULT 0x%08x", what, static_cast<uint32_t>(hr));
  switch (static_cast<uint32_t>(hr)) {
    case E_OUTOFMEMORY:
      return absl::ResourceExhaustedError(msg);
    case D3DDDIERR_DEVICEREMOVED:
      return absl::UnavailableError(msg);
    case D3DDDIERR_WASSTILLDRAWING:
      return absl::UnavailableError(msg);
    case E_INVALIDARG:
    case D3DDDIERR_INVALIDHANDLE:
    case D3DDDIERR_INVALIDUSERBUFFER:
    case D3DDDIERR_INVALIDINSTRUCTION:
    case D3DDDIERR_PRIVILEGEDINSTRUCTION:
    case D3DDDIERR_CANTRENDERLOCKEDALLOCATION:
      return absl::InvalidArgumentError(msg);
  }
  return absl::InternalError(msg);
}

absl::StatusOr<D3DKMT_HALLOCATION> UmdDevice::Allocate(uint64_t size, uint32_t flags,
                                                       D3D10DDI_HRTRESOURCE resource) {
  AllocationDesc desc;
  desc.size = size;
  desc.flags = flags;
  D3DDDI_ALLOCATIONINFO info{};
  info.pPrivateDriverData = &desc;
  info.PrivateDriverDataSize = sizeof(desc);
  info.Flags = (flags & kAllocationDescPrimary) ? D3DDDI_ALLOCATIONINFO_FLAG_PRIMARY : 0;
  D3DDDICB_ALLOCATE a{};
  a.hResource = resource.handle;
  a.NumAllocations = 1;
  a.pAllocationInfo = &info;
  HRESULT hr = callbacks_->pfnAllocateCb(device_, &a);
  if (Failed(hr)) return StatusFromHresult(hr, "pfnAllocateCb");
  return info.hAllocation;
}

absl::Status UmdDevice::Deallocate(D3DKMT_HALLOCATION allocation) {
  D3DDDICB_DEALLOCATE d{};
  d.NumAllocations = 1;
  d.HandleList = &allocation;
  return StatusFromHresult(callbacks_->pfnDeallocateCb(device_, &d), "pfnDeallocateCb");
}

absl::StatusOr<std::unique_ptr<UmdContext>> UmdDevice::CreateContext(uint32_t node) {
  D3DDDICB_CREATECONTEXT cc{};
  cc.NodeOrdinal = node;
  cc.EngineAffinity = 1;
  HRESULT hr = callbacks_->pfnCreateContextCb(device_, &cc);
  if (Failed(hr)) return StatusFromHresult(hr, "pfnCreateContextCb");
  std::unique_ptr<UmdContext> ctx(new UmdContext(callbacks_, device_, bug_));
  ctx->context_ = cc.hContext;
  ctx->Take(cc.pCommandBuffer, cc.CommandBufferSize, cc.pAllocationList, cc.AllocationListSize,
            cc.pPatchLocationList, cc.PatchLocationListSize);
  return ctx;
}

void UmdContext::Take(PVOID cmd, UINT cmd_size, PVOID alist, UINT alist_size, PVOID plist,
                      UINT plist_size) {
  cmd_ = static_cast<uint32_t*>(cmd);
  cmd_bytes_ = cmd_size;
  alist_ = static_cast<UserAllocationListEntry*>(alist);
  alist_size_ = alist_size;
  plist_ = static_cast<D3DDDI_PATCHLOCATIONLIST*>(plist);
  plist_size_ = plist_size;
  used_words_ = num_allocs_ = num_patches_ = 0;
  slots_.clear();
}

bool UmdContext::TryEncode(const Command& c) {
  // Slots for references not yet in this buffer's allocation list.
  uint32_t new_slots = 0;
  for (size_t i = 0; i < c.refs.size(); ++i) {
    const uint32_t h = static_cast<uint32_t>(c.refs[i]);
    bool seen = slots_.contains(h);
    for (size_t j = 0; j < i && !seen; ++j) seen = c.refs[j] == c.refs[i];
    if (!seen) ++new_slots;
  }
  const uint32_t words = EncodedWords(c, CommandFormat::kUser);
  if (used_words_ + words > cmd_bytes_ / 4 || num_allocs_ + new_slots > alist_size_ ||
      num_patches_ + c.refs.size() > plist_size_) {
    return false;
  }
  Command user = c;
  for (size_t i = 0; i < c.refs.size(); ++i) {
    const uint32_t h = static_cast<uint32_t>(c.refs[i]);
    auto [it, inserted] = slots_.try_emplace(h, num_allocs_);
    if (inserted) {
      alist_[num_allocs_] = UserAllocationListEntry{D3DKMT_HALLOCATION{h}, 0};
      ++num_allocs_;
    }
    // The first reference of every writing command is its destination.
    if (i == 0 && c.op != Opcode::kMarker && c.op != Opcode::kNop) {
      alist_[it->second].Flags |= kAllocationListWriteOperation;
    }
    user.refs[i] = it->second;
  }
  std::vector<uint32_t> ref_offsets;
  EncodeCommand(user, CommandFormat::kUser,
                absl::MakeSpan(cmd_ + used_words_, cmd_bytes_ / 4 - used_words_), &ref_offsets);
  for (size_t k = 0; k < ref_offsets.size(); ++k) {
    plist_[num_patches_++] =
        D3DDDI_PATCHLOCATIONLIST{static_cast<UINT>(user.refs[k]),
                                 static_cast<UINT>(k),
                                 0,
                                 0,
                                 static_cast<UINT>((used_words_ + ref_offsets[k]) * 4),
                                 0};
  }
  used_words_ += words;
  return true;
}

absl::Status UmdContext::Emit(const Command& c) {
  if (destroyed_) return absl::FailedPreconditionError("Emit on a destroyed context");
  absl::Status v = ValidateHandleCommand(c);
  if (!v.ok()) return v;
  if (TryEncode(c)) return absl::OkStatus();
  absl::Status s = Flush();  // buffer or list full: submit (ddi-spec §6.3 step 8)
  if (!s.ok()) return s;
  if (TryEncode(c)) return absl::OkStatus();
  // Too large for an empty buffer: ask pfnRenderCb for bigger ones, then re-read (R74).
  const UINT want_cmd = EncodedWords(c, CommandFormat::kUser) * 4;
  const UINT want_list = static_cast<UINT>(c.refs.size());
  s = Render(D3DDDICB_RENDERFLAGS_RESIZECOMMANDBUFFER | D3DDDICB_RENDERFLAGS_RESIZEALLOCATIONLIST |
                 D3DDDICB_RENDERFLAGS_RESIZEPATCHLOCATIONLIST,
             std::max(want_cmd, cmd_bytes_), std::max(want_list, alist_size_),
             std::max(want_list, plist_size_));
  if (!s.ok()) return s;
  if (TryEncode(c)) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrFormat("%s of %u bytes does not fit the %u-byte command buffer the kernel granted",
                      OpcodeName(static_cast<uint8_t>(c.op)), want_cmd, cmd_bytes_));
}

absl::Status UmdContext::Render(UINT flags, UINT want_cmd, UINT want_alist, UINT want_plist) {
  D3DDDICB_RENDER r{};
  r.CommandLength = used_words_ * 4;
  r.CommandOffset = 0;
  r.NumAllocations = num_allocs_;
  r.NumPatchLocations = num_patches_;
  r.NewCommandBufferSize = want_cmd;
  r.NewAllocationListSize = want_alist;
  r.NewPatchLocationListSize = want_plist;
  r.Flags = flags;
  r.hContext = context_;
  HRESULT hr = callbacks_->pfnRenderCb(device_, &r);
  ++render_calls_;
  queued_ = r.QueuedBufferCount;
  if (bug_ == PlantedBug::kR74StaleCommandBuffer) {
    // Planted: keep the old command buffer (and its size); only the lists are re-read.
    uint32_t* stale = cmd_;
    const uint32_t stale_bytes = cmd_bytes_;
    Take(r.pNewCommandBuffer, r.NewCommandBufferSize, r.pNewAllocationList, r.NewAllocationListSize,
         r.pNewPatchLocationList, r.NewPatchLocationListSize);
    cmd_ = stale;
    cmd_bytes_ = std::min(stale_bytes, r.NewCommandBufferSize);
  } else {
    // Always continue in the returned buffers, even if the call failed (R74).
    Take(r.pNewCommandBuffer, r.NewCommandBufferSize, r.pNewAllocationList, r.NewAllocationListSize,
         r.pNewPatchLocationList, r.NewPatchLocationListSize);
  }
  return StatusFromHresult(hr, "pfnRenderCb");
}

absl::Status UmdContext::Flush(bool force) {
  if (destroyed_) return absl::FailedPreconditionError("Flush on a destroyed context");
  if (!has_pending() && !force) return absl::OkStatus();
  return Render(0, cmd_bytes_, alist_size_, plist_size_);
}

absl::Status UmdContext::Splice(const CommandRecording& recording, DynamicAliasTable* aliases) {
  for (const Command& c : recording.commands()) {
    absl::Status s = Emit(c);
    if (!s.ok()) return s;
  }
  if (aliases != nullptr) recording.ApplyRenames(aliases);
  return absl::OkStatus();
}

absl::Status UmdContext::Present(D3DKMT_HALLOCATION src, D3DKMT_HALLOCATION dst) {
  absl::Status s = Flush();
  if (!s.ok()) return s;
  D3DDDICB_PRESENT p{};
  p.hSrcAllocation = src;
  p.hDstAllocation = dst;
  p.hContext = context_;
  return StatusFromHresult(callbacks_->pfnPresentCb(device_, &p), "pfnPresentCb");
}

absl::Status UmdContext::Destroy() {
  if (destroyed_) return absl::OkStatus();
  destroyed_ = true;
  D3DDDICB_DESTROYCONTEXT d{};
  d.hContext = context_;
  return StatusFromHresult(callbacks_->pfnDestroyContextCb(device_, &d), "pfnDestroyContextCb");
}

}  // namespace cltrace::gpu
