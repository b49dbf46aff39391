// Test helper: the events a recorder produces for threads that run concurrently, taking their
// entry and exit positions from one shared counter, each thread's calls making nested
// callbacks, grouped the way the recorder writes them (runs of one thread's events in seq
// order). Used by the position-run tests (format/position_run_test.cc,
// format/trace_writer_test.cc).
//
// Thread-safety: none (test code).
#ifndef CLTRACE_FORMAT_INTERNAL_INTERLEAVED_RECORDING_H_
#define CLTRACE_FORMAT_INTERNAL_INTERLEAVED_RECORDING_H_

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "ddi/call_ids.h"
#include "format/event.h"

namespace cltrace::format::testing {

struct InterleavedOptions {
  int threads = 4;
  int calls_per_thread = 500;
  // Probability (in 1/100) that a call makes a nested callback, and that a callback makes a
  // nested DDI call of its own (two levels of nesting).
  int nested_percent = 40;
  int deep_percent = 20;
  // Calls left open at the end (end = 0: the process died inside them), per thread.
  bool leave_open = false;
  // Events per run (the recorder takes a thread's buffer in segments).
  size_t run_events = 200;
};

// A run: events of one thread, in seq order.
using ThreadRun = std::vector<Event>;

// Simulates `o.threads` threads interleaving step by step at random: each step, one thread
// takes the next position of its current call (entry, the entries and exits of nested calls,
// exit). The calls are Flush (arg hDevice) with StateOmRenderTargetsCb
// (hRuntimeDevice) callbacks, every handle id 1: valid for a writer that interned one handle.
inline std::vector<ThreadRun> InterleavedRecording(uint64_t seed, const InterleavedOptions& o) {
  std::mt19937_64 rng(seed);
  struct Frame {
    Event e;
  };
  struct Thread {
    uint32_t tid;
    int calls_left;
    std::vector<Frame> stack;
    std::vector<Event> done;
  };
  std::vector<Thread> threads;
  for (int i = 0; i < o.threads; ++i) {
    threads.push_back({static_cast<uint32_t>(4000 + 17 * i), o.calls_per_thread, {}, {}});
  }
  uint64_t counter = 0;
  int64_t ts = 0;
  auto open = [&](Thread& t, CallId call) {
    Event e;
    e.call = call;
    e.seq = ++counter;
    e.parent = t.stack.empty() ? 0 : t.stack.back().e.seq;
    e.tid = t.tid;
    e.timestamp_ns = ts;
    if (call == CallId::kFlush) {
      e.args = {1};  // hDevice
    } else {
      e.args = {1};  // hRuntimeDevice
    }
    t.stack.push_back({e});
  };
  while (true) {
    std::vector<Thread*> busy;
    for (Thread& t : threads) {
      if (t.calls_left > 0 || !t.stack.empty()) busy.push_back(&t);
    }
    if (busy.empty()) break;
    Thread& t = *busy[rng() % busy.size()];
    // Time moves in steps, as a recorder's derived timestamps do (one per poll).
    if (rng() % 256 == 0) ts += 1'000'000;
    const int r = static_cast<int>(rng() % 100);
    if (t.stack.empty()) {
      --t.calls_left;
      open(t, CallId::kFlush);
    } else if (t.stack.size() == 1 && r < o.nested_percent / 2) {
      open(t, CallId::kStateOmRenderTargetsCb);
    } else if (t.stack.size() == 2 && r < o.deep_percent / 2) {
      open(t, CallId::kFlush);
    } else {
      Event e = t.stack.back().e;
      t.stack.pop_back();
      e.end = ++counter;
      t.done.push_back(e);  // exit order, as a thread's buffer holds them
    }
  }
  if (o.leave_open) {
    // One more call per thread that never returns, with a callback inside it still open.
    for (Thread& t : threads) {
      open(t, CallId::kFlush);
      open(t, CallId::kStateOmRenderTargetsCb);
      for (; !t.stack.empty(); t.stack.pop_back()) t.done.push_back(t.stack.back().e);
    }
  }
  std::vector<ThreadRun> runs;
  for (Thread& t : threads) {
    for (size_t i = 0; i < t.done.size(); i += o.run_events) {
      ThreadRun run(
          t.done.begin() + static_cast<ptrdiff_t>(i),
          t.done.begin() + static_cast<ptrdiff_t>(std::min(t.done.size(), i + o.run_events)));
      std::sort(run.begin(), run.end(),
                [](const Event& a, const Event& b) { return a.seq < b.seq; });
      runs.push_back(std::move(run));
    }
  }
  // Runs of different threads alternate, as the recorder's passes over the buffers do.
  std::stable_sort(runs.begin(), runs.end(), [](const ThreadRun& a, const ThreadRun& b) {
    return a.front().seq < b.front().seq;
  });
  return runs;
}

}  // namespace cltrace::format::testing

#endif  // CLTRACE_FORMAT_INTERNAL_INTERLEAVED_RECORDING_H_
