#include "format/normalize.h"

#include <stdio.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "ddi/catalog.h"
#include "format/status_macros.h"
#include "format/trace_writer.h"

namespace cltrace::format {
namespace {

// "0x1a2b" -> 0x1a2b; nullopt for anything else (hand-written names, decimal).
std::optional<uint64_t> HexToken(absl::string_view token) {
  if (!absl::StartsWith(token, "0x") || token.size() < 3 || token.size() > 18) return std::nullopt;
  uint64_t v = 0;
  if (!absl::SimpleHexAtoi(token.substr(2), &v)) return std::nullopt;
  return v;
}

bool IsAddress(uint64_t v) { return v > 0xffffffffu; }

// Everything derived from first appearance, in seq order.
class Renumbering {
 public:
  uint64_t Address(uint64_t raw) {
    auto [it, inserted] = addresses_.try_emplace(raw, 0);
    if (inserted)
      it->second = kNormalizedAddressBase + addresses_.size() * kNormalizedAddressStride;
    return it->second;
  }
  uint32_t Tid(uint32_t tid) {
    auto [it, inserted] = tids_.try_emplace(tid, 0);
    if (inserted) it->second = static_cast<uint32_t>(tids_.size());
    return it->second;
  }
  // Free text (annotations: the recorder's notes print table slots and handles with %p):
  // every "0x<hex>" address in it renumbered like the fields.
  std::string Text(absl::string_view text) {
    std::string out;
    size_t i = 0;
    while (i < text.size()) {
      const size_t at = text.find("0x", i);
      if (at == absl::string_view::npos) break;
      size_t end = at + 2;
      while (end < text.size() && absl::ascii_isxdigit(static_cast<unsigned char>(text[end]))) {
        ++end;
      }
      absl::StrAppend(&out, text.substr(i, end - i));
      std::optional<uint64_t> v = HexToken(text.substr(at, end - at));
      if (v && IsAddress(*v)) {
        out.resize(out.size() - (end - at));
        absl::StrAppendFormat(&out, "0x%x", Address(*v));
      }
      i = end;
    }
    absl::StrAppend(&out, text.substr(i));
    return out;
  }
  std::string Token(absl::string_view token) {
    std::optional<uint64_t> v = HexToken(token);
    if (!v || !IsAddress(*v)) return std::string(token);
    return absl::StrFormat("0x%x", Address(*v));
  }

 private:
  absl::flat_hash_map<uint64_t, uint64_t> addresses_;
  absl::flat_hash_map<uint32_t, uint32_t> tids_;
};

// Visits every field of `args`: the fixed fields, then the elements of every array.
template <typename Fn>
void ForEachField(const CallInfo& call, absl::Span<const uint64_t> args, Fn&& fn) {
  absl::Span<const FieldInfo> fixed = Fields(call);
  for (size_t i = 0; i < fixed.size() && i < args.size(); ++i) fn(fixed[i], i);
  size_t cursor = fixed.size();
  for (size_t i = 0; i < fixed.size() && i < args.size(); ++i) {
    if (fixed[i].kind != FieldKind::kArray || args[i] == 0) continue;
    absl::Span<const FieldInfo> elems = ElementFields(fixed[i]);
    for (uint64_t e = 0; e + 1 < args[i]; ++e) {
      for (const FieldInfo& f : elems) {
        if (cursor >= args.size()) return;
        fn(f, cursor++);
      }
    }
  }
}

// An absolute path's base name; anything else as is.
std::string BaseIfPath(const std::string& s) {
  if (s.empty() || s[0] != '/') return s;
  return s.substr(s.rfind('/') + 1);
}

}  // namespace

absl::StatusOr<std::string> NormalizeTrace(const LoadedTrace& trace) {
  const proto::TraceHeader& in = trace.header;
  TraceWriter::Options o;
  o.background = false;
  o.position_runs = in.format_version() >= 2;
  if (in.timestamp_unit_ns() != 0) o.timestamp_unit_ns = in.timestamp_unit_ns();
  o.writer = in.writer();
  o.writer.clear_timestamps();  // they become seq x the unit, which readers recognise
  o.process.set_pid(0);
  o.process.set_executable(BaseIfPath(in.process().executable()));
  for (const std::string& a : in.process().argv()) o.process.add_argv(BaseIfPath(a));
  o.process.set_driver(BaseIfPath(in.process().driver()));
  o.start_unix_ns = 0;

  std::string bytes;
  CLTRACE_ASSIGN_OR_RETURN(std::unique_ptr<TraceWriter> w,
                           TraceWriter::Open(std::make_unique<StringSink>(&bytes), o));
  Renumbering renumber;
  std::vector<Event> events;
  events.reserve(trace.events.size());
  for (const Event& src : trace.events) {
    Event e = src;
    e.tid = renumber.Tid(src.tid);
    e.timestamp_ns = static_cast<int64_t>(src.seq) * o.timestamp_unit_ns;
    e.annotation = src.annotation == 0
                       ? 0
                       : w->InternString(renumber.Text(trace.strings.Token(src.annotation)));
    e.content = src.content == 0 ? 0 : w->InternContent(trace.contents.Token(src.content));
    const CallInfo* call = GetCall(src.call);
    if (call == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "seq ", src.seq, ": call id ", static_cast<int>(src.call), " is not in this catalog"));
    }
    absl::Status bad;
    ForEachField(*call, src.args, [&](const FieldInfo& f, size_t i) {
      const uint64_t v = src.args[i];
      switch (f.kind) {
        case FieldKind::kHandle:
          if (v == 0) break;
          if (!trace.handles.Has(v)) {
            bad = absl::InvalidArgumentError(
                absl::StrCat("seq ", src.seq, ": ", f.name, " names undefined handle id ", v));
            break;
          }
          e.args[i] = w->InternHandleToken(renumber.Token(trace.handles.Token(v)));
          break;
        case FieldKind::kPtr:
          if (IsAddress(v)) e.args[i] = renumber.Address(v);
          break;
        case FieldKind::kString:
          if (v != 0) e.args[i] = w->InternString(renumber.Text(trace.strings.Token(v)));
          break;
        default:
          break;
      }
    });
    if (!bad.ok()) return bad;
    events.push_back(std::move(e));
  }
  // Consecutive events of one thread form a run (AppendRun is AppendBatch in version 1).
  for (size_t start = 0; start < events.size();) {
    size_t end = start + 1;
    while (end < events.size() && events[end].tid == events[start].tid) ++end;
    CLTRACE_RETURN_IF_ERROR(w->AppendRun(absl::MakeConstSpan(events).subspan(start, end - start)));
    start = end;
  }
  CLTRACE_RETURN_IF_ERROR(w->Close());
  return bytes;
}

absl::Status NormalizeTraceFile(const std::string& in_path, const std::string& out_path) {
  CLTRACE_ASSIGN_OR_RETURN(LoadedTrace trace, ReadAllSorted(in_path));
  if (trace.torn_tail >= 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(in_path, ": torn tail at offset ", trace.torn_tail,
                     " (an incomplete recording; normalising it would hide the tear)"));
  }
  CLTRACE_ASSIGN_OR_RETURN(std::string bytes, NormalizeTrace(trace));
  const std::string tmp = absl::StrCat(out_path, ".tmp");
  {
    CLTRACE_ASSIGN_OR_RETURN(std::unique_ptr<ByteSink> sink, OpenFileSink(tmp));
    CLTRACE_RETURN_IF_ERROR(sink->Write(bytes));
    CLTRACE_RETURN_IF_ERROR(sink->Flush());
  }
  if (rename(tmp.c_str(), out_path.c_str()) != 0) {
    remove(tmp.c_str());
    return absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", out_path));
  }
  return absl::OkStatus();
}

}  // namespace cltrace::format
