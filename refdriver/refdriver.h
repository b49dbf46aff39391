// The reference driver's out-of-band C interface: configuration and the violation channel.
//
// The reference driver (build/lib/libcltrace_refdriver.so) is a D3D11 user-mode driver model.
// All DDI traffic goes through the C ABI of ddi/ddi_abi.h, starting at the exported entry
// point OpenAdapter10_2. The functions below are NOT part of that DDI: they let tools configure
// planted bugs / fault injection and read back the protocol violations the driver detected.
// They are resolved with dlsym on the driver library; a recorder shim sitting between runtime
// and driver does not need to forward them, because:
//   - configuration is read from the environment variable CLTRACE_REFDRIVER_CONFIG at every
//     OpenAdapter10_2 call (CltraceRefDriverConfigure overrides it for later opens), and
//   - violations can additionally be appended to the file named by CLTRACE_REFDRIVER_VIOLATIONS
//     (or the `violations=PATH` config item), one line per violation, as they are detected.
//
// Configuration grammar (items separated by ';', whitespace ignored):
//   bug=R22[,R36...]              planted-bug modes (see refdriver/README.md for the list)
//   oom:RecycleCreateCommandList=N[,M...]   fail the Nth call (1-based, per device) with
//   oom:RecycleCreateDeferredContext=N      E_OUTOFMEMORY through the channel the DDI allows
//   oom:CreateCommandList=N                 (return value / pfnSetErrorCb on the IC layer)
//   removed=N                     report D3DDDIERR_DEVICEREMOVED at the driver's Nth DDI call
//                                 (counted per device, first call that may report it)
//   violations=PATH               append violation lines to PATH
//   nested_execute_handle=local|ic   which handle DC::CommandListExecute expects (default local)
// Example: CLTRACE_REFDRIVER_CONFIG="bug=R22;oom:RecycleCreateCommandList=3"
//
// Violation line format (fixed; tools parse it):
//   R40 seq=<driver call number> fn=<DDI name> handle=<0x...|-> <message>
//
// Thread-safety: every function may be called from any thread.
#ifndef CLTRACE_REFDRIVER_REFDRIVER_H_
#define CLTRACE_REFDRIVER_REFDRIVER_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Replaces the configuration used by subsequent OpenAdapter10_2 calls (NULL: go back to the
// environment variable). Returns 0 on success, -1 if the text does not parse (the previous
// configuration stays in force).
int CltraceRefDriverConfigure(const char* config);

// Copies all violation lines detected so far ('\n'-terminated, in detection order) into buf
// (at most cap bytes, always NUL-terminated when cap > 0) and returns the number of bytes the
// full text needs, excluding the NUL. Call with cap = 0 to size the buffer.
size_t CltraceRefDriverViolations(char* buf, size_t cap);

// Forgets all violations detected so far (tests run several scenarios in one process).
void CltraceRefDriverClearViolations(void);

// The most deferred-context map-discard alias allocations (R66) alive at once in this process
// (made and not yet handed to deferred destruction) since the last call with reset != 0, which
// starts again from those alive now. Bounded over a workload's frames (issue #16 item 6).
uint64_t CltraceRefDriverPeakAliases(int reset);

// The draw-state probe (wddm/draw_state.h, gpu::DecodePrivateDrawsFn): decodes the refcmd
// records (refdriver/command_stream.h) in one private command's payload of `count` words and
// calls on_draw(ctx, handles) for each Draw record with its kDrawSlotCount bindings. Returns 0
// (also for a payload that is not the reference driver's) or 1 when the records are malformed.
int CltraceDecodePrivateDraws(const uint32_t* words, size_t count,
                              void (*on_draw)(void* ctx, const uint64_t* handles), void* ctx);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // CLTRACE_REFDRIVER_REFDRIVER_H_
