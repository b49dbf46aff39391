#include "check/lifecycle.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ddi/catalog.h"

namespace cltrace::check {
namespace {

absl::string_view CallName(format::CallId c) {
  const format::CallInfo* ci = format::GetCall(c);
  return ci ? absl::string_view(ci->name) : absl::string_view("?");
}

// Collects transitions into lifetimes keyed by (role, lifetime number). Streaming (a sink):
// only the lifetimes `wanted` are held, and each is handed to the sink once it is over and
// every lifetime that began before it was handed on (order of first transition).
class Collector : public TransitionObserver {
 public:
  Collector() = default;
  Collector(LifecycleBuilder::Wanted wanted, LifecycleBuilder::Sink sink)
      : wanted_(std::move(wanted)), sink_(std::move(sink)) {}

  void OnTransition(const TransitionEvent& t) override {
    uint64_t key = Key(t.role, t.lifetime);
    auto it = index_.find(key);
    if (it == index_.end()) {
      if (wanted_ && !wanted_(t)) return;
      it = index_.emplace(key, base_ + lifetimes_.size()).first;
      lifetimes_.emplace_back();
      Lifetime& l = lifetimes_.back().l;
      l.role = t.role;
      l.handle = t.handle;
      l.lifetime = t.lifetime;
      l.ic_handle = t.ic_handle;
      l.recording = t.recording;
    }
    Lifetime& l = lifetimes_[it->second - base_].l;
    l.context = t.context;
    if (!l.intervals.empty()) l.intervals.back().to_seq = t.seq;
    Interval iv;
    iv.state = t.to;
    iv.from_seq = t.seq;
    iv.cause = t.call;
    iv.dc_table = t.dc_table;
    iv.context = t.context;
    l.intervals.push_back(iv);
  }

  void OnRetired(HandleRole role, uint32_t lifetime) override {
    // A closed local handle is over when it ended (OnLocalEnded), not when the checker
    // dropped its record.
    if (role == HandleRole::kLocal) return;
    Over(role, lifetime);
  }

  void OnLocalEnded(uint32_t lifetime, uint64_t seq) override {
    auto it = index_.find(Key(HandleRole::kLocal, lifetime));
    if (it == index_.end()) return;
    Lifetime& l = lifetimes_[it->second - base_].l;
    if (!l.intervals.empty()) l.intervals.back().to_seq = seq;
    Over(HandleRole::kLocal, lifetime);
  }

  // Streaming: hands every lifetime still held to the sink, in order.
  void Drain() {
    while (!lifetimes_.empty()) Pop();
  }
  // The lifetimes held (all of them without a sink).
  size_t held() const { return lifetimes_.size(); }

  std::vector<Lifetime> Take() {
    std::vector<Lifetime> out;
    out.reserve(lifetimes_.size());
    for (Entry& e : lifetimes_) out.push_back(std::move(e.l));
    lifetimes_.clear();
    return out;
  }

 private:
  struct Entry {
    Lifetime l;
    bool over = false;
  };
  void Over(HandleRole role, uint32_t lifetime) {
    if (!sink_) return;
    auto it = index_.find(Key(role, lifetime));
    if (it == index_.end()) return;
    lifetimes_[it->second - base_].over = true;
    while (!lifetimes_.empty() && lifetimes_.front().over) Pop();
  }
  static uint64_t Key(HandleRole role, uint32_t lifetime) {
    return (static_cast<uint64_t>(role) << 32) | lifetime;
  }
  void Pop() {
    Lifetime& l = lifetimes_.front().l;
    index_.erase(Key(l.role, l.lifetime));
    sink_(l);
    lifetimes_.pop_front();
    ++base_;
  }

  LifecycleBuilder::Wanted wanted_;
  LifecycleBuilder::Sink sink_;
  absl::flat_hash_map<uint64_t, size_t> index_;  // key -> position (base_ = the front's)
  std::deque<Entry> lifetimes_;
  size_t base_ = 0;
};

}  // namespace

const Interval* Lifetime::At(uint64_t seq) const {
  for (const Interval& iv : intervals)
    if (iv.from_seq <= seq && (iv.to_seq == 0 || seq < iv.to_seq)) return &iv;
  return nullptr;
}

std::vector<const Lifetime*> Lifecycle::Of(uint64_t handle) const {
  std::vector<const Lifetime*> out;
  for (const Lifetime& l : lifetimes)
    if (l.handle == handle) out.push_back(&l);
  return out;
}

struct LifecycleBuilder::State {
  State(const CheckOptions& options, Wanted wanted, Sink sink)
      : collector(std::move(wanted), std::move(sink)), checker(options) {
    checker.set_observer(&collector);
  }
  Collector collector;
  Checker checker;
};

LifecycleBuilder::LifecycleBuilder(const format::TokenTable& handles, TraceReplay replay,
                                   const CheckOptions& options)
    : LifecycleBuilder(handles, std::move(replay), options, nullptr, nullptr) {}

LifecycleBuilder::LifecycleBuilder(const format::TokenTable& handles, TraceReplay replay,
                                   const CheckOptions& options, Wanted wanted, Sink sink)
    : s_(std::make_unique<State>(options, std::move(wanted), std::move(sink))) {
  s_->checker.Begin(handles, std::move(replay));
}

size_t LifecycleBuilder::lifetimes_held() const { return s_->collector.held(); }
size_t LifecycleBuilder::records_held() const { return s_->checker.records_held(); }

LifecycleBuilder::~LifecycleBuilder() = default;

absl::Status LifecycleBuilder::Add(const format::Event& e) { return s_->checker.Add(e); }

Lifecycle LifecycleBuilder::Finish() {
  Lifecycle lc;
  lc.check = s_->checker.Finish();
  lc.calls = lc.check.calls;
  lc.lifetimes = s_->collector.Take();
  return lc;
}

Lifecycle LifecycleBuilder::FinishStream() {
  Lifecycle lc;
  lc.check = s_->checker.Finish();
  lc.calls = lc.check.calls;
  s_->collector.Drain();
  return lc;
}

absl::StatusOr<Lifecycle> AnalyzeLifecycle(absl::Span<const format::Event> events,
                                           const format::TokenTable& handles,
                                           const CheckOptions& options) {
  Collector collector;
  Checker checker(options);
  checker.set_observer(&collector);
  absl::StatusOr<CheckResult> check = checker.Run(events, handles);
  if (!check.ok()) return check.status();
  Lifecycle lc;
  lc.calls = check->calls;
  lc.check = *std::move(check);
  lc.lifetimes = collector.Take();
  return lc;
}

std::string FormatLifetime(const Lifetime& l, const format::TokenTable& handles) {
  auto tok = [&](uint64_t h) {
    absl::string_view t = handles.Token(h);
    return t.empty() ? std::string("?") : std::string(t);
  };
  std::string out = absl::StrCat(RoleName(l.role), " ", tok(l.handle), " #", l.lifetime);
  switch (l.role) {
    case HandleRole::kCommandList:
      if (l.context) absl::StrAppend(&out, " (owner DC ", tok(l.context), ")");
      break;
    case HandleRole::kLocal:
      absl::StrAppend(&out, " (for ", tok(l.ic_handle), " on DC ", tok(l.context), ", recording ",
                      l.recording, ")");
      break;
    default:
      break;
  }
  out += "\n";
  for (const Interval& iv : l.intervals) {
    std::string range = absl::StrCat("[", iv.from_seq, ", ",
                                     iv.to_seq ? absl::StrCat(iv.to_seq) : std::string("end"), ")");
    if (iv.cause == format::CallId::kInvalid) {
      absl::StrAppend(
          &out, absl::StrFormat("  %-16s %-20s (before the trace)", range, StateName(iv.state)));
    } else {
      absl::StrAppend(&out, absl::StrFormat("  %-16s %-20s by %s%s", range, StateName(iv.state),
                                            iv.dc_table ? "DC::" : "", CallName(iv.cause)));
    }
    if (l.role == HandleRole::kCommandList && iv.context && iv.context != l.context)
      absl::StrAppend(&out, " (owner DC ", tok(iv.context), ")");
    out += "\n";
  }
  return out;
}

}  // namespace cltrace::check
