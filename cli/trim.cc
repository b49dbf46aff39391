#include "cli/trim.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "check/check_trace.h"
#include "cli/trace_input.h"
#include "ddi/call_traits.h"
#include "ddi/catalog.h"
#include "format/trace_writer.h"

namespace cltrace::cli {
namespace {

using format::Event;
using format::FieldInfo;
using format::FieldKind;

// Calls every handle field of `e` (array elements included) with its id, direction and
// handle type, as RemapIds walks them.
template <typename Fn>
void ForEachHandle(const Event& e, Fn fn) {
  const format::CallInfo* call = format::GetCall(e.call);
  if (call == nullptr) return;
  absl::Span<const FieldInfo> fields = format::Fields(*call);
  size_t tail = fields.size();
  for (size_t i = 0; i < fields.size() && i < e.args.size(); ++i) {
    if (fields[i].kind == FieldKind::kHandle && e.args[i] != 0)
      fn(e.args[i], fields[i].dir, fields[i].type_index);
    if (fields[i].kind != FieldKind::kArray || e.args[i] == 0) continue;
    absl::Span<const FieldInfo> elems = format::ElementFields(fields[i]);
    for (uint64_t k = 0; k + 1 < e.args[i]; ++k) {
      for (const FieldInfo& ef : elems) {
        if (tail < e.args.size() && ef.kind == FieldKind::kHandle && e.args[tail] != 0)
          fn(e.args[tail], ef.dir, ef.type_index);
        ++tail;
      }
    }
  }
}

ddi::CallRole RoleOf(const Event& e) { return ddi::TraitsOf(e.call).role; }

// Calls a thread makes right before a create to size or prepare it.
bool IsSizeQueryUnit(ddi::CallRole role) {
  return ddi::IsSizeQuery(role) || role == ddi::CallRole::kLocalSize ||
         role == ddi::CallRole::kHandleSizes;
}

bool IsCreateRole(ddi::CallRole role) {
  return ddi::CreatesObject(role) || role == ddi::CallRole::kCreateDevice ||
         role == ddi::CallRole::kCreateContext || role == ddi::CallRole::kRecycleCreateContext ||
         role == ddi::CallRole::kCreateCommandList ||
         role == ddi::CallRole::kRecycleCreateCommandList;
}

bool IsResourceType(uint16_t type_index) {
  absl::Span<const format::HandleTypeInfo> types = format::HandleTypes();
  return type_index < types.size() &&
         absl::string_view(types[type_index].name) == "D3D10DDI_HRESOURCE";
}

class TransitionCollector : public check::TransitionObserver {
 public:
  void OnTransition(const check::TransitionEvent& t) override { seen.push_back(t); }
  std::vector<check::TransitionEvent> seen;
};

size_t EventIndexOfSeq(const std::vector<Event>& events, uint64_t seq) {
  auto it = std::lower_bound(events.begin(), events.end(), seq,
                             [](const Event& e, uint64_t s) { return e.seq < s; });
  return static_cast<size_t>(it - events.begin());
}

}  // namespace

std::set<FindingKey> FindingKeys(const check::CheckResult& result) {
  std::set<FindingKey> keys;
  for (const auto* list : {&result.violations, &result.warnings})
    for (const check::Violation& v : *list) keys.emplace(v.rule, v.seq);
  return keys;
}

absl::StatusOr<std::unique_ptr<TraceCutter>> TraceCutter::Build(const format::LoadedTrace* trace) {
  std::unique_ptr<TraceCutter> c(new TraceCutter(trace));
  if (trace->events.size() >= UINT32_MAX)
    return absl::InvalidArgumentError("more than 2^32 calls: too many to cut in memory");
  c->BuildUnits();
  c->IndexHandles();
  if (absl::Status s = c->RunChecker(); !s.ok()) return s;
  c->BuildEpochs();
  c->BuildCreating();
  return c;
}

void TraceCutter::BuildUnits() {
  const std::vector<Event>& events = trace_->events;
  // Units: a top-level call and everything nested in it.
  unit_of_.resize(events.size());
  absl::flat_hash_map<uint32_t, int64_t> last_on_tid;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    size_t parent = e.parent == 0 ? events.size() : EventIndexOfSeq(events, e.parent);
    if (parent < i && events[parent].seq == e.parent) {
      unit_of_[i] = unit_of_[parent];
      continue;
    }
    unit_of_[i] = static_cast<uint32_t>(unit_top_.size());
    unit_top_.push_back(static_cast<uint32_t>(i));
    auto [it, fresh] = last_on_tid.try_emplace(e.tid, -1);
    prev_same_tid_.push_back(it->second);
    next_same_tid_.push_back(-1);
    if (it->second >= 0) next_same_tid_[it->second] = static_cast<int64_t>(unit_top_.size() - 1);
    it->second = static_cast<int64_t>(unit_top_.size() - 1);
  }
  const size_t units = unit_top_.size();
  unit_offsets_.assign(units + 1, 0);
  for (uint32_t u : unit_of_) ++unit_offsets_[u + 1];
  for (size_t u = 0; u < units; ++u) unit_offsets_[u + 1] += unit_offsets_[u];
  unit_events_.resize(events.size());
  std::vector<uint32_t> fill(unit_offsets_.begin(), unit_offsets_.end() - 1);
  for (size_t i = 0; i < events.size(); ++i)
    unit_events_[fill[unit_of_[i]]++] = static_cast<uint32_t>(i);
}

void TraceCutter::IndexHandles() {
  const std::vector<Event>& events = trace_->events;
  // Who names and who produces each handle.
  const size_t handle_count = trace_->handles.size();
  naming_.resize(handle_count);
  producing_.resize(handle_count);
  transitions_.resize(handle_count);
  for (size_t i = 0; i < events.size(); ++i) {
    const uint32_t u = unit_of_[i];
    ForEachHandle(events[i], [&](uint64_t h, format::FieldDir dir, uint16_t) {
      if (h >= handle_count) return;
      std::vector<uint32_t>& n = naming_[h];
      if (n.empty() || n.back() != u) n.push_back(u);
      if (dir == format::FieldDir::kOut) {
        std::vector<uint32_t>& p = producing_[h];
        if (p.empty() || p.back() != u) p.push_back(u);
      }
    });
  }
  // Units arrive in seq order of their events, not of their units: sort.
  for (std::vector<uint32_t>* lists : {naming_.data(), producing_.data()}) {
    for (size_t h = 0; h < handle_count; ++h) {
      std::vector<uint32_t>& v = lists[h];
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
  }
}

absl::Status TraceCutter::RunChecker() {
  const std::vector<Event>& events = trace_->events;
  const size_t handle_count = trace_->handles.size();
  // The checker: the original verdict and every handle's state transitions.
  TransitionCollector collector;
  check::CheckOptions options;
  options.strings = &trace_->strings;
  check::Checker checker(options);
  checker.set_observer(&collector);
  absl::StatusOr<check::CheckResult> result = checker.Run(events, trace_->handles);
  if (!result.ok()) return result.status();
  findings_ = std::move(*result);
  finding_keys_ = FindingKeys(findings_);
  for (const check::TransitionEvent& t : collector.seen) {
    if (t.handle == 0 || t.handle >= handle_count) continue;
    const size_t i = EventIndexOfSeq(events, t.seq);
    if (i >= events.size()) continue;
    transitions_[t.handle].push_back({unit_of_[i], t.from, t.to, t.role});
    if (t.role == rules::HandleRole::kImmediateContext) immediate_contexts_.insert(t.handle);
    if (t.role == rules::HandleRole::kDeferredContext) deferred_contexts_.insert(t.handle);
  }
  // CalcDeferredContextHandleSize names the IC object by its address (a pointer field).
  for (size_t u = 0; u < unit_count(); ++u) {
    const Event& e = Top(u);
    constexpr int kIcObject = ddi::fields::CalcDeferredContextHandleSize::pICObject;
    if (RoleOf(e) != ddi::CallRole::kLocalSize || e.args.size() <= kIcObject) continue;
    const int64_t h = trace_->handles.Find(absl::StrCat("0x", absl::Hex(e.args[kIcObject])));
    if (h > 0) local_sizes_[h].push_back(static_cast<uint32_t>(u));
  }
  for (std::vector<Transition>& v : transitions_)
    std::stable_sort(v.begin(), v.end(),
                     [](const Transition& a, const Transition& b) { return a.unit < b.unit; });
  return absl::OkStatus();
}

void TraceCutter::BuildEpochs() {
  const size_t units = unit_count();
  // Epochs: a CreateDevice made while no device was alive starts one.
  // By the calls (CreateDevice, DestroyDevice of an immediate context), not by transitions:
  // a device value the checker still holds from an earlier run shows no transition from None.
  std::vector<int> device_delta(units, 0);
  for (size_t u = 0; u < units; ++u) {
    const Event& e = Top(u);
    const ddi::CallRole r = RoleOf(e);
    if (r == ddi::CallRole::kCreateDevice) ++device_delta[u];
    if (r == ddi::CallRole::kDestroyDevice && !e.args.empty() &&
        immediate_contexts_.count(e.args[0]))
      --device_delta[u];
  }
  epoch_.assign(units, 0);
  int alive = 0;
  uint32_t epoch = 0;
  for (size_t u = 0; u < units; ++u) {
    if (device_delta[u] > 0 && alive == 0) epoch = static_cast<uint32_t>(u);
    alive = std::max(0, alive + device_delta[u]);
    epoch_[u] = epoch;
  }
  // The caps and size queries that prepare a run's first CreateDevice belong to its run.
  for (size_t u = 0; u < units; ++u) {
    if (epoch_[u] != u) continue;
    for (int64_t p = prev_same_tid_[u];
         p >= 0 && (IsSizeQueryUnit(RoleOf(Top(p))) || RoleOf(Top(p)) == ddi::CallRole::kCaps);
         p = prev_same_tid_[p])
      epoch_[p] = static_cast<uint32_t>(u);
  }
}

void TraceCutter::BuildCreating() {
  const size_t units = unit_count();
  const size_t handle_count = trace_->handles.size();
  std::vector<bool> creates(units, false);
  for (const std::vector<Transition>& v : transitions_)
    for (const Transition& t : v)
      if (t.from == rules::State::kNone) creates[t.unit] = true;
  // Calls no state machine follows that create by name (DxgkDdiCreateDevice, OpenAdapter...).
  for (size_t u = 0; u < units; ++u) {
    const absl::string_view name = ddi::NameOf(Top(u).call);
    if (IsCreateRole(RoleOf(Top(u))) || absl::StrContains(name, "Create") ||
        absl::StrContains(name, "Open"))
      creates[u] = true;
  }
  creating_.resize(handle_count);
  for (size_t h = 0; h < handle_count; ++h)
    for (uint32_t u : naming_[h])
      if (creates[u]) creating_[h].push_back(u);
}

int64_t TraceCutter::UnitOfSeq(uint64_t seq) const {
  const size_t i = EventIndexOfSeq(trace_->events, seq);
  if (i >= trace_->events.size() || trace_->events[i].seq != seq) return -1;
  return unit_of_[i];
}

size_t TraceCutter::FirstUnitAtOrAfter(uint64_t seq) const {
  auto it = std::lower_bound(unit_top_.begin(), unit_top_.end(), seq,
                             [&](uint32_t top, uint64_t s) { return trace_->events[top].seq < s; });
  return static_cast<size_t>(it - unit_top_.begin());
}

absl::Span<const uint32_t> TraceCutter::UnitEvents(size_t unit) const {
  return absl::MakeConstSpan(unit_events_.data() + unit_offsets_[unit],
                             unit_offsets_[unit + 1] - unit_offsets_[unit]);
}

std::vector<uint64_t> TraceCutter::UnitHandles(size_t unit) const {
  std::vector<uint64_t> out;
  for (uint32_t i : UnitEvents(unit))
    ForEachHandle(trace_->events[i], [&](uint64_t h, format::FieldDir, uint16_t) {
      if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
    });
  return out;
}

absl::Span<const uint32_t> TraceCutter::UnitsNaming(uint64_t handle) const {
  if (handle >= naming_.size()) return {};
  return naming_[handle];
}

int64_t TraceCutter::LifetimeStart(uint64_t handle, size_t unit) const {
  if (handle >= naming_.size()) return -1;
  // Nothing from before the unit's epoch: the same value named something else then.
  int64_t dead = static_cast<int64_t>(epoch_[unit]) - 1;
  // A state machine follows it: its latest creation, unless the value died since.
  const std::vector<Transition>& t = transitions_[handle];
  for (size_t k = t.size(); k-- > 0;) {
    if (t[k].unit > unit) continue;
    if (static_cast<int64_t>(t[k].unit) <= dead) break;
    if (t[k].from == rules::State::kNone) return t[k].unit;
    if (t[k].unit < unit &&
        (t[k].to == rules::State::kDestroyed || t[k].to == rules::State::kCreateFailed)) {
      dead = t[k].unit;  // the value is reused by something no state machine follows
      break;
    }
  }
  // A create names the runtime handles (HRT*) it hands the driver for the first time.
  if (t.empty() && IsCreateRole(RoleOf(Top(unit)))) return static_cast<int64_t>(unit);
  for (const std::vector<uint32_t>* p : {&producing_[handle], &creating_[handle]}) {
    auto it = std::upper_bound(p->begin(), p->end(), static_cast<uint32_t>(unit));
    if (it != p->begin() && static_cast<int64_t>(*(it - 1)) > dead) return *(it - 1);
  }
  const std::vector<uint32_t>& n = naming_[handle];
  auto it = std::lower_bound(n.begin(), n.end(), static_cast<uint32_t>(dead + 1));
  if (it != n.end() && *it <= unit) return *it;
  return -1;
}

void TraceCutter::AddDependencies(size_t u, Closure mode, std::vector<uint32_t>* out) const {
  const Event& top = Top(u);
  const ddi::CallRole role = RoleOf(top);
  // CalcDeferredContextHandleSize follows the IC creation it sizes (R35).
  if (role == ddi::CallRole::kLocalSize && prev_same_tid_[u] >= 0)
    out->push_back(static_cast<uint32_t>(prev_same_tid_[u]));
  for (uint64_t h : UnitHandles(u)) {
    const int64_t start = LifetimeStart(h, u);
    if (start < 0) continue;
    if (static_cast<size_t>(start) != u) out->push_back(static_cast<uint32_t>(start));
    // The handle size a DC-local open of it needs: the latest CalcDeferredContextHandleSize
    // asked for it before.
    if (auto ls = local_sizes_.find(h); ls != local_sizes_.end()) {
      auto it = std::lower_bound(ls->second.begin(), ls->second.end(), static_cast<uint32_t>(u));
      if (it != ls->second.begin() && *(it - 1) >= start) out->push_back(*(it - 1));
    }
    if (mode != Closure::kFaithful) continue;
    // A deferred context: every call made through it in this lifetime (its recordings, with the
    // local handles they opened and closed; what a Finish puts into its command list).
    if (deferred_contexts_.count(h)) {
      for (uint32_t v : UnitsNaming(h)) {
        if (v >= u) break;
        if (v > start) out->push_back(v);
      }
    }
    for (const Transition& t : transitions_[h]) {
      if (t.unit >= u) break;
      if (t.unit > start) out->push_back(t.unit);
    }
  }
  // The size queries the thread made right before it.
  for (int64_t p = prev_same_tid_[u]; p >= 0 && IsSizeQueryUnit(RoleOf(Top(p)));
       p = prev_same_tid_[p])
    out->push_back(static_cast<uint32_t>(p));
  // What the runtime asks right after a create on the same thread (R35: the local handle size of
  // a new command list).
  if (const int64_t n = next_same_tid_[u]; n >= 0 && RoleOf(Top(n)) == ddi::CallRole::kLocalSize)
    out->push_back(static_cast<uint32_t>(n));
  // The Map an Unmap closes, the QueryBegin a QueryEnd ends: the latest such call on the same
  // (context, object[, subresource]) with no closing call between.
  ddi::CallRole open = ddi::CallRole::kNone;
  if (role == ddi::CallRole::kUnmap) open = ddi::CallRole::kMap;
  if (role == ddi::CallRole::kQueryEnd) open = ddi::CallRole::kQueryBegin;
  if (open != ddi::CallRole::kNone && top.args.size() >= 2) {
    const bool sub = open == ddi::CallRole::kMap;
    auto same = [&](const Event& e) {
      return e.args.size() >= top.args.size() && e.args[0] == top.args[0] &&
             e.args[1] == top.args[1] && (!sub || top.args.size() < 3 || e.args[2] == top.args[2]);
    };
    absl::Span<const uint32_t> n = UnitsNaming(top.args[1]);
    auto it = std::lower_bound(n.begin(), n.end(), static_cast<uint32_t>(u));
    while (it != n.begin()) {
      --it;
      const Event& e = Top(*it);
      if (!same(e)) continue;
      if (RoleOf(e) == open) out->push_back(*it);
      if (RoleOf(e) == open || RoleOf(e) == role) break;
    }
  }
}

void TraceCutter::Close(std::vector<bool>* keep, Closure mode) const {
  keep->resize(unit_count(), false);
  std::vector<uint32_t> work;
  for (size_t u = 0; u < keep->size(); ++u)
    if ((*keep)[u]) work.push_back(static_cast<uint32_t>(u));
  std::vector<uint32_t> deps;
  while (!work.empty()) {
    const uint32_t u = work.back();
    work.pop_back();
    deps.clear();
    AddDependencies(u, mode, &deps);
    for (uint32_t d : deps) {
      if ((*keep)[d]) continue;
      (*keep)[d] = true;
      work.push_back(d);
    }
  }
}

std::vector<Event> TraceCutter::Events(const std::vector<bool>& keep) const {
  std::vector<Event> out;
  for (size_t i = 0; i < trace_->events.size(); ++i)
    if (unit_of_[i] < keep.size() && keep[unit_of_[i]]) out.push_back(trace_->events[i]);
  return out;
}

std::vector<uint32_t> TraceCutter::Closed(absl::Span<const uint32_t> units, Closure mode) const {
  absl::flat_hash_set<uint32_t> seen(units.begin(), units.end());
  std::vector<uint32_t> work(seen.begin(), seen.end());
  std::vector<uint32_t> deps;
  while (!work.empty()) {
    const uint32_t u = work.back();
    work.pop_back();
    deps.clear();
    AddDependencies(u, mode, &deps);
    for (uint32_t d : deps)
      if (seen.insert(d).second) work.push_back(d);
  }
  std::vector<uint32_t> out(seen.begin(), seen.end());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Event> TraceCutter::EventsOf(absl::Span<const uint32_t> units) const {
  std::vector<uint32_t> idx;
  for (uint32_t u : units) {
    absl::Span<const uint32_t> ev = UnitEvents(u);
    idx.insert(idx.end(), ev.begin(), ev.end());
  }
  std::sort(idx.begin(), idx.end());
  std::vector<Event> out;
  out.reserve(idx.size());
  for (uint32_t i : idx) out.push_back(trace_->events[i]);
  return out;
}

absl::StatusOr<check::CheckResult> TraceCutter::Check(absl::Span<const Event> events) const {
  check::CheckOptions options;
  options.strings = &trace_->strings;
  return check::Check(events, trace_->handles, options);
}

namespace {

// Whether the unit submits an immediate context's commands (a RenderCb among its events).
bool UnitSubmits(const TraceCutter& cutter, size_t u) {
  const format::LoadedTrace& trace = cutter.trace();
  bool render = false;
  for (uint32_t i : cutter.UnitEvents(u))
    render = render || RoleOf(trace.events[i]) == ddi::CallRole::kRender;
  return render;
}

// The units the window enters: those entered in seq from..to, or with a handle, those naming it
// in that range. InvalidArgument when the handle is not named or the window holds no call.
absl::StatusOr<std::vector<bool>> WindowUnits(const TraceCutter& cutter, const TrimOptions& options,
                                              uint64_t from, uint64_t to) {
  const format::LoadedTrace& trace = cutter.trace();
  const size_t units = cutter.unit_count();
  std::vector<bool> window(units, false);
  if (options.handle) {
    const int64_t handle = trace.handles.Find(*options.handle);
    if (handle <= 0 || cutter.UnitsNaming(handle).empty())
      return absl::InvalidArgumentError(
          absl::StrCat("handle ", *options.handle, ": no call of the trace names it"));
    for (uint32_t u : cutter.UnitsNaming(handle)) {
      const uint64_t s = cutter.Top(u).seq;
      if (s >= from && s <= to) window[u] = true;
    }
  } else {
    for (size_t u = cutter.FirstUnitAtOrAfter(from); u < units && cutter.Top(u).seq <= to; ++u)
      window[u] = true;
  }
  if (std::find(window.begin(), window.end(), true) == window.end())
    return absl::InvalidArgumentError(absl::StrCat(
        "no call ", options.handle ? absl::StrCat("naming ", *options.handle, " ") : "",
        "was entered in seq ", from, "..", to == UINT64_MAX ? "end" : absl::StrCat(to)));
  return window;
}

// The pipeline state each context alive at the cut has bound: the latest setter call per
// context, setter and slot, since the context's current lifetime (a deferred context: its
// current recording) began.
void KeepBoundState(const TraceCutter& cutter, size_t first, std::vector<bool>* keep) {
  std::map<std::tuple<uint64_t, uint32_t, uint64_t>, uint32_t> latest;
  for (size_t u = 0; u < first; ++u) {
    const Event& e = cutter.Top(u);
    if (RoleOf(e) != ddi::CallRole::kSet || e.args.empty()) continue;
    const format::CallInfo* call = format::GetCall(e.call);
    const bool slot_is_handle = call == nullptr || e.args.size() < 2 || call->field_count < 2 ||
                                format::Fields(*call)[1].kind != FieldKind::kHandle;
    latest[{e.args[0], static_cast<uint32_t>(e.call), slot_is_handle ? 0 : e.args[1]}] =
        static_cast<uint32_t>(u);
  }
  for (const auto& [key, u] : latest) {
    const uint64_t context = std::get<0>(key);
    // Set in an earlier lifetime of the context, or before its current recording began.
    const int64_t start = cutter.LifetimeStart(context, first);
    if (start > static_cast<int64_t>(u)) continue;
    bool current = true;
    for (uint32_t v : cutter.UnitsNaming(context)) {
      if (v <= u) continue;
      if (v >= first) break;
      const ddi::CallRole r = RoleOf(cutter.Top(v));
      if (r == ddi::CallRole::kCreateCommandList || r == ddi::CallRole::kDestroyDevice ||
          r == ddi::CallRole::kRecycleCreateContext) {
        current = false;  // a Finish or the context's end since
        break;
      }
    }
    if (current) (*keep)[u] = true;
  }
}

// The commands an immediate context had buffered and not yet submitted at the cut: its calls
// since the last submission (RenderCb) before the window; the driver submits them inside it.
void KeepUnsubmittedCommands(const TraceCutter& cutter, size_t first, std::vector<bool>* keep) {
  size_t since = 0;
  for (size_t u = first; u-- > 0;) {
    if (UnitSubmits(cutter, u)) {
      since = u + 1;
      break;
    }
  }
  for (size_t u = since; u < first; ++u) {
    const Event& e = cutter.Top(u);
    if (!e.args.empty() && ddi::TraitsOf(e.call).layer == format::Layer::kDevice &&
        cutter.IsImmediateContext(e.args[0]))
      (*keep)[u] = true;
  }
}

// The DX6 buffer path (ddi-spec §7) hands buffers back and forth between the runtime and the
// driver (D3dDrawPrimitives2 swaps them): a window with DX6 calls gets the DX6 calls before
// it, from the first.
void KeepDx6Prelude(const TraceCutter& cutter, const std::vector<bool>& window, size_t first,
                    std::vector<bool>* keep) {
  const size_t units = cutter.unit_count();
  bool dx6 = false;
  for (size_t u = first; u < units && !dx6; ++u)
    dx6 = window[u] && ddi::TraitsOf(cutter.Top(u).call).layer == format::Layer::kDx6;
  if (dx6) {
    for (size_t u = 0; u < first; ++u)
      if (ddi::TraitsOf(cutter.Top(u).call).layer == format::Layer::kDx6) (*keep)[u] = true;
  }
}

// Judges the cut; chases what the original did not report with the history of the handle it
// is about. Fills result->events and result->new_findings.
absl::Status JudgeCut(const TraceCutter& cutter, std::vector<bool>* keep, TrimResult* result) {
  absl::StatusOr<check::CheckResult> verdict;
  for (int round = 0;; ++round) {
    result->events = cutter.Events(*keep);
    verdict = cutter.Check(result->events);
    if (!verdict.ok()) return verdict.status();
    result->new_findings.clear();
    for (const auto* list : {&verdict->violations, &verdict->warnings})
      for (const check::Violation& v : *list)
        if (!cutter.finding_keys().count({v.rule, v.seq})) result->new_findings.push_back(v);
    if (result->new_findings.empty() || round == 3) break;
    bool added = false;
    for (const check::Violation& v : result->new_findings) {
      const int64_t u = cutter.UnitOfSeq(v.seq);
      if (u < 0 || v.handle == 0) continue;
      const int64_t start = std::max<int64_t>(0, cutter.LifetimeStart(v.handle, u));
      for (uint32_t w : cutter.UnitsNaming(v.handle)) {
        if (w < start || w >= u || (*keep)[w]) continue;
        (*keep)[w] = true;
        added = true;
      }
    }
    if (!added) break;
    cutter.Close(keep, TraceCutter::Closure::kFaithful);
  }
  return absl::OkStatus();
}

// Records what could not be synthesized at `seq`, as a line and an annotation.
void AddNote(TrimResult* result, uint64_t seq, const std::string& text) {
  result->unsynthesized.push_back(absl::StrCat("seq ", seq, ": ", text));
  std::string& n = result->notes[seq];
  absl::StrAppend(&n, n.empty() ? "cltrace trim: " : "; ", text);
}

// Submissions whose previous submission is not in the cut: what the immediate context had
// buffered before them is only partly there (the state the runtime re-sent inside the
// submitting call before is not), so their command lengths can differ on replay.
void NotePartialSubmissions(const TraceCutter& cutter, const std::vector<bool>& keep,
                            TrimResult* result) {
  const format::LoadedTrace& trace = cutter.trace();
  const size_t units = cutter.unit_count();
  auto in_cut = [&](uint64_t seq) {
    return std::binary_search(result->events.begin(), result->events.end(), seq,
                              [](const auto& a, const auto& b) {
                                if constexpr (std::is_same_v<std::decay_t<decltype(a)>, Event>) {
                                  return a.seq < b;
                                } else {
                                  return a < b.seq;
                                }
                              });
  };
  // The first submission of the trace: complete when no call before it is left out.
  bool previous_kept = true;
  for (size_t u = 0; u < units && previous_kept; ++u) {
    if (UnitSubmits(cutter, u)) break;
    previous_kept = keep[u];
  }
  for (const Event& e : trace.events) {
    if (RoleOf(e) != ddi::CallRole::kRender) continue;
    const bool kept = in_cut(e.seq);
    if (kept && !previous_kept) {
      AddNote(result, e.seq,
              absl::StrCat("the submission before this one (RenderCb) is not in the cut: ",
                           "the commands buffered for it are only partly there, its command ",
                           "lengths can differ on replay"));
    }
    previous_kept = kept;
  }
}

// Resource contents: what earlier calls wrote into a resource the window uses.
void NoteResourceContents(const TraceCutter& cutter, const std::vector<bool>& window,
                          const std::vector<bool>& keep, size_t first, TrimResult* result) {
  const format::LoadedTrace& trace = cutter.trace();
  const size_t units = cutter.unit_count();
  absl::flat_hash_set<uint64_t> resources_noted;
  for (size_t u = first; u < units; ++u) {
    if (!window[u]) continue;
    for (uint32_t i : cutter.UnitEvents(u)) {
      ForEachHandle(trace.events[i], [&](uint64_t h, format::FieldDir, uint16_t type) {
        if (!IsResourceType(type) || !resources_noted.insert(h).second) return;
        const int64_t start = cutter.LifetimeStart(h, first);
        if (start < 0) return;
        uint64_t dropped = 0;
        for (uint32_t w : cutter.UnitsNaming(h)) {
          if (w >= first) break;
          if (w >= start && !keep[w]) ++dropped;
        }
        if (dropped == 0) return;
        AddNote(result, trace.events[i].seq,
                absl::StrCat("resource ", trace.handles.Token(h),
                             ": its contents are not synthesized (", dropped,
                             " earlier calls naming it are not in the cut)"));
      });
    }
  }
}

// Reports what the cut could not synthesize: findings the original did not report, partial
// submissions, calls in progress at the cut and resource contents.
void NoteUnsynthesized(const TraceCutter& cutter, const std::vector<bool>& window,
                       const std::vector<bool>& keep, size_t first, TrimResult* result) {
  const uint64_t first_seq = cutter.Top(first).seq;
  for (const check::Violation& v : result->new_findings) {
    AddNote(result, v.seq,
            absl::StrCat(rules::RuleId(v.rule), " is reported on the cut but not by the ",
                         "original: state before the cut was not synthesized (", v.message, ")"));
  }
  NotePartialSubmissions(cutter, keep, result);
  // Calls other threads were inside of when the window opened.
  for (size_t u = 0; u < first; ++u) {
    const Event& e = cutter.Top(u);
    if (keep[u] || !(e.end == 0 || e.end >= first_seq)) continue;
    AddNote(result, first_seq,
            absl::StrCat(ddi::NameOf(e.call), " (seq ", e.seq, ", tid ", e.tid,
                         ") was in progress at the cut and is left out"));
  }
  NoteResourceContents(cutter, window, keep, first, result);
  std::sort(result->unsynthesized.begin(), result->unsynthesized.end());
}

}  // namespace

absl::StatusOr<TrimResult> Trim(const TraceCutter& cutter, const TrimOptions& options) {
  if (cutter.unit_count() == 0) return absl::InvalidArgumentError("the trace holds no call");
  const uint64_t from = options.from.value_or(0);
  const uint64_t to = options.to.value_or(UINT64_MAX);
  if (from > to)
    return absl::InvalidArgumentError(absl::StrCat("--from ", from, " is after --to ", to));
  const size_t units = cutter.unit_count();
  absl::StatusOr<std::vector<bool>> window_or = WindowUnits(cutter, options, from, to);
  if (!window_or.ok()) return window_or.status();
  const std::vector<bool>& window = *window_or;
  const size_t first =
      static_cast<size_t>(std::find(window.begin(), window.end(), true) - window.begin());
  std::vector<bool> keep = window;
  if (!options.handle) {
    KeepBoundState(cutter, first, &keep);
    KeepUnsubmittedCommands(cutter, first, &keep);
  }
  KeepDx6Prelude(cutter, window, first, &keep);
  cutter.Close(&keep, TraceCutter::Closure::kFaithful);

  TrimResult result;
  if (absl::Status s = JudgeCut(cutter, &keep, &result); !s.ok()) return s;
  NoteUnsynthesized(cutter, window, keep, first, &result);
  for (size_t u = 0; u < units; ++u) {
    if (!keep[u]) continue;
    const uint64_t n = cutter.UnitEvents(u).size();
    (window[u] ? result.window_calls : result.prelude_calls) += n;
  }
  return result;
}

absl::Status WriteCut(const format::LoadedTrace& trace, absl::Span<const Event> events,
                      const std::map<uint64_t, std::string>& notes, const std::string& path,
                      absl::string_view writer_name) {
  format::TraceWriter::Options options;
  options.writer.set_name(std::string(writer_name));
  options.writer.set_version(trace.header.writer().version());
  // The events keep their recorded timestamps: so does what they say about their source.
  options.writer.set_timestamps(trace.header.writer().timestamps());
  options.process = trace.header.process();
  if (trace.header.timestamp_unit_ns() != 0)
    options.timestamp_unit_ns = trace.header.timestamp_unit_ns();
  options.start_unix_ns = trace.header.start_unix_ns();
  options.background = false;
  // Written beside the target and renamed at the end: a failure leaves no half file.
  const std::string tmp = absl::StrCat(path, ".tmp-", getpid());
  absl::StatusOr<std::unique_ptr<format::TraceWriter>> w = format::TraceWriter::Open(tmp, options);
  if (!w.ok()) return w.status();
  format::TraceWriter& writer = **w;
  std::vector<uint64_t> handle_ids(trace.handles.size(), UINT64_MAX);
  std::vector<uint64_t> string_ids(trace.strings.size(), UINT64_MAX);
  auto handle = [&](uint64_t id) {
    if (id >= handle_ids.size()) return id;
    if (handle_ids[id] == UINT64_MAX)
      handle_ids[id] = writer.InternHandleToken(trace.handles.Token(id));
    return handle_ids[id];
  };
  auto string = [&](uint64_t id) {
    if (id >= string_ids.size()) return id;
    if (string_ids[id] == UINT64_MAX) string_ids[id] = writer.InternString(trace.strings.Token(id));
    return string_ids[id];
  };
  absl::Status status;
  for (const Event& original : events) {
    Event e = original;
    auto n = notes.find(e.seq);
    RemapIds(&e, handle, string);
    if (n != notes.end()) {
      const absl::string_view own = trace.strings.Token(original.annotation);
      e.annotation =
          writer.InternString(own.empty() ? n->second : absl::StrCat(own, "; ", n->second));
    }
    if (e.content != 0) e.content = writer.InternContent(trace.contents.Token(original.content));
    status = writer.Append(e);
    if (!status.ok()) break;
  }
  absl::Status closed = writer.Close();
  if (status.ok()) status = closed;
  if (status.ok() && std::rename(tmp.c_str(), path.c_str()) != 0)
    status = absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", path));
  if (!status.ok()) std::remove(tmp.c_str());
  return status;
}

}  // namespace cltrace::cli
