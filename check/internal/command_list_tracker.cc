#include "check/internal/command_list_tracker.h"

#include <algorithm>

#include "check/internal/trackers.h"

namespace cltrace::check::internal {

void CommandListTracker::To(int32_t i, State s, const Event& e) {
  CommandList& c = cls_[i];
  State from = Advance(c, s, e);
  env_.Emit(HandleRole::kCommandList, from, s, c.number, c.handle, e,
            c.owner >= 0 ? ctx(c.owner).handle : 0, 0, 0);
}

bool CommandListTracker::CheckFinishingDc(const Event& e, int32_t d) {
  const Ctx& dx = ctx(d);
  absl::string_view fn = CallName(e.call);
  bool dc_ready = dx.state == State::kRecording || dx.state == State::kFinishing;
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
    if (obj(q).BuildingOn(d)) {
      Flag(Rule::kR52, e, obj(q).handle,
           absl::StrCat("query ", Token(obj(q).handle), " is still begun on ", CtxName(d), " when ",
                        fn, " is called (Finish ends open queries first)"));
    }
  }
  for (int32_t r : dx.rec_maps) {
    const auto& on = obj(r).mapped_on;
    if (std::find(on.begin(), on.end(), d) != on.end()) {
      Flag(Rule::kR52, e, obj(r).handle,
           absl::StrCat("resource ", Token(obj(r).handle), " is still mapped on ", CtxName(d),
                        " when ", fn, " is called (Finish unmaps dynamic resources first)"));
    }
  }
  return dc_ready;
}

int32_t CommandListTracker::NewList(uint64_t h, uint64_t create_seq) {
  int32_t ci = static_cast<int32_t>(cls_.size());
  cls_.emplace_back();
  cls_[ci].handle = h;
  cls_[ci].number = ++created_;
  cls_[ci].create_seq = create_seq;
  return ci;
}

void CommandListTracker::MarkRefs(RecordMarks& marks) const {
  for (const CommandList& c : cls_) {
    for (int32_t q : c.queries) marks.Mark(kObjRecord, q);
    for (int32_t m : c.maps) marks.Mark(kObjRecord, m);
  }
}

void CommandListTracker::Compact(const RecordRemap& r) {
  CompactRecords(cls_, r.to[kClRecord]);
  for (CommandList& c : cls_) {
    r.ApplyAll(kObjRecord, c.queries);
    r.ApplyAll(kObjRecord, c.maps);
  }
}

// T1: a fresh lifetime (a handle value reused after its destruction starts anew).
int32_t CommandListTracker::CreateFresh(const Event& e, uint64_t h, int32_t d) {
  int32_t ci = NewList(h, e.seq);
  cls_[ci].owner = d;
  Slot(h).cl = ci;
  To(ci, State::kValid, e);
  PendingCalc p = PendingCalc::After(e, h);
  p.type = static_cast<int8_t>(k_.ht_commandlist);
  p.cl = ci;
  t_.threads.Expect(p);
  return ci;
}

void CommandListTracker::CheckRecycleCreateFrom(const Event& e, uint64_t h, int32_t ci, int32_t d) {
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
           absl::StrCat("RecycleCreateCommandList on a command list in state ", StateName(c.state),
                        "; only a Recycled handle may be "
                        "recycle-created"),
           &c.last);
      break;
  }
}

int32_t CommandListTracker::RecycleCreate(const Event& e, uint64_t h, int32_t d, int32_t ic,
                                          bool* ok) {
  int32_t hr = static_cast<int32_t>(e.ret);
  if (hr != 0 && static_cast<uint32_t>(hr) != k_.e_outofmemory) {
    Flag(Rule::kR22, e, h,
         absl::StrCat("RecycleCreateCommandList returned ", format::HresultToString(hr),
                      "; only S_OK and E_OUTOFMEMORY are legal"));
  }
  *ok = hr >= 0;
  HandleSlot& s = Slot(h);
  int32_t ci = s.cl;
  if (ci < 0) {
    if (Complete(ic))
      Flag(Rule::kR43, e, h,
           "RecycleCreateCommandList on a handle that was never a command list (only a "
           "Recycled handle may be recycle-created)");
    ci = NewList(h, e.seq);
    s.cl = ci;
  } else {
    CheckRecycleCreateFrom(e, h, ci, d);
  }
  CommandList& c = cls_[ci];
  if (*ok) {
    c.owner = d;
    c.cache_dc = -1;
    To(ci, State::kValid, e);
  } else {
    To(ci, State::kRecycleCreateFailed, e);
  }
  PendingCalc p = PendingCalc::After(e, h);
  p.cl = ci;
  p.recycle = true;
  t_.threads.Expect(p);
  return ci;
}

void CommandListTracker::OnCreate(const Event& e, const CallMeta& m, int32_t ic, bool recycle) {
  int32_t d = t_.contexts.DcOf(e, Arg(e, m.hdeferred), ic);
  uint64_t h = Arg(e, m.handle);
  bool dc_ready = d >= 0 && CheckFinishingDc(e, d);
  if (h == 0) return;
  bool ok = true;
  int32_t ci = recycle ? RecycleCreate(e, h, d, ic, &ok) : CreateFresh(e, h, d);
  if (!dc_ready) return;
  if (ok) {
    const Ctx& dx = ctx(d);
    CommandList& c = cls_[ci];
    c.queries.assign(dx.rec_queries.begin(), dx.rec_queries.end());
    c.maps.assign(dx.rec_maps.begin(), dx.rec_maps.end());
  }
  t_.contexts.OnFinished(e, d, ok);
}

void CommandListTracker::OnCreateFailed(const Event& cb, const Event& create, const CallMeta& cm) {
  int32_t ci = Slot(Arg(create, cm.handle)).cl;
  if (ci >= 0 && cls_[ci].create_seq == create.seq && cls_[ci].state == State::kValid)
    To(ci, State::kCreateFailed, cb);
  int32_t d = LookupCtx(Arg(create, cm.hdeferred));
  if (d >= 0 && ctx(d).dc && ctx(d).state == State::kClosed && ctx(d).last.n > 0 &&
      ctx(d).last.t[ctx(d).last.n - 1].seq == create.seq)
    t_.contexts.To(d, State::kFinishFailed, cb);
  t_.threads.Cancel(create.tid, create.seq);
}

void CommandListTracker::CheckExecuteTarget(const Event& e, const CommandList& c, int32_t target,
                                            uint64_t h) {
  for (int32_t q : c.queries) {
    if (obj(q).BuildingOn(target)) {
      Flag(Rule::kR61, e, h,
           absl::StrCat("the command list began or ended query ", Token(obj(q).handle),
                        ", which is only begun on ", CtxName(target)),
           &c.last);
    }
  }
  for (int32_t r : c.maps) {
    const auto& on = obj(r).mapped_on;
    if (std::find(on.begin(), on.end(), target) != on.end()) {
      Flag(Rule::kR62, e, h,
           absl::StrCat("the command list mapped dynamic resource ", Token(obj(r).handle),
                        ", which is mapped on ", CtxName(target)),
           &c.last);
    }
  }
}

CommandList* CommandListTracker::IcList(const Event& e, uint64_t h, int32_t ic, Rule not_a_list,
                                        absl::string_view fn, absl::string_view not_a_list_what,
                                        int32_t* index) {
  const int32_t ci = h ? Slot(h).cl : -1;
  if (index != nullptr) *index = ci;
  if (ci < 0) {
    if (Complete(ic))
      Flag(not_a_list, e, h, absl::StrCat(fn, " on a handle that ", not_a_list_what));
    return nullptr;
  }
  CommandList& c = cls_[ci];
  if (c.state == State::kCreateFailed) {
    Flag(Rule::kR21, e, h, absl::StrCat(fn, " on a command list whose CreateCommandList failed"),
         &c.last);
    return nullptr;
  }
  return &c;
}

void CommandListTracker::OnExecute(const Event& e, const CallMeta& m, int32_t ic) {
  uint64_t h = Arg(e, m.handle);
  if (CommandList* c = IcList(e, h, ic, Rule::kR40, "CommandListExecute", "is not a command list");
      c != nullptr) {
    if (c->state == State::kValid) {
      CheckExecuteTarget(e, *c, ic, h);
      for (int32_t r : c->maps) t_.objects.NoteUse(r, e.seq);
    } else {
      Flag(Rule::kR40, e, h,
           absl::StrCat("CommandListExecute on a command list in state ", StateName(c->state),
                        " (only Valid handles may be executed)"),
           &c->last);
    }
  }
  t_.objects.ClearBindings(ic);  // the executing context ends in the cleared state
}

void CommandListTracker::OnRecycleDestroy(const Event& e, const CallMeta& m, int32_t ic) {
  uint64_t h = Arg(e, m.handle);
  int32_t ci = -1;
  CommandList* c =
      IcList(e, h, ic, Rule::kR41, "RecycleDestroyCommandList", "was never a command list", &ci);
  if (c == nullptr) return;
  if (c->state != State::kValid) {
    Flag(Rule::kR41, e, h,
         absl::StrCat("RecycleDestroyCommandList on a command list in state ", StateName(c->state),
                      " (only from Valid)"),
         &c->last);
    return;
  }
  if (c->owner >= 0) {
    const Ctx& owner = ctx(c->owner);
    if (owner.state == State::kDestroyed || owner.state == State::kCreateFailed) {
      Flag(Rule::kR41, e, h,
           absl::StrCat("the owning ", CtxName(c->owner),
                        " is destroyed; the runtime must call DestroyCommandList"),
           &c->last);
    }
  }
  To(ci, State::kRecycleDestroyed, e);
}

void CommandListTracker::OnDestroy(const Event& e, const CallMeta& m, int32_t ic) {
  uint64_t h = Arg(e, m.handle);
  int32_t ci = -1;
  CommandList* c =
      IcList(e, h, ic, Rule::kR44, "DestroyCommandList", "was never a command list", &ci);
  if (c == nullptr) return;
  switch (c->state) {
    case State::kValid:
    case State::kRecycleDestroyed:
    case State::kRecycled:
    case State::kRecycleCreateFailed:  // T7e: destroy-tolerant
      if (uint32_t open = t_.locals.OpenLocalsOf(/*is_cl=*/true, ci); open > 0) {
        Flag(Rule::kR54, e, h,
             absl::StrCat("IC command list destroyed while ", open,
                          " DC-local handle(s) of it are open"),
             &c->last);
      }
      To(ci, State::kDestroyed, e);
      return;
    default:
      Flag(Rule::kR44, e, h,
           absl::StrCat("DestroyCommandList on a command list in state ", StateName(c->state)),
           &c->last);
      return;
  }
}

void CommandListTracker::OnDcRecycle(const Event& e, const CallMeta& m, int32_t dc) {
  const Ctx& x = ctx(dc);
  switch (x.state) {
    case State::kRecording:
      t_.contexts.To(dc, State::kFinishing, e);
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
  To(ci, State::kRecycled, e);
}

int32_t CommandListTracker::NestedTarget(const Event& e, uint64_t h, int32_t dc) {
  if (options_.nested_execute_handle == NestedExecuteHandle::kIc) {
    int32_t ci = h ? Slot(h).cl : -1;
    if (ci < 0) {
      Flag(Rule::kR59, e, h,
           "nested CommandListExecute (nested_execute_handle=ic) on a handle that "
           "is not an IC command list");
    }
    return ci;
  }
  int32_t l = h ? Slot(h).local : -1;
  if (l < 0 || local(l).dc != dc || !local(l).is_cl || local(l).state != State::kOpen) {
    Flag(Rule::kR59, e, h,
         absl::StrCat("nested CommandListExecute needs a DC-local command-list handle open "
                      "on ",
                      CtxName(dc), " (nested_execute_handle=local)"),
         l >= 0 ? &local(l).last : nullptr);
    return -1;
  }
  return local(l).target;
}

void CommandListTracker::OnDcExecute(const Event& e, const CallMeta& m, int32_t dc) {
  uint64_t h = Arg(e, m.handle);
  int32_t ci = NestedTarget(e, h, dc);
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
      for (int32_t q : c.queries) t_.contexts.NoteRecorded(dc, q, /*map=*/false);
      for (int32_t r : c.maps) t_.contexts.NoteRecorded(dc, r, /*map=*/true);
    }
  }
  t_.objects.ClearBindings(dc);
}

}  // namespace cltrace::check::internal
