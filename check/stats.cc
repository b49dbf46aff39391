#include "check/stats.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ddi/catalog.h"

namespace cltrace::check {
namespace {

absl::string_view CallName(format::CallId c) {
  const format::CallInfo* ci = format::GetCall(c);
  return ci ? absl::string_view(ci->name) : absl::string_view("?");
}

bool IsCallback(format::Layer l) {
  return l == format::Layer::kCoreLayer || l == format::Layer::kKernelCb ||
         l == format::Layer::kDxgkrnl;
}

// Which of the four alive columns a (role, state) counts in; -1 for none.
int Column(HandleRole role, State s) {
  if (s == State::kNone) return -1;
  switch (role) {
    case HandleRole::kCommandList:
      return s == State::kValid || s == State::kRecycleDestroyed || s == State::kRecycled ||
                     s == State::kRecycleCreateFailed
                 ? 0
                 : -1;
    case HandleRole::kDeferredContext:
      return s == State::kDestroyed || s == State::kCreateFailed ? -1 : 1;
    case HandleRole::kObject:
      return s == State::kAlive ? 2 : -1;
    case HandleRole::kLocal:
      return s == State::kOpen ? 3 : -1;
    default:
      return -1;
  }
}

class StatsObserver : public TransitionObserver {
 public:
  StatsObserver(TraceStats* s, absl::Span<const format::Event> events)
      : s_(s), events_(events), dc_table_(events.size(), 0) {}

  void OnTransition(const TransitionEvent& t) override {
    int from = Column(t.role, t.from);
    int to = Column(t.role, t.to);
    if (from != to) {
      if (from >= 0) --live_[from];
      if (to >= 0) ++live_[to];
      deltas_.push_back({t.seq, from, to});
    }
    if (t.role == HandleRole::kCommandList) {
      const format::CallInfo* ci = format::GetCall(t.call);
      absl::string_view fn = ci ? ci->name : "";
      if (t.to == State::kValid && fn == "CreateCommandList") ++s_->creates;
      if (t.to == State::kValid && fn == "RecycleCreateCommandList") ++s_->recycle_creates;
      if (t.to == State::kRecycleCreateFailed) ++s_->recycle_create_failures;
      if (t.to == State::kCreateFailed) ++s_->create_failures;
      if (t.to == State::kRecycleDestroyed) ++s_->recycle_destroys;
      if (t.to == State::kDestroyed) ++s_->destroys;
      if (t.to == State::kRecycled) ++drained_[t.context];
    } else if (t.role == HandleRole::kDeferredContext) {
      if (t.to == State::kClosed || t.to == State::kFinishFailed) {
        if (t.to == State::kClosed) {
          ++s_->finishes;
        } else {
          ++s_->failed_finishes;
        }
        ++s_->recycled_per_finish[drained_[t.handle]];
        drained_[t.handle] = 0;
      }
      if (t.to == State::kAbandoned) ++s_->abandons;
      if (t.to == State::kRecording) drained_[t.handle] = 0;
    }
  }

  void OnDeviceCall(const format::Event& e, bool dc_table) override {
    size_t i = static_cast<size_t>(&e - events_.data());
    if (i < dc_table_.size()) dc_table_[i] = dc_table ? 2 : 1;
    if (CallName(e.call) == "CommandListExecute") {
      if (dc_table) {
        ++s_->nested_executes;
      } else {
        ++s_->ic_executes;
      }
    }
  }

  void Finish(uint32_t samples) {
    // Alive over time: replay the deltas against evenly spaced sample positions.
    uint64_t first = events_.empty() ? 0 : events_.front().seq;
    uint64_t last = events_.empty() ? 0 : events_.back().seq;
    samples = std::max<uint32_t>(samples, 1);
    int32_t live[4] = {0, 0, 0, 0};
    size_t d = 0;
    for (uint32_t k = 0; k < samples; ++k) {
      uint64_t at = samples == 1 ? last : first + (last - first) * k / (samples - 1);
      for (; d < deltas_.size() && deltas_[d].seq <= at; ++d) Apply(deltas_[d], live);
      s_->alive.push_back(Sample(at, live));
    }
    int32_t cur[4] = {0, 0, 0, 0};
    for (const Delta& x : deltas_) {
      Apply(x, cur);
      if (static_cast<uint32_t>(cur[0]) > s_->peak.command_lists) {
        s_->peak.command_lists = cur[0];
        s_->peak.seq = x.seq;
      }
      s_->peak.deferred_contexts = std::max<uint32_t>(s_->peak.deferred_contexts, cur[1]);
      s_->peak.objects = std::max<uint32_t>(s_->peak.objects, cur[2]);
      s_->peak.locals = std::max<uint32_t>(s_->peak.locals, cur[3]);
    }
    // Callbacks per DDI.
    absl::flat_hash_map<std::pair<std::string, std::string>, uint64_t> counts;
    for (const format::Event& e : events_) {
      const format::CallInfo* ci = format::GetCall(e.call);
      if (ci == nullptr || !IsCallback(ci->layer)) continue;
      std::string ddi = "(none)";
      uint64_t p = e.parent;
      while (p != 0) {
        auto it = std::lower_bound(events_.begin(), events_.end(), p,
                                   [](const format::Event& x, uint64_t s) { return x.seq < s; });
        if (it == events_.end() || it->seq != p) break;
        const format::CallInfo* pi = format::GetCall(it->call);
        if (pi != nullptr && !IsCallback(pi->layer)) {
          uint8_t t = dc_table_[it - events_.begin()];
          ddi = absl::StrCat(t == 2 ? "DC::" : t == 1 ? "IC::" : "", pi->name);
          break;
        }
        p = it->parent;
      }
      ++counts[{ddi, ci->name}];
    }
    for (auto& [key, n] : counts) s_->callbacks.push_back({key.first, key.second, n});
    std::sort(s_->callbacks.begin(), s_->callbacks.end(),
              [](const CallbackCount& a, const CallbackCount& b) {
                if (a.count != b.count) return a.count > b.count;
                if (a.ddi != b.ddi) return a.ddi < b.ddi;
                return a.callback < b.callback;
              });
  }

 private:
  struct Delta {
    uint64_t seq;
    int from;
    int to;
  };
  static void Apply(const Delta& x, int32_t* live) {
    if (x.from >= 0) --live[x.from];
    if (x.to >= 0) ++live[x.to];
  }
  static AliveSample Sample(uint64_t seq, const int32_t* live) {
    AliveSample s;
    s.seq = seq;
    s.command_lists = static_cast<uint32_t>(std::max(live[0], 0));
    s.deferred_contexts = static_cast<uint32_t>(std::max(live[1], 0));
    s.objects = static_cast<uint32_t>(std::max(live[2], 0));
    s.locals = static_cast<uint32_t>(std::max(live[3], 0));
    return s;
  }

  TraceStats* s_;
  absl::Span<const format::Event> events_;
  std::vector<uint8_t> dc_table_;  // per event: 0 not a device call, 1 IC, 2 DC
  int32_t live_[4] = {0, 0, 0, 0};
  std::vector<Delta> deltas_;
  absl::flat_hash_map<uint64_t, uint32_t> drained_;  // DC handle -> RecycleCommandList count
};

}  // namespace

double TraceStats::recycled_per_finish_mean() const {
  uint64_t n = 0, sum = 0;
  for (const auto& [k, v] : recycled_per_finish) {
    n += v;
    sum += static_cast<uint64_t>(k) * v;
  }
  return n ? static_cast<double>(sum) / static_cast<double>(n) : 0.0;
}

absl::StatusOr<TraceStats> ComputeStats(absl::Span<const format::Event> events,
                                        const format::TokenTable& handles, uint32_t samples) {
  TraceStats stats;
  StatsObserver observer(&stats, events);
  CheckOptions options;
  options.max_findings = 0;  // only the transitions are wanted
  Checker checker(options);
  checker.set_observer(&observer);
  absl::StatusOr<CheckResult> r = checker.Run(events, handles);
  if (!r.ok()) return r.status();
  stats.calls = r->calls;
  observer.Finish(samples);
  return stats;
}

}  // namespace cltrace::check
