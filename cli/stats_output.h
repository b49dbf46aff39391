// `cltrace stats`'s front end: the printed report and the exit code. The statistics are
// check/stats.h.
//
// Thread-safety: stateless functions.
//
// Example:
//   int code = RunStats(trace.events, trace.handles, out, err);
#ifndef CLTRACE_CLI_STATS_OUTPUT_H_
#define CLTRACE_CLI_STATS_OUTPUT_H_

#include <ostream>

#include "absl/types/span.h"
#include "check/stats.h"
#include "format/event.h"

namespace cltrace::cli {

// Prints the report; kExitOk, or kExitBadInput on bad input.
int RunStats(absl::Span<const format::Event> events, const format::TokenTable& handles,
             std::ostream& out, std::ostream& err);

// Prints `stats` as RunStats does; kExitOk.
int PrintStats(const check::TraceStats& stats, std::ostream& out);

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_STATS_OUTPUT_H_
