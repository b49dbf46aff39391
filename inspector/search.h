// Navigation over a model's calls without ImGui: go to a seq (Ctrl+G), find the next or
// previous call matching a text, function or handle (the calls filter's matching, one call at a
// time, incrementally so a 10 M-call trace never stalls a frame), and the call of one lifeline
// row nearest a seq (what a click on that row selects).
//
// Thread-safety: CallSearch is used by one thread; the functions are pure; the model is
// immutable.
//
// Example:
//   absl::StatusOr<int64_t> ev = GoToSeq(model, "12,345");     // the call entered at/before it
//   CallSearch s;
//   s.Start(model, {.text = "recycle"}, view.selected_event, /*backwards=*/false);
//   while (!s.Step(1 << 18)) {}
//   if (s.result() >= 0) view.SelectEvent(model, s.result());
#ifndef CLTRACE_INSPECTOR_SEARCH_H_
#define CLTRACE_INSPECTOR_SEARCH_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "inspector/call_filter.h"
#include "inspector/model.h"

namespace cltrace::inspector {

// Parses what the user typed into "go to seq": digits with optional thousands separators
// ("12,345", "12 345", "12'345") and surrounding blanks. InvalidArgument otherwise.
absl::StatusOr<uint64_t> ParseSeqInput(absl::string_view text);

// The call "go to seq `text`" selects: the call entered at that seq, else the last call entered
// before it (the call the position belongs to: an exit position or a nested callback's).
// InvalidArgument for text that is not a seq or a seq outside [first_seq, end_seq) of the trace
// (the message names the trace's range).
absl::StatusOr<int64_t> GoToSeq(const TraceModel& model, absl::string_view text);

// Find next / previous: examines calls after (or before) `from` one at a time, wrapping around
// the trace once, until one matches `spec` (CallFilter's matching: function, thread, handle,
// case-insensitive text in the name, tokens or arguments).
class CallSearch {
 public:
  // `from`: the event index to start after (before, if backwards); -1 starts at the first
  // (last) call. An empty spec matches nothing (there is nothing to find).
  void Start(const TraceModel& model, const CallFilterSpec& spec, int64_t from, bool backwards);
  // Examines up to `max_events` more calls; returns done().
  bool Step(size_t max_events);
  bool done() const { return done_; }
  // The matching event index once done(), or -1 if no call matches.
  int64_t result() const { return result_; }
  // The match was found only after wrapping past the end (the start, if backwards).
  bool wrapped() const { return wrapped_; }
  // Calls examined so far, for a progress bar.
  size_t examined() const { return examined_; }

 private:
  CallFilter filter_;
  size_t n_ = 0;
  int64_t next_ = 0;
  bool backwards_ = false;
  bool wrapped_ = false;
  bool done_ = true;
  size_t examined_ = 0;
  int64_t result_ = -1;
};

// Runs a CallSearch to its end.
int64_t FindCall(const TraceModel& model, const CallFilterSpec& spec, int64_t from, bool backwards);

// True if event `event` is a call on the handle of `row`: one of its handle fields is the
// row's handle, and for a local handle's row also its deferred context (a local token can be
// reused on another DC, whose calls belong to that DC's row).
bool CallIsOnRow(const TraceModel& model, int row, size_t event);

// The call on `row`'s handle (CallIsOnRow) whose entry seq is nearest `seq` (the earlier one on a
// tie), or -1 if the handle has no call in the trace. The row's state changes around `seq`
// (calls on its handle) bound the search; between them at most `max_scan` calls on each side
// are examined (each decoded), beyond which the nearest state change stands for the nearest
// call — so a click inside a span of millions of calls stays quick.
int64_t NearestCallOnRow(const TraceModel& model, int row, double seq,
                         size_t max_scan = size_t{1} << 16);

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_SEARCH_H_
