#include "format/trace_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "ddi/catalog.h"
#include "format/catalog_migration.h"
#include "format/chunk.h"
#include "format/event_codec.h"
#include "format/internal/errno_status.h"
#include "format/status_macros.h"

namespace cltrace::format {
namespace {

using internal::ErrnoStatus;

// Salvage: most placeholder ids a skipped byte may account for (see ApplyDefinition).
constexpr uint64_t kIdsPerSkippedByte = 16;

// A definition's value as an error message shows it: contents can be megabytes.
absl::string_view Excerpt(absl::string_view v) { return v.substr(0, 64); }

// The bytes of a file: mapped read-only when possible, else read into memory.
class FileBytes {
 public:
  ~FileBytes() {
    if (map_ != nullptr) munmap(map_, size_);
  }
  static absl::StatusOr<std::unique_ptr<FileBytes>> Open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
    auto fb = std::make_unique<FileBytes>();
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (m != MAP_FAILED) {
        fb->map_ = m;
        fb->size_ = static_cast<size_t>(st.st_size);
        ::close(fd);
        return fb;
      }
    }
    char buf[1 << 16];
    while (true) {
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd);
        return ErrnoStatus(err, "cannot read", path);
      }
      if (n == 0) break;
      fb->owned_.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return fb;
  }
  absl::string_view bytes() const {
    return map_ != nullptr ? absl::string_view(static_cast<const char*>(map_), size_)
                           : absl::string_view(owned_);
  }
  // The bytes [begin, end) were read and will likely not be again: a mapping gives their
  // whole pages back (a later read maps them in again from the file), so that a pass over a
  // large trace holds the chunks it is reading, not every page it read.
  void Release(uint64_t begin, uint64_t end) {
    if (map_ == nullptr) return;
    static const uint64_t kPage = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    end = std::min<uint64_t>(end, size_);
    const uint64_t first = (begin + kPage - 1) / kPage * kPage;
    const uint64_t last = end / kPage * kPage;
    if (first >= last) return;
    (void)madvise(static_cast<char*>(map_) + first, last - first, MADV_DONTNEED);
  }

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
  std::string owned_;
};

bool AllZero(absl::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == 0; });
}

}  // namespace

class TraceReader::Impl {
 public:
  Impl(absl::string_view data, std::unique_ptr<FileBytes> owner, Options options)
      : data_(data), owner_(std::move(owner)), opts_(options) {}

  absl::Status Init() {
    stats_.file_size = data_.size();
    auto parsed = ParseFileHeader(data_);
    if (!parsed.ok()) return parsed.status();
    header_ = std::move(parsed->header);
    if (absl::Status st = CheckCatalogVersion(header_.catalog_version()); !st.ok()) return st;
    first_chunk_ = pos_ = parsed->size;
    call_map_ = BuildCallMap(header_);
    LoadIndex();
    return absl::OkStatus();
  }

  const proto::TraceHeader& header() const { return header_; }
  const absl::Status& status() const { return status_; }
  int64_t torn_tail() const { return torn_; }
  const TokenTable& handles() const { return handles_; }
  const TokenTable& strings() const { return strings_; }
  const TokenTable& contents() const { return contents_; }
  const Stats& stats() const { return stats_; }
  uint64_t position() const { return pos_; }
  const proto::TraceIndex* index() const { return index_ ? &*index_ : nullptr; }

  bool Next(Event* e) {
    while (!done_) {
      if (!in_chunk_) {
        if (single_) return false;
        LoadNextChunk();
        continue;
      }
      DecodedPacket p;
      absl::Status st = dec_.Next(e, &p);
      if (!st.ok()) {
        InChunkCorruption(absl::DataLossError(ChunkContext(st.message())));
        continue;
      }
      switch (p.kind) {
        case PacketKind::kEnd:
          FinishChunk();
          continue;
        case PacketKind::kHandleDef:
        case PacketKind::kStringDef:
        case PacketKind::kContentDef:
          if (mode_ != ChunkReadMode::kEvents) ApplyDefinition(p);
          continue;
        case PacketKind::kUnknown:
          continue;
        case PacketKind::kCall:
          if (mode_ == ChunkReadMode::kDefinitions) continue;
          MigrateEvent(header_.catalog_version(), e);
          if (CheckEvent(*e, p)) {
            ++stats_.events;
            return true;
          }
          continue;
      }
    }
    return false;
  }

  absl::Status ScanChunks(std::vector<ChunkSpan>* chunks) {
    uint64_t off = first_chunk_;
    uint64_t ordinal = 0;
    // Touching a chunk header maps the pages around it in too (the kernel's fault-around):
    // over chunks of tens of KB the walk alone would map the whole file. The walked range is
    // given back every 256 KiB, so the walk holds that much of the file, not all of it.
    constexpr uint64_t kReleaseStep = uint64_t{256} << 10;
    uint64_t released = 0;
    auto release = [&] {
      if (owner_ != nullptr) owner_->Release(released, off);
      released = off;
    };
    absl::Cleanup release_rest = [&] { release(); };
    while (off < data_.size()) {
      if (off - released >= kReleaseStep) release();
      absl::string_view rest = data_.substr(off);
      if (IsTrailerAt(off)) {
        if (rest.size() < kFooterSize) torn_ = static_cast<int64_t>(off);
        break;
      }
      ChunkProbe probe;
      absl::StatusOr<ChunkInfo> info = ParseChunkHeader(rest, off, &probe);
      if (!info.ok()) {
        if (AllZero(rest)) {
          torn_ = static_cast<int64_t>(off);
          break;
        }
        absl::Status st =
            absl::DataLossError(absl::StrFormat("chunk %d: %s", ordinal, info.status().message()));
        if (!opts_.salvage) return st;
        ++stats_.corrupt_chunks_skipped;
        ++ordinal;
        off = ResyncFrom(off + 1, /*count=*/true);
        last_index_offset_.reset();
        continue;
      }
      if (probe == ChunkProbe::kTorn) {
        torn_ = static_cast<int64_t>(off);
        break;
      }
      const uint64_t next = off + info->total_size();
      if (info->type == ChunkType::kEvents) {
        chunks->push_back({off, ordinal, info->min_seq, info->max_seq, info->event_count});
        last_index_offset_.reset();
      } else if (info->type == ChunkType::kIndex) {
        last_index_offset_ = off;
        after_index_end_ = next;
      } else if (info->flags & kFlagIgnorable) {
        last_index_offset_.reset();
      } else {
        absl::Status st = absl::DataLossError(
            absl::StrFormat("chunk %d at offset %d: unknown chunk type %d (not marked ignorable)",
                            ordinal, off, static_cast<int>(info->type)));
        if (!opts_.salvage) return st;
        ++stats_.corrupt_chunks_skipped;
        stats_.bytes_skipped += next - off;
        last_index_offset_.reset();
      }
      ++ordinal;
      off = next;
    }
    return absl::OkStatus();
  }

  absl::Status ReadChunk(const ChunkSpan& chunk, ChunkReadMode mode, std::vector<Event>* events) {
    pos_ = chunk.offset;
    chunk_index_ = chunk.ordinal;
    done_ = in_chunk_ = false;
    status_ = absl::OkStatus();
    mode_ = mode;
    single_ = true;
    last_index_offset_.reset();
    LoadNextChunk();
    Event e;
    while (Next(&e)) {
      InferOutputPointerPresence(&e);
      events->push_back(std::move(e));
    }
    single_ = false;
    mode_ = ChunkReadMode::kAll;
    if (owner_ != nullptr) owner_->Release(chunk.offset, pos_);
    return status_;
  }

  absl::StatusOr<Event> FindBySeq(uint64_t seq) {
    if (index_) {
      for (const proto::ChunkIndexEntry& c : index_->chunks()) {
        if (c.events() == 0 || seq < c.min_seq() || seq > c.max_seq()) continue;
        absl::StatusOr<Event> r = FindInChunkAt(c.offset(), seq);
        if (r.ok() || !absl::IsNotFound(r.status())) return r;
      }
      return NotFoundSeq(seq);
    }
    // No index: walk the chunk headers, decompressing only chunks whose seq range fits.
    uint64_t off = first_chunk_;
    while (off < data_.size()) {
      absl::string_view rest = data_.substr(off);
      ChunkProbe probe;
      absl::StatusOr<ChunkInfo> info = ParseChunkHeader(rest, off, &probe);
      if (!info.ok()) {
        if (IsTrailerAt(off) || AllZero(rest)) break;
        if (!opts_.salvage) return info.status();
        off = ResyncFrom(off + 1, /*count=*/false);
        continue;
      }
      if (probe == ChunkProbe::kTorn) break;
      if (info->type == ChunkType::kEvents && info->event_count > 0 && info->min_seq <= seq &&
          seq <= info->max_seq) {
        absl::StatusOr<Event> r = FindInChunkAt(off, seq);
        if (r.ok()) return r;
        if (!absl::IsNotFound(r.status()) && !opts_.salvage) return r.status();
      }
      off += info->total_size();
    }
    return NotFoundSeq(seq);
  }

 private:
  std::string ChunkContext(absl::string_view what) const {
    return absl::StrFormat("chunk %d at offset %d: %s", chunk_index_, cur_offset_, what);
  }

  // Corruption found at file offset `at` in the chunk structure itself (bad header, bad
  // payload). Normal mode stops; salvage resumes at `resume` (or scans for the next chunk
  // magic from `at + 1` when resume is 0).
  void Corruption(absl::Status st, uint64_t at, uint64_t resume) {
    in_chunk_ = false;
    if (!opts_.salvage) {
      status_ = std::move(st);
      done_ = true;
      return;
    }
    ++stats_.corrupt_chunks_skipped;
    ++chunk_index_;
    if (resume != 0) {
      stats_.bytes_skipped += resume - at;
      pos_ = resume;
    } else {
      pos_ = ResyncFrom(at + 1, /*count=*/true);
    }
  }

  // Corruption inside an event chunk whose header and payload CRC were fine (a writer bug or a
  // CRC collision): the chunk's length is trustworthy, so salvage continues after it.
  void InChunkCorruption(absl::Status st) {
    Corruption(std::move(st), cur_offset_, cur_offset_ + cur_info_.total_size());
  }

  // Offset of the next position >= from holding a chunk header with a valid CRC (or a torn
  // one), else the end of the file.
  uint64_t ResyncFrom(uint64_t from, bool count) {
    static constexpr char kMagic[4] = {'C', 'L', 'C', 'K'};
    uint64_t off = from;
    while (off < data_.size()) {
      const char* base = data_.data();
      const void* hit = memmem(base + off, data_.size() - off, kMagic, sizeof(kMagic));
      uint64_t cand = hit == nullptr ? data_.size()
                                     : static_cast<uint64_t>(static_cast<const char*>(hit) - base);
      if (cand >= data_.size()) break;
      ChunkProbe probe;
      if (ParseChunkHeader(data_.substr(cand), cand, &probe).ok()) {
        if (count) stats_.bytes_skipped += cand - (from - 1);
        return cand;
      }
      off = cand + 1;
    }
    if (count) stats_.bytes_skipped += data_.size() - (from - 1);
    return data_.size();
  }

  // True if a footer (whole or torn) starts at `off` right after the index chunk.
  bool IsTrailerAt(uint64_t off) const {
    if (!last_index_offset_.has_value() || off != after_index_end_) return false;
    absl::string_view rest = data_.substr(off);
    std::string footer = EncodeFooter(*last_index_offset_);
    return rest.size() <= kFooterSize && absl::string_view(footer).substr(0, rest.size()) == rest;
  }

  void LoadNextChunk() {
    if (pos_ >= data_.size()) {
      done_ = true;  // ends on a chunk boundary
      return;
    }
    absl::string_view rest = data_.substr(pos_);
    if (IsTrailerAt(pos_)) {
      if (rest.size() < kFooterSize) torn_ = static_cast<int64_t>(pos_);
      done_ = true;
      return;
    }
    ChunkProbe probe;
    absl::StatusOr<ChunkInfo> info = ParseChunkHeader(rest, pos_, &probe);
    if (!info.ok()) {
      if (AllZero(rest)) {
        // Zeros to the end of the file: space the file system allocated but the writer never
        // filled (a crash), not data. A torn tail.
        torn_ = static_cast<int64_t>(pos_);
        done_ = true;
        return;
      }
      Corruption(absl::DataLossError(
                     absl::StrFormat("chunk %d: %s", chunk_index_, info.status().message())),
                 pos_, 0);
      return;
    }
    if (probe == ChunkProbe::kTorn) {
      torn_ = static_cast<int64_t>(pos_);
      done_ = true;
      return;
    }
    const uint64_t offset = pos_;
    const uint64_t next = offset + info->total_size();
    absl::string_view payload = rest.substr(info->header_size, info->stored_size);
    cur_offset_ = offset;
    cur_info_ = *info;
    if (absl::Status st = CheckPayload(*info, payload, offset); !st.ok()) {
      Corruption(absl::DataLossError(absl::StrFormat("chunk %d: %s", chunk_index_, st.message())),
                 offset, next);
      return;
    }
    switch (info->type) {
      case ChunkType::kEvents: {
        absl::string_view raw;
        if (absl::Status st = zd_.Decompress(*info, payload, &raw, offset); !st.ok()) {
          Corruption(
              absl::DataLossError(absl::StrFormat("chunk %d: %s", chunk_index_, st.message())),
              offset, next);
          return;
        }
        dec_.Reset(raw, header_.timestamp_unit_ns(), call_map_);
        dec_.SkipCalls(mode_ == ChunkReadMode::kDefinitions);
        in_chunk_ = true;
        pos_ = next;
        last_index_offset_.reset();
        return;
      }
      case ChunkType::kIndex:
        // Already read on Open (or not needed): only its framing matters while iterating.
        last_index_offset_ = offset;
        after_index_end_ = next;
        pos_ = next;
        ++chunk_index_;
        return;
      default:
        if (info->flags & kFlagIgnorable) {
          pos_ = next;
          ++chunk_index_;
          last_index_offset_.reset();
          return;
        }
        Corruption(absl::DataLossError(absl::StrFormat(
                       "chunk %d at offset %d: unknown chunk type %d (not marked ignorable)",
                       chunk_index_, offset, static_cast<int>(info->type))),
                   offset, next);
        return;
    }
  }

  void FinishChunk() {
    if (dec_.packets() != cur_info_.packet_count || dec_.events() != cur_info_.event_count) {
      InChunkCorruption(absl::DataLossError(ChunkContext(absl::StrFormat(
          "payload holds %d packets / %d events, header says %d / %d", dec_.packets(),
          dec_.events(), cur_info_.packet_count, cur_info_.event_count))));
      return;
    }
    in_chunk_ = false;
    if (mode_ != ChunkReadMode::kEvents) ++stats_.chunks;  // counted on a chunk's first read
    ++chunk_index_;
  }

  void ApplyDefinition(const DecodedPacket& p) {
    const bool handle = p.kind == PacketKind::kHandleDef;
    const bool content = p.kind == PacketKind::kContentDef;
    TokenTable& table = handle ? handles_ : content ? contents_ : strings_;
    const char* const what = handle ? "handle" : content ? "content" : "string";
    if (table.Define(p.def_id, p.def_value)) return;
    if (opts_.salvage) {
      // Definitions lost with a skipped chunk leave a gap: fill it with placeholders so the
      // later ids still line up. A gap can only be as large as what was skipped could have
      // defined (a definition takes more than one stored byte at any sane compression ratio
      // below kIdsPerSkippedByte), so a hostile id cannot make us fill billions.
      const uint64_t gap = p.def_id > table.size() ? p.def_id - table.size() : 0;
      if (gap > kIdsPerSkippedByte * stats_.bytes_skipped) {
        ++stats_.definitions_skipped;
        return;
      }
      while (p.def_id > table.size() &&
             table.Define(table.size(), absl::StrFormat("<lost %s %d>", what, table.size()))) {
      }
      if (!table.Define(p.def_id, p.def_value)) ++stats_.definitions_skipped;
      return;
    }
    std::string why;
    if (p.def_id == 0) {
      why = "id 0 is reserved for NULL / none";
    } else if (p.def_id < table.size()) {
      why = absl::StrFormat("id %d is already defined as \"%s\"", p.def_id,
                            absl::CHexEscape(Excerpt(table.Token(p.def_id))));
    } else if (p.def_id > table.size()) {
      why = absl::StrFormat("out of order: the next id to define is %d", table.size());
    } else {
      why = absl::StrFormat("the same value already has id %d", table.Find(p.def_value));
    }
    InChunkCorruption(absl::DataLossError(ChunkContext(
        absl::StrFormat("%s definition id %d (\"%s\") at payload offset %d: %s", what, p.def_id,
                        absl::CHexEscape(Excerpt(p.def_value)), p.payload_offset, why))));
  }

  // Validates a decoded event against the header and the definitions so far. False if the
  // event is not to be returned (reader stopped, or salvage dropped it).
  bool CheckEvent(const Event& e, const DecodedPacket& p) {
    if (p.file_call == 0 || p.file_call >= call_map_.size()) {
      InChunkCorruption(absl::DataLossError(ChunkContext(absl::StrFormat(
          "event at payload offset %d has call id %d, but the header names %d calls",
          p.payload_offset, p.file_call, call_map_.size()))));
      return false;
    }
    if (e.call == CallId::kInvalid) {
      if (opts_.salvage) {
        if (mode_ != ChunkReadMode::kEvents) ++stats_.events_skipped;
        return false;
      }
      status_ = absl::InvalidArgumentError(ChunkContext(absl::StrFormat(
          "event seq %d at payload offset %d calls \"%s\" (file call id %d), which this "
          "reader's catalog (version %d; file's %d) does not know",
          e.seq, p.payload_offset, header_.call_names(static_cast<int>(p.file_call)), p.file_call,
          CatalogVersion(), header_.catalog_version())));
      done_ = true;
      return false;
    }
    if (e.seq < cur_info_.min_seq || e.seq > cur_info_.max_seq) {
      InChunkCorruption(absl::DataLossError(ChunkContext(absl::StrFormat(
          "event seq %d at payload offset %d is outside the header's range [%d, %d]", e.seq,
          p.payload_offset, cur_info_.min_seq, cur_info_.max_seq))));
      return false;
    }
    // Salvage tolerates references to lost definitions; a kEvents read checked them before.
    if (opts_.salvage || mode_ == ChunkReadMode::kEvents) return true;
    std::string bad;
    if (!strings_.Has(e.annotation)) {
      bad = absl::StrFormat("annotation uses string id %d", e.annotation);
    } else if (!contents_.Has(e.content)) {
      bad = absl::StrFormat("content id %d", e.content);
    }
    VisitArgKinds(LayoutOf(e.call), absl::MakeConstSpan(e.args.data(), e.args.size()),
                  [&](size_t i, FieldKind kind) {
                    if (!bad.empty()) return;
                    if (kind == FieldKind::kHandle && !handles_.Has(e.args[i])) {
                      bad = absl::StrFormat("arg %d uses handle id %d", i, e.args[i]);
                    } else if (kind == FieldKind::kString && !strings_.Has(e.args[i])) {
                      bad = absl::StrFormat("arg %d uses string id %d", i, e.args[i]);
                    }
                  });
    if (bad.empty()) return true;
    InChunkCorruption(absl::DataLossError(ChunkContext(
        absl::StrFormat("event seq %d (%s) at payload offset %d: %s before its definition", e.seq,
                        GetCall(e.call)->name, p.payload_offset, bad))));
    return false;
  }

  void LoadIndex() {
    if (data_.size() < first_chunk_ + kFooterSize) return;
    uint64_t off;
    if (!ParseFooter(data_.substr(data_.size() - kFooterSize), &off)) return;
    if (off < first_chunk_ || off >= data_.size() - kFooterSize) return;
    absl::string_view rest = data_.substr(off, data_.size() - kFooterSize - off);
    ChunkProbe probe;
    absl::StatusOr<ChunkInfo> info = ParseChunkHeader(rest, off, &probe);
    if (!info.ok() || probe != ChunkProbe::kHeader || info->type != ChunkType::kIndex ||
        info->total_size() != rest.size()) {
      return;
    }
    absl::string_view payload = rest.substr(info->header_size);
    absl::string_view raw;
    ChunkDecompressor zd;
    if (!CheckPayload(*info, payload, off).ok() || !zd.Decompress(*info, payload, &raw, off).ok()) {
      return;
    }
    proto::TraceIndex index;
    if (!index.ParseFromArray(raw.data(), static_cast<int>(raw.size()))) return;
    index_ = std::move(index);
    stats_.has_index = true;
  }

  absl::StatusOr<Event> FindInChunkAt(uint64_t off, uint64_t seq) {
    if (off < first_chunk_ || off >= data_.size()) {
      return absl::DataLossError(
          absl::StrFormat("index names a chunk at offset %d outside the file", off));
    }
    absl::string_view rest = data_.substr(off);
    ChunkProbe probe;
    CLTRACE_ASSIGN_OR_RETURN(ChunkInfo info, ParseChunkHeader(rest, off, &probe));
    if (probe != ChunkProbe::kHeader || info.type != ChunkType::kEvents) {
      return absl::DataLossError(
          absl::StrFormat("index names offset %d, which holds no whole event chunk", off));
    }
    absl::string_view payload = rest.substr(info.header_size, info.stored_size);
    CLTRACE_RETURN_IF_ERROR(CheckPayload(info, payload, off));
    absl::string_view raw;
    CLTRACE_RETURN_IF_ERROR(find_zd_.Decompress(info, payload, &raw, off));
    ChunkDecoder dec;
    dec.Reset(raw, header_.timestamp_unit_ns(), call_map_);
    Event e;
    DecodedPacket p;
    while (true) {
      absl::Status st = dec.Next(&e, &p);
      if (!st.ok()) {
        return absl::DataLossError(absl::StrFormat("chunk at offset %d: %s", off, st.message()));
      }
      if (p.kind == PacketKind::kEnd) break;
      if (p.kind != PacketKind::kCall || e.seq != seq) continue;
      if (e.call == CallId::kInvalid) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "chunk at offset %d: event seq %d has file call id %d, unknown to this catalog", off,
            seq, p.file_call));
      }
      MigrateEvent(header_.catalog_version(), &e);
      return e;
    }
    return NotFoundSeq(seq);
  }

  static absl::Status NotFoundSeq(uint64_t seq) {
    return absl::NotFoundError(absl::StrFormat("no event with seq %d", seq));
  }

  absl::string_view data_;
  std::unique_ptr<FileBytes> owner_;
  Options opts_;
  proto::TraceHeader header_;
  std::vector<CallId> call_map_;
  uint64_t first_chunk_ = 0;

  // Iteration state.
  uint64_t pos_ = 0;          // offset of the next chunk to load
  uint64_t chunk_index_ = 0;  // ordinal of the current chunk in the file (for messages)
  uint64_t cur_offset_ = 0;
  ChunkInfo cur_info_;
  bool in_chunk_ = false;
  bool done_ = false;
  bool single_ = false;  // ReadChunk: stop at the end of the chunk
  ChunkReadMode mode_ = ChunkReadMode::kAll;
  std::optional<uint64_t> last_index_offset_;  // set right after reading an index chunk
  uint64_t after_index_end_ = 0;
  ChunkDecompressor zd_;
  ChunkDecoder dec_;
  absl::Status status_;
  int64_t torn_ = -1;
  TokenTable handles_;
  TokenTable strings_;
  TokenTable contents_;
  Stats stats_;

  std::optional<proto::TraceIndex> index_;
  ChunkDecompressor find_zd_;
};

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path,
                                                               Options options) {
  CLTRACE_ASSIGN_OR_RETURN(std::unique_ptr<FileBytes> fb, FileBytes::Open(path));
  absl::string_view bytes = fb->bytes();
  auto impl = std::make_unique<Impl>(bytes, std::move(fb), options);
  CLTRACE_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<TraceReader>(new TraceReader(std::move(impl)));
}

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::OpenBytes(absl::string_view bytes,
                                                                    Options options) {
  auto impl = std::make_unique<Impl>(bytes, nullptr, options);
  CLTRACE_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<TraceReader>(new TraceReader(std::move(impl)));
}

TraceReader::TraceReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceReader::~TraceReader() = default;

const proto::TraceHeader& TraceReader::header() const { return impl_->header(); }
void InferOutputPointerPresence(Event* event) {
  // Per call: the presence fields that have output members (few calls have any).
  static const std::vector<std::vector<uint16_t>>* presence = [] {
    auto* table = new std::vector<std::vector<uint16_t>>(Calls().size());
    for (size_t id = 0; id < Calls().size(); ++id) {
      const auto fields = Fields(Calls()[id]);
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].kind != FieldKind::kPresent) continue;
        for (size_t k = i + 1; k <= i + fields[i].elem_count && k < fields.size(); ++k) {
          if (fields[k].dir == FieldDir::kOut) {
            (*table)[id].push_back(static_cast<uint16_t>(i));
            break;
          }
        }
      }
    }
    return table;
  }();
  const size_t id = static_cast<size_t>(event->call);
  if (id >= presence->size()) return;
  for (uint16_t i : (*presence)[id]) {
    if (i >= event->args.size() || event->args[i] != 0) continue;
    const auto fields = Fields(Calls()[id]);
    for (size_t k = i + 1; k <= i + fields[i].elem_count && k < event->args.size(); ++k) {
      if (fields[k].dir == FieldDir::kOut && event->args[k] != 0) event->args[i] = 1;
    }
  }
}

bool TraceReader::Next(Event* event) {
  if (!impl_->Next(event)) return false;
  InferOutputPointerPresence(event);
  return true;
}
const absl::Status& TraceReader::status() const { return impl_->status(); }
int64_t TraceReader::torn_tail() const { return impl_->torn_tail(); }
const TokenTable& TraceReader::handles() const { return impl_->handles(); }
const TokenTable& TraceReader::strings() const { return impl_->strings(); }
const TokenTable& TraceReader::contents() const { return impl_->contents(); }
const TraceReader::Stats& TraceReader::stats() const { return impl_->stats(); }
uint64_t TraceReader::position() const { return impl_->position(); }
const proto::TraceIndex* TraceReader::index() const { return impl_->index(); }
absl::Status TraceReader::ScanChunks(std::vector<ChunkSpan>* chunks) {
  return impl_->ScanChunks(chunks);
}
absl::Status TraceReader::ReadChunk(const ChunkSpan& chunk, ChunkReadMode mode,
                                    std::vector<Event>* events) {
  return impl_->ReadChunk(chunk, mode, events);
}
absl::StatusOr<Event> TraceReader::FindBySeq(uint64_t seq) {
  absl::StatusOr<Event> event = impl_->FindBySeq(seq);
  if (event.ok()) InferOutputPointerPresence(&*event);
  return event;
}

bool PositionGaps::MissingBetween(uint64_t lo, uint64_t hi) const {
  if (hi <= lo + 1) return false;
  // The first hole that ends after lo.
  auto it = std::upper_bound(
      holes.begin(), holes.end(), lo,
      [](uint64_t v, const std::pair<uint64_t, uint64_t>& h) { return v < h.second; });
  return it != holes.end() && it->first < hi && std::max(it->first, lo + 1) < hi;
}

PositionGaps FindPositionGaps(absl::Span<const Event> events) {
  std::vector<uint64_t> pos;
  pos.reserve(events.size() * 2);
  for (const Event& e : events) {
    if (e.seq != 0) pos.push_back(e.seq);
    if (e.end != 0) pos.push_back(e.end);
  }
  std::sort(pos.begin(), pos.end());
  PositionGaps g;
  uint64_t prev = 0;  // positions start at 1
  for (uint64_t p : pos) {
    if (p == prev) {
      if (g.duplicates++ == 0) g.first_duplicate = p;
      continue;
    }
    if (p > prev + 1) {
      if (g.missing == 0) g.first_missing = prev + 1;
      g.missing += p - prev - 1;
      g.holes.emplace_back(prev + 1, p - 1);
    }
    prev = p;
  }
  g.highest = prev;
  return g;
}

bool PositionsAreDense(const proto::TraceHeader& header) {
  return header.writer().name() == "cltrace-recorder";
}

}  // namespace cltrace::format
