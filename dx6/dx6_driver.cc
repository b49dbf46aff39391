#include "dx6/dx6_driver.h"

#include <algorithm>
#include <cstring>

#include "dx6/dp2.h"
#include "wddm/content_model.h"
#include "wddm/digest.h"
#include "wddm/free_ranges.h"
#include "wddm/kernel_abi.h"

namespace cltrace::gpu {

enum class BufferKind { kImplicitVertex, kExplicitVertex, kCommand };

struct Dx6Driver::Buffer {
  Set* set = nullptr;
  const void* handle = nullptr;  // DD_HSURFACE value
  std::vector<uint8_t> system;   // backing when not in video memory
  bool video = false;
  uint32_t video_offset = 0;
  uint32_t size = 0;
  int busy = 0;  // DP2 calls until the "hardware" is done with it
};

struct Dx6Driver::Set {
  BufferKind kind = BufferKind::kCommand;
  bool write_only = false;
  std::vector<std::unique_ptr<Buffer>> members;
};

struct Dx6Driver::Context {
  uint64_t digest = ZeroDigest(0);
  uint64_t state = 0;
};

namespace {

constexpr uint32_t kHeapAlign = 16;

}  // namespace

// The C entry points.
struct Dx6EntryPoints {
  static Dx6Driver* driver;  // the tables carry no state: one model driver per process

  // The buffer a DirectDraw surface call names; E_INVALIDARG in its ddRVal (and null) when the
  // handle is not one of ours.
  template <typename Request>
  static Dx6Driver::Buffer* SurfaceOf(Request* p) {
    Dx6Driver::Buffer* b = driver->Find(p->lpDDSurface);
    if (b == nullptr) p->ddRVal = Hr(E_INVALIDARG);
    return b;
  }

  static uint8_t* Data(Dx6Driver* d, Dx6Driver::Buffer* b) {
    return b->video ? d->heap_.data() + b->video_offset : b->system.data();
  }

  static DDHAL_DRIVER_RESULT APIENTRY CanCreate(DD_CANCREATESURFACEDATA* p) {
    const bool both = (p->dwCaps2 & DDSCAPS2_VERTEXBUFFER) && (p->dwCaps2 & DDSCAPS2_COMMANDBUFFER);
    if ((p->dwCaps & DDSCAPS_EXECUTEBUFFER) == 0) return DDHAL_DRIVER_NOTHANDLED;
    p->ddRVal = (both || p->dwLinearSize == 0) ? Hr(E_INVALIDARG) : Hr(S_OK);
    return DDHAL_DRIVER_HANDLED;
  }

  static DDHAL_DRIVER_RESULT APIENTRY Create(DD_CREATESURFACEDATA* p) {
    Dx6Driver* d = driver;
    if ((p->dwCaps & DDSCAPS_EXECUTEBUFFER) == 0) return DDHAL_DRIVER_NOTHANDLED;
    if (p->lpDDSurface.handle == nullptr || p->dwLinearSize == 0 ||
        d->by_handle_.contains(p->lpDDSurface.handle)) {
      p->ddRVal = Hr(E_INVALIDARG);
      return DDHAL_DRIVER_HANDLED;
    }
    auto set = std::make_unique<Dx6Driver::Set>();
    set->kind = (p->dwCaps2 & DDSCAPS2_COMMANDBUFFER)  ? BufferKind::kCommand
                : (p->dwCaps2 & DDSCAPS2_VERTEXBUFFER) ? BufferKind::kExplicitVertex
                                                       : BufferKind::kImplicitVertex;
    set->write_only = (p->dwCaps & DDSCAPS_WRITEONLY) != 0;
    // Explicit vertex buffers cannot be multi-buffered; the other kinds get a whole set now.
    const uint32_t n =
        set->kind == BufferKind::kExplicitVertex ? 1 : std::max(1u, d->options_.buffers_per_set);
    for (uint32_t i = 0; i < n; ++i) {
      auto b = std::make_unique<Dx6Driver::Buffer>();
      b->set = set.get();
      b->handle = i == 0 ? p->lpDDSurface.handle : b.get();
      bool video = false;
      switch (set->kind) {
        case BufferKind::kImplicitVertex:
          video = false;
          break;  // read/write: never video
        case BufferKind::kExplicitVertex:
          video = set->write_only;
          break;
        case BufferKind::kCommand:
          video = (i % 2) == 1;
          break;  // write-only: mix both
      }
      if (!d->PlaceBuffer(b.get(), p->dwLinearSize, video)) {
        for (auto& m : set->members) d->FreeBuffer(m.get());
        p->ddRVal = Hr(E_OUTOFMEMORY);
        return DDHAL_DRIVER_HANDLED;
      }
      set->members.push_back(std::move(b));
    }
    for (auto& m : set->members) d->by_handle_[m->handle] = m.get();
    d->stats_.buffers_created += set->members.size();
    Dx6Driver::Buffer* first = set->members[0].get();
    p->dwCaps &= ~(DDSCAPS_SYSTEMMEMORY | DDSCAPS_VIDEOMEMORY | DDSCAPS_LOCALVIDMEM);
    p->dwCaps |= first->video ? (DDSCAPS_VIDEOMEMORY | DDSCAPS_LOCALVIDMEM) : DDSCAPS_SYSTEMMEMORY;
    p->fpVidMem = Data(d, first);
    p->ddRVal = Hr(S_OK);
    d->sets_.push_back(std::move(set));
    return DDHAL_DRIVER_HANDLED;
  }

  static DDHAL_DRIVER_RESULT APIENTRY Destroy(DD_DESTROYSURFACEDATA* p) {
    Dx6Driver* d = driver;
    Dx6Driver::Buffer* b = SurfaceOf(p);
    if (b == nullptr) return DDHAL_DRIVER_HANDLED;
    // Destroying any member tears down the whole set the driver made (ddi-spec §7 step 7).
    Dx6Driver::Set* set = b->set;
    for (auto& m : set->members) {
      d->by_handle_.erase(m->handle);
      d->FreeBuffer(m.get());
      ++d->stats_.buffers_destroyed;
    }
    d->sets_.erase(std::remove_if(d->sets_.begin(), d->sets_.end(),
                                  [&](const auto& s) { return s.get() == set; }),
                   d->sets_.end());
    p->ddRVal = Hr(S_OK);
    return DDHAL_DRIVER_HANDLED;
  }

  static DDHAL_DRIVER_RESULT APIENTRY Lock(DD_LOCKDATA* p) {
    Dx6Driver* d = driver;
    Dx6Driver::Buffer* b = SurfaceOf(p);
    if (b == nullptr) return DDHAL_DRIVER_HANDLED;
    if (b->busy > 0) {
      if (p->dwFlags & DDLOCK_DONOTWAIT) {
        p->ddRVal = Hr(D3DDDIERR_WASSTILLDRAWING);  // same value as DDERR_WASSTILLDRAWING
        return DDHAL_DRIVER_HANDLED;
      }
      b->busy = 0;  // wait for the hardware
    }
    p->lpSurfData = Data(d, b);
    p->ddRVal = Hr(S_OK);
    return DDHAL_DRIVER_HANDLED;
  }

  static DDHAL_DRIVER_RESULT APIENTRY Unlock(DD_UNLOCKDATA* p) {
    p->ddRVal = driver->Find(p->lpDDSurface) != nullptr ? Hr(S_OK) : Hr(E_INVALIDARG);
    return DDHAL_DRIVER_HANDLED;
  }

  // Hands back the next buffer of `b`'s set (ddi-spec §7 step 3).
  static Dx6Driver::Buffer* Swap(Dx6Driver* d, Dx6Driver::Buffer* b, bool req, uint32_t req_size) {
    auto& ms = b->set->members;
    size_t at = 0;
    while (ms[at].get() != b) ++at;
    b->busy = 2;
    Dx6Driver::Buffer* next = nullptr;
    for (size_t k = 1; k <= ms.size() && next == nullptr; ++k) {
      Dx6Driver::Buffer* cand = ms[(at + k) % ms.size()].get();
      if (cand != b && cand->busy == 0) next = cand;
    }
    if (next == nullptr) {  // every other buffer still queued: wait for the oldest
      next = ms[(at + 1) % ms.size()].get();
      next->busy = 0;
    }
    const bool planted = d->options_.bug == PlantedBug::kR79ImplicitVbInVidmem &&
                         b->set->kind == BufferKind::kImplicitVertex;
    const uint32_t want = std::max(next->size, req ? req_size : 0);
    bool video = next->video;
    if (want > d->options_.max_video_buffer) video = false;  // too large: system backing
    if (planted) video = true;                               // planted R79
    if (want != next->size || video != next->video) {
      d->FreeBuffer(next);
      if (!d->PlaceBuffer(next, want, video) && !d->PlaceBuffer(next, want, false)) return nullptr;
    }
    return next;
  }

  static DDHAL_DRIVER_RESULT APIENTRY DrawPrimitives2(D3DHAL_DRAWPRIMITIVES2DATA* p) {
    Dx6Driver* d = driver;
    ++d->stats_.dp2_calls;
    d->Retire();
    auto ctx_it = d->contexts_.find(p->dwhContext.value);
    Dx6Driver::Buffer* cmd = d->Find(p->lpDDCommands);
    if (ctx_it == d->contexts_.end() || cmd == nullptr ||
        static_cast<uint64_t>(p->dwCommandOffset) + p->dwCommandLength > cmd->size) {
      p->ddrval = Hr(E_INVALIDARG);
      p->dwErrorOffset = 0;
      ++d->stats_.failures;
      return DDHAL_DRIVER_HANDLED;
    }
    Dx6Driver::Context& ctx = *ctx_it->second;
    // Vertex source.
    const uint32_t stride = p->dwVertexSize != 0 ? p->dwVertexSize : FvfStride(p->dwVertexType);
    const uint8_t* vertices = nullptr;
    Dx6Driver::Buffer* vb = nullptr;
    if (p->dwFlags & D3DHALDP2_USERMEMVERTICES) {
      vertices = static_cast<const uint8_t*>(p->lpVertices);
    } else if (p->lpDDVertex.handle != nullptr) {
      vb = d->Find(p->lpDDVertex);
      if (vb == nullptr || static_cast<uint64_t>(p->dwVertexOffset) +
                                   static_cast<uint64_t>(p->dwVertexLength) * stride >
                               vb->size) {
        p->ddrval = Hr(E_INVALIDARG);
        p->dwErrorOffset = 0;
        ++d->stats_.failures;
        return DDHAL_DRIVER_HANDLED;
      }
      vertices = Data(d, vb) + p->dwVertexOffset;
    }
    const uint32_t vertex_length = vertices != nullptr ? p->dwVertexLength : 0;
    const uint8_t* base = Data(d, cmd) + p->dwCommandOffset;
    // Planted R80: parse to the end of the buffer instead of dwCommandLength.
    const size_t span_len = d->options_.bug == PlantedBug::kR80BadErrorOffset
                                ? cmd->size - p->dwCommandOffset
                                : p->dwCommandLength;
    auto* rstates = static_cast<uint32_t*>(p->lpdwRStates);
    const bool exec = (p->dwFlags & D3DHALDP2_EXECUTEBUFFER) != 0 && rstates != nullptr;
    Dp2ParseResult r =
        ParseDp2(absl::MakeConstSpan(base, span_len), vertex_length, [&](const Dp2Command& c) {
          if (c.vertex_end > c.first_vertex) {
            const uint64_t vh =
                HashBytes(vertices + static_cast<size_t>(c.first_vertex) * stride,
                          static_cast<size_t>(c.vertex_end - c.first_vertex) * stride);
            ctx.digest =
                DigestCombineAll(ctx.digest, {kDigestTagDraw, c.op, c.count, ctx.state, vh});
          } else {
            ctx.state = DigestCombineAll(
                ctx.state, {c.op, c.count, HashBytes(c.payload.data(), c.payload.size())});
            if (exec && c.op == static_cast<uint8_t>(Dp2Op::kRenderState)) {
              for (uint16_t i = 0; i < c.count; ++i) {
                uint32_t state, value;
                std::memcpy(&state, c.payload.data() + 8 * i, 4);
                std::memcpy(&value, c.payload.data() + 8 * i + 4, 4);
                if (state < 256) rstates[state] = value;
              }
            }
          }
        });
    if (r.ok) {
      p->ddrval = Hr(S_OK);
    } else {
      p->ddrval = Hr(kDp2Unparsed);
      p->dwErrorOffset = r.error_offset;
      ++d->stats_.failures;
    }
    // Swaps: the old buffers are processed "asynchronously", fresh ones handed back.
    p->dwFlags &= ~(D3DHALDP2_VIDMEMCOMMANDBUF | D3DHALDP2_VIDMEMVERTEXBUF);
    if (p->dwFlags & D3DHALDP2_SWAPCOMMANDBUFFER) {
      Dx6Driver::Buffer* next =
          Swap(d, cmd, (p->dwFlags & D3DHALDP2_REQCOMMANDBUFSIZE) != 0, p->dwReqCommandBufSize);
      if (next != nullptr) {
        ++d->stats_.command_swaps;
        p->lpDDCommands.handle = const_cast<void*>(next->handle);
        if (next->video) p->dwFlags |= D3DHALDP2_VIDMEMCOMMANDBUF;
      }
    }
    if ((p->dwFlags & D3DHALDP2_SWAPVERTEXBUFFER) && vb != nullptr) {
      Dx6Driver::Buffer* next =
          Swap(d, vb, (p->dwFlags & D3DHALDP2_REQVERTEXBUFSIZE) != 0, p->dwReqVertexBufSize);
      if (next != nullptr) {
        ++d->stats_.vertex_swaps;
        p->lpDDVertex.handle = const_cast<void*>(next->handle);
        const bool planted = d->options_.bug == PlantedBug::kR79ImplicitVbInVidmem;
        if (next->video && !planted) p->dwFlags |= D3DHALDP2_VIDMEMVERTEXBUF;
      }
    }
    return DDHAL_DRIVER_HANDLED;
  }
};

Dx6Driver* Dx6EntryPoints::driver = nullptr;

namespace {
const DD_D3DBUFCALLBACKS kBufCallbacks = {Dx6EntryPoints::CanCreate, Dx6EntryPoints::Create,
                                          Dx6EntryPoints::Destroy, Dx6EntryPoints::Lock,
                                          Dx6EntryPoints::Unlock};
const D3DHAL_CALLBACKS3 kHal3 = {Dx6EntryPoints::DrawPrimitives2};
}  // namespace

Dx6Driver::Dx6Driver(Dx6DriverOptions options)
    : options_(options), heap_(options.video_heap_bytes, 0) {
  heap_free_.emplace(0, options.video_heap_bytes);
  Dx6EntryPoints::driver = this;
}

Dx6Driver::~Dx6Driver() {
  if (Dx6EntryPoints::driver == this) Dx6EntryPoints::driver = nullptr;
}

const DD_D3DBUFCALLBACKS* Dx6Driver::buffer_callbacks() const { return &kBufCallbacks; }
const D3DHAL_CALLBACKS3* Dx6Driver::hal_callbacks3() const { return &kHal3; }

D3DHAL_HCONTEXT Dx6Driver::CreateContext() {
  const uint32_t id = next_context_++;
  contexts_.emplace(id, std::make_unique<Context>());
  return D3DHAL_HCONTEXT{id};
}

void Dx6Driver::DestroyContext(D3DHAL_HCONTEXT context) { contexts_.erase(context.value); }

std::pair<const uint8_t*, size_t> Dx6Driver::video_heap() const {
  return {heap_.data(), heap_.size()};
}

uint64_t Dx6Driver::ContextDigest(D3DHAL_HCONTEXT context) const {
  auto it = contexts_.find(context.value);
  return it == contexts_.end() ? 0 : it->second->digest;
}

absl::Span<uint8_t> Dx6Driver::BufferMemory(DD_HSURFACE h) {
  auto it = by_handle_.find(h.handle);
  if (it == by_handle_.end()) return {};
  return absl::MakeSpan(Dx6EntryPoints::Data(this, it->second), it->second->size);
}

size_t Dx6Driver::live_buffers() const { return by_handle_.size(); }
size_t Dx6Driver::video_bytes_in_use() const { return video_in_use_; }

Dx6Driver::Buffer* Dx6Driver::Find(DD_HSURFACE h) {
  auto it = by_handle_.find(h.handle);
  return it == by_handle_.end() ? nullptr : it->second;
}

bool Dx6Driver::PlaceBuffer(Buffer* b, uint32_t size, bool video) {
  b->size = size;
  if (video && size <= options_.max_video_buffer) {
    const uint32_t need = (size + kHeapAlign - 1) / kHeapAlign * kHeapAlign;
    for (auto it = heap_free_.begin(); it != heap_free_.end(); ++it) {
      if (it->second < need) continue;
      const uint32_t at = it->first, len = it->second;
      heap_free_.erase(it);
      if (len > need) heap_free_.emplace(at + need, len - need);
      b->video = true;
      b->video_offset = at;
      b->system.clear();
      video_in_use_ += need;
      return true;
    }
    // Video memory full: fall back to system memory.
  }
  b->video = false;
  b->system.assign(size, 0);
  return true;
}

void Dx6Driver::FreeBuffer(Buffer* b) {
  if (b->video) {
    const uint32_t need = (b->size + kHeapAlign - 1) / kHeapAlign * kHeapAlign;
    video_in_use_ -= need;
    ReleaseRange(heap_free_, b->video_offset, need);
    b->video = false;
  }
  b->system.clear();
  b->system.shrink_to_fit();
}

void Dx6Driver::Retire() {
  for (auto& s : sets_) {
    for (auto& m : s->members) {
      if (m->busy > 0) --m->busy;
    }
  }
}

}  // namespace cltrace::gpu
