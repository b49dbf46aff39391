// Two traces compared call by call, aligned per thread: `cltrace diff A B` and the inspector's
// side-by-side view (both front ends use this one alignment; it lives in format/ so that the
// inspector's model, which may not include cli/, can use it).
//
// Alignment: threads are numbered by first appearance in each trace (seq order) and thread N
// of A is compared with thread N of B, call by call in order, so two runs whose threads
// interleave differently still compare equal. Two calls are the same when they have the same
// function, return value, nesting (top level, or made inside the same call of the thread),
// content bytes and arguments, where
//   - handles are compared by identity, not by value: the first time a handle of A meets a
//     handle of B they are paired, and from then on each must meet the other (a destroy call
//     ends the pairing, so an address the allocator reuses can pair anew);
//   - pointer fields (kPtr) above 0xffffffff are addresses: only that both are non-NULL;
//   - seq, end and timestamps are not compared (positions follow the interleaving).
// The traces are read as streams (SeqStream); memory holds the calls one trace has
// read ahead of the other on a thread, and the handle pairs.
//
// Output: the first difference with the calls before it on that thread (context) and both
// calls in normalised JSONL (format/stable_names.h names: cl#3, thread numbers), or with
// `all` one line per differing call and a summary. With `json`, one JSON object.
//
// Thread-safety: single-threaded.
#ifndef CLTRACE_FORMAT_TRACE_DIFF_H_
#define CLTRACE_FORMAT_TRACE_DIFF_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "format/seq_stream.h"

namespace cltrace::format {

struct DiffOptions {
  bool all = false;          // every difference, not just the first
  bool json = false;         // one JSON object instead of text
  size_t context = 3;        // calls of the thread shown before the first difference
  size_t max_listed = 1000;  // --all: differences listed (all are counted)
};

struct DiffSummary {
  uint64_t calls_a = 0;
  uint64_t calls_b = 0;
  uint64_t threads_a = 0;
  uint64_t threads_b = 0;
  uint64_t differences = 0;  // differing calls (a call one trace lacks counts once)
  // The first difference: the thread number, the call's index on the thread (1-based), and
  // its seq in each trace (0 where that trace has no such call).
  uint32_t first_thread = 0;
  uint64_t first_index = 0;
  uint64_t first_seq_a = 0;
  uint64_t first_seq_b = 0;
  std::string first_what;

  bool equal() const { return differences == 0; }
};

// Compares `a` and `b` (read to their ends) and writes the report to `out`. Errors: the
// streams' reading errors (which trace in the message is the caller's: check a.status() and
// b.status()), as FailedPrecondition; events that do not fit the catalog as InvalidArgument.
absl::StatusOr<DiffSummary> DiffTraces(SeqStream& a, SeqStream& b, const DiffOptions& options,
                                       std::ostream& out);

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_TRACE_DIFF_H_
