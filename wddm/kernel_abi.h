// The private contract between the model UMD side (gpu::UmdDevice / gpu::UmdContext, used by
// the reference driver) and the model KMD (gpu::ModelKmd), plus small helpers for the C ABI of
// ddi/ddi_abi.h. In real WDDM this contract is vendor-private; here it is fixed and
// documented in wddm/README.md so a trace can be decoded.
//
// Thread-safety: plain data and pure functions.
#ifndef CLTRACE_WDDM_KERNEL_ABI_H_
#define CLTRACE_WDDM_KERNEL_ABI_H_

#include <cstdint>

#include "ddi/ddi_abi.h"

namespace cltrace::gpu {

// One element of the UMD's allocation list (the buffer pfnCreateContextCb / pfnRenderCb hand
// out as pAllocationList). The catalog declares that pointer as PVOID; the element layout
// follows d3dumddi.h's D3DDDI_ALLOCATIONLIST: the allocation handle, then a flags word.
struct UserAllocationListEntry {
  D3DKMT_HALLOCATION hAllocation;
  uint32_t Flags;  // kAllocationListWriteOperation | ...
};
inline constexpr uint32_t kAllocationListWriteOperation = 0x1;

// D3DDDI_ALLOCATIONINFO.pPrivateDriverData for every allocation the model UMD creates; the
// model KMD's DxgkDdiCreateAllocation reads it to size the allocation.
struct AllocationDesc {
  uint32_t magic = kMagic;  // 'CLGA'
  uint32_t flags = 0;       // kAllocationDesc* bits
  uint64_t size = 0;        // bytes
  uint32_t alignment = 0;   // 0 = page
  uint32_t reserved = 0;
  static constexpr uint32_t kMagic = 0x41474C43;
};
inline constexpr uint32_t kAllocationDescPrimary = 0x1;     // a scan-out surface
inline constexpr uint32_t kAllocationDescCpuVisible = 0x2;  // may be locked

// pfnEscapeCb private data understood by the model kernel.
struct EscapeData {
  uint32_t code = 0;  // kEscape*
  uint32_t hAllocation = 0;
  uint64_t result = 0;  // written by the kernel
};
inline constexpr uint32_t kEscapeQueryDigest = 1;     // result = content digest of hAllocation
inline constexpr uint32_t kEscapeQueryResidency = 2;  // result = segment id (0 system, 1 video)

// The catalog's HRESULT / NTSTATUS names are unsigned constants; these give them the signed
// types the C ABI uses, without sign-compare warnings at every comparison.
constexpr HRESULT Hr(uint32_t v) { return static_cast<HRESULT>(v); }
constexpr NTSTATUS Nt(uint32_t v) { return static_cast<NTSTATUS>(v); }
inline bool Failed(HRESULT hr) { return hr < 0; }

}  // namespace cltrace::gpu

#endif  // CLTRACE_WDDM_KERNEL_ABI_H_
