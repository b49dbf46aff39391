// One streaming pass over a trace for the exporters (`cltrace export --chrome`, `--sqlite`):
// every call in seq order with the table it went through, its exit (with an exit time), the
// state intervals of every command list, deferred context and context-local handle lifetime as
// `cltrace lifecycle` computes them (the contract checker's transitions, check/lifecycle.h),
// and at the end the checker's findings as `cltrace check` reports them (findings across the
// holes of a recording withheld, check/check_trace.h).
//
// Memory: the calls still open (nesting depth times threads), the lifetimes not yet destroyed
// and what the checker keeps; nothing grows with the number of calls.
//
// Times: a trace stores entry times only. A call's exit time is the entry time of the first
// call entered after it returned (the end of the trace for the last ones), raised where
// needed so that a callback never ends after the call it was made in.
//
// Thread-safety: single-threaded.
//
// Example:
//   class Counter : public TraceWalkVisitor {
//     absl::Status OnCall(const format::Event& e, absl::string_view table) override { ... }
//   };
//   Counter c;
//   absl::StatusOr<WalkSummary> s = WalkTrace(*stream, ReplayOf(path, false), {}, &c);
#ifndef CLTRACE_CLI_TRACE_WALK_H_
#define CLTRACE_CLI_TRACE_WALK_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "check/checker.h"
#include "check/states.h"
#include "format/event.h"
#include "format/seq_stream.h"

namespace cltrace::cli {

// The table a call went through: "IC" or "DC" for device-layer calls (the checker decides by
// the hDevice, as `cltrace check` does), else the catalog layer's short name ("Adapter",
// "DXGI", "CoreCb", "KernelCb", "KMD", "Dxgkrnl", "DX6", "API").
absl::string_view LayerTableName(format::CallId call);

// A call that has returned (or, at the end of the trace, never did).
struct WalkExit {
  uint64_t seq = 0;
  uint64_t end = 0;  // 0: never returned
  uint64_t parent = 0;
  uint32_t tid = 0;
  format::CallId call = format::CallId::kInvalid;
  absl::string_view table;
  int64_t ret = 0;
  int64_t entry_ns = 0;
  int64_t exit_ns = 0;
};

// One lifetime of a command list, deferred context or context-local handle.
struct WalkLifetime {
  check::HandleRole role = check::HandleRole::kCommandList;
  uint64_t handle = 0;     // handle id (TokenTable of the stream)
  uint32_t lifetime = 0;   // the checker's lifetime number (unique per role)
  uint64_t context = 0;    // command lists: owning DC; locals: their DC
  uint64_t ic_handle = 0;  // locals: the IC object / command list they stand for
  uint32_t recording = 0;  // locals: the recording of their DC
  uint64_t track = 0;      // 1, 2, ... over all roles, by first transition
  uint64_t first_seq = 0;
};

// One state a lifetime was in, [from_seq, to_seq); to_seq == 0: until the end of the trace
// (a lifetime still in it there, or a final state: Destroyed, CreateFailed). A closed local
// handle's Closed interval ends where its memory is recycled or its DC destroyed
// (check::TransitionObserver::OnLocalEnded).
struct WalkInterval {
  check::State state = check::State::kNone;
  uint64_t from_seq = 0;
  uint64_t to_seq = 0;
  int64_t from_ns = 0;
  int64_t to_ns = 0;  // the trace's last time when to_seq == 0
  format::CallId cause = format::CallId::kInvalid;
  bool dc_table = false;
  uint64_t context = 0;  // as check::Interval::context
};

// What an exporter does with the pass. Every method may fail; the pass stops at the first
// error and returns it.
class TraceWalkVisitor {
 public:
  virtual ~TraceWalkVisitor() = default;
  // Every call at its entry, in seq order.
  virtual absl::Status OnCall(const format::Event& e, absl::string_view table) {
    (void)e;
    (void)table;
    return absl::OkStatus();
  }
  // Every call once it returned (in order of exit; calls that never returned at the end).
  virtual absl::Status OnExit(const WalkExit& x) {
    (void)x;
    return absl::OkStatus();
  }
  // A lifetime's first transition (before its first interval).
  virtual absl::Status OnLifetimeStart(const WalkLifetime& l) {
    (void)l;
    return absl::OkStatus();
  }
  // An interval of `l`, once it is over (the last ones at the end of the trace).
  virtual absl::Status OnInterval(const WalkLifetime& l, const WalkInterval& iv) {
    (void)l;
    (void)iv;
    return absl::OkStatus();
  }
  // A lifetime after its last interval: destroyed (or failed to be created; for a local
  // handle: closed, and its memory recycled or its DC destroyed), or still alive at the end
  // of the trace (`destroyed` false).
  virtual absl::Status OnLifetimeEnd(const WalkLifetime& l, check::State final_state,
                                     bool destroyed) {
    (void)l;
    (void)final_state;
    (void)destroyed;
    return absl::OkStatus();
  }
  // The checker's findings, after every call (violations, then warnings), with the entry
  // time of the offending call.
  virtual absl::Status OnFinding(const check::Violation& v, int64_t ns) {
    (void)v;
    (void)ns;
    return absl::OkStatus();
  }
};

// Where a trace's timestamps come from (format/trace.proto, WriterInfo.timestamps; inferred
// from the events when the writer did not say).
struct TimestampInfo {
  // "clock" (read at every entry), "derived" (the recorder's default: from (position, clock)
  // samples, a lower bound exact to one poll interval), "positions" (seq times the unit: a
  // normalised trace), "none" (all zero: JSONL, an import) or "unknown".
  std::string source;
  bool derived = false;  // anything but "clock" and "unknown"
};

struct WalkSummary {
  uint64_t calls = 0;
  uint64_t threads = 0;
  uint64_t lifetimes = 0;  // command lists + deferred contexts + local handles
  uint64_t violations = 0;
  uint64_t warnings = 0;
  uint64_t dropped_findings = 0;
  int64_t first_ns = 0;
  int64_t last_ns = 0;
  TimestampInfo timestamps;
};

// Feeds every event of `in` (from its current position) through the checker and `visitor`.
// Reading errors are the stream's (in.status(); the pass ends where reading stopped);
// InvalidArgument for events the checker rejects; the visitor's errors as they are.
// `progress` (may be empty) is called after every event.
absl::StatusOr<WalkSummary> WalkTrace(format::SeqStream& in, check::TraceReplay replay,
                                      const check::CheckOptions& options, TraceWalkVisitor* visitor,
                                      const std::function<void()>& progress = {});

// "CL", "DC", "Local" (short role names for track titles and SQL).
absl::string_view RoleShortName(check::HandleRole role);

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_TRACE_WALK_H_
