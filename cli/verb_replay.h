// `cltrace replay` on the streaming seq-order reader (format::SeqStream): the trace is never
// held whole (replayer/replay.h ReplayStream), and --until stops reading after the last call
// it needs.
//
// Thread-safety: one replay per process at a time (replayer/replay.h).
#ifndef CLTRACE_CLI_VERB_REPLAY_H_
#define CLTRACE_CLI_VERB_REPLAY_H_

#include <ostream>
#include <string>

#include "format/seq_stream.h"
#include "replayer/replay.h"

namespace cltrace::cli {

// What the reader and the replayer held and read (for tests of the bounds).
struct ReplayStreamCounts {
  replay::StreamReplayStats replay;
  format::SeqStream::Stats stream;
};

// Replays the trace at `path` (--kernel recorded) and prints the report (--json: the JSON
// object) to `out`; returns the exit code of `cltrace replay`. `counts` may be null. A
// progress bar is drawn on standard error when it is a terminal, unless `quiet`
// (cli/progress.h).
int ReplayStreamed(const replay::ReplayOptions& options, const std::string& path, bool salvage,
                   bool json, std::ostream& out, std::ostream& err, ReplayStreamCounts* counts,
                   bool quiet = false);

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_VERB_REPLAY_H_
