#include "check/internal/local_tracker.h"

#include <algorithm>
#include <optional>

#include "check/internal/trackers.h"

namespace cltrace::check::internal {

void LocalTracker::To(int32_t i, State s, const Event& e) {
  Local& l = locals_[i];
  State from = Advance(l, s, e);
  uint64_t ic = l.is_cl ? cl(l.target).handle : obj(l.target).handle;
  env_.Emit(HandleRole::kLocal, from, s, l.number, l.handle, e, ctx(l.dc).handle, ic, l.recording);
}

void LocalTracker::MarkRefs(RecordMarks& marks) const {
  for (size_t i = 0; i < locals_.size(); ++i) {
    const Local& l = locals_[i];
    if (l.state == State::kOpen) marks.Mark(kLocalRecord, static_cast<int32_t>(i));
    marks.Mark(l.is_cl ? kClRecord : kObjRecord, l.target);
    marks.Mark(kLocalRecord, l.dep_local);
  }
  for (const auto& [key, l] : open_local_) {
    marks.Mark(kLocalRecord, l);
    marks.Mark((key >> 32) & 1 ? kClRecord : kObjRecord, static_cast<int32_t>(key & 0xffffffffu));
  }
}

void LocalTracker::Compact(const RecordRemap& r) {
  CompactRecords(locals_, r.to[kLocalRecord]);
  for (Local& l : locals_) {
    r.Apply(l.is_cl ? kClRecord : kObjRecord, l.target);
    r.Apply(kLocalRecord, l.dep_local);
  }
  absl::flat_hash_map<uint64_t, int32_t> open;
  for (const auto& [key, l] : open_local_) {
    const bool is_cl = (key >> 32) & 1;
    open[OpenKey(static_cast<int32_t>(key >> 33), is_cl,
                 r(is_cl ? kClRecord : kObjRecord, static_cast<int32_t>(key & 0xffffffffu)))] =
        r(kLocalRecord, l);
  }
  open_local_ = std::move(open);
  for (int is_cl = 0; is_cl < 2; ++is_cl) {
    const RecordKind kind = is_cl ? kClRecord : kObjRecord;
    std::vector<uint32_t> of;
    for (size_t i = 0; i < open_of_[is_cl].size(); ++i) {
      const int32_t to = r(kind, static_cast<int32_t>(i));
      if (to < 0 || open_of_[is_cl][i] == 0) continue;
      if (static_cast<size_t>(to) >= of.size()) of.resize(to + 1, 0);
      of[to] = open_of_[is_cl][i];
    }
    open_of_[is_cl] = std::move(of);
  }
  absl::flat_hash_map<int32_t, uint64_t> sizes;
  for (const auto& [c, size] : cl_local_size_) {
    if (int32_t to = r(kClRecord, c); to >= 0) sizes[to] = size;
  }
  cl_local_size_ = std::move(sizes);
}

int32_t LocalTracker::OpenTarget(const Event& e, const CallMeta& m, int32_t dc, bool is_cl) {
  absl::string_view fn = CallName(e.call);
  uint64_t h = Arg(e, m.handle);
  uint64_t rt = Arg(e, m.rt);
  int32_t target = rt == 0 ? -1 : (is_cl ? Slot(rt).cl : Slot(rt).obj);
  if (target < 0 || (!is_cl && obj(target).type != m.object_type)) {
    if (target < 0 && !Complete(dc)) return -1;  // the IC object predates the trace
    Flag(
        Rule::kR56, e, h,
        absl::StrCat("local open ", fn, ": the HRT slot (", rt ? Token(rt) : "NULL",
                     ") does not carry the IC driver handle of a ", HandleTypeName(m.object_type)));
    return -1;
  }
  if (is_cl) {
    const CommandList& c = cl(target);
    if (c.state == State::kDestroyed || c.state == State::kCreateFailed) {
      Flag(Rule::kR54, e, h,
           absl::StrCat("local open of IC command list ", Token(rt), ", which is ",
                        StateName(c.state)),
           &c.last);
    }
  } else if (obj(target).state != State::kAlive) {
    Flag(Rule::kR54, e, h,
         absl::StrCat("local open of IC object ", Token(rt), ", which is ",
                      StateName(obj(target).state),
                      obj(target).destroy_seq ? absl::StrCat(" since seq ", obj(target).destroy_seq)
                                              : std::string()));
  }
  return target;
}

int32_t LocalTracker::OpenDependency(const Event& e, const CallMeta& m, int32_t dc, int32_t target,
                                     bool is_cl) {
  absl::string_view fn = CallName(e.call);
  uint64_t h = Arg(e, m.handle);
  const bool dependent = !is_cl && obj(target).dependency >= 0;
  const uint64_t present = m.present != kNoField ? Arg(e, m.present) : 0;
  if (!dependent) {
    if (present != 0) {
      Flag(Rule::kR56, e, h,
           absl::StrCat("local open ", fn,
                        " of a dependency-free object passes an argument structure; it "
                        "must be NULL"));
    }
    return -1;
  }
  if (present == 0 || m.dependency == kNoField) {
    Flag(Rule::kR56, e, h,
         absl::StrCat("local open ", fn, " of a dependent object without its dependency handle"));
    return -1;
  }
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
  } else if (locals_[dl].target != obj(target).dependency) {
    Flag(Rule::kR55, e, h,
         absl::StrCat("local open ", fn, ": dependency ", Token(dep),
                      " is the local handle of another resource"));
  } else {
    return dl;
  }
  return -1;
}

void LocalTracker::OnOpen(const Event& e, const CallMeta& m, int32_t dc) {
  const Ctx& x = ctx(dc);
  if (x.state != State::kRecording && x.state != State::kFinishing) {
    Flag(Rule::kR53, e, x.handle,
         absl::StrCat("local open ", CallName(e.call), " on ", CtxName(dc), ", which is ",
                      StateName(x.state)),
         &x.last);
  }
  uint64_t h = Arg(e, m.handle);
  if (h == 0) return;
  const bool is_cl = m.op == Op::kCreateCommandList;
  int32_t target = OpenTarget(e, m, dc, is_cl);
  if (target < 0) return;
  // R56: argument shape; R55: the dependency is opened first.
  int32_t dep_local = OpenDependency(e, m, dc, target, is_cl);
  auto [it, inserted] = open_local_.try_emplace(OpenKey(dc, is_cl, target), -1);
  if (!inserted && it->second >= 0) {
    const Local& prev = locals_[it->second];
    Flag(Rule::kR58, e, h,
         absl::StrCat(Token(Arg(e, m.rt)), " is already open on ", CtxName(dc), " as ",
                      Token(prev.handle), " (seq ", prev.open_seq,
                      "); a local handle is opened at most once per recording"),
         &prev.last);
  }
  int32_t l = static_cast<int32_t>(locals_.size());
  locals_.emplace_back();
  Local& loc = locals_.back();
  loc.handle = h;
  loc.number = ++created_;
  loc.dc = dc;
  loc.is_cl = is_cl;
  loc.target = target;
  loc.recording = x.recording;
  loc.dep_local = dep_local;
  loc.open_seq = e.seq;
  it->second = l;
  Slot(h).local = l;
  CountOpen(loc, 1);
  if (dep_local >= 0) ++locals_[dep_local].open_dependents;
  To(l, State::kOpen, e);
}

void LocalTracker::CountOpen(const Local& l, int delta) {
  if (static_cast<size_t>(l.dc) >= open_on_.size()) open_on_.resize(l.dc + 1, 0);
  open_on_[l.dc] += delta;
  std::vector<uint32_t>& of = open_of_[l.is_cl ? 1 : 0];
  if (static_cast<size_t>(l.target) >= of.size()) of.resize(l.target + 1, 0);
  of[l.target] += delta;
}

void LocalTracker::Close(int32_t l, const Event& e) {
  Local& loc = locals_[l];
  loc.close_seq = e.seq;
  CountOpen(loc, -1);
  if (loc.dep_local >= 0 && locals_[loc.dep_local].open_dependents > 0)
    --locals_[loc.dep_local].open_dependents;
  auto it = open_local_.find(OpenKey(loc.dc, loc.is_cl, loc.target));
  if (it != open_local_.end() && it->second == l) open_local_.erase(it);
  To(l, State::kClosedLocal, e);
}

void LocalTracker::OnOpenFailed(const Event& cb, const Event& create, const CallMeta& cm) {
  int32_t l = Slot(Arg(create, cm.handle)).local;
  if (l >= 0 && locals_[l].open_seq == create.seq && locals_[l].state == State::kOpen) {
    Close(l, cb);
    locals_[l].state = State::kCreateFailed;
  }
}

void LocalTracker::OnClose(const Event& e, const CallMeta& m, int32_t dc) {
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
  t_.contexts.NoteLocalClosed(dc);
  Close(l, e);
}

int32_t LocalTracker::Resolve(const Event& e, int32_t dc, uint64_t h, bool want_cl) {
  if (h == 0) return -1;
  const HandleSlot& s = Slot(h);
  int32_t l = s.local;
  if (l >= 0) {
    const Local& loc = locals_[l];
    if (loc.dc == dc && loc.state == State::kOpen && loc.is_cl == want_cl) return loc.target;
    if (loc.dc == dc && loc.state != State::kOpen &&
        (s.obj < 0 || obj(s.obj).create_seq < loc.close_seq)) {
      Flag(Rule::kR58, e, h,
           absl::StrCat(Token(h), " was closed at seq ", loc.close_seq, "; recording ",
                        ctx(dc).recording, " of ", CtxName(dc), " must re-open it on first use"),
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

void LocalTracker::CheckHandles(const Event& e, const CallMeta& m, int32_t dc) {
  env_.ForEachHandle(e, m, [&](uint64_t v) { Resolve(e, dc, v, false); });
}

void LocalTracker::CloseAllOn(const Event& e, int32_t dc, bool destroy) {
  const Ctx& x = ctx(dc);
  if (OpenLocalsOn(dc) == 0) return;
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
  for (size_t i = 0; i < locals_.size() && OpenLocalsOn(dc) > 0; ++i) {
    if (locals_[i].dc == dc && locals_[i].state == State::kOpen) Close(static_cast<int32_t>(i), e);
  }
}

void LocalTracker::OnCheckHandleSizes(const Event& e, const CallMeta& m, int32_t ic) {
  const Ctx& x = ctx(ic);
  t_.contexts.NoteDcSupport(ic);
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
    auto known = sizes_.find(ic);
    if (known != sizes_.end() && x.removed && sizes != known->second) {
      Flag(Rule::kR27, e, x.handle,
           "CheckDeferredContextHandleSizes answered differently after device removal");
    }
    if (!sizes.empty()) sizes_[ic] = std::move(sizes);
  }
}

void LocalTracker::OnCalcHandleSize(const Event& e, const CallMeta& m, int32_t ic, bool consumed,
                                    bool first_of_thread) {
  const Ctx& x = ctx(ic);
  uint64_t type = Arg(e, m.handle_type);
  uint64_t size = static_cast<uint64_t>(e.ret);
  if (auto known = sizes_.find(ic); known != sizes_.end()) {
    bool listed = false;
    for (const auto& [t, s] : known->second)
      if (t == type && s == size) listed = true;
    if (!listed) {
      Flag(Rule::kR33, e, x.handle,
           absl::StrCat("CalcDeferredContextHandleSize(", HandleTypeName(type), ") returned ", size,
                        ", which CheckDeferredContextHandleSizes did not list"));
    }
  }
  // A matching pending creation was consumed in ResolvePending (top-level calls).
  // A fragment (late attach) may begin between a creation and its size query: the first
  // call of a thread on a device created before the trace is not judged.
  if (e.parent == 0 && !consumed && !(first_of_thread && !Complete(ic))) {
    Flag(Rule::kR35, e, 0,
         absl::StrCat("CalcDeferredContextHandleSize(", HandleTypeName(type),
                      ") is not right after an IC creation on this thread"));
  }
}

bool LocalTracker::ResolveRecycle(const Event& e, const CallMeta& m, const PendingCalc& pc) {
  if (m.op != Op::kCalcHandleSize || Arg(e, m.handle_type) != k_.ht_commandlist) return false;
  const CommandList& c = cl(pc.cl);
  auto known = cl_local_size_.find(pc.cl);
  const uint64_t local_size = known == cl_local_size_.end() ? 0 : known->second;
  Flag(Rule::kR35, e, pc.handle,
       absl::StrCat("CalcDeferredContextHandleSize(D3D11DDI_HT_COMMANDLIST) after "
                    "RecycleCreateCommandList (seq ",
                    pc.create_seq, "): the local handle size is not re-queried"),
       &c.last);
  if (local_size != 0 && static_cast<uint64_t>(e.ret) != local_size) {
    Flag(Rule::kR37, e, pc.handle,
         absl::StrCat("DC-local command-list handle size changed from ", local_size, " to ", e.ret,
                      " across a recycle"),
         &c.last);
  }
  return true;
}

bool LocalTracker::ResolvePending(const Event& e, const CallMeta& m) {
  std::optional<PendingCalc> taken = t_.threads.Take(e.tid, e.seq);
  if (!taken) return false;
  const PendingCalc& pc = *taken;
  if (pc.recycle) return ResolveRecycle(e, m, pc);
  uint64_t type = Arg(e, m.handle_type);
  if (m.op == Op::kCalcHandleSize && static_cast<int64_t>(type) == pc.type) {
    if (int32_t ic = LookupCtx(Arg(e, m.hdevice));
        ic >= 0 && !ctx(ic).dc && ctx(ic).no_lists_caps_seq != 0 && !ctx(ic).dc_support) {
      Flag(Rule::kR35, e, pc.handle,
           absl::StrCat("CalcDeferredContextHandleSize(", HandleTypeName(pc.type), ") after ",
                        CallName(pc.create_call), " (seq ", pc.create_seq,
                        ") on a device whose threading caps (GetCaps seq ",
                        ctx(ic).no_lists_caps_seq,
                        ") report no command lists: local handle sizes are queried only "
                        "from drivers that support deferred contexts"));
    }
    if (pc.cl >= 0) {
      const CommandList& c = cl(pc.cl);
      uint64_t& local_size = cl_local_size_[pc.cl];
      if (local_size != 0 && static_cast<uint64_t>(e.ret) != local_size) {
        Flag(Rule::kR37, e, pc.handle,
             absl::StrCat("DC-local command-list handle size changed from ", local_size, " to ",
                          e.ret),
             &c.last);
      }
      local_size = static_cast<uint64_t>(e.ret);
    }
    return true;
  }
  if (!pc.expected) return false;
  Flag(Rule::kR35, e, pc.handle,
       absl::StrCat("the call after ", CallName(pc.create_call), " (seq ", pc.create_seq,
                    ") on this thread is not CalcDeferredContextHandleSize(",
                    HandleTypeName(pc.type), ")"));
  return false;
}

}  // namespace cltrace::check::internal
