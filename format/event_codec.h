// Encoding and decoding of an event chunk's payload (format/FORMAT.md §3): a protobuf
// ChunkBody written and read directly in wire format, with the per-chunk delta rules of
// CallEvent (format/trace.proto) and zigzag for the catalog's signed argument kinds.
//
// The encoder writes the bytes protobuf's own serializer would write for the same ChunkBody
// (fields in number order, zero scalars omitted, args packed), without building message
// objects; event_codec_test checks that the generated classes parse and re-serialize them
// byte for byte.
//
// Thread-safety: ChunkEncoder / ChunkDecoder are single-threaded values.
//
// Example:
//   ChunkEncoder enc(/*timestamp_unit_ns=*/100);
//   enc.AppendHandleDef(1, "0x5500");
//   enc.AppendCall(event);                    // event.args[0] == 1
//   ChunkDecoder dec;
//   dec.Reset(enc.payload(), 100, IdentityCallMap());
//   Event e; DecodedPacket p;
//   while (dec.Next(&e, &p).ok() && p.kind != PacketKind::kEnd) ...
#ifndef CLTRACE_FORMAT_EVENT_CODEC_H_
#define CLTRACE_FORMAT_EVENT_CODEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ddi/call_ids.h"
#include "ddi/catalog_types.h"
#include "format/event.h"
#include "format/trace.pb.h"

namespace cltrace::format {

// ---- Argument kinds (FORMAT.md §3.3) ----

// Where each argument position's FieldKind comes from: the fixed fields in catalog order, then
// for every kArray fixed field (in order) count = value - 1 elements of its element fields.
struct CallLayout {
  std::vector<FieldKind> fixed;
  std::vector<uint16_t> arrays;                  // indices into `fixed` of kArray fields
  std::vector<std::vector<FieldKind>> elements;  // element kinds, parallel to `arrays`
  // Hot-path summary for calls without arrays and at most 64 fixed fields (nearly all):
  // bit i set = fixed field i is a signed kind / a handle / a string id.
  bool masks_valid = false;
  uint64_t signed_mask = 0;
  uint64_t handle_mask = 0;
  uint64_t string_mask = 0;
};
// The layout of a call of this binary's catalog; an empty layout for kInvalid / out of range.
const CallLayout& LayoutOf(CallId call);

// Most args one event may have. The catalog's largest call (DxgkDdiPatch with arrays at
// format/call_codec.h's 65536-element cap) has about 655,000; a reader rejects more, so a
// hostile packed field cannot make it allocate more than 32 MiB for one event.
inline constexpr size_t kMaxEventArgs = size_t{1} << 22;

inline bool IsSignedKind(FieldKind k) {
  return k == FieldKind::kI32 || k == FieldKind::kI64 || k == FieldKind::kHresult;
}

// Calls f(position, kind) for every position of `args` in order. Positions past what the
// layout describes (a malformed event) are kU64. Only array counts (unsigned) are read from
// `args`, so the same schedule results from encoded or decoded values.
template <typename F>
void VisitArgKinds(const CallLayout& layout, absl::Span<const uint64_t> args, F&& f) {
  const size_t n = args.size();
  size_t pos = 0;
  for (; pos < n && pos < layout.fixed.size(); ++pos) f(pos, layout.fixed[pos]);
  for (size_t a = 0; a < layout.arrays.size() && pos < n; ++a) {
    const std::vector<FieldKind>& elem = layout.elements[a];
    if (elem.empty()) continue;
    const size_t idx = layout.arrays[a];
    const uint64_t count = (idx < n && args[idx] > 0) ? args[idx] - 1 : 0;
    for (uint64_t c = 0; c < count && pos < n; ++c) {
      for (size_t k = 0; k < elem.size() && pos < n; ++k) f(pos++, elem[k]);
    }
  }
  for (; pos < n; ++pos) f(pos, FieldKind::kU64);
}

inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)); }

// ---- Encoder ----

class ChunkEncoder {
 public:
  // Timestamps are stored in units of `timestamp_unit_ns` (> 0), rounded down.
  explicit ChunkEncoder(uint32_t timestamp_unit_ns);

  // Appends a CallEvent packet for `e` (e.call is this binary's CallId, which is the id the
  // writer's header names). Precondition (checked by TraceWriter::Append): e.parent == 0 or
  // e.parent != e.seq.
  void AppendCall(const Event& e) { AppendCall(e, LayoutOf(e.call)); }
  // Same, with the caller's LayoutOf(e.call) (saves the lookup on the hot path).
  void AppendCall(const Event& e, const CallLayout& layout);
  void AppendHandleDef(uint64_t id, absl::string_view token);
  void AppendStringDef(uint64_t id, absl::string_view value);
  // A ContentDef packet (FORMAT.md §3.8): `data` is stored as is (binary).
  void AppendContentDef(uint64_t id, absl::string_view data);

  // Format version 2 only (FORMAT.md §3.7): appends the CallEvents of one run of events (in
  // practice one thread's, in seq order) behind a PositionRun packet that lists their entry
  // and exit positions, the events coding theirs as indices into that list. When the run's
  // positions are contiguous (no other thread's positions among them: the list would add
  // nothing), too few, too many or not distinct, the events are appended as AppendCall
  // does instead. Same precondition as AppendCall for each event.
  struct RunEvent {
    const Event* event;
    const CallLayout* layout;
  };
  void AppendRun(absl::Span<const RunEvent> events);

  // The raw (uncompressed) payload so far.
  absl::string_view payload() const { return absl::string_view(buf_.data(), size_); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint32_t packet_count() const { return packets_; }
  uint32_t event_count() const { return events_; }
  // Entry-seq range of the events so far (0, 0 if none).
  uint64_t min_seq() const { return events_ ? min_seq_ : 0; }
  uint64_t max_seq() const { return max_seq_; }

  // Starts a new chunk: empties the payload and resets the delta state (FORMAT.md §3.2).
  void Reset();
  // Moves the payload out (then Reset()).
  std::string TakePayload();

 private:
  // Room for n more bytes at payload end (inline: called for every packet).
  // An event's positions as coded: global positions (AppendCall) or 1-based indices into
  // the current PositionRun (AppendRun); outer_dparent only in a run.
  struct Coded {
    uint64_t seq, end, parent, outer_dparent;
  };
  void EncodeCall(const Event& e, const CallLayout& layout, const Coded& c);
  char* Reserve(size_t n) {
    if (__builtin_expect(size_ + n > buf_.size(), 0)) Grow(n);
    return buf_.data() + size_;
  }
  void Grow(size_t n);
  void AppendDef(uint8_t packet_tag, uint64_t id, absl::string_view value);

  uint32_t unit_ns_;
  std::string buf_;
  size_t size_ = 0;
  uint32_t packets_ = 0;
  uint32_t events_ = 0;
  uint64_t min_seq_ = 0, max_seq_ = 0;
  // Delta state.
  uint64_t prev_end_ = 0;
  int64_t prev_ts_ = 0;
  uint32_t prev_tid_ = 0;
  // AppendRun scratch: positions with their (event, seq|end) slot, each slot's index.
  struct PosRef {
    uint64_t pos;
    uint32_t slot;
  };
  std::vector<PosRef> refs_;
  std::vector<uint32_t> slot_index_;
  std::string run_body_;
  // The last timestamp converted to units (not delta state: survives Reset).
  bool last_ts_valid_ = false;
  int64_t last_ts_ns_ = 0;
  int64_t last_ts_units_ = 0;
};

// ---- Decoder ----

// A PositionRun packet (format version 2) is consumed by the decoder, never returned.
enum class PacketKind { kEnd, kCall, kHandleDef, kStringDef, kContentDef, kUnknown };

struct DecodedPacket {
  PacketKind kind = PacketKind::kEnd;
  uint32_t file_call = 0;       // kCall: the call id as written (the writer's id)
  uint64_t def_id = 0;          // kHandleDef / kStringDef / kContentDef
  absl::string_view def_value;  // points into the payload
  uint64_t payload_offset = 0;  // where the packet starts in the raw payload
};

class ChunkDecoder {
 public:
  // Starts decoding `payload` (which must outlive the decoding). `call_map` maps the file's
  // call ids to this binary's CallIds (kInvalid for names this catalog lacks); events of an
  // unmapped call come back with call == kInvalid and their args not un-zigzagged.
  void Reset(absl::string_view payload, uint32_t timestamp_unit_ns,
             absl::Span<const CallId> call_map);

  // Decodes the next packet. kCall fills *event; kHandleDef / kStringDef / kContentDef fill
  // p->def_*;
  // kUnknown is a packet of a kind this reader does not know (skip it); kEnd at the end of the
  // payload. DataLoss with the payload offset for malformed bytes; the message does not name
  // the chunk (the caller prefixes that).
  absl::Status Next(Event* event, DecodedPacket* p);

  // Until the next Reset: call packets (and the position runs they use) are counted and
  // framed but not decoded; Next returns them as kCall with *event untouched. For readers that
  // only want a chunk's definitions (format/seq_stream.h seeking past it).
  void SkipCalls(bool skip) { skip_calls_ = skip; }

  uint32_t packets() const { return packets_; }
  uint32_t events() const { return events_; }

 private:
  // The fields of one CallEvent as written (deltas, zigzag), before they are placed.
  struct CallFields;
  // Reads the fields in [p, end) into *f and *args; false on malformed bytes, *what naming them.
  static bool ReadCallFields(const uint8_t* p, const uint8_t* end, CallFields* f,
                             decltype(Event::args)* args, const char** what);
  absl::Status DecodeCall(const uint8_t* p, const uint8_t* end, Event* e, DecodedPacket* out);
  // seq, end and parent of a call from its deltas, inside or outside a position run.
  absl::Status PlaceCall(const CallFields& f, Event* e, uint64_t offset);
  absl::Status DecodeRun(const uint8_t* p, const uint8_t* end, uint64_t offset);

  const uint8_t* begin_ = nullptr;
  const uint8_t* cur_ = nullptr;
  const uint8_t* end_ = nullptr;
  uint32_t unit_ns_ = 1;
  absl::Span<const CallId> call_map_;
  uint32_t packets_ = 0;
  uint32_t events_ = 0;
  uint64_t prev_end_ = 0;
  int64_t prev_ts_ = 0;
  uint32_t prev_tid_ = 0;
  // The current PositionRun (format version 2): its positions, how many of its events are
  // still to come, the index coding of the previous one.
  std::vector<uint64_t> run_positions_;
  uint64_t run_remaining_ = 0;
  uint64_t run_prev_end_ = 0;
  bool skip_calls_ = false;
};

// The most positions one PositionRun may list (a writer falls back to plain CallEvents for
// larger runs); bounds what a hostile run makes a reader allocate (8 MiB).
inline constexpr size_t kMaxRunPositions = size_t{1} << 20;

// The call map for a file written by this binary's catalog (id i -> CallId i).
absl::Span<const CallId> IdentityCallMap();
// Builds the call map for a file's TraceHeader.call_names (looked up by name in this binary's
// catalog; "" and unknown names map to kInvalid).
std::vector<CallId> BuildCallMap(const proto::TraceHeader& header);

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_EVENT_CODEC_H_
