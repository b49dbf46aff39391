// The kernel side of the kernel-thunk callbacks (D3DDDI_DEVICECALLBACKS).
//
// A user-mode driver reaches the kernel (Dxgkrnl, the KMD, the GPU) only through the runtime's
// kernel-thunk callbacks: pfnCreateContextCb, pfnRenderCb, pfnAllocateCb, ... The runtime model
// answers them through this interface, so a GPU/kernel model (gpu/) can plug in. The runtime
// itself keeps the contract checks (R15, R16, R17, R67, R68, R70, R74) around these calls; a
// KernelModel only does the kernel's work.
//
// The built-in reference kernel model (MakeReferenceKernel) gives each context a command
// buffer, allocation list and patch-location list, hands out fresh (alternating) buffers on
// every Render, numbers allocations, and completes every submission immediately (an infinitely
// fast GPU). Allocation-list entries use the D3DDDI_ALLOCATIONLIST layout below.
//
// Thread-safety: every method may be called concurrently from any thread (Allocate and
// Deallocate are free-threaded; Render/Present/CreateContext come from the IC domain).
#ifndef CLTRACE_RUNTIME_KERNEL_H_
#define CLTRACE_RUNTIME_KERNEL_H_

#include <cstdint>
#include <memory>

#include "format/ddi_abi.h"

namespace cltrace::runtime {

// One allocation-list entry (the D3DDDI_ALLOCATIONLIST layout; not in the catalog because the
// list travels as an untyped buffer).
struct AllocationListEntry {
  uint32_t hAllocation;
  uint32_t flags;  // bit 0: WriteOperation
};

class KernelModel {
 public:
  virtual ~KernelModel() = default;

  virtual HRESULT CreateContext(D3DDDICB_CREATECONTEXT* args) = 0;
  virtual HRESULT DestroyContext(const D3DDDICB_DESTROYCONTEXT* args) = 0;
  // Submits [CommandOffset, CommandOffset + CommandLength) of the current buffer and returns
  // the next buffer/lists in the New* members (sizes at least the requested ones).
  virtual HRESULT Render(D3DDDICB_RENDER* args) = 0;
  virtual HRESULT Present(const D3DDDICB_PRESENT* args) = 0;
  virtual HRESULT Allocate(D3DDDICB_ALLOCATE* args) = 0;
  virtual HRESULT Deallocate(const D3DDDICB_DEALLOCATE* args) = 0;
  virtual HRESULT Lock(D3DDDICB_LOCK* args) = 0;
  virtual HRESULT Unlock(const D3DDDICB_UNLOCK* args) = 0;
  // The command buffer and allocation list `hContext` currently writes into (what its next
  // Render submits); nullptr for an unknown context.
  virtual const uint8_t* CommandBuffer(uint32_t hContext) = 0;
  virtual const AllocationListEntry* AllocationList(uint32_t hContext) = 0;
  // Last submission fence the GPU completed for `hContext` (reference model: all of them).
  virtual uint64_t CompletedFence(uint32_t hContext) = 0;
  virtual uint64_t SubmittedFence(uint32_t hContext) = 0;
};

// The built-in in-process kernel model described above.
std::unique_ptr<KernelModel> MakeReferenceKernel();

}  // namespace cltrace::runtime

#endif  // CLTRACE_RUNTIME_KERNEL_H_
