// `cltrace reduce`: delta debugging (ddmin) of a trace down to the smallest cut that still shows
// one failure — a checker finding of one rule at the same call, or (with an oracle the caller
// gives, e.g. a replay into a driver) a divergence at the same call.
//
// Every candidate is a self-consistent cut (cli/trim.h): a set of units (top-level calls with
// what is nested in them) plus their creation closure (TraceCutter::Closure::kCreation), and it
// passes only if the checker reports nothing on it that the original did not report (by rule
// and seq) — so a candidate cannot show the rule for a reason the original did not have, and
// state transitions the finding needs stay because dropping them makes the checker complain.
// Cheap coarse steps come first: the closure of the failing call alone, then growing windows
// of calls before it, then whole threads; ddmin runs on what remains. Candidates are judged in
// process (no subprocess), each distinct closure once.
//
// Thread-safety: one reduction per thread (an oracle may serialise further, as replay does).
//
// Example:
//   absl::StatusOr<ReduceResult> r = ReduceToRule(cutter, rules::Rule::kR22);
//   if (r.ok()) WriteCut(cutter.trace(), r->events, {}, "small.cltrace", "cltrace reduce");
#ifndef CLTRACE_CLI_REDUCE_H_
#define CLTRACE_CLI_REDUCE_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "cli/trim.h"
#include "format/event.h"
#include "rules/rules.h"

namespace cltrace::cli {

// Whether a candidate (events of the cutter's trace, seq order) still fails. An error stops the
// reduction.
using ReduceOracle = std::function<absl::StatusOr<bool>(absl::Span<const format::Event>)>;

struct ReduceResult {
  std::vector<format::Event> events;  // the smallest failing cut found, seq order
  uint64_t calls_before = 0;
  uint64_t calls_after = 0;
  uint64_t target_seq = 0;  // the call the failure is at
  uint64_t tests = 0;       // candidates judged
};

// Reduces to the first finding of `rule` in the original (violation or warning, lowest seq):
// a candidate fails when the checker reports `rule` at that seq. NotFound when the original
// does not report the rule.
absl::StatusOr<ReduceResult> ReduceToRule(const TraceCutter& cutter, rules::Rule rule);

// Reduces to the failure at `target_seq` that `oracle` recognises (the checker's consistency
// condition applies too). FailedPrecondition when the whole trace does not fail.
absl::StatusOr<ReduceResult> Reduce(const TraceCutter& cutter, uint64_t target_seq,
                                    const ReduceOracle& oracle);

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_REDUCE_H_
