// Checker::Impl handlers of the command-list state machine (ddi-spec §3.1): IC creates,
// executes, recycle-destroys and destroys; the DC recycle loop and nested execution.
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

void Checker::Impl::IcCreateCommandList(const Event& e, const CallMeta& m, int32_t ic,
                                        bool recycle) {
  int32_t d = DcOf(e, Arg(e, m.hdeferred), ic);
  uint64_t h = Arg(e, m.handle);
  absl::string_view fn = CallName(e.call);
  bool dc_ready = false;
  if (d >= 0) {
    Ctx& dx = ctxs_[d];
    dc_ready = dx.state == State::kRecording || dx.state == State::kFinishing;
    if (!dc_ready) {
      Flag(Rule::kR53, e, dx.handle,
           absl::StrCat(fn, " for ", CtxName(d), ", which is ", StateName(dx.state),
                        " (a command list is made only from a recording DC)"),
           &dx.last);
    }
    if (dx.oom_pending) {
      Flag(Rule::kR29, e, dx.handle,
           absl::StrCat(CtxName(d), " reported E_OUTOFMEMORY at seq ", dx.oom_seq,
                        "; the runtime discards that recording and abandons instead of "
                        "calling ",
                        fn));
    }
    for (int32_t q : dx.rec_queries) {
      if (objs_[q].BuildingOn(d)) {
        Flag(Rule::kR52, e, objs_[q].handle,
             absl::StrCat("query ", Token(objs_[q].handle), " is still begun on ", CtxName(d),
                          " when ", fn, " is called (Finish ends open queries first)"));
      }
    }
    for (int32_t r : dx.rec_maps) {
      const auto& on = objs_[r].mapped_on;
      if (std::find(on.begin(), on.end(), d) != on.end()) {
        Flag(Rule::kR52, e, objs_[r].handle,
             absl::StrCat("resource ", Token(objs_[r].handle), " is still mapped on ", CtxName(d),
                          " when ", fn, " is called (Finish unmaps dynamic resources first)"));
      }
    }
  }
  if (h == 0) return;
  HandleSlot& s = Slot(h);
  int32_t ci = s.cl;
  bool ok = true;
  if (!recycle) {
    // T1: a fresh lifetime (a handle value reused after its destruction starts anew).
    ci = static_cast<int32_t>(cls_.size());
    cls_.emplace_back();
    cls_[ci].handle = h;
    cls_[ci].owner = d;
    cls_[ci].create_seq = e.seq;
    s.cl = ci;
    ClTo(ci, State::kValid, e);
    PendingCalc p;
    p.tid = e.tid;
    p.after = EndOf(e);
    p.create_seq = e.seq;
    p.create_call = e.call;
    p.handle = h;
    p.type = static_cast<int8_t>(k_.ht_commandlist);
    p.cl = ci;
    threads_.Expect(p);
  } else {
    int32_t hr = static_cast<int32_t>(e.ret);
    if (hr != 0 && static_cast<uint32_t>(hr) != k_.e_outofmemory) {
      Flag(Rule::kR22, e, h,
           absl::StrCat("RecycleCreateCommandList returned ", format::HresultToString(hr),
                        "; only S_OK and E_OUTOFMEMORY are legal"));
    }
    ok = hr >= 0;
    if (ci < 0) {
      if (Complete(ic))
        Flag(Rule::kR43, e, h,
             "RecycleCreateCommandList on a handle that was never a command list (only a "
             "Recycled handle may be recycle-created)");
      ci = static_cast<int32_t>(cls_.size());
      cls_.emplace_back();
      cls_[ci].handle = h;
      cls_[ci].create_seq = e.seq;
      s.cl = ci;
    } else {
      CommandList& c = cls_[ci];
      switch (c.state) {
        case State::kRecycled:
        case State::kRecycleCreateFailed:  // T7e "or RC": a retry is accepted
          if (d >= 0 && c.cache_dc >= 0 && c.cache_dc != d) {
            Flag(Rule::kR43, e, h,
                 absl::StrCat("command list sits in the cache of ", CtxName(c.cache_dc),
                              " but RecycleCreateCommandList names ", CtxName(d)),
                 &c.last);
          }
          break;
        case State::kRecycleDestroyed:
          Flag(Rule::kR45, e, h,
               "RecycleCreateCommandList on a RecycleDestroyed handle: it must pass through "
               "RecycleCommandList first (no RD->V shortcut)",
               &c.last);
          break;
        default:
          Flag(Rule::kR43, e, h,
               absl::StrCat("RecycleCreateCommandList on a command list in state ",
                            StateName(c.state),
                            "; only a Recycled handle may be "
                            "recycle-created"),
               &c.last);
          break;
      }
    }
    CommandList& c = cls_[ci];
    if (ok) {
      c.owner = d;
      c.cache_dc = -1;
      ClTo(ci, State::kValid, e);
    } else {
      ClTo(ci, State::kRecycleCreateFailed, e);
    }
    PendingCalc p;
    p.tid = e.tid;
    p.after = EndOf(e);
    p.create_seq = e.seq;
    p.create_call = e.call;
    p.handle = h;
    p.cl = ci;
    p.recycle = true;
    threads_.Expect(p);
  }
  if (d >= 0 && dc_ready) {
    Ctx& dx = ctxs_[d];
    if (ok) {
      CommandList& c = cls_[ci];
      c.queries.assign(dx.rec_queries.begin(), dx.rec_queries.end());
      c.maps.assign(dx.rec_maps.begin(), dx.rec_maps.end());
      CtxTo(d, State::kClosed, e);
      ClearBindings(dx);  // D5: nothing bound afterwards
      dx.closes_started = false;
    } else {
      CtxTo(d, State::kFinishFailed, e);
      dx.closes_started = false;
    }
  }
}

void Checker::Impl::CheckExecuteTarget(const Event& e, const CommandList& c, int32_t target,
                                       uint64_t h) {
  for (int32_t q : c.queries) {
    if (objs_[q].BuildingOn(target)) {
      Flag(Rule::kR61, e, h,
           absl::StrCat("the command list began or ended query ", Token(objs_[q].handle),
                        ", which is only begun on ", CtxName(target)),
           &c.last);
    }
  }
  for (int32_t r : c.maps) {
    const auto& on = objs_[r].mapped_on;
    if (std::find(on.begin(), on.end(), target) != on.end()) {
      Flag(Rule::kR62, e, h,
           absl::StrCat("the command list mapped dynamic resource ", Token(objs_[r].handle),
                        ", which is mapped on ", CtxName(target)),
           &c.last);
    }
  }
}

void Checker::Impl::IcCommandListExecute(const Event& e, const CallMeta& m, int32_t ic) {
  uint64_t h = Arg(e, m.handle);
  int32_t ci = h ? Slot(h).cl : -1;
  if (ci < 0) {
    if (Complete(ic))
      Flag(Rule::kR40, e, h, "CommandListExecute on a handle that is not a command list");
  } else {
    CommandList& c = cls_[ci];
    if (c.state == State::kValid) {
      CheckExecuteTarget(e, c, ic, h);
      for (int32_t r : c.maps) objs_[r].last_ic_use = e.seq;
    } else if (c.state == State::kCreateFailed) {
      Flag(Rule::kR21, e, h, "CommandListExecute on a command list whose CreateCommandList failed",
           &c.last);
    } else {
      Flag(Rule::kR40, e, h,
           absl::StrCat("CommandListExecute on a command list in state ", StateName(c.state),
                        " (only Valid handles may be executed)"),
           &c.last);
    }
  }
  ClearBindings(ctxs_[ic]);  // the executing context ends in the cleared state
}

void Checker::Impl::IcRecycleDestroy(const Event& e, const CallMeta& m, int32_t ic) {
  uint64_t h = Arg(e, m.handle);
  int32_t ci = h ? Slot(h).cl : -1;
  if (ci < 0) {
    if (Complete(ic))
      Flag(Rule::kR41, e, h, "RecycleDestroyCommandList on a handle that was never a command list");
    return;
  }
  CommandList& c = cls_[ci];
  if (c.state == State::kCreateFailed) {
    Flag(Rule::kR21, e, h,
         "RecycleDestroyCommandList on a command list whose CreateCommandList failed", &c.last);
    return;
  }
  if (c.state != State::kValid) {
    Flag(Rule::kR41, e, h,
         absl::StrCat("RecycleDestroyCommandList on a command list in state ", StateName(c.state),
                      " (only from Valid)"),
         &c.last);
    return;
  }
  if (c.owner >= 0) {
    const Ctx& owner = ctxs_[c.owner];
    if (owner.state == State::kDestroyed || owner.state == State::kCreateFailed) {
      Flag(Rule::kR41, e, h,
           absl::StrCat("the owning ", CtxName(c.owner),
                        " is destroyed; the runtime must call DestroyCommandList"),
           &c.last);
    }
  }
  ClTo(ci, State::kRecycleDestroyed, e);
}

void Checker::Impl::IcDestroyCommandList(const Event& e, const CallMeta& m, int32_t ic) {
  uint64_t h = Arg(e, m.handle);
  int32_t ci = h ? Slot(h).cl : -1;
  if (ci < 0) {
    if (Complete(ic))
      Flag(Rule::kR44, e, h, "DestroyCommandList on a handle that was never a command list");
    return;
  }
  CommandList& c = cls_[ci];
  switch (c.state) {
    case State::kValid:
    case State::kRecycleDestroyed:
    case State::kRecycled:
    case State::kRecycleCreateFailed:  // T7e: destroy-tolerant
      if (c.open_locals > 0) {
        Flag(Rule::kR54, e, h,
             absl::StrCat("IC command list destroyed while ", c.open_locals,
                          " DC-local handle(s) of it are open"),
             &c.last);
      }
      ClTo(ci, State::kDestroyed, e);
      return;
    case State::kCreateFailed:
      Flag(Rule::kR21, e, h, "DestroyCommandList on a command list whose CreateCommandList failed",
           &c.last);
      return;
    default:
      Flag(Rule::kR44, e, h,
           absl::StrCat("DestroyCommandList on a command list in state ", StateName(c.state)),
           &c.last);
      return;
  }
}

void Checker::Impl::DcRecycleCommandList(const Event& e, const CallMeta& m, int32_t dc) {
  Ctx& x = ctxs_[dc];
  switch (x.state) {
    case State::kRecording:
      CtxTo(dc, State::kFinishing, e);
      break;
    case State::kFinishing:
      break;
    case State::kClosed:
    case State::kFinishFailed:
      Flag(Rule::kR46, e, x.handle,
           absl::StrCat("RecycleCommandList on ", CtxName(dc),
                        " after its command list was made: the recycle loop comes first in "
                        "FinishCommandList"),
           &x.last);
      break;
    default:
      Flag(Rule::kR53, e, x.handle,
           absl::StrCat("RecycleCommandList on ", CtxName(dc), ", which is ", StateName(x.state)),
           &x.last);
      break;
  }
  uint64_t h = Arg(e, m.handle);
  int32_t ci = h ? Slot(h).cl : -1;
  if (ci < 0) {
    int32_t l = h ? Slot(h).local : -1;
    if (l < 0 && !Complete(dc)) return;  // a list made before the trace began
    Flag(Rule::kR13, e, h,
         absl::StrCat("RecycleCommandList takes an IC command-list handle; ", Token(h), " is ",
                      l >= 0 ? "a DC-local handle" : "not a command list"));
    return;
  }
  CommandList& c = cls_[ci];
  if (c.state != State::kRecycleDestroyed) {
    Flag(Rule::kR42, e, h,
         absl::StrCat("RecycleCommandList on a command list in state ", StateName(c.state),
                      " (only RecycleDestroyed handles are recycled)"),
         &c.last);
    return;
  }
  if (c.owner >= 0 && c.owner != dc) {
    Flag(Rule::kR42, e, h,
         absl::StrCat("command list recorded on ", CtxName(c.owner), " recycled through ",
                      CtxName(dc)),
         &c.last);
  }
  c.cache_dc = dc;
  ClTo(ci, State::kRecycled, e);
}

void Checker::Impl::DcCommandListExecute(const Event& e, const CallMeta& m, int32_t dc) {
  uint64_t h = Arg(e, m.handle);
  int32_t ci = -1;
  if (options_.nested_execute_handle == NestedExecuteHandle::kIc) {
    ci = h ? Slot(h).cl : -1;
    if (ci < 0) {
      Flag(Rule::kR59, e, h,
           "nested CommandListExecute (nested_execute_handle=ic) on a handle that "
           "is not an IC command list");
    }
  } else {
    int32_t l = h ? Slot(h).local : -1;
    if (l < 0 || locals_[l].dc != dc || !locals_[l].is_cl || locals_[l].state != State::kOpen) {
      Flag(Rule::kR59, e, h,
           absl::StrCat("nested CommandListExecute needs a DC-local command-list handle open "
                        "on ",
                        CtxName(dc), " (nested_execute_handle=local)"),
           l >= 0 ? &locals_[l].last : nullptr);
    } else {
      ci = locals_[l].target;
    }
  }
  if (ci >= 0) {
    const CommandList& c = cls_[ci];
    if (c.state != State::kValid) {
      Flag(Rule::kR59, e, h,
           absl::StrCat("nested CommandListExecute of IC command list ", Token(c.handle),
                        " in state ", StateName(c.state)),
           &c.last);
    } else {
      CheckExecuteTarget(e, c, dc, h);
      // The recording now also manipulates what the nested list did.
      Ctx& x = ctxs_[dc];
      for (int32_t q : c.queries)
        if (std::find(x.rec_queries.begin(), x.rec_queries.end(), q) == x.rec_queries.end())
          x.rec_queries.push_back(q);
      for (int32_t r : c.maps)
        if (std::find(x.rec_maps.begin(), x.rec_maps.end(), r) == x.rec_maps.end())
          x.rec_maps.push_back(r);
    }
  }
  ClearBindings(ctxs_[dc]);
}

}  // namespace cltrace::check
