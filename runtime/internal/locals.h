// Context-local handles of a deferred context (ddi-spec §3.3, §4.4).
//
// A DC opens a context-local handle for an object the first time the current recording uses it
// ("first bind per command list"), dependencies first, and closes all of them when the
// recording ends (FinishCommandList closing, abandon, teardown), dependents first. Open local
// handles hold a reference on their object so the IC handle outlives them (R54).
//
// Thread-safety: inside the deferred context's domain only.
#ifndef CLTRACE_RUNTIME_INTERNAL_LOCALS_H_
#define CLTRACE_RUNTIME_INTERNAL_LOCALS_H_

#include "runtime/internal/state.h"

namespace cltrace::runtime::internal {

// The local handle of `o` on DC `c`, opened now if needed (DC::pfnCreate*, R55/R56).
void* EnsureLocal(ContextState* c, DeviceChild* o);
// The local handle of command list `cl` on DC `c` for nested execution, opened if needed
// (DC::pfnCreateCommandList with hRT = the IC command-list handle).
void* EnsureLocalList(ContextState* c, CommandList* cl);
// Closes every open local handle (DC::pfnDestroy*, reverse open order; R55) and moves the
// references they held into `keep` (the command list being produced) or drops them.
void CloseAllLocals(ContextState* c, std::vector<DeviceChild*>* keep,
                    std::vector<CommandList*>* keep_lists);

}  // namespace cltrace::runtime::internal

#endif  // CLTRACE_RUNTIME_INTERNAL_LOCALS_H_
