#include "replayer/internal/kernel_model.h"

#include <algorithm>
#include <tuple>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ddi/call_traits.h"
#include "ddi/catalog.h"
#include "format/call_traits.h"
#include "format/jsonl.h"
#include "replayer/internal/compare.h"
#include "replayer/internal/session.h"
#include "replayer/internal/thunk_table.h"

namespace cltrace::replay::internal {
namespace {

using format::CallId;
using format::CallTraits;
using format::Event;
using format::FieldDir;
using format::FieldInfo;
using format::FieldKind;

// The C tables carry no state: the wrappers find the replay's model through these (one replay
// per process at a time, see Session).
std::atomic<ModelKernel*> g_model{nullptr};
std::atomic<const DRIVER_INITIALIZATION_DATA*> g_real_kmd{nullptr};
std::atomic<const DXGKRNL_INTERFACE*> g_real_dxgkrnl{nullptr};
std::atomic<const CLTRACE_GPU_OBSERVER*> g_real_observer{nullptr};

bool IsKernelLayer(format::Layer l) {
  return l == format::Layer::kKmd || l == format::Layer::kDxgkrnl;
}

// Captures raw values: the comparison binds them to recorded ids itself.
uint64_t Raw(uint64_t raw) { return raw; }

template <CallId kId, typename Pfn = typename CallTraits<kId>::Pfn>
struct Wrap;

// One kernel-layer entry point (KMD DDI, Dxgkrnl callback or the GPU observer's
// GpuFenceRetired): capture, forward to the model's real table, capture the outputs, compare.
template <CallId kId, typename R, typename... P>
struct Wrap<kId, R (*)(P...)> {
  static R Fn(P... p) {
    using T = CallTraits<kId>;
    using Table = typename T::Table;
    const Table* real;
    if constexpr (std::is_same_v<Table, DRIVER_INITIALIZATION_DATA>) {
      real = g_real_kmd.load(std::memory_order_acquire);
    } else if constexpr (std::is_same_v<Table, DXGKRNL_INTERFACE>) {
      real = g_real_dxgkrnl.load(std::memory_order_acquire);
    } else {
      static_assert(std::is_same_v<Table, CLTRACE_GPU_OBSERVER>);
      real = g_real_observer.load(std::memory_order_acquire);
    }
    auto pfn = *reinterpret_cast<const typename T::Pfn*>(reinterpret_cast<const char*>(real) +
                                                         T::kSlotOffset);
    ModelKernel* m = g_model.load(std::memory_order_acquire);
    format::ArgVec args;
    if (m != nullptr) {
      T::CaptureEntry(&args, Raw, p...);
      m->Enter(kId, args);
    }
    int64_t ret = 0;
    if constexpr (std::is_void_v<R>) {
      pfn(p...);
    } else {
      R r = pfn(p...);
      ret = static_cast<int64_t>(r);
      if (m != nullptr) {
        T::CaptureExit(&args, Raw, p...);
        m->Exit(kId, args, ret);
      }
      return r;
    }
    if (m != nullptr) {
      T::CaptureExit(&args, Raw, p...);
      m->Exit(kId, args, ret);
    }
  }
};

template <CallId kId>
using ModelWrap = Wrap<kId>;

const DRIVER_INITIALIZATION_DATA* KmdWrapper() {
  return ThunkTable<DRIVER_INITIALIZATION_DATA, ModelWrap>();
}

const DXGKRNL_INTERFACE* DxgkrnlWrapper() { return ThunkTable<DXGKRNL_INTERFACE, ModelWrap>(); }

const CLTRACE_GPU_OBSERVER* ObserverWrapper() {
  return ThunkTable<CLTRACE_GPU_OBSERVER, ModelWrap>();
}

class ModelClock {
 public:
  explicit ModelClock(std::atomic<int64_t>* total)
      : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~ModelClock() {
    total_->fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - start_)
                          .count(),
                      std::memory_order_relaxed);
  }

 private:
  std::atomic<int64_t>* total_;
  std::chrono::steady_clock::time_point start_;
};

// Calls visit(k, i) for every event i under top-level call k (k's own event included), depth
// first from the top, for each k in order.
template <typename Visit>
void ForEachUnderTop(const Plan& plan, Visit visit) {
  std::vector<uint32_t> stack;
  for (size_t k = 0; k < plan.top.size(); ++k) {
    stack.assign(1, plan.top[k]);
    while (!stack.empty()) {
      const uint32_t i = stack.back();
      stack.pop_back();
      visit(k, i);
      for (int32_t c = plan.first_child[i]; c >= 0; c = plan.next_sibling[c]) {
        stack.push_back(static_cast<uint32_t>(c));
      }
    }
  }
}

}  // namespace

std::vector<uint32_t> AmbiguousKernelThunks(const Plan& plan) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < plan.events.size(); ++i) {
    const format::CallInfo* ci = format::GetCall(plan.events[i].call);
    if (ci == nullptr || ci->layer != format::Layer::kKernelCb || plan.events[i].end == 0) {
      continue;
    }
    bool nested = false;
    for (int32_t c = plan.first_child[i]; c >= 0 && !nested; c = plan.next_sibling[c]) {
      const format::CallInfo* cc = format::GetCall(plan.events[c].call);
      nested = cc != nullptr && IsKernelLayer(cc->layer);
    }
    if (!nested) out.push_back(static_cast<uint32_t>(i));
  }
  return out;
}

std::optional<std::pair<uint32_t, uint32_t>> SingleThreadKernelOrderConflict(const Plan& plan) {
  // Every action the model orders, keyed as ModelKernel keys it (the seq of its first
  // kernel-layer event), at its place in single-threaded order: (top-level call index, seq).
  // A thunk that made no kernel-layer call of its own has no recorded place (see
  // AmbiguousKernelThunks) and is left out; top-level kernel work runs before the top-level
  // call after it.
  struct Action {
    size_t top;
    uint64_t seq;
    uint64_t key;
    uint32_t event;
  };
  std::vector<Action> actions;
  auto first_kernel_child = [&](uint32_t i) -> int64_t {
    for (int32_t c = plan.first_child[i]; c >= 0; c = plan.next_sibling[c]) {
      const format::CallInfo* cc = format::GetCall(plan.events[c].call);
      if (cc != nullptr && IsKernelLayer(cc->layer)) return c;
    }
    return -1;
  };
  std::vector<uint8_t> nested(plan.events.size(), 0);
  for (size_t i = 0; i < plan.events.size(); ++i) {
    for (int32_t c = plan.first_child[i]; c >= 0; c = plan.next_sibling[c]) nested[c] = 1;
  }
  for (size_t i = 0, k = 0; i < plan.events.size(); ++i) {
    const format::CallInfo* ci = format::GetCall(plan.events[i].call);
    if (nested[i] || ci == nullptr || !IsKernelLayer(ci->layer)) continue;
    // Top-level kernel work: driven before the next top-level call (ModelKernel::DriveBefore).
    while (k < plan.top.size() && plan.events[plan.top[k]].seq < plan.events[i].seq) ++k;
    actions.push_back({k, 0, plan.events[i].seq, static_cast<uint32_t>(i)});
  }
  ForEachUnderTop(plan, [&](size_t k, uint32_t i) {
    const format::CallInfo* ci = format::GetCall(plan.events[i].call);
    if (ci != nullptr && ci->layer == format::Layer::kKernelCb) {
      if (int64_t c = first_kernel_child(i); c >= 0) {
        actions.push_back({k, plan.events[i].seq, plan.events[c].seq, i});
      }
    }
  });
  std::sort(actions.begin(), actions.end(), [](const Action& a, const Action& b) {
    return std::tie(a.top, a.seq, a.key) < std::tie(b.top, b.seq, b.key);
  });
  const Action* latest = nullptr;  // the action the recorded kernel took last so far
  for (const Action& a : actions) {
    if (latest != nullptr && a.key < latest->key) return std::make_pair(latest->event, a.event);
    if (latest == nullptr || a.key > latest->key) latest = &a;
  }
  return std::nullopt;
}

ModelKernel::ModelKernel(const Plan& plan, Session* session, bool threaded,
                         const absl::flat_hash_map<uint32_t, uint64_t>& order_override,
                         std::chrono::milliseconds turn_timeout)
    : plan_(plan), session_(session), threaded_(threaded), turn_timeout_(turn_timeout) {
  // Which events are nested (children of some call): the rest are top level.
  std::vector<uint8_t> nested(plan.events.size(), 0);
  for (size_t i = 0; i < plan.events.size(); ++i) {
    for (int32_t c = plan.first_child[i]; c >= 0; c = plan.next_sibling[c]) nested[c] = 1;
  }
  for (size_t i = 0; i < plan.events.size(); ++i) {
    const format::CallInfo* ci = format::GetCall(plan.events[i].call);
    if (ci == nullptr) continue;
    if (IsKernelLayer(ci->layer)) {
      expected_.push_back(static_cast<uint32_t>(i));
      top_level_.push_back(nested[i] == 0);
      if (plan.events[i].call == CallId::kGpuFenceRetired) fence_digests_recorded_ = true;
    }
  }
  // Every action that lets virtual time pass gets a turn, in the order the recorded kernel
  // saw it:
  //  - a kernel-thunk call: the kernel serialises them, so one that made kernel-layer calls of
  //    its own took its turn at the first of them (several threads may have been inside the
  //    kernel's entry points at once: entry order is not the kernel's order); one that made
  //    none is placed by its exit;
  //  - the top-level kernel work recorded before a top-level call (DriveBefore), placed by its
  //    first kernel-layer event.
  std::vector<std::pair<uint64_t, int64_t>> actions;  // (key seq, thunk event index or -1-k)
  for (size_t i = 0; i < plan.events.size(); ++i) {
    const format::CallInfo* ci = format::GetCall(plan.events[i].call);
    if (ci == nullptr || ci->layer != format::Layer::kKernelCb) continue;
    uint64_t key = plan.events[i].end;
    if (auto it = order_override.find(static_cast<uint32_t>(i)); it != order_override.end()) {
      key = it->second;
    }
    for (int32_t c = plan.first_child[i]; c >= 0; c = plan.next_sibling[c]) {
      const format::CallInfo* cc = format::GetCall(plan.events[c].call);
      if (cc != nullptr && IsKernelLayer(cc->layer)) {
        key = plan.events[c].seq;
        break;
      }
    }
    actions.emplace_back(key, static_cast<int64_t>(i));
  }
  for (size_t e = 0, k = 0; e < expected_.size(); ++e) {
    if (!top_level_[e]) continue;
    const uint64_t seq = plan.events[expected_[e]].seq;
    while (k < plan.top.size() && plan.events[plan.top[k]].seq < seq) ++k;
    const uint64_t before = k < plan.top.size() ? plan.events[plan.top[k]].seq : UINT64_MAX;
    if (drive_slots_.emplace(before, 0).second) {
      actions.emplace_back(seq, -1 - static_cast<int64_t>(drive_keys_.size()));
      drive_keys_.push_back(before);
    }
  }
  std::sort(actions.begin(), actions.end());
  absl::flat_hash_map<uint64_t, int64_t> top_event_of_seq;
  for (uint32_t i : plan.top) top_event_of_seq[plan.events[i].seq] = i;
  for (const auto& [key, what] : actions) {
    if (what >= 0) {
      thunk_ordinal_[static_cast<uint32_t>(what)] = action_seq_.size();
      action_event_.push_back(what);
    } else {
      const uint64_t before = drive_keys_[static_cast<size_t>(-1 - what)];
      drive_slots_[before] = action_seq_.size();
      auto top = top_event_of_seq.find(before);
      action_event_.push_back(top == top_event_of_seq.end() ? -1 : top->second);
    }
    action_seq_.push_back(key);
  }
  // The turns each top-level call owns: its kernel thunks' and the driven work before it.
  {
    ordinals_of_top_.assign(plan.top.size(), {});
    absl::flat_hash_map<uint64_t, size_t> top_of_seq;
    for (size_t k = 0; k < plan.top.size(); ++k) top_of_seq[plan.events[plan.top[k]].seq] = k;
    ForEachUnderTop(plan, [&](size_t k, uint32_t i) {
      if (auto it = thunk_ordinal_.find(i); it != thunk_ordinal_.end()) {
        ordinals_of_top_[k].push_back(it->second);
      }
    });
    for (const auto& [seq, ordinal] : drive_slots_) {
      if (auto it = top_of_seq.find(seq); it != top_of_seq.end()) {
        ordinals_of_top_[it->second].push_back(ordinal);
      }
    }
  }
  // Checkpoints: after each top-level Flush and Present, the GPU content as of the kernel work
  // that happened before the call returned (every turn keyed before its exit, none after).
  for (uint32_t i : plan.top) {
    const Event& e = plan.events[i];
    if (e.call != CallId::kFlush && e.call != CallId::kPresentDXGI) continue;
    Checkpoint c;
    c.seq = e.seq;
    c.call = e.call;
    c.position = static_cast<uint64_t>(
        std::lower_bound(action_seq_.begin(), action_seq_.end(), e.end) - action_seq_.begin());
    checkpoints_.push_back(c);
  }
  std::sort(checkpoints_.begin(), checkpoints_.end(),
            [](const Checkpoint& a, const Checkpoint& b) { return a.position < b.position; });
  ModelKernel* expected = nullptr;
  g_model.compare_exchange_strong(expected, this);
  gpu::TableWrappers w;
  w.kmd = [](const DRIVER_INITIALIZATION_DATA* real) {
    g_real_kmd.store(real, std::memory_order_release);
    return KmdWrapper();
  };
  w.dxgkrnl = [](const DXGKRNL_INTERFACE* real) {
    g_real_dxgkrnl.store(real, std::memory_order_release);
    return DxgkrnlWrapper();
  };
  w.gpu_observer = [](const CLTRACE_GPU_OBSERVER* real) {
    g_real_observer.store(real, std::memory_order_release);
    return ObserverWrapper();
  };
  stack_ = std::make_unique<gpu::KernelStack>(gpu::KernelStackOptions{}, &sink_, w);
}

ModelKernel::~ModelKernel() {
  stack_.reset();
  ModelKernel* self = this;
  g_model.compare_exchange_strong(self, nullptr);
}

HANDLE ModelKernel::ModelDevice(HANDLE runtime_device) {
  std::lock_guard<std::recursive_mutex> lock(compare_mu_);
  for (const Device& d : devices_) {
    if (d.runtime == runtime_device) return d.model;
  }
  // The first kernel call of a device the runtime created: the oldest model device not yet
  // claimed (the runtime creates the kernel device right before the UMD's CreateDevice).
  for (Device& d : devices_) {
    if (d.runtime == nullptr) {
      d.runtime = runtime_device;
      return d.model;
    }
  }
  // The recording shows no DxgkDdiCreateDevice for it (a trace without the kernel layer):
  // create one now so the driver still gets a working kernel.
  Device d;
  if (absl::StatusOr<HANDLE> dev = stack_->kernel().CreateDevice(); dev.ok()) {
    d.model = *dev;
  }
  d.runtime = runtime_device;
  devices_.push_back(d);
  return d.model;
}

// ---- Turns ---------------------------------------------------------------------------------

bool ModelKernel::WaitTurn(uint64_t ordinal) {
  std::unique_lock<std::mutex> lock(turn_mu_);
  if (threaded_) {
    // A turn after one that will never be taken (SkipOrdinal: a call the replay stopped before,
    // a kernel call the driver did not make) is released as soon as every turn before that
    // one was taken, and is out of turn: it must not reach the model, whose answers would no
    // longer be the recorded kernel's. Never a short timeout: a slow thread on a loaded
    // machine is not a departure, and a call let in early would make a divergence of its own.
    // kTurnTimeout only guards against a driver that blocks a turn for good: that turn is then
    // given up like a skipped one, and reported (TurnTimeouts): never a silent departure.
    auto released = [&] { return turn_ >= ordinal || (ordinal > skipped_ && turn_ >= skipped_); };
    if (!turn_cv_.wait_for(lock, turn_timeout_, released)) {
      timeouts_.push_back(
          TurnTimeout{action_event_[ordinal], DescribeTurn(turn_), DescribeTurn(ordinal)});
      skipped_ = std::min(skipped_, turn_);
      lock.unlock();
      turn_cv_.notify_all();
      lock.lock();
    }
  }
  if (ordinal > skipped_) return false;
  TakeCheckpoints(ordinal);
  return true;
}

std::string ModelKernel::DescribeTurn(uint64_t ordinal) const {
  if (ordinal >= action_event_.size()) return "a kernel turn beyond the recording";
  const int64_t i = action_event_[ordinal];
  if (i < 0) return "the kernel work recorded after the last call";
  const Event& e = plan_.events[static_cast<size_t>(i)];
  if (thunk_ordinal_.contains(static_cast<uint32_t>(i))) {
    const format::CallInfo* ci = format::GetCall(e.call);
    return absl::StrCat("the ", ci != nullptr ? ci->name : "kernel thunk", " at seq ", e.seq,
                        " (tid ", e.tid, ")");
  }
  return absl::StrCat("the kernel work recorded before seq ", e.seq, " (tid ", e.tid, ")");
}

std::vector<ModelKernel::TurnTimeout> ModelKernel::TurnTimeouts() {
  std::lock_guard<std::mutex> lock(turn_mu_);
  return timeouts_;
}

std::vector<Divergence> ModelKernel::TurnTimeoutDivergences() {
  std::vector<Divergence> out;
  for (const TurnTimeout& t : TurnTimeouts()) {
    Divergence d;
    if (t.event >= 0) {
      const Event& e = plan_.events[static_cast<size_t>(t.event)];
      d.seq = e.seq;
      d.tid = e.tid;
      d.call = e.call;
    } else if (!plan_.events.empty()) {
      d.seq = plan_.events.back().seq;
      d.tid = plan_.events.back().tid;
    }
    d.expected = absl::StrCat(t.waiter, " to get its kernel turn after ", t.waited_for);
    d.actual = absl::StrFormat(
        "kernel turn timeout: waited %d ms for %s, which never came; gave it up (the kernel "
        "model answers no later kernel call)",
        turn_timeout_.count(), t.waited_for);
    out.push_back(std::move(d));
  }
  return out;
}

void ModelKernel::SkipOrdinal(uint64_t ordinal) {
  {
    std::lock_guard<std::mutex> lock(turn_mu_);
    skipped_ = std::min(skipped_, ordinal);
  }
  if (threaded_) turn_cv_.notify_all();
}

void ModelKernel::SkipTop(size_t top) {
  if (top >= ordinals_of_top_.size()) return;
  for (uint64_t ordinal : ordinals_of_top_[top]) SkipOrdinal(ordinal);
}

void ModelKernel::SkipThunk(uint32_t event) {
  if (auto it = thunk_ordinal_.find(event); it != thunk_ordinal_.end()) SkipOrdinal(it->second);
}

void ModelKernel::AdvanceTurn(uint64_t ordinal) {
  {
    std::lock_guard<std::mutex> lock(turn_mu_);
    turn_ = std::max(turn_, ordinal + 1);
  }
  if (threaded_) turn_cv_.notify_all();
}

// Called with turn_mu_ held by the action about to run at `position`: every action before it
// has run and none after it, so the model's content is exactly what the checkpoints at or
// before this position should see.
void ModelKernel::TakeCheckpoints(uint64_t position) {
  while (next_checkpoint_ < checkpoints_.size() &&
         checkpoints_[next_checkpoint_].position <= position) {
    checkpoints_[next_checkpoint_].digest = stack_->kernel().CombinedDigest();
    checkpoints_[next_checkpoint_].taken = true;
    ++next_checkpoint_;
  }
}

bool ModelKernel::BeginThunk(const Event* ev) {
  if (ev == nullptr) return true;
  auto it = thunk_ordinal_.find(session_->IndexOf(ev));
  return it == thunk_ordinal_.end() || WaitTurn(it->second);
}

void ModelKernel::EndThunk(const Event* ev) {
  if (ev == nullptr) return;
  auto it = thunk_ordinal_.find(session_->IndexOf(ev));
  if (it != thunk_ordinal_.end()) AdvanceTurn(it->second);
}

// ---- Driving top-level kernel work ---------------------------------------------------------

void ModelKernel::DriveBefore(uint64_t seq) {
  auto slot = drive_slots_.find(seq);
  if (slot == drive_slots_.end()) return;  // no kernel work recorded before this call
  ModelClock clock(&model_ns_);
  if (!WaitTurn(slot->second)) return;  // out of turn: see WaitTurn
  for (;;) {
    size_t first;
    {
      std::lock_guard<std::recursive_mutex> lock(compare_mu_);
      if (lost_ || cursor_ >= expected_.size()) break;
      first = cursor_;
      const Event& e = plan_.events[expected_[first]];
      if (!top_level_[first] || e.seq >= seq) break;
    }
    if (!RunGroup(first, seq)) break;
  }
  AdvanceTurn(slot->second);
}

bool ModelKernel::RunGroup(size_t first, uint64_t before_seq) {
  const Event& head = plan_.events[expected_[first]];
  // The group: the top-level kernel events up to the next UMD call.
  const Event* destroy = nullptr;
  for (size_t k = first; k < expected_.size(); ++k) {
    const Event& e = plan_.events[expected_[k]];
    if (e.seq >= before_seq) break;
    if (top_level_[k] && e.call == CallId::kDxgkDdiDestroyDevice) {
      destroy = &e;
      break;
    }
  }
  if (head.call == CallId::kDxgkDdiCreateDevice) {
    absl::StatusOr<HANDLE> dev = stack_->kernel().CreateDevice();
    std::lock_guard<std::recursive_mutex> lock(compare_mu_);
    Device d;
    if (dev.ok()) d.model = *dev;
    const format::CallInfo& ci = *format::GetCall(head.call);
    const int out = format::FieldIndex(ci, "hDeviceOut");
    const int in = format::FieldIndex(ci, "hDevice");
    d.kmd_id = out >= 0 ? head.args[out] : in >= 0 ? head.args[in] : 0;
    devices_.push_back(d);
  } else if (destroy != nullptr) {
    const format::CallInfo& ci = *format::GetCall(destroy->call);
    const int h = format::FieldIndex(ci, "hDevice");
    HANDLE dev{};
    {
      std::lock_guard<std::recursive_mutex> lock(compare_mu_);
      for (const Device& d : devices_) {
        if (h >= 0 && d.kmd_id == destroy->args[h]) dev = d.model;
      }
      if (dev == nullptr && devices_.size() == 1) dev = devices_[0].model;
    }
    if (dev != nullptr) {
      if (absl::Status s = stack_->kernel().DestroyDevice(dev); !s.ok()) {
        Mismatch(*destroy, "the kernel destroys the device",
                 absl::StrCat("Dxgkrnl::DestroyDevice: ", s.message()));
      }
    }
  } else if (absl::Status s = stack_->kernel().WaitIdle(); !s.ok()) {
    Mismatch(head, "the kernel runs its queued work", std::string(s.message()));
  }
  std::lock_guard<std::recursive_mutex> lock(compare_mu_);
  if (cursor_ == first && !lost_) {
    Mismatch(head, Text(head.call, format::ArgVec(head.args.begin(), head.args.end()), true),
             "the kernel model had no work to run here");
    lost_ = true;
    return false;
  }
  return true;
}

void ModelKernel::Finish(bool complete) {
  DriveBefore(UINT64_MAX);
  {
    std::lock_guard<std::mutex> lock(turn_mu_);
    TakeCheckpoints(UINT64_MAX);
  }
  std::lock_guard<std::recursive_mutex> lock(compare_mu_);
  if (complete && !lost_ && cursor_ < expected_.size()) {
    const Event& e = plan_.events[expected_[cursor_]];
    Mismatch(e, Text(e.call, format::ArgVec(e.args.begin(), e.args.end()), true),
             "no such call (the kernel model made no further kernel-layer call)");
  }
}

// ---- Comparing ----------------------------------------------------------------------------

bool ModelKernel::SameHandle(uint64_t rec, uint64_t raw, bool output) {
  if (rec == 0 || raw == 0) return rec == raw;
  if (output) {
    // A handle the callee created: the recorded id is this object from now on (heap addresses
    // are reused differently in every process, so a recorded id may name several objects over
    // time).
    if (auto it = raw_of_id_.find(rec); it != raw_of_id_.end()) id_of_raw_.erase(it->second);
    if (auto it = id_of_raw_.find(raw); it != id_of_raw_.end()) raw_of_id_.erase(it->second);
    raw_of_id_[rec] = raw;
    id_of_raw_[raw] = rec;
    return true;
  }
  if (auto it = raw_of_id_.find(rec); it != raw_of_id_.end()) return it->second == raw;
  if (id_of_raw_.contains(raw)) return false;  // already another recorded handle
  raw_of_id_[rec] = raw;
  id_of_raw_[raw] = rec;
  return true;
}

std::string ModelKernel::Text(CallId call, const format::ArgVec& args, bool recorded) const {
  const format::CallInfo* ci = format::GetCall(call);
  if (ci == nullptr) return "?";
  Event e;
  e.call = call;
  e.end = 1;
  e.args.assign(args.begin(), args.end());
  bool unknown = false;
  ForEachField(*ci, e.args, [&](const FieldInfo& f, size_t index, int) {
    if (recorded) return;
    if (f.kind == FieldKind::kPtr) {
      e.args[index] = 0;  // model addresses of this process
    } else if (f.kind == FieldKind::kHandle && e.args[index] != 0) {
      auto it = id_of_raw_.find(e.args[index]);
      unknown |= it == id_of_raw_.end();
      e.args[index] = it != id_of_raw_.end() ? it->second : 0;
    }
  });
  std::string text = absl::StrCat(ci->name, "(", format::ArgsToText(e, *plan_.handles, {}), ")");
  if (unknown) absl::StrAppend(&text, " [handles the recording does not know shown as NULL]");
  return text;
}

void ModelKernel::Mismatch(const Event& at, std::string expected, std::string actual) {
  session_->Diverge(at, absl::StrCat("kernel layer: ", expected),
                    absl::StrCat("kernel model: ", actual));
}

void ModelKernel::Enter(CallId call, const format::ArgVec& entry) {
  std::lock_guard<std::recursive_mutex> lock(compare_mu_);
  Pending p{SIZE_MAX};
  // A recording without any GpuFenceRetired (made before the GPU observer existed, or by a
  // recorder that does not wrap it) says nothing about the GPU content: the model's observer
  // calls are not compared and do not count as calls beyond the recording.
  if (lost_ || (call == CallId::kGpuFenceRetired && !fence_digests_recorded_)) {
    stack_of_calls_.push_back(p);
    return;
  }
  if (cursor_ >= expected_.size()) {
    ++extra_;
    if (extra_ == 1 && !plan_.events.empty()) {
      const Event& last = plan_.events.back();
      Mismatch(last, "no further kernel-layer call (the recording ends)", Text(call, entry, false));
    }
    stack_of_calls_.push_back(p);
    return;
  }
  const Event& rec = plan_.events[expected_[cursor_]];
  if (session_->Stopping(rec.seq)) {
    lost_ = true;
    stack_of_calls_.push_back(p);
    return;
  }
  if (rec.call != call) {
    Mismatch(rec, Text(rec.call, format::ArgVec(rec.args.begin(), rec.args.end()), true),
             Text(call, entry, false));
    lost_ = true;  // the two streams no longer line up
    stack_of_calls_.push_back(p);
    return;
  }
  // Only the call is matched here (so nested calls line up); the arguments are compared at
  // exit, when the codec has captured input arrays' elements too.
  p.expected = cursor_++;
  if (call == CallId::kGpuFenceRetired) {
    ++fence_digests_compared_;
  } else {
    ++compared_;
  }
  stack_of_calls_.push_back(p);
}

void ModelKernel::Exit(CallId call, const format::ArgVec& exit, int64_t ret) {
  std::lock_guard<std::recursive_mutex> lock(compare_mu_);
  if (stack_of_calls_.empty()) return;
  const Pending p = stack_of_calls_.back();
  stack_of_calls_.pop_back();
  if (p.expected == SIZE_MAX) return;
  const Event& rec = plan_.events[expected_[p.expected]];
  const format::CallInfo& ci = *format::GetCall(call);
  auto same_in = [this](uint64_t r, uint64_t a, const FieldInfo&) {
    return SameHandle(r, a, false);
  };
  auto same = [this](uint64_t r, uint64_t a, const FieldInfo&) { return SameHandle(r, a, true); };
  if (call == CallId::kGpuFenceRetired) {
    CompareFenceRetired(rec, exit);
    return;
  }
  if (std::optional<FieldDiff> d = FirstDifference(ci, rec.args, exit, FieldDir::kIn, same_in)) {
    Mismatch(rec, Text(rec.call, format::ArgVec(rec.args.begin(), rec.args.end()), true),
             absl::StrCat(Text(call, exit, false), " (", d->name, " differs)"));
  } else if (std::optional<FieldDiff> d =
                 FirstDifference(ci, rec.args, exit, FieldDir::kOut, same)) {
    Mismatch(rec, absl::StrFormat("%s answers %s=%d", ci.name, d->name, d->expected),
             absl::StrFormat("%s=%d", d->name, d->actual));
  } else if (ci.ret != format::ReturnKind::kVoid && rec.ret != ret) {
    Event a;
    a.call = call;
    a.ret = ret;
    a.end = 1;
    Mismatch(rec, absl::StrCat(ci.name, " returns ", format::RetToText(rec)),
             absl::StrCat("returns ", format::RetToText(a)));
  }
}

// GpuFenceRetired: which fence retired on which node is compared like any other kernel-layer
// call; the content digest gets a line of its own, since it is what the GPU produced rather
// than what the kernel did.
void ModelKernel::CompareFenceRetired(const Event& rec, const format::ArgVec& exit) {
  const format::CallInfo& ci = *format::GetCall(CallId::kGpuFenceRetired);
  using Fields = ddi::fields::GpuFenceRetired;
  constexpr int digest = Fields::ContentDigest;
  auto same_in = [this](uint64_t r, uint64_t a, const FieldInfo&) {
    return SameHandle(r, a, false);
  };
  format::ArgVec without_digest = exit;
  if (static_cast<size_t>(digest) < without_digest.size() &&
      static_cast<size_t>(digest) < rec.args.size()) {
    without_digest[digest] = rec.args[digest];
  }
  if (std::optional<FieldDiff> d =
          FirstDifference(ci, rec.args, without_digest, FieldDir::kIn, same_in)) {
    Mismatch(rec, Text(rec.call, format::ArgVec(rec.args.begin(), rec.args.end()), true),
             absl::StrCat(Text(CallId::kGpuFenceRetired, exit, false), " (", d->name, " differs)"));
    return;
  }
  if (static_cast<size_t>(digest) >= exit.size() ||
      static_cast<size_t>(digest) >= rec.args.size() || rec.args[digest] == exit[digest]) {
    return;
  }
  Mismatch(
      rec,
      absl::StrFormat("GpuFenceRetired node %d fence %d: GPU content digest 0x%016x recorded",
                      rec.args[Fields::NodeOrdinal], rec.args[Fields::FenceId], rec.args[digest]),
      absl::StrFormat("0x%016x replayed", exit[digest]));
}

KernelSummary ModelKernel::summary() {
  KernelSummary s;
  s.model = true;
  const gpu::Dxgkrnl::Stats st = stack_->kernel().stats();
  s.submissions = st.renders + st.presents;
  s.dma_buffers = st.dma_buffers;
  s.fences = st.submissions + st.paging_buffers;
  std::lock_guard<std::recursive_mutex> lock(compare_mu_);
  s.kernel_calls_compared = compared_;
  s.fence_digests_recorded = fence_digests_recorded_;
  s.fence_digests_compared = fence_digests_compared_;
  // Folded over the checkpoints in seq order (FNV-1a over their bytes): the allocations are
  // gone once the device is destroyed, so the final state says nothing.
  std::vector<Checkpoint> taken;
  {
    std::lock_guard<std::mutex> turn(turn_mu_);
    for (const Checkpoint& c : checkpoints_) {
      if (c.taken) taken.push_back(c);
    }
  }
  std::sort(taken.begin(), taken.end(),
            [](const Checkpoint& a, const Checkpoint& b) { return a.seq < b.seq; });
  s.gpu_digest = 0xcbf29ce484222325ull;
  for (const Checkpoint& c : taken) {
    s.checkpoints.push_back({c.seq, c.call, c.digest});
    for (int i = 0; i < 8; ++i) {
      s.gpu_digest = (s.gpu_digest ^ ((c.digest >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    }
  }
  return s;
}

std::vector<std::string> ModelKernel::Violations() const {
  std::vector<std::string> out;
  for (const gpu::Violation& v : sink_.violations()) {
    out.push_back(absl::StrCat("kernel model: ", v.id(), ": ", v.message));
  }
  return out;
}

}  // namespace cltrace::replay::internal
