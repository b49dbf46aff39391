#include "check/internal/context_tracker.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "check/internal/trackers.h"

namespace cltrace::check::internal {

std::string ContextTracker::Name(int32_t c) const {
  if (c < 0) return "?";
  return absl::StrCat(ctxs_[c].dc ? "DC " : "IC ", Token(ctxs_[c].handle));
}

bool ContextTracker::Complete(int32_t c) const {
  if (c < 0 || ctxs_[c].implicit) return false;
  return !ctxs_[c].dc || ctxs_[c].device < 0 || !ctxs_[ctxs_[c].device].implicit;
}

void ContextTracker::To(int32_t c, State s, const Event& e) {
  Ctx& x = ctxs_[c];
  State from = Advance(x, s, e);
  env_.Emit(x.dc ? HandleRole::kDeferredContext : HandleRole::kImmediateContext, from, s,
            static_cast<uint32_t>(c + 1), x.handle, e, 0, 0, x.recording);
}

void ContextTracker::MarkRefs(RecordMarks& marks) const {
  for (const Ctx& x : ctxs_) {
    for (int32_t o : x.rec_queries) marks.Mark(kObjRecord, o);
    for (int32_t o : x.rec_maps) marks.Mark(kObjRecord, o);
  }
}

void ContextTracker::Remap(const RecordRemap& r) {
  for (Ctx& x : ctxs_) {
    r.ApplyAll(kObjRecord, x.rec_queries);
    r.ApplyAll(kObjRecord, x.rec_maps);
  }
}

void ContextTracker::RetireFinished() {
  for (size_t c = 0; c < ctxs_.size(); ++c) {
    Ctx& x = ctxs_[c];
    if (x.retired || (x.state != State::kDestroyed && x.state != State::kCreateFailed)) continue;
    if (x.handle != 0 && Slot(x.handle).ctx == static_cast<int32_t>(c)) continue;
    x.retired = true;
    env_.Retire(x.dc ? HandleRole::kDeferredContext : HandleRole::kImmediateContext,
                static_cast<uint32_t>(c + 1));
  }
}

void DomainSlot::Hold(const Event& e, Rule r) {
  uint64_t e_end = EndOf(e);
  if (used && e_end <= end) return;
  seq = e.seq;
  end = e_end;
  tid = e.tid;
  call = e.call;
  rule = r;
  used = true;
}

int32_t ContextTracker::New(bool dc, uint64_t handle, uint64_t core, int32_t device, bool implicit,
                            const Event& e) {
  int32_t c = static_cast<int32_t>(ctxs_.size());
  ctxs_.emplace_back();
  Ctx& x = ctxs_.back();
  x.dc = dc;
  x.implicit = implicit;
  x.handle = handle;
  x.core_layer = core;
  x.device = device;
  x.recording = dc ? 1 : 0;
  Slot(handle).ctx = c;
  if (core != 0) Slot(core).core = c;
  if (implicit) {
    // Created before the trace began: no call of the trace caused this state.
    Event before;
    before.seq = e.seq;
    To(c, dc ? State::kRecording : State::kAlive, before);
  } else {
    To(c, dc ? State::kRecording : State::kAlive, e);
  }
  return c;
}

int32_t ContextTracker::NewImplicit(uint64_t h, const CallMeta& m, const Event& e) {
  return New(GuessDc(h, m, e), h, 0, -1, /*implicit=*/true, e);
}

// For an hDevice the trace never created (a fragment starting after CreateDevice /
// CreateDeferredContext): which table is it? The call itself may tell (a DC-only or IC-only
// function, a DC-local CreateCommandList with NULL arguments); otherwise the first other use
// of the handle in the trace does. Runs once per such handle.
bool ContextTracker::GuessDc(uint64_t h, const CallMeta& m, const Event& e) {
  if (m.in_dc_table && !m.in_ic_table) return true;
  if (m.in_ic_table && !m.in_dc_table) return false;
  if (m.op == Op::kCreateCommandList && m.present != kNoField && Arg(e, m.present) == 0)
    return true;
  if (!evidence_built_) BuildEvidence();
  auto it = evidence_.find(h);
  return it != evidence_.end() && it->second;
}

// One pass over the trace: for every handle used as an hDevice (or named as a DC), whether its
// first telling use shows a DC table.
void ContextTracker::BuildEvidence() {
  evidence_built_ = true;
  // A streamed trace is read again for it (only traces with calls in both tables need it).
  (void)env_.ForEachEvent([&](const Event& x) {
    const CallMeta& xm = table_[x.call];
    if (xm.layer != Layer::kDevice) return;
    for (int16_t f : {xm.hdeferred, xm.hdrvcontext}) {
      if (f != kNoField && Arg(x, f) != 0) evidence_.try_emplace(Arg(x, f), true);
    }
    uint64_t h = Arg(x, xm.hdevice);
    if (h == 0) return;
    if (xm.in_dc_table && !xm.in_ic_table) {
      evidence_.try_emplace(h, true);
    } else if (xm.in_ic_table && !xm.in_dc_table) {
      evidence_.try_emplace(h, false);
    } else if (xm.op == Op::kCreateCommandList && xm.present != kNoField &&
               Arg(x, xm.present) == 0) {
      evidence_.try_emplace(h, true);
    }
  });
}

int32_t ContextTracker::DcOf(const Event& e, uint64_t h, int32_t device) {
  if (h == 0) return -1;
  int32_t c = Slot(h).ctx;
  if (c >= 0 && ctxs_[c].dc) return c;
  if (c >= 0) return -1;  // an IC handle where a DC is expected
  return New(true, h, 0, device, /*implicit=*/true, e);
}

void ContextTracker::LearnCore(int32_t c, uint64_t rt) {
  if (c < 0 || rt == 0 || ctxs_[c].core_layer != 0 || Slot(rt).core >= 0) return;
  ctxs_[c].core_layer = rt;
  Slot(rt).core = c;
}

void ContextTracker::EnterDomain(int32_t c, const Event& e, Rule rule) {
  DomainSlot& d = ctxs_[c].domain;
  if (d.used && d.end > e.seq && !env_.IsAncestor(e, d.seq)) {
    Rule r = std::max(rule, d.rule);
    Flag(r, e, ctxs_[c].handle,
         absl::StrCat(r == Rule::kR12 ? "IC-table call of a Finish on " : "", Name(c),
                      r == Rule::kR12 ? "" : " domain", ": overlaps ", CallName(d.call), " (seq ",
                      d.seq, ", tid ", d.tid, ") still in flight",
                      r == Rule::kR11 ? " (non-shared primaries are IC-domain)" : ""));
  }
  d.Hold(e, rule);
}

void ContextTracker::OnCreateDevice(const Event& e, const CallMeta& m) {
  if (static_cast<int32_t>(e.ret) < 0) return;  // failed: no device
  uint64_t h = Arg(e, m.hdrvdevice);
  if (h == 0) return;
  int32_t c = New(false, h, Arg(e, m.hrtcorelayer), -1, false, e);
  if (caps_build2_) ctxs_[c].dc_support = true;
  if (auto it = no_lists_.find(Arg(e, m.hdevice)); it != no_lists_.end())
    ctxs_[c].no_lists_caps_seq = it->second;
}

void ContextTracker::OnGetCaps(const Event& e, const CallMeta& m) {
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
}

void ContextTracker::OnCreateDeferredContext(const Event& e, const CallMeta& m, int32_t ic) {
  uint64_t h = Arg(e, m.hdrvcontext);
  if (h == 0) return;
  ctxs_[ic].dc_support = true;
  New(true, h, Arg(e, m.hrtcorelayer), ic, false, e);
}

void ContextTracker::ResetRecording(int32_t dc) {
  Ctx& x = ctxs_[dc];
  x.has_work = false;
  x.oom_pending = false;
  x.closes_started = false;
  x.calls_since_amortized = 0;
  x.r72_warned = false;
  x.rec_queries.clear();
  t_.objects.ForgetMaps(dc, x.rec_maps);
  x.rec_maps.clear();
  t_.objects.ClearBindings(dc);
}

void ContextTracker::OnRecycleCreateDeferredContext(const Event& e, const CallMeta& m, int32_t ic) {
  int32_t d = DcOf(e, Arg(e, m.hdrvcontext), ic);
  if (d < 0) return;
  Ctx& x = ctxs_[d];
  int32_t hr = static_cast<int32_t>(e.ret);
  if (hr != 0 && static_cast<uint32_t>(hr) != k_.e_outofmemory) {
    Flag(Rule::kR23, e, x.handle,
         absl::StrCat("RecycleCreateDeferredContext returned ", format::HresultToString(hr),
                      "; only S_OK and E_OUTOFMEMORY are legal"));
  }
  switch (x.state) {
    case State::kClosed:
    case State::kAbandoned:
    case State::kFinishFailed:
    case State::kRecycleFailed:
      break;
    case State::kDestroyed:
    case State::kCreateFailed:
      Flag(Rule::kR48, e, x.handle,
           absl::StrCat("RecycleCreateDeferredContext on ", Name(d), ", which is ",
                        StateName(x.state)),
           &x.last);
      return;
    default:
      Flag(Rule::kR48, e, x.handle,
           absl::StrCat("RecycleCreateDeferredContext on ", Name(d), " in state ",
                        StateName(x.state),
                        "; only after AbandonCommandList, CreateCommandList or "
                        "RecycleCreateCommandList"),
           &x.last);
      break;
  }
  t_.locals.CloseAllOn(e, d, false);
  if (hr < 0) {
    To(d, State::kRecycleFailed, e);
    return;
  }
  ResetRecording(d);
  ++x.recording;
  To(d, State::kRecording, e);
}

void ContextTracker::OnCalcPrivateCommandListSize(const Event& e, const CallMeta& m, int32_t ic) {
  int32_t d = DcOf(e, Arg(e, m.hdeferred), ic);
  if (d < 0) return;
  uint64_t size = static_cast<uint64_t>(e.ret);
  if (ctxs_[d].cl_size != 0 && size != ctxs_[d].cl_size) {
    Flag(Rule::kR36, e, ctxs_[d].handle,
         absl::StrCat("CalcPrivateCommandListSize for ", Name(d), " returned ", size, ", earlier ",
                      ctxs_[d].cl_size, " (recycled handles keep the first size)"));
  }
  ctxs_[d].cl_size = size;
}

bool ContextTracker::DcGate(const Event& e, const CallMeta& m, int32_t dc) {
  Ctx& x = ctxs_[dc];
  // (table, function): IC-only functions through a DC table.
  if (!m.in_dc_table) {
    Flag(m.dc_table_rule, e, x.handle,
         absl::StrCat(CallName(e.call), " called through the table of ", Name(dc),
                      "; the runtime calls it only through the IC table"));
    EnterDomain(dc, e, Rule::kR10);
    return false;  // nothing else about such a call is meaningful
  }
  EnterDomain(dc, e, Rule::kR10);
  if (x.state == State::kDestroyed && m.op == Op::kSetter && e.parent != 0 && x.last.n > 0) {
    // R49: the driver may refresh state inside the DC's own DestroyDevice (which ends the
    // DC's life on entry); the runtime's answers (nothing bound) are legal there.
    const Event* in = Enclosing(e);
    if (in != nullptr && in->seq == x.last.t[x.last.n - 1].seq &&
        table_[in->call].op == Op::kDestroyDevice && Arg(*in, table_[in->call].hdevice) == x.handle)
      return false;
  }
  if (x.state == State::kDestroyed || x.state == State::kCreateFailed) {
    if (m.op == Op::kDestroyDevice && x.state == State::kCreateFailed) {
      // D1e: destroy-tolerant; accepted, the handle stays dead.
      return false;
    }
    Flag(Rule::kR53, e, x.handle,
         absl::StrCat(CallName(e.call), " on ", Name(dc), ", which is ", StateName(x.state)),
         &x.last);
    return false;
  }
  // R72: long recordings pump amortized processing.
  if (++x.calls_since_amortized > options_.heuristics.dc_amortized_max_calls && !x.r72_warned) {
    x.r72_warned = true;
    Warn(Rule::kR72, e, x.handle,
         absl::StrCat(Name(dc), " made ", x.calls_since_amortized - 1,
                      " DC calls without pfnPerformAmortizedProcessingCb (threshold ",
                      options_.heuristics.dc_amortized_max_calls, ")"));
  }
  return true;
}

bool ContextTracker::DcSetterAllowed(const Event& e, const CallMeta& m, int32_t dc) {
  Ctx& x = ctxs_[dc];
  bool all_null = true;
  env_.ForEachHandle(e, m, [&](uint64_t) { all_null = false; });
  if (!all_null) {
    Flag(Rule::kR53, e, x.handle,
         absl::StrCat(CallName(e.call), " binds objects on ", Name(dc), ", which is ",
                      StateName(x.state), " (only unbinds and closes are allowed)"),
         &x.last);
    return false;
  }
  if (x.state == State::kAbandoned && x.closes_started) {
    Flag(Rule::kR51, e, x.handle,
         absl::StrCat("unbind ", CallName(e.call), " on ", Name(dc),
                      " after local handles were closed (abandon order: Abandon, "
                      "unbinds, closes, recycle/destroy)"),
         &x.last);
  }
  return true;
}

void ContextTracker::OnAbandon(const Event& e, int32_t dc) {
  Ctx& x = ctxs_[dc];
  if (x.state == State::kRecording || x.state == State::kFinishing ||
      x.state == State::kFinishFailed) {
    To(dc, State::kAbandoned, e);
    t_.objects.ClearBindings(dc);
    x.closes_started = false;
  } else {
    Flag(Rule::kR51, e, x.handle,
         absl::StrCat("AbandonCommandList on ", Name(dc), " in state ", StateName(x.state)),
         &x.last);
  }
}

void ContextTracker::OnDestroy(const Event& e, int32_t dc) {
  Ctx& x = ctxs_[dc];
  if (x.state == State::kRecording && x.has_work) {
    Flag(Rule::kR48, e, x.handle,
         absl::StrCat("DestroyDevice on ", Name(dc),
                      " that holds unfinished recorded work; the runtime abandons first "
                      "(AbandonCommandList, unbinds, closes)"),
         &x.last);
  }
  t_.locals.CloseAllOn(e, dc, true);
  ResetRecording(dc);
  t_.objects.StopBuildingOn(dc);
  To(dc, State::kDestroyed, e);
}

void ContextTracker::OnAmortizedCb(const Event& e, const CallMeta& m) {
  const Event* p = Enclosing(e);
  uint64_t rt = Arg(e, m.hruntime);
  if (p != nullptr && table_[p->call].layer == Layer::kDevice)
    LearnCore(Lookup(Arg(*p, table_[p->call].hdevice)), rt);
  int32_t owner = rt ? Slot(rt).core : -1;
  if (p == nullptr) {
    Flag(Rule::kR19, e, rt, "pfnPerformAmortizedProcessingCb called outside any DDI call");
  } else {
    const CallMeta& pm = table_[p->call];
    int32_t pctx = pm.layer == Layer::kDevice ? Lookup(Arg(*p, pm.hdevice)) : -1;
    if (p->tid != e.tid) {
      Flag(Rule::kR19, e, rt,
           absl::StrCat("pfnPerformAmortizedProcessingCb on thread ", e.tid,
                        " inside a DDI running on thread ", p->tid));
    } else if (pctx >= 0 && owner >= 0 && owner != pctx) {
      Flag(Rule::kR19, e, rt,
           absl::StrCat("pfnPerformAmortizedProcessingCb with the core layer of ", Name(owner),
                        " inside ", CallName(p->call), " through the table of ", Name(pctx)));
    }
  }
  if (owner < 0) return;
  Ctx& o = ctxs_[owner];
  if (o.dc) {
    // DCs never submit: a second pump inside one DDI call is a double pump (CD10).
    if (p != nullptr && o.last_amortized_parent == p->seq) {
      Warn(Rule::kR72, e, rt,
           absl::StrCat("second pfnPerformAmortizedProcessingCb inside ", CallName(p->call),
                        " (seq ", p->seq, ") on ", Name(owner), " (do not double-pump)"));
    }
    o.last_amortized_parent = p ? p->seq : 0;
    o.calls_since_amortized = 0;
    o.r72_warned = false;
  } else {
    if (!o.submit_since_amortized && p != nullptr && o.last_amortized_parent == p->seq) {
      Warn(Rule::kR71, e, rt,
           absl::StrCat("second pfnPerformAmortizedProcessingCb inside ", CallName(p->call),
                        " (seq ", p->seq, ") without a submit in between (do not double-pump)"));
    }
    o.submit_since_amortized = false;
    o.last_amortized_parent = p ? p->seq : 0;
    o.submits_since_amortized = 0;
  }
}

void ContextTracker::OnIcSubmit(const Event& e, int32_t ic) {
  Ctx& x = ctxs_[ic];
  x.submit_since_amortized = true;
  if (++x.submits_since_amortized >= options_.heuristics.amortized_max_submits_without) {
    Warn(Rule::kR71, e, x.handle,
         absl::StrCat(x.submits_since_amortized,
                      " IC submits without pfnPerformAmortizedProcessingCb (threshold ",
                      options_.heuristics.amortized_max_submits_without, ")"));
    x.submits_since_amortized = 0;
  }
}

void ContextTracker::OnFinished(const Event& e, int32_t dc, bool ok) {
  if (ok) {
    To(dc, State::kClosed, e);
    t_.objects.ClearBindings(dc);  // D5: nothing bound afterwards
  } else {
    To(dc, State::kFinishFailed, e);
  }
  ctxs_[dc].closes_started = false;
}

void ContextTracker::NoteRecorded(int32_t dc, int32_t o, bool map) {
  std::vector<int32_t>& v = map ? ctxs_[dc].rec_maps : ctxs_[dc].rec_queries;
  if (std::find(v.begin(), v.end(), o) == v.end()) v.push_back(o);
}

void ContextTracker::NoteWork(int32_t dc) {
  if (ctxs_[dc].state == State::kRecording) ctxs_[dc].has_work = true;
}

void ContextTracker::NoteLocalClosed(int32_t dc) {
  Ctx& x = ctxs_[dc];
  if (x.state != State::kRecording && x.state != State::kFinishing) x.closes_started = true;
}

void ContextTracker::NoteOutOfMemory(const Event& e, int32_t dc) {
  Ctx& x = ctxs_[dc];
  if ((x.state == State::kRecording || x.state == State::kFinishing) && !x.oom_pending) {
    x.oom_pending = true;
    x.oom_seq = e.seq;
  }
}

void ContextTracker::NoteRemoved(int32_t c) {
  int32_t dev = ctxs_[c].dc ? ctxs_[c].device : c;
  if (dev >= 0) ctxs_[dev].removed = true;
}

}  // namespace cltrace::check::internal
