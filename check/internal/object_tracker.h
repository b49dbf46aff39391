// ObjectTracker: the IC objects of a trace (resources, views, shaders, states, queries) with
// the per-(query, context) and per-(resource, context) trackers of ddi-spec §3.4 and the
// bindings of each context (R73). It consumes IC Create*/Destroy* of objects, QueryBegin/End,
// Map/Unmap and Set* (on either table; a DC's handles are resolved to IC objects by the
// LocalTracker first), and the IC calls that use objects on the GPU (R67). It reports R54
// (object destroyed under open local handles), R63, R64, R73; it hands R68/R69 deadlines to
// the GpuTracker and sets the creating thread's R35 obligation (ThreadTracker). Peers read
// objects by index (at) and unbind through ClearBindings.
//
// Thread-safety: none (one per Checker, which is single-threaded).
//
// Example:
//   t.objects.OnCreate(e, m, ic);                  // IC::CreateResource
//   t.objects.OnQuery(e, ic, q, /*begin=*/true);   // IC::QueryBegin
#ifndef CLTRACE_CHECK_INTERNAL_OBJECT_TRACKER_H_
#define CLTRACE_CHECK_INTERNAL_OBJECT_TRACKER_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "check/internal/tracker.h"

namespace cltrace::check::internal {

class HandleSpill;

struct Object {
  uint64_t handle = 0;
  uint32_t number = 0;  // lifetime number (1, 2, ... in creation order; TransitionEvent)
  int8_t type = -1;
  State state = State::kNone;
  int32_t device = -1;
  int32_t dependency = -1;  // views: the resource
  bool dynamic = false;
  bool primary = false;
  bool shared = false;
  uint32_t bind_count = 0;  // bindings on any context (R73)
  // Queries (§3.4, per (query, context)): the contexts it is Building on, with the recording
  // each Begin was made in.
  struct Building {
    int32_t ctx = -1;
    uint32_t recording = 0;
  };
  absl::InlinedVector<Building, 1> building;
  bool BuildingOn(int32_t c) const {
    for (const Building& b : building)
      if (b.ctx == c) return true;
    return false;
  }
  void StopBuilding(int32_t c) {
    for (size_t i = 0; i < building.size(); ++i) {
      if (building[i].ctx == c) {
        building.erase(building.begin() + static_cast<ptrdiff_t>(i));
        return;
      }
    }
  }
  absl::InlinedVector<int32_t, 2> mapped_on;  // contexts it is mapped on (one per map)
  uint64_t create_seq = 0;
  uint64_t destroy_seq = 0;
  uint64_t last_ic_use = 0;  // last IC-table call naming it (R67)
};

// Bound objects of one context, by binding group and slot (R73).
struct Bindings {
  absl::flat_hash_map<uint32_t, absl::InlinedVector<int32_t, 4>> slots;
  uint32_t bound = 0;  // non-empty slots
};

class ObjectTracker : public TrackerBase {
 public:
  ObjectTracker(CheckEnv& env, Trackers& peers) : TrackerBase(env, peers) {}

  const Object& at(int32_t i) const { return objs_[i]; }
  const std::deque<Object>& all() const { return objs_; }
  // Moves object `i` to `s` (the observer sees it).
  void To(int32_t i, State s, const Event& e);
  // True if `o` is a non-shared primary (an IC-domain resource, R11).
  bool IsNonSharedPrimary(int32_t o) const {
    return o >= 0 && objs_[o].primary && !objs_[o].shared;
  }

  void OnCreate(const Event& e, const CallMeta& m, int32_t ic);
  void OnDestroy(const Event& e, const CallMeta& m);
  // §3.4 query pairs of object `q` on context `c` (R63).
  void OnQuery(const Event& e, int32_t c, int32_t q, bool begin);
  // §3.4 maps of resource `r` on context `c` (R64).
  void OnMap(const Event& e, const CallMeta& m, int32_t c, int32_t r, bool map);
  // A Set* on context `c` (dc: through a DC table, handles are local).
  void OnSetter(const Event& e, const CallMeta& m, int32_t c, bool dc);
  // R67: an IC call that references objects on the GPU.
  void NoteIcUses(const Event& e, const CallMeta& m);
  // Context `c` ends in the cleared state (nothing bound).
  void ClearBindings(int32_t c);
  // What context `c` has bound (nullptr: never bound anything).
  const Bindings* BindingsOf(int32_t c) const {
    return static_cast<size_t>(c) < bind_.size() ? &bind_[c] : nullptr;
  }
  // An IC call at `seq` (CommandListExecute of a list that mapped it) uses `o` (R67).
  void NoteUse(int32_t o, uint64_t seq) { objs_[o].last_ic_use = seq; }
  // DC `dc` is destroyed: no query pair is open on it.
  void StopBuildingOn(int32_t dc);
  // DC `dc` ends its recording: the resources it mapped are no longer mapped on it.
  void ForgetMaps(int32_t dc, const std::vector<int32_t>& maps);

  // Compaction (Trackers::Compact): what the objects and bindings refer to; drops the objects
  // `r` drops.
  size_t size() const { return objs_.size(); }
  void MarkRefs(RecordMarks& marks) const;
  void Compact(const RecordRemap& r);

 private:
  friend class HandleSpill;  // moves finished records out of memory and back
  void BindSlot(Bindings& b, uint32_t key, uint32_t slot, int32_t obj);

  // In fixed-size blocks: a record brought back in (HandleSpill) while a call is judged
  // leaves the references to the others valid.
  std::deque<Object> objs_;
  std::vector<Bindings> bind_;  // by context
  uint32_t created_ = 0;        // objects ever made (the last lifetime number)
};

}  // namespace cltrace::check::internal

#endif  // CLTRACE_CHECK_INTERNAL_OBJECT_TRACKER_H_
