// Cutting a trace into a smaller one that still stands on its own: `cltrace trim` (a seq range
// or one handle's calls, with a prelude that brings the handles alive at the cut into the state
// they had) and `cltrace reduce` (delta debugging down to the smallest trace that still shows
// one finding; cli/reduce.h). docs/trim.md describes what a cut keeps and what it cannot.
//
// The unit of cutting is a top-level call with everything nested in it (the callbacks the
// driver made inside a DDI call, the state-refresh DDI calls inside a callback): a cut keeps or
// drops whole units, so callbacks stay nested under their DDI call. A cut keeps the original
// seqs (a subsequence of the trace, written as a trace that is not a recording, so no position
// is a lost call), which makes a finding of the cut comparable with the original's by
// (rule, seq).
//
// Dependencies of a unit (TraceCutter::Close): for every handle its events name, the unit that
// began the handle's current lifetime (the checker's transition out of State::kNone; for
// handles no state machine follows, such as adapters, runtime and kernel handles, the latest
// unit that produced it as an output, else the latest create naming it, else its first
// appearance) and, in the faithful closure,
// every later state transition of that lifetime before the unit (a command list recycled or
// cached, a local handle opened) and, for a deferred context, every call made through it in
// that lifetime (its recordings: the local handles opened and closed in them); the size queries
// (CalcPrivate*Size, CheckDeferredContextHandleSizes) that the same thread made right before
// it; the Map an Unmap closes; the QueryBegin a QueryEnd ends. Transitively.
//
// Thread-safety: a TraceCutter is immutable after Build; its const methods may run
// concurrently.
//
// Example:
//   absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted("in.cltrace");
//   absl::StatusOr<std::unique_ptr<TraceCutter>> c = TraceCutter::Build(&*t);
//   absl::StatusOr<TrimResult> cut = Trim(**c, {.from = 500, .to = 900});
//   CLTRACE_RETURN_IF_ERROR(WriteCut(*t, cut->events, cut->notes, "out.cltrace", "cltrace trim"));
#ifndef CLTRACE_CLI_TRIM_H_
#define CLTRACE_CLI_TRIM_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "check/checker.h"
#include "format/event.h"
#include "format/load_trace.h"

namespace cltrace::cli {

// (rule, seq) of a finding: how a cut's findings are compared with the original's.
using FindingKey = std::pair<rules::Rule, uint64_t>;
std::set<FindingKey> FindingKeys(const check::CheckResult& result);

class TraceCutter {
 public:
  enum class Closure {
    kFaithful,  // every state transition of a handle's lifetime before its use (trim)
    kCreation,  // only the unit that began the lifetime (reduce: the checker judges the rest)
  };

  // Analyses `trace` (events sorted by seq, as LoadTrace delivers them; not owned, must outlive
  // the cutter): units, handle occurrences, and the checker's run over it (findings and
  // transitions). InvalidArgument when the checker rejects the events (unsorted, unknown call).
  static absl::StatusOr<std::unique_ptr<TraceCutter>> Build(const format::LoadedTrace* trace);

  const format::LoadedTrace& trace() const { return *trace_; }
  // The checker's verdict on the whole trace.
  const check::CheckResult& findings() const { return findings_; }
  const std::set<FindingKey>& finding_keys() const { return finding_keys_; }

  size_t unit_count() const { return unit_top_.size(); }
  // The unit holding the event entered at `seq`; -1 if no event has that seq.
  int64_t UnitOfSeq(uint64_t seq) const;
  // The first unit whose top-level call was entered at or after `seq` (unit_count() if none).
  size_t FirstUnitAtOrAfter(uint64_t seq) const;
  const format::Event& Top(size_t unit) const { return trace_->events[unit_top_[unit]]; }
  // Events of the unit (indices into trace().events), in seq order.
  absl::Span<const uint32_t> UnitEvents(size_t unit) const;
  // Handle ids the unit's events name (each once).
  std::vector<uint64_t> UnitHandles(size_t unit) const;
  // Units naming `handle`, ascending.
  absl::Span<const uint32_t> UnitsNaming(uint64_t handle) const;
  // The first unit of the lifetime of `handle` that `unit` sees (the unit itself when it begins
  // one); -1 when no unit at or before `unit` names the handle.
  int64_t LifetimeStart(uint64_t handle, size_t unit) const;
  // Whether `handle` is a device's immediate context (hDrvDevice).
  bool IsImmediateContext(uint64_t handle) const { return immediate_contexts_.count(handle) > 0; }

  // Adds to `keep` (one flag per unit) every unit the kept ones depend on, transitively.
  void Close(std::vector<bool>* keep, Closure mode) const;
  // The events of the kept units, in seq order (handle and string ids of trace()).
  std::vector<format::Event> Events(const std::vector<bool>& keep) const;
  // Sparse forms for small cuts of large traces: the closure of `units` (sorted, each once)
  // and the events of sorted `units` in seq order.
  std::vector<uint32_t> Closed(absl::Span<const uint32_t> units, Closure mode) const;
  std::vector<format::Event> EventsOf(absl::Span<const uint32_t> units) const;
  // Runs the checker over `events` (ids of trace()) with the options the original was judged
  // with.
  absl::StatusOr<check::CheckResult> Check(absl::Span<const format::Event> events) const;

 private:
  struct Transition {
    uint32_t unit;
    rules::State from;
    rules::State to;
    rules::HandleRole role;
  };
  explicit TraceCutter(const format::LoadedTrace* trace) : trace_(trace) {}
  void AddDependencies(size_t unit, Closure mode, std::vector<uint32_t>* out) const;
  // Build's steps, in order: units and their events; who names and produces each handle; the
  // checker's verdict and transitions; device runs (epochs); units creating each handle.
  void BuildUnits();
  void IndexHandles();
  absl::Status RunChecker();
  void BuildEpochs();
  void BuildCreating();

  const format::LoadedTrace* trace_;
  std::vector<uint32_t> unit_of_;       // by event index
  std::vector<uint32_t> unit_top_;      // by unit: the top-level event's index
  std::vector<uint32_t> unit_offsets_;  // CSR over unit_events_
  std::vector<uint32_t> unit_events_;
  std::vector<int64_t> prev_same_tid_;  // by unit: the unit before it on its thread, -1
  std::vector<int64_t> next_same_tid_;  // by unit: the unit after it on its thread, -1
  // By handle id: CalcDeferredContextHandleSize units asking for it (pICObject), ascending.
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> local_sizes_;
  absl::flat_hash_set<uint64_t> immediate_contexts_;  // hDrvDevice handles
  absl::flat_hash_set<uint64_t> deferred_contexts_;   // hDrvContext handles
  // By unit: the CreateDevice that began the run of devices it belongs to (made when no other
  // device was alive): handle values from before it, reused by a later run (a program that
  // recreates its device, traces concatenated), name other objects.
  std::vector<uint32_t> epoch_;
  std::vector<std::vector<uint32_t>> naming_;     // by handle id
  std::vector<std::vector<uint32_t>> producing_;  // by handle id: units with it as an output
  // By handle id: units naming it that begin some handle's lifetime (a create naming it).
  std::vector<std::vector<uint32_t>> creating_;
  std::vector<std::vector<Transition>> transitions_;  // by handle id, by unit
  check::CheckResult findings_;
  std::set<FindingKey> finding_keys_;
};

struct TrimOptions {
  std::optional<uint64_t> from;  // first seq of the window (default: the trace's first)
  std::optional<uint64_t> to;    // last seq of the window (default: the trace's last)
  // Keep only the calls naming this handle (a token as `cltrace check`/`dump` print it,
  // "0x7e0000009000"), and what they depend on.
  std::optional<std::string> handle;
};

struct TrimResult {
  std::vector<format::Event> events;  // the cut, seq order, ids of the input trace
  uint64_t window_calls = 0;          // calls of the window (or of the handle) kept
  uint64_t prelude_calls = 0;         // calls before the window brought in as its prelude
  // What could not be synthesized, one line each ("seq S: ..."); each is also an annotation on
  // the cut's event at that seq (`notes`).
  std::vector<std::string> unsynthesized;
  std::map<uint64_t, std::string> notes;  // seq -> annotation text to add
  // The checker's findings on the cut that the original did not report (each also in
  // `unsynthesized`).
  std::vector<check::Violation> new_findings;
};

// Cuts the window (and/or handle) out of the cutter's trace with the faithful closure, the
// pipeline state bound on each context alive at the cut, and a check of the cut: findings the
// original did not report are chased by bringing in the history of the handle they are about,
// and what remains is reported. InvalidArgument for a window holding no call, from > to, or a
// handle the trace does not name.
absl::StatusOr<TrimResult> Trim(const TraceCutter& cutter, const TrimOptions& options);

// Writes `events` (ids of `trace`) with the trace writer: chunked, indexed, ids re-interned,
// the input's timestamps, process description and timestamp unit; `notes` become annotations
// (after the event's own, "; "-separated). `writer_name` goes into the header ("cltrace trim").
absl::Status WriteCut(const format::LoadedTrace& trace, absl::Span<const format::Event> events,
                      const std::map<uint64_t, std::string>& notes, const std::string& path,
                      absl::string_view writer_name);

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_TRIM_H_
