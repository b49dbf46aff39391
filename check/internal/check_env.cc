#include "check/internal/check_env.h"

namespace cltrace::check::internal {

CheckEnv::CheckEnv(const CheckOptions& options)
    : options_(options), table_(CallTable::Get()), k_(table_.constants()) {}

void CheckEnv::BeginStream(const format::TokenTable& handles, TraceReplay replay) {
  Begin({}, handles);
  streaming_ = true;
  replay_ = std::move(replay);
}

// A call can be looked up (FindSeq: the parents of later calls) while it is open: from its
// entry until the first call entered after its exit. Calls that never returned stay.
void CheckEnv::TrackOpen(const Event& e) {
  auto later = std::greater<std::pair<uint64_t, uint64_t>>();
  while (!ends_.empty() && ends_.front().first < e.seq) {
    std::pop_heap(ends_.begin(), ends_.end(), later);
    open_.erase(ends_.back().second);
    ends_.pop_back();
  }
  has_leaf_ = false;
  if (e.end == e.seq + 1) {
    // Nothing entered while it ran: it is looked up only until the next call (most calls).
    // Kept apart, in storage reused call after call, instead of in the map.
    leaf_ = e;
    has_leaf_ = true;
    return;
  }
  open_.insert_or_assign(e.seq, e);
  if (e.end != 0) {
    ends_.emplace_back(e.end, e.seq);
    std::push_heap(ends_.begin(), ends_.end(), later);
  }
}

absl::Status CheckEnv::ForEachEvent(const std::function<void(const Event&)>& visit) const {
  if (!streaming_) {
    for (const Event& e : events_) visit(e);
    return absl::OkStatus();
  }
  if (!replay_) return absl::FailedPreconditionError("the trace cannot be read again");
  return replay_(visit);
}

void CheckEnv::Begin(absl::Span<const Event> events, const format::TokenTable& handles) {
  streaming_ = false;
  replay_ = nullptr;
  open_.clear();
  ends_.clear();
  has_leaf_ = false;
  events_ = events;
  handles_ = &handles;
  result_ = CheckResult();
  slots_.Reset();
  fatal_ = absl::OkStatus();
  closed_locals_.clear();
  closed_on_.clear();
}

void CheckEnv::EndClosedLocal(uint64_t handle, uint64_t seq) {
  auto it = closed_locals_.find(handle);
  if (it == closed_locals_.end()) return;
  const ClosedLocal c = it->second;
  closed_locals_.erase(it);
  if (auto on = closed_on_.find(c.dc); on != closed_on_.end()) {
    on->second.erase(handle);
    if (on->second.empty()) closed_on_.erase(on);
  }
  observer_->OnLocalEnded(c.lifetime, seq);
}

void CheckEnv::EndClosedLocalsOf(uint64_t dc, uint64_t seq) {
  auto on = closed_on_.find(dc);
  if (on == closed_on_.end()) return;
  // In the order they began (lifetime numbers), not the set's.
  std::vector<uint32_t> ended;
  ended.reserve(on->second.size());
  for (uint64_t h : on->second) {
    auto it = closed_locals_.find(h);
    if (it == closed_locals_.end()) continue;
    ended.push_back(it->second.lifetime);
    closed_locals_.erase(it);
  }
  closed_on_.erase(on);
  std::sort(ended.begin(), ended.end());
  for (uint32_t lifetime : ended) observer_->OnLocalEnded(lifetime, seq);
}

void CheckEnv::FlagAt(Rule rule, uint64_t seq, uint32_t tid, CallId call, bool dc_table,
                      uint64_t handle, std::string message, const Ring* last, Severity severity) {
  if (!On(rule)) return;
  CheckResult& r = result_;
  if (r.violations.size() + r.warnings.size() >= options_.max_findings) {
    ++r.dropped_findings;
    return;
  }
  Violation v;
  v.rule = rule;
  v.severity = severity;
  v.seq = seq;
  v.tid = tid;
  v.call = call;
  v.dc_table = dc_table;
  v.handle = handle;
  v.message = std::move(message);
  if (last != nullptr)
    for (int i = 0; i < last->n; ++i) v.last.push_back(last->t[i]);
  (severity == Severity::kError ? r.violations : r.warnings).push_back(std::move(v));
}

absl::Span<const uint64_t> CheckEnv::ArrayElems(const Event& e, const CallMeta& m, size_t i,
                                                uint32_t* count) const {
  size_t offset = m.fixed_count;
  for (size_t a = 0; a < m.arrays.size(); ++a) {
    uint64_t v = Arg(e, m.arrays[a].field);
    size_t n = v == 0 ? 0 : static_cast<size_t>(v - 1);
    size_t len = n * m.arrays[a].stride;
    if (a == i) {
      if (offset + len > e.args.size()) {
        *count = 0;
        return {};
      }
      *count = static_cast<uint32_t>(n);
      return absl::MakeConstSpan(e.args.data() + offset, len);
    }
    offset += len;
  }
  *count = 0;
  return {};
}

const Event* CheckEnv::FindSeq(uint64_t seq) const {
  if (streaming_) {
    if (has_leaf_ && leaf_.seq == seq) return &leaf_;
    auto it = open_.find(seq);
    return it == open_.end() ? nullptr : &it->second;
  }
  auto it = std::lower_bound(events_.begin(), events_.end(), seq,
                             [](const Event& e, uint64_t s) { return e.seq < s; });
  return it != events_.end() && it->seq == seq ? &*it : nullptr;
}

bool CheckEnv::IsAncestor(const Event& e, uint64_t anc) const {
  uint64_t p = e.parent;
  while (p != 0) {
    if (p == anc) return true;
    if (p < anc) return false;
    const Event* pe = FindSeq(p);
    if (pe == nullptr) return false;
    p = pe->parent;
  }
  return false;
}

const Event* CheckEnv::Enclosing(const Event& e) const {
  uint64_t p = e.parent;
  while (p != 0) {
    const Event* pe = FindSeq(p);
    if (pe == nullptr) return nullptr;
    if (!IsCallbackLayer(table_[pe->call].layer)) return pe;
    p = pe->parent;
  }
  return nullptr;
}

std::string CheckEnv::HandleTypeName(int64_t type) {
  const format::EnumInfo* e = format::FindEnum("D3D11DDI_HANDLETYPE");
  if (e != nullptr) {
    auto n = format::NameOfValue(*e, static_cast<uint64_t>(type));
    if (n) return *n;
  }
  return absl::StrCat(type);
}

}  // namespace cltrace::check::internal
