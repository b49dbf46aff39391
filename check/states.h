// The handle states of ddi-spec §3 as the analysis library names them, and the transition
// record the checker emits for every state change (the lifecycle analysis and the inspector
// build their timelines from these).
//
// Thread-safety: plain values.
//
// Example:
//   std::cout << StateName(State::kRecycleDestroyed);  // "RecycleDestroyed"
#ifndef CLTRACE_CHECK_STATES_H_
#define CLTRACE_CHECK_STATES_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "ddi/call_ids.h"

namespace cltrace::check {

// What kind of handle a lifetime belongs to.
enum class HandleRole : uint8_t {
  kImmediateContext,  // hDrvDevice of CreateDevice (the IC table's hDevice)
  kDeferredContext,   // hDrvContext of CreateDeferredContext (§3.2)
  kCommandList,       // IC command-list handle (§3.1)
  kObject,            // IC handle of a resource, view, shader, state object, query...
  kLocal,             // DC-local handle of an IC object or IC command list (§3.3)
};

enum class State : uint8_t {
  kNone = 0,
  // §3.1 command lists.
  kValid,                // V
  kRecycleDestroyed,     // RD
  kRecycled,             // RC
  kRecycleCreateFailed,  // T7e: RecycleCreateCommandList returned E_OUTOFMEMORY
  // §3.2 deferred contexts.
  kRecording,      // Rec
  kFinishing,      // Fin (inside the RecycleCommandList loop)
  kClosed,         // Clo (CL taken; local handles being closed)
  kAbandoned,      // Abd
  kFinishFailed,   // D5e: Create/RecycleCreateCommandList failed; abandon or close may follow
  kRecycleFailed,  // D9e: RecycleCreateDeferredContext returned E_OUTOFMEMORY
  // §3.3 local handles, IC objects and contexts.
  kOpen,
  kClosedLocal,
  kAlive,
  // Shared ends.
  kCreateFailed,  // T1e / D1e: the create reported an error; the handle is dead
  kDestroyed,     // X
};

absl::string_view StateName(State s);
absl::string_view RoleName(HandleRole r);

// True for states in which the handle still exists for the driver.
inline bool IsLive(State s) {
  return s != State::kNone && s != State::kDestroyed && s != State::kCreateFailed &&
         s != State::kClosedLocal;
}

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
