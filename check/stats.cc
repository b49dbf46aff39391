#include "check/stats.h"

#include <algorithm>
#include <functional>
#include <memory>
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
  StatsObserver(TraceStats* s, size_t max_deltas) : s_(s), max_deltas_(max_deltas) {}

  // Before the checker sees `e` (seq order): remembers it while it is open (a callback made in
  // it looks it up) and forgets the calls that returned before it.
  void Enter(const format::Event& e) {
    auto later = std::greater<std::pair<uint64_t, uint64_t>>();
    while (!ends_.empty() && ends_.front().first < e.seq) {
      std::pop_heap(ends_.begin(), ends_.end(), later);
      open_.erase(ends_.back().second);
      ends_.pop_back();
    }
    open_[e.seq] = {e.call, e.parent, 0};
    if (e.end != 0) {
      ends_.emplace_back(e.end, e.seq);
      std::push_heap(ends_.begin(), ends_.end(), later);
    }
    if (calls_++ == 0) first_ = e.seq;
    last_ = e.seq;
  }

  // After the checker saw `e`: a callback counts under the DDI call it was made in.
  void Leave(const format::Event& e) {
    const format::CallInfo* ci = format::GetCall(e.call);
    if (ci == nullptr || !IsCallback(ci->layer)) return;
    std::string ddi = "(none)";
    uint64_t p = e.parent;
    while (p != 0) {
      auto it = open_.find(p);
      if (it == open_.end()) break;
      const format::CallInfo* pi = format::GetCall(it->second.call);
      if (pi != nullptr && !IsCallback(pi->layer)) {
        const uint8_t t = it->second.dc_table;
        ddi = absl::StrCat(t == 2 ? "DC::" : t == 1 ? "IC::" : "", pi->name);
        break;
      }
      p = it->second.parent;
    }
    ++counts_[{ddi, ci->name}];
  }

  void OnTransition(const TransitionEvent& t) override {
    int from = Column(t.role, t.from);
    int to = Column(t.role, t.to);
    if (from != to) {
      // A sampling pass (SampleAt) takes the counts before the first change past a position.
      while (next_sample_ < sample_at_.size() && t.seq > sample_at_[next_sample_])
        s_->alive.push_back(Sample(sample_at_[next_sample_++], live_));
      if (from >= 0) --live_[from];
      if (to >= 0) ++live_[to];
      if (!deltas_overflow_ && deltas_.size() < max_deltas_) {
        deltas_.push_back({t.seq, from, to});
      } else if (!deltas_overflow_) {
        deltas_overflow_ = true;  // sampled in a second pass: the deltas are of no more use
        std::vector<Delta>().swap(deltas_);
      }
      // Peaks as the counts change.
      if (static_cast<uint32_t>(live_[0]) > s_->peak.command_lists) {
        s_->peak.command_lists = live_[0];
        s_->peak.seq = t.seq;
      }
      s_->peak.deferred_contexts = std::max<uint32_t>(s_->peak.deferred_contexts, live_[1]);
      s_->peak.objects = std::max<uint32_t>(s_->peak.objects, live_[2]);
      s_->peak.locals = std::max<uint32_t>(s_->peak.locals, live_[3]);
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
    if (auto it = open_.find(e.seq); it != open_.end()) it->second.dc_table = dc_table ? 2 : 1;
    if (CallName(e.call) == "CommandListExecute") {
      if (dc_table) {
        ++s_->nested_executes;
      } else {
        ++s_->ic_executes;
      }
    }
  }

  // A pass that only samples the alive counts at `positions` (Finish after an overflow).
  void SampleAt(std::vector<uint64_t> positions) {
    sample_at_ = std::move(positions);
    max_deltas_ = 0;
  }
  // The samples SampleAt left, once every event was seen.
  void FinishSampling() {
    while (next_sample_ < sample_at_.size())
      s_->alive.push_back(Sample(sample_at_[next_sample_++], live_));
  }
  // The sample positions: evenly spaced over the trace.
  std::vector<uint64_t> SamplePositions(uint32_t samples) const {
    uint64_t first = calls_ == 0 ? 0 : first_;
    uint64_t last = calls_ == 0 ? 0 : last_;
    samples = std::max<uint32_t>(samples, 1);
    std::vector<uint64_t> at;
    for (uint32_t k = 0; k < samples; ++k)
      at.push_back(samples == 1 ? last : first + (last - first) * k / (samples - 1));
    return at;
  }
  // The deltas were not all kept (more than max_deltas): the samples need a second pass.
  bool deltas_overflow() const { return deltas_overflow_; }

  void Finish(uint32_t samples) {
    // Alive over time: replay the deltas against evenly spaced sample positions (after an
    // overflow the caller samples in a second pass instead).
    if (!deltas_overflow_) {
      int32_t live[4] = {0, 0, 0, 0};
      size_t d = 0;
      for (uint64_t at : SamplePositions(samples)) {
        for (; d < deltas_.size() && deltas_[d].seq <= at; ++d) Apply(deltas_[d], live);
        s_->alive.push_back(Sample(at, live));
      }
    }
    for (auto& [key, n] : counts_) s_->callbacks.push_back({key.first, key.second, n});
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

  struct Open {
    format::CallId call;
    uint64_t parent;
    uint8_t dc_table;  // 0 not a device call, 1 IC, 2 DC
  };
  TraceStats* s_;
  uint64_t calls_ = 0, first_ = 0, last_ = 0;
  absl::flat_hash_map<uint64_t, Open> open_;         // calls not yet returned
  std::vector<std::pair<uint64_t, uint64_t>> ends_;  // (end, seq) of open_, a min-heap
  absl::flat_hash_map<std::pair<std::string, std::string>, uint64_t> counts_;
  int32_t live_[4] = {0, 0, 0, 0};
  // The changes of the alive counts, for sampling at the end; at most max_deltas_ of them
  // (16 bytes each): beyond, the samples are taken in a second pass (bounded memory).
  std::vector<Delta> deltas_;
  size_t max_deltas_;
  bool deltas_overflow_ = false;
  std::vector<uint64_t> sample_at_;  // SampleAt
  size_t next_sample_ = 0;
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

struct StatsBuilder::State {
  explicit State(uint32_t samples, size_t max_deltas)
      : samples(samples), observer(&stats, max_deltas), checker(Options()) {
    checker.set_observer(&observer);
  }
  static CheckOptions Options() {
    CheckOptions options;
    options.max_findings = 0;  // only the transitions are wanted
    return options;
  }
  uint32_t samples;
  TraceReplay replay;
  TraceStats stats;
  StatsObserver observer;
  Checker checker;
};

StatsBuilder::StatsBuilder(const format::TokenTable& handles, TraceReplay replay, uint32_t samples,
                           size_t max_deltas)
    : s_(std::make_unique<State>(samples, max_deltas)) {
  s_->replay = replay;
  handles_ = &handles;
  s_->checker.Begin(handles, std::move(replay));
}

StatsBuilder::~StatsBuilder() = default;

absl::Status StatsBuilder::Add(const format::Event& e) {
  s_->observer.Enter(e);
  absl::Status st = s_->checker.Add(e);
  if (st.ok()) s_->observer.Leave(e);
  return st;
}

TraceStats StatsBuilder::Finish() {
  CheckResult r = s_->checker.Finish();
  s_->stats.calls = r.calls;
  s_->observer.Finish(s_->samples);
  if (s_->observer.deltas_overflow()) {
    // Too many changes of the alive counts were seen to keep them all: now that the sample
    // positions are known, a second pass over the trace takes the samples as it goes.
    TraceStats sampled;
    StatsObserver sampler(&sampled, 0);
    sampler.SampleAt(s_->observer.SamplePositions(s_->samples));
    Checker checker(State::Options());
    checker.set_observer(&sampler);
    checker.Begin(*handles_, s_->replay);
    if (s_->replay) {
      (void)s_->replay([&](const format::Event& e) {
        sampler.Enter(e);
        (void)checker.Add(e);
      });
    }
    (void)checker.Finish();
    sampler.FinishSampling();
    s_->stats.alive = std::move(sampled.alive);
  }
  return std::move(s_->stats);
}

absl::StatusOr<TraceStats> ComputeStats(absl::Span<const format::Event> events,
                                        const format::TokenTable& handles, uint32_t samples,
                                        size_t max_deltas) {
  StatsBuilder builder(
      handles,
      [events](const std::function<void(const format::Event&)>& visit) {
        for (const format::Event& e : events) visit(e);
        return absl::OkStatus();
      },
      samples, max_deltas);
  for (const format::Event& e : events) {
    if (absl::Status st = builder.Add(e); !st.ok()) return st;
  }
  return builder.Finish();
}

}  // namespace cltrace::check
