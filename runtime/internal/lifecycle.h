// The runtime's side of the §3 state machines (rules/state_machines.h): every lifecycle DDI the
// runtime issues on a command list, a deferred context or a context-local handle is first
// checked against the table; an edge is counted, a non-edge (only a runtime-misuse mode issues
// one on purpose) is recorded with the rule it breaks. ProcessLifecycleSteps (runtime.h) reads
// both. Recording allocates nothing, so the runtime's heap pattern (and the handle values in
// recorded traces) does not depend on it.
//
// Thread-safety: every function is safe from any thread; a handle's state itself belongs to the
// thread that owns the handle (the DC's domain, or the releaser of a command list).
#ifndef CLTRACE_RUNTIME_INTERNAL_LIFECYCLE_H_
#define CLTRACE_RUNTIME_INTERNAL_LIFECYCLE_H_

#include "rules/rules.h"
#include "rules/state_machines.h"

namespace cltrace::runtime::internal {

// Whether `call` takes a handle of machine `m` from `from` to `to` (an edge of the table);
// counted as such, or recorded as a non-edge breaking `rule`.
bool CheckStep(rules::Machine m, rules::State from, rules::State to, const char* call,
               rules::Rule rule);
// CheckStep from `*state`, then `*state` = `to`.
bool Step(rules::Machine m, rules::State* state, rules::State to, const char* call,
          rules::Rule rule);

}  // namespace cltrace::runtime::internal

#endif  // CLTRACE_RUNTIME_INTERNAL_LIFECYCLE_H_
