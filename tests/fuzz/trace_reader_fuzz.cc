// libFuzzer target for the trace reader (format/trace_reader.h): any bytes, in normal and in
// salvage mode, iterated to the end plus a few random-access lookups. Must never crash, hang
// or allocate without bound; every failure must be a status.
//
// Most mutations break a CRC and stop at the first check, so each input is also run a second
// time with every CRC it can find repaired: that sends mutated sizes, zstd frames and packet
// bytes on to the checks behind the CRCs. Seeds (corpus/fuzz/trace_reader/) include traces
// with uncompressed chunks, whose payload mutations reach the packet decoder directly.
//
//   build-fuzz/bin/trace_reader_fuzz corpus/fuzz/trace_reader -max_total_time=120
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "format/chunk.h"
#include "format/crc32c.h"
#include "format/trace_reader.h"
#include "google/protobuf/stubs/logging.h"

namespace {

using cltrace::format::Event;
using cltrace::format::TraceReader;
namespace fmt = cltrace::format;

void ReadEverything(absl::string_view bytes, bool salvage) {
  TraceReader::Options options;
  options.salvage = salvage;
  auto reader = TraceReader::OpenBytes(bytes, options);
  if (!reader.ok()) return;
  TraceReader& r = **reader;
  Event e;
  uint64_t first_seq = 0, last_seq = 0, n = 0;
  while (r.Next(&e)) {
    if (n++ == 0) first_seq = e.seq;
    last_seq = e.seq;
    // Touch what a consumer would: the tokens of the tables.
    (void)r.handles().Token(e.args.empty() ? 0 : e.args[0]);
    (void)r.strings().Token(e.annotation);
    (void)r.contents().Token(e.content);
  }
  (void)r.status();
  (void)r.torn_tail();
  (void)r.stats();
  (void)r.index();
  (void)r.FindBySeq(first_seq);
  (void)r.FindBySeq(last_seq);
  (void)r.FindBySeq(first_seq + 1);
}

// Recomputes the file header CRC and, walking chunk by chunk, every chunk's CRCs.
std::string RepairCrcs(absl::string_view in) {
  std::string s(in);
  if (s.size() < fmt::kFilePrefixSize) return s;
  const uint64_t header_len = fmt::GetU32(s.data() + 12);
  uint64_t off = fmt::kFilePrefixSize + header_len;
  if (header_len > fmt::kMaxTraceHeaderSize || off + 4 > s.size()) return s;
  fmt::PutU32(s.data() + off, fmt::crc32c::Mask(fmt::crc32c::Value(s.data() + 8, off - 8)));
  off += 4;
  while (off + fmt::kChunkHeaderSize <= s.size()) {
    char* h = s.data() + off;
    if (fmt::GetU32(h) != fmt::kChunkMagic) break;
    const uint64_t header_size = fmt::GetU16(h + 6);
    if (header_size < fmt::kChunkHeaderSize || off + header_size > s.size()) break;
    const uint64_t stored = fmt::GetU32(h + 8);
    const uint64_t avail = s.size() - off - header_size;
    const uint64_t n = stored < avail ? stored : avail;
    fmt::PutU32(h + 40, fmt::crc32c::Mask(fmt::crc32c::Value(h + header_size, n)));
    fmt::PutU32(h + header_size - 4, fmt::crc32c::Mask(fmt::crc32c::Value(h, header_size - 4)));
    off += header_size + stored;
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // protobuf logs invalid UTF-8 in string fields to stderr; the reader reports it as DataLoss.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  ReadEverything(bytes, /*salvage=*/false);
  ReadEverything(bytes, /*salvage=*/true);
  std::string repaired = RepairCrcs(bytes);
  if (repaired != bytes) {
    ReadEverything(repaired, false);
    ReadEverything(repaired, true);
  }
  return 0;
}
