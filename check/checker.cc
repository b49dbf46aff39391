#include "check/checker.h"

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

absl::StatusOr<CheckResult> Checker::Impl::Run(absl::Span<const Event> events,
                                               const format::TokenTable& handles) {
  events_ = events;
  handles_ = &handles;
  result_ = CheckResult();
  slots_.assign(handles.size() + 1, HandleSlot());
  uint64_t prev = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (e.seq <= prev) {
      return absl::InvalidArgumentError(absl::StrCat("event ", i, " has seq ", e.seq, " after seq ",
                                                     prev, ": events must be sorted by seq"));
    }
    prev = e.seq;
    if (table_[e.call].op == Op::kNone) {
      return absl::InvalidArgumentError(
          absl::StrCat("event ", i, " (seq ", e.seq, ") has no known call id"));
    }
    if (e.seq > next_deadline_) ResolveDeadlines(e.seq);
    OnEvent(e);
    if (e.annotation != 0 && options_.strings != nullptr) OnAnnotation(e);
  }
  ResolveDeadlines(kNeverReturned - 1);
  result_.calls = events.size();
  return std::move(result_);
}

void Checker::Impl::OnEvent(const Event& e) {
  const CallMeta& m = table_[e.call];
  current_dc_table_ = false;
  switch (m.layer) {
    case Layer::kDevice:
      OnDeviceCall(e, m);
      break;
    case Layer::kAdapter:
      OnAdapterCall(e, m);
      break;
    case Layer::kCoreLayer:
      OnCoreLayerCallback(e, m);
      break;
    case Layer::kKernelCb:
      OnKernelCallback(e, m);
      break;
    case Layer::kDxgi: {
      int32_t c = LookupCtx(Arg(e, m.hdevice));
      if (c >= 0 && !ctxs_[c].dc) {
        EnterDomain(ctxs_[c].domain, e, Rule::kR10, c);
        NoteIcUses(e, m);
      }
      break;
    }
    case Layer::kKmd:
    case Layer::kDxgkrnl:
      OnKmdCall(e, m);
      break;
    case Layer::kDx6:
      OnDx6Call(e, m);
      break;
    default:
      break;
  }
}

// R5: the recorder compares the driver's device tables with their CreateDevice snapshot and
// notes every changed slot on the call that first observed it ("table-rewrite (R5):
// D3D11DDI_DEVICEFUNCS.pfnX of immediate context ... changed by the driver from A to B"),
// joined with " | " to any other note of that call.
void Checker::Impl::OnAnnotation(const Event& e) {
  constexpr absl::string_view kNote = "table-rewrite (R5): D3D11DDI_DEVICEFUNCS.";
  absl::string_view text = options_.strings->Token(e.annotation);
  if (!absl::StrContains(text, kNote)) return;  // most annotations name the API call only
  for (absl::string_view note : absl::StrSplit(text, " | ")) {
    if (!absl::ConsumePrefix(&note, kNote)) continue;
    absl::string_view slot = note.substr(0, note.find(' '));
    // Only the immediate context's table is constrained (ddi-spec R5).
    if (!absl::StrContains(note, " of immediate context ")) continue;
    const bool fixed = absl::StartsWith(slot, "pfnCreate") || absl::StartsWith(slot, "pfnOpen") ||
                       absl::StartsWith(slot, "pfnDestroy") ||
                       absl::StartsWith(slot, "pfnCalcPrivate") ||
                       absl::StartsWith(slot, "pfnCheck");
    const bool fixed_a = absl::StartsWith(slot, "pfnRecycle") ||
                         slot == "pfnCalcDeferredContextHandleSize";  // R5a [INF]
    // Other slots may be hot-swapped from the IC thread; the note does not say which thread
    // wrote the slot, so they are not judged.
    if (!fixed && !fixed_a) continue;
    const CallMeta& m = table_[e.call];
    uint64_t h = m.layer == Layer::kDevice ? Arg(e, m.hdevice) : 0;
    Flag(Rule::kR5, e, h,
         absl::StrCat("the driver rewrote IC-table slot ", slot, " after CreateDevice (noted by ",
                      "the recorder at this call); ",
                      fixed_a ? "the Recycle* and CalcDeferredContextHandleSize slots (R5a)"
                              : "pfnCreate*, pfnOpen*, pfnDestroy*, pfnCalcPrivate* and "
                                "pfnCheck* slots",
                      " are fixed once CreateDevice returns"));
  }
}

void Checker::Impl::OnAdapterCall(const Event& e, const CallMeta& m) {
  switch (m.op) {
    case Op::kCreateDevice: {
      if (static_cast<int32_t>(e.ret) < 0) return;  // failed: no device
      uint64_t h = Arg(e, m.hdrvdevice);
      if (h == 0) return;
      int32_t c = NewCtx(false, h, Arg(e, m.hrtcorelayer), -1, false, e);
      if (caps_build2_) ctxs_[c].dc_support = true;
      if (auto it = no_lists_.find(Arg(e, m.hdevice)); it != no_lists_.end())
        ctxs_[c].no_lists_caps_seq = it->second;
      return;
    }
    case Op::kGetCaps: {
      if (static_cast<int32_t>(e.ret) < 0 || Arg(e, m.caps_type) != k_.caps_threading) return;
      for (size_t a = 0; a < m.arrays.size(); ++a) {
        if (m.arrays[a].field != m.caps_array) continue;
        uint32_t n = 0;
        auto elems = ArrayElems(e, m, a, &n);
        if (n == 0) return;
        uint64_t caps = elems[0];
        bool lists = (caps & (k_.caps_commandlists | k_.caps_commandlists_build2)) != 0;
        if (caps & k_.caps_commandlists_build2) caps_build2_ = true;
        if (lists) {
          no_lists_.erase(Arg(e, m.hdevice));
        } else {
          no_lists_[Arg(e, m.hdevice)] = e.seq;
        }
        if (lists && !(caps & k_.caps_freethreaded)) {
          Flag(Rule::kR1, e, 0,
               absl::StrFormat("threading caps 0x%x report command lists without "
                               "D3D11DDICAPS_FREETHREADED",
                               caps));
        }
      }
      return;
    }
    default:
      return;
  }
}

void Checker::Impl::OnDeviceCall(const Event& e, const CallMeta& m) {
  consumed_calc_ = e.parent == 0 && ResolvePending(e, m);
  first_of_thread_ = e.parent == 0 && threads_.OnTopLevelCall(e.tid);
  int32_t c = ContextOf(e, m);
  if (c < 0) return;
  if (ctxs_[c].dc) {
    current_dc_table_ = true;
    OnDcCall(e, m, c);
  } else {
    OnIcCall(e, m, c);
  }
  if (observer_ != nullptr) observer_->OnDeviceCall(e, ctxs_[c].dc);
}

void Checker::Impl::OnDcCall(const Event& e, const CallMeta& m, int32_t dc) {
  Ctx& x = ctxs_[dc];
  uint64_t h = Arg(e, m.handle);
  // (table, function): IC-only functions through a DC table.
  if (!m.in_dc_table) {
    Flag(m.dc_table_rule, e, x.handle,
         absl::StrCat(CallName(e.call), " called through the table of ", CtxName(dc),
                      "; the runtime calls it only through the IC table"));
    EnterDomain(x.domain, e, Rule::kR10, dc);
    return;  // nothing else about such a call is meaningful
  }
  EnterDomain(x.domain, e, Rule::kR10, dc);
  if (x.state == State::kDestroyed && m.op == Op::kSetter && e.parent != 0 && x.last.n > 0) {
    // R49: the driver may refresh state inside the DC's own DestroyDevice (which ends the
    // DC's life on entry); the runtime's answers (nothing bound) are legal there.
    const Event* in = Enclosing(e);
    if (in != nullptr && in->seq == x.last.t[x.last.n - 1].seq &&
        table_[in->call].op == Op::kDestroyDevice && Arg(*in, table_[in->call].hdevice) == x.handle)
      return;
  }
  if (x.state == State::kDestroyed || x.state == State::kCreateFailed) {
    if (m.op == Op::kDestroyDevice && x.state == State::kCreateFailed) {
      // D1e: destroy-tolerant; accepted, the handle stays dead.
      return;
    }
    Flag(Rule::kR53, e, x.handle,
         absl::StrCat(CallName(e.call), " on ", CtxName(dc), ", which is ", StateName(x.state)),
         &x.last);
    return;
  }
  // R72: long recordings pump amortized processing.
  if (++x.calls_since_amortized > options_.heuristics.dc_amortized_max_calls && !x.r72_warned) {
    x.r72_warned = true;
    Warn(Rule::kR72, e, x.handle,
         absl::StrCat(CtxName(dc), " made ", x.calls_since_amortized - 1,
                      " DC calls without pfnPerformAmortizedProcessingCb (threshold ",
                      options_.heuristics.dc_amortized_max_calls, ")"));
  }
  const bool recording = x.state == State::kRecording || x.state == State::kFinishing;
  switch (m.op) {
    case Op::kRecycleCommandList:
      DcRecycleCommandList(e, m, dc);
      return;
    case Op::kAbandonCommandList:
      if (recording || x.state == State::kFinishFailed) {
        CtxTo(dc, State::kAbandoned, e);
        ClearBindings(x);
        x.closes_started = false;
      } else {
        Flag(Rule::kR51, e, x.handle,
             absl::StrCat("AbandonCommandList on ", CtxName(dc), " in state ", StateName(x.state)),
             &x.last);
      }
      return;
    case Op::kDestroyDevice:
      DcDestroy(e, dc);
      return;
    case Op::kCreateObject:
    case Op::kCreateCommandList:
      DcOpen(e, m, dc);
      return;
    case Op::kDestroyObject:
    case Op::kDestroyCommandList:
      DcClose(e, m, dc);
      return;
    default:
      break;
  }
  if (m.op == Op::kSetter) {
    // A Set* nested in a callback is the runtime answering a state refresh (during
    // Create/RecycleCreateCommandList it re-sends the DC's bindings, R49): not recording.
    if (!recording && e.parent == 0) {
      bool all_null = true;
      for (int16_t f : m.handle_fields)
        if (Arg(e, f) != 0) all_null = false;
      for (size_t a = 0; a < m.arrays.size() && all_null; ++a) {
        if (m.arrays[a].handle_elem[0] < 0) continue;
        uint32_t n = 0;
        auto elems = ArrayElems(e, m, a, &n);
        for (uint32_t i = 0; i < n; ++i)
          for (int8_t he : m.arrays[a].handle_elem)
            if (he >= 0 && elems[i * m.arrays[a].stride + he] != 0) all_null = false;
      }
      if (!all_null) {
        Flag(Rule::kR53, e, x.handle,
             absl::StrCat(CallName(e.call), " binds objects on ", CtxName(dc), ", which is ",
                          StateName(x.state), " (only unbinds and closes are allowed)"),
             &x.last);
        return;
      }
      if (x.state == State::kAbandoned && x.closes_started) {
        Flag(Rule::kR51, e, x.handle,
             absl::StrCat("unbind ", CallName(e.call), " on ", CtxName(dc),
                          " after local handles were closed (abandon order: Abandon, "
                          "unbinds, closes, recycle/destroy)"),
             &x.last);
      }
    }
    Setter(e, m, dc, true);
    return;
  }
  // Rendering, copies, queries, maps, nested execution.
  if (!recording) {
    Flag(Rule::kR53, e, x.handle,
         absl::StrCat(CallName(e.call), " on ", CtxName(dc), ", which is ", StateName(x.state)),
         &x.last);
    return;
  }
  if (m.work && x.state == State::kRecording) x.has_work = true;
  switch (m.op) {
    case Op::kCommandListExecute:
      DcCommandListExecute(e, m, dc);
      return;
    case Op::kQueryBegin:
    case Op::kQueryEnd: {
      int32_t q = ResolveLocal(e, dc, h, false);
      if (q >= 0) QueryBeginEnd(e, dc, q, m.op == Op::kQueryBegin);
      return;
    }
    case Op::kMap:
    case Op::kUnmap: {
      int32_t r = ResolveLocal(e, dc, h, false);
      if (r >= 0) MapUnmap(e, m, dc, r, m.op == Op::kMap);
      return;
    }
    default:
      CheckDcHandles(e, m, dc);
      return;
  }
}

void Checker::Impl::OnIcCall(const Event& e, const CallMeta& m, int32_t ic) {
  Ctx& x = ctxs_[ic];
  if (!m.in_ic_table && m.in_dc_table) {
    Rule rule = m.op == Op::kRecycleCommandList ? Rule::kR13 : Rule::kR51;
    Flag(rule, e, x.handle,
         absl::StrCat(CallName(e.call),
                      " called through the IC table; it is a deferred-context function"));
    return;
  }
  // Thread domains: catalog IC-domain calls, non-shared primaries (R11) and the IC-table
  // calls a Finish makes on the DC's thread (R12, in that DC's domain).
  switch (m.op) {
    case Op::kCalcPrivateCommandListSize:
    case Op::kCreateCommandList:
    case Op::kRecycleCreateCommandList: {
      int32_t d = LookupCtx(Arg(e, m.hdeferred));
      if (d >= 0 && ctxs_[d].dc) EnterDomain(ctxs_[d].domain, e, Rule::kR12, d);
      break;
    }
    case Op::kRecycleCreateDeferredContext: {
      int32_t d = LookupCtx(Arg(e, m.hdrvcontext));
      if (d >= 0 && ctxs_[d].dc) EnterDomain(ctxs_[d].domain, e, Rule::kR12, d);
      break;
    }
    case Op::kCreateObject:
    case Op::kDestroyObject: {
      bool primary = false;
      if (m.op == Op::kCreateObject && m.object_type == 0) {
        uint64_t misc = Arg(e, m.misc_flags);
        primary = (misc & k_.misc_primary) && !(misc & k_.misc_shared);
      } else if (m.op == Op::kDestroyObject) {
        int32_t o = Slot(Arg(e, m.handle)).obj;
        primary = o >= 0 && objs_[o].primary && !objs_[o].shared;
      }
      if (primary) EnterDomain(x.domain, e, Rule::kR11, ic);
      break;
    }
    default:
      if (m.domain == Domain::kIC) EnterDomain(x.domain, e, Rule::kR10, ic);
      break;
  }
  if (x.state == State::kDestroyed && m.op != Op::kCreateDeferredContext) {
    // A call through a destroyed device: nothing else to judge reliably.
    return;
  }
  NoteIcUses(e, m);
  switch (m.op) {
    case Op::kCreateDeferredContext:
      IcCreateDeferredContext(e, m, ic);
      return;
    case Op::kRecycleCreateDeferredContext:
      IcRecycleCreateDeferredContext(e, m, ic);
      return;
    case Op::kCalcPrivateCommandListSize: {
      int32_t d = DcOf(e, Arg(e, m.hdeferred), ic);
      if (d < 0) return;
      uint64_t size = static_cast<uint64_t>(e.ret);
      if (ctxs_[d].cl_size != 0 && size != ctxs_[d].cl_size) {
        Flag(Rule::kR36, e, ctxs_[d].handle,
             absl::StrCat("CalcPrivateCommandListSize for ", CtxName(d), " returned ", size,
                          ", earlier ", ctxs_[d].cl_size,
                          " (recycled handles keep the first size)"));
      }
      ctxs_[d].cl_size = size;
      return;
    }
    case Op::kCreateCommandList:
      IcCreateCommandList(e, m, ic, false);
      return;
    case Op::kRecycleCreateCommandList:
      IcCreateCommandList(e, m, ic, true);
      return;
    case Op::kCommandListExecute:
      IcCommandListExecute(e, m, ic);
      return;
    case Op::kRecycleDestroyCommandList:
      IcRecycleDestroy(e, m, ic);
      return;
    case Op::kDestroyCommandList:
      IcDestroyCommandList(e, m, ic);
      return;
    case Op::kCheckHandleSizes: {
      x.dc_support = true;
      uint64_t in = Arg(e, m.count_in);
      uint64_t out = Arg(e, m.count_out);
      for (size_t a = 0; a < m.arrays.size(); ++a) {
        if (m.arrays[a].field != m.sizes_array) continue;
        if (Arg(e, m.sizes_array) == 0) return;  // first pass: count only
        uint32_t n = 0;
        auto elems = ArrayElems(e, m, a, &n);
        if (out > in || n > in) {
          Flag(Rule::kR32, e, x.handle,
               absl::StrCat("CheckDeferredContextHandleSizes wrote ", std::max<uint64_t>(out, n),
                            " entries into an array of ", in));
        }
        std::vector<std::pair<uint64_t, uint64_t>> sizes;
        uint16_t stride = m.arrays[a].stride;
        for (uint32_t i = 0; i < n && stride >= 2; ++i)
          sizes.emplace_back(elems[i * stride], elems[i * stride + 1]);
        if (x.sizes_known && x.removed && sizes != x.sizes) {
          Flag(Rule::kR27, e, x.handle,
               "CheckDeferredContextHandleSizes answered differently after device removal");
        }
        if (!sizes.empty()) {
          x.sizes = std::move(sizes);
          x.sizes_known = true;
        }
      }
      return;
    }
    case Op::kCalcHandleSize: {
      uint64_t type = Arg(e, m.handle_type);
      uint64_t size = static_cast<uint64_t>(e.ret);
      if (x.sizes_known) {
        bool listed = false;
        for (const auto& [t, s] : x.sizes)
          if (t == type && s == size) listed = true;
        if (!listed) {
          Flag(Rule::kR33, e, x.handle,
               absl::StrCat("CalcDeferredContextHandleSize(", HandleTypeName(type), ") returned ",
                            size, ", which CheckDeferredContextHandleSizes did not list"));
        }
      }
      // A matching pending creation was consumed in ResolvePending (top-level calls).
      // A fragment (late attach) may begin between a creation and its size query: the first
      // call of a thread on a device created before the trace is not judged.
      if (e.parent == 0 && !consumed_calc_ && !(first_of_thread_ && !Complete(ic))) {
        Flag(Rule::kR35, e, 0,
             absl::StrCat("CalcDeferredContextHandleSize(", HandleTypeName(type),
                          ") is not right after an IC creation on this thread"));
      }
      return;
    }
    case Op::kCreateObject:
      IcCreateObject(e, m, ic);
      return;
    case Op::kDestroyObject:
      IcDestroyObject(e, m);
      return;
    case Op::kQueryBegin:
    case Op::kQueryEnd: {
      int32_t q = Slot(Arg(e, m.handle)).obj;
      if (q >= 0) QueryBeginEnd(e, ic, q, m.op == Op::kQueryBegin);
      return;
    }
    case Op::kMap:
    case Op::kUnmap: {
      int32_t r = Slot(Arg(e, m.handle)).obj;
      if (r >= 0) MapUnmap(e, m, ic, r, m.op == Op::kMap);
      return;
    }
    case Op::kSetter:
      Setter(e, m, ic, false);
      return;
    case Op::kDestroyDevice: {
      CtxTo(ic, State::kDestroyed, e);
      ClearBindings(x);
      Deadline d;
      d.kind = Deadline::kDeviceDrained;
      d.at = EndOf(e);
      d.seq = e.seq;
      d.tid = e.tid;
      d.call = e.call;
      d.index = ic;
      AddDeadline(std::move(d));
      return;
    }
    case Op::kFlush: {
      // R68: the shared resources destroyed before this Flush are deallocated by its end.
      Deadline d;
      d.kind = Deadline::kFlushDeallocates;
      d.at = EndOf(e);
      d.seq = e.seq;
      d.tid = e.tid;
      d.call = e.call;
      d.index = ic;
      for (int32_t o : x.destroyed_shared)
        if (!Deallocated(objs_[o], e.seq)) d.objs.push_back(o);
      x.destroyed_shared.clear();
      // The other queued destructions: those the GPU no longer needs -- a submission made
      // after the destruction was retired before this Flush -- would not stall, so this
      // Flush frees them. Without kernel-layer events in the trace nothing is known to be
      // idle and nothing is judged.
      // Conservative across engines: only while no earlier submission of this device is
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
        if (Deallocated(objs_[o], e.seq)) continue;
        if (in_order && objs_[o].destroy_seq < x.retired_render) idle.objs.push_back(o);
        x.destroyed_queued[keep++] = o;
      }
      x.destroyed_queued.resize(keep);
      if (!d.objs.empty()) AddDeadline(std::move(d));
      if (!idle.objs.empty()) AddDeadline(std::move(idle));
      return;
    }
    default:
      return;
  }
}

void Checker::Impl::NoteIcUses(const Event& e, const CallMeta& m) {
  // Only GPU work references an allocation: binds, draws, copies, clears, presents.
  // Creates, destroys, maps and size queries do not.
  if (m.op != Op::kSetter && m.op != Op::kOther && m.op != Op::kDxgiPresent) return;
  auto use = [&](uint64_t v) {
    if (v == 0) return;
    int32_t o = Slot(v).obj;
    if (o < 0) return;
    objs_[o].last_ic_use = e.seq;
    if (objs_[o].dependency >= 0) objs_[objs_[o].dependency].last_ic_use = e.seq;
  };
  for (int16_t f : m.handle_fields) use(Arg(e, f));
  for (size_t a = 0; a < m.arrays.size(); ++a) {
    const auto& af = m.arrays[a];
    if (af.handle_elem[0] < 0) continue;
    uint32_t n = 0;
    auto elems = ArrayElems(e, m, a, &n);
    for (uint32_t i = 0; i < n; ++i)
      for (int8_t he : af.handle_elem)
        if (he >= 0) use(elems[i * af.stride + he]);
  }
}

// ---- Public API --------------------------------------------------------------------------

Checker::Checker(const CheckOptions& options) : impl_(std::make_unique<Impl>(options)) {}
Checker::~Checker() = default;
void Checker::set_observer(TransitionObserver* observer) { impl_->set_observer(observer); }
absl::StatusOr<CheckResult> Checker::Run(absl::Span<const format::Event> events,
                                         const format::TokenTable& handles) {
  return impl_->Run(events, handles);
}

absl::StatusOr<CheckResult> Check(absl::Span<const format::Event> events,
                                  const format::TokenTable& handles, const CheckOptions& options) {
  Checker checker(options);
  return checker.Run(events, handles);
}

}  // namespace cltrace::check
