// Test helpers for the trace format tests (format/*_test.cc) and the fuzz seeds: random events
// shaped by the catalog, in-memory writing and reading, chunk surgery with CRC repair.
//
// Thread-safety: none (test code).
#ifndef CLTRACE_FORMAT_INTERNAL_TRACE_TEST_UTIL_H_
#define CLTRACE_FORMAT_INTERNAL_TRACE_TEST_UTIL_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "ddi/catalog.h"
#include "format/chunk.h"
#include "format/crc32c.h"
#include "format/event.h"
#include "format/testing/trace_bytes.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"

namespace cltrace::format::testing {

// A value for one field, plausible for its kind. `handles` / `strings` are how many ids the
// writer has handed out (ids 0..n-1 are valid).
inline uint64_t RandomFieldValue(std::mt19937_64& rng, FieldKind kind, uint64_t handles,
                                 uint64_t strings) {
  auto pick = [&](uint64_t n) { return n == 0 ? 0 : rng() % n; };
  switch (kind) {
    case FieldKind::kI32:
    case FieldKind::kHresult:
      return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(rng())));
    case FieldKind::kI64:
      return rng() >> pick(64);
    case FieldKind::kU64:
    case FieldKind::kSize:
    case FieldKind::kPtr:
      return rng() >> pick(64);
    case FieldKind::kHandle:
      return pick(handles);
    case FieldKind::kString:
      return pick(strings);
    case FieldKind::kPresent:
    case FieldKind::kBool:
      return rng() & 1;
    case FieldKind::kArray:
      return pick(4);  // NULL, or 0..2 elements
    default:
      return static_cast<uint32_t>(rng()) >> pick(32);
  }
}

// The args of a call: fixed fields, then each array's elements (ddi/catalog_types.h).
inline void RandomArgs(std::mt19937_64& rng, const CallInfo& ci, uint64_t handles, uint64_t strings,
                       Event* e) {
  e->args.clear();
  auto fields = Fields(ci);
  for (const FieldInfo& f : fields)
    e->args.push_back(RandomFieldValue(rng, f.kind, handles, strings));
  // As every writer does: the members of a NULL structure pointer hold 0 (FORMAT.md §9.1).
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].kind != FieldKind::kPresent || e->args[i] != 0) continue;
    for (size_t k = i + 1; k <= i + fields[i].elem_count && k < fields.size(); ++k) e->args[k] = 0;
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].kind != FieldKind::kArray || e->args[i] == 0) continue;
    for (uint64_t n = 0; n + 1 < e->args[i]; ++n) {
      for (const FieldInfo& ef : ElementFields(fields[i])) {
        e->args.push_back(RandomFieldValue(rng, ef.kind, handles, strings));
      }
    }
  }
}

// A call event from `seq` to `end` with `args` (tid, timestamp, parent 0).
inline Event MakeCall(CallId call, uint64_t seq, uint64_t end,
                      std::initializer_list<uint64_t> args) {
  Event e;
  e.call = call;
  e.seq = seq;
  e.end = end;
  e.args = args;
  return e;
}

// DxgkDdiCreateDevice and two fields of its output pointer DXGKARG_CREATEDEVICE.pInfo: the
// pointer's presence and a member read through it (DmaBufferSize); -1 where the catalog lacks
// one.
struct CreateDeviceInfoFields {
  const CallInfo* call = nullptr;
  int present = -1;
  int size = -1;

  // A DxgkDdiCreateDevice call (seq 1 to 2) with every field 0.
  Event BlankEvent() const {
    Event e = MakeCall(IdOf(*call), 1, 2, {});
    e.args.assign(Fields(*call).size(), 0);
    return e;
  }
};

inline CreateDeviceInfoFields FindCreateDeviceInfo() {
  CreateDeviceInfoFields f;
  f.call = FindCall("DxgkDdiCreateDevice");
  if (f.call == nullptr) return f;
  f.present = FieldIndex(*f.call, "pInfo");
  f.size = FieldIndex(*f.call, "pInfo.DmaBufferSize");
  return f;
}

inline TraceWriter::Options TestOptions() {
  TraceWriter::Options o;
  o.background = false;
  o.start_unix_ns = 1700000000000000000;
  o.timestamp_unit_ns = 1;
  o.writer.set_name("cltrace-test");
  o.writer.set_version("1");
  return o;
}

// Offsets of every chunk header from the first chunk to the end (stops at the first thing
// that is not a whole chunk: the footer, a torn tail, garbage).
inline std::vector<uint64_t> ChunkOffsets(absl::string_view file) {
  std::vector<uint64_t> out;
  auto h = ParseFileHeader(file);
  if (!h.ok()) return out;
  uint64_t off = h->size;
  while (off < file.size()) {
    ChunkProbe probe;
    auto info = ParseChunkHeader(file.substr(off), off, &probe);
    if (!info.ok() || probe != ChunkProbe::kHeader) break;
    out.push_back(off);
    off += info->total_size();
  }
  return out;
}

// Recomputes the payload CRC and the header CRC of the (v1, 48-byte header) chunk at `off`, so
// that a deliberate change reaches the checks behind the CRCs.
inline void FixChunkCrcs(std::string* file, uint64_t off) {
  char* h = file->data() + off;
  const uint32_t stored = GetU32(h + 8);
  const uint64_t avail = file->size() - off - kChunkHeaderSize;
  const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(stored, avail));
  PutU32(h + 40, crc32c::Mask(crc32c::Value(h + kChunkHeaderSize, n)));
  PutU32(h + 44, crc32c::Mask(crc32c::Value(h, 44)));
}

}  // namespace cltrace::format::testing

#endif  // CLTRACE_FORMAT_INTERNAL_TRACE_TEST_UTIL_H_
