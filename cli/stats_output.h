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

// `stats --json`: the same figures as one JSON object (calls, command_lists{created,
// recycle_created, recycle_create_failures, recycle_hit_rate, recycle_destroyed, destroyed,
// create_failures}, finishes, failed_finishes, abandons, recycled_per_finish{mean,
// histogram}, executions{ic, nested, per_command_list}, alive[], peak, callbacks[]); kExitOk.
int PrintStatsJson(const check::TraceStats& stats, std::ostream& out);

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_STATS_OUTPUT_H_
