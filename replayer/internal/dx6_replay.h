// The DX6 replay path: the DX6-layer calls of a trace (the DX6 runtime's calls into its
// driver's DD_D3DBUFCALLBACKS and D3DHAL_CALLBACKS3, ddi-spec §7) re-issued into a DX6 driver
// (ReplayOptions::dx6_driver; `cltrace replay` gives the model driver of dx6/), compared like the
// D3D11 calls (return values, output fields, handles), and reported through the same ReplayResult
// (divergences by seq, bad input).
//
// What the replay plays: every recorded DX6 call with its recorded arguments, in seq order, on
// the calling thread (DX6 is single-threaded; both --threads modes do the same). The D3D11
// calls of the same trace (a dp2 recording holds the device bring-up and teardown around its
// DX6 calls) replay into the D3D11 driver as usual; the two drivers share no state, so the
// DX6 calls need no ordering against the D3D11 ones.
//
// Handles. A CreateD3DBuffer's lpDDSurface is the runtime's surface object: the replay makes a
// fresh one. A buffer the driver hands back from a swap (lpDDCommandsOut / lpDDVertexOut) is
// bound to the id the recording gives it when the driver first returns it; after that the
// driver must hand back that same buffer where the recording shows that id (a divergence
// otherwise). A dwhContext value gets a context of its own (D3dContextCreate is not in the
// catalog). DestroyD3DBuffer unbinds the surface.
//
// Content (format/content.h kDrawPrimitives2). Before each D3dDrawPrimitives2 the recorded
// command bytes are written into the replay's command buffer at dwCommandOffset (the buffer's
// memory as the driver holds it now, Dx6Driver::BufferMemory: what its last CreateD3DBuffer /
// LockD3DBuffer gave; never past its end), followed by an invalid 4-byte command where it fits, as
// the DX6 runtime leaves one after dwCommandLength (dx6/dx6_runtime.h, R80: a driver that reads
// past the length fails on it as it did in the recording); the recorded vertices go into the
// vertex buffer at dwVertexOffset, or, with USERMEMVERTICES, lpVertices points at a copy. A
// call without content gets zeros and the report says so. lpdwRStates points at the replay's
// render-state array of the context.
//
// Compared: the return value, every output field (ddRVal, dwCapsOut, dwFlagsOut, ddrval,
// dwErrorOffset, the handed-back handles), and whether output pointers (fpVidMem,
// lpSurfData) are NULL; their addresses differ by nature.
//
// Hostile input, found before any driver runs (CheckDx6Event, SimulateDx6Handles): a DX6 call
// nested in another call or with calls nested in it (plan.cc), a NULL argument structure,
// content on a call that takes none or of the wrong size, a surface used before a
// CreateD3DBuffer or a swap produced it or after DestroyD3DBuffer, a DX6 call that starts
// before the previous one returned. Each is bad input naming the seq.
//
// Thread-safety: one DX6 replay at a time per process (Replay() serialises; the DX6 model
// driver's tables reach the most recently constructed gpu::Dx6Driver).
#ifndef CLTRACE_REPLAYER_INTERNAL_DX6_REPLAY_H_
#define CLTRACE_REPLAYER_INTERNAL_DX6_REPLAY_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "format/event.h"
#include "replayer/internal/plan.h"
#include "replayer/replay.h"
#include "wddm/violation.h"

namespace cltrace::replay::internal {

// Plan-time checks of one DX6-layer event: "" or what is wrong with it.
std::string CheckDx6Event(const format::Event& e, const format::TokenTable& contents);
// Plan-time surface lifetimes of plan.dx6; false with *bad on a surface used before it exists
// or after it was destroyed, or overlapping DX6 calls.
bool SimulateDx6Handles(const Plan& plan, BadInput* bad);

// The DX6 driver's planted bug named by a CLTRACE_REFDRIVER_CONFIG text ("bug=R79" /
// "bug=R80" among its items), and the text without those items (for the D3D11 driver, which
// has no such modes). *dx6_items tells whether there were any.
gpu::PlantedBug Dx6BugFromConfig(absl::string_view config, std::string* rest, bool* dx6_items);

// Replays plan.dx6 into a fresh options.dx6_driver(bug), adding its divergences, bad input
// and content notes to *result (which the D3D11 replay already filled). FailedPrecondition
// when the trace has DX6 calls and the options no DX6 driver.
absl::Status ReplayDx6(const Plan& plan, const ReplayOptions& options, gpu::PlantedBug bug,
                       ReplayResult* result);

}  // namespace cltrace::replay::internal

#endif  // CLTRACE_REPLAYER_INTERNAL_DX6_REPLAY_H_
