#include "cli/trace_walk.h"

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "check/check_trace.h"
#include "ddi/catalog.h"
#include "format/trace.pb.h"

namespace cltrace::cli {
namespace {

using check::HandleRole;
using check::State;

bool Exported(HandleRole role) {
  return role == HandleRole::kCommandList || role == HandleRole::kDeferredContext ||
         role == HandleRole::kLocal;
}

bool Final(State s) { return s == State::kDestroyed || s == State::kCreateFailed; }

struct OpenCall {
  WalkExit exit;
  int64_t children_exit_ns = 0;  // the latest exit of a call made inside it
};

// The checker's observer: transitions and the table of device calls, collected while one
// event is added and handed on after it.
class Observer : public check::TransitionObserver {
 public:
  void OnTransition(const check::TransitionEvent& t) override {
    if (t.from == State::kNone && t.call != format::CallId::kInvalid && t.handle != 0 &&
        keep_creations) {
      std::vector<uint64_t>& v = creations[t.handle];
      if (v.empty() || v.back() < t.seq) v.push_back(t.seq);
    }
    if (Exported(t.role)) transitions.push_back(t);
  }
  // Handed on as a transition to kNone (Walk::Transition: the lifetime ends there).
  bool WantsEndings() const override { return true; }
  void OnLocalEnded(uint32_t lifetime, uint64_t seq) override {
    check::TransitionEvent t{};
    t.role = check::HandleRole::kLocal;
    t.from = State::kClosedLocal;
    t.to = State::kNone;
    t.lifetime = lifetime;
    t.seq = seq;
    t.call = format::CallId::kInvalid;
    transitions.push_back(t);
  }
  void OnDeviceCall(const format::Event& e, bool dc_table) override {
    if (e.seq == current_seq) dc = dc_table;
  }

  bool keep_creations = false;
  absl::flat_hash_map<uint64_t, std::vector<uint64_t>> creations;
  std::vector<check::TransitionEvent> transitions;
  uint64_t current_seq = 0;
  bool dc = false;
};

// R5 is judged from the recorder's notes in the trace's string table, as `cltrace check` does.
check::CheckOptions WithStrings(check::CheckOptions options, const format::SeqStream& in) {
  if (options.strings == nullptr) options.strings = &in.strings();
  return options;
}

struct LiveLifetime {
  WalkLifetime lifetime;
  WalkInterval current;
};

class Walk {
 public:
  Walk(format::SeqStream& in, check::TraceReplay replay, const check::CheckOptions& options,
       TraceWalkVisitor* visitor)
      : in_(in), replay_(std::move(replay)), checker_(WithStrings(options, in)), visitor_(visitor) {
    observer_.keep_creations = in.dense_positions();
    checker_.set_observer(&observer_);
    checker_.Begin(in.handles(), replay_);
    unit_ns_ =
        in.format() == format::TraceFileFormat::kCltrace ? in.header().timestamp_unit_ns() : 0;
  }

  absl::StatusOr<WalkSummary> Run(const std::function<void()>& progress) {
    format::Event e;
    bool first = true;
    while (in_.Next(&e)) {
      if (first) {
        summary_.first_ns = e.timestamp_ns;
        first = false;
      }
      absl::Status st = Add(e);
      if (!st.ok()) return st;
      if (progress) progress();
    }
    if (!in_.status().ok()) return summary_;  // the caller reports where reading stopped
    absl::Status st = Finish();
    if (!st.ok()) return st;
    return summary_;
  }

 private:
  absl::Status Add(const format::Event& e) {
    ++summary_.calls;
    threads_.insert(e.tid);
    if (e.timestamp_ns != 0) all_zero_ = false;
    if (unit_ns_ == 0 || e.timestamp_ns != static_cast<int64_t>(e.seq * unit_ns_))
      positions_ = false;
    // Calls that returned before this one was entered.
    absl::Status st = CloseUpTo(e.seq, e.timestamp_ns);
    if (!st.ok()) return st;
    now_ns_ = std::max(now_ns_, e.timestamp_ns);
    observer_.current_seq = e.seq;
    observer_.dc = false;
    observer_.transitions.clear();
    st = checker_.Add(e);
    if (!st.ok()) return st;
    const format::CallInfo* ci = format::GetCall(e.call);
    absl::string_view table = LayerTableName(e.call);
    if (ci != nullptr && ci->layer == format::Layer::kDevice) table = observer_.dc ? "DC" : "IC";
    st = visitor_->OnCall(e, table);
    if (!st.ok()) return st;
    OpenCall open;
    open.exit.seq = e.seq;
    open.exit.end = e.end;
    open.exit.parent = e.parent;
    open.exit.tid = e.tid;
    open.exit.call = e.call;
    open.exit.table = table;
    open.exit.ret = e.ret;
    open.exit.entry_ns = e.timestamp_ns;
    open_.emplace(e.seq, open);
    if (e.end != 0) {
      ends_.emplace_back(e.end, e.seq);
      std::push_heap(ends_.begin(), ends_.end(), std::greater<>());
    }
    for (const check::TransitionEvent& t : observer_.transitions) {
      st = Transition(t, e);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  int64_t TimeAt(uint64_t seq, const format::Event& current) const {
    if (seq == current.seq) return current.timestamp_ns;
    auto it = open_.find(seq);
    return it != open_.end() ? it->second.exit.entry_ns : now_ns_;
  }

  absl::Status Transition(const check::TransitionEvent& t, const format::Event& e) {
    const uint64_t key = (static_cast<uint64_t>(t.role) << 32) | t.lifetime;
    const int64_t ns = TimeAt(t.seq, e);
    auto it = live_.find(key);
    if (t.to == State::kNone) {
      // A closed local handle whose memory was recycled or whose DC went: over.
      if (it == live_.end()) return absl::OkStatus();
      LiveLifetime& l = it->second;
      l.current.to_seq = t.seq;
      l.current.to_ns = std::max(ns, l.current.from_ns);
      absl::Status st = visitor_->OnInterval(l.lifetime, l.current);
      if (st.ok()) st = visitor_->OnLifetimeEnd(l.lifetime, l.current.state, /*destroyed=*/true);
      live_.erase(it);
      return st;
    }
    if (it == live_.end()) {
      LiveLifetime l;
      l.lifetime.role = t.role;
      l.lifetime.handle = t.handle;
      l.lifetime.lifetime = t.lifetime;
      l.lifetime.ic_handle = t.ic_handle;
      l.lifetime.recording = t.recording;
      l.lifetime.track = ++summary_.lifetimes;
      l.lifetime.first_seq = t.seq;
      l.lifetime.context = t.context;
      it = live_.emplace(key, l).first;
      absl::Status st = visitor_->OnLifetimeStart(it->second.lifetime);
      if (!st.ok()) return st;
    } else {
      WalkInterval& done = it->second.current;
      done.to_seq = t.seq;
      done.to_ns = std::max(ns, done.from_ns);
      absl::Status st = visitor_->OnInterval(it->second.lifetime, done);
      if (!st.ok()) return st;
    }
    LiveLifetime& l = it->second;
    l.lifetime.context = t.context;
    l.current = WalkInterval();
    l.current.state = t.to;
    l.current.from_seq = t.seq;
    l.current.from_ns = ns;
    l.current.cause = t.call;
    l.current.dc_table = t.dc_table;
    l.current.context = t.context;
    if (!Final(t.to)) return absl::OkStatus();
    // A destroyed lifetime has no more intervals: hand it on and forget it.
    l.current.to_ns = ns;
    absl::Status st = visitor_->OnInterval(l.lifetime, l.current);
    if (st.ok()) st = visitor_->OnLifetimeEnd(l.lifetime, t.to, /*destroyed=*/true);
    live_.erase(it);
    return st;
  }

  // Exits every open call whose end position is below `seq`, at time `ns`.
  absl::Status CloseUpTo(uint64_t seq, int64_t ns) {
    while (!ends_.empty() && ends_.front().first < seq) {
      std::pop_heap(ends_.begin(), ends_.end(), std::greater<>());
      const uint64_t call_seq = ends_.back().second;
      ends_.pop_back();
      absl::Status st = Exit(call_seq, ns);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  absl::Status Exit(uint64_t call_seq, int64_t ns) {
    auto it = open_.find(call_seq);
    if (it == open_.end()) return absl::OkStatus();
    OpenCall c = it->second;
    open_.erase(it);
    c.exit.exit_ns = std::max({ns, c.exit.entry_ns, c.children_exit_ns});
    if (c.exit.parent != 0) {
      auto p = open_.find(c.exit.parent);
      if (p != open_.end())
        p->second.children_exit_ns = std::max(p->second.children_exit_ns, c.exit.exit_ns);
    }
    return visitor_->OnExit(c.exit);
  }

  absl::Status Finish() {
    summary_.last_ns = now_ns_;
    summary_.threads = threads_.size();
    // Calls whose exit no later call follows, then those that never returned (innermost
    // first: the latest entry first).
    absl::Status st = CloseUpTo(UINT64_MAX, now_ns_);
    if (!st.ok()) return st;
    std::vector<uint64_t> never;
    for (const auto& [seq, c] : open_) never.push_back(seq);
    std::sort(never.rbegin(), never.rend());
    for (uint64_t seq : never) {
      st = Exit(seq, now_ns_);
      if (!st.ok()) return st;
    }
    // Lifetimes alive at the end, by track.
    std::vector<LiveLifetime*> alive;
    for (auto& [key, l] : live_) alive.push_back(&l);
    std::sort(alive.begin(), alive.end(), [](const LiveLifetime* a, const LiveLifetime* b) {
      return a->lifetime.track < b->lifetime.track;
    });
    for (LiveLifetime* l : alive) {
      l->current.to_seq = 0;
      l->current.to_ns = std::max(now_ns_, l->current.from_ns);
      st = visitor_->OnInterval(l->lifetime, l->current);
      if (st.ok()) st = visitor_->OnLifetimeEnd(l->lifetime, l->current.state, false);
      if (!st.ok()) return st;
    }
    live_.clear();

    check::CheckResult result = checker_.Finish();
    // The findings' exit positions (for the holes of a recording) and entry times: one more
    // pass over the trace, only when there are findings.
    struct Where {
      uint64_t end = 0;
      int64_t ns = 0;
      bool seen = false;
    };
    absl::flat_hash_map<uint64_t, Where> where;
    for (const auto* list : {&result.violations, &result.warnings})
      for (const check::Violation& v : *list) where.emplace(v.seq, Where());
    if (!where.empty() && replay_) {
      (void)replay_([&](const format::Event& e) {
        auto it = where.find(e.seq);
        if (it != where.end() && !it->second.seen) it->second = {e.end, e.timestamp_ns, true};
      });
    }
    const format::PositionGaps& gaps = in_.gaps();
    if (observer_.keep_creations && !gaps.holes.empty()) {
      // As check::StreamCheck::Finish.
      check::WithholdAcrossGaps(
          gaps,
          [&](uint64_t seq) -> uint64_t {
            auto it = where.find(seq);
            return it == where.end() ? 0 : it->second.end;
          },
          observer_.creations, &result);
    }
    summary_.violations = result.violations.size();
    summary_.warnings = result.warnings.size();
    summary_.dropped_findings = result.dropped_findings;
    for (const auto* list : {&result.violations, &result.warnings}) {
      for (const check::Violation& v : *list) {
        auto it = where.find(v.seq);
        st = visitor_->OnFinding(
            v, it != where.end() && it->second.seen ? it->second.ns : summary_.first_ns);
        if (!st.ok()) return st;
      }
    }
    summary_.timestamps = Timestamps();
    return absl::OkStatus();
  }

  TimestampInfo Timestamps() const {
    TimestampInfo t;
    if (in_.format() == format::TraceFileFormat::kCltrace) {
      switch (in_.header().writer().timestamps()) {
        case format::proto::TIMESTAMPS_CLOCK:
          t.source = "clock";
          break;
        case format::proto::TIMESTAMPS_DERIVED:
          t.source = "derived";
          break;
        default:
          break;
      }
    }
    if (t.source.empty()) {
      if (summary_.calls == 0 || all_zero_) {
        t.source = "none";
      } else if (positions_) {
        t.source = "positions";
      } else {
        t.source = "unknown";
      }
    }
    t.derived = t.source != "clock" && t.source != "unknown";
    return t;
  }

  format::SeqStream& in_;
  check::TraceReplay replay_;
  check::Checker checker_;
  TraceWalkVisitor* visitor_;
  Observer observer_;
  WalkSummary summary_;
  uint64_t unit_ns_ = 0;
  bool all_zero_ = true;
  bool positions_ = true;
  int64_t now_ns_ = 0;
  absl::flat_hash_set<uint32_t> threads_;
  absl::flat_hash_map<uint64_t, OpenCall> open_;
  std::vector<std::pair<uint64_t, uint64_t>> ends_;  // min-heap of (end, seq)
  absl::flat_hash_map<uint64_t, LiveLifetime> live_;
};

}  // namespace

absl::string_view LayerTableName(format::CallId call) {
  const format::CallInfo* ci = format::GetCall(call);
  if (ci == nullptr) return "?";
  switch (ci->layer) {
    case format::Layer::kAdapter:
      return "Adapter";
    case format::Layer::kDevice:
      return "IC";
    case format::Layer::kDxgi:
      return "DXGI";
    case format::Layer::kCoreLayer:
      return "CoreCb";
    case format::Layer::kKernelCb:
      return "KernelCb";
    case format::Layer::kKmd:
      return "KMD";
    case format::Layer::kDxgkrnl:
      return "Dxgkrnl";
    case format::Layer::kDx6:
      return "DX6";
    case format::Layer::kApi:
      return "API";
  }
  return "?";
}

absl::string_view RoleShortName(check::HandleRole role) {
  switch (role) {
    case HandleRole::kCommandList:
      return "CL";
    case HandleRole::kDeferredContext:
      return "DC";
    case HandleRole::kLocal:
      return "Local";
    case HandleRole::kImmediateContext:
      return "IC";
    case HandleRole::kObject:
      return "Object";
  }
  return "?";
}

absl::StatusOr<WalkSummary> WalkTrace(format::SeqStream& in, check::TraceReplay replay,
                                      const check::CheckOptions& options, TraceWalkVisitor* visitor,
                                      const std::function<void()>& progress) {
  Walk walk(in, std::move(replay), options, visitor);
  return walk.Run(progress);
}

}  // namespace cltrace::cli
