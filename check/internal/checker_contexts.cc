// Checker::Impl handlers of the deferred-context state machine (§3.2), IC objects and
// context-local handles (§3.3), bindings (R73) and the query/map trackers (§3.4).
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

void Checker::Impl::IcCreateDeferredContext(const Event& e, const CallMeta& m, int32_t ic) {
  uint64_t h = Arg(e, m.hdrvcontext);
  if (h == 0) return;
  ctxs_[ic].dc_support = true;
  NewCtx(true, h, Arg(e, m.hrtcorelayer), ic, false, e);
}

void Checker::Impl::ResetRecording(int32_t dc) {
  Ctx& x = ctxs_[dc];
  x.has_work = false;
  x.oom_pending = false;
  x.closes_started = false;
  x.calls_since_amortized = 0;
  x.r72_warned = false;
  x.rec_queries.clear();
  for (int32_t r : x.rec_maps) {
    auto& on = objs_[r].mapped_on;
    on.erase(std::remove(on.begin(), on.end(), dc), on.end());
  }
  x.rec_maps.clear();
  ClearBindings(x);
}

void Checker::Impl::CheckClosedBeforeRecycle(const Event& e, int32_t dc, bool destroy) {
  Ctx& x = ctxs_[dc];
  if (x.open_locals == 0) return;
  // Slow path (only on a violation or a teardown of a DC with open handles).
  int32_t example = -1;
  uint32_t n = 0;
  for (size_t i = 0; i < locals_.size(); ++i) {
    if (locals_[i].dc != dc || locals_[i].state != State::kOpen) continue;
    if (example < 0) example = static_cast<int32_t>(i);
    ++n;
  }
  bool judged = !(destroy && (x.state == State::kRecording || x.state == State::kFinishing));
  if (judged && example >= 0) {
    const Local& l = locals_[example];
    Rule rule = x.state == State::kAbandoned ? Rule::kR51 : Rule::kR58;
    Flag(rule, e, x.handle,
         absl::StrCat(n, " DC-local handle(s) still open on ", CtxName(dc), " at ",
                      CallName(e.call), " (e.g. ", Token(l.handle), " opened at seq ", l.open_seq,
                      "); every local handle is closed before the DC is ",
                      destroy ? "destroyed" : "recycled"),
         &x.last);
  }
  // Close them so later findings are not consequences of this one.
  for (size_t i = 0; i < locals_.size() && x.open_locals > 0; ++i) {
    if (locals_[i].dc == dc && locals_[i].state == State::kOpen)
      CloseLocal(static_cast<int32_t>(i), e);
  }
}

void Checker::Impl::IcRecycleCreateDeferredContext(const Event& e, const CallMeta& m, int32_t ic) {
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
           absl::StrCat("RecycleCreateDeferredContext on ", CtxName(d), ", which is ",
                        StateName(x.state)),
           &x.last);
      return;
    default:
      Flag(Rule::kR48, e, x.handle,
           absl::StrCat("RecycleCreateDeferredContext on ", CtxName(d), " in state ",
                        StateName(x.state),
                        "; only after AbandonCommandList, CreateCommandList or "
                        "RecycleCreateCommandList"),
           &x.last);
      break;
  }
  CheckClosedBeforeRecycle(e, d, false);
  if (hr < 0) {
    CtxTo(d, State::kRecycleFailed, e);
    return;
  }
  ResetRecording(d);
  ++x.recording;
  CtxTo(d, State::kRecording, e);
}

void Checker::Impl::DcDestroy(const Event& e, int32_t dc) {
  Ctx& x = ctxs_[dc];
  if (x.state == State::kRecording && x.has_work) {
    Flag(Rule::kR48, e, x.handle,
         absl::StrCat("DestroyDevice on ", CtxName(dc),
                      " that holds unfinished recorded work; the runtime abandons first "
                      "(AbandonCommandList, unbinds, closes)"),
         &x.last);
  }
  CheckClosedBeforeRecycle(e, dc, true);
  ResetRecording(dc);
  for (Object& o : objs_)
    if (!o.building.empty()) o.StopBuilding(dc);
  CtxTo(dc, State::kDestroyed, e);
}

void Checker::Impl::IcCreateObject(const Event& e, const CallMeta& m, int32_t ic) {
  uint64_t h = Arg(e, m.handle);
  if (h == 0) return;
  int32_t o = static_cast<int32_t>(objs_.size());
  objs_.emplace_back();
  Object& ob = objs_.back();
  ob.handle = h;
  ob.type = m.object_type;
  ob.device = ic;
  ob.create_seq = e.seq;
  if (m.dependency != kNoField) {
    uint64_t dep = Arg(e, m.dependency);
    if (dep != 0) ob.dependency = Slot(dep).obj;
  }
  if (m.object_type == 0) {
    ob.dynamic = m.usage != kNoField && Arg(e, m.usage) == k_.usage_dynamic;
    uint64_t misc = Arg(e, m.misc_flags);
    ob.primary = (misc & k_.misc_primary) != 0;
    ob.shared = (misc & k_.misc_shared) != 0;
  }
  Slot(h).obj = o;
  if (uint64_t rt = Arg(e, m.rt)) Slot(rt).rtobj = o;
  ObjTo(o, State::kAlive, e);
  if (m.object_type >= 0) {
    PendingCalc p;
    p.expected = ctxs_[ic].dc_support || caps_build2_;
    p.tid = e.tid;
    p.after = EndOf(e);
    p.create_seq = e.seq;
    p.create_call = e.call;
    p.handle = h;
    p.type = m.object_type;
    threads_.Expect(p);
  }
}

void Checker::Impl::IcDestroyObject(const Event& e, const CallMeta& m) {
  uint64_t h = Arg(e, m.handle);
  int32_t o = h ? Slot(h).obj : -1;
  if (o < 0) return;
  Object& ob = objs_[o];
  if (ob.state != State::kAlive) return;
  if (ob.open_locals > 0) {
    Flag(Rule::kR54, e, h,
         absl::StrCat("IC handle destroyed while ", ob.open_locals,
                      " DC-local handle(s) of it are open (the IC handle is destroyed last)"));
  }
  if (ob.bind_count > 0) {
    Flag(Rule::kR73, e, h,
         absl::StrCat("object destroyed while still bound (", ob.bind_count,
                      " binding(s)); the runtime destroys only unbound objects"));
  }
  ob.destroy_seq = e.seq;
  ObjTo(o, State::kDestroyed, e);
  if (ob.type == 0 && !ob.allocs.empty()) {
    if (ob.primary && !ob.shared) {
      // R69: deallocated inside this DestroyResource.
      Deadline d;
      d.kind = Deadline::kPrimaryDeallocated;
      d.at = EndOf(e);
      d.seq = e.seq;
      d.tid = e.tid;
      d.call = e.call;
      d.index = o;
      AddDeadline(std::move(d));
    } else if (ob.shared && ob.device >= 0) {
      ctxs_[ob.device].destroyed_shared.push_back(o);
    } else if (ob.device >= 0) {
      ctxs_[ob.device].destroyed_queued.push_back(o);
    }
  }
}

void Checker::Impl::DcOpen(const Event& e, const CallMeta& m, int32_t dc) {
  Ctx& x = ctxs_[dc];
  absl::string_view fn = CallName(e.call);
  if (x.state != State::kRecording && x.state != State::kFinishing) {
    Flag(Rule::kR53, e, x.handle,
         absl::StrCat("local open ", fn, " on ", CtxName(dc), ", which is ", StateName(x.state)),
         &x.last);
  }
  uint64_t h = Arg(e, m.handle);
  uint64_t rt = Arg(e, m.rt);
  if (h == 0) return;
  const bool is_cl = m.op == Op::kCreateCommandList;
  int32_t target = rt == 0 ? -1 : (is_cl ? Slot(rt).cl : Slot(rt).obj);
  if (target < 0 || (!is_cl && objs_[target].type != m.object_type)) {
    if (target < 0 && !Complete(dc)) return;  // the IC object predates the trace
    Flag(
        Rule::kR56, e, h,
        absl::StrCat("local open ", fn, ": the HRT slot (", rt ? Token(rt) : "NULL",
                     ") does not carry the IC driver handle of a ", HandleTypeName(m.object_type)));
    return;
  }
  if (is_cl) {
    const CommandList& c = cls_[target];
    if (c.state == State::kDestroyed || c.state == State::kCreateFailed) {
      Flag(Rule::kR54, e, h,
           absl::StrCat("local open of IC command list ", Token(rt), ", which is ",
                        StateName(c.state)),
           &c.last);
    }
  } else if (objs_[target].state != State::kAlive) {
    Flag(Rule::kR54, e, h,
         absl::StrCat(
             "local open of IC object ", Token(rt), ", which is ", StateName(objs_[target].state),
             objs_[target].destroy_seq ? absl::StrCat(" since seq ", objs_[target].destroy_seq)
                                       : std::string()));
  }
  // R56: argument shape; R55: the dependency is opened first.
  int32_t dep_local = -1;
  const bool dependent = !is_cl && objs_[target].dependency >= 0;
  const uint64_t present = m.present != kNoField ? Arg(e, m.present) : 0;
  if (!dependent) {
    if (present != 0) {
      Flag(Rule::kR56, e, h,
           absl::StrCat("local open ", fn,
                        " of a dependency-free object passes an argument structure; it "
                        "must be NULL"));
    }
  } else if (present == 0 || m.dependency == kNoField) {
    Flag(Rule::kR56, e, h,
         absl::StrCat("local open ", fn, " of a dependent object without its dependency handle"));
  } else {
    auto fields = format::Fields(*format::GetCall(e.call));
    for (int16_t f = m.args_first; f < m.args_end; ++f) {
      if (f == m.dependency || Arg(e, f) == 0) continue;
      Flag(Rule::kR56, e, h,
           absl::StrCat("local open ", fn, ": member ", fields[f].name,
                        " is non-zero; only the dependency handle is set"));
      break;
    }
    uint64_t dep = Arg(e, m.dependency);
    int32_t dl = dep ? Slot(dep).local : -1;
    if (dep == 0) {
      Flag(Rule::kR56, e, h, absl::StrCat("local open ", fn, ": the dependency handle is NULL"));
    } else if (dl < 0 || locals_[dl].dc != dc || locals_[dl].state != State::kOpen ||
               locals_[dl].is_cl) {
      Flag(Rule::kR55, e, h,
           absl::StrCat("local open ", fn, ": dependency ", Token(dep),
                        " is not a local handle open on ", CtxName(dc),
                        " (open the resource before its views)"));
    } else if (locals_[dl].target != objs_[target].dependency) {
      Flag(Rule::kR55, e, h,
           absl::StrCat("local open ", fn, ": dependency ", Token(dep),
                        " is the local handle of another resource"));
    } else {
      dep_local = dl;
    }
  }
  const uint64_t key =
      (static_cast<uint64_t>(dc) << 33) | (uint64_t{is_cl} << 32) | static_cast<uint32_t>(target);
  auto [it, inserted] = open_local_.try_emplace(key, -1);
  if (!inserted && it->second >= 0) {
    const Local& prev = locals_[it->second];
    Flag(Rule::kR58, e, h,
         absl::StrCat(Token(rt), " is already open on ", CtxName(dc), " as ", Token(prev.handle),
                      " (seq ", prev.open_seq,
                      "); a local handle is opened at most once per recording"),
         &prev.last);
  }
  int32_t l = static_cast<int32_t>(locals_.size());
  locals_.emplace_back();
  Local& loc = locals_.back();
  loc.handle = h;
  loc.dc = dc;
  loc.is_cl = is_cl;
  loc.target = target;
  loc.recording = x.recording;
  loc.dep_local = dep_local;
  loc.open_seq = e.seq;
  it->second = l;
  Slot(h).local = l;
  if (is_cl) {
    ++cls_[target].open_locals;
  } else {
    ++objs_[target].open_locals;
  }
  ++x.open_locals;
  if (dep_local >= 0) ++locals_[dep_local].open_dependents;
  LocalTo(l, State::kOpen, e);
}

void Checker::Impl::CloseLocal(int32_t l, const Event& e) {
  Local& loc = locals_[l];
  Ctx& x = ctxs_[loc.dc];
  loc.close_seq = e.seq;
  if (loc.is_cl) {
    --cls_[loc.target].open_locals;
  } else {
    --objs_[loc.target].open_locals;
  }
  --x.open_locals;
  if (loc.dep_local >= 0 && locals_[loc.dep_local].open_dependents > 0)
    --locals_[loc.dep_local].open_dependents;
  const uint64_t key = (static_cast<uint64_t>(loc.dc) << 33) | (uint64_t{loc.is_cl} << 32) |
                       static_cast<uint32_t>(loc.target);
  auto it = open_local_.find(key);
  if (it != open_local_.end() && it->second == l) open_local_.erase(it);
  LocalTo(l, State::kClosedLocal, e);
}

void Checker::Impl::DcClose(const Event& e, const CallMeta& m, int32_t dc) {
  Ctx& x = ctxs_[dc];
  uint64_t h = Arg(e, m.handle);
  if (h == 0) return;
  int32_t l = Slot(h).local;
  if (l < 0 && !Complete(dc)) return;  // opened before the trace began
  if (l < 0 || locals_[l].dc != dc) {
    Flag(Rule::kR57, e, h,
         absl::StrCat("local close ", CallName(e.call), " of ", Token(h),
                      ", which is not a local handle of ", CtxName(dc)));
    return;
  }
  Local& loc = locals_[l];
  if (loc.state != State::kOpen) {
    Flag(Rule::kR58, e, h,
         absl::StrCat("local handle ", Token(h), " closed twice (closed at seq ", loc.close_seq,
                      ")"),
         &loc.last);
    return;
  }
  if (loc.open_dependents > 0) {
    Flag(Rule::kR55, e, h,
         absl::StrCat("local resource closed while ", loc.open_dependents,
                      " local view(s) of it are open (views are closed first)"),
         &loc.last);
  }
  if (x.state != State::kRecording && x.state != State::kFinishing) x.closes_started = true;
  CloseLocal(l, e);
}

int32_t Checker::Impl::ResolveLocal(const Event& e, int32_t dc, uint64_t h, bool want_cl) {
  if (h == 0) return -1;
  const HandleSlot& s = Slot(h);
  int32_t l = s.local;
  if (l >= 0) {
    const Local& loc = locals_[l];
    if (loc.dc == dc && loc.state == State::kOpen && loc.is_cl == want_cl) return loc.target;
    if (loc.dc == dc && loc.state != State::kOpen &&
        (s.obj < 0 || objs_[s.obj].create_seq < loc.close_seq)) {
      Flag(Rule::kR58, e, h,
           absl::StrCat(Token(h), " was closed at seq ", loc.close_seq, "; recording ",
                        ctxs_[dc].recording, " of ", CtxName(dc), " must re-open it on first use"),
           &loc.last);
      return -1;
    }
    if (loc.dc != dc && loc.state == State::kOpen) {
      Flag(Rule::kR57, e, h,
           absl::StrCat(Token(h), " is a local handle of ", CtxName(loc.dc), ", not of ",
                        CtxName(dc)),
           &loc.last);
      return -1;
    }
  }
  if (s.obj >= 0 || s.cl >= 0) {
    Flag(Rule::kR57, e, h,
         absl::StrCat(Token(h), " is an IC handle; ", CtxName(dc),
                      " takes only its own local handles"));
  } else if (Complete(dc)) {
    Flag(Rule::kR57, e, h, absl::StrCat(Token(h), " is not a local handle open on ", CtxName(dc)));
  }
  return -1;
}

void Checker::Impl::CheckDcHandles(const Event& e, const CallMeta& m, int32_t dc) {
  for (int16_t f : m.handle_fields) {
    uint64_t v = Arg(e, f);
    if (v != 0) ResolveLocal(e, dc, v, false);
  }
  for (size_t a = 0; a < m.arrays.size(); ++a) {
    const auto& af = m.arrays[a];
    if (af.handle_elem[0] < 0) continue;
    uint32_t n = 0;
    auto elems = ArrayElems(e, m, a, &n);
    for (uint32_t i = 0; i < n; ++i)
      for (int8_t he : af.handle_elem)
        if (he >= 0 && elems[i * af.stride + he] != 0)
          ResolveLocal(e, dc, elems[i * af.stride + he], false);
  }
}

void Checker::Impl::Setter(const Event& e, const CallMeta& m, int32_t c, bool dc) {
  if (e.parent != 0) {
    // A state-refresh answer re-sends bindings the context already has (or had before the
    // CommandListExecute / Create it is nested in cleared them): it changes nothing.
    if (dc) CheckDcHandles(e, m, c);
    return;
  }
  Ctx& x = ctxs_[c];
  auto resolve = [&](uint64_t v) -> int32_t {
    if (v == 0) return -1;
    if (dc) return ResolveLocal(e, c, v, false);
    int32_t o = Slot(v).obj;
    return o >= 0 && objs_[o].state == State::kAlive ? o : -1;
  };
  const uint32_t group = static_cast<uint32_t>(m.bind_group) << 12;
  const uint32_t start = m.start_slot != kNoField ? static_cast<uint32_t>(Arg(e, m.start_slot)) : 0;
  for (int16_t f : m.handle_fields)
    BindSlot(x, group | static_cast<uint32_t>(f), 0, resolve(Arg(e, f)));
  for (size_t a = 0; a < m.arrays.size(); ++a) {
    const auto& af = m.arrays[a];
    if (af.handle_elem[0] < 0) continue;
    uint32_t n = 0;
    auto elems = ArrayElems(e, m, a, &n);
    const uint32_t key = group | static_cast<uint32_t>(af.field);
    for (uint32_t i = 0; i < n; ++i)
      BindSlot(x, key, start + i, resolve(elems[i * af.stride + af.handle_elem[0]]));
    if (m.start_slot == kNoField) {
      // A whole-array setter (SetRenderTargets): slots past the new count are unbound.
      auto it = x.bind.slots.find(key);
      if (it != x.bind.slots.end())
        for (uint32_t s = n; s < it->second.size(); ++s) BindSlot(x, key, s, -1);
    }
  }
}

void Checker::Impl::QueryBeginEnd(const Event& e, int32_t c, int32_t q, bool begin) {
  Object& o = objs_[q];
  Ctx& x = ctxs_[c];
  // §3.4 tracks each (query, context) pair on its own: a Begin/End pair on the IC and one on
  // a DC are independent. A pair spans contexts when the End is made on a context where the
  // query is not Building while it is Building on another one.
  Object::Building* on = nullptr;
  for (Object::Building& b : o.building)
    if (b.ctx == c) on = &b;
  if (begin) {
    if (on != nullptr) {
      on->recording = x.recording;  // a repeated Begin restarts the pair
    } else {
      o.building.push_back(Object::Building{c, x.recording});
    }
  } else if (on != nullptr) {
    if (x.dc && on->recording != x.recording) {
      Flag(Rule::kR63, e, o.handle,
           absl::StrCat("query ", Token(o.handle), " begun in recording ", on->recording, " of ",
                        CtxName(c), " and ended in recording ", x.recording,
                        " (begin/end pairs never span a command-list boundary)"));
    }
    o.StopBuilding(c);
  } else if (!o.building.empty()) {
    const int32_t other = o.building.front().ctx;
    Flag(Rule::kR63, e, o.handle,
         absl::StrCat("query ", Token(o.handle), " ended on ", CtxName(c),
                      ", where it is not begun, while it is begun on ", CtxName(other),
                      " (begin/end pairs never span contexts)"));
    o.StopBuilding(other);  // that pair is the one this End closed
  }
  if (x.dc && std::find(x.rec_queries.begin(), x.rec_queries.end(), q) == x.rec_queries.end())
    x.rec_queries.push_back(q);
}

void Checker::Impl::MapUnmap(const Event& e, const CallMeta& m, int32_t c, int32_t r, bool map) {
  Object& o = objs_[r];
  Ctx& x = ctxs_[c];
  if (!map) {
    auto it = std::find(o.mapped_on.begin(), o.mapped_on.end(), c);
    if (it != o.mapped_on.end()) o.mapped_on.erase(it);
    return;
  }
  if (x.dc) {
    uint64_t how = Arg(e, m.ddimap);
    bool first = std::find(x.rec_maps.begin(), x.rec_maps.end(), r) == x.rec_maps.end();
    if (o.type == 0 && !o.dynamic) {
      Flag(Rule::kR64, e, o.handle,
           absl::StrCat("map of non-dynamic resource ", Token(o.handle), " on ", CtxName(c)));
    } else if (m.ddimap != kNoField && how != k_.map_discard && how != k_.map_nooverwrite) {
      const format::EnumInfo* maps = format::FindEnum("D3D10_DDI_MAP");
      auto how_name = maps ? format::NameOfValue(*maps, how) : std::nullopt;
      Flag(Rule::kR64, e, o.handle,
           absl::StrCat("map of ", Token(o.handle), " on ", CtxName(c), " with ",
                        how_name ? *how_name : absl::StrCat("DDIMap=", how),
                        " (only WRITE_DISCARD and WRITE_NO_OVERWRITE)"));
    } else if (first && m.ddimap != kNoField && how != k_.map_discard) {
      Flag(Rule::kR64, e, o.handle,
           absl::StrCat("first map of ", Token(o.handle), " in recording ", x.recording, " of ",
                        CtxName(c), " is not a discard"));
    }
    if (first) x.rec_maps.push_back(r);
  }
  o.mapped_on.push_back(c);
}

}  // namespace cltrace::check
