#include "dx6/dx6_runtime.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "wddm/kernel_abi.h"

namespace cltrace::gpu {
namespace {

// A command the runtime leaves after dwCommandLength, standing for stale buffer content: an
// unknown opcode, so a driver that reads past the length fails on it (R80).
constexpr uint8_t kStaleCommand[4] = {0xFF, 0x00, 0x01, 0x00};

}  // namespace

std::vector<uint8_t> PatternTriangles(uint32_t count, uint32_t stride, uint64_t seed) {
  std::vector<uint8_t> v(static_cast<size_t>(count) * 3 * stride);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

Dx6Runtime::Dx6Runtime(const DD_D3DBUFCALLBACKS* buffers, const D3DHAL_CALLBACKS3* hal,
                       std::pair<const uint8_t*, size_t> video_heap, D3DHAL_HCONTEXT context,
                       Dx6RuntimeOptions options, ViolationSink* violations)
    : buffers_(buffers),
      hal_(hal),
      heap_(video_heap),
      context_(context),
      options_(options),
      violations_(violations),
      stride_(FvfStride(options.fvf)) {}

Dx6Runtime::~Dx6Runtime() {
  if (!shut_down_) (void)Shutdown();
}

void Dx6Runtime::Violation(rules::Rule rule, std::string message) {
  if (violations_ != nullptr)
    violations_->Report(gpu::Violation{.rule = rule, .message = std::move(message)});
}

bool Dx6Runtime::InVideo(const void* p) const {
  auto* b = static_cast<const uint8_t*>(p);
  return b != nullptr && b >= heap_.first && b < heap_.first + heap_.second;
}

absl::StatusOr<DD_HSURFACE> Dx6Runtime::CreateBuffer(uint32_t caps, uint32_t caps2, uint32_t size,
                                                     const char* what) {
  DD_CANCREATESURFACEDATA can{};
  can.dwCaps = caps;
  can.dwCaps2 = caps2;
  can.dwLinearSize = size;
  if (buffers_->CanCreateD3DBuffer(&can) != DDHAL_DRIVER_HANDLED || Failed(can.ddRVal)) {
    return absl::FailedPreconditionError(
        absl::StrFormat("CanCreateD3DBuffer refused the %s (%u bytes): 0x%08x", what, size,
                        static_cast<uint32_t>(can.ddRVal)));
  }
  surfaces_.push_back(std::make_unique<Surface>(Surface{caps, caps2, size}));
  DD_CREATESURFACEDATA c{};
  c.lpDDSurface.handle = surfaces_.back().get();
  c.dwCaps = caps;
  c.dwCaps2 = caps2;
  c.dwLinearSize = size;
  if (buffers_->CreateD3DBuffer(&c) != DDHAL_DRIVER_HANDLED || Failed(c.ddRVal)) {
    surfaces_.pop_back();
    return absl::ResourceExhaustedError(
        absl::StrFormat("CreateD3DBuffer of the %s (%u bytes) failed: 0x%08x", what, size,
                        static_cast<uint32_t>(c.ddRVal)));
  }
  ++stats_.buffers_created;
  const bool video = (c.dwCaps & DDSCAPS_VIDEOMEMORY) != 0 || InVideo(c.fpVidMem);
  const bool implicit_vb = (caps2 & (DDSCAPS2_VERTEXBUFFER | DDSCAPS2_COMMANDBUFFER)) == 0;
  if (video && implicit_vb) {
    Violation(rules::Rule::kR79,
              "CreateD3DBuffer placed the implicit vertex buffer (read/write) in video memory");
  }
  if (video && (caps2 & DDSCAPS2_VERTEXBUFFER) && (caps & DDSCAPS_WRITEONLY) == 0) {
    Violation(rules::Rule::kR79,
              "CreateD3DBuffer placed an explicit vertex buffer without DDSCAPS_WRITEONLY in "
              "video memory");
  }
  return c.lpDDSurface;
}

absl::Status Dx6Runtime::Adopt(Current* cur, DD_HSURFACE h, uint32_t capacity) {
  DD_LOCKDATA l{};
  l.lpDDSurface = h;
  l.dwFlags = DDLOCK_WAIT | DDLOCK_WRITEONLY;
  if (buffers_->LockD3DBuffer(&l) != DDHAL_DRIVER_HANDLED || Failed(l.ddRVal) ||
      l.lpSurfData == nullptr) {
    return absl::InternalError(
        absl::StrFormat("LockD3DBuffer failed: 0x%08x", static_cast<uint32_t>(l.ddRVal)));
  }
  cur->handle = h;
  cur->data = static_cast<uint8_t*>(l.lpSurfData);
  cur->capacity = capacity;
  return absl::OkStatus();
}

absl::Status Dx6Runtime::Init() {
  // The implicit vertex buffer comes first, right after context creation (ddi-spec §7 step 1).
  auto vb =
      CreateBuffer(DDSCAPS_EXECUTEBUFFER, 0, options_.vertex_buffer_size, "implicit vertex buffer");
  if (!vb.ok()) return vb.status();
  auto cmd = CreateBuffer(DDSCAPS_EXECUTEBUFFER, DDSCAPS2_COMMANDBUFFER,
                          options_.command_buffer_size, "command buffer");
  if (!cmd.ok()) return cmd.status();
  absl::Status s = Adopt(&vb_, *vb, options_.vertex_buffer_size);
  if (!s.ok()) return s;
  return Adopt(&cmd_, *cmd, options_.command_buffer_size);
}

absl::Status Dx6Runtime::AppendRaw(absl::Span<const uint8_t> bytes) {
  const size_t room_needed = bytes.size() + sizeof(kStaleCommand);
  if (batch_.size() + room_needed > cmd_.capacity) {
    const uint32_t req =
        room_needed > options_.command_buffer_size ? static_cast<uint32_t>(room_needed) : 0;
    absl::Status s = Flush(req, 0);
    if (!s.ok()) return s;
    if (batch_.size() + room_needed > cmd_.capacity) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%u command bytes do not fit the %u-byte command buffer", bytes.size(), cmd_.capacity));
    }
  }
  std::memcpy(cmd_.data + batch_.size(), bytes.data(), bytes.size());
  batch_.insert(batch_.end(), bytes.begin(), bytes.end());
  return absl::OkStatus();
}

absl::Status Dx6Runtime::SetRenderState(uint32_t state, uint32_t value) {
  Dp2Writer w;
  w.RenderState(state, value);
  return AppendRaw(w.bytes());
}

absl::Status Dx6Runtime::DrawTriangles(absl::Span<const uint8_t> vertices) {
  if (stride_ == 0 || vertices.size() % (3 * stride_) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%u vertex bytes are not whole triangles of %u-byte vertices", vertices.size(), stride_));
  }
  const uint32_t n = static_cast<uint32_t>(vertices.size() / stride_);
  if ((vertices_ + n) * stride_ > vb_.capacity || vertices_ + n > 0xFFFF) {
    // Vertex buffer full: submit, asking for a bigger one if this batch alone needs it.
    const uint32_t need = n * stride_;
    absl::Status s = Flush(0, need > options_.vertex_buffer_size ? need : 0);
    if (!s.ok()) return s;
    if ((vertices_ + n) * stride_ > vb_.capacity) {
      return absl::ResourceExhaustedError("triangles do not fit the implicit vertex buffer");
    }
  }
  Dp2Writer w;
  w.TriangleList(static_cast<uint16_t>(vertices_), static_cast<uint16_t>(n / 3));
  // The command first (it may flush, which resets the vertex buffer).
  if (batch_.size() + w.size() + sizeof(kStaleCommand) > cmd_.capacity) {
    absl::Status s = Flush();
    if (!s.ok()) return s;
    w.clear();
    w.TriangleList(static_cast<uint16_t>(vertices_), static_cast<uint16_t>(n / 3));
  }
  absl::Status s = AppendRaw(w.bytes());
  if (!s.ok()) return s;
  std::memcpy(vb_.data + static_cast<size_t>(vertices_) * stride_, vertices.data(),
              vertices.size());
  vertices_ += n;
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> Dx6Runtime::CreateExplicitVertexBuffer(uint32_t bytes, bool write_only) {
  auto h = CreateBuffer(DDSCAPS_EXECUTEBUFFER | (write_only ? DDSCAPS_WRITEONLY : 0),
                        DDSCAPS2_VERTEXBUFFER, bytes, "explicit vertex buffer");
  if (!h.ok()) return h.status();
  explicit_.push_back(Explicit{*h, bytes, write_only});
  return static_cast<uint32_t>(explicit_.size() - 1);
}

absl::Status Dx6Runtime::WriteExplicit(uint32_t vb, absl::Span<const uint8_t> bytes) {
  if (vb >= explicit_.size() || bytes.size() > explicit_[vb].size) {
    return absl::InvalidArgumentError("WriteExplicit: bad buffer or size");
  }
  DD_LOCKDATA l{};
  l.lpDDSurface = explicit_[vb].handle;
  l.dwFlags = DDLOCK_WAIT | DDLOCK_WRITEONLY;
  if (buffers_->LockD3DBuffer(&l) != DDHAL_DRIVER_HANDLED || Failed(l.ddRVal)) {
    return absl::InternalError("LockD3DBuffer of an explicit vertex buffer failed");
  }
  std::memcpy(l.lpSurfData, bytes.data(), bytes.size());
  DD_UNLOCKDATA u{};
  u.lpDDSurface = explicit_[vb].handle;
  buffers_->UnlockD3DBuffer(&u);
  return absl::OkStatus();
}

absl::Status Dx6Runtime::DrawExplicit(uint32_t vb, uint16_t first_vertex, uint16_t triangles) {
  if (vb >= explicit_.size()) return absl::InvalidArgumentError("DrawExplicit: bad buffer");
  absl::Status s = Flush();  // the implicit batch first: one vertex source per DP2 call
  if (!s.ok()) return s;
  Dp2Writer w;
  w.TriangleList(first_vertex, triangles);
  s = AppendRaw(w.bytes());
  if (!s.ok()) return s;
  // Explicit VBs are not renamed: no SWAPVERTEXBUFFER.
  return Submit(explicit_[vb].handle, nullptr, explicit_[vb].size / stride_, false, 0, 0);
}

absl::Status Dx6Runtime::DrawUserMemory(absl::Span<const uint8_t> vertices) {
  if (stride_ == 0 || vertices.size() % (3 * stride_) != 0) {
    return absl::InvalidArgumentError("DrawUserMemory: not whole triangles");
  }
  absl::Status s = Flush();
  if (!s.ok()) return s;
  const uint32_t n = static_cast<uint32_t>(vertices.size() / stride_);
  Dp2Writer w;
  w.TriangleList(0, static_cast<uint16_t>(n / 3));
  s = AppendRaw(w.bytes());
  if (!s.ok()) return s;
  return Submit(DD_HSURFACE{}, vertices.data(), n, false, 0, 0);
}

absl::Status Dx6Runtime::Flush(uint32_t req_command_size, uint32_t req_vertex_size) {
  if (batch_.empty() && vertices_ == 0 && req_command_size == 0 && req_vertex_size == 0) {
    return absl::OkStatus();
  }
  return Submit(vb_.handle, nullptr, vertices_, true, req_command_size, req_vertex_size);
}

absl::Status Dx6Runtime::Submit(DD_HSURFACE vertex_handle, const void* user_vertices,
                                uint32_t vertex_count, bool swap_vertices, uint32_t req_cmd,
                                uint32_t req_vtx) {
  if (shut_down_) return absl::FailedPreconditionError("Dx6Runtime used after Shutdown");
  if (batch_.size() + sizeof(kStaleCommand) <= cmd_.capacity) {
    std::memcpy(cmd_.data + batch_.size(), kStaleCommand, sizeof(kStaleCommand));
  }
  D3DHAL_DRAWPRIMITIVES2DATA d{};
  d.dwhContext = context_;
  d.dwFlags = D3DHALDP2_SWAPCOMMANDBUFFER | D3DHALDP2_EXECUTEBUFFER;
  if (swap_vertices) d.dwFlags |= D3DHALDP2_SWAPVERTEXBUFFER;
  if (user_vertices != nullptr) d.dwFlags |= D3DHALDP2_USERMEMVERTICES;
  if (req_cmd > 0) d.dwFlags |= D3DHALDP2_REQCOMMANDBUFSIZE;
  if (req_vtx > 0) d.dwFlags |= D3DHALDP2_REQVERTEXBUFSIZE;
  d.dwVertexType = options_.fvf;
  d.lpDDCommands = cmd_.handle;
  d.dwCommandOffset = 0;
  d.dwCommandLength = static_cast<DWORD>(batch_.size());
  d.lpDDVertex = user_vertices != nullptr ? DD_HSURFACE{} : vertex_handle;
  d.lpVertices = const_cast<void*>(user_vertices);
  d.dwVertexOffset = 0;
  d.dwVertexLength = vertex_count;
  d.dwReqVertexBufSize = req_vtx;
  d.dwReqCommandBufSize = req_cmd;
  d.lpdwRStates = rstates_;
  d.dwVertexSize = stride_;
  const uint32_t flags_in = d.dwFlags;
  DD_UNLOCKDATA u{};
  u.lpDDSurface = cmd_.handle;
  buffers_->UnlockD3DBuffer(&u);
  if (swap_vertices) {
    u.lpDDSurface = vb_.handle;
    buffers_->UnlockD3DBuffer(&u);
  }
  const DDHAL_DRIVER_RESULT handled = hal_->DrawPrimitives2(&d);
  ++stats_.dp2_calls;
  if (handled != DDHAL_DRIVER_HANDLED) {
    return absl::InternalError("D3dDrawPrimitives2 returned DDHAL_DRIVER_NOTHANDLED");
  }
  // R80: compare with a reference parse of exactly what was submitted.
  Dp2ParseResult ref = ParseDp2(batch_, vertex_count, [](const Dp2Command&) {});
  const bool failed = Failed(d.ddrval);
  if (failed) ++stats_.failed_dp2;
  if (ref.ok && failed) {
    Violation(
        rules::Rule::kR80,
        absl::StrFormat(
            "D3dDrawPrimitives2 failed (ddrval 0x%08x, dwErrorOffset %u) although all %u commands "
            "in dwCommandLength %u are valid%s",
            static_cast<uint32_t>(d.ddrval), d.dwErrorOffset, ref.commands, batch_.size(),
            d.dwErrorOffset >= batch_.size() ? ": the driver read past dwCommandLength" : ""));
  } else if (!ref.ok && !failed) {
    Violation(
        rules::Rule::kR80,
        absl::StrFormat("D3dDrawPrimitives2 succeeded on an invalid command at offset %u (%s)",
                        ref.error_offset, ref.error));
  } else if (!ref.ok && failed && d.dwErrorOffset != ref.error_offset) {
    Violation(rules::Rule::kR80,
              absl::StrFormat("D3dDrawPrimitives2 dwErrorOffset %u; the first unhandled command "
                              "is at %u (%s)",
                              d.dwErrorOffset, ref.error_offset, ref.error));
  }
  // R79 and continuing in the buffers handed back.
  auto check_swap = [&](DD_HSURFACE h, uint32_t flag, const char* what, bool implicit, Current* cur,
                        uint32_t capacity, uint64_t* vid_count) -> absl::Status {
    absl::Status s = Adopt(cur, h, capacity);
    if (!s.ok()) return s;
    const bool video = InVideo(cur->data);
    if (video) ++*vid_count;
    if (video != ((d.dwFlags & flag) != 0)) {
      Violation(rules::Rule::kR79,
                absl::StrFormat(
                    "D3dDrawPrimitives2 handed back a %s in %s memory with %s %s", what,
                    video ? "video" : "system",
                    flag == D3DHALDP2_VIDMEMCOMMANDBUF ? "VIDMEMCOMMANDBUF" : "VIDMEMVERTEXBUF",
                    (d.dwFlags & flag) ? "set" : "clear"));
    }
    if (video && implicit) {
      Violation(
          rules::Rule::kR79,
          "D3dDrawPrimitives2 swapped the implicit (read/write) vertex buffer into video memory");
    }
    return absl::OkStatus();
  };
  absl::Status s =
      check_swap(d.lpDDCommands, D3DHALDP2_VIDMEMCOMMANDBUF, "command buffer", false, &cmd_,
                 std::max(options_.command_buffer_size, req_cmd), &stats_.vidmem_command_swaps);
  if (!s.ok()) return s;
  if (swap_vertices) {
    s = check_swap(d.lpDDVertex, D3DHALDP2_VIDMEMVERTEXBUF, "vertex buffer", true, &vb_,
                   std::max(options_.vertex_buffer_size, req_vtx), &stats_.vidmem_vertex_swaps);
    if (!s.ok()) return s;
    vertices_ = 0;
  }
  log_.push_back(
      absl::StrFormat("DP2 flags=0x%x->0x%x len=%u vtx=%u req=%u/%u ddrval=0x%08x err=%u", flags_in,
                      d.dwFlags, batch_.size(), vertex_count, req_cmd, req_vtx,
                      static_cast<uint32_t>(d.ddrval), failed ? d.dwErrorOffset : 0));
  batch_.clear();
  return absl::OkStatus();
}

absl::Status Dx6Runtime::Shutdown() {
  if (shut_down_) return absl::OkStatus();
  shut_down_ = true;
  absl::Status first = absl::OkStatus();
  for (auto& surface : surfaces_) {
    DD_DESTROYSURFACEDATA d{};
    d.lpDDSurface.handle = surface.get();
    if (buffers_->DestroyD3DBuffer(&d) != DDHAL_DRIVER_HANDLED || Failed(d.ddRVal)) {
      if (first.ok()) first = absl::InternalError("DestroyD3DBuffer failed");
    }
  }
  surfaces_.clear();
  explicit_.clear();
  return first;
}

}  // namespace cltrace::gpu
