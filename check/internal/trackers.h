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
        gpu(env, *this) {}
  Trackers(const Trackers&) = delete;
  Trackers& operator=(const Trackers&) = delete;

  ContextTracker contexts;   // immediate and deferred contexts, thread domains (§3.2, §0.2)
  CommandListTracker lists;  // command lists (§3.1)
  ObjectTracker objects;     // IC objects, query/map trackers, bindings (§3.4, R73)
  LocalTracker locals;       // context-local handles and their sizes (§3.3)
  GpuTracker gpu;            // kernel callbacks, GPU model, DX6, deadlines
  ThreadTracker threads;     // first calls per thread, R35 obligations
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
