#include "check/internal/handle_spill.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "check/internal/trackers.h"

namespace cltrace::check::internal {
namespace {

// A cluster in the file (all little-endian host values; the file lives only as long as the
// run that wrote it):
//   u32 bytes (the whole cluster), u32 slots, u32 locals, u32 objects, u32 allocations
//   slots:       u64 id, i32 obj, i32 rtobj, i32 local, i32 alloc (cluster ordinals, -1 none)
//   locals:      Local as in memory (target and dep_local -1: a closed handle's are unused)
//   objects:     ObjectFields, then u32 count and i32 ordinals of its allocations
//   allocations: Allocation as in memory, obj a cluster ordinal
constexpr size_t kHeaderBytes = 5 * sizeof(uint32_t);
constexpr uint64_t kAlign = 8;  // clusters start at multiples of this (SlotTable positions)

static_assert(std::is_trivially_copyable_v<Local>);
static_assert(std::is_trivially_copyable_v<Allocation>);

// The fields of a moved-out Object (its query and map lists are empty: Movable).
struct ObjectFields {
  uint64_t handle;
  uint64_t create_seq;
  uint64_t destroy_seq;
  uint64_t last_ic_use;
  uint32_t number;
  uint32_t bind_count;
  int32_t device;
  int32_t dependency;
  int8_t type;
  State state;
  bool dynamic;
  bool primary;
  bool shared;
};
// An Object with a field ObjectFields does not carry would be restored without it.
static_assert(sizeof(Object) == 104, "a new Object field: carry it in ObjectFields");

// Object -> ObjectFields and back (the dependency is the caller's: it is renumbered).
template <typename From, typename To>
void CopyObjectFields(const From& from, To* to) {
  to->handle = from.handle;
  to->create_seq = from.create_seq;
  to->destroy_seq = from.destroy_seq;
  to->last_ic_use = from.last_ic_use;
  to->number = from.number;
  to->bind_count = from.bind_count;
  to->device = from.device;
  to->type = from.type;
  to->state = from.state;
  to->dynamic = from.dynamic;
  to->primary = from.primary;
  to->shared = from.shared;
}

template <typename T>
void Put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

template <typename T>
bool Get(const char*& p, const char* end, T* v) {
  if (static_cast<size_t>(end - p) < sizeof(T)) return false;
  std::memcpy(v, p, sizeof(T));
  p += sizeof(T);
  return true;
}

// Over, and changed by nothing but a call naming its handle again.
bool Movable(const Local& l) { return l.state != State::kOpen; }
bool Movable(const Object& o) {
  return (o.state == State::kDestroyed || o.state == State::kCreateFailed) && o.bind_count == 0 &&
         o.building.empty() && o.mapped_on.empty();
}
bool Movable(const Allocation& a) { return a.dealloc_seq != 0; }

}  // namespace

// Union-find over the slots and records considered at one compaction.
class SpillComponents {
 public:
  explicit SpillComponents(size_t n) : parent_(n), pinned_(n, 0) {
    for (size_t i = 0; i < n; ++i) parent_[i] = static_cast<int32_t>(i);
  }
  int32_t Find(int32_t i) {
    while (parent_[i] != i) {
      parent_[i] = parent_[parent_[i]];
      i = parent_[i];
    }
    return i;
  }
  void Join(int32_t a, int32_t b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[b] = a;
  }
  void Pin(int32_t i) { pinned_[i] = 1; }
  // After every Join: a component is pinned if any member is.
  void SpreadPins() {
    for (size_t i = 0; i < pinned_.size(); ++i)
      if (pinned_[i]) pinned_[Find(static_cast<int32_t>(i))] = 1;
  }
  bool Pinned(int32_t i) { return pinned_[Find(i)] != 0; }

 private:
  std::vector<int32_t> parent_;
  std::vector<uint8_t> pinned_;
};

HandleSpill::HandleSpill(CheckEnv& env, Trackers& t) : env_(env), t_(t) {
  env_.slots().set_restorer(this);
  Reset();
}

HandleSpill::~HandleSpill() {
  if (fd_ >= 0) close(fd_);
}

void HandleSpill::Reset() {
  if (fd_ >= 0 && ftruncate(fd_, 0) != 0) failed_ = true;
  file_end_ = 0;
  epoch_start_.assign(1, 0);
  clusters_out_ = clusters_back_ = 0;
}

bool HandleSpill::Enabled() const {
  return env_.streaming() && !env_.endings() && env_.options().spill_after > 0 && !failed_;
}

bool HandleSpill::OpenFile() {
  if (fd_ >= 0) return true;
  const char* dir = std::getenv("TMPDIR");
  std::string path =
      absl::StrCat(dir != nullptr && *dir != '\0' ? dir : "/tmp", "/cltrace-check-XXXXXX");
  fd_ = mkostemp(path.data(), O_CLOEXEC);
  if (fd_ < 0) return false;
  unlink(path.c_str());  // gone with the process, however it ends
  return true;
}

uint32_t HandleSpill::Append(const std::string& blob) {
  if (!OpenFile()) {
    failed_ = true;
    return 0;
  }
  const uint64_t at = (file_end_ + kAlign - 1) / kAlign * kAlign;
  if ((at + blob.size()) / kAlign + 1 > UINT32_MAX) {  // SlotTable positions are 32 bits
    failed_ = true;
    return 0;
  }
  size_t done = 0;
  while (done < blob.size()) {
    ssize_t n = pwrite(fd_, blob.data() + done, blob.size() - done, static_cast<off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed_ = true;  // disk full or the like: keep the rest in memory
      return 0;
    }
    done += static_cast<size_t>(n);
  }
  file_end_ = at + blob.size();
  return static_cast<uint32_t>(at / kAlign + 1);
}

// One compaction's view of the slots and records: nodes (slots, then locals, objects and
// allocations by index), their components, and the clusters that move.
struct HandleSpill::Plan {
  struct SlotNode {
    uint64_t id;
    HandleSlot* slot;
    bool cold;
  };
  struct Cluster {
    std::vector<int32_t> slots, locals, objs, allocs;
  };
  std::vector<SlotNode> slot_nodes;
  int32_t local0 = 0, obj0 = 0, alloc0 = 0, nodes = 0;
  std::vector<int32_t> ordinal;  // by node: its index within its cluster's kind
  std::vector<Cluster> clusters;
  int32_t Ord(int32_t base, int32_t i) const { return i < 0 ? -1 : ordinal[base + i]; }
};

void HandleSpill::MoveOut(uint64_t judged) {
  SlotTable& slots = env_.slots();
  const uint32_t now = slots.epoch();
  slots.NextEpoch();
  epoch_start_.push_back(judged);
  if (!Enabled()) return;
  const uint64_t after = env_.options().spill_after;
  // A slot is cold if no call named it in the last `after` calls: its epoch ended that long
  // ago. The handles of calls still in flight are named now.
  env_.ForEachOpenCall([&](const Event& e) {
    env_.ForEachHandle(e, env_.table()[e.call], [&](uint64_t v) { slots.Touch(v); });
  });
  Plan plan;
  slots.ForEachResident([&](uint64_t id, HandleSlot& s, uint32_t touched) {
    if (s.empty()) return;
    const bool cold = touched < now && judged - epoch_start_[touched + 1] >= after;
    plan.slot_nodes.push_back({id, &s, cold});
  });
  plan.local0 = static_cast<int32_t>(plan.slot_nodes.size());
  plan.obj0 = plan.local0 + static_cast<int32_t>(t_.locals.locals_.size());
  plan.alloc0 = plan.obj0 + static_cast<int32_t>(t_.objects.objs_.size());
  plan.nodes = plan.alloc0 + static_cast<int32_t>(t_.gpu.allocs_.size());
  SpillComponents c(static_cast<size_t>(plan.nodes));
  JoinAndPin(plan, c);
  Group(plan, c);
  if (plan.clusters.empty()) return;
  // Written in batches of about a megabyte: the buffer stays small however many move.
  std::string out;
  std::vector<uint64_t> at;
  size_t first = 0;
  for (size_t k = 0; k < plan.clusters.size(); ++k) {
    out.resize((out.size() + kAlign - 1) / kAlign * kAlign, '\0');
    at.push_back(out.size());
    Serialize(plan, k, out);
    if (out.size() < (size_t{1} << 20) && k + 1 < plan.clusters.size()) continue;
    if (!Commit(plan, first, k + 1, at, out)) return;  // not written: the rest stays
    out.clear();
    at.clear();
    first = k + 1;
  }
}

void HandleSpill::JoinAndPin(Plan& plan, SpillComponents& c) {
  const auto& locals = t_.locals.locals_;
  const auto& objs = t_.objects.objs_;
  const auto& allocs = t_.gpu.allocs_;
  const int32_t local0 = plan.local0, obj0 = plan.obj0, alloc0 = plan.alloc0;
  auto pin_obj = [&](int32_t o) {
    if (o >= 0 && static_cast<size_t>(o) < objs.size()) c.Pin(obj0 + o);
  };
  // Slots: what they name; a context, command list or surface keeps the slot here.
  for (int32_t i = 0; i < local0; ++i) {
    const HandleSlot& s = *plan.slot_nodes[i].slot;
    if (!plan.slot_nodes[i].cold || s.ctx >= 0 || s.core >= 0 || s.cl >= 0 || s.surface >= 0)
      c.Pin(i);
    if (s.obj >= 0) c.Join(i, obj0 + s.obj);
    if (s.rtobj >= 0) c.Join(i, obj0 + s.rtobj);
    if (s.local >= 0) c.Join(i, local0 + s.local);
    if (s.alloc >= 0) c.Join(i, alloc0 + s.alloc);
  }
  // Records: what is not over stays, with what it refers to.
  for (size_t l = 0; l < locals.size(); ++l) {
    const Local& loc = locals[l];
    if (Movable(loc)) continue;  // a closed handle's target and dependency are not read
    c.Pin(local0 + static_cast<int32_t>(l));
    if (!loc.is_cl) pin_obj(loc.target);
    if (loc.dep_local >= 0) c.Pin(local0 + loc.dep_local);
  }
  for (size_t o = 0; o < objs.size(); ++o) {
    const int32_t node = obj0 + static_cast<int32_t>(o);
    if (!Movable(objs[o])) c.Pin(node);
    if (objs[o].dependency >= 0) c.Join(node, obj0 + objs[o].dependency);
  }
  for (const auto& [o, ids] : t_.gpu.obj_allocs_)
    for (int32_t a : ids) c.Join(obj0 + o, alloc0 + a);
  for (size_t a = 0; a < allocs.size(); ++a) {
    const int32_t node = alloc0 + static_cast<int32_t>(a);
    if (!Movable(allocs[a])) c.Pin(node);
    if (allocs[a].obj >= 0) c.Join(node, obj0 + allocs[a].obj);
  }
  // What else refers to objects: bindings, recordings, command lists, deadlines.
  for (const Bindings& b : t_.objects.bind_)
    for (const auto& [key, v] : b.slots)
      for (int32_t o : v) pin_obj(o);
  RecordMarks roots;
  roots.keep[kObjRecord].assign(objs.size(), 0);
  t_.contexts.MarkRefs(roots);
  t_.lists.MarkRefs(roots);
  for (size_t o = 0; o < objs.size(); ++o)
    if (roots.Kept(kObjRecord, static_cast<int32_t>(o))) pin_obj(static_cast<int32_t>(o));
  for (const DeviceWork& w : t_.gpu.devices_) {
    for (int32_t o : w.destroyed_shared) pin_obj(o);
    for (int32_t o : w.destroyed_queued) pin_obj(o);
  }
  for (const Deadline& d : t_.gpu.deadlines_) {
    for (int32_t o : d.objs) pin_obj(o);
    if (d.kind == Deadline::kPrimaryDeallocated) pin_obj(d.index);
  }
  c.SpreadPins();
}

void HandleSpill::Group(Plan& plan, SpillComponents& c) {
  // A cluster per component that is not pinned and has a slot (nothing else reaches one
  // without: the compaction drops it).
  std::vector<int32_t> cluster_of(static_cast<size_t>(plan.nodes), -1);
  for (int32_t i = 0; i < plan.local0; ++i) {
    const int32_t r = c.Find(i);
    if (c.Pinned(r)) continue;
    if (cluster_of[r] < 0) {
      cluster_of[r] = static_cast<int32_t>(plan.clusters.size());
      plan.clusters.emplace_back();
    }
    plan.clusters[cluster_of[r]].slots.push_back(i);
  }
  if (plan.clusters.empty()) return;
  plan.ordinal.assign(static_cast<size_t>(plan.nodes), -1);
  auto add = [&](int32_t base, int32_t end, std::vector<int32_t> Plan::Cluster::*list) {
    for (int32_t node = base; node < end; ++node) {
      const int32_t k = cluster_of[c.Find(node)];
      if (k < 0) continue;
      std::vector<int32_t>& v = plan.clusters[k].*list;
      plan.ordinal[node] = static_cast<int32_t>(v.size());
      v.push_back(node - base);
    }
  };
  add(plan.local0, plan.obj0, &Plan::Cluster::locals);
  add(plan.obj0, plan.alloc0, &Plan::Cluster::objs);
  add(plan.alloc0, plan.nodes, &Plan::Cluster::allocs);
}

void HandleSpill::Serialize(const Plan& plan, size_t k, std::string& out) const {
  const Plan::Cluster& cl = plan.clusters[k];
  const size_t start = out.size();
  Put(out, uint32_t{0});  // the cluster's size, set below
  Put(out, static_cast<uint32_t>(cl.slots.size()));
  Put(out, static_cast<uint32_t>(cl.locals.size()));
  Put(out, static_cast<uint32_t>(cl.objs.size()));
  Put(out, static_cast<uint32_t>(cl.allocs.size()));
  for (int32_t i : cl.slots) {
    const HandleSlot& s = *plan.slot_nodes[i].slot;
    Put(out, plan.slot_nodes[i].id);
    Put(out, plan.Ord(plan.obj0, s.obj));
    Put(out, plan.Ord(plan.obj0, s.rtobj));
    Put(out, plan.Ord(plan.local0, s.local));
    Put(out, plan.Ord(plan.alloc0, s.alloc));
  }
  for (int32_t l : cl.locals) {
    Local loc = t_.locals.locals_[l];
    loc.target = loc.dep_local = -1;
    Put(out, loc);
  }
  for (int32_t o : cl.objs) {
    const Object& ob = t_.objects.objs_[o];
    ObjectFields f;
    std::memset(&f, 0, sizeof(f));  // no stray padding bytes in the file
    CopyObjectFields(ob, &f);
    f.dependency = plan.Ord(plan.obj0, ob.dependency);
    Put(out, f);
    absl::Span<const int32_t> ids = t_.gpu.AllocationsOf(o);
    Put(out, static_cast<uint32_t>(ids.size()));
    for (int32_t a : ids) Put(out, plan.Ord(plan.alloc0, a));
  }
  for (int32_t a : cl.allocs) {
    Allocation al = t_.gpu.allocs_[a];
    al.obj = plan.Ord(plan.obj0, al.obj);
    Put(out, al);
  }
  const uint32_t bytes = static_cast<uint32_t>(out.size() - start);
  std::memcpy(out.data() + start, &bytes, sizeof(bytes));
}

bool HandleSpill::Commit(const Plan& plan, size_t first, size_t end,
                         const std::vector<uint64_t>& at, const std::string& out) {
  const uint32_t base = Append(out);
  if (base == 0) return false;
  // Moved out: the slots point to the file, and the records refer to nothing, so that the
  // compaction that follows drops them.
  auto& locals = t_.locals.locals_;
  auto& objs = t_.objects.objs_;
  for (size_t k = first; k < end; ++k) {
    const Plan::Cluster& cl = plan.clusters[k];
    const uint32_t where = base + static_cast<uint32_t>(at[k - first] / kAlign);
    for (int32_t i : cl.slots) env_.slots().SetAway(plan.slot_nodes[i].id, where);
    for (int32_t l : cl.locals) locals[l].target = locals[l].dep_local = -1;
    for (int32_t o : cl.objs) {
      objs[o].dependency = -1;
      t_.gpu.obj_allocs_.erase(o);
    }
    for (int32_t a : cl.allocs) t_.gpu.allocs_[a].obj = -1;
  }
  clusters_out_ += end - first;
  return true;
}

void HandleSpill::Restore(uint64_t id) {
  SlotTable& slots = env_.slots();
  const uint32_t where = slots.Away(id);
  if (where == 0) return;
  const uint64_t offset = static_cast<uint64_t>(where - 1) * kAlign;
  auto fail = [&](const std::string& why) {
    env_.SetFatal(absl::DataLossError(
        absl::StrCat("reading back the moved-out history of handle ", env_.Token(id),
                     " from the checker's temporary file at offset ", offset, ": ", why)));
    slots.ClearAway(id);
  };
  auto read = [&](char* buf, size_t n, uint64_t at) {
    size_t done = 0;
    while (done < n) {
      ssize_t r = pread(fd_, buf + done, n - done, static_cast<off_t>(at + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      done += static_cast<size_t>(r);
    }
    return true;
  };
  uint32_t header[5];
  if (fd_ < 0 || offset + kHeaderBytes > file_end_ ||
      !read(reinterpret_cast<char*>(header), kHeaderBytes, offset)) {
    return fail(fd_ < 0 ? "no file" : std::strerror(errno));
  }
  if (header[0] < kHeaderBytes || offset + header[0] > file_end_)
    return fail(absl::StrCat("cluster size ", header[0], " is out of range"));
  std::string blob(header[0] - kHeaderBytes, '\0');
  if (!read(blob.data(), blob.size(), offset + kHeaderBytes)) return fail(std::strerror(errno));

  auto& locals = t_.locals.locals_;
  auto& objs = t_.objects.objs_;
  auto& allocs = t_.gpu.allocs_;
  const int32_t local0 = static_cast<int32_t>(locals.size());
  const int32_t obj0 = static_cast<int32_t>(objs.size());
  const int32_t alloc0 = static_cast<int32_t>(allocs.size());
  auto at = [](int32_t base, int32_t i) { return i < 0 ? -1 : base + i; };
  const char* p = blob.data();
  const char* end = p + blob.size();
  struct SlotEntry {
    uint64_t id;
    int32_t obj, rtobj, local, alloc;
  };
  std::vector<SlotEntry> entries(header[1]);
  for (SlotEntry& s : entries) {
    if (!Get(p, end, &s.id) || !Get(p, end, &s.obj) || !Get(p, end, &s.rtobj) ||
        !Get(p, end, &s.local) || !Get(p, end, &s.alloc))
      return fail("truncated slot");
  }
  for (uint32_t i = 0; i < header[2]; ++i) {
    Local loc;
    if (!Get(p, end, &loc)) return fail("truncated local handle");
    locals.push_back(loc);
  }
  for (uint32_t i = 0; i < header[3]; ++i) {
    ObjectFields f;
    uint32_t n = 0;
    if (!Get(p, end, &f) || !Get(p, end, &n)) return fail("truncated object");
    Object& ob = objs.emplace_back();
    CopyObjectFields(f, &ob);
    ob.dependency = at(obj0, f.dependency);
    for (uint32_t k = 0; k < n; ++k) {
      int32_t a = -1;
      if (!Get(p, end, &a)) return fail("truncated allocation list");
      if (a >= 0) t_.gpu.obj_allocs_[obj0 + static_cast<int32_t>(i)].push_back(alloc0 + a);
    }
  }
  for (uint32_t i = 0; i < header[4]; ++i) {
    Allocation al;
    if (!Get(p, end, &al)) return fail("truncated allocation");
    al.obj = at(obj0, al.obj);
    allocs.push_back(al);
  }
  for (const SlotEntry& s : entries) {
    slots.ClearAway(s.id);
    HandleSlot& slot = slots.Raw(s.id);
    slot = HandleSlot();
    slot.obj = at(obj0, s.obj);
    slot.rtobj = at(obj0, s.rtobj);
    slot.local = at(local0, s.local);
    slot.alloc = at(alloc0, s.alloc);
  }
  ++clusters_back_;
}

}  // namespace cltrace::check::internal
