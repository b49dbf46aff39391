#include "cli/lifecycle_output.h"

#include <algorithm>
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

int PrintLifecycleJson(const check::Lifecycle& lifecycle, uint64_t want,
                       const format::TokenTable& handles, std::ostream& out) {
  auto tok = [&](uint64_t h) {
    absl::string_view t = handles.Token(h);
    return t.empty() ? std::string("?") : std::string(t);
  };
  JsonOut j;
  j.Begin();
  j.Field("calls", lifecycle.calls);
  j.Key("lifetimes");
  j.w().StartArray();
  uint64_t shown = 0;
  for (const check::Lifetime& l : lifecycle.lifetimes) {
    // The text's selection: objects only for --handle.
    if (want != 0 && l.handle != want && l.ic_handle != want) continue;
    if (want == 0 && l.role == check::HandleRole::kObject) continue;
    ++shown;
    j.w().StartObject();
    j.Field("role", check::RoleName(l.role));
    j.Field("handle", tok(l.handle));
    j.Field("lifetime", l.lifetime);
    if (l.role == check::HandleRole::kCommandList && l.context != 0)
      j.Field("owner_dc", tok(l.context));
    if (l.role == check::HandleRole::kLocal) {
      j.Field("for", tok(l.ic_handle));
      j.Field("dc", tok(l.context));
      j.Field("recording", l.recording);
    }
    j.Key("intervals");
    j.w().StartArray();
    for (const check::Interval& iv : l.intervals) {
      j.w().StartObject();
      j.Field("state", check::StateName(iv.state));
      j.Field("from", iv.from_seq);
      j.Key("to");  // null: until the end of the trace
      if (iv.to_seq != 0) {
        j.w().Uint64(iv.to_seq);
      } else {
        j.w().Null();
      }
      j.Key("by");  // null: already in this state when the trace began
      const format::CallInfo* ci = format::GetCall(iv.cause);
      if (iv.cause == format::CallId::kInvalid || ci == nullptr) {
        j.w().Null();
      } else {
        j.Str(absl::StrCat(iv.dc_table ? "DC::" : "", ci->name));
      }
      if (l.role == check::HandleRole::kCommandList && iv.context != 0 && iv.context != l.context)
        j.Field("owner_dc", tok(iv.context));
      j.w().EndObject();
    }
    j.w().EndArray();
    j.w().EndObject();
  }
  j.w().EndArray();
  j.Field("shown", shown);
  j.End(out);
  return kExitOk;
}

}  // namespace cltrace::cli
