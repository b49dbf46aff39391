// Checker::Impl handlers of the GPU-model and DX6 calls (R75-R80) and the checks judged
// when a call returns (R68, R69, R70, R77).
#include "check/internal/checker_impl.h"

namespace cltrace::check {

using format::CallId;
using format::Domain;
using format::Event;
using format::Layer;
using internal::EndOf;
using internal::kNeverReturned;
using internal::kNoField;
using internal::Op;

void Checker::Impl::OnKmdCall(const Event& e, const CallMeta& m) {
  const format::CallInfo* ci = format::GetCall(e.call);
  auto field = [&](absl::string_view name) -> int16_t {
    return static_cast<int16_t>(format::FieldIndex(*ci, name));
  };
  // R78: SplitOffset never decreases along a patch-location list.
  auto check_splits = [&](absl::string_view array) {
    for (size_t a = 0; a < m.arrays.size(); ++a) {
      if (m.arrays[a].field != field(array)) continue;
      const format::FieldInfo& af = format::Fields(*ci)[m.arrays[a].field];
      int split = -1;
      auto elems_info = format::ElementFields(af);
      for (size_t k = 0; k < elems_info.size(); ++k)
        if (absl::string_view(elems_info[k].name) == "SplitOffset") split = static_cast<int>(k);
      if (split < 0) return;
      uint32_t n = 0;
      auto elems = ArrayElems(e, m, a, &n);
      for (uint32_t i = 1; i < n; ++i) {
        uint64_t prev = elems[(i - 1) * m.arrays[a].stride + split];
        uint64_t cur = elems[i * m.arrays[a].stride + split];
        if (cur < prev) {
          Flag(Rule::kR78, e, 0,
               absl::StrCat(array, "[", i, "].SplitOffset = ", cur, " after ", prev,
                            " (split offsets never decrease)"));
          return;
        }
      }
    }
  };
  switch (m.op) {
    case Op::kKmdRender: {
      check_splits("pPatchLocationListIn");
      // R68: the DMA buffer this fills carries the work of the enclosing pfnRenderCb.
      const Event* r = &e;
      while (r != nullptr && table_[r->call].op != Op::kRenderCb)
        r = r->parent != 0 ? FindSeq(r->parent) : nullptr;
      if (r == nullptr) return;
      const Event* in = Enclosing(*r);
      const int32_t c = in != nullptr && table_[in->call].layer != Layer::kAdapter &&
                                table_[in->call].hdevice != kNoField
                            ? LookupCtx(Arg(*in, table_[in->call].hdevice))
                            : -1;
      if (c < 0 || ctxs_[c].dc) return;
      dma_owner_[Arg(e, field("DmaBufferPhysicalAddress"))] = Submission{c, r->seq};
      return;
    }
    case Op::kKmdPatch: {
      check_splits("pPatchLocationList");
      auto key = std::make_tuple(Arg(e, field("DmaBufferPhysicalAddress")),
                                 Arg(e, field("DmaBufferSubmissionStartOffset")),
                                 Arg(e, field("DmaBufferSubmissionEndOffset")));
      patched_[key] = Arg(e, field("SubmissionFenceId"));
      return;
    }
    case Op::kKmdSubmitCommand: {
      auto key = std::make_tuple(Arg(e, field("DmaBufferPhysicalAddress")),
                                 Arg(e, field("DmaBufferSubmissionStartOffset")),
                                 Arg(e, field("DmaBufferSubmissionEndOffset")));
      uint64_t fence = Arg(e, field("SubmissionFenceId"));
      uint64_t hcontext = Arg(e, field("hContext"));
      const format::EnumInfo* flags = format::FindEnum("DXGK_SUBMITCOMMANDFLAGS");
      uint64_t paging_bit = 0x2;
      if (flags != nullptr)
        if (auto v = format::ValueOfName(*flags, "DXGK_SUBMITCOMMANDFLAGS_PAGINGBUFFER"))
          paging_bit = *v;
      bool paging = hcontext == 0 || (Arg(e, field("Flags")) & paging_bit) != 0;
      if (!paging) {
        if (auto own = dma_owner_.find(std::get<0>(key)); own != dma_owner_.end()) {
          fence_owner_[fence] = own->second;
          dma_owner_.erase(own);
        }
      }
      auto it = patched_.find(key);
      if (it == patched_.end()) {
        if (!paging) {
          Flag(Rule::kR76, e, hcontext,
               absl::StrCat("DMA buffer at 0x", absl::Hex(std::get<0>(key)), " [", std::get<1>(key),
                            ", ", std::get<2>(key), ") submitted without DxgkDdiPatch"));
        }
      } else {
        if (it->second != fence) {
          Flag(Rule::kR75, e, hcontext,
               absl::StrCat("SubmitCommand fence id ", fence, " differs from the fence id ",
                            it->second, " DxgkDdiPatch got for the same DMA buffer"));
        }
        patched_.erase(it);
      }
      uint64_t engine =
          (Arg(e, field("NodeOrdinal")) << 32) | (Arg(e, field("EngineOrdinal")) & 0xffffffff);
      auto [last, inserted] = engine_fence_.try_emplace(engine, fence);
      if (!inserted) {
        if (fence <= last->second) {
          Flag(Rule::kR75, e, hcontext,
               absl::StrCat("fence id ", fence, " not above the previous fence id ", last->second,
                            " on node ", engine >> 32, " engine ", engine & 0xffffffff));
        }
        last->second = std::max(last->second, fence);
      }
      return;
    }
    case Op::kKmdInterruptRoutine: {
      Isr isr;
      isr.seq = e.seq;
      isrs_.push_back(isr);
      Deadline d;
      d.kind = Deadline::kIsr;
      d.at = EndOf(e);
      d.seq = e.seq;
      d.tid = e.tid;
      d.call = e.call;
      d.index = static_cast<int32_t>(isrs_.size() - 1);
      AddDeadline(std::move(d));
      return;
    }
    case Op::kDxgkNotifyInterrupt:
    case Op::kDxgkQueueDpc: {
      const Event* p = Enclosing(e);
      Isr* isr = nullptr;
      if (p != nullptr && table_[p->call].op == Op::kKmdInterruptRoutine) {
        for (Isr& x : isrs_)
          if (x.seq == p->seq) isr = &x;
      }
      if (m.op == Op::kDxgkQueueDpc) {
        if (isr != nullptr && isr->notified) isr->dpc_after_notify = true;
        return;
      }
      if (isr == nullptr) {
        Flag(Rule::kR77, e, 0, "DxgkCbNotifyInterrupt outside DxgkDdiInterruptRoutine");
        return;
      }
      const format::EnumInfo* types = format::FindEnum("DXGK_INTERRUPT_TYPE");
      uint64_t type = Arg(e, field("InterruptType"));
      auto name = types ? format::NameOfValue(*types, type) : std::nullopt;
      bool crtc = name && absl::StrContains(*name, "CRTC");
      if (!crtc && isr->crtc_seen) {
        Flag(Rule::kR77, e, 0,
             absl::StrCat("DMA-type notification ", name ? *name : absl::StrCat(type),
                          " after a CRTC-type one in the same interrupt (DMA first)"));
      }
      if (crtc) isr->crtc_seen = true;
      if (name && *name == "DXGK_INTERRUPT_DMA_COMPLETED")
        RetireFence(Arg(e, field("SubmissionFenceId")));
      isr->notified = true;
      isr->dpc_after_notify = false;
      return;
    }
    default:
      if (absl::string_view(ci->name) == "GpuFenceRetired") RetireFence(Arg(e, field("FenceId")));
      return;
  }
}

void Checker::Impl::RetireFence(uint64_t fence) {
  auto it = fence_owner_.find(fence);
  if (it == fence_owner_.end()) return;
  Ctx& x = ctxs_[it->second.ctx];
  if (it->second.render > x.retired_render) {
    x.retired_render = it->second.render;
    x.retired_fence = fence;
  }
  fence_owner_.erase(it);
}

void Checker::Impl::OnDx6Call(const Event& e, const CallMeta& m) {
  const format::CallInfo* ci = format::GetCall(e.call);
  auto field = [&](absl::string_view name) -> int16_t {
    return static_cast<int16_t>(format::FieldIndex(*ci, name));
  };
  auto flag_value = [](absl::string_view e, absl::string_view n, uint64_t fallback) {
    const format::EnumInfo* info = format::FindEnum(e);
    if (info == nullptr) return fallback;
    auto v = format::ValueOfName(*info, n);
    return v ? *v : fallback;
  };
  const uint64_t kVideo = flag_value("DDSCAPS", "DDSCAPS_VIDEOMEMORY", 0x4000) |
                          flag_value("DDSCAPS", "DDSCAPS_LOCALVIDMEM", 0x10000000) |
                          flag_value("DDSCAPS", "DDSCAPS_NONLOCALVIDMEM", 0x20000000);
  const uint64_t kWriteOnly = flag_value("DDSCAPS", "DDSCAPS_WRITEONLY", 0x10000);
  const uint64_t kVb = flag_value("DDSCAPS2", "DDSCAPS2_VERTEXBUFFER", 0x20);
  const uint64_t kCb = flag_value("DDSCAPS2", "DDSCAPS2_COMMANDBUFFER", 0x40);
  if (absl::string_view(ci->name) == "CreateD3DBuffer") {
    uint64_t h = Arg(e, field("lpDDSurface"));
    if (h == 0 || Arg(e, field("ddRVal")) != 0) return;
    Surface sf;
    sf.caps = Arg(e, field("dwCaps"));
    sf.caps2 = Arg(e, field("dwCaps2"));
    sf.video = (Arg(e, field("dwCapsOut")) & kVideo) != 0;
    if (sf.video && !(sf.caps2 & (kVb | kCb))) {
      Flag(Rule::kR79, e, h,
           "implicit vertex buffer placed in video memory (it is read/write system "
           "memory)");
    } else if (sf.video && (sf.caps2 & kVb) && !(sf.caps & kWriteOnly)) {
      Flag(Rule::kR79, e, h,
           "explicit vertex buffer placed in video memory without DDSCAPS_WRITEONLY");
    }
    int32_t id = static_cast<int32_t>(surfaces_.size());
    surfaces_.push_back(sf);
    Slot(h).surface = id;
    return;
  }
  if (m.op != Op::kDx6DrawPrimitives2) return;
  const uint64_t in = Arg(e, field("dwFlags"));
  const uint64_t out = Arg(e, field("dwFlagsOut"));
  struct Buffer {
    const char* in;
    const char* out;
    const char* swap_flag;
    const char* vidmem_flag;
  };
  for (const Buffer& b : {Buffer{"lpDDCommands", "lpDDCommandsOut", "D3DHALDP2_SWAPCOMMANDBUFFER",
                                 "D3DHALDP2_VIDMEMCOMMANDBUF"},
                          Buffer{"lpDDVertex", "lpDDVertexOut", "D3DHALDP2_SWAPVERTEXBUFFER",
                                 "D3DHALDP2_VIDMEMVERTEXBUF"}}) {
    uint64_t before = Arg(e, field(b.in));
    uint64_t after = Arg(e, field(b.out));
    if (after == 0 || after == before) continue;
    uint64_t swap = flag_value("D3DHALDP2_FLAGS", b.swap_flag, 0);
    uint64_t vid = flag_value("D3DHALDP2_FLAGS", b.vidmem_flag, 0);
    if (!(in & swap)) {
      Flag(Rule::kR79, e, after,
           absl::StrCat("D3dDrawPrimitives2 swapped ", b.in, " without ", b.swap_flag));
      continue;
    }
    int32_t sid = Slot(after).surface;
    if (sid < 0) continue;
    bool video = surfaces_[sid].video;
    if (video != ((out & vid) != 0)) {
      Flag(Rule::kR79, e, after,
           absl::StrCat("swapped-in ", b.in, " is in ", video ? "video" : "system", " memory but ",
                        b.vidmem_flag, video ? " is not set" : " is set"));
    }
  }
  // R80: a failure names the first unhandled command inside the command range.
  int32_t rv = static_cast<int32_t>(Arg(e, field("ddrval")));
  uint32_t still_drawing =
      static_cast<uint32_t>(flag_value("HRESULT_NAMES", "D3DDDIERR_WASSTILLDRAWING", 0x8876021C));
  if (rv < 0 && static_cast<uint32_t>(rv) != still_drawing) {
    uint64_t first = Arg(e, field("dwCommandOffset"));
    uint64_t last = first + Arg(e, field("dwCommandLength"));
    uint64_t at = Arg(e, field("dwErrorOffset"));
    if (at < first || at >= last) {
      Flag(Rule::kR80, e, Arg(e, field("lpDDCommands")),
           absl::StrCat("D3dDrawPrimitives2 failed with dwErrorOffset ", at,
                        " outside the command range [", first, ", ", last, ")"));
    }
  }
}

void Checker::Impl::ResolveDeadlines(uint64_t now) {
  next_deadline_ = kNeverReturned;
  size_t keep = 0;
  for (size_t i = 0; i < deadlines_.size(); ++i) {
    Deadline& d = deadlines_[i];
    if (d.at >= now || d.at == kNeverReturned) {
      if (d.at != kNeverReturned) next_deadline_ = std::min(next_deadline_, d.at);
      if (keep != i) deadlines_[keep] = std::move(d);
      ++keep;
      continue;
    }
    switch (d.kind) {
      case Deadline::kFlushDeallocates:
        for (int32_t o : d.objs) {
          if (Deallocated(objs_[o], d.at)) continue;
          FlagAt(Rule::kR68, d.seq, d.tid, d.call, false, objs_[o].handle,
                 absl::StrCat("Flush returned without pfnDeallocateCb for shared resource ",
                              Token(objs_[o].handle), " destroyed at seq ", objs_[o].destroy_seq));
        }
        break;
      case Deadline::kFlushDrainsIdle:
        for (int32_t o : d.objs) {
          if (Deallocated(objs_[o], d.at)) continue;
          FlagAt(Rule::kR68, d.seq, d.tid, d.call, false, objs_[o].handle,
                 absl::StrCat("Flush returned without pfnDeallocateCb for resource ",
                              Token(objs_[o].handle), " destroyed at seq ", objs_[o].destroy_seq,
                              ", although the GPU had retired fence ", d.fence,
                              " of the pfnRenderCb at seq ", d.render,
                              ", made after that destruction: freeing it would not stall"));
        }
        break;
      case Deadline::kPrimaryDeallocated: {
        const Object& o = objs_[d.index];
        for (int32_t a : o.allocs) {
          if (allocs_[a].dealloc_seq > d.seq && allocs_[a].dealloc_seq < d.at) continue;
          FlagAt(Rule::kR69, d.seq, d.tid, d.call, false, o.handle,
                 absl::StrCat("non-shared primary ", Token(o.handle),
                              " not deallocated inside its DestroyResource"));
          break;
        }
        break;
      }
      case Deadline::kDeviceDrained: {
        uint32_t left = 0;
        uint64_t example = 0;
        for (const Object& o : objs_) {
          if (o.device != d.index || o.state != State::kDestroyed || Deallocated(o, d.at)) continue;
          if (left++ == 0) example = o.handle;
        }
        if (left > 0) {
          FlagAt(Rule::kR70, d.seq, d.tid, d.call, false, ctxs_[d.index].handle,
                 absl::StrCat("IC DestroyDevice returned with ", left,
                              " destroyed resource(s) not deallocated (e.g. ", Token(example),
                              "); the deferred-destruction queue must be empty"));
        }
        break;
      }
      case Deadline::kIsr: {
        const Isr& isr = isrs_[d.index];
        if (isr.notified && !isr.dpc_after_notify) {
          FlagAt(Rule::kR77, d.seq, d.tid, d.call, false, 0,
                 "DxgkDdiInterruptRoutine notified an interrupt but returned without "
                 "DxgkCbQueueDpc after it");
        }
        break;
      }
    }
  }
  deadlines_.resize(keep);
  if (deadlines_.empty() && isrs_.size() > 64) isrs_.clear();
}

}  // namespace cltrace::check
