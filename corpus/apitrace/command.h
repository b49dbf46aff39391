// `cltrace-workload apitrace FILE [--strict] [--driver LIB]`: plays a real program's apitrace
// capture through the runtime model (corpus/apitrace/player.h).
//
// FILE is the text `apitrace dump` prints (with or without call numbers and --thread-ids; with
// --blobs, the blob files beside it), or a binary .trace, which is converted by running
// `apitrace dump --blobs --thread-ids=yes --color=never` (Debian's apitrace package) in a
// scratch directory. Without the apitrace tool a binary capture is a usage error that says how
// to install it.
//
// Output (stdout): "apitrace: played P of N calls on T threads", one line per call name the
// player did not play ("not played: NAME x COUNT (first at line L): REASON") and per substitute
// ("substituted: ..."), then every violation the runtime model and the reference driver
// reported, then "calls: C" (DDI calls and callbacks, as for every workload).
// Exit: 0 clean, 1 violations, 2 bad input (with its line and column) or usage, or with
// --strict a call the player does not implement.
//
// Thread-safety: called once from main.
#ifndef CLTRACE_CORPUS_APITRACE_COMMAND_H_
#define CLTRACE_CORPUS_APITRACE_COMMAND_H_

#include <string>
#include <vector>

namespace cltrace::apitrace {

// `args`: what follows "apitrace" on the command line.
int RunApitraceCommand(const std::vector<std::string>& args);

}  // namespace cltrace::apitrace

#endif  // CLTRACE_CORPUS_APITRACE_COMMAND_H_
