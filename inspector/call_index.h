// CallIndex: the inspector model's storage of calls — a packed record per call (the fine
// index) or one entry per block of calls (the coarse index, for traces too long for even that),
// with every call's full event decoded from the trace file on demand through the file's
// chunks, behind small caches. TraceModel (model.h) owns one; nothing here knows ImGui.
//
// Fine index: 26 bytes per call (PackedCall) plus one bit (the DC-table flag); seq look-ups
// are binary searches. Coarse index: 8 bytes per block of kBlockCalls calls plus the bit; a
// block's records are decoded from the chunks whose seq ranges overlap the block's when first
// looked at (a few chunks, milliseconds) and cached. Full events are decoded per chunk (the
// record names its chunk) and cached for a bounded number of events.
//
// Thread-safety: Add / SetDcTable / Finish / Attach* on one thread while building; afterwards
// every const method may be called from any thread (the caches are locked).
#ifndef CLTRACE_INSPECTOR_CALL_INDEX_H_
#define CLTRACE_INSPECTOR_CALL_INDEX_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "ddi/call_ids.h"
#include "format/event.h"
#include "format/trace_reader.h"

namespace cltrace::inspector {

struct CallRecord;  // model.h

#pragma pack(push, 1)
// One call of the fine index: no arguments, no protobuf.
struct PackedCall {
  static constexpr uint32_t kEscape = 0xffffffffu;  // the value lives in a side map
  static constexpr uint16_t kThreadEscape = 0xffff;
  uint64_t seq = 0;
  uint32_t end_delta = 0;     // end - seq; 0: never returned
  uint32_t parent_delta = 0;  // seq - parent; 0: top level
  uint32_t chunk = 0;         // ChunkSpan::ordinal of the chunk holding the event
  uint16_t thread = 0;        // index into the thread table
  uint16_t call = 0;          // CallId
  uint16_t depth = 0;         // nesting depth (0: top level)
};
#pragma pack(pop)
static_assert(sizeof(PackedCall) == 26);

class CallIndex {
 public:
  // Calls per block by default: the unit of the coarse index and of its on-demand decoding.
  static constexpr uint32_t kBlockCalls = 4096;
  // Most events kept decoded in the chunk cache (beyond it the least recently used chunks go).
  static constexpr uint64_t kCachedEvents = uint64_t{1} << 18;
  // Most blocks of records kept decoded (coarse index).
  static constexpr size_t kCachedBlocks = 64;
  // Chunks kept whatever their size (a block of a trace of N threads spans about N chunks).
  static constexpr size_t kMinCachedChunks = 6;

  explicit CallIndex(bool coarse, uint32_t block_calls = kBlockCalls)
      : coarse_(coarse), block_calls_(block_calls == 0 ? 1 : block_calls) {}
  ~CallIndex();
  CallIndex(const CallIndex&) = delete;
  CallIndex& operator=(const CallIndex&) = delete;

  // ---- Building (one thread) -----------------------------------------------------------
  // The next call in seq order, from chunk `chunk` of the file (0 when events are in memory).
  void Add(const format::Event& e, uint64_t chunk);
  // Marks the call with this seq as made through a DC table (the latest Add's seq is O(1)).
  void SetDcTable(uint64_t seq);
  // The events live in memory (a trace built from TraceData, JSONL): kept as they are.
  void AttachEvents(std::vector<format::Event> events);
  // The events live in a .cltrace file: opens a reader of its own for on-demand decoding.
  absl::Status AttachFile(const std::string& path, bool salvage);
  void Finish();

  // ---- Queries -----------------------------------------------------------------------------
  size_t size() const { return count_; }
  bool coarse() const { return coarse_; }
  // Precondition: i < size(). Coarse: decodes the call's block when not cached; when that
  // fails (the file changed since the load) the record has only the block's first seq and
  // call kInvalid, and last_error() says why.
  CallRecord Get(size_t i) const;
  bool DcTable(size_t i) const { return (dc_bits_[i >> 6] >> (i & 63)) & 1; }
  int64_t Find(uint64_t seq) const;            // exact entry seq, -1 if none
  int64_t FindAtOrBefore(uint64_t seq) const;  // -1 if before the first call
  absl::StatusOr<std::shared_ptr<const format::Event>> Decode(size_t i) const;
  // Bytes held for calls: records / block index, flags, side maps, threads, and the caches
  // as they are now.
  uint64_t bytes() const;
  // Status of the last on-demand decode that failed (OK if none did).
  absl::Status last_error() const;

 private:
  struct DecodedChunk {
    std::vector<format::Event> events;  // file order
    std::vector<uint32_t> by_seq;       // indices sorted by seq
  };
  using Block = std::vector<PackedCall>;

  PackedCall Pack(const format::Event& e, uint64_t chunk, uint16_t thread, uint16_t depth);
  CallRecord Unpack(const PackedCall& p) const;
  uint16_t ThreadIndex(uint32_t tid);
  uint16_t DepthOf(const format::Event& e, uint16_t thread);
  // Locked helpers.
  absl::StatusOr<std::shared_ptr<const DecodedChunk>> ChunkLocked(uint64_t ordinal) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::shared_ptr<const Block>> BlockLocked(size_t b) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Coarse: the record of call i (decoding its block), or an error.
  absl::StatusOr<PackedCall> CoarseGet(size_t i) const;
  uint64_t BlockEndSeq(size_t b) const;  // exclusive

  const bool coarse_;
  const uint32_t block_calls_;
  size_t count_ = 0;
  // Fine: one per call. Coarse: empty.
  std::vector<PackedCall> calls_;
  // Coarse: first seq of each block, and the (seq, depth) of the calls open where it starts
  // (sorted by seq): the parents from before the block its calls may name.
  std::vector<uint64_t> block_seq_;
  std::vector<std::vector<std::pair<uint64_t, uint16_t>>> block_open_;
  uint64_t last_seq_ = 0;
  std::vector<uint64_t> dc_bits_;
  std::vector<uint32_t> threads_;  // thread index -> tid
  uint16_t last_thread_ = 0;
  absl::flat_hash_map<uint32_t, uint16_t> thread_index_;
  absl::flat_hash_map<uint64_t, uint64_t> far_end_;     // seq -> end (delta does not fit)
  absl::flat_hash_map<uint64_t, uint64_t> far_parent_;  // seq -> parent
  absl::flat_hash_map<uint64_t, uint32_t> far_tid_;     // seq -> tid (more than 65535 threads)
  absl::flat_hash_map<uint64_t, uint64_t> big_chunk_;   // seq -> chunk (ordinal > 2^32 - 2)
  // Open calls per thread while building (seq, end, depth): the nesting depth of the next.
  struct Open {
    uint64_t seq, end;
    uint16_t depth;
  };
  std::vector<std::vector<Open>> open_;

  // Event sources.
  std::shared_ptr<const std::vector<format::Event>> memory_;
  std::string path_;
  bool salvage_ = false;

  mutable absl::Mutex mu_;
  mutable std::unique_ptr<format::TraceReader> reader_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<format::ChunkSpan> chunks_ ABSL_GUARDED_BY(mu_);           // by ordinal
  mutable absl::flat_hash_map<uint64_t, size_t> chunk_at_ ABSL_GUARDED_BY(mu_);  // ordinal
  // LRU caches: front = most recent.
  mutable std::list<std::pair<uint64_t, std::shared_ptr<const DecodedChunk>>> chunk_lru_
      ABSL_GUARDED_BY(mu_);
  mutable uint64_t cached_events_ ABSL_GUARDED_BY(mu_) = 0;
  mutable std::list<std::pair<size_t, std::shared_ptr<const Block>>> block_lru_
      ABSL_GUARDED_BY(mu_);
  mutable absl::Status last_error_ ABSL_GUARDED_BY(mu_);
  // The file as it was when attached: the reader maps it, so a file truncated or rewritten in
  // place must be noticed before reading (a mapped page past the new end is a SIGBUS).
  int fd_ = -1;
  int64_t file_size_ = 0;
  int64_t file_mtime_ns_ = 0;
  absl::Status FileUnchanged() const;
};

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_CALL_INDEX_H_
