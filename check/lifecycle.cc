#include "check/lifecycle.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
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

// Finished intervals over the budget, appended to a temporary file; each held lifetime
// knows its runs there (offset, count), in order.
class IntervalSpill {
 public:
  IntervalSpill() = default;
  ~IntervalSpill() {
    if (file_ != nullptr) std::fclose(file_);
  }
  IntervalSpill(const IntervalSpill&) = delete;
  IntervalSpill& operator=(const IntervalSpill&) = delete;

  // Whether intervals can go to the file (it is made on first use).
  bool Usable() {
    if (file_ == nullptr && !tried_) {
      tried_ = true;
      file_ = std::tmpfile();
    }
    return file_ != nullptr;
  }
  // Appends `ivs`; returns their offset (in intervals).
  uint64_t Append(absl::Span<const Interval> ivs) {
    const uint64_t at = end_;
    const size_t bytes = ivs.size() * sizeof(Interval);
    const char* p = reinterpret_cast<const char*>(ivs.data());
    size_t done = 0;
    while (done < bytes) {
      ssize_t n = ::pwrite(fileno(file_), p + done, bytes - done,
                           static_cast<off_t>(at * sizeof(Interval) + done));
      if (n <= 0) {
        if (status_.ok()) status_ = absl::InternalError("cannot write a temporary file");
        break;
      }
      done += static_cast<size_t>(n);
    }
    end_ += ivs.size();
    return at;
  }
  // Reads `count` intervals at `offset` in blocks, calling `fn` for each.
  absl::Status Read(uint64_t offset, uint64_t count,
                    absl::FunctionRef<void(const Interval&)> fn) const {
    if (!status_.ok()) return status_;
    constexpr size_t kBlock = 4096;
    std::vector<Interval> block(std::min<uint64_t>(count, kBlock));
    while (count > 0) {
      const size_t n = std::min<uint64_t>(count, kBlock);
      const size_t bytes = n * sizeof(Interval);
      size_t done = 0;
      char* p = reinterpret_cast<char*>(block.data());
      while (done < bytes) {
        ssize_t r = ::pread(fileno(file_), p + done, bytes - done,
                            static_cast<off_t>(offset * sizeof(Interval) + done));
        if (r <= 0) return absl::InternalError("cannot read back a temporary file");
        done += static_cast<size_t>(r);
      }
      for (size_t i = 0; i < n; ++i) fn(block[i]);
      offset += n;
      count -= n;
    }
    return absl::OkStatus();
  }
  // Nothing in the file is wanted any more: it starts over (its space is given back).
  void Reset() {
    if (file_ == nullptr || end_ == 0) return;
    if (::ftruncate(fileno(file_), 0) != 0 && status_.ok()) {
      status_ = absl::InternalError("cannot truncate a temporary file");
    }
    end_ = 0;
  }

 private:
  std::FILE* file_ = nullptr;
  bool tried_ = false;
  uint64_t end_ = 0;  // intervals written
  absl::Status status_;
};

// Collects transitions into lifetimes keyed by (role, lifetime number). Streaming (a sink):
// only the lifetimes `wanted` are held, and each is handed to the sink once it is over and
// every lifetime that began before it was handed on (order of first transition); finished
// intervals over `budget` go to an IntervalSpill.
class Collector : public TransitionObserver {
 public:
  Collector() = default;
  Collector(LifecycleBuilder::Wanted wanted, LifecycleBuilder::Sink sink, size_t budget)
      : wanted_(std::move(wanted)), sink_(std::move(sink)), budget_(budget) {}

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
    Entry& entry = lifetimes_[it->second - base_];
    Lifetime& l = entry.l;
    l.context = t.context;
    if (!l.intervals.empty()) {
      l.intervals.back().to_seq = t.seq;
      ++finished_held_;  // the one before is finished now
    }
    Interval iv;
    iv.state = t.to;
    iv.from_seq = t.seq;
    iv.cause = t.call;
    iv.dc_table = t.dc_table;
    iv.context = t.context;
    l.intervals.push_back(iv);
    if (sink_ && finished_held_ > budget_) Spill();
    most_finished_held_ = std::max(most_finished_held_, finished_held_);
  }

  bool WantsEndings() const override { return true; }
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
  size_t finished_held() const { return finished_held_; }
  size_t most_finished_held() const { return most_finished_held_; }
  uint64_t spilled() const { return spilled_; }

  std::vector<Lifetime> Take() {
    std::vector<Lifetime> out;
    out.reserve(lifetimes_.size());
    for (Entry& e : lifetimes_) out.push_back(std::move(e.l));
    lifetimes_.clear();
    return out;
  }

 private:
  struct Run {
    uint64_t offset = 0;
    uint64_t count = 0;
  };
  struct Entry {
    Lifetime l;
    std::vector<Run> spilled;  // intervals before l.intervals, in the spill file
    bool over = false;
  };
  // A held lifetime for the sink: its spilled runs, then what is in memory.
  class Streamed : public StreamedLifetime {
   public:
    Streamed(const Entry& e, const IntervalSpill& spill) : e_(e), spill_(spill) {}
    const Lifetime& lifetime() const override { return e_.l; }
    absl::Status ForEachInterval(absl::FunctionRef<void(const Interval&)> fn) const override {
      for (const Run& r : e_.spilled) {
        absl::Status s = spill_.Read(r.offset, r.count, fn);
        if (!s.ok()) return s;
      }
      for (const Interval& iv : e_.l.intervals) fn(iv);
      return absl::OkStatus();
    }

   private:
    const Entry& e_;
    const IntervalSpill& spill_;
  };

  // Every held lifetime's finished intervals (all but its last) go to the file.
  void Spill() {
    if (!spill_.Usable()) return;  // no temporary file: held in memory
    for (Entry& e : lifetimes_) {
      std::vector<Interval>& ivs = e.l.intervals;
      if (ivs.size() < 2) continue;
      const size_t n = ivs.size() - 1;
      const uint64_t at = spill_.Append(absl::MakeConstSpan(ivs.data(), n));
      if (!e.spilled.empty() && e.spilled.back().offset + e.spilled.back().count == at) {
        e.spilled.back().count += n;
      } else {
        if (e.spilled.empty()) ++with_spilled_;
        e.spilled.push_back({at, n});
      }
      ivs.erase(ivs.begin(), ivs.begin() + static_cast<ptrdiff_t>(n));
      ivs.shrink_to_fit();
      spilled_ += n;
      finished_held_ -= n;
    }
  }
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
    Entry& e = lifetimes_.front();
    Lifetime& l = e.l;
    index_.erase(Key(l.role, l.lifetime));
    sink_(Streamed(e, spill_));
    if (!l.intervals.empty()) finished_held_ -= l.intervals.size() - 1;
    if (!e.spilled.empty() && --with_spilled_ == 0) spill_.Reset();
    lifetimes_.pop_front();
    ++base_;
  }

  LifecycleBuilder::Wanted wanted_;
  LifecycleBuilder::Sink sink_;
  size_t budget_ = 0;
  absl::flat_hash_map<uint64_t, size_t> index_;  // key -> position (base_ = the front's)
  std::deque<Entry> lifetimes_;
  size_t base_ = 0;
  IntervalSpill spill_;
  size_t finished_held_ = 0;  // streaming: finished intervals in memory
  size_t most_finished_held_ = 0;
  uint64_t spilled_ = 0;
  size_t with_spilled_ = 0;  // held lifetimes with intervals in the file
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
  State(const CheckOptions& options, Wanted wanted, Sink sink, size_t budget)
      : collector(std::move(wanted), std::move(sink), budget), checker(options) {
    checker.set_observer(&collector);
  }
  Collector collector;
  Checker checker;
};

LifecycleBuilder::LifecycleBuilder(const format::TokenTable& handles, TraceReplay replay,
                                   const CheckOptions& options)
    : LifecycleBuilder(handles, std::move(replay), options, nullptr, nullptr) {}

LifecycleBuilder::LifecycleBuilder(const format::TokenTable& handles, TraceReplay replay,
                                   const CheckOptions& options, Wanted wanted, Sink sink,
                                   size_t interval_budget)
    : s_(std::make_unique<State>(options, std::move(wanted), std::move(sink), interval_budget)) {
  s_->checker.Begin(handles, std::move(replay));
}

size_t LifecycleBuilder::lifetimes_held() const { return s_->collector.held(); }
size_t LifecycleBuilder::records_held() const { return s_->checker.records_held(); }
size_t LifecycleBuilder::intervals_held() const { return s_->collector.finished_held(); }
size_t LifecycleBuilder::most_intervals_held() const { return s_->collector.most_finished_held(); }
uint64_t LifecycleBuilder::intervals_spilled() const { return s_->collector.spilled(); }

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

namespace {
std::string Tok(const format::TokenTable& handles, uint64_t h) {
  absl::string_view t = handles.Token(h);
  return t.empty() ? std::string("?") : std::string(t);
}
}  // namespace

std::string FormatLifetimeHeader(const Lifetime& l, const format::TokenTable& handles) {
  std::string out = absl::StrCat(RoleName(l.role), " ", Tok(handles, l.handle), " #", l.lifetime);
  switch (l.role) {
    case HandleRole::kCommandList:
      if (l.context) absl::StrAppend(&out, " (owner DC ", Tok(handles, l.context), ")");
      break;
    case HandleRole::kLocal:
      absl::StrAppend(&out, " (for ", Tok(handles, l.ic_handle), " on DC ", Tok(handles, l.context),
                      ", recording ", l.recording, ")");
      break;
    default:
      break;
  }
  out += "\n";
  return out;
}

std::string FormatInterval(const Lifetime& l, const Interval& iv,
                           const format::TokenTable& handles) {
  std::string out;
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
    absl::StrAppend(&out, " (owner DC ", Tok(handles, iv.context), ")");
  out += "\n";
  return out;
}

std::string FormatLifetime(const Lifetime& l, const format::TokenTable& handles) {
  std::string out = FormatLifetimeHeader(l, handles);
  for (const Interval& iv : l.intervals) out += FormatInterval(l, iv, handles);
  return out;
}

}  // namespace cltrace::check
