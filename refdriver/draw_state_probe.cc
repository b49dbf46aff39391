// CltraceDecodePrivateDraws (refdriver/refdriver.h): the reference driver's side of the runtime
// model's draw-state check (wddm/draw_state.h). Bounds-checked: the payload is a submitted
// command buffer's content and may be anything.
#include <cstring>

#include "refdriver/command_stream.h"
#include "refdriver/refdriver.h"
#include "wddm/draw_state.h"

namespace cltrace::refdriver {
namespace {

int DecodePrivateDraws(const uint32_t* words, size_t count, gpu::OnPrivateDrawFn on_draw,
                       void* ctx) {
  if (words == nullptr || count < 2 ||
      (uint64_t{words[1]} << 32 | words[0]) != refcmd::kStreamMagic) {
    return gpu::kPrivateDrawsOk;  // not a refcmd payload
  }
  const auto* rec = reinterpret_cast<const uint8_t*>(words + 2);
  const size_t rec_size = (count - 2) * 4;
  size_t offset = 0;
  while (offset + sizeof(refcmd::Header) <= rec_size) {
    refcmd::Header header;
    std::memcpy(&header, rec + offset, sizeof(header));
    if (header.size < sizeof(refcmd::Header) || header.size > rec_size - offset) {
      return gpu::kPrivateDrawsMalformed;
    }
    if (header.opcode == refcmd::kDraw && header.size >= sizeof(refcmd::Draw)) {
      refcmd::Draw draw;
      std::memcpy(&draw, rec + offset, sizeof(draw));
      if (on_draw != nullptr) on_draw(ctx, draw.state);
    }
    offset += header.size;
  }
  return gpu::kPrivateDrawsOk;
}

// The export must keep the probe's signature.
[[maybe_unused]] constexpr gpu::DecodePrivateDrawsFn kCheckSignature = &DecodePrivateDraws;

}  // namespace
}  // namespace cltrace::refdriver

extern "C" __attribute__((visibility("default"))) int CltraceDecodePrivateDraws(
    const uint32_t* words, size_t count, void (*on_draw)(void* ctx, const uint64_t* handles),
    void* ctx) {
  static_assert(
      sizeof(cltrace::refcmd::Draw::state) == cltrace::gpu::kDrawSlotCount * sizeof(uint64_t),
      "a refcmd Draw record carries one handle per draw-state slot");
  return cltrace::refdriver::DecodePrivateDraws(words, count, on_draw, ctx);
}
