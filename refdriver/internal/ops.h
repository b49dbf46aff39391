// Cross-file operations of the reference driver (implemented in submit.cc, pipeline.cc,
// refresh.cc, objects.cc).
//
// Thread-safety: Ic* functions run in the IC domain; Dc* functions in that DC's domain;
// QueueDeferred is free-threaded.
#ifndef CLTRACE_REFDRIVER_INTERNAL_OPS_H_
#define CLTRACE_REFDRIVER_INTERNAL_OPS_H_

#include <cstdint>

#include "ddi/ddi_abi.h"
#include "refdriver/internal/driver.h"

namespace cltrace::refdriver {

// ---- IC command buffer (submit.cc) ----
// A refcmd record as a GPU-model private command (payload: kStreamMagic, then the record).
gpu::Command PrivateRecord(const void* record, uint32_t size);
// Appends one GPU command (references = allocation handles) to the IC's command buffer;
// gpu::UmdContext submits first when it does not fit (then amortized processing, R71).
void IcEmit(Device* dev, const gpu::Command& c);
// Appends one refcmd record (as a private command).
void IcWrite(Device* dev, const void* record, uint32_t size);
void IcWriteGeneric(Device* dev, uint32_t opcode, uint64_t a, uint64_t b = 0, uint64_t c = 0);
// The allocation IC commands reference for `o`: the current map-discard alias a command list
// left (R66), else the resource's own allocation; 0 for none.
uint32_t IcAllocationOf(Device* dev, const IcObject* o);
// Splices a command list's content into the IC stream (ExecuteBegin ... ExecuteEnd) and makes
// its renames current (R66).
void IcSplice(Device* dev, const Recording& content, uint64_t cl_id);
// True if the application added commands since the buffer's preamble.
bool HasCommands(Device* dev);
// Submits the pending command buffer (pfnRenderCb) and pumps amortized processing.
void IcSubmit(Device* dev);
// Frees every queued deferred destruction (Flush, DestroyDevice).
void DrainDeferred(Device* dev);
void QueueDeferred(Device* dev, DeferredDestruction item);

// The allocations of deferred contexts' map-discard aliases (R66) and who still needs each:
// the recordings and command lists that can execute it (every rename in their
// gpu::CommandRecording, nested executes' included, holds its alias once), and the IC while
// it is the resource's current allocation. An alias nobody holds goes through deferred
// destruction (after the flush that submitted its last use); the resource's destruction frees
// those left. A real driver does the same, so a program's memory does not grow with its
// frames. The book lives beside the device (sizeof(Device) is what CalcPrivateDeviceSize
// answers), made at the first alias and dropped with the device (ForgetAliases).
//
// A DC discard made `alias` for resource `object_id` (recorded in the DC's recording).
void AliasMade(Device* dev, uint64_t object_id, uint32_t alias);
// A nested execute: the DC's recording holds the executed list's renames too.
void AliasesHeldToo(Device* dev, const Recording& from);
// `r` can no longer execute (about to be cleared or destroyed): drops its holds.
void ReleaseRecordingAliases(Device* dev, const Recording& r);
// IC domain: after `content` executed (its renames current), the IC holds the current ones.
void AliasesMadeCurrent(Device* dev, const Recording& content);
// IC domain: resource `object_id` is back on its own allocation (an IC discard).
void AliasCurrentDropped(Device* dev, uint64_t object_id);
// The resource is destroyed: the allocations of its aliases still alive, forgotten.
std::vector<uint32_t> TakeObjectAliases(Device* dev, uint64_t object_id);
// The device is destroyed: its book goes.
void ForgetAliases(Device* dev);
// GPU context bring-up/teardown (pfnCreateContextCb / pfnDestroyContextCb).
HRESULT CreateGpuContext(Device* dev);
void DestroyGpuContext(Device* dev);

// ---- recording on a DC (pipeline.cc) ----
void DcWrite(DeferredContext* dc, const void* record, uint32_t size);
void DcEmit(DeferredContext* dc, const gpu::Command& c);
void DcWriteGeneric(DeferredContext* dc, uint32_t opcode, uint64_t a, uint64_t b = 0,
                    uint64_t c = 0);
// The executing context goes back to the cleared state (CommandListExecute, R60).
void ClearIcState(Device* dev);
void ClearDcState(DeferredContext* dc);

// ---- state-refresh probes (refresh.cc) ----
// The driver asks the runtime to re-send bindings and checks the answer against the timing
// rules R49/R60. `expect_bound`: the answer must equal the context's current bindings;
// otherwise it must be "nothing bound".
void ProbeDcRefresh(DeferredContext* dc, bool expect_bound, const char* phase);
void ProbeIcRefresh(Device* dev, const char* phase);
// After a submit: rebuild the preamble of the new command buffer through state refresh.
void RefreshPreamble(Device* dev);

// ---- objects (objects.cc) ----
// Local-handle bookkeeping shared with the command-list DDIs.
bool LocalOpen(DeferredContext* dc, uint32_t type, void* local, void* ic, void* dependency_local);
bool LocalClose(DeferredContext* dc, uint32_t type, void* local);
// The IC object a DC-table handle argument names; reports R57 (and returns nullptr) when `local`
// is not open on `dc`. NULL handles give nullptr without a report.
void* LocalToIc(DeferredContext* dc, void* local, uint32_t type, const char* what);

}  // namespace cltrace::refdriver

#endif  // CLTRACE_REFDRIVER_INTERNAL_OPS_H_
