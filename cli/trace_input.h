// Reading any trace file the CLI accepts (.cltrace or .jsonl, told apart by content) into
// memory through format::LoadTrace, keeping whatever was readable when the file turns out to
// be damaged.
//
// Thread-safety: plain functions over values.
//
// Example:
//   absl::StatusOr<TraceInput> in = ReadTrace("t.cltrace", /*salvage=*/false);
//   if (!in.ok()) return Fail(in.status());          // not a trace at all
//   for (const format::Event& e : in->events) ...    // everything readable, seq order
//   if (!in->error.ok()) ...                         // reading stopped early: say so, exit 2
#ifndef CLTRACE_CLI_TRACE_INPUT_H_
#define CLTRACE_CLI_TRACE_INPUT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "check/checker.h"
#include "cli/args.h"
#include "format/event.h"
#include "format/load_trace.h"
#include "format/seq_stream.h"
#include "format/trace.pb.h"
#include "format/trace_reader.h"

namespace cltrace::cli {

// The trace loader is format::LoadTrace (format/load_trace.h); these names keep the verbs
// short.
using TraceFormat = format::TraceFileFormat;
using TraceInput = format::LoadedTrace;

// "cltrace" / "JSONL".
inline absl::string_view FormatName(TraceFormat format) { return format::TraceFormatName(format); }

// Whether `path` names a directory (a trace path or an output path must not).
bool IsDirectory(const std::string& path);

// format::DetectTraceFormat.
inline absl::StatusOr<TraceFormat> DetectFormat(const std::string& path) {
  return format::DetectTraceFormat(path);
}

// format::LoadTrace with `salvage` (the verbs' --salvage).
absl::StatusOr<TraceInput> ReadTrace(const std::string& path, bool salvage);

// "cltrace VERB: WHAT: MESSAGE" on `err` (WHAT: the file or option at fault); returns
// kExitBadInput, the verb's exit code.
int FailVerb(std::ostream& err, absl::string_view verb, absl::string_view what,
             absl::string_view message);

// ReadTrace of verb `verb`'s input `path`: nothing (reported through FailVerb) when it is not
// a trace at all.
std::optional<TraceInput> ReadVerbTrace(absl::string_view verb, const std::string& path,
                                        bool salvage, std::ostream& err);

// When reading `in` stopped early (in.error): reports it through FailVerb after what the verb
// printed (`out` is flushed first), with `context` after the message, and returns true.
bool ReportedReadError(absl::string_view verb, const std::string& path, const TraceInput& in,
                       absl::string_view context, std::ostream& out, std::ostream& err);

// The common run of a verb on one trace: parses `args` by `spec` (ParseVerbArgs), reads the
// trace (the first positional argument, --salvage if given; ReadVerbTrace), runs `work` on the
// arguments and the trace, and reports where reading stopped early (ReportedReadError).
// Returns work's exit code, or the exit code of the parse or the read.
int RunVerbOnTrace(absl::string_view verb, const std::vector<std::string>& args,
                   const ArgSpec& spec, std::ostream& out, std::ostream& err,
                   const std::function<int(const ParsedArgs&, const TraceInput&)>& work);

// The exit code of a verb whose work on `in` (read from `path`) ended with `status`:
// kExitBadInput when reading stopped early (reported as ReportedReadError does, with
// `context`), else kExitProblems for a clean run over a trace --salvage had to skip data of.
int ExitAfterReading(absl::string_view verb, const std::string& path, const TraceInput& in,
                     absl::string_view context, int status, std::ostream& out, std::ostream& err);

// The streaming counterparts, for verbs that need not hold the trace: format::SeqStream of
// verb `verb`'s input `path` (nullptr, reported through FailVerb, when it is not a trace at
// all), and ReportedReadError / ExitAfterReading for a stream whose Next returned false.
std::unique_ptr<format::SeqStream> OpenVerbStream(absl::string_view verb, const std::string& path,
                                                  const format::SeqStreamOptions& options,
                                                  std::ostream& err);
bool ReportedStreamError(absl::string_view verb, const std::string& path,
                         const format::SeqStream& in, absl::string_view context, std::ostream& out,
                         std::ostream& err);
int ExitAfterStreaming(absl::string_view verb, const std::string& path, const format::SeqStream& in,
                       absl::string_view context, int status, std::ostream& out, std::ostream& err);

// A re-reader of the trace at `path` in seq order (check::TraceReplay), for analyses fed from
// a stream that must look ahead or back.
check::TraceReplay ReplayOf(const std::string& path, bool salvage);

// What a streaming verb does with its trace: `add` sees every event in seq order (after it
// fails, the rest of the trace is still read, without it: damage further on is reported
// first, as when the trace was loaded whole); `finish` gets add's first error (OK if none)
// and prints the result.
struct StreamWork {
  std::function<absl::Status(const format::Event&)> add;
  std::function<int(const absl::Status& add_error)> finish;
  // Optional: asked after every event; true stops reading there (the rest of the trace is
  // not read; `finish` follows).
  std::function<bool()> done = nullptr;
};

// RunVerbOnTrace for a verb that streams its trace (format::SeqStream): parses `args` by
// `spec` (which must have --salvage and --quiet), opens the trace, asks `start` for the work,
// feeds it with a progress bar on a terminal, and reports where reading stopped early after
// what `finish` printed. Returns finish's exit code, or the exit code of the parse or the
// open.
int StreamVerbOnTrace(
    absl::string_view verb, const std::vector<std::string>& args, const ArgSpec& spec,
    std::ostream& out, std::ostream& err,
    const std::function<StreamWork(const ParsedArgs&, const format::SeqStream&)>& start);

// Rewrites every handle id (kHandle fields, array elements included) and string id (kString
// fields and the annotation) of `event` through the given maps. Precondition:
// format::CheckEventLayout(*event).ok().
void RemapIds(format::Event* event, const std::function<uint64_t(uint64_t)>& handle,
              const std::function<uint64_t(uint64_t)>& string);

// A runtime callback (called by the driver) rather than a DDI entry point.
bool IsCallback(const format::Event& event);

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_TRACE_INPUT_H_
