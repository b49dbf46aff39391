// Checker::Impl handlers of runtime callbacks: core-layer callbacks (pfnSetErrorCb and the
// error rules, amortized processing, staging destruction) and kernel-thunk callbacks
// (submission, presentation, allocation, HCONTEXT exclusivity).
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

void Checker::Impl::OnCoreLayerCallback(const Event& e, const CallMeta& m) {
  switch (m.op) {
    case Op::kSetErrorCb:
      OnSetErrorCb(e, m);
      return;
    case Op::kAmortizedCb: {
      const Event* p = Enclosing(e);
      uint64_t rt = Arg(e, m.hruntime);
      if (p != nullptr && table_[p->call].layer == Layer::kDevice)
        LearnCore(LookupCtx(Arg(*p, table_[p->call].hdevice)), rt);
      int32_t owner = rt ? Slot(rt).core : -1;
      int32_t pctx = -1;
      if (p == nullptr) {
        Flag(Rule::kR19, e, rt, "pfnPerformAmortizedProcessingCb called outside any DDI call");
      } else {
        const CallMeta& pm = table_[p->call];
        if (pm.layer == Layer::kDevice) pctx = LookupCtx(Arg(*p, pm.hdevice));
        if (p->tid != e.tid) {
          Flag(Rule::kR19, e, rt,
               absl::StrCat("pfnPerformAmortizedProcessingCb on thread ", e.tid,
                            " inside a DDI running on thread ", p->tid));
        } else if (pctx >= 0 && owner >= 0 && owner != pctx) {
          Flag(Rule::kR19, e, rt,
               absl::StrCat("pfnPerformAmortizedProcessingCb with the core layer of ",
                            CtxName(owner), " inside ", CallName(p->call), " through the table of ",
                            CtxName(pctx)));
        }
      }
      if (owner < 0) return;
      Ctx& o = ctxs_[owner];
      if (o.dc) {
        // DCs never submit: a second pump inside one DDI call is a double pump (CD10).
        if (p != nullptr && o.last_amortized_parent == p->seq) {
          Warn(Rule::kR72, e, rt,
               absl::StrCat("second pfnPerformAmortizedProcessingCb inside ", CallName(p->call),
                            " (seq ", p->seq, ") on ", CtxName(owner), " (do not double-pump)"));
        }
        o.last_amortized_parent = p ? p->seq : 0;
        o.calls_since_amortized = 0;
        o.r72_warned = false;
      } else {
        if (!o.submit_since_amortized && p != nullptr && o.last_amortized_parent == p->seq) {
          Warn(
              Rule::kR71, e, rt,
              absl::StrCat("second pfnPerformAmortizedProcessingCb inside ", CallName(p->call),
                           " (seq ", p->seq, ") without a submit in between (do not double-pump)"));
        }
        o.submit_since_amortized = false;
        o.last_amortized_parent = p ? p->seq : 0;
        o.submits_since_amortized = 0;
      }
      return;
    }
    case Op::kDisableStagingCb: {
      const Event* p = Enclosing(e);
      uint64_t rt = Arg(e, m.hruntime);
      int32_t owner = rt ? Slot(rt).core : -1;
      if (owner >= 0 && ctxs_[owner].dc) {
        Flag(Rule::kR7, e, rt,
             absl::StrCat("pfnDisableDeferredStagingResourceDestruction through the callback "
                          "table of ",
                          CtxName(owner)));
      } else if (p == nullptr || table_[p->call].op != Op::kCreateDevice) {
        Flag(Rule::kR7, e, rt,
             absl::StrCat("pfnDisableDeferredStagingResourceDestruction outside CreateDevice",
                          p ? absl::StrCat(" (inside ", CallName(p->call), ")") : ""));
      }
      return;
    }
    default:
      return;
  }
}

void Checker::Impl::OnSetErrorCb(const Event& e, const CallMeta& m) {
  const Event* p = Enclosing(e);
  const int32_t hr = static_cast<int32_t>(Arg(e, m.hresult));
  const uint32_t code = static_cast<uint32_t>(hr);
  const uint64_t rt = Arg(e, m.hruntime);
  if (p == nullptr) {
    Flag(Rule::kR28, e, rt, "pfnSetErrorCb called outside any DDI call");
    return;
  }
  const CallMeta& pm = table_[p->call];
  int32_t pctx = -1;
  if (pm.layer == Layer::kDevice) {
    pctx = LookupCtx(Arg(*p, pm.hdevice));
  } else if (pm.op == Op::kCreateDevice) {
    pctx = LookupCtx(Arg(*p, pm.hdrvdevice));
  }
  const bool pdc = pctx >= 0 && ctxs_[pctx].dc;
  current_dc_table_ = pdc;
  LearnCore(pctx, rt);
  const std::string fn = absl::StrCat(pdc ? "DC::" : "IC::", CallName(p->call));
  // R28: routed by table.
  if (pctx >= 0 && rt != 0) {
    int32_t owner = Slot(rt).core;
    if ((owner >= 0 && owner != pctx) ||
        (owner < 0 && ctxs_[pctx].core_layer != 0 && ctxs_[pctx].core_layer != rt)) {
      Flag(Rule::kR28, e, rt,
           absl::StrCat("error from ", fn, " reported to ",
                        owner >= 0 ? absl::StrCat("the core layer of ", CtxName(owner))
                                   : absl::StrCat("unknown core layer ", Token(rt)),
                        "; calls through the table of ", CtxName(pctx),
                        " report to its own core layer"));
    }
  }
  if (hr >= 0) return;
  if (pctx >= 0 && IsDeviceRemovedCode(code)) {
    int32_t dev = ctxs_[pctx].dc ? ctxs_[pctx].device : pctx;
    if (dev >= 0) ctxs_[dev].removed = true;
  }
  const std::string what = absl::StrCat(fn, " reported ", format::HresultToString(hr));
  const bool oom = code == k_.e_outofmemory;
  const bool removed = IsDeviceRemovedCode(code);
  if (code == k_.e_invalidarg) {
    Flag(Rule::kR30, e, rt,
         absl::StrCat(what,
                      "; application errors are D3DDDIERR_APPLICATIONERROR "
                      "(E_INVALIDARG means a driver bug)"));
  } else {
    switch (pm.op) {
      case Op::kCalcPrivate:
      case Op::kCalcPrivateCommandListSize:
      case Op::kCalcPrivateDeferredContextSize:
      case Op::kCalcHandleSize:
        Flag(Rule::kR31, e, rt, absl::StrCat(what, "; size queries never call pfnSetErrorCb"));
        break;
      case Op::kCreateCommandList:
        if (!pdc && !oom && !removed)
          Flag(Rule::kR20, e, rt,
               absl::StrCat(what,
                            "; only E_OUTOFMEMORY and D3DDDIERR_DEVICEREMOVED are "
                            "legal (others are critical)"));
        break;
      case Op::kRecycleCreateCommandList:
        if (oom) {
          Flag(Rule::kR22, e, rt,
               absl::StrCat(what, "; E_OUTOFMEMORY is reported by return value"));
        } else {
          Warn(Rule::kR22, e, rt,
               absl::StrCat(what, " via pfnSetErrorCb (not addressed by the sources)"));
        }
        break;
      case Op::kRecycleCreateDeferredContext:
        if (oom) {
          Flag(Rule::kR23, e, rt,
               absl::StrCat(what, "; E_OUTOFMEMORY is reported by return value"));
        } else {
          Warn(Rule::kR23, e, rt,
               absl::StrCat(what, " via pfnSetErrorCb (not addressed by the sources)"));
        }
        break;
      case Op::kCommandListExecute:
        if (!oom && !removed)
          Flag(Rule::kR24, e, rt,
               absl::StrCat(what,
                            "; only E_OUTOFMEMORY and D3DDDIERR_DEVICEREMOVED are "
                            "legal (others are critical)"));
        break;
      case Op::kDestroyCommandList:
      case Op::kRecycleDestroyCommandList:
      case Op::kDestroyDevice:
      case Op::kFlush:
      case Op::kQueryBegin:
      case Op::kQueryEnd:
      case Op::kRecycleCommandList:
        if (!removed && !(pdc && oom))
          Flag(Rule::kR25, e, rt,
               absl::StrCat(what, pdc ? "; only DEVICEREMOVED or E_OUTOFMEMORY may be set"
                                      : "; only D3DDDIERR_DEVICEREMOVED may be set"));
        break;
      case Op::kDestroyObject:
        if (pm.object_type == 0 && !removed && !(pdc && oom))
          Flag(Rule::kR25, e, rt,
               absl::StrCat(what, pdc ? "; only DEVICEREMOVED or E_OUTOFMEMORY may be set"
                                      : "; only D3DDDIERR_DEVICEREMOVED may be set"));
        break;
      case Op::kAbandonCommandList:
        if (oom || removed) {
          Flag(Rule::kR26, e, rt,
               absl::StrCat(what, "; AbandonCommandList may only set critical errors"));
        } else {
          Warn(Rule::kR26, e, rt,
               absl::StrCat(what, " (critical: the runtime treats it as fatal)"));
        }
        break;
      case Op::kCheckHandleSizes:
        if (removed)
          Flag(Rule::kR27, e, rt,
               absl::StrCat(what, "; capability checks never report device removal"));
        break;
      default:
        break;
    }
  }
  // The failing call's consequences (§3: "create failed => handle dead").
  switch (pm.op) {
    case Op::kCreateCommandList:
      if (!pdc) {
        int32_t ci = Slot(Arg(*p, pm.handle)).cl;
        if (ci >= 0 && cls_[ci].create_seq == p->seq && cls_[ci].state == State::kValid)
          ClTo(ci, State::kCreateFailed, e);
        int32_t d = LookupCtx(Arg(*p, pm.hdeferred));
        if (d >= 0 && ctxs_[d].dc && ctxs_[d].state == State::kClosed && ctxs_[d].last.n > 0 &&
            ctxs_[d].last.t[ctxs_[d].last.n - 1].seq == p->seq)
          CtxTo(d, State::kFinishFailed, e);
        threads_.Cancel(p->tid, p->seq);
        return;
      }
      [[fallthrough]];
    case Op::kCreateObject:
      if (pdc) {
        int32_t l = Slot(Arg(*p, pm.handle)).local;
        if (l >= 0 && locals_[l].open_seq == p->seq && locals_[l].state == State::kOpen) {
          CloseLocal(l, e);
          locals_[l].state = State::kCreateFailed;
        }
      } else {
        int32_t o = Slot(Arg(*p, pm.handle)).obj;
        if (o >= 0 && objs_[o].create_seq == p->seq && objs_[o].state == State::kAlive)
          ObjTo(o, State::kCreateFailed, e);
        threads_.Cancel(p->tid, p->seq);
      }
      break;
    case Op::kCreateDeferredContext: {
      int32_t d = LookupCtx(Arg(*p, pm.hdrvcontext));
      if (d >= 0 && ctxs_[d].dc && ctxs_[d].state == State::kRecording && ctxs_[d].recording == 1)
        CtxTo(d, State::kCreateFailed, e);
      return;
    }
    default:
      break;
  }
  // R29: a DC call's E_OUTOFMEMORY is a local context removal.
  if (pdc && oom && pm.op != Op::kAbandonCommandList) {
    Ctx& x = ctxs_[pctx];
    if ((x.state == State::kRecording || x.state == State::kFinishing) && !x.oom_pending) {
      x.oom_pending = true;
      x.oom_seq = e.seq;
    }
  }
}

void Checker::Impl::EnterHContext(const Event& e, uint64_t hcontext) {
  if (hcontext == 0) return;
  DomainSlot& d = hcontext_domain_[hcontext];
  if (d.used && d.end > e.seq && !IsAncestor(e, d.seq)) {
    Flag(
        Rule::kR15, e, hcontext,
        absl::StrCat(CallName(e.call), " on HCONTEXT ", Token(hcontext), " overlaps ",
                     CallName(d.call), " (seq ", d.seq, ", tid ", d.tid, ") on the same HCONTEXT"));
  }
  uint64_t end = EndOf(e);
  if (!d.used || end > d.end) {
    d.seq = e.seq;
    d.end = end;
    d.tid = e.tid;
    d.call = e.call;
    d.used = true;
  }
}

void Checker::Impl::OnKernelCallback(const Event& e, const CallMeta& m) {
  const Event* p = Enclosing(e);
  const CallMeta* pm = p ? &table_[p->call] : nullptr;
  int32_t pctx = pm && pm->hdevice != kNoField && pm->layer != Layer::kAdapter
                     ? LookupCtx(Arg(*p, pm->hdevice))
                     : -1;
  auto field = [&](absl::string_view name) -> int16_t {
    return static_cast<int16_t>(format::FieldIndex(*format::GetCall(e.call), name));
  };
  switch (m.op) {
    case Op::kCreateContextCb: {
      context_created_ = true;
      uint64_t hc = Arg(e, field("hContext"));
      if (static_cast<int32_t>(e.ret) >= 0 && hc != 0) {
        ContextBuffers& b = buffers_[hc];
        b.command = Arg(e, field("CommandBufferSize"));
        b.allocations = Arg(e, field("AllocationListSize"));
        b.patches = Arg(e, field("PatchLocationListSize"));
      }
      return;
    }
    case Op::kRenderCb: {
      uint64_t hc = Arg(e, m.hcontext);
      EnterHContext(e, hc);
      if (!context_created_) {
        Flag(Rule::kR74, e, hc, "pfnRenderCb before any pfnCreateContextCb");
      } else if (auto it = buffers_.find(hc); it != buffers_.end()) {
        ContextBuffers& b = it->second;
        uint64_t used = Arg(e, field("CommandOffset")) + Arg(e, field("CommandLength"));
        uint64_t allocs = Arg(e, field("NumAllocations"));
        uint64_t patches = Arg(e, field("NumPatchLocations"));
        if (used > b.command || allocs > b.allocations || patches > b.patches) {
          Flag(Rule::kR74, e, hc,
               absl::StrCat("submission (", used, " command bytes, ", allocs, " allocations, ",
                            patches, " patch locations) exceeds the current buffers (", b.command,
                            ", ", b.allocations, ", ", b.patches,
                            "): re-read the sizes pfnRenderCb returned"));
        }
        uint32_t invalid_user_buffer = 0x88760875;  // D3DDDIERR_INVALIDUSERBUFFER
        if (const format::EnumInfo* hrs = format::FindEnum("HRESULT_NAMES"))
          if (auto v = format::ValueOfName(*hrs, "D3DDDIERR_INVALIDUSERBUFFER"))
            invalid_user_buffer = static_cast<uint32_t>(*v);
        if (static_cast<uint32_t>(e.ret) == invalid_user_buffer &&
            Arg(e, field("CommandLength")) > 0 &&
            !(used > b.command || allocs > b.allocations || patches > b.patches)) {
          // The kernel read the command buffer it handed out last and refused what it found:
          // the driver wrote its commands elsewhere (a buffer it kept across pfnRenderCb).
          Flag(Rule::kR74, e, hc,
               absl::StrCat("the kernel refused the submission of ", Arg(e, field("CommandLength")),
                            " command bytes with D3DDDIERR_INVALIDUSERBUFFER: they are not in the "
                            "command buffer the last pfnCreateContextCb/pfnRenderCb returned "
                            "(continue in the buffers pfnRenderCb hands back)"));
        }
        if (static_cast<int32_t>(e.ret) >= 0) {
          b.command = Arg(e, field("NewCommandBufferSizeOut"));
          b.allocations = Arg(e, field("NewAllocationListSizeOut"));
          b.patches = Arg(e, field("NewPatchLocationListSizeOut"));
        }
      }
      if (p == nullptr) {
        Flag(Rule::kR16, e, hc, "pfnRenderCb called outside any DDI call");
        return;
      }
      if (pm->layer == Layer::kDevice && pctx >= 0 && ctxs_[pctx].dc) {
        current_dc_table_ = true;
        Flag(Rule::kR16, e, hc,
             absl::StrCat("pfnRenderCb inside DC::", CallName(p->call), " on ", CtxName(pctx)));
        return;
      }
      bool ic_domain =
          pm->layer == Layer::kDxgi || (pm->layer == Layer::kDevice && pm->domain == Domain::kIC);
      if (pm->layer == Layer::kDevice && !ic_domain &&
          (pm->op == Op::kCreateObject || pm->op == Op::kDestroyObject) && pm->object_type == 0) {
        int32_t o = Slot(Arg(*p, pm->handle)).obj;
        ic_domain = o >= 0 && objs_[o].primary && !objs_[o].shared;
      }
      if (!ic_domain) {
        Flag(Rule::kR16, e, hc,
             absl::StrCat("pfnRenderCb inside ", CallName(p->call),
                          ", which is not an IC-domain DDI"));
        return;
      }
      if (pctx >= 0 && !ctxs_[pctx].dc) {
        Ctx& ic = ctxs_[pctx];
        ic.submitted_through = std::max(ic.submitted_through, p->seq);
        ic.submit_since_amortized = true;
        if (++ic.submits_since_amortized >= options_.heuristics.amortized_max_submits_without) {
          Warn(Rule::kR71, e, ic.handle,
               absl::StrCat(ic.submits_since_amortized,
                            " IC submits without pfnPerformAmortizedProcessingCb (threshold ",
                            options_.heuristics.amortized_max_submits_without, ")"));
          ic.submits_since_amortized = 0;
        }
      }
      return;
    }
    case Op::kPresentCb: {
      uint64_t hc = Arg(e, m.hcontext);
      EnterHContext(e, hc);
      if (pm == nullptr || pm->op != Op::kDxgiPresent || p->tid != e.tid) {
        Flag(Rule::kR17, e, hc,
             absl::StrCat("pfnPresentCb ",
                          p ? absl::StrCat("inside ", CallName(p->call))
                            : std::string("outside any DDI call"),
                          "; only inside PresentDXGI, on its thread"));
      }
      return;
    }
    case Op::kSetDisplayModeCb:
      if (pm == nullptr || pm->op != Op::kDxgiSetDisplayMode || p->tid != e.tid) {
        Flag(Rule::kR17, e, 0,
             absl::StrCat("pfnSetDisplayModeCb ",
                          p ? absl::StrCat("inside ", CallName(p->call))
                            : std::string("outside any DDI call"),
                          "; only inside SetDisplayModeDXGI, on its thread"));
      }
      return;
    case Op::kHContextCb:
      EnterHContext(e, Arg(e, m.hcontext));
      return;
    case Op::kAllocateCb: {
      uint64_t rt = Arg(e, field("hResource"));
      int32_t obj = -1;
      bool inside_create = false;
      if (pm != nullptr && pm->layer == Layer::kDevice && pm->op == Op::kCreateObject &&
          pm->object_type == 0 && !(pctx >= 0 && ctxs_[pctx].dc)) {
        inside_create = p->tid == e.tid;
        obj = Slot(Arg(*p, pm->handle)).obj;
        if (obj >= 0 && objs_[obj].create_seq != p->seq) obj = -1;
      }
      if (obj < 0 && rt != 0) obj = Slot(rt).rtobj;
      bool shared = obj >= 0 && objs_[obj].shared;
      if (shared && !inside_create) {
        Flag(Rule::kR18, e, objs_[obj].handle,
             absl::StrCat("pfnAllocateCb for shared resource ", Token(objs_[obj].handle),
                          p ? absl::StrCat(" inside ", CallName(p->call))
                            : std::string(" outside any DDI call"),
                          "; shared allocations are made only inside its CreateResource"));
      }
      if (static_cast<int32_t>(e.ret) < 0) return;
      for (size_t a = 0; a < m.arrays.size(); ++a) {
        if (m.arrays[a].field != field("pAllocationInfo")) continue;
        uint32_t n = 0;
        auto elems = ArrayElems(e, m, a, &n);
        for (uint32_t i = 0; i < n; ++i) {
          uint64_t h = elems[i * m.arrays[a].stride];  // hAllocation is the first member
          if (h == 0) continue;
          int32_t id = static_cast<int32_t>(allocs_.size());
          allocs_.push_back(Allocation{obj, e.seq, 0, 0});
          Slot(h).alloc = id;
          if (obj >= 0) objs_[obj].allocs.push_back(id);
        }
      }
      return;
    }
    case Op::kDeallocateCb: {
      for (size_t a = 0; a < m.arrays.size(); ++a) {
        if (m.arrays[a].field != field("HandleList")) continue;
        uint32_t n = 0;
        auto elems = ArrayElems(e, m, a, &n);
        for (uint32_t i = 0; i < n; ++i) {
          uint64_t h = elems[i * m.arrays[a].stride];
          int32_t id = h ? Slot(h).alloc : -1;
          if (id < 0 || allocs_[id].dealloc_seq != 0) continue;
          Allocation& al = allocs_[id];
          al.dealloc_seq = e.seq;
          al.dealloc_parent = p ? p->seq : 0;
          if (al.obj < 0) continue;
          const Object& o = objs_[al.obj];
          if (o.primary && !o.shared) continue;  // R69 governs non-shared primaries
          if (o.device >= 0 && o.last_ic_use > ctxs_[o.device].submitted_through) {
            Flag(Rule::kR67, e, o.handle,
                 absl::StrCat("pfnDeallocateCb for ", Token(o.handle),
                              " before the pfnRenderCb that submits the IC work at seq ",
                              o.last_ic_use, " referencing it"));
          }
        }
      }
      return;
    }
    default:
      return;
  }
}

}  // namespace cltrace::check
