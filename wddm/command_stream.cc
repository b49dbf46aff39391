#include "wddm/command_stream.h"

#include <cstring>
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace cltrace::gpu {
namespace {

// Payload layout of each opcode, one character per field, in encoding order:
//   r = allocation reference (refs[next]); v = value (2 words); o = offset; s = src_offset;
//   z = size; c = vertex_count; t = start_vertex; i = instance_count;
//   n = input count followed by that many references (refs[1..]);
//   p = every remaining word of the command (payload).
struct OpcodeInfo {
  Opcode op;
  const char* layout;
  const char* name;
};

constexpr OpcodeInfo kOpcodes[] = {
    {Opcode::kNop, "", "nop"},
    {Opcode::kClear, "rv", "clear"},
    {Opcode::kUpdate, "rozv", "update"},
    {Opcode::kCopy, "rr", "copy"},
    {Opcode::kCopyRegion, "rorsz", "copy_region"},
    {Opcode::kDraw, "rvctin", "draw"},
    {Opcode::kMarker, "v", "marker"},
    {Opcode::kPrivate, "p", "private"},
    {Opcode::kFence, "v", "fence"},
    {Opcode::kPresentBlt, "rr", "present_blt"},
    {Opcode::kPagingTransfer, "rrz", "paging_transfer"},
    {Opcode::kPagingFill, "rzv", "paging_fill"},
};

// The entry of opcode `op`; nullptr for an unknown one.
const OpcodeInfo* InfoOf(uint8_t op) {
  for (const OpcodeInfo& info : kOpcodes) {
    if (static_cast<uint8_t>(info.op) == op) return &info;
  }
  return nullptr;
}

const char* Layout(uint8_t op) {
  const OpcodeInfo* info = InfoOf(op);
  return info == nullptr ? nullptr : info->layout;
}

// A command of `op` on `refs` with `value`, its other fields 0.
Command Make(Opcode op, std::initializer_list<uint64_t> refs, uint64_t value = 0) {
  Command c;
  c.op = op;
  c.refs = refs;
  c.value = value;
  return c;
}

uint32_t RefWords(CommandFormat f) { return f == CommandFormat::kUser ? 1 : 2; }

uint32_t* Field32(Command& c, char k) {
  switch (k) {
    case 'o':
      return &c.offset;
    case 's':
      return &c.src_offset;
    case 'z':
      return &c.size;
    case 'c':
      return &c.vertex_count;
    case 't':
      return &c.start_vertex;
    case 'i':
      return &c.instance_count;
  }
  return nullptr;
}

}  // namespace

Command Command::Clear(uint64_t dst, uint64_t value) { return Make(Opcode::kClear, {dst}, value); }

Command Command::Update(uint64_t dst, uint32_t offset, uint32_t size, uint64_t data_digest) {
  Command c = Make(Opcode::kUpdate, {dst}, data_digest);
  c.offset = offset;
  c.size = size;
  return c;
}

Command Command::Copy(uint64_t dst, uint64_t src) { return Make(Opcode::kCopy, {dst, src}); }

Command Command::CopyRegion(uint64_t dst, uint32_t dst_offset, uint64_t src, uint32_t src_offset,
                            uint32_t size) {
  Command c = Make(Opcode::kCopyRegion, {dst, src});
  c.offset = dst_offset;
  c.src_offset = src_offset;
  c.size = size;
  return c;
}

Command Command::Draw(uint64_t target, absl::Span<const uint64_t> inputs, uint64_t state,
                      uint32_t vertex_count, uint32_t start_vertex, uint32_t instance_count) {
  Command c = Make(Opcode::kDraw, {target}, state);
  c.refs.insert(c.refs.end(), inputs.begin(), inputs.end());
  c.vertex_count = vertex_count;
  c.start_vertex = start_vertex;
  c.instance_count = instance_count;
  return c;
}

Command Command::Marker(uint64_t value) { return Make(Opcode::kMarker, {}, value); }

Command Command::Private(absl::Span<const uint32_t> words) {
  Command c = Make(Opcode::kPrivate, {});
  c.payload.assign(words.begin(), words.end());
  return c;
}

Command Command::Fence(uint64_t fence_id) { return Make(Opcode::kFence, {}, fence_id); }

Command Command::PresentBlt(uint64_t dst, uint64_t src) {
  return Make(Opcode::kPresentBlt, {dst, src});
}

Command Command::PagingTransfer(uint64_t dst, uint64_t src, uint32_t size) {
  Command c = Make(Opcode::kPagingTransfer, {dst, src});
  c.size = size;
  return c;
}

Command Command::PagingFill(uint64_t dst, uint32_t size, uint64_t pattern) {
  Command c = Make(Opcode::kPagingFill, {dst}, pattern);
  c.size = size;
  return c;
}

bool IsUserOpcode(Opcode op) {
  return static_cast<uint8_t>(op) < 0x40 && Layout(static_cast<uint8_t>(op));
}

bool IsKnownOpcode(uint8_t op) { return Layout(op) != nullptr; }

std::string OpcodeName(uint8_t op) {
  const OpcodeInfo* info = InfoOf(op);
  return info != nullptr ? info->name : absl::StrFormat("op0x%02x", op);
}

uint32_t EncodedWords(const Command& c, CommandFormat format) {
  const char* layout = Layout(static_cast<uint8_t>(c.op));
  if (layout == nullptr) return 0;
  uint32_t words = 1;
  for (const char* k = layout; *k; ++k) {
    switch (*k) {
      case 'r':
        words += RefWords(format);
        break;
      case 'v':
        words += 2;
        break;
      case 'n':
        words += 1 + RefWords(format) * static_cast<uint32_t>(c.refs.size() - 1);
        break;
      case 'p':
        words += static_cast<uint32_t>(c.payload.size());
        break;
      default:
        words += 1;
    }
  }
  return words;
}

bool EncodeCommand(const Command& c, CommandFormat format, absl::Span<uint32_t> out,
                   std::vector<uint32_t>* ref_word_offsets) {
  const char* layout = Layout(static_cast<uint8_t>(c.op));
  uint32_t words = EncodedWords(c, format);
  if (layout == nullptr || words > out.size() || words > 0xFFFF) return false;
  Command tmp = c;  // Field32 needs a mutable Command; encoding does not change it
  size_t w = 0;
  out[w++] = static_cast<uint32_t>(c.op) | (words << 8);
  size_t next_ref = 0;
  auto put_ref = [&](uint64_t ref) {
    if (ref_word_offsets) ref_word_offsets->push_back(static_cast<uint32_t>(w));
    out[w++] = static_cast<uint32_t>(ref);
    if (format == CommandFormat::kDma) out[w++] = static_cast<uint32_t>(ref >> 32);
  };
  for (const char* k = layout; *k; ++k) {
    switch (*k) {
      case 'r':
        put_ref(c.refs[next_ref++]);
        break;
      case 'v':
        out[w++] = static_cast<uint32_t>(c.value);
        out[w++] = static_cast<uint32_t>(c.value >> 32);
        break;
      case 'n':
        out[w++] = static_cast<uint32_t>(c.refs.size() - 1);
        while (next_ref < c.refs.size()) put_ref(c.refs[next_ref++]);
        break;
      case 'p':
        for (uint32_t v : c.payload) out[w++] = v;
        break;
      default:
        out[w++] = *Field32(tmp, *k);
    }
  }
  return true;
}

void AppendCommand(const Command& c, CommandFormat format, std::vector<uint32_t>* out,
                   std::vector<uint32_t>* ref_word_offsets) {
  size_t base = out->size();
  out->resize(base + EncodedWords(c, format));
  std::vector<uint32_t> local;
  EncodeCommand(c, format, absl::MakeSpan(*out).subspan(base), ref_word_offsets ? &local : nullptr);
  if (ref_word_offsets) {
    for (uint32_t off : local) ref_word_offsets->push_back(static_cast<uint32_t>(base + off));
  }
}

absl::StatusOr<uint32_t> DecodeCommand(absl::Span<const uint32_t> words, size_t pos,
                                       CommandFormat format, Command* out) {
  const size_t byte_offset = pos * 4;
  if (pos >= words.size()) {
    return absl::OutOfRangeError(absl::StrCat("no command at byte offset ", byte_offset));
  }
  uint32_t header = words[pos];
  uint8_t op = static_cast<uint8_t>(header & 0xFF);
  uint32_t length = (header >> 8) & 0xFFFF;
  const char* layout = Layout(op);
  if (layout == nullptr || (header >> 24) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("illegal instruction 0x%08x at byte offset %u", header, byte_offset));
  }
  if (format == CommandFormat::kUser && !IsUserOpcode(static_cast<Opcode>(op))) {
    return absl::PermissionDeniedError(
        absl::StrCat("privileged instruction ", OpcodeName(op), " at byte offset ", byte_offset));
  }
  if (length == 0 || length > words.size() - pos) {
    return absl::OutOfRangeError(absl::StrCat(OpcodeName(op), " at byte offset ", byte_offset,
                                              " claims ", length, " words; ", words.size() - pos,
                                              " remain"));
  }
  Command c;
  c.op = static_cast<Opcode>(op);
  c.refs.clear();
  size_t w = pos + 1;
  const size_t end = pos + length;
  auto need = [&](size_t n) { return w + n <= end; };
  auto get_ref = [&]() {
    uint64_t v = words[w++];
    if (format == CommandFormat::kDma) v |= static_cast<uint64_t>(words[w++]) << 32;
    return v;
  };
  const uint32_t rw = RefWords(format);
  for (const char* k = layout; *k; ++k) {
    bool ok = true;
    switch (*k) {
      case 'r':
        ok = need(rw);
        if (ok) c.refs.push_back(get_ref());
        break;
      case 'v':
        ok = need(2);
        if (ok) {
          c.value = words[w] | (static_cast<uint64_t>(words[w + 1]) << 32);
          w += 2;
        }
        break;
      case 'n': {
        ok = need(1);
        if (!ok) break;
        uint32_t n = words[w++];
        if (n > kMaxDrawInputs) {
          return absl::OutOfRangeError(absl::StrCat("draw at byte offset ", byte_offset, " has ", n,
                                                    " inputs; at most ", kMaxDrawInputs));
        }
        ok = need(static_cast<size_t>(n) * rw);
        for (uint32_t i = 0; ok && i < n; ++i) c.refs.push_back(get_ref());
        break;
      }
      case 'p':
        c.payload.assign(words.begin() + w, words.begin() + end);
        w = end;
        break;
      default:
        ok = need(1);
        if (ok) *Field32(c, *k) = words[w++];
    }
    if (!ok) break;
  }
  if (w != end || EncodedWords(c, format) != length) {
    return absl::OutOfRangeError(absl::StrCat(OpcodeName(op), " at byte offset ", byte_offset,
                                              ": header length ", length,
                                              " words does not match its operands"));
  }
  *out = std::move(c);
  return length;
}

std::string FormatCommand(const Command& c) {
  auto ref = [](uint64_t r) { return absl::StrFormat("@%x", r); };
  std::string s = OpcodeName(static_cast<uint8_t>(c.op));
  switch (c.op) {
    case Opcode::kNop:
      break;
    case Opcode::kClear:
      absl::StrAppendFormat(&s, " dst=%s value=0x%x", ref(c.refs[0]), c.value);
      break;
    case Opcode::kUpdate:
      absl::StrAppendFormat(&s, " dst=%s off=%u size=%u data=%016x", ref(c.refs[0]), c.offset,
                            c.size, c.value);
      break;
    case Opcode::kCopy:
    case Opcode::kPresentBlt:
      absl::StrAppendFormat(&s, " dst=%s src=%s", ref(c.refs[0]), ref(c.refs[1]));
      break;
    case Opcode::kCopyRegion:
      absl::StrAppendFormat(&s, " dst=%s+%u src=%s+%u size=%u", ref(c.refs[0]), c.offset,
                            ref(c.refs[1]), c.src_offset, c.size);
      break;
    case Opcode::kDraw: {
      std::vector<std::string> ins;
      for (size_t i = 1; i < c.refs.size(); ++i) ins.push_back(ref(c.refs[i]));
      absl::StrAppendFormat(&s, " rt=%s in=[%s] state=%016x vc=%u sv=%u ic=%u", ref(c.refs[0]),
                            absl::StrJoin(ins, ","), c.value, c.vertex_count, c.start_vertex,
                            c.instance_count);
      break;
    }
    case Opcode::kMarker:
    case Opcode::kFence:
      absl::StrAppendFormat(&s, " %u", c.value);
      break;
    case Opcode::kPrivate:
      absl::StrAppendFormat(&s, " words=%u", c.payload.size());
      break;
    case Opcode::kPagingTransfer:
      absl::StrAppendFormat(&s, " dst=%s src=%s size=%u", ref(c.refs[0]), ref(c.refs[1]), c.size);
      break;
    case Opcode::kPagingFill:
      absl::StrAppendFormat(&s, " dst=%s size=%u value=0x%x", ref(c.refs[0]), c.size, c.value);
      break;
  }
  return s;
}

}  // namespace cltrace::gpu
