// A synthetic frame loop that drives the UMD side of the GPU model directly (no D3D runtime,
// no reference driver): create device + context, allocations, then per frame clears, dynamic
// vertex-buffer updates with renaming (R66), draws, a "command list" recorded into a
// CommandRecording and spliced, a mid-frame Flush and a Present; finally teardown. Tests, the
// benchmark and the planted-bug checks use it, and it shows the reference driver the calls
// its DDIs map to (CreateDevice -> CreateContext, CreateResource -> Allocate, Draw -> Emit,
// CommandListExecute -> Splice, Flush -> Flush, PresentDXGI -> Present).
//
// Thread-safety: runs on the calling thread; the stack must not be used concurrently.
#ifndef CLTRACE_UMD_SYNTHETIC_FRAMES_H_
#define CLTRACE_UMD_SYNTHETIC_FRAMES_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "wddm/kernel_stack.h"
#include "wddm/kernel_transcript.h"
#include "wddm/violation.h"

namespace cltrace::gpu {

struct SyntheticFrameOptions {
  uint32_t frames = 3;
  uint32_t draws_per_frame = 6;
  uint32_t textures = 3;
  uint32_t texture_bytes = 16 * 1024;
  uint32_t render_target_bytes = 64 * 1024;
  bool command_list = true;  // record part of each frame and splice it (deferred context)
  bool mid_frame_flush = true;
  bool wait_each_frame = true;  // WaitIdle after each Present, then read digests
  uint32_t node = 0;
  PlantedBug umd_bug = PlantedBug::kNone;  // only kR74StaleCommandBuffer applies here
  KernelTranscript* transcript = nullptr;  // frame markers are noted here if given
};

struct SyntheticFrameResult {
  std::vector<uint64_t> primary_digests;  // after each frame (if wait_each_frame)
  uint64_t final_combined_digest = 0;     // all allocations before teardown
  uint64_t submissions = 0;               // DxgkDdiSubmitCommand of DMA buffers
  uint64_t render_calls = 0;              // pfnRenderCb
  uint64_t virtual_time_ns = 0;
};

absl::StatusOr<SyntheticFrameResult> RunSyntheticFrames(KernelStack& stack,
                                                        const SyntheticFrameOptions& options);

}  // namespace cltrace::gpu

#endif  // CLTRACE_UMD_SYNTHETIC_FRAMES_H_
