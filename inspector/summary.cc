#include "inspector/summary.h"

#include <algorithm>
#include <cmath>

#include "ddi/catalog.h"

namespace cltrace::inspector {

using check::HandleRole;
using check::State;

Summary Summarize(const TraceModel& model, int samples) {
  Summary s;
  samples = std::max(samples, 2);
  s.calls = model.call_count();
  const std::vector<uint64_t>& counts = model.call_counts();
  for (size_t c = 1; c < counts.size(); ++c)
    if (counts[c] != 0) s.functions.emplace_back(static_cast<format::CallId>(c), counts[c]);
  std::stable_sort(s.functions.begin(), s.functions.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  s.threads = model.thread_counts();
  for (const TransitionCount& t : model.transitions()) {
    if (t.role != HandleRole::kCommandList) continue;
    if (t.to == State::kValid && t.call == format::CallId::kCreateCommandList) s.creates += t.count;
    if (t.to == State::kValid && t.call == format::CallId::kRecycleCreateCommandList)
      s.recycle_creates += t.count;
    if (t.to == State::kRecycleDestroyed) s.recycle_destroys += t.count;
    if (t.to == State::kDestroyed) s.destroys += t.count;
  }
  for (const check::Violation& v : model.violations())
    ++(v.severity == check::Severity::kError ? s.errors : s.warnings);

  // Alive curves: a difference array over the sample points. A span [from, to) contains the
  // sample points k with from <= p_k < to, p_k = first + k * step.
  const double first = static_cast<double>(model.first_seq());
  const double step =
      std::max(1.0, static_cast<double>(model.end_seq() - model.first_seq()) / (samples - 1));
  std::vector<int64_t> cl(samples + 1, 0), dc(samples + 1, 0), lo(samples + 1, 0);
  auto index = [&](uint64_t seq) {
    double k = std::ceil((static_cast<double>(seq) - first) / step);
    return static_cast<int>(std::clamp(k, 0.0, static_cast<double>(samples)));
  };
  for (const Row& row : model.rows()) {
    std::vector<int64_t>* diff = nullptr;
    switch (row.kind) {
      case RowKind::kCommandList:
        diff = &cl;
        ++s.command_lists;
        break;
      case RowKind::kDeferredContext:
        diff = &dc;
        ++s.deferred_contexts;
        break;
      case RowKind::kLocal:
        diff = &lo;
        ++s.local_rows;
        break;
    }
    for (const Span& sp : row.spans) {
      bool alive = row.kind == RowKind::kLocal ? sp.state == State::kOpen : check::IsLive(sp.state);
      if (!alive) continue;
      ++(*diff)[index(sp.from)];
      --(*diff)[index(sp.to)];
    }
  }
  int64_t a = 0, b = 0, c = 0;
  for (int k = 0; k < samples; ++k) {
    a += cl[k];
    b += dc[k];
    c += lo[k];
    s.sample_seq.push_back(static_cast<uint64_t>(first + k * step));
    s.alive_command_lists.push_back(static_cast<float>(a));
    s.alive_deferred_contexts.push_back(static_cast<float>(b));
    s.open_locals.push_back(static_cast<float>(c));
  }
  return s;
}

}  // namespace cltrace::inspector
