#include "check/internal/object_tracker.h"

#include <algorithm>

#include "check/internal/trackers.h"

namespace cltrace::check::internal {

void ObjectTracker::To(int32_t i, State s, const Event& e) {
  Object& o = objs_[i];
  State from = o.state;
  o.state = s;
  env_.Emit(HandleRole::kObject, from, s, o.number, o.handle, e, 0, 0, 0);
}

void ObjectTracker::MarkRefs(RecordMarks& marks) const {
  for (const Object& o : objs_) marks.Mark(kObjRecord, o.dependency);
  for (const Bindings& b : bind_) {
    for (const auto& [key, v] : b.slots)
      for (int32_t o : v) marks.Mark(kObjRecord, o);
  }
}

void ObjectTracker::Compact(const RecordRemap& r) {
  CompactRecords(objs_, r.to[kObjRecord]);
  for (Object& o : objs_) r.Apply(kObjRecord, o.dependency);
  for (Bindings& b : bind_) {
    for (auto& [key, v] : b.slots) r.ApplyAll(kObjRecord, v);
  }
}

void ObjectTracker::OnCreate(const Event& e, const CallMeta& m, int32_t ic) {
  uint64_t h = Arg(e, m.handle);
  if (h == 0) return;
  int32_t o = static_cast<int32_t>(objs_.size());
  objs_.emplace_back();
  Object& ob = objs_.back();
  ob.handle = h;
  ob.number = ++created_;
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
    ob.primary = Arg(e, m.primary_desc) != 0;  // created with a pPrimaryDesc
    ob.shared = (misc & k_.misc_shared) != 0;
  }
  Slot(h).obj = o;
  if (uint64_t rt = Arg(e, m.rt)) Slot(rt).rtobj = o;
  To(o, State::kAlive, e);
  if (m.object_type >= 0) {
    PendingCalc p = PendingCalc::After(e, h);
    p.expected = ctx(ic).dc_support || t_.contexts.caps_build2();
    p.type = m.object_type;
    t_.threads.Expect(p);
  }
}

void ObjectTracker::OnDestroy(const Event& e, const CallMeta& m) {
  uint64_t h = Arg(e, m.handle);
  int32_t o = h ? Slot(h).obj : -1;
  if (o < 0) return;
  Object& ob = objs_[o];
  if (ob.state != State::kAlive) return;
  if (uint32_t open = t_.locals.OpenLocalsOf(/*is_cl=*/false, o); open > 0) {
    Flag(Rule::kR54, e, h,
         absl::StrCat("IC handle destroyed while ", open,
                      " DC-local handle(s) of it are open (the IC handle is destroyed last)"));
  }
  if (ob.bind_count > 0) {
    Flag(Rule::kR73, e, h,
         absl::StrCat("object destroyed while still bound (", ob.bind_count,
                      " binding(s)); the runtime destroys only unbound objects"));
  }
  ob.destroy_seq = e.seq;
  To(o, State::kDestroyed, e);
  if (ob.type == 0) t_.gpu.OnResourceDestroyed(e, o);
}

void ObjectTracker::BindSlot(Bindings& b, uint32_t key, uint32_t slot, int32_t obj) {
  auto& v = b.slots[key];
  if (slot >= v.size()) {
    if (obj < 0) return;
    if (slot > 4096) return;  // a corrupt slot number; not worth tracking
    v.resize(slot + 1, -1);
  }
  int32_t old = v[slot];
  if (old == obj) return;
  if (old >= 0) {
    --objs_[old].bind_count;
    --b.bound;
  }
  v[slot] = obj;
  if (obj >= 0) {
    ++objs_[obj].bind_count;
    ++b.bound;
  }
}

void ObjectTracker::ClearBindings(int32_t c) {
  if (static_cast<size_t>(c) >= bind_.size() || bind_[c].bound == 0) return;
  Bindings& b = bind_[c];
  for (auto& [key, v] : b.slots) {
    for (int32_t& o : v) {
      if (o >= 0) --objs_[o].bind_count;
      o = -1;
    }
  }
  b.bound = 0;
}

void ObjectTracker::StopBuildingOn(int32_t dc) {
  for (Object& o : objs_)
    if (!o.building.empty()) o.StopBuilding(dc);
}

void ObjectTracker::ForgetMaps(int32_t dc, const std::vector<int32_t>& maps) {
  for (int32_t r : maps) {
    auto& on = objs_[r].mapped_on;
    on.erase(std::remove(on.begin(), on.end(), dc), on.end());
  }
}

void ObjectTracker::NoteIcUses(const Event& e, const CallMeta& m) {
  // Only GPU work references an allocation: binds, draws, copies, clears, presents.
  // Creates, destroys, maps and size queries do not.
  if (m.op != Op::kSetter && m.op != Op::kOther && m.op != Op::kDxgiPresent) return;
  env_.ForEachHandle(e, m, [&](uint64_t v) {
    int32_t o = Slot(v).obj;
    if (o < 0) return;
    objs_[o].last_ic_use = e.seq;
    if (objs_[o].dependency >= 0) objs_[objs_[o].dependency].last_ic_use = e.seq;
  });
}

void ObjectTracker::OnSetter(const Event& e, const CallMeta& m, int32_t c, bool dc) {
  if (e.parent != 0) {
    // A state-refresh answer re-sends bindings the context already has (or had before the
    // CommandListExecute / Create it is nested in cleared them): it changes nothing.
    if (dc) t_.locals.CheckHandles(e, m, c);
    return;
  }
  if (static_cast<size_t>(c) >= bind_.size()) bind_.resize(c + 1);
  Bindings& b = bind_[c];
  auto resolve = [&](uint64_t v) -> int32_t {
    if (v == 0) return -1;
    if (dc) return t_.locals.Resolve(e, c, v, false);
    int32_t o = Slot(v).obj;
    return o >= 0 && objs_[o].state == State::kAlive ? o : -1;
  };
  const uint32_t group = static_cast<uint32_t>(m.bind_group) << 12;
  const uint32_t start = m.start_slot != kNoField ? static_cast<uint32_t>(Arg(e, m.start_slot)) : 0;
  for (int16_t f : m.handle_fields)
    BindSlot(b, group | static_cast<uint32_t>(f), 0, resolve(Arg(e, f)));
  for (size_t a = 0; a < m.arrays.size(); ++a) {
    const auto& af = m.arrays[a];
    if (af.handle_elem[0] < 0) continue;
    uint32_t n = 0;
    auto elems = ArrayElems(e, m, a, &n);
    const uint32_t key = group | static_cast<uint32_t>(af.field);
    for (uint32_t i = 0; i < n; ++i)
      BindSlot(b, key, start + i, resolve(elems[i * af.stride + af.handle_elem[0]]));
    if (m.start_slot == kNoField) {
      // A whole-array setter (SetRenderTargets): slots past the new count are unbound.
      auto it = b.slots.find(key);
      if (it != b.slots.end())
        for (uint32_t s = n; s < it->second.size(); ++s) BindSlot(b, key, s, -1);
    }
  }
}

void ObjectTracker::OnQuery(const Event& e, int32_t c, int32_t q, bool begin) {
  Object& o = objs_[q];
  const Ctx& x = ctx(c);
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
  if (x.dc) t_.contexts.NoteRecorded(c, q, /*map=*/false);
}

void ObjectTracker::OnMap(const Event& e, const CallMeta& m, int32_t c, int32_t r, bool map) {
  Object& o = objs_[r];
  const Ctx& x = ctx(c);
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
    if (first) t_.contexts.NoteRecorded(c, r, /*map=*/true);
  }
  o.mapped_on.push_back(c);
}

}  // namespace cltrace::check::internal
