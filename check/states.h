// The transition record the checker emits for every state change of a handle, in the states
// of ddi-spec §3 (rules/state_machines.h holds the states and the machines' edges; the
// lifecycle analysis and the inspector build their timelines from these records).
//
// Thread-safety: plain values.
//
// Example:
//   std::cout << StateName(State::kRecycleDestroyed);  // "RecycleDestroyed"
#ifndef CLTRACE_CHECK_STATES_H_
#define CLTRACE_CHECK_STATES_H_

#include <cstdint>

#include "ddi/call_ids.h"
#include "rules/state_machines.h"

namespace cltrace::check {

// The states, roles and machines are the table of rules/state_machines.h.
using rules::HandleRole;
using rules::IsLive;
using rules::RoleName;
using rules::State;
using rules::StateName;

// One state change of one handle lifetime.
struct TransitionEvent {
  HandleRole role;
  State from;
  State to;
  // Lifetime number, unique per role within one analysis (a handle value reused after its
  // destruction starts a new lifetime with a new number).
  uint32_t lifetime;
  uint64_t handle;  // handle id in the trace's TokenTable
  uint64_t seq;     // entry position of the call that caused it
  format::CallId call;
  bool dc_table;  // the causing call went through a deferred context's table
  // kCommandList: the owning DC's handle; kLocal: the DC the handle is open on;
  // kDeferredContext/kObject: 0.
  uint64_t context;
  // kLocal: the IC object's (or IC command list's) handle; otherwise 0.
  uint64_t ic_handle;
  // kDeferredContext and kLocal: the DC's recording number (1 = first recording).
  uint32_t recording;
};

}  // namespace cltrace::check

#endif  // CLTRACE_CHECK_STATES_H_
