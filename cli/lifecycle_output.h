// `cltrace lifecycle`'s front end: its options, the printed timelines and the exit code. The
// analysis is check/lifecycle.h.
//
// Thread-safety: stateless functions.
//
// Example:
//   LifecycleOptions options;
//   options.handle = "cl1";
//   int code = RunLifecycle(options, trace.events, trace.handles, out, err);
#ifndef CLTRACE_CLI_LIFECYCLE_OUTPUT_H_
#define CLTRACE_CLI_LIFECYCLE_OUTPUT_H_

#include <cstdio>
#include <ostream>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "check/checker.h"
#include "check/lifecycle.h"
#include "check/states.h"
#include "cli/args.h"
#include "format/event.h"

namespace cltrace::cli {

// `cltrace lifecycle FILE [--handle H]`.
struct LifecycleOptions {
  std::string handle;  // token; empty = every handle
  check::CheckOptions check;
};

// The verb's arguments: FILE, --handle H, --salvage.
ArgSpec LifecycleArgSpec(const char* usage);

// Prints a readable timeline (check::FormatLifetime per lifetime). With a handle, only
// lifetimes of that handle and the local handles standing for it. Exit codes: kExitOk,
// kExitBadInput on bad input (or an unknown --handle).
int RunLifecycle(const LifecycleOptions& options, absl::Span<const format::Event> events,
                 const format::TokenTable& handles, std::ostream& out, std::ostream& err);

// The handle id of options.handle (0 for every handle); NotFound with the verb's message
// ("cltrace lifecycle: no handle ...") when the trace has no such handle.
absl::StatusOr<uint64_t> LifecycleHandle(const LifecycleOptions& options,
                                         const format::TokenTable& handles);

// Prints `lifecycle` as RunLifecycle does (only handle `want`'s lifetimes unless 0); kExitOk.
int PrintLifecycle(const check::Lifecycle& lifecycle, uint64_t want,
                   const format::TokenTable& handles, std::ostream& out);

// Handles alive (issue #17 item 7): a lifetime is alive in every state but kNone, kDestroyed,
// kCreateFailed, kRecycleDestroyed (the application destroyed the command list; the driver
// keeps it for recycling), kRecycleCreateFailed (ddi-spec T7e: X', the runtime need not
// destroy it) and kClosedLocal.
bool IsLiveState(check::State state);

// One live handle as a line (no newline), shared by `lifecycle --at` and check's leak summary:
//   CommandList 0x7e...1000 #3 Valid since seq=120 by CreateCommandList (owner DC 0x...)
std::string FormatLiveHandle(const check::TransitionEvent& last, const format::TokenTable& handles);

// `lifecycle --at SEQ`: every lifetime (handle `want`'s only unless 0) alive at `seq` with
// the state it is in there, then "# N handles alive at seq S"; kExitOk.
int PrintLiveAt(const check::Lifecycle& lifecycle, uint64_t seq, uint64_t want,
                const format::TokenTable& handles, std::ostream& out);

// The handles alive after the last call, fed the checker's transitions (check's leak summary).
class LiveHandles : public check::TransitionObserver {
 public:
  void OnTransition(const check::TransitionEvent& t) override;
  // Lines "leak: <FormatLiveHandle>" by first seq, then "# N handles alive at the end of the
  // trace (not a violation)"; nothing when none is.
  void PrintLeaks(const format::TokenTable& handles, std::ostream& out) const;

 private:
  // (role, lifetime) -> the transition into its current state.
  absl::flat_hash_map<std::pair<int, uint32_t>, check::TransitionEvent> live_;
};

// `lifecycle --json`: the same lifetimes as one JSON object: calls, lifetimes[] (role,
// handle, lifetime, owner_dc / for, dc, recording, intervals[] of state, from, to (null:
// the end of the trace), by ("DC::Draw"; null: before the trace), owner_dc), shown; kExitOk.
int PrintLifecycleJson(const check::Lifecycle& lifecycle, uint64_t want,
                       const format::TokenTable& handles, std::ostream& out);
// Whether `lifecycle --json` (and the text) shows `l`: every lifetime but IC objects, or
// with a handle `want` its lifetimes and those of the local handles standing for it.
bool LifecycleJsonShown(const check::Lifetime& l, uint64_t want);

// PrintLifecycleJson for lifetimes handed on one by one as they end (a streaming
// check::LifecycleBuilder's sink): the document begins with the call count, known only at
// the end, so the lifetimes' JSON waits in a temporary file (in memory when none can be
// made), not the lifetimes. The same bytes as PrintLifecycleJson.
class LifecycleJsonStream {
 public:
  explicit LifecycleJsonStream(const format::TokenTable& handles);
  ~LifecycleJsonStream();
  LifecycleJsonStream(const LifecycleJsonStream&) = delete;
  LifecycleJsonStream& operator=(const LifecycleJsonStream&) = delete;
  // Adds `l` (shown: the caller selects).
  void Add(const check::Lifetime& l);
  // Adds a lifetime streamed out of a check::LifecycleBuilder (its intervals read back in
  // pieces); an error when its temporary file failed.
  absl::Status Add(const check::StreamedLifetime& l);
  // Writes the document; kExitOk, or kExitBadInput when the temporary file failed.
  int Finish(uint64_t calls, std::ostream& out);

 private:
  void Put(absl::string_view s);
  const format::TokenTable& handles_;
  std::FILE* spill_;
  std::string held_;
  uint64_t shown_ = 0;
  bool spill_failed_ = false;
};

// Writes `l`'s timeline as check::FormatLifetime does, line by line (its intervals are not
// all in memory); an error when the builder's temporary file failed.
absl::Status WriteLifetime(const check::StreamedLifetime& l, const format::TokenTable& handles,
                           std::ostream& out);

// `cltrace lifecycle`'s streaming builder: finished intervals held in memory before they go
// to a temporary file (tests make it tiny), and what the last run counted.
struct LifecycleSpillCounters {
  size_t interval_budget = check::LifecycleBuilder::kDefaultIntervalBudget;
  size_t most_intervals_held = 0;  // set by each run
  uint64_t intervals_spilled = 0;  // set by each run
};
LifecycleSpillCounters& LifecycleSpillForTesting();

// `lifecycle --at SEQ` fed the checker's transitions up to SEQ (TransitionObserver): what
// each lifetime not over is in, nothing of the lifetimes that ended (memory: the handles
// alive, not the trace). Print writes what PrintLiveAt writes for the whole trace.
class LiveAt : public check::TransitionObserver {
 public:
  void OnTransition(const check::TransitionEvent& t) override;
  void OnLocalEnded(uint32_t lifetime, uint64_t seq) override;
  bool WantsEndings() const override { return true; }
  // Lifetimes held (for tests).
  size_t held() const { return current_.size(); }
  int Print(uint64_t seq, uint64_t want, const format::TokenTable& handles,
            std::ostream& out) const;

 private:
  struct Current {
    uint64_t order = 0;  // by first transition
    check::TransitionEvent last;
  };
  absl::flat_hash_map<std::pair<int, uint32_t>, Current> current_;
  uint64_t next_order_ = 0;
};

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_LIFECYCLE_OUTPUT_H_
