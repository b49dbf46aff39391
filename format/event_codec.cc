#include "format/event_codec.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "ddi/catalog.h"
#include "format/status_macros.h"
#include "google/protobuf/io/coded_stream.h"

namespace cltrace::format {
namespace {

using google::protobuf::io::CodedOutputStream;

// Wire tags (field number << 3 | wire type) of the messages in format/trace.proto.
constexpr uint8_t kTagBodyPacket = 0x0a;    // ChunkBody.packet, LEN
constexpr uint8_t kTagPacketCall = 0x0a;    // Packet.call, LEN
constexpr uint8_t kTagPacketHandle = 0x12;  // Packet.handle, LEN
constexpr uint8_t kTagPacketString = 0x1a;  // Packet.string, LEN
constexpr uint8_t kTagCall = 0x08;          // CallEvent.call
constexpr uint8_t kTagDseq = 0x10;
constexpr uint8_t kTagDend = 0x18;
constexpr uint8_t kTagTid = 0x20;
constexpr uint8_t kTagDts = 0x28;
constexpr uint8_t kTagDparent = 0x30;
constexpr uint8_t kTagArgsPacked = 0x3a;
constexpr uint8_t kTagArgsSingle = 0x38;  // a non-packed encoding protobuf parsers also accept
constexpr uint8_t kTagRet = 0x40;
constexpr uint8_t kTagAnnotation = 0x48;
constexpr uint8_t kTagIncomplete = 0x50;
constexpr uint8_t kTagOuterDparent = 0x58;   // CallEvent.outer_dparent (version 2)
constexpr uint8_t kTagContent = 0x60;        // CallEvent.content (§3.8)
constexpr uint8_t kTagPacketContent = 0x2a;  // Packet.content, LEN (§3.8)
constexpr uint8_t kTagPacketRun = 0x22;      // Packet.run, LEN (version 2)
constexpr uint8_t kTagRunFirst = 0x08;       // PositionRun.first
constexpr uint8_t kTagRunGaps = 0x12;        // PositionRun.gaps, packed
constexpr uint8_t kTagRunEvents = 0x18;      // PositionRun.events
constexpr uint8_t kTagDefId = 0x08;          // HandleDef.id / StringDef.id
constexpr uint8_t kTagDefValue = 0x12;       // HandleDef.token / StringDef.value

inline uint8_t* PutVarint(uint64_t v, uint8_t* p) {
  if (v < 0x80) {  // most deltas and small args
    *p = static_cast<uint8_t>(v);
    return p + 1;
  }
  return CodedOutputStream::WriteVarint64ToArray(v, p);
}

inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b) != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

inline bool ReadVarint(const uint8_t*& p, const uint8_t* end, uint64_t* v) {
  if (p < end && *p < 0x80) {
    *v = *p++;
    return true;
  }
  uint64_t r = 0;
  for (int i = 0; i < 10; ++i) {
    if (p >= end) return false;
    uint8_t b = *p++;
    r |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      *v = r;
      return true;
    }
  }
  return false;  // more than 10 bytes: not a varint
}

// Skips the value of a field with this tag. False if truncated or of a wire type protobuf 3
// does not use here (groups).
inline bool SkipField(uint64_t tag, const uint8_t*& p, const uint8_t* end) {
  uint64_t v;
  switch (tag & 7) {
    case 0:
      return ReadVarint(p, end, &v);
    case 1:
      if (end - p < 8) return false;
      p += 8;
      return true;
    case 2:
      if (!ReadVarint(p, end, &v) || v > static_cast<uint64_t>(end - p)) return false;
      p += v;
      return true;
    case 5:
      if (end - p < 4) return false;
      p += 4;
      return true;
    default:
      return false;
  }
}

std::vector<CallLayout> BuildLayouts() {
  std::vector<CallLayout> layouts(kCallIdCount);
  for (int i = 1; i < kCallIdCount; ++i) {
    const CallInfo* ci = GetCall(static_cast<uint32_t>(i));
    if (ci == nullptr) continue;
    CallLayout& l = layouts[i];
    auto fields = Fields(*ci);
    for (size_t f = 0; f < fields.size(); ++f) {
      l.fixed.push_back(fields[f].kind);
      if (fields[f].kind == FieldKind::kArray) {
        l.arrays.push_back(static_cast<uint16_t>(f));
        std::vector<FieldKind> elems;
        for (const FieldInfo& e : ElementFields(fields[f])) elems.push_back(e.kind);
        l.elements.push_back(std::move(elems));
      }
    }
    l.masks_valid = l.arrays.empty() && l.fixed.size() <= 64;
    for (size_t f = 0; l.masks_valid && f < l.fixed.size(); ++f) {
      const uint64_t bit = uint64_t{1} << f;
      if (IsSignedKind(l.fixed[f])) l.signed_mask |= bit;
      if (l.fixed[f] == FieldKind::kHandle) l.handle_mask |= bit;
      if (l.fixed[f] == FieldKind::kString) l.string_mask |= bit;
    }
  }
  return layouts;
}

}  // namespace

const CallLayout& LayoutOf(CallId call) {
  static const std::vector<CallLayout>* layouts = new std::vector<CallLayout>(BuildLayouts());
  static const CallLayout* empty = new CallLayout();
  size_t i = static_cast<size_t>(call);
  return i < layouts->size() ? (*layouts)[i] : *empty;
}

absl::Span<const CallId> IdentityCallMap() {
  static const std::vector<CallId>* map = [] {
    auto* m = new std::vector<CallId>(kCallIdCount);
    for (int i = 0; i < kCallIdCount; ++i) (*m)[i] = static_cast<CallId>(i);
    return m;
  }();
  return *map;
}

std::vector<CallId> BuildCallMap(const proto::TraceHeader& header) {
  std::vector<CallId> map(header.call_names_size(), CallId::kInvalid);
  for (int i = 1; i < header.call_names_size(); ++i) {
    const CallInfo* ci = FindCall(header.call_names(i));
    if (ci != nullptr) map[i] = IdOf(*ci);
  }
  return map;
}

// ---- ChunkEncoder ----

ChunkEncoder::ChunkEncoder(uint32_t timestamp_unit_ns)
    : unit_ns_(timestamp_unit_ns == 0 ? 1 : timestamp_unit_ns) {}

void ChunkEncoder::Grow(size_t n) { buf_.resize(std::max(size_ + n, buf_.size() * 2 + 4096)); }

void ChunkEncoder::Reset() {
  size_ = 0;
  packets_ = 0;
  events_ = 0;
  min_seq_ = max_seq_ = 0;
  prev_end_ = 0;
  prev_ts_ = 0;
  prev_tid_ = 0;
}

std::string ChunkEncoder::TakePayload() {
  buf_.resize(size_);
  std::string out = std::move(buf_);
  buf_ = std::string();
  buf_.resize(out.size() + out.size() / 8);
  Reset();
  return out;
}

void ChunkEncoder::AppendCall(const Event& e, const CallLayout& layout) {
  EncodeCall(e, layout, Coded{e.seq, e.end, e.parent, 0});
  prev_end_ = e.end != 0 ? e.end : e.seq;
}

void ChunkEncoder::EncodeCall(const Event& e, const CallLayout& layout, const Coded& c) {
  const size_t nargs = e.args.size();
  // Upper bound of the CallEvent body: 9 scalar fields of at most 1 + 10 bytes, incomplete,
  // outer_dparent, content, the args.
  const size_t max_body = 9 * 11 + 2 + 11 + 11 + 11 + 10 * nargs;
  // The body is written in place after room for the two length prefixes (packet, call) at
  // their usual one byte each, and moved once its length shows that they need more.
  uint8_t* const out = reinterpret_cast<uint8_t*>(Reserve(2 + 2 * 10 + max_body));
  uint8_t* const body = out + 4;
  uint8_t* p = body;

  const uint32_t call = static_cast<uint32_t>(e.call);
  if (call != 0) {
    *p++ = kTagCall;
    p = PutVarint(call, p);
  }
  const int64_t dseq = static_cast<int64_t>(c.seq - (prev_end_ + 1));
  if (dseq != 0) {
    *p++ = kTagDseq;
    p = PutVarint(ZigZag(dseq), p);
  }
  if (c.end != 0) {
    const uint64_t dend = c.end - c.seq - 1;
    if (dend != 0) {
      *p++ = kTagDend;
      p = PutVarint(dend, p);
    }
  }
  if (e.tid != prev_tid_) {
    *p++ = kTagTid;
    p = PutVarint(e.tid, p);
  }
  // Consecutive events often share their timestamp (a recorder's derived timestamps change
  // once per poll): reuse the last conversion rather than divide again.
  if (e.timestamp_ns != last_ts_ns_ || !last_ts_valid_) {
    last_ts_units_ = unit_ns_ == 1 ? e.timestamp_ns : FloorDiv(e.timestamp_ns, unit_ns_);
    last_ts_ns_ = e.timestamp_ns;
    last_ts_valid_ = true;
  }
  const int64_t ts = last_ts_units_;
  const int64_t dts =
      static_cast<int64_t>(static_cast<uint64_t>(ts) - static_cast<uint64_t>(prev_ts_));
  if (dts != 0) {
    *p++ = kTagDts;
    p = PutVarint(ZigZag(dts), p);
  }
  if (c.parent != 0) {
    *p++ = kTagDparent;
    p = PutVarint(c.seq - c.parent, p);
  }
  if (nargs != 0) {
    *p++ = kTagArgsPacked;
    // Reserve the length prefix for the worst case, shift the values down if it was shorter.
    const size_t len_room = CodedOutputStream::VarintSize64(10 * nargs);
    uint8_t* values = p + len_room;
    uint8_t* q = values;
    const uint64_t* args = e.args.data();
    if (layout.masks_valid && nargs <= 64) {
      for (size_t i = 0; i < nargs; ++i) {
        const uint64_t v = args[i];
        q = PutVarint(((layout.signed_mask >> i) & 1) ? ZigZag(static_cast<int64_t>(v)) : v, q);
      }
    } else {
      VisitArgKinds(layout, absl::MakeConstSpan(args, nargs), [&](size_t i, FieldKind kind) {
        const uint64_t v = args[i];
        q = PutVarint(IsSignedKind(kind) ? ZigZag(static_cast<int64_t>(v)) : v, q);
      });
    }
    const size_t len = static_cast<size_t>(q - values);
    const size_t len_size = CodedOutputStream::VarintSize64(len);
    PutVarint(len, p);
    if (len_size != len_room) std::memmove(p + len_size, values, len);
    p += len_size + len;
  }
  if (e.ret != 0) {
    *p++ = kTagRet;
    p = PutVarint(ZigZag(e.ret), p);
  }
  if (e.annotation != 0) {
    *p++ = kTagAnnotation;
    p = PutVarint(e.annotation, p);
  }
  if (e.end == 0) {
    *p++ = kTagIncomplete;
    *p++ = 1;
  }
  if (c.outer_dparent != 0) {
    *p++ = kTagOuterDparent;
    p = PutVarint(c.outer_dparent, p);
  }
  if (e.content != 0) {
    *p++ = kTagContent;
    p = PutVarint(e.content, p);
  }

  const size_t body_len = static_cast<size_t>(p - body);
  const size_t call_len_size = CodedOutputStream::VarintSize64(body_len);
  const size_t packet_len = 1 + call_len_size + body_len;
  const size_t prefix = 2 + CodedOutputStream::VarintSize64(packet_len) + call_len_size;
  if (__builtin_expect(prefix != 4, 0)) std::memmove(out + prefix, body, body_len);
  uint8_t* o = out;
  *o++ = kTagBodyPacket;
  o = PutVarint(packet_len, o);
  *o++ = kTagPacketCall;
  PutVarint(body_len, o);
  size_ += prefix + body_len;

  if (events_ == 0 || e.seq < min_seq_) min_seq_ = e.seq;
  if (events_ == 0 || e.seq > max_seq_) max_seq_ = e.seq;
  ++events_;
  ++packets_;
  prev_ts_ = ts;
  prev_tid_ = e.tid;
}

void ChunkEncoder::AppendRun(absl::Span<const RunEvent> events) {
  const size_t n = events.size();
  auto plain = [&] {
    for (const RunEvent& r : events) AppendCall(*r.event, *r.layout);
  };
  // Below this many events the PositionRun packet costs more than it can save.
  constexpr size_t kMinRunEvents = 8;
  if (n < kMinRunEvents || 2 * n > kMaxRunPositions) return plain();
  // Quick look for the common case of a thread's leaf calls in order, where the positions
  // are seq, end, seq, end... as they come: count the irregular ones without sorting.
  {
    bool simple = true;
    size_t irregular = 0;
    uint64_t last = events[0].event->seq - 1;
    for (size_t i = 0; i < n && simple; ++i) {
      const Event& e = *events[i].event;
      simple = e.seq > last && e.end > e.seq;
      irregular += (e.seq != last + 1) + (e.end != e.seq + 1);
      last = e.end;
    }
    if (simple && irregular * 16 < 2 * n) return plain();
  }
  refs_.clear();
  for (size_t i = 0; i < n; ++i) {
    const Event& e = *events[i].event;
    refs_.push_back({e.seq, static_cast<uint32_t>(2 * i)});
    if (e.end != 0) refs_.push_back({e.end, static_cast<uint32_t>(2 * i + 1)});
  }
  // One thread's calls in seq order are already sorted unless some are nested.
  bool sorted = true;
  for (size_t k = 1; k < refs_.size() && sorted; ++k) sorted = refs_[k - 1].pos < refs_[k].pos;
  if (!sorted) {
    std::sort(refs_.begin(), refs_.end(),
              [](const PosRef& a, const PosRef& b) { return a.pos < b.pos; });
    for (size_t k = 1; k < refs_.size(); ++k) {
      if (refs_[k - 1].pos == refs_[k].pos) return plain();  // positions must be distinct
    }
  }
  const size_t m = refs_.size();
  // Positions with other positions (another thread's) just before them. When few are, the
  // plain deltas are mostly regular and the list costs more than it saves: measured on
  // recordings of 4 threads, a run pays off from about one such position in 16.
  size_t irregular = 0;
  for (size_t k = 1; k < m; ++k) irregular += refs_[k].pos != refs_[k - 1].pos + 1;
  if (irregular == 0 || irregular * 16 < m) return plain();
  slot_index_.resize(2 * n);
  for (size_t k = 0; k < m; ++k) slot_index_[refs_[k].slot] = static_cast<uint32_t>(k + 1);

  // The PositionRun packet.
  run_body_.resize(1 + 10 + 1 + 10 + 10 * m + 1 + 5);
  uint8_t* const rb = reinterpret_cast<uint8_t*>(run_body_.data());
  uint8_t* q = rb;
  if (refs_[0].pos != 0) {
    *q++ = kTagRunFirst;
    q = PutVarint(refs_[0].pos, q);
  }
  if (m > 1) {
    *q++ = kTagRunGaps;
    uint64_t len = 0;
    for (size_t k = 1; k < m; ++k) {
      len += CodedOutputStream::VarintSize64(refs_[k].pos - refs_[k - 1].pos - 1);
    }
    q = PutVarint(len, q);
    for (size_t k = 1; k < m; ++k) q = PutVarint(refs_[k].pos - refs_[k - 1].pos - 1, q);
  }
  *q++ = kTagRunEvents;
  q = PutVarint(n, q);
  const size_t run_len = static_cast<size_t>(q - rb);
  const size_t packet_len = 1 + CodedOutputStream::VarintSize64(run_len) + run_len;
  uint8_t* o = reinterpret_cast<uint8_t*>(Reserve(2 + 20 + run_len));
  uint8_t* const o_start = o;
  *o++ = kTagBodyPacket;
  o = PutVarint(packet_len, o);
  *o++ = kTagPacketRun;
  o = PutVarint(run_len, o);
  std::memcpy(o, rb, run_len);
  o += run_len;
  size_ += static_cast<size_t>(o - o_start);
  ++packets_;

  // The events, positions as 1-based indices into the run (prev.end = 0 before the first).
  prev_end_ = 0;
  for (size_t i = 0; i < n; ++i) {
    const Event& e = *events[i].event;
    Coded c{slot_index_[2 * i], e.end != 0 ? slot_index_[2 * i + 1] : 0, 0, 0};
    if (e.parent != 0) {
      auto it = std::lower_bound(refs_.begin(), refs_.end(), e.parent,
                                 [](const PosRef& r, uint64_t v) { return r.pos < v; });
      if (it != refs_.end() && it->pos == e.parent) {
        c.parent = static_cast<uint64_t>(it - refs_.begin()) + 1;
      } else {
        c.outer_dparent = e.seq - e.parent;
      }
    }
    EncodeCall(e, *events[i].layout, c);
    prev_end_ = c.end != 0 ? c.end : c.seq;
  }
  const Event& last = *events[n - 1].event;
  prev_end_ = last.end != 0 ? last.end : last.seq;
}

void ChunkEncoder::AppendDef(uint8_t packet_tag, uint64_t id, absl::string_view value) {
  const size_t def_len =
      (id != 0 ? 1 + CodedOutputStream::VarintSize64(id) : 0) +
      (value.empty() ? 0 : 1 + CodedOutputStream::VarintSize64(value.size()) + value.size());
  const size_t packet_len = 1 + CodedOutputStream::VarintSize64(def_len) + def_len;
  uint8_t* o = reinterpret_cast<uint8_t*>(Reserve(2 + 20 + def_len));
  uint8_t* const o_start = o;
  *o++ = kTagBodyPacket;
  o = PutVarint(packet_len, o);
  *o++ = packet_tag;
  o = PutVarint(def_len, o);
  if (id != 0) {
    *o++ = kTagDefId;
    o = PutVarint(id, o);
  }
  if (!value.empty()) {
    *o++ = kTagDefValue;
    o = PutVarint(value.size(), o);
    std::memcpy(o, value.data(), value.size());
    o += value.size();
  }
  size_ += static_cast<size_t>(o - o_start);
  ++packets_;
}

void ChunkEncoder::AppendHandleDef(uint64_t id, absl::string_view token) {
  AppendDef(kTagPacketHandle, id, token);
}

void ChunkEncoder::AppendStringDef(uint64_t id, absl::string_view value) {
  AppendDef(kTagPacketString, id, value);
}

void ChunkEncoder::AppendContentDef(uint64_t id, absl::string_view data) {
  AppendDef(kTagPacketContent, id, data);
}

// ---- ChunkDecoder ----

void ChunkDecoder::Reset(absl::string_view payload, uint32_t timestamp_unit_ns,
                         absl::Span<const CallId> call_map) {
  begin_ = cur_ = reinterpret_cast<const uint8_t*>(payload.data());
  end_ = begin_ + payload.size();
  unit_ns_ = timestamp_unit_ns == 0 ? 1 : timestamp_unit_ns;
  call_map_ = call_map;
  packets_ = events_ = 0;
  prev_end_ = 0;
  prev_ts_ = 0;
  prev_tid_ = 0;
  run_positions_.clear();
  run_remaining_ = 0;
  run_prev_end_ = 0;
  skip_calls_ = false;
}

namespace {
absl::Status Malformed(uint64_t offset, absl::string_view what) {
  return absl::DataLossError(absl::StrFormat("malformed %s at payload offset %d", what, offset));
}
}  // namespace

absl::Status ChunkDecoder::Next(Event* event, DecodedPacket* out) {
  while (cur_ < end_) {
    const uint8_t* start = cur_;
    const uint64_t start_off = static_cast<uint64_t>(start - begin_);
    uint64_t tag;
    if (!ReadVarint(cur_, end_, &tag) || (tag >> 3) == 0) return Malformed(start_off, "tag");
    if (tag != kTagBodyPacket) {
      // A ChunkBody field this reader does not know: skipped, as protobuf would.
      if (!SkipField(tag, cur_, end_)) return Malformed(start_off, "unknown ChunkBody field");
      continue;
    }
    uint64_t len;
    if (!ReadVarint(cur_, end_, &len) || len > static_cast<uint64_t>(end_ - cur_)) {
      return Malformed(start_off, "packet length");
    }
    const uint8_t* p = cur_;
    const uint8_t* const pend = cur_ + len;
    cur_ = pend;
    ++packets_;
    out->payload_offset = start_off;
    out->kind = PacketKind::kUnknown;
    const uint8_t* kind_begin = nullptr;
    const uint8_t* kind_end = nullptr;
    int kinds = 0;
    bool is_run = false;
    while (p < pend) {
      uint64_t ftag;
      if (!ReadVarint(p, pend, &ftag) || (ftag >> 3) == 0) return Malformed(start_off, "packet");
      if (ftag == kTagPacketCall || ftag == kTagPacketHandle || ftag == kTagPacketString ||
          ftag == kTagPacketRun || ftag == kTagPacketContent) {
        uint64_t flen;
        if (!ReadVarint(p, pend, &flen) || flen > static_cast<uint64_t>(pend - p)) {
          return Malformed(start_off, "packet");
        }
        ++kinds;
        is_run = ftag == kTagPacketRun;
        out->kind = ftag == kTagPacketCall      ? PacketKind::kCall
                    : ftag == kTagPacketHandle  ? PacketKind::kHandleDef
                    : ftag == kTagPacketString  ? PacketKind::kStringDef
                    : ftag == kTagPacketContent ? PacketKind::kContentDef
                                                : PacketKind::kUnknown;
        kind_begin = p;
        kind_end = p + flen;
        p += flen;
      } else if (!SkipField(ftag, p, pend)) {
        return Malformed(start_off, "packet field");
      }
    }
    if (kinds > 1) return Malformed(start_off, "packet (more than one kind)");
    if (skip_calls_ && (is_run || out->kind == PacketKind::kCall)) {
      if (out->kind == PacketKind::kCall) {
        ++events_;
        return absl::OkStatus();
      }
      continue;
    }
    if (is_run) {
      // Applies to the CallEvents that follow; not handed to the caller.
      CLTRACE_RETURN_IF_ERROR(DecodeRun(kind_begin, kind_end, start_off));
      continue;
    }
    switch (out->kind) {
      case PacketKind::kCall:
        ++events_;
        return DecodeCall(kind_begin, kind_end, event, out);
      case PacketKind::kHandleDef:
      case PacketKind::kStringDef:
      case PacketKind::kContentDef: {
        out->def_id = 0;
        out->def_value = absl::string_view();
        const uint8_t* q = kind_begin;
        while (q < kind_end) {
          uint64_t ftag, v;
          if (!ReadVarint(q, kind_end, &ftag) || (ftag >> 3) == 0) {
            return Malformed(start_off, "definition");
          }
          if (ftag == kTagDefId) {
            if (!ReadVarint(q, kind_end, &v)) return Malformed(start_off, "definition id");
            out->def_id = v;
          } else if (ftag == kTagDefValue) {
            if (!ReadVarint(q, kind_end, &v) || v > static_cast<uint64_t>(kind_end - q)) {
              return Malformed(start_off, "definition value");
            }
            out->def_value = absl::string_view(reinterpret_cast<const char*>(q), v);
            q += v;
          } else if (!SkipField(ftag, q, kind_end)) {
            return Malformed(start_off, "definition field");
          }
        }
        return absl::OkStatus();
      }
      default:
        return absl::OkStatus();  // kUnknown: a newer packet kind
    }
  }
  if (run_remaining_ != 0) {
    return Malformed(
        static_cast<uint64_t>(cur_ - begin_),
        absl::StrFormat("chunk end: its last position run lacks %d events", run_remaining_));
  }
  out->kind = PacketKind::kEnd;
  out->payload_offset = static_cast<uint64_t>(cur_ - begin_);
  return absl::OkStatus();
}

absl::Status ChunkDecoder::DecodeRun(const uint8_t* p, const uint8_t* end, uint64_t offset) {
  if (run_remaining_ != 0) {
    return Malformed(
        offset, absl::StrFormat("PositionRun (the previous run lacks %d events)", run_remaining_));
  }
  uint64_t first = 0, events = 0;
  const uint8_t* gaps = nullptr;
  const uint8_t* gaps_end = nullptr;
  while (p < end) {
    uint64_t tag, v;
    if (!ReadVarint(p, end, &tag) || (tag >> 3) == 0) return Malformed(offset, "PositionRun");
    if (tag == kTagRunGaps) {
      if (!ReadVarint(p, end, &v) || v > static_cast<uint64_t>(end - p)) {
        return Malformed(offset, "PositionRun.gaps");
      }
      gaps = p;  // last one wins, as for any repeated field read as a whole here
      gaps_end = p + v;
      p += v;
    } else if (tag == kTagRunFirst || tag == kTagRunEvents) {
      if (!ReadVarint(p, end, &v)) return Malformed(offset, "PositionRun varint");
      (tag == kTagRunFirst ? first : events) = v;
    } else if (!SkipField(tag, p, end)) {
      return Malformed(offset, "PositionRun field");
    }
  }
  events = static_cast<uint32_t>(events);  // uint32 field: the low 32 bits
  run_positions_.clear();
  run_positions_.push_back(first);
  uint64_t pos = first;
  for (const uint8_t* g = gaps; g != nullptr && g < gaps_end;) {
    uint64_t gap;
    if (!ReadVarint(g, gaps_end, &gap)) return Malformed(offset, "PositionRun.gaps");
    if (run_positions_.size() >= kMaxRunPositions || gap >= ~pos) {
      return Malformed(offset, "PositionRun.gaps (too many, or past 2^64)");
    }
    pos += gap + 1;
    run_positions_.push_back(pos);
  }
  if (events == 0 || run_positions_.size() > 2 * events) {
    return Malformed(offset, absl::StrFormat("PositionRun (%d positions for %d events)",
                                             run_positions_.size(), events));
  }
  run_remaining_ = events;
  run_prev_end_ = 0;
  return absl::OkStatus();
}

struct ChunkDecoder::CallFields {
  // The varint fields by field number (tag >> 3): the last value read of each, 0 if absent.
  uint64_t by_number[(kTagContent >> 3) + 1] = {};

  uint64_t call() const { return by_number[kTagCall >> 3]; }
  uint64_t dseq() const { return by_number[kTagDseq >> 3]; }
  uint64_t dend() const { return by_number[kTagDend >> 3]; }
  uint32_t tid() const { return static_cast<uint32_t>(by_number[kTagTid >> 3]); }
  uint64_t dts() const { return by_number[kTagDts >> 3]; }
  uint64_t dparent() const { return by_number[kTagDparent >> 3]; }
  uint64_t ret() const { return by_number[kTagRet >> 3]; }
  uint64_t annotation() const { return by_number[kTagAnnotation >> 3]; }
  bool incomplete() const { return by_number[kTagIncomplete >> 3] != 0; }
  uint64_t outer_dparent() const { return by_number[kTagOuterDparent >> 3]; }
  uint64_t content() const { return by_number[kTagContent >> 3]; }
};

namespace {

// The catalog's signed args of `call` are written zigzagged.
void UnZigZagSignedArgs(CallId call, decltype(Event::args)* event_args) {
  uint64_t* args = event_args->data();
  const size_t n = event_args->size();
  const CallLayout& layout = LayoutOf(call);
  if (layout.masks_valid && n <= 64) {
    for (uint64_t m = layout.signed_mask & (n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1);
         m != 0; m &= m - 1) {
      const int i = __builtin_ctzll(m);
      args[i] = static_cast<uint64_t>(UnZigZag(args[i]));
    }
  } else {
    VisitArgKinds(layout, absl::MakeConstSpan(args, n), [args](size_t i, FieldKind kind) {
      if (IsSignedKind(kind)) args[i] = static_cast<uint64_t>(UnZigZag(args[i]));
    });
  }
}

}  // namespace

bool ChunkDecoder::ReadCallFields(const uint8_t* p, const uint8_t* end, CallFields* f,
                                  decltype(Event::args)* args, const char** what) {
  while (p < end) {
    uint64_t tag, v;
    if (*p < 0x80) {
      tag = *p++;
    } else if (!ReadVarint(p, end, &tag)) {
      *what = "CallEvent tag";
      return false;
    }
    if (tag == kTagArgsPacked) {
      uint64_t len;
      *what = "CallEvent.args";
      if (!ReadVarint(p, end, &len) || len > static_cast<uint64_t>(end - p)) return false;
      const uint8_t* ae = p + len;
      while (p < ae) {
        if (!ReadVarint(p, ae, &v) || args->size() >= kMaxEventArgs) return false;
        args->push_back(v);
      }
      continue;
    }
    if ((tag & 7) != 0 || tag > kTagContent) {
      if ((tag >> 3) == 0 || !SkipField(tag, p, end)) {
        *what = "CallEvent field";
        return false;
      }
      continue;
    }
    if (!ReadVarint(p, end, &v)) {
      *what = "CallEvent varint";
      return false;
    }
    if (tag == kTagArgsSingle) {
      if (args->size() >= kMaxEventArgs) {
        *what = "CallEvent.args";
        return false;
      }
      args->push_back(v);
    } else {
      f->by_number[tag >> 3] = v;  // tag <= kTagContent (checked above)
    }
  }
  return true;
}

absl::Status ChunkDecoder::PlaceCall(const CallFields& f, Event* e, uint64_t offset) {
  if (run_remaining_ == 0) {
    if (f.outer_dparent() != 0) {
      return Malformed(offset, "CallEvent.outer_dparent (outside a position run)");
    }
    e->seq = prev_end_ + 1 + static_cast<uint64_t>(UnZigZag(f.dseq()));
    e->end = f.incomplete() ? 0 : e->seq + 1 + f.dend();
    e->parent = f.dparent() != 0 ? e->seq - f.dparent() : 0;
    prev_end_ = f.incomplete() ? e->seq : e->end;
    return absl::OkStatus();
  }
  // Positions are 1-based indices into the run (FORMAT.md §3.7).
  const uint64_t m = run_positions_.size();
  const uint64_t seq_i = run_prev_end_ + 1 + static_cast<uint64_t>(UnZigZag(f.dseq()));
  if (seq_i == 0 || seq_i > m) {
    return Malformed(offset, "CallEvent.dseq (outside its position run)");
  }
  const uint64_t end_i = f.incomplete() ? 0 : seq_i + 1 + f.dend();
  if (!f.incomplete() && (end_i == 0 || end_i > m)) {
    return Malformed(offset, "CallEvent.dend (outside its position run)");
  }
  if (f.dparent() != 0 && f.outer_dparent() != 0) {
    return Malformed(offset, "CallEvent (both dparent and outer_dparent)");
  }
  const uint64_t parent_i = seq_i - f.dparent();
  if (f.dparent() != 0 && (parent_i == 0 || parent_i > m)) {
    return Malformed(offset, "CallEvent.dparent (outside its position run)");
  }
  e->seq = run_positions_[seq_i - 1];
  e->end = f.incomplete() ? 0 : run_positions_[end_i - 1];
  e->parent = f.dparent() != 0         ? run_positions_[parent_i - 1]
              : f.outer_dparent() != 0 ? e->seq - f.outer_dparent()
                                       : 0;
  run_prev_end_ = f.incomplete() ? seq_i : end_i;
  if (--run_remaining_ == 0) prev_end_ = f.incomplete() ? e->seq : e->end;
  return absl::OkStatus();
}

absl::Status ChunkDecoder::DecodeCall(const uint8_t* p, const uint8_t* end, Event* e,
                                      DecodedPacket* out) {
  CallFields f;
  f.by_number[kTagTid >> 3] = prev_tid_;
  e->args.clear();
  const char* what = nullptr;
  if (!ReadCallFields(p, end, &f, &e->args, &what)) return Malformed(out->payload_offset, what);
  // proto3 reads uint32 fields from the low 32 bits of the varint.
  out->file_call = static_cast<uint32_t>(f.call());
  const CallId mapped =
      out->file_call < call_map_.size() ? call_map_[out->file_call] : CallId::kInvalid;
  e->call = mapped;
  if (absl::Status s = PlaceCall(f, e, out->payload_offset); !s.ok()) return s;
  e->tid = f.tid();
  const int64_t ts = static_cast<int64_t>(static_cast<uint64_t>(prev_ts_) +
                                          static_cast<uint64_t>(UnZigZag(f.dts())));
  e->timestamp_ns = static_cast<int64_t>(static_cast<uint64_t>(ts) * unit_ns_);
  e->ret = UnZigZag(f.ret());
  e->annotation = f.annotation();
  if (f.content() > UINT32_MAX) {
    return Malformed(out->payload_offset, "CallEvent.content (id beyond 2^32 - 1)");
  }
  e->content = static_cast<uint32_t>(f.content());
  if (mapped != CallId::kInvalid && !e->args.empty()) UnZigZagSignedArgs(mapped, &e->args);
  prev_ts_ = ts;
  prev_tid_ = f.tid();
  return absl::OkStatus();
}

}  // namespace cltrace::format
