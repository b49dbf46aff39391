// Trackers: the contract checker's trackers, one per state machine, built over one CheckEnv.
// Checker::Impl dispatches each event to them; a tracker reaches its peers through this
// aggregate (TrackerBase::t_), and unit tests build one to feed a tracker events directly.
//
// Thread-safety: none (one per Checker, which is single-threaded).
//
// Example:
//   CheckEnv env(options);
//   env.Begin(events, handles);
//   Trackers t(env);
//   t.lists.OnCreate(e, CallTable::Get()[e.call], ic, /*recycle=*/false);
#ifndef CLTRACE_CHECK_INTERNAL_TRACKERS_H_
#define CLTRACE_CHECK_INTERNAL_TRACKERS_H_

#include <string>

#include "check/internal/check_env.h"
#include "check/internal/command_list_tracker.h"
#include "check/internal/context_tracker.h"
#include "check/internal/gpu_tracker.h"
#include "check/internal/handle_spill.h"
#include "check/internal/local_tracker.h"
#include "check/internal/object_tracker.h"
#include "check/internal/thread_tracker.h"

namespace cltrace::check::internal {

struct Trackers {
  explicit Trackers(CheckEnv& env)
      : contexts(env, *this),
        lists(env, *this),
        objects(env, *this),
        locals(env, *this),
        gpu(env, *this),
        spill(env, *this) {}
  Trackers(const Trackers&) = delete;
  Trackers& operator=(const Trackers&) = delete;

  ContextTracker contexts;   // immediate and deferred contexts, thread domains (§3.2, §0.2)
  CommandListTracker lists;  // command lists (§3.1)
  ObjectTracker objects;     // IC objects, query/map trackers, bindings (§3.4, R73)
  LocalTracker locals;       // context-local handles and their sizes (§3.3)
  GpuTracker gpu;            // kernel callbacks, GPU model, DX6, deadlines
  ThreadTracker threads;     // first calls per thread, R35 obligations
  HandleSpill spill;         // finished handle histories out of memory and back

  // Drops the records nothing reaches any more -- a command list, IC object, local handle or
  // allocation that no handle slot names (its handle value went on to a new lifetime), no
  // peer record, pending deadline or R35 obligation refers to, that is not an open local
  // handle (CloseAllOn finds those) and not an object with an allocation still to be
  // deallocated (R70 counts those) -- and renumbers the rest, in order. Nothing a rule can
  // still look up is dropped, so findings and transitions are those of a run without it;
  // memory then follows the live handles, not the length of the trace. Call between events.
  void Compact(CheckEnv& env);
  // Records held now (command lists, objects, local handles, allocations).
  size_t records() const {
    return lists.size() + objects.size() + locals.size() + gpu.allocations().size();
  }
};

inline const Ctx& TrackerBase::ctx(int32_t c) const { return t_.contexts.at(c); }
inline const CommandList& TrackerBase::cl(int32_t i) const { return t_.lists.at(i); }
inline const Object& TrackerBase::obj(int32_t i) const { return t_.objects.at(i); }
inline const Local& TrackerBase::local(int32_t i) const { return t_.locals.at(i); }
inline std::string TrackerBase::CtxName(int32_t c) const { return t_.contexts.Name(c); }
inline bool TrackerBase::Complete(int32_t c) const { return t_.contexts.Complete(c); }
inline int32_t TrackerBase::LookupCtx(uint64_t h) { return t_.contexts.Lookup(h); }

}  // namespace cltrace::check::internal

#endif  // CLTRACE_CHECK_INTERNAL_TRACKERS_H_
