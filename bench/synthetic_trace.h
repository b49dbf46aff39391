// A large trace of a given shape, for benchmarks and measurements at scale: a recorded trace
// (by default the golden corpus's smallcl.cltrace: 4 threads recording small command lists)
// repeated until it holds `calls` calls, positions shifted by the source's highest position per
// repetition so they stay dense, written the way the recorder writes (each thread's calls in
// runs of `run_events`, every thread's pending run written at least every `flush_events`
// calls, position runs, zstd 3, 1 MiB chunks, an index): chunks overlap as a recording's do,
// including the long-range overlap of a thread that makes few calls.
//
// Thread-safety: plain functions.
//
// Example:
//   absl::Status s = WriteRepeatedTrace(source, "/tmp/big.cltrace", 10'000'000);
#ifndef CLTRACE_BENCH_SYNTHETIC_TRACE_H_
#define CLTRACE_BENCH_SYNTHETIC_TRACE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "format/event_codec.h"
#include "format/load_trace.h"
#include "format/trace_writer.h"

namespace cltrace::bench {

struct RepeatOptions {
  size_t run_events = 4096;
  uint64_t flush_events = uint64_t{1} << 20;
};

inline absl::Status WriteRepeatedTrace(const std::string& source, const std::string& out,
                                       uint64_t calls, const RepeatOptions& o = {}) {
  absl::StatusOr<format::LoadedTrace> in = format::ReadAllSorted(source);
  if (!in.ok()) return in.status();
  if (in->events.empty()) return absl::InvalidArgumentError("the source trace holds no call");
  uint64_t span = 0;
  for (const format::Event& e : in->events) span = std::max({span, e.seq, e.end});
  format::TraceWriter::Options wo;
  wo.position_runs = true;
  wo.index_definitions = true;
  wo.background = true;
  wo.writer.set_name("cltrace-recorder");
  wo.writer.set_version("synthetic");
  wo.start_unix_ns = 0;
  absl::StatusOr<std::unique_ptr<format::TraceWriter>> w = format::TraceWriter::Open(out, wo);
  if (!w.ok()) return w.status();
  format::TraceWriter& writer = **w;
  std::vector<uint64_t> handles{0}, strings{0}, contents{0};
  for (size_t id = 1; id < in->handles.size(); ++id)
    handles.push_back(writer.InternHandleToken(in->handles.Token(id)));
  for (size_t id = 1; id < in->strings.size(); ++id)
    strings.push_back(writer.InternString(in->strings.Token(id)));
  for (size_t id = 1; id < in->contents.size(); ++id)
    contents.push_back(writer.InternContent(in->contents.Token(id)));
  // The source's events with the writer's ids.
  std::vector<format::Event> base = in->events;
  for (format::Event& e : base) {
    format::VisitArgKinds(format::LayoutOf(e.call),
                          absl::MakeConstSpan(e.args.data(), e.args.size()),
                          [&](size_t i, format::FieldKind kind) {
                            if (kind == format::FieldKind::kHandle && e.args[i] < handles.size())
                              e.args[i] = handles[e.args[i]];
                            if (kind == format::FieldKind::kString && e.args[i] < strings.size())
                              e.args[i] = strings[e.args[i]];
                          });
    if (e.annotation < strings.size()) e.annotation = strings[e.annotation];
    if (e.content < contents.size()) e.content = static_cast<uint32_t>(contents[e.content]);
  }
  const int64_t duration = base.back().timestamp_ns - base.front().timestamp_ns + 1000;
  std::map<uint32_t, std::vector<format::Event>> pending;  // per thread
  absl::Status status;
  auto write = [&](std::vector<format::Event>& run) {
    if (!run.empty() && status.ok()) status = writer.AppendRun(run);
    run.clear();
  };
  uint64_t n = 0;
  for (uint64_t rep = 0; n < calls; ++rep) {
    for (const format::Event& b : base) {
      if (n == calls) break;
      format::Event e = b;
      const uint64_t shift = rep * span;
      e.seq += shift;
      if (e.end != 0) e.end += shift;
      if (e.parent != 0) e.parent += shift;
      e.timestamp_ns += static_cast<int64_t>(rep) * duration;
      std::vector<format::Event>& run = pending[e.tid];
      run.push_back(std::move(e));
      if (run.size() >= o.run_events) write(run);
      if (++n % o.flush_events == 0) {
        for (auto& [tid, r] : pending) write(r);
      }
    }
  }
  for (auto& [tid, r] : pending) write(r);
  absl::Status closed = writer.Close();
  return status.ok() ? closed : status;
}

}  // namespace cltrace::bench

#endif  // CLTRACE_BENCH_SYNTHETIC_TRACE_H_
