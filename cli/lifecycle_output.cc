#include "cli/lifecycle_output.h"

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "check/lifecycle.h"
#include "cli/json_out.h"
#include "cli/verb.h"
#include "ddi/catalog.h"

namespace cltrace::cli {

ArgSpec LifecycleArgSpec(const char* usage) {
  return ArgSpec("lifecycle", usage)
      .Options({"--handle", "--at"})
      .Flags({"--json", "--salvage", "--quiet"})
      .Positional(1, 1);
}

int RunLifecycle(const LifecycleOptions& options, absl::Span<const format::Event> events,
                 const format::TokenTable& handles, std::ostream& out, std::ostream& err) {
  absl::StatusOr<uint64_t> want = LifecycleHandle(options, handles);
  if (!want.ok()) {
    err << want.status().message() << "\n";
    return kExitBadInput;
  }
  absl::StatusOr<check::Lifecycle> lc = check::AnalyzeLifecycle(events, handles, options.check);
  if (!lc.ok()) {
    err << "cltrace lifecycle: " << lc.status().message() << "\n";
    return kExitBadInput;
  }
  return PrintLifecycle(*lc, *want, handles, out);
}

absl::StatusOr<uint64_t> LifecycleHandle(const LifecycleOptions& options,
                                         const format::TokenTable& handles) {
  if (options.handle.empty()) return 0;
  int64_t id = handles.Find(options.handle);
  if (id <= 0) {
    return absl::NotFoundError(
        absl::StrCat("cltrace lifecycle: no handle \"", options.handle, "\" in the trace"));
  }
  return static_cast<uint64_t>(id);
}

int PrintLifecycle(const check::Lifecycle& lifecycle, uint64_t want,
                   const format::TokenTable& handles, std::ostream& out) {
  const check::Lifecycle* lc = &lifecycle;
  size_t shown = 0;
  for (const check::Lifetime& l : lc->lifetimes) {
    if (want != 0 && l.handle != want && l.ic_handle != want) continue;
    // Objects are many and uninteresting unless asked for.
    if (want == 0 && l.role == check::HandleRole::kObject) continue;
    out << check::FormatLifetime(l, handles);
    ++shown;
  }
  out << "# " << shown << " lifetimes, " << lc->calls << " calls\n";
  return kExitOk;
}

bool IsLiveState(check::State state) {
  switch (state) {
    case check::State::kNone:
    case check::State::kDestroyed:
    case check::State::kCreateFailed:
    case check::State::kRecycleDestroyed:
    case check::State::kRecycleCreateFailed:  // T7e: X' (the runtime need not destroy it)
    case check::State::kClosedLocal:
      return false;
    default:
      return true;
  }
}

std::string FormatLiveHandle(const check::TransitionEvent& t, const format::TokenTable& handles) {
  auto tok = [&](uint64_t h) {
    absl::string_view s = handles.Token(h);
    return s.empty() ? std::string("?") : std::string(s);
  };
  std::string line = absl::StrCat(check::RoleName(t.role), " ", tok(t.handle), " #", t.lifetime,
                                  " ", check::StateName(t.to));
  if (t.call == format::CallId::kInvalid) {
    absl::StrAppend(&line, " since before the trace");
  } else {
    const format::CallInfo* ci = format::GetCall(t.call);
    absl::StrAppend(&line, " since seq=", t.seq, " by ", t.dc_table ? "DC::" : "",
                    ci != nullptr ? ci->name : "?");
  }
  if (t.role == check::HandleRole::kCommandList && t.context != 0)
    absl::StrAppend(&line, " (owner DC ", tok(t.context), ")");
  if (t.role == check::HandleRole::kLocal)
    absl::StrAppend(&line, " (for ", tok(t.ic_handle), " on DC ", tok(t.context), ", recording ",
                    t.recording, ")");
  return line;
}

int PrintLiveAt(const check::Lifecycle& lifecycle, uint64_t seq, uint64_t want,
                const format::TokenTable& handles, std::ostream& out) {
  size_t shown = 0;
  for (const check::Lifetime& l : lifecycle.lifetimes) {
    if (want != 0 && l.handle != want && l.ic_handle != want) continue;
    const check::Interval* iv = l.At(seq);
    if (iv == nullptr || !IsLiveState(iv->state)) continue;
    check::TransitionEvent t{};
    t.role = l.role;
    t.to = iv->state;
    t.lifetime = l.lifetime;
    t.handle = l.handle;
    t.seq = iv->from_seq;
    t.call = iv->cause;
    t.dc_table = iv->dc_table;
    t.context = l.role == check::HandleRole::kCommandList ? iv->context : l.context;
    t.ic_handle = l.ic_handle;
    t.recording = l.recording;
    out << FormatLiveHandle(t, handles) << "\n";
    ++shown;
  }
  out << "# " << shown << " handles alive at seq " << seq << "\n";
  return kExitOk;
}

void LiveHandles::OnTransition(const check::TransitionEvent& t) {
  const std::pair<int, uint32_t> key{static_cast<int>(t.role), t.lifetime};
  if (IsLiveState(t.to)) {
    live_.insert_or_assign(key, t);
  } else {
    live_.erase(key);
  }
}

void LiveHandles::PrintLeaks(const format::TokenTable& handles, std::ostream& out) const {
  if (live_.empty()) return;
  std::vector<const check::TransitionEvent*> sorted;
  for (const auto& [key, t] : live_) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    return std::tie(a->seq, a->role, a->lifetime) < std::tie(b->seq, b->role, b->lifetime);
  });
  for (const check::TransitionEvent* t : sorted)
    out << "leak: " << FormatLiveHandle(*t, handles) << "\n";
  out << "# " << sorted.size() << " handles alive at the end of the trace (not a violation)\n";
}

void LiveAt::OnTransition(const check::TransitionEvent& t) {
  const std::pair<int, uint32_t> key{static_cast<int>(t.role), t.lifetime};
  if (t.to == check::State::kDestroyed || t.to == check::State::kCreateFailed) {
    current_.erase(key);  // over: alive nowhere after this
    return;
  }
  auto [it, inserted] = current_.try_emplace(key);
  if (inserted) it->second.order = next_order_++;
  it->second.last = t;
}

void LiveAt::OnLocalEnded(uint32_t lifetime, uint64_t seq) {
  (void)seq;
  current_.erase(std::pair<int, uint32_t>{static_cast<int>(check::HandleRole::kLocal), lifetime});
}

int LiveAt::Print(uint64_t seq, uint64_t want, const format::TokenTable& handles,
                  std::ostream& out) const {
  std::vector<const Current*> alive;
  for (const auto& [key, c] : current_) {
    if (want != 0 && c.last.handle != want && c.last.ic_handle != want) continue;
    if (IsLiveState(c.last.to)) alive.push_back(&c);
  }
  std::sort(alive.begin(), alive.end(),
            [](const Current* a, const Current* b) { return a->order < b->order; });
  for (const Current* c : alive) out << FormatLiveHandle(c->last, handles) << "\n";
  out << "# " << alive.size() << " handles alive at seq " << seq << "\n";
  return kExitOk;
}

namespace {

// One lifetime as `lifecycle --json` writes it; `for_each` visits its intervals and `flush`
// is called between them (the writer's buffer may be emptied there).
template <typename ForEach, typename Flush>
void WriteLifetimeJson(const check::Lifetime& l, const format::TokenTable& handles,
                       JsonOut::Writer& w, ForEach for_each, Flush flush) {
  auto tok = [&](uint64_t h) {
    absl::string_view t = handles.Token(h);
    return t.empty() ? std::string("?") : std::string(t);
  };
  auto key = [&](absl::string_view k) {
    w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
  };
  auto str = [&](absl::string_view k, absl::string_view v) {
    key(k);
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  };
  w.StartObject();
  str("role", check::RoleName(l.role));
  str("handle", tok(l.handle));
  key("lifetime");
  w.Uint64(l.lifetime);
  if (l.role == check::HandleRole::kCommandList && l.context != 0) str("owner_dc", tok(l.context));
  if (l.role == check::HandleRole::kLocal) {
    str("for", tok(l.ic_handle));
    str("dc", tok(l.context));
    key("recording");
    w.Uint64(l.recording);
  }
  key("intervals");
  w.StartArray();
  for_each([&](const check::Interval& iv) {
    w.StartObject();
    str("state", check::StateName(iv.state));
    key("from");
    w.Uint64(iv.from_seq);
    key("to");  // null: until the end of the trace
    if (iv.to_seq != 0) {
      w.Uint64(iv.to_seq);
    } else {
      w.Null();
    }
    key("by");  // null: already in this state when the trace began
    const format::CallInfo* ci = format::GetCall(iv.cause);
    if (iv.cause == format::CallId::kInvalid || ci == nullptr) {
      w.Null();
    } else {
      const std::string by = absl::StrCat(iv.dc_table ? "DC::" : "", ci->name);
      w.String(by.data(), static_cast<rapidjson::SizeType>(by.size()));
    }
    if (l.role == check::HandleRole::kCommandList && iv.context != 0 && iv.context != l.context)
      str("owner_dc", tok(iv.context));
    w.EndObject();
    flush();
  });
  w.EndArray();
  w.EndObject();
}

}  // namespace

bool LifecycleJsonShown(const check::Lifetime& l, uint64_t want) {
  // The text's selection: objects only for --handle.
  if (want != 0) return l.handle == want || l.ic_handle == want;
  return l.role != check::HandleRole::kObject;
}

int PrintLifecycleJson(const check::Lifecycle& lifecycle, uint64_t want,
                       const format::TokenTable& handles, std::ostream& out) {
  LifecycleJsonStream stream(handles);
  for (const check::Lifetime& l : lifecycle.lifetimes)
    if (LifecycleJsonShown(l, want)) stream.Add(l);
  return stream.Finish(lifecycle.calls, out);
}

LifecycleJsonStream::LifecycleJsonStream(const format::TokenTable& handles)
    : handles_(handles), spill_(std::tmpfile()) {}

LifecycleJsonStream::~LifecycleJsonStream() {
  if (spill_ != nullptr) std::fclose(spill_);
}

void LifecycleJsonStream::Add(const check::Lifetime& l) {
  rapidjson::StringBuffer buffer;
  JsonOut::Writer w(buffer);
  WriteLifetimeJson(
      l, handles_, w,
      [&](auto fn) {
        for (const check::Interval& iv : l.intervals) fn(iv);
      },
      [] {});
  if (shown_++ != 0) Put(",");
  Put(absl::string_view(buffer.GetString(), buffer.GetSize()));
}

absl::Status LifecycleJsonStream::Add(const check::StreamedLifetime& l) {
  if (shown_++ != 0) Put(",");
  rapidjson::StringBuffer buffer;
  JsonOut::Writer w(buffer);
  absl::Status read;
  // The writer keeps only its nesting: its buffer goes out whenever it grows past 64 KiB.
  auto flush = [&] {
    Put(absl::string_view(buffer.GetString(), buffer.GetSize()));
    buffer.Clear();
  };
  WriteLifetimeJson(
      l.lifetime(), handles_, w,
      [&](auto fn) { read = l.ForEachInterval([&](const check::Interval& iv) { fn(iv); }); },
      [&] {
        if (buffer.GetSize() >= (size_t{1} << 16)) flush();
      });
  flush();
  return read;
}

absl::Status WriteLifetime(const check::StreamedLifetime& l, const format::TokenTable& handles,
                           std::ostream& out) {
  out << check::FormatLifetimeHeader(l.lifetime(), handles);
  return l.ForEachInterval(
      [&](const check::Interval& iv) { out << check::FormatInterval(l.lifetime(), iv, handles); });
}

LifecycleSpillCounters& LifecycleSpillForTesting() {
  static LifecycleSpillCounters counters;
  return counters;
}

void LifecycleJsonStream::Put(absl::string_view s) {
  if (spill_ != nullptr) {
    if (std::fwrite(s.data(), 1, s.size(), spill_) == s.size()) return;
    spill_failed_ = true;
    return;
  }
  held_.append(s.data(), s.size());  // no temporary file: held in memory
}

int LifecycleJsonStream::Finish(uint64_t calls, std::ostream& out) {
  out << "{\"calls\":" << calls << ",\"lifetimes\":[";
  if (spill_ != nullptr) {
    std::rewind(spill_);
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), spill_)) > 0) out.write(buf, n);
  } else {
    out << held_;
  }
  out << "],\"shown\":" << shown_ << "}\n";
  return spill_failed_ ? kExitBadInput : kExitOk;
}

}  // namespace cltrace::cli
