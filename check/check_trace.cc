#include "check/check_trace.h"

#include <algorithm>
#include <functional>
#include <map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ddi/catalog.h"
#include "format/trace_reader.h"

namespace cltrace::check {
namespace {

absl::string_view CallName(format::CallId c) {
  const format::CallInfo* ci = format::GetCall(c);
  return ci ? absl::string_view(ci->name) : absl::string_view("?");
}

}  // namespace

std::string FormatLast(const Violation& v) {
  if (v.last.empty()) return "";
  std::vector<std::string> parts;
  for (const LastTransition& t : v.last) {
    parts.push_back(t.call == format::CallId::kInvalid
                        ? absl::StrCat(StateName(t.state), "@", t.seq, " (before the trace)")
                        : absl::StrCat(StateName(t.state), "@", t.seq, " ", CallName(t.call)));
  }
  return absl::StrCat("[last: ", absl::StrJoin(parts, ", "), "]");
}

std::string FormatViolation(const Violation& v, const format::TokenTable& handles) {
  absl::string_view handle = v.handle ? handles.Token(v.handle) : absl::string_view("-");
  std::string line = absl::StrCat(
      v.id(), " seq=", v.seq, " tid=", v.tid,
      " fn=", v.call == format::CallId::kInvalid ? "-" : CallName(v.call), " handle=", handle, ": ",
      v.severity == Severity::kWarning ? "warning: " : "", v.message);
  std::string last = FormatLast(v);
  if (!last.empty()) absl::StrAppend(&line, " ", last);
  return line;
}

const RuleInfo& GapsRule() { return rules::Info(Rule::kGaps); }

void WithholdAcrossGaps(const format::PositionGaps& gaps, absl::Span<const format::Event> events,
                        const absl::flat_hash_map<uint64_t, std::vector<uint64_t>>& creations,
                        CheckResult* result) {
  WithholdAcrossGaps(
      gaps,
      [&](uint64_t seq) -> uint64_t {
        auto e = std::lower_bound(events.begin(), events.end(), seq,
                                  [](const format::Event& x, uint64_t s) { return x.seq < s; });
        return e != events.end() && e->seq == seq ? e->end : 0;
      },
      creations, result);
}

void WithholdAcrossGaps(const format::PositionGaps& gaps,
                        const std::function<uint64_t(uint64_t seq)>& end_of,
                        const absl::flat_hash_map<uint64_t, std::vector<uint64_t>>& creations,
                        CheckResult* result) {
  if (gaps.holes.empty()) return;
  absl::flat_hash_set<uint64_t> handles;  // handles of withheld findings
  std::map<std::string, uint64_t> rules;  // withheld findings per rule
  uint64_t withheld = 0;
  auto crosses = [&](const Violation& v) {
    uint64_t from = 0;  // position after which the handle's history is in the trace
    if (v.handle != 0) {
      auto it = creations.find(v.handle);
      if (it != creations.end()) {
        auto c = std::upper_bound(it->second.begin(), it->second.end(), v.seq);
        if (c != it->second.begin()) from = *(c - 1);
      }
    }
    uint64_t to = v.seq;  // through the end of the offending call (deadline rules)
    to = std::max(to, end_of(v.seq));
    return gaps.MissingBetween(from, to + 1);
  };
  auto filter = [&](std::vector<Violation>* list) {
    std::vector<Violation> kept;
    for (Violation& v : *list) {
      if (!crosses(v)) {
        kept.push_back(std::move(v));
        continue;
      }
      ++withheld;
      ++rules[v.id()];
      if (v.handle != 0) handles.insert(v.handle);
    }
    *list = std::move(kept);
  };
  filter(&result->violations);
  filter(&result->warnings);
  std::vector<std::string> per_rule;
  for (const auto& [rule, n] : rules) per_rule.push_back(absl::StrCat(rule, " x", n));
  Violation note;
  note.rule = Rule::kGaps;
  note.severity = Severity::kWarning;
  note.seq = gaps.first_missing;
  note.message = absl::StrCat(
      "not judged: the recording lost calls (", gaps.missing, " positions missing in ",
      gaps.holes.size(), gaps.holes.size() == 1 ? " hole" : " holes", ", seq ",
      gaps.holes.front().first, " .. ", gaps.holes.back().second,
      "); findings about handles whose history crosses a hole are withheld: ", withheld,
      withheld == 1 ? " finding" : " findings", " about ", handles.size(),
      handles.size() == 1 ? " handle" : " handles",
      per_rule.empty() ? std::string() : absl::StrCat(" (", absl::StrJoin(per_rule, ", "), ")"));
  result->warnings.push_back(std::move(note));
}

// Entry positions of the calls that created each handle (transitions from kNone).
class CreationIndex : public TransitionObserver {
 public:
  void OnTransition(const TransitionEvent& t) override {
    if (t.from != State::kNone || t.call == format::CallId::kInvalid || t.handle == 0) return;
    std::vector<uint64_t>& v = seqs_[t.handle];
    if (v.empty() || v.back() < t.seq) v.push_back(t.seq);  // events come in seq order
  }
  const absl::flat_hash_map<uint64_t, std::vector<uint64_t>>& seqs() const { return seqs_; }

 protected:
  absl::flat_hash_map<uint64_t, std::vector<uint64_t>>& mutable_seqs() { return seqs_; }

 private:
  absl::flat_hash_map<uint64_t, std::vector<uint64_t>> seqs_;
};

absl::StatusOr<CheckResult> CheckTrace(const CheckOptions& options,
                                       absl::Span<const format::Event> events,
                                       const format::TokenTable& handles) {
  const bool gaps = options.gaps != nullptr && !options.gaps->holes.empty();
  CreationIndex creations;
  Checker checker(options);
  if (gaps) checker.set_observer(&creations);
  absl::StatusOr<CheckResult> result = checker.Run(events, handles);
  if (result.ok() && gaps) WithholdAcrossGaps(*options.gaps, events, creations.seqs(), &*result);
  return result;
}

// Streaming: the latest kKept creations of each handle (bounded memory). A finding is about
// the handle's latest creation at or before its seq, and findings are flagged at most a few
// calls after it (deadlines: when the call returns), so older creations are never asked for
// unless a handle value was reused kKept times within one call.
class StreamCheck::Creations : public CreationIndex {
 public:
  static constexpr size_t kKept = 16;
  void OnTransition(const TransitionEvent& t) override {
    CreationIndex::OnTransition(t);
    if (t.from != State::kNone || t.handle == 0) return;
    auto it = mutable_seqs().find(t.handle);
    if (it == mutable_seqs().end() || it->second.size() <= kKept) return;
    std::vector<uint64_t>& v = it->second;
    v.erase(v.begin(), v.end() - static_cast<ptrdiff_t>(kKept));
  }
};

// Hands every transition and device call to two observers.
class StreamCheck::Tee : public TransitionObserver {
 public:
  Tee(TransitionObserver* a, TransitionObserver* b) : a_(a), b_(b) {}
  void OnTransition(const TransitionEvent& t) override {
    a_->OnTransition(t);
    b_->OnTransition(t);
  }
  void OnDeviceCall(const format::Event& e, bool dc_table) override {
    a_->OnDeviceCall(e, dc_table);
    b_->OnDeviceCall(e, dc_table);
  }
  void OnRetired(HandleRole role, uint32_t lifetime) override {
    a_->OnRetired(role, lifetime);
    b_->OnRetired(role, lifetime);
  }
  void OnLocalEnded(uint32_t lifetime, uint64_t seq) override {
    a_->OnLocalEnded(lifetime, seq);
    b_->OnLocalEnded(lifetime, seq);
  }
  bool WantsEndings() const override { return a_->WantsEndings() || b_->WantsEndings(); }

 private:
  TransitionObserver* a_;
  TransitionObserver* b_;
};

void StreamCheck::AddObserver(TransitionObserver* observer) {
  if (creations_ == nullptr) {
    checker_.set_observer(observer);
    return;
  }
  tee_ = std::make_unique<Tee>(creations_.get(), observer);
  checker_.set_observer(tee_.get());
}

StreamCheck::StreamCheck(const CheckOptions& options, const format::TokenTable& handles,
                         TraceReplay replay, bool may_have_holes)
    : creations_(may_have_holes ? std::make_unique<Creations>() : nullptr),
      checker_(options),
      replay_(replay) {
  if (creations_ != nullptr) checker_.set_observer(creations_.get());
  checker_.Begin(handles, std::move(replay));
}

StreamCheck::~StreamCheck() = default;

absl::Status StreamCheck::Add(const format::Event& e) {
  if (creations_ == nullptr) return checker_.Add(e);
  // A finding is flagged while its call is added or later, at the latest when the first call
  // after its exit is added (deadlines): until then its call is held here.
  // Most calls return before the next is entered: such a call is held as the previous one
  // only (until the next call was added), the others in the map.
  if (e.end != 0 && e.end != e.seq + 1) {
    open_.emplace_back(e.seq, e.end);
    open_min_end_ = std::min(open_min_end_, e.end);
  }
  absl::Status st = checker_.Add(e);
  NoteFindingEnds(&e);
  previous_ = {e.seq, e.end};
  if (open_min_end_ < e.seq) {
    open_.erase(
        std::remove_if(open_.begin(), open_.end(),
                       [&](const std::pair<uint64_t, uint64_t>& c) { return c.second < e.seq; }),
        open_.end());
    open_min_end_ = UINT64_MAX;
    for (const auto& c : open_) open_min_end_ = std::min(open_min_end_, c.second);
  }
  return st;
}

const uint64_t* StreamCheck::OpenEnd(uint64_t seq) const {
  for (const auto& c : open_)
    if (c.first == seq) return &c.second;
  return nullptr;
}

void StreamCheck::NoteFindingEnds(const format::Event* current) {
  const CheckResult& f = checker_.findings();
  auto note = [&](const std::vector<Violation>& list, size_t* seen) {
    for (; *seen < list.size(); ++*seen) {
      const uint64_t seq = list[*seen].seq;
      uint64_t end = 0;
      if (current != nullptr && current->seq == seq) {
        end = current->end;
      } else if (previous_.first == seq && seq != 0) {
        end = previous_.second;
      } else if (const uint64_t* open_end = OpenEnd(seq)) {
        end = *open_end;
      } else {
        continue;  // not known here: Finish reads the trace again for it
      }
      auto [it, added] = finding_ends_.emplace(seq, end);
      if (!added && it->second == 0) it->second = end;
    }
  };
  note(f.violations, &seen_violations_);
  note(f.warnings, &seen_warnings_);
}

CheckResult StreamCheck::Finish(const format::PositionGaps& gaps) {
  CheckResult result = checker_.Finish();
  if (creations_ == nullptr || gaps.holes.empty()) return result;
  // The exit positions of the findings' calls: noted while the events passed; those of
  // findings Finish added about calls no longer open need one more pass over the trace.
  absl::flat_hash_map<uint64_t, uint64_t> ends;
  bool missing = false;
  for (const auto* list : {&result.violations, &result.warnings}) {
    for (const Violation& v : *list) {
      if (auto it = finding_ends_.find(v.seq); it != finding_ends_.end()) {
        ends.emplace(v.seq, it->second);
      } else if (const uint64_t* open_end = OpenEnd(v.seq)) {
        ends.emplace(v.seq, *open_end);
      } else {
        ends.emplace(v.seq, 0);
        missing = true;
      }
    }
  }
  if (missing && replay_) {
    absl::flat_hash_set<uint64_t> want;
    for (const auto& [seq, end] : ends)
      if (!finding_ends_.contains(seq) && OpenEnd(seq) == nullptr) want.insert(seq);
    (void)replay_([&](const format::Event& e) {
      if (!want.contains(e.seq)) return;
      auto it = ends.find(e.seq);
      if (it != ends.end() && it->second == 0) it->second = e.end;
    });
  }
  WithholdAcrossGaps(
      gaps,
      [&](uint64_t seq) -> uint64_t {
        auto it = ends.find(seq);
        return it == ends.end() ? 0 : it->second;
      },
      creations_->seqs(), &result);
  return result;
}

}  // namespace cltrace::check
