#include "umd/synthetic_frames.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "format/status_macros.h"
#include "umd/command_recording.h"
#include "umd/umd_context.h"
#include "wddm/digest.h"

namespace cltrace::gpu {

absl::StatusOr<SyntheticFrameResult> RunSyntheticFrames(KernelStack& stack,
                                                        const SyntheticFrameOptions& o) {
  SyntheticFrameResult result;
  Dxgkrnl& kernel = stack.kernel();
  const Dxgkrnl::Stats before = kernel.stats();
  CLTRACE_ASSIGN_OR_RETURN(HANDLE dev, kernel.CreateDevice());
  UmdDevice umd(stack.device_callbacks(), dev, o.umd_bug);
  CLTRACE_ASSIGN_OR_RETURN(std::unique_ptr<UmdContext> ctx, umd.CreateContext(o.node));

  // Resources: a render target, a primary, textures, a dynamic vertex buffer (renamed).
  CLTRACE_ASSIGN_OR_RETURN(D3DKMT_HALLOCATION rt, umd.Allocate(o.render_target_bytes));
  CLTRACE_ASSIGN_OR_RETURN(D3DKMT_HALLOCATION primary,
                           umd.Allocate(o.render_target_bytes, kAllocationDescPrimary));
  std::vector<D3DKMT_HALLOCATION> textures;
  for (uint32_t i = 0; i < o.textures; ++i) {
    CLTRACE_ASSIGN_OR_RETURN(D3DKMT_HALLOCATION t, umd.Allocate(o.texture_bytes));
    textures.push_back(t);
    std::string init = absl::StrCat("texture ", i);
    CLTRACE_RETURN_IF_ERROR(ctx->Emit(Command::Update(
        t.value, 0, static_cast<uint32_t>(init.size()), HashBytes(init.data(), init.size()))));
  }
  constexpr uint64_t kDynamicVb = 1;  // resource key of the dynamic vertex buffer
  DynamicAliasTable aliases;
  std::vector<D3DKMT_HALLOCATION> retired;  // aliases to free once their work was submitted
  auto discard = [&](CommandRecording* rec) -> absl::StatusOr<D3DKMT_HALLOCATION> {
    // Map(WRITE_DISCARD): a fresh alias; the old one is freed after the next submission.
    CLTRACE_ASSIGN_OR_RETURN(D3DKMT_HALLOCATION a, umd.Allocate(4096));
    if (rec != nullptr) {
      rec->RecordRename(kDynamicVb, a.value);
    } else {
      if (auto old = aliases.Get(kDynamicVb)) retired.push_back(D3DKMT_HALLOCATION{*old});
      aliases.Set(kDynamicVb, a.value);
    }
    return a;
  };

  for (uint32_t frame = 0; frame < o.frames; ++frame) {
    if (o.transcript != nullptr) o.transcript->Note(absl::StrCat("# frame ", frame));
    CLTRACE_RETURN_IF_ERROR(ctx->Emit(Command::Marker(frame)));
    CLTRACE_RETURN_IF_ERROR(ctx->Emit(Command::Clear(rt.value, 0xFF000000u + frame)));
    for (uint32_t d = 0; d < o.draws_per_frame; ++d) {
      if (d % 2 == 0) {
        CLTRACE_ASSIGN_OR_RETURN(D3DKMT_HALLOCATION vb, discard(nullptr));
        const std::string verts = absl::StrCat("frame ", frame, " draw ", d);
        CLTRACE_RETURN_IF_ERROR(
            ctx->Emit(Command::Update(vb.value, 0, static_cast<uint32_t>(verts.size()),
                                      HashBytes(verts.data(), verts.size()))));
      }
      const uint64_t inputs[] = {
          *aliases.Get(kDynamicVb),
          textures.empty() ? *aliases.Get(kDynamicVb) : textures[d % textures.size()].value};
      CLTRACE_RETURN_IF_ERROR(
          ctx->Emit(Command::Draw(rt.value, inputs, 0x5000 + d, 3 * (d + 1), 0, 1)));
      if (o.mid_frame_flush && d == o.draws_per_frame / 2) CLTRACE_RETURN_IF_ERROR(ctx->Flush());
    }
    if (o.command_list) {
      // A deferred context's recording: its own discard (rename), update and draw.
      CommandRecording rec;
      CLTRACE_ASSIGN_OR_RETURN(D3DKMT_HALLOCATION vb, discard(&rec));
      const std::string verts = absl::StrCat("command list ", frame);
      CLTRACE_RETURN_IF_ERROR(
          rec.Emit(Command::Update(vb.value, 0, static_cast<uint32_t>(verts.size()),
                                   HashBytes(verts.data(), verts.size()))));
      const uint64_t in[] = {vb.value};
      CLTRACE_RETURN_IF_ERROR(rec.Emit(Command::Draw(rt.value, in, 0x7000, 6, 0, 2)));
      CLTRACE_RETURN_IF_ERROR(rec.Emit(Command::CopyRegion(rt.value, 0, vb.value, 0, 64)));
      if (auto old = aliases.Get(kDynamicVb)) retired.push_back(D3DKMT_HALLOCATION{*old});
      CLTRACE_RETURN_IF_ERROR(ctx->Splice(rec, &aliases));  // CommandListExecute
    }
    CLTRACE_RETURN_IF_ERROR(ctx->Present(rt, primary));
    // Everything referencing the retired aliases has been submitted: free them (R67).
    for (D3DKMT_HALLOCATION a : retired) CLTRACE_RETURN_IF_ERROR(umd.Deallocate(a));
    retired.clear();
    if (o.wait_each_frame) {
      CLTRACE_RETURN_IF_ERROR(kernel.WaitIdle());
      result.primary_digests.push_back(kernel.AllocationDigest(primary).value_or(0));
    }
  }
  CLTRACE_RETURN_IF_ERROR(kernel.WaitIdle());
  result.final_combined_digest = kernel.CombinedDigest();
  result.render_calls = ctx->render_calls();
  if (o.transcript != nullptr) o.transcript->Note("# teardown");
  CLTRACE_RETURN_IF_ERROR(ctx->Destroy());
  CLTRACE_RETURN_IF_ERROR(kernel.DestroyDevice(dev));
  const Dxgkrnl::Stats after = kernel.stats();
  result.submissions = after.submissions - before.submissions;
  result.virtual_time_ns = kernel.now();
  return result;
}

}  // namespace cltrace::gpu
