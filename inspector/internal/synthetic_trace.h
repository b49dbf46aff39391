// Synthetic traces for the inspector's tests and benchmarks: the small-command-list pattern of
// ddi-spec §4.4-§4.8 at any size. Per deferred context and cycle the DC thread opens a local
// resource, binds it and draws, then finishes — RecycleCommandList of the list released in the
// previous cycle, RecycleCreateCommandList into it (CreateCommandList the first time), the
// local close, RecycleCreateDeferredContext; the IC thread executes the list and releases it
// (RecycleDestroyCommandList). The checker finds nothing in it unless violations are injected.
//
// Thread-safety: plain functions.
//
// Example:
//   SyntheticTrace t = MakeSmallCommandListTrace({.calls = 1'000'000, .dcs = 4});
//   CLTRACE_RETURN_IF_ERROR(WriteCltrace(t, "/tmp/big.cltrace"));
#ifndef CLTRACE_INSPECTOR_INTERNAL_SYNTHETIC_TRACE_H_
#define CLTRACE_INSPECTOR_INTERNAL_SYNTHETIC_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "format/event.h"

namespace cltrace::inspector::testing {

struct SyntheticOptions {
  size_t calls = 1000;  // at least this many events (whole cycles)
  int dcs = 4;          // deferred contexts dc0..dcN-1, each with its list cl0.. and local lvb0..
  // Cycle of dc0 at which to misbehave (0 = never): the IC executes cl0 again after releasing
  // it (R40, an Execute in RecycleDestroyed), and in the next cycle dc0 recycle-creates cl0
  // without RecycleCommandList (R45: the illegal RD -> V transition).
  int violation_cycle = 0;
};

struct SyntheticTrace {
  std::vector<format::Event> events;  // by seq; every call returns before the next starts
  format::TokenTable handles;
  format::TokenTable strings;
  // Seqs worth asserting on.
  uint64_t first_create_cl0 = 0;  // dc0's CreateCommandList (cl0 becomes Valid)
  uint64_t first_recycle_destroy_cl0 = 0;
  uint64_t violation_execute = 0;         // the injected R40 execute (0 if none)
  uint64_t violation_recycle_create = 0;  // the injected R45 RecycleCreateCommandList
};

SyntheticTrace MakeSmallCommandListTrace(const SyntheticOptions& options);

// Writes `t` as a .cltrace file (TraceWriter defaults but `chunk_bytes`, synchronous).
// `chunk_bytes`: format::TraceWriter::Options::chunk_bytes (small values make many chunks).
absl::Status WriteCltrace(const SyntheticTrace& t, const std::string& path,
                          size_t chunk_bytes = size_t{1} << 20);

}  // namespace cltrace::inspector::testing

#endif  // CLTRACE_INSPECTOR_INTERNAL_SYNTHETIC_TRACE_H_
