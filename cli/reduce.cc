#include "cli/reduce.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cltrace::cli {
namespace {

// Judges candidates: closure, events, consistency with the original verdict, then the oracle;
// each distinct closure once.
class Judge {
 public:
  Judge(const TraceCutter& cutter, uint32_t target_unit, const ReduceOracle& oracle)
      : cutter_(cutter), target_(target_unit), oracle_(oracle) {}

  // Whether the closure of `units` plus the target unit still fails.
  absl::StatusOr<bool> Fails(std::vector<uint32_t> units) {
    units.push_back(target_);
    std::sort(units.begin(), units.end());
    units.erase(std::unique(units.begin(), units.end()), units.end());
    std::vector<uint32_t> closed = cutter_.Closed(units, TraceCutter::Closure::kCreation);
    if (auto it = memo_.find(closed); it != memo_.end()) return it->second;
    std::vector<format::Event> events = cutter_.EventsOf(closed);
    ++tests_;
    absl::StatusOr<check::CheckResult> verdict = cutter_.Check(events);
    bool fails = verdict.ok();  // a candidate the checker rejects outright does not count
    if (fails) {
      for (const FindingKey& k : FindingKeys(*verdict))
        if (!cutter_.finding_keys().count(k)) fails = false;
    }
    if (fails) {
      absl::StatusOr<bool> o = oracle_(events);
      if (!o.ok()) return o.status();
      fails = *o;
    }
    memo_[std::move(closed)] = fails;
    return fails;
  }
  uint64_t tests() const { return tests_; }

 private:
  const TraceCutter& cutter_;
  const uint32_t target_;
  const ReduceOracle& oracle_;
  absl::flat_hash_map<std::vector<uint32_t>, bool> memo_;
  uint64_t tests_ = 0;
};

std::vector<uint32_t> Without(const std::vector<uint32_t>& all, const std::vector<uint32_t>& part) {
  std::vector<uint32_t> out;
  std::set_difference(all.begin(), all.end(), part.begin(), part.end(), std::back_inserter(out));
  return out;
}

// ddmin (Zeller and Hildebrandt) over sorted `set`: a 1-minimal subset that still fails.
absl::StatusOr<std::vector<uint32_t>> Ddmin(std::vector<uint32_t> set, Judge& judge) {
  size_t n = 2;
  while (set.size() >= 2) {
    n = std::min(n, set.size());
    std::vector<std::vector<uint32_t>> chunks(n);
    for (size_t i = 0; i < set.size(); ++i) chunks[i * n / set.size()].push_back(set[i]);
    bool reduced = false;
    for (const std::vector<uint32_t>& c : chunks) {
      absl::StatusOr<bool> f = judge.Fails(c);
      if (!f.ok()) return f.status();
      if (*f) {
        set = c;
        n = 2;
        reduced = true;
        break;
      }
    }
    if (!reduced && n > 2) {
      for (const std::vector<uint32_t>& c : chunks) {
        std::vector<uint32_t> rest = Without(set, c);
        absl::StatusOr<bool> f = judge.Fails(rest);
        if (!f.ok()) return f.status();
        if (*f) {
          set = std::move(rest);
          n = std::max<size_t>(n - 1, 2);
          reduced = true;
          break;
        }
      }
    }
    if (reduced) continue;
    if (n >= set.size()) break;
    n = std::min(set.size(), 2 * n);
  }
  if (set.size() == 1) {
    absl::StatusOr<bool> f = judge.Fails({});
    if (!f.ok()) return f.status();
    if (*f) set.clear();
  }
  return set;
}

// After ddmin: a failing call often needs none of a whole transaction (a deferred context's
// Finish: size query, CreateCommandList, local size, RecycleCreateDeferredContext) and yet
// every single call of it (the checker sees a half transaction). Tries removing runs of 8 down
// to 2 consecutive calls of one thread.
absl::StatusOr<std::vector<uint32_t>> RemoveRuns(std::vector<uint32_t> set,
                                                 const TraceCutter& cutter, Judge& judge) {
  for (size_t w = 8; w >= 2; --w) {
    for (size_t i = 0; i < set.size();) {
      std::vector<uint32_t> run;
      const uint32_t tid = cutter.Top(set[i]).tid;
      for (size_t j = i; j < set.size() && run.size() < w; ++j)
        if (cutter.Top(set[j]).tid == tid) run.push_back(set[j]);
      if (run.size() < w) {
        ++i;
        continue;
      }
      std::vector<uint32_t> rest = Without(set, run);
      absl::StatusOr<bool> f = judge.Fails(rest);
      if (!f.ok()) return f.status();
      if (*f) {
        set = std::move(rest);
      } else {
        ++i;
      }
    }
  }
  return set;
}

}  // namespace

absl::StatusOr<ReduceResult> Reduce(const TraceCutter& cutter, uint64_t target_seq,
                                    const ReduceOracle& oracle) {
  const int64_t target = cutter.UnitOfSeq(target_seq);
  if (target < 0)
    return absl::InvalidArgumentError(absl::StrCat("no call of the trace has seq ", target_seq));
  const uint32_t t = static_cast<uint32_t>(target);
  Judge judge(cutter, t, oracle);
  // Coarse: the failing call with the faithful closure a trim gives it (every state transition
  // of its handles' lifetimes, the recordings of its command lists), then that plus windows of
  // calls before it growing by 4x, then everything.
  std::vector<uint32_t> faithful = cutter.Closed({t}, TraceCutter::Closure::kFaithful);
  faithful.erase(std::remove(faithful.begin(), faithful.end(), t), faithful.end());
  std::vector<uint32_t> set = faithful;
  absl::StatusOr<bool> f = judge.Fails(set);
  if (!f.ok()) return f.status();
  for (uint64_t k = 64; !*f; k *= 4) {
    std::vector<uint32_t> window;
    const uint32_t lo = k >= t ? 0 : static_cast<uint32_t>(t - k);
    for (uint32_t u = lo; u < t; ++u) window.push_back(u);
    if (lo == 0) {
      for (uint32_t u = t + 1; u < cutter.unit_count(); ++u) window.push_back(u);
    }
    set.clear();
    std::set_union(faithful.begin(), faithful.end(), window.begin(), window.end(),
                   std::back_inserter(set));
    f = judge.Fails(set);
    if (!f.ok()) return f.status();
    if (!*f && lo == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("the whole trace does not show the failure at seq ", target_seq,
                       " as a self-consistent cut"));
    }
  }
  // Whole threads other than the failing call's.
  if (!set.empty()) {
    std::vector<uint32_t> tids;
    for (uint32_t u : set) tids.push_back(cutter.Top(u).tid);
    std::sort(tids.begin(), tids.end());
    tids.erase(std::unique(tids.begin(), tids.end()), tids.end());
    for (uint32_t tid : tids) {
      if (tid == cutter.Top(t).tid) continue;
      std::vector<uint32_t> rest;
      for (uint32_t u : set)
        if (cutter.Top(u).tid != tid) rest.push_back(u);
      absl::StatusOr<bool> g = judge.Fails(rest);
      if (!g.ok()) return g.status();
      if (*g) set = std::move(rest);
    }
  }
  absl::StatusOr<std::vector<uint32_t>> minimal = Ddmin(std::move(set), judge);
  if (!minimal.ok()) return minimal.status();
  minimal = RemoveRuns(std::move(*minimal), cutter, judge);
  if (!minimal.ok()) return minimal.status();
  minimal = Ddmin(std::move(*minimal), judge);
  if (!minimal.ok()) return minimal.status();
  minimal->push_back(t);
  std::sort(minimal->begin(), minimal->end());
  ReduceResult r;
  r.events = cutter.EventsOf(cutter.Closed(*minimal, TraceCutter::Closure::kCreation));
  r.calls_before = cutter.trace().events.size();
  r.calls_after = r.events.size();
  r.target_seq = target_seq;
  r.tests = judge.tests();
  return r;
}

absl::StatusOr<ReduceResult> ReduceToRule(const TraceCutter& cutter, rules::Rule rule) {
  uint64_t target = UINT64_MAX;
  for (const auto* list : {&cutter.findings().violations, &cutter.findings().warnings})
    for (const check::Violation& v : *list)
      if (v.rule == rule) target = std::min(target, v.seq);
  if (target == UINT64_MAX)
    return absl::NotFoundError(
        absl::StrCat("the trace does not make check report ", rules::RuleId(rule)));
  const ReduceOracle reports = [&](absl::Span<const format::Event> events) -> absl::StatusOr<bool> {
    absl::StatusOr<check::CheckResult> verdict = cutter.Check(events);
    if (!verdict.ok()) return false;
    return FindingKeys(*verdict).count({rule, target}) > 0;
  };
  return Reduce(cutter, target, reports);
}

}  // namespace cltrace::cli
