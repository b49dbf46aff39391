// The UMD side of the GPU model: what a user-mode driver (the reference driver) does with the
// kernel-thunk callbacks. It only ever calls through the D3DDDI_DEVICECALLBACKS table it is
// given (D3D10DDIARG_CREATEDEVICE.pKTCallbacks), never into gpu::Dxgkrnl directly, so it works
// in a driver library loaded with dlopen and under a recorder that wraps the table.
//
//   UmdDevice   pfnAllocateCb / pfnDeallocateCb with the model's AllocationDesc private data,
//               pfnCreateContextCb (call it inside the UMD's CreateDevice, R74).
//   UmdContext  a CommandSink: encodes commands (wddm/README.md "Command encoding") into the
//               command buffer the kernel handed out, maintaining the allocation list and the
//               patch-location list; submits with pfnRenderCb when the buffer or a list is full
//               or on Flush, and always continues in the buffers pfnRenderCb returned (re-reading
//               their sizes, R74); Present = Flush + pfnPresentCb; Splice plays a deferred
//               context's CommandRecording into the stream (CommandListExecute) and applies its
//               dynamic-resource renames (R66).
//
// Planted bug kR74StaleCommandBuffer: UmdContext keeps writing into the previous command buffer
// after pfnRenderCb (the kernel reports R74 when it finds its poison in the new one).
//
// Thread-safety: a UmdDevice may be shared (the kernel callbacks are free-threaded); a
// UmdContext belongs to one context domain (the immediate context), like the HCONTEXT rule.
//
// Example (inside the reference driver):
//   UmdDevice dev(args->pKTCallbacks, args->hRTDevice.handle);
//   auto ctx = dev.CreateContext(/*node=*/0);           // inside CreateDevice
//   D3DKMT_HALLOCATION rt = dev.Allocate(4096).value();  // inside CreateResource
//   (*ctx)->Emit(Command::Clear(rt.value, 0xFF));        // ClearRenderTargetView
//   (*ctx)->Flush();                                     // Flush
#ifndef CLTRACE_UMD_UMD_CONTEXT_H_
#define CLTRACE_UMD_UMD_CONTEXT_H_

#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ddi/ddi_abi.h"
#include "umd/command_recording.h"
#include "wddm/kernel_abi.h"
#include "wddm/violation.h"

namespace cltrace::gpu {

// An HRESULT from a kernel callback as a Status (code by class, the value in the message).
absl::Status StatusFromHresult(HRESULT hr, absl::string_view what);

class UmdContext;

class UmdDevice {
 public:
  UmdDevice(const D3DDDI_DEVICECALLBACKS* callbacks, HANDLE device,
            PlantedBug bug = PlantedBug::kNone)
      : callbacks_(callbacks), device_(device), bug_(bug) {}

  // pfnAllocateCb for one allocation of `size` bytes (flags: kAllocationDesc*). `resource` is
  // the runtime's resource handle when the allocation backs a D3D resource (may be NULL).
  absl::StatusOr<D3DKMT_HALLOCATION> Allocate(uint64_t size, uint32_t flags = 0,
                                              D3D10DDI_HRTRESOURCE resource = {});
  // pfnDeallocateCb. Call only after the work using it was submitted (R67).
  absl::Status Deallocate(D3DKMT_HALLOCATION allocation);
  // pfnCreateContextCb on `node`; the context starts in the buffers it returned.
  absl::StatusOr<std::unique_ptr<UmdContext>> CreateContext(uint32_t node = 0);

  const D3DDDI_DEVICECALLBACKS* callbacks() const { return callbacks_; }
  HANDLE device() const { return device_; }

 private:
  const D3DDDI_DEVICECALLBACKS* callbacks_;
  HANDLE device_;
  PlantedBug bug_;
};

class UmdContext : public CommandSink {
 public:
  // Encodes `c` (references = allocation handles). Submits first if it does not fit; asks for
  // a larger buffer (RESIZECOMMANDBUFFER) if it cannot fit even in an empty one.
  absl::Status Emit(const Command& c) override;
  // CommandListExecute: the recording's commands, then its renames applied to `aliases`.
  absl::Status Splice(const CommandRecording& recording, DynamicAliasTable* aliases);
  // pfnRenderCb if anything is pending (or `force`).
  absl::Status Flush(bool force = false);
  // Flush, then pfnPresentCb(src -> dst; dst 0 = the primary set by pfnSetDisplayModeCb).
  absl::Status Present(D3DKMT_HALLOCATION src, D3DKMT_HALLOCATION dst);
  // pfnDestroyContextCb (the kernel waits for the context's work first).
  absl::Status Destroy();

  HANDLE handle() const { return context_; }
  bool has_pending() const { return used_words_ > 0; }
  uint64_t render_calls() const { return render_calls_; }
  // What the last pfnRenderCb reported as queued for this context.
  uint32_t queued_buffer_count() const { return queued_; }
  uint32_t command_buffer_size() const { return cmd_bytes_; }

 private:
  friend class UmdDevice;
  UmdContext(const D3DDDI_DEVICECALLBACKS* callbacks, HANDLE device, PlantedBug bug)
      : callbacks_(callbacks), device_(device), bug_(bug) {}
  void Take(PVOID cmd, UINT cmd_size, PVOID alist, UINT alist_size, PVOID plist, UINT plist_size);
  absl::Status Render(UINT flags, UINT want_cmd, UINT want_alist, UINT want_plist);
  // Tries to encode; false if it does not fit in what is left.
  bool TryEncode(const Command& c);

  const D3DDDI_DEVICECALLBACKS* callbacks_;
  HANDLE device_;
  PlantedBug bug_;
  HANDLE context_{};
  uint32_t* cmd_ = nullptr;
  uint32_t cmd_bytes_ = 0;
  UserAllocationListEntry* alist_ = nullptr;
  uint32_t alist_size_ = 0;
  D3DDDI_PATCHLOCATIONLIST* plist_ = nullptr;
  uint32_t plist_size_ = 0;
  uint32_t used_words_ = 0, num_allocs_ = 0, num_patches_ = 0;
  absl::flat_hash_map<uint32_t, uint32_t> slots_;  // allocation handle -> list index
  uint64_t render_calls_ = 0;
  uint32_t queued_ = 0;
  bool destroyed_ = false;
};

}  // namespace cltrace::gpu

#endif  // CLTRACE_UMD_UMD_CONTEXT_H_
