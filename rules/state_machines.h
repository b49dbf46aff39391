// The handle-validity state machines of ddi-spec §3 as one table: the states (with their
// names and the spec's abbreviations), and per machine — command list (§3.1), deferred context
// (§3.2), context-local handle (§3.3) — its states and its edges (T1..., D..., L...), each edge
// tied to the rule of §5 that guards it. The checker emits transitions in these states (a test
// runs it over the golden corpus and finds every transition among the edges), the reference
// driver names its states from this table, and the inspector draws it.
//
// Besides the spec's states the table has the outcomes the spec leaves silent: a failed
// create (X', T1e/D1e) and the failed Finish/recycle states of T7e, D5e and D9e.
//
// Header-only and constant.
//
// Thread-safety: constant data; every function is safe from any thread.
//
// Example:
//   const MachineTable& m = MachineOf(Machine::kCommandList);
//   const Edge* e = FindEdge(Machine::kCommandList, State::kRecycleDestroyed, State::kValid,
//                            "RecycleCreateCommandList");  // nullptr: R45, no RD -> V
#ifndef CLTRACE_RULES_STATE_MACHINES_H_
#define CLTRACE_RULES_STATE_MACHINES_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "rules/rules.h"

namespace cltrace::rules {

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

// The table of states.
struct StateInfo {
  State state;
  const char* name;          // "RecycleDestroyed" (lifecycle output, messages)
  const char* abbreviation;  // the spec's short name: "RD"; "" for states the figure lacks
  const char* legend;        // the inspector's legend text: "RecycleDestroyed (RD)"
};

namespace internal {
inline constexpr StateInfo kStateTable[] = {
    {State::kNone, "None", "U", "None"},
    {State::kValid, "Valid", "V", "Valid (V)"},
    {State::kRecycleDestroyed, "RecycleDestroyed", "RD", "RecycleDestroyed (RD)"},
    {State::kRecycled, "Recycled", "RC", "Recycled (RC)"},
    {State::kRecycleCreateFailed, "RecycleCreateFailed", "RC!", "RecycleCreate failed"},
    {State::kRecording, "Recording", "Rec", "Recording"},
    {State::kFinishing, "Finishing", "Fin", "Finishing"},
    {State::kClosed, "Closed", "Clo", "Closed"},
    {State::kAbandoned, "Abandoned", "Abd", "Abandoned"},
    {State::kFinishFailed, "FinishFailed", "Fin!", "Finish failed"},
    {State::kRecycleFailed, "RecycleFailed", "Rec!", "Recycle failed"},
    {State::kOpen, "Open", "O", "Local open"},
    {State::kClosedLocal, "Closed", "C", "Local closed"},
    {State::kAlive, "Alive", "", "Alive"},
    {State::kCreateFailed, "CreateFailed", "X'", "Create failed"},
    {State::kDestroyed, "Destroyed", "X", "Destroyed"},
};
constexpr bool StateTableInOrder() {
  for (size_t i = 0; i < sizeof(kStateTable) / sizeof(kStateTable[0]); ++i)
    if (static_cast<size_t>(kStateTable[i].state) != i) return false;
  return true;
}
static_assert(StateTableInOrder(), "kStateTable lists the states in enum order");
}  // namespace internal

constexpr const StateInfo& InfoOf(State s) { return internal::kStateTable[static_cast<size_t>(s)]; }
constexpr absl::string_view StateName(State s) { return InfoOf(s).name; }
absl::string_view RoleName(HandleRole r);

// True for states in which the handle still exists for the driver.
constexpr bool IsLive(State s) {
  return s != State::kNone && s != State::kDestroyed && s != State::kCreateFailed &&
         s != State::kClosedLocal;
}

// The three machines of §3.
enum class Machine : uint8_t { kCommandList, kDeferredContext, kLocal };

// One edge of a machine. Several rows may share an id: the spec's row "D5 Rec/Fin -> Clo" is
// one edge per (from, to) pair here.
struct Edge {
  const char* id;  // "T3"
  State from;
  State to;
  // The calls that take it (catalog names, DC-table calls included); {nullptr} = any call
  // (e.g. SetErrorCb of a failed create, or every DC::pfnCreate* of a local open).
  const char* calls[2];
  const char* label;  // what the edge does, for drawing: "RecycleDestroyCommandList"
  Rule rule;          // the rule of §5 that guards it
};

struct MachineTable {
  Machine machine;
  HandleRole role;
  const char* title;  // "Command list (spec 3.1)"
  // Its states; the first is where a handle starts (kNone: U, or N for local handles).
  absl::Span<const State> states;
  absl::Span<const Edge> edges;
  const char* none_name;          // what kNone means here: "unallocated" / "none"
  const char* none_abbreviation;  // "U" / "N"
};

const MachineTable& MachineOf(Machine m);
// The machine of a handle role (kCommandList, kDeferredContext, kLocal); nullptr for the
// roles no §3 machine covers (immediate context, IC objects).
const MachineTable* MachineOfRole(HandleRole role);
// The spec's abbreviation of `s` in machine `m` ("U" or "N" for kNone).
absl::string_view Abbreviation(const MachineTable& m, State s);

// True if an edge of `m` names `call` (catalog name): one of the machine's lifecycle DDIs.
bool NamesCall(const MachineTable& m, absl::string_view call);
// True if `e` of `m` is taken by `call`. An edge that names calls is taken by those. An any-call
// edge (D2 "any DC-table DDI", T1e's SetErrorCb, the local-handle opens and closes) is taken by
// every call but the machine's own lifecycle DDIs, which have their own edges: so
// RecycleCreateDeferredContext on a Recording context is no D2. "" is any call.
bool EdgeTakes(const MachineTable& m, const Edge& e, absl::string_view call);
// The edge of `m` from `from` to `to` through `call`, or nullptr if the table has none.
const Edge* FindEdge(Machine m, State from, State to, absl::string_view call);

}  // namespace cltrace::rules

#endif  // CLTRACE_RULES_STATE_MACHINES_H_
