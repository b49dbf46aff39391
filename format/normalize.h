// Trace normalisation: rewrites a trace so that two recordings of one deterministic program
// are the same bytes, whatever the process's address layout, thread ids, clock and pid.
//
// A recording differs from run to run in what the call sequence does not determine:
//   - addresses: handle tokens are the values the process saw (driver-private memory,
//     "0x55d0c3a01230") and pointer fields (FieldKind::kPtr: table pointers, pICObject,
//     pSysMemUP...) hold raw addresses, both moved by ASLR;
//   - thread ids (the kernel's tids), timestamps, the pid, the start time, absolute paths
//     in the header (executable, argv, driver);
//   - the file layout: which chunk holds which event follows the recorder's drain timing.
// NormalizeTrace keeps every event (seq, end, parent, call, ret, args other than addresses,
// content, annotation) and replaces the rest with values derived from the call sequence:
//   - every value above 0xffffffff that is a handle token ("0x<hex>") or a kPtr field is an
//     address: renumbered by first appearance in seq order (fields in event order) to
//     kNormalizedAddressBase + n * kNormalizedAddressStride, one map for tokens and pointers
//     (so a pointer field that names a handle, such as pICObject, still names it). Values
//     that fit 32 bits (D3DKMT kernel handles, which the kernel model numbers itself, NULL)
//     and hand-written tokens ("cl1") are kept. "0x<hex>" addresses inside strings
//     (annotations: the recorder's table-rewrite notes print slots and handles) go through
//     the same map;
//   - thread ids: renumbered 1, 2, ... by first appearance in seq order;
//   - timestamps: seq * the header's timestamp unit (one unit per position); the writer's
//     timestamp source (WriterInfo.timestamps) is cleared;
//   - header: pid 0, start time 0, absolute paths in executable/argv/driver cut to their
//     base name; writer, catalog and timestamp unit kept;
//   - layout: events written in seq order (format version 2 input: as position runs of
//     consecutive same-thread events; version 1 input: plain), definitions interned in order
//     of first use, single-threaded writer, default chunk size and compression.
// The output of a normalised trace is the trace itself (idempotent).
//
// Thread-safety: stateless; any number of calls may run concurrently.
//
// Example:
//   absl::Status s = NormalizeTraceFile("raw.cltrace", "corpus/traces/scene.cltrace");
#ifndef CLTRACE_FORMAT_NORMALIZE_H_
#define CLTRACE_FORMAT_NORMALIZE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "format/load_trace.h"
#include "format/trace_reader.h"

namespace cltrace::format {

inline constexpr uint64_t kNormalizedAddressBase = 0x7e0000000000;
inline constexpr uint64_t kNormalizedAddressStride = 0x1000;

// Normalises a loaded trace (events sorted by seq, as ReadAllSorted returns them) and returns
// the bytes of the normalised .cltrace file. InvalidArgument if an event cannot be written
// (e.g. args that do not fit the catalog), naming its seq.
absl::StatusOr<std::string> NormalizeTrace(const LoadedTrace& trace);

// Reads `in_path` (a .cltrace) and writes the normalised trace to `out_path` (replaced only
// once complete). Corruption is the reader's error (naming the offset); a torn tail is
// FailedPrecondition (a normalised file would hide the tear).
absl::Status NormalizeTraceFile(const std::string& in_path, const std::string& out_path);

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_NORMALIZE_H_
