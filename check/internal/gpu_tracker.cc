#include "check/internal/gpu_tracker.h"

#include <algorithm>
#include <optional>

#include "absl/strings/match.h"
#include "check/internal/trackers.h"

namespace cltrace::check::internal {

struct GpuTracker::Parent {
  const Event* p = nullptr;      // the enclosing DDI call
  const CallMeta* pm = nullptr;  // its meta
  int32_t pctx = -1;             // the context whose table it went through
};

bool GpuTracker::Deallocated(int32_t o, uint64_t by) const {
  for (int32_t a : AllocationsOf(o))
    if (allocs_[a].dealloc_seq == 0 || allocs_[a].dealloc_seq > by) return false;
  return true;
}

void GpuTracker::ForgetDeallocated() {
  // Every allocation of such an object was deallocated before now: a later Flush would pass
  // over it (Deallocated at any later position), so it need not wait there.
  for (DeviceWork& w : devices_) {
    for (auto* list : {&w.destroyed_shared, &w.destroyed_queued}) {
      list->erase(std::remove_if(list->begin(), list->end(),
                                 [&](int32_t o) { return Deallocated(o, kNeverReturned - 1); }),
                  list->end());
    }
  }
}

void GpuTracker::MarkRefs(RecordMarks& marks) const {
  // Objects are marked here before the allocations (MarkAllocations) are.
  for (const DeviceWork& w : devices_) {
    for (int32_t o : w.destroyed_shared) marks.Mark(kObjRecord, o);
    for (int32_t o : w.destroyed_queued) marks.Mark(kObjRecord, o);
  }
  for (const Deadline& d : deadlines_) {
    for (int32_t o : d.objs) marks.Mark(kObjRecord, o);
    if (d.kind == Deadline::kPrimaryDeallocated) marks.Mark(kObjRecord, d.index);
  }
  // R70: at its DestroyDevice, a device counts its destroyed resources not deallocated.
  std::vector<uint8_t> draining(t_.contexts.size(), 0);
  for (const Deadline& d : deadlines_)
    if (d.kind == Deadline::kDeviceDrained && d.index >= 0) draining[d.index] = 1;
  for (const Allocation& a : allocs_) {
    if (a.dealloc_seq != 0 || a.obj < 0) continue;
    const Object& o = obj(a.obj);
    if (o.state == State::kDestroyed && o.device >= 0 &&
        (ctx(o.device).state != State::kDestroyed || draining[o.device]))
      marks.Mark(kObjRecord, a.obj);
  }
  // An allocation a handle still names reaches its object (a later pfnDeallocateCb, R67).
  for (size_t i = 0; i < allocs_.size(); ++i) {
    if (marks.Kept(kAllocRecord, static_cast<int32_t>(i))) marks.Mark(kObjRecord, allocs_[i].obj);
  }
}

void GpuTracker::MarkAllocations(RecordMarks& marks) const {
  for (const auto& [o, ids] : obj_allocs_) {
    if (!marks.Kept(kObjRecord, o)) continue;
    for (int32_t a : ids) marks.Mark(kAllocRecord, a);
  }
}

void GpuTracker::Compact(const RecordRemap& r) {
  CompactRecords(allocs_, r.to[kAllocRecord]);
  for (Allocation& a : allocs_) r.Apply(kObjRecord, a.obj);
  absl::flat_hash_map<int32_t, absl::InlinedVector<int32_t, 1>> by_obj;
  for (auto& [o, ids] : obj_allocs_) {
    const int32_t to = r(kObjRecord, o);
    if (to < 0) continue;
    absl::InlinedVector<int32_t, 1>& v = by_obj[to];
    for (int32_t a : ids) {
      if (int32_t na = r(kAllocRecord, a); na >= 0) v.push_back(na);
    }
  }
  obj_allocs_ = std::move(by_obj);
  for (DeviceWork& w : devices_) {
    r.ApplyAll(kObjRecord, w.destroyed_shared);
    r.ApplyAll(kObjRecord, w.destroyed_queued);
  }
  for (Deadline& d : deadlines_) {
    r.ApplyAll(kObjRecord, d.objs);
    if (d.kind == Deadline::kPrimaryDeallocated) r.Apply(kObjRecord, d.index);
  }
}

void GpuTracker::EnterHContext(const Event& e, uint64_t hcontext) {
  if (hcontext == 0) return;
  DomainSlot& d = hcontext_domain_[hcontext];
  if (d.used && d.end > e.seq && !env_.IsAncestor(e, d.seq)) {
    Flag(
        Rule::kR15, e, hcontext,
        absl::StrCat(CallName(e.call), " on HCONTEXT ", Token(hcontext), " overlaps ",
                     CallName(d.call), " (seq ", d.seq, ", tid ", d.tid, ") on the same HCONTEXT"));
  }
  d.Hold(e, Rule::kR15);
}

void GpuTracker::OnKernelCallback(const Event& e, const CallMeta& m) {
  Parent p;
  p.p = Enclosing(e);
  p.pm = p.p ? &table_[p.p->call] : nullptr;
  p.pctx = p.pm && p.pm->hdevice != kNoField && p.pm->layer != Layer::kAdapter
               ? LookupCtx(Arg(*p.p, p.pm->hdevice))
               : -1;
  switch (m.op) {
    case Op::kCreateContextCb:
      OnCreateContextCb(e);
      return;
    case Op::kRenderCb:
      OnRenderCb(e, m, p);
      return;
    case Op::kPresentCb: {
      uint64_t hc = Arg(e, m.hcontext);
      EnterHContext(e, hc);
      CheckDxgiCallback(e, p, Op::kDxgiPresent, hc);
      return;
    }
    case Op::kSetDisplayModeCb:
      CheckDxgiCallback(e, p, Op::kDxgiSetDisplayMode, 0);
      return;
    case Op::kHContextCb:
      EnterHContext(e, Arg(e, m.hcontext));
      return;
    case Op::kAllocateCb:
      OnAllocateCb(e, m, p);
      return;
    case Op::kDeallocateCb:
      OnDeallocateCb(e, m, p);
      return;
    default:
      return;
  }
}

void GpuTracker::CheckDxgiCallback(const Event& e, const Parent& p, Op expected, uint64_t hc) {
  if (p.pm != nullptr && p.pm->op == expected && p.p->tid == e.tid) return;
  const bool present = expected == Op::kDxgiPresent;
  Flag(Rule::kR17, e, hc,
       absl::StrCat(
           present ? "pfnPresentCb " : "pfnSetDisplayModeCb ",
           p.p ? absl::StrCat("inside ", CallName(p.p->call)) : std::string("outside any DDI call"),
           present ? "; only inside PresentDXGI, on its thread"
                   : "; only inside SetDisplayModeDXGI, on its thread"));
}

void GpuTracker::OnCreateContextCb(const Event& e) {
  context_created_ = true;
  uint64_t hc = Arg(e, Field(e, "hContext"));
  if (static_cast<int32_t>(e.ret) >= 0 && hc != 0) {
    ContextBuffers& b = buffers_[hc];
    b.command = Arg(e, Field(e, "CommandBufferSize"));
    b.allocations = Arg(e, Field(e, "AllocationListSize"));
    b.patches = Arg(e, Field(e, "PatchLocationListSize"));
  }
}

void GpuTracker::CheckRenderBuffers(const Event& e, uint64_t hc) {
  if (!context_created_) {
    Flag(Rule::kR74, e, hc, "pfnRenderCb before any pfnCreateContextCb");
    return;
  }
  auto it = buffers_.find(hc);
  if (it == buffers_.end()) return;
  ContextBuffers& b = it->second;
  uint64_t used = Arg(e, Field(e, "CommandOffset")) + Arg(e, Field(e, "CommandLength"));
  uint64_t allocs = Arg(e, Field(e, "NumAllocations"));
  uint64_t patches = Arg(e, Field(e, "NumPatchLocations"));
  const bool over = used > b.command || allocs > b.allocations || patches > b.patches;
  if (over) {
    Flag(Rule::kR74, e, hc,
         absl::StrCat("submission (", used, " command bytes, ", allocs, " allocations, ", patches,
                      " patch locations) exceeds the current buffers (", b.command, ", ",
                      b.allocations, ", ", b.patches, "): re-read the sizes pfnRenderCb returned"));
  }
  uint32_t invalid_user_buffer = 0x88760875;  // D3DDDIERR_INVALIDUSERBUFFER
  if (const format::EnumInfo* hrs = format::FindEnum("HRESULT_NAMES"))
    if (auto v = format::ValueOfName(*hrs, "D3DDDIERR_INVALIDUSERBUFFER"))
      invalid_user_buffer = static_cast<uint32_t>(*v);
  if (static_cast<uint32_t>(e.ret) == invalid_user_buffer &&
      Arg(e, Field(e, "CommandLength")) > 0 && !over) {
    // The kernel read the command buffer it handed out last and refused what it found: the
    // driver wrote its commands elsewhere (a buffer it kept across pfnRenderCb).
    Flag(Rule::kR74, e, hc,
         absl::StrCat("the kernel refused the submission of ", Arg(e, Field(e, "CommandLength")),
                      " command bytes with D3DDDIERR_INVALIDUSERBUFFER: they are not in the "
                      "command buffer the last pfnCreateContextCb/pfnRenderCb returned "
                      "(continue in the buffers pfnRenderCb hands back)"));
  }
  if (static_cast<int32_t>(e.ret) >= 0) {
    b.command = Arg(e, Field(e, "NewCommandBufferSizeOut"));
    b.allocations = Arg(e, Field(e, "NewAllocationListSizeOut"));
    b.patches = Arg(e, Field(e, "NewPatchLocationListSizeOut"));
  }
}

void GpuTracker::OnRenderCb(const Event& e, const CallMeta& m, const Parent& p) {
  uint64_t hc = Arg(e, m.hcontext);
  EnterHContext(e, hc);
  CheckRenderBuffers(e, hc);
  if (p.p == nullptr) {
    Flag(Rule::kR16, e, hc, "pfnRenderCb called outside any DDI call");
    return;
  }
  const CallMeta& pm = *p.pm;
  if (pm.layer == Layer::kDevice && p.pctx >= 0 && ctx(p.pctx).dc) {
    env_.set_dc_table(true);
    Flag(Rule::kR16, e, hc,
         absl::StrCat("pfnRenderCb inside DC::", CallName(p.p->call), " on ", CtxName(p.pctx)));
    return;
  }
  bool ic_domain =
      pm.layer == Layer::kDxgi || (pm.layer == Layer::kDevice && pm.domain == Domain::kIC);
  if (pm.layer == Layer::kDevice && !ic_domain &&
      (pm.op == Op::kCreateObject || pm.op == Op::kDestroyObject) && pm.object_type == 0) {
    ic_domain = t_.objects.IsNonSharedPrimary(Slot(Arg(*p.p, pm.handle)).obj);
  }
  if (!ic_domain) {
    Flag(Rule::kR16, e, hc,
         absl::StrCat("pfnRenderCb inside ", CallName(p.p->call),
                      ", which is not an IC-domain DDI"));
    return;
  }
  if (p.pctx >= 0 && !ctx(p.pctx).dc) {
    DeviceWork& w = Device(p.pctx);
    w.submitted_through = std::max(w.submitted_through, p.p->seq);
    t_.contexts.OnIcSubmit(e, p.pctx);
  }
}

void GpuTracker::OnAllocateCb(const Event& e, const CallMeta& m, const Parent& p) {
  uint64_t rt = Arg(e, Field(e, "hResource"));
  int32_t o = -1;
  bool inside_create = false;
  if (p.pm != nullptr && p.pm->layer == Layer::kDevice && p.pm->op == Op::kCreateObject &&
      p.pm->object_type == 0 && !(p.pctx >= 0 && ctx(p.pctx).dc)) {
    inside_create = p.p->tid == e.tid;
    o = Slot(Arg(*p.p, p.pm->handle)).obj;
    if (o >= 0 && obj(o).create_seq != p.p->seq) o = -1;
  }
  if (o < 0 && rt != 0) o = Slot(rt).rtobj;
  bool shared = o >= 0 && obj(o).shared;
  if (shared && !inside_create) {
    Flag(Rule::kR18, e, obj(o).handle,
         absl::StrCat("pfnAllocateCb for shared resource ", Token(obj(o).handle),
                      p.p ? absl::StrCat(" inside ", CallName(p.p->call))
                          : std::string(" outside any DDI call"),
                      "; shared allocations are made only inside its CreateResource"));
  }
  if (static_cast<int32_t>(e.ret) < 0) return;
  for (size_t a = 0; a < m.arrays.size(); ++a) {
    if (m.arrays[a].field != Field(e, "pAllocationInfo")) continue;
    uint32_t n = 0;
    auto elems = ArrayElems(e, m, a, &n);
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t h = elems[i * m.arrays[a].stride];  // hAllocation is the first member
      if (h == 0) continue;
      int32_t id = static_cast<int32_t>(allocs_.size());
      allocs_.push_back(Allocation{o, e.seq, 0, 0});
      Slot(h).alloc = id;
      if (o >= 0) obj_allocs_[o].push_back(id);
    }
  }
}

void GpuTracker::OnDeallocateCb(const Event& e, const CallMeta& m, const Parent& p) {
  for (size_t a = 0; a < m.arrays.size(); ++a) {
    if (m.arrays[a].field != Field(e, "HandleList")) continue;
    uint32_t n = 0;
    auto elems = ArrayElems(e, m, a, &n);
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t h = elems[i * m.arrays[a].stride];
      int32_t id = h ? Slot(h).alloc : -1;
      if (id < 0 || allocs_[id].dealloc_seq != 0) continue;
      Allocation& al = allocs_[id];
      al.dealloc_seq = e.seq;
      al.dealloc_parent = p.p ? p.p->seq : 0;
      if (al.obj < 0) continue;
      const Object& o = obj(al.obj);
      if (o.primary && !o.shared) continue;  // R69 governs non-shared primaries
      if (o.device >= 0 && o.last_ic_use > Device(o.device).submitted_through) {
        Flag(Rule::kR67, e, o.handle,
             absl::StrCat("pfnDeallocateCb for ", Token(o.handle),
                          " before the pfnRenderCb that submits the IC work at seq ", o.last_ic_use,
                          " referencing it"));
      }
    }
  }
}

// R78: SplitOffset never decreases along a patch-location list.
void GpuTracker::CheckSplits(const Event& e, const CallMeta& m, absl::string_view array) {
  const format::CallInfo* ci = format::GetCall(e.call);
  for (size_t a = 0; a < m.arrays.size(); ++a) {
    if (m.arrays[a].field != Field(e, array)) continue;
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
}

void GpuTracker::OnKmdCall(const Event& e, const CallMeta& m) {
  switch (m.op) {
    case Op::kKmdRender:
      CheckSplits(e, m, "pPatchLocationListIn");
      OnKmdRender(e);
      return;
    case Op::kKmdPatch: {
      CheckSplits(e, m, "pPatchLocationList");
      auto key = std::make_tuple(Arg(e, Field(e, "DmaBufferPhysicalAddress")),
                                 Arg(e, Field(e, "DmaBufferSubmissionStartOffset")),
                                 Arg(e, Field(e, "DmaBufferSubmissionEndOffset")));
      patched_[key] = Arg(e, Field(e, "SubmissionFenceId"));
      return;
    }
    case Op::kKmdSubmitCommand:
      OnKmdSubmit(e);
      return;
    case Op::kKmdInterruptRoutine: {
      Isr isr;
      isr.seq = e.seq;
      isrs_.push_back(isr);
      Deadline d = DeadlineOf(Deadline::kIsr, e, static_cast<int32_t>(isrs_.size() - 1));
      AddDeadline(std::move(d));
      return;
    }
    case Op::kDxgkNotifyInterrupt:
    case Op::kDxgkQueueDpc:
      OnInterrupt(e, m);
      return;
    default:
      if (CallName(e.call) == "GpuFenceRetired") RetireFence(Arg(e, Field(e, "FenceId")));
      return;
  }
}

// R68: the DMA buffer this fills carries the work of the enclosing pfnRenderCb.
void GpuTracker::OnKmdRender(const Event& e) {
  const Event* r = &e;
  while (r != nullptr && table_[r->call].op != Op::kRenderCb)
    r = r->parent != 0 ? env_.FindSeq(r->parent) : nullptr;
  if (r == nullptr) return;
  const Event* in = Enclosing(*r);
  const int32_t c = in != nullptr && table_[in->call].layer != Layer::kAdapter &&
                            table_[in->call].hdevice != kNoField
                        ? LookupCtx(Arg(*in, table_[in->call].hdevice))
                        : -1;
  if (c < 0 || ctx(c).dc) return;
  dma_owner_[Arg(e, Field(e, "DmaBufferPhysicalAddress"))] = Submission{c, r->seq};
}

void GpuTracker::OnKmdSubmit(const Event& e) {
  auto key = std::make_tuple(Arg(e, Field(e, "DmaBufferPhysicalAddress")),
                             Arg(e, Field(e, "DmaBufferSubmissionStartOffset")),
                             Arg(e, Field(e, "DmaBufferSubmissionEndOffset")));
  uint64_t fence = Arg(e, Field(e, "SubmissionFenceId"));
  uint64_t hcontext = Arg(e, Field(e, "hContext"));
  const format::EnumInfo* flags = format::FindEnum("DXGK_SUBMITCOMMANDFLAGS");
  uint64_t paging_bit = 0x2;
  if (flags != nullptr)
    if (auto v = format::ValueOfName(*flags, "DXGK_SUBMITCOMMANDFLAGS_PAGINGBUFFER"))
      paging_bit = *v;
  bool paging = hcontext == 0 || (Arg(e, Field(e, "Flags")) & paging_bit) != 0;
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
           absl::StrCat("SubmitCommand fence id ", fence, " differs from the fence id ", it->second,
                        " DxgkDdiPatch got for the same DMA buffer"));
    }
    patched_.erase(it);
  }
  uint64_t engine =
      (Arg(e, Field(e, "NodeOrdinal")) << 32) | (Arg(e, Field(e, "EngineOrdinal")) & 0xffffffff);
  auto [last, inserted] = engine_fence_.try_emplace(engine, fence);
  if (!inserted) {
    if (fence <= last->second) {
      Flag(Rule::kR75, e, hcontext,
           absl::StrCat("fence id ", fence, " not above the previous fence id ", last->second,
                        " on node ", engine >> 32, " engine ", engine & 0xffffffff));
    }
    last->second = std::max(last->second, fence);
  }
}

void GpuTracker::OnInterrupt(const Event& e, const CallMeta& m) {
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
  uint64_t type = Arg(e, Field(e, "InterruptType"));
  auto name = types ? format::NameOfValue(*types, type) : std::nullopt;
  bool crtc = name && absl::StrContains(*name, "CRTC");
  if (!crtc && isr->crtc_seen) {
    Flag(Rule::kR77, e, 0,
         absl::StrCat("DMA-type notification ", name ? *name : absl::StrCat(type),
                      " after a CRTC-type one in the same interrupt (DMA first)"));
  }
  if (crtc) isr->crtc_seen = true;
  if (name && *name == "DXGK_INTERRUPT_DMA_COMPLETED")
    RetireFence(Arg(e, Field(e, "SubmissionFenceId")));
  isr->notified = true;
  isr->dpc_after_notify = false;
}

void GpuTracker::RetireFence(uint64_t fence) {
  auto it = fence_owner_.find(fence);
  if (it == fence_owner_.end()) return;
  DeviceWork& x = Device(it->second.ctx);
  if (it->second.render > x.retired_render) {
    x.retired_render = it->second.render;
    x.retired_fence = fence;
  }
  fence_owner_.erase(it);
}

namespace {

uint64_t EnumValue(absl::string_view e, absl::string_view n, uint64_t fallback) {
  const format::EnumInfo* info = format::FindEnum(e);
  if (info == nullptr) return fallback;
  auto v = format::ValueOfName(*info, n);
  return v ? *v : fallback;
}

}  // namespace

void GpuTracker::OnDx6Call(const Event& e, const CallMeta& m) {
  if (CallName(e.call) == "CreateD3DBuffer") {
    const uint64_t kVideo = EnumValue("DDSCAPS", "DDSCAPS_VIDEOMEMORY", 0x4000) |
                            EnumValue("DDSCAPS", "DDSCAPS_LOCALVIDMEM", 0x10000000) |
                            EnumValue("DDSCAPS", "DDSCAPS_NONLOCALVIDMEM", 0x20000000);
    const uint64_t kWriteOnly = EnumValue("DDSCAPS", "DDSCAPS_WRITEONLY", 0x10000);
    const uint64_t kVb = EnumValue("DDSCAPS2", "DDSCAPS2_VERTEXBUFFER", 0x20);
    const uint64_t kCb = EnumValue("DDSCAPS2", "DDSCAPS2_COMMANDBUFFER", 0x40);
    uint64_t h = Arg(e, Field(e, "lpDDSurface"));
    if (h == 0 || Arg(e, Field(e, "ddRVal")) != 0) return;
    Surface sf;
    sf.caps = Arg(e, Field(e, "dwCaps"));
    sf.caps2 = Arg(e, Field(e, "dwCaps2"));
    sf.video = (Arg(e, Field(e, "dwCapsOut")) & kVideo) != 0;
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
  CheckDx6Swaps(e);
  // R80: a failure names the first unhandled command inside the command range.
  int32_t rv = static_cast<int32_t>(Arg(e, Field(e, "ddrval")));
  uint32_t still_drawing =
      static_cast<uint32_t>(EnumValue("HRESULT_NAMES", "D3DDDIERR_WASSTILLDRAWING", 0x8876021C));
  if (rv < 0 && static_cast<uint32_t>(rv) != still_drawing) {
    uint64_t first = Arg(e, Field(e, "dwCommandOffset"));
    uint64_t last = first + Arg(e, Field(e, "dwCommandLength"));
    uint64_t at = Arg(e, Field(e, "dwErrorOffset"));
    if (at < first || at >= last) {
      Flag(Rule::kR80, e, Arg(e, Field(e, "lpDDCommands")),
           absl::StrCat("D3dDrawPrimitives2 failed with dwErrorOffset ", at,
                        " outside the command range [", first, ", ", last, ")"));
    }
  }
}

// R79: a D3dDrawPrimitives2 swaps a buffer only when asked, and says where the new one lives.
void GpuTracker::CheckDx6Swaps(const Event& e) {
  const uint64_t in = Arg(e, Field(e, "dwFlags"));
  const uint64_t out = Arg(e, Field(e, "dwFlagsOut"));
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
    uint64_t before = Arg(e, Field(e, b.in));
    uint64_t after = Arg(e, Field(e, b.out));
    if (after == 0 || after == before) continue;
    uint64_t swap = EnumValue("D3DHALDP2_FLAGS", b.swap_flag, 0);
    uint64_t vid = EnumValue("D3DHALDP2_FLAGS", b.vidmem_flag, 0);
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
}

void GpuTracker::OnDeviceDestroyed(const Event& e, int32_t ic) {
  Deadline d = DeadlineOf(Deadline::kDeviceDrained, e, ic);
  AddDeadline(std::move(d));
}

void GpuTracker::OnResourceDestroyed(const Event& e, int32_t o) {
  const Object& ob = obj(o);
  if (AllocationsOf(o).empty()) return;
  if (ob.primary && !ob.shared) {
    // R69: deallocated inside this DestroyResource.
    Deadline d = DeadlineOf(Deadline::kPrimaryDeallocated, e, o);
    AddDeadline(std::move(d));
  } else if (ob.shared && ob.device >= 0) {
    Device(ob.device).destroyed_shared.push_back(o);
  } else if (ob.device >= 0) {
    Device(ob.device).destroyed_queued.push_back(o);
  }
}

void GpuTracker::OnFlush(const Event& e, int32_t ic) {
  DeviceWork& x = Device(ic);
  // R68: the shared resources destroyed before this Flush are deallocated by its end.
  Deadline d = DeadlineOf(Deadline::kFlushDeallocates, e, ic);
  for (int32_t o : x.destroyed_shared)
    if (!Deallocated(o, e.seq)) d.objs.push_back(o);
  x.destroyed_shared.clear();
  // The other queued destructions: those the GPU no longer needs -- a submission made after
  // the destruction was retired before this Flush -- would not stall, so this Flush frees
  // them. Without kernel-layer events in the trace nothing is known to be idle and nothing is
  // judged. Conservative across engines: only while no earlier submission of this device is
  // still on its way (in order, as one context's are, every earlier one retired).
  Deadline idle = d;
  idle.kind = Deadline::kFlushDrainsIdle;
  idle.objs.clear();
  idle.render = x.retired_render;
  idle.fence = x.retired_fence;
  bool in_order = x.retired_render != 0 && !x.destroyed_queued.empty();
  for (const auto* pending : {&dma_owner_, &fence_owner_}) {
    for (const auto& [key, sub] : *pending)
      if (sub.ctx == ic && sub.render < x.retired_render) in_order = false;
  }
  size_t keep = 0;
  for (int32_t o : x.destroyed_queued) {
    if (Deallocated(o, e.seq)) continue;
    if (in_order && obj(o).destroy_seq < x.retired_render) idle.objs.push_back(o);
    x.destroyed_queued[keep++] = o;
  }
  x.destroyed_queued.resize(keep);
  if (!d.objs.empty()) AddDeadline(std::move(d));
  if (!idle.objs.empty()) AddDeadline(std::move(idle));
}

void GpuTracker::ResolveDeadlines(uint64_t now) {
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
    ResolveDeadline(d);
  }
  deadlines_.resize(keep);
  if (deadlines_.empty() && isrs_.size() > 64) isrs_.clear();
}

void GpuTracker::ResolveDeadline(const Deadline& d) {
  switch (d.kind) {
    case Deadline::kFlushDeallocates:
      for (int32_t o : d.objs) {
        if (Deallocated(o, d.at)) continue;
        FlagAt(Rule::kR68, d.seq, d.tid, d.call, false, obj(o).handle,
               absl::StrCat("Flush returned without pfnDeallocateCb for shared resource ",
                            Token(obj(o).handle), " destroyed at seq ", obj(o).destroy_seq));
      }
      return;
    case Deadline::kFlushDrainsIdle:
      for (int32_t o : d.objs) {
        if (Deallocated(o, d.at)) continue;
        FlagAt(Rule::kR68, d.seq, d.tid, d.call, false, obj(o).handle,
               absl::StrCat("Flush returned without pfnDeallocateCb for resource ",
                            Token(obj(o).handle), " destroyed at seq ", obj(o).destroy_seq,
                            ", although the GPU had retired fence ", d.fence,
                            " of the pfnRenderCb at seq ", d.render,
                            ", made after that destruction: freeing it would not stall"));
      }
      return;
    case Deadline::kPrimaryDeallocated: {
      const Object& o = obj(d.index);
      for (int32_t a : AllocationsOf(d.index)) {
        if (allocs_[a].dealloc_seq > d.seq && allocs_[a].dealloc_seq < d.at) continue;
        FlagAt(Rule::kR69, d.seq, d.tid, d.call, false, o.handle,
               absl::StrCat("non-shared primary ", Token(o.handle),
                            " not deallocated inside its DestroyResource"));
        break;
      }
      return;
    }
    case Deadline::kDeviceDrained: {
      uint32_t left = 0;
      uint64_t example = 0;
      const std::deque<Object>& objs = t_.objects.all();
      for (size_t i = 0; i < objs.size(); ++i) {
        const Object& o = objs[i];
        if (o.device != d.index || o.state != State::kDestroyed ||
            Deallocated(static_cast<int32_t>(i), d.at))
          continue;
        if (left++ == 0) example = o.handle;
      }
      if (left > 0) {
        FlagAt(Rule::kR70, d.seq, d.tid, d.call, false, ctx(d.index).handle,
               absl::StrCat("IC DestroyDevice returned with ", left,
                            " destroyed resource(s) not deallocated (e.g. ", Token(example),
                            "); the deferred-destruction queue must be empty"));
      }
      return;
    }
    case Deadline::kIsr: {
      const Isr& isr = isrs_[d.index];
      if (isr.notified && !isr.dpc_after_notify) {
        FlagAt(Rule::kR77, d.seq, d.tid, d.call, false, 0,
               "DxgkDdiInterruptRoutine notified an interrupt but returned without "
               "DxgkCbQueueDpc after it");
      }
      return;
    }
  }
}

}  // namespace cltrace::check::internal
