// `cltrace export IN --chrome OUT.json`: a trace as Chrome trace-event JSON (the JSON Object
// Format that ui.perfetto.dev and chrome://tracing open), written as the trace streams by
// (cli/trace_walk.h), with RapidJSON's Writer.
//
// What it holds (docs/chrome.md has the details):
//   pid 1 "threads": one track per thread of the trace (tid = the trace's thread id), a
//     complete slice ("ph":"X", cat "ddi" or "callback") per call from entry to exit, named
//     TABLE::DDI ("DC::Draw", "IC::Flush", "CoreCb::SetErrorCb"), callbacks nested inside the
//     DDI call they were made in; args seq, end, parent, ret;
//   pid 2 "command lists", pid 3 "deferred contexts", pid 4 "local handles": one track per
//     lifetime (tid = its track number), a slice per validity state (the state names of
//     rules/state_machines.h, as `cltrace lifecycle` prints them), cat "state"; the final
//     state (Destroyed, CreateFailed) as an instant event;
//   findings of the checker as instant events ("ph":"i", cat "finding") on the offending
//     call's thread, named by the rule ("R40", "R71 warning"), with the message;
//   "metadata": the trace, the counts, and where its timestamps come from ("timestamps":
//     clock / derived / positions / none / unknown; "timestamps_derived": true when they are
//     not read from a clock per call).
// Times are microseconds (trace-event JSON's unit) from the trace's own timestamps.
//
// Thread-safety: single-threaded.
#ifndef CLTRACE_CLI_EXPORT_CHROME_H_
#define CLTRACE_CLI_EXPORT_CHROME_H_

#include <functional>
#include <ostream>

#include "absl/status/statusor.h"
#include "check/checker.h"
#include "cli/trace_walk.h"
#include "format/seq_stream.h"

namespace cltrace::cli {

// The pids of the tracks.
inline constexpr int kChromeThreadsPid = 1;
inline constexpr int kChromeCommandListsPid = 2;
inline constexpr int kChromeDeferredContextsPid = 3;
inline constexpr int kChromeLocalHandlesPid = 4;

// Writes the JSON of `in` (read from its current position to its end) to `out`. Errors as
// WalkTrace's; a write error of `out` is DataLoss. When reading stops early (in.status()) the
// JSON written is still complete and valid, with the calls read before.
absl::StatusOr<WalkSummary> ExportChrome(format::SeqStream& in, check::TraceReplay replay,
                                         const check::CheckOptions& options, std::ostream& out,
                                         const std::function<void()>& progress = {});

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_EXPORT_CHROME_H_
