#include "check/checker.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "check/internal/checker_impl.h"

namespace cltrace::check {

using format::Layer;
using internal::Ctx;
using internal::kNeverReturned;

absl::StatusOr<CheckResult> Checker::Impl::Run(absl::Span<const Event> events,
                                               const format::TokenTable& handles) {
  env_.Begin(events, handles);
  t_.spill.Reset();
  added_ = prev_seq_ = 0;
  compact_at_ = env_.options().compact_above;
  slots_at_ = kSlotsBeforeCompaction;
  for (const Event& e : events) {
    if (absl::Status st = Add(e); !st.ok()) return st;
  }
  return Finish();
}

void Checker::Impl::Begin(const format::TokenTable& handles, TraceReplay replay) {
  env_.BeginStream(handles, std::move(replay));
  t_.spill.Reset();
  added_ = prev_seq_ = 0;
  compact_at_ = env_.options().compact_above;
  slots_at_ = kSlotsBeforeCompaction;
}

absl::Status Checker::Impl::Add(const Event& e) {
  const uint64_t i = added_++;
  if (e.seq <= prev_seq_) {
    return absl::InvalidArgumentError(absl::StrCat("event ", i, " has seq ", e.seq, " after seq ",
                                                   prev_seq_, ": events must be sorted by seq"));
  }
  prev_seq_ = e.seq;
  if (env_.table()[e.call].op == Op::kNone) {
    return absl::InvalidArgumentError(
        absl::StrCat("event ", i, " (seq ", e.seq, ") has no known call id"));
  }
  env_.Track(e);
  if (e.seq > t_.gpu.next_deadline()) t_.gpu.ResolveDeadlines(e.seq);
  OnEvent(e);
  if (e.annotation != 0 && env_.options().strings != nullptr) OnAnnotation(e);
  if (!env_.fatal().ok()) return env_.fatal();
  const size_t held = t_.records();
  if (env_.options().compact_above == 0 || held >= compact_at_ || env_.slot_count() >= slots_at_) {
    t_.spill.MoveOut(added_);
    t_.Compact(env_);
    env_.slots().FreeEmptyPages();
    compact_at_ = std::max(
        {env_.options().compact_above, 2 * t_.records(), t_.records() + env_.slot_count() / 8});
    slots_at_ = std::max(kSlotsBeforeCompaction, 2 * env_.slot_count());
  }
  return absl::OkStatus();
}

CheckResult Checker::Impl::Finish() {
  t_.gpu.ResolveDeadlines(kNeverReturned - 1);
  CheckResult result = env_.TakeResult();
  result.calls = added_;
  return result;
}

void Checker::Impl::OnEvent(const Event& e) {
  const CallMeta& m = env_.table()[e.call];
  env_.set_dc_table(false);
  switch (m.layer) {
    case Layer::kDevice:
      OnDeviceCall(e, m);
      break;
    case Layer::kAdapter:
      OnAdapterCall(e, m);
      break;
    case Layer::kCoreLayer:
      OnCoreLayerCallback(e, m);
      break;
    case Layer::kKernelCb:
      t_.gpu.OnKernelCallback(e, m);
      break;
    case Layer::kDxgi: {
      int32_t c = t_.contexts.Lookup(Arg(e, m.hdevice));
      if (c >= 0 && !t_.contexts.at(c).dc) {
        t_.contexts.EnterDomain(c, e, Rule::kR10);
        t_.objects.NoteIcUses(e, m);
      }
      break;
    }
    case Layer::kKmd:
    case Layer::kDxgkrnl:
      t_.gpu.OnKmdCall(e, m);
      break;
    case Layer::kDx6:
      t_.gpu.OnDx6Call(e, m);
      break;
    default:
      break;
  }
}

// R5: the recorder compares the driver's device tables with their CreateDevice snapshot and
// notes every changed slot on the call that first observed it ("table-rewrite (R5):
// D3D11DDI_DEVICEFUNCS.pfnX of immediate context ... changed by the driver from A to B"),
// joined with " | " to any other note of that call.
void Checker::Impl::OnAnnotation(const Event& e) {
  constexpr absl::string_view kNote = "table-rewrite (R5): D3D11DDI_DEVICEFUNCS.";
  absl::string_view text = env_.options().strings->Token(e.annotation);
  if (!absl::StrContains(text, kNote)) return;  // most annotations name the API call only
  for (absl::string_view note : absl::StrSplit(text, " | ")) {
    if (!absl::ConsumePrefix(&note, kNote)) continue;
    absl::string_view slot = note.substr(0, note.find(' '));
    // Only the immediate context's table is constrained (ddi-spec R5).
    if (!absl::StrContains(note, " of immediate context ")) continue;
    const bool fixed = absl::StartsWith(slot, "pfnCreate") || absl::StartsWith(slot, "pfnOpen") ||
                       absl::StartsWith(slot, "pfnDestroy") ||
                       absl::StartsWith(slot, "pfnCalcPrivate") ||
                       absl::StartsWith(slot, "pfnCheck");
    const bool fixed_a = absl::StartsWith(slot, "pfnRecycle") ||
                         slot == "pfnCalcDeferredContextHandleSize";  // R5a [INF]
    // Other slots may be hot-swapped from the IC thread; the note does not say which thread
    // wrote the slot, so they are not judged.
    if (!fixed && !fixed_a) continue;
    const CallMeta& m = env_.table()[e.call];
    uint64_t h = m.layer == Layer::kDevice ? Arg(e, m.hdevice) : 0;
    Flag(Rule::kR5, e, h,
         absl::StrCat("the driver rewrote IC-table slot ", slot, " after CreateDevice (noted by ",
                      "the recorder at this call); ",
                      fixed_a ? "the Recycle* and CalcDeferredContextHandleSize slots (R5a)"
                              : "pfnCreate*, pfnOpen*, pfnDestroy*, pfnCalcPrivate* and "
                                "pfnCheck* slots",
                      " are fixed once CreateDevice returns"));
  }
}

void Checker::Impl::OnAdapterCall(const Event& e, const CallMeta& m) {
  if (m.op == Op::kCreateDevice) t_.contexts.OnCreateDevice(e, m);
  if (m.op == Op::kGetCaps) t_.contexts.OnGetCaps(e, m);
}

void Checker::Impl::OnDeviceCall(const Event& e, const CallMeta& m) {
  consumed_calc_ = e.parent == 0 && t_.locals.ResolvePending(e, m);
  first_of_thread_ = e.parent == 0 && t_.threads.OnTopLevelCall(e.tid);
  int32_t c = t_.contexts.ContextOf(e, m);
  if (c < 0) return;
  if (t_.contexts.at(c).dc) {
    env_.set_dc_table(true);
    OnDcCall(e, m, c);
  } else {
    OnIcCall(e, m, c);
  }
  if (env_.observer() != nullptr) env_.observer()->OnDeviceCall(e, t_.contexts.at(c).dc);
}

void Checker::Impl::OnDcCall(const Event& e, const CallMeta& m, int32_t dc) {
  if (!t_.contexts.DcGate(e, m, dc)) return;
  const Ctx& x = t_.contexts.at(dc);
  const bool recording = x.state == State::kRecording || x.state == State::kFinishing;
  switch (m.op) {
    case Op::kRecycleCommandList:
      t_.lists.OnDcRecycle(e, m, dc);
      return;
    case Op::kAbandonCommandList:
      t_.contexts.OnAbandon(e, dc);
      return;
    case Op::kDestroyDevice:
      t_.contexts.OnDestroy(e, dc);
      return;
    case Op::kCreateObject:
    case Op::kCreateCommandList:
      t_.locals.OnOpen(e, m, dc);
      return;
    case Op::kDestroyObject:
    case Op::kDestroyCommandList:
      t_.locals.OnClose(e, m, dc);
      return;
    case Op::kSetter:
      // A Set* nested in a callback is the runtime answering a state refresh (during
      // Create/RecycleCreateCommandList it re-sends the DC's bindings, R49): not recording.
      if (!recording && e.parent == 0 && !t_.contexts.DcSetterAllowed(e, m, dc)) return;
      t_.objects.OnSetter(e, m, dc, true);
      return;
    default:
      break;
  }
  if (!recording) {
    Flag(Rule::kR53, e, x.handle,
         absl::StrCat(CallName(e.call), " on ", t_.contexts.Name(dc), ", which is ",
                      StateName(x.state)),
         &x.last);
    return;
  }
  OnDcWork(e, m, dc);
}

void Checker::Impl::OnDcWork(const Event& e, const CallMeta& m, int32_t dc) {
  if (m.work) t_.contexts.NoteWork(dc);
  uint64_t h = Arg(e, m.handle);
  switch (m.op) {
    case Op::kCommandListExecute:
      t_.lists.OnDcExecute(e, m, dc);
      return;
    case Op::kQueryBegin:
    case Op::kQueryEnd: {
      int32_t q = t_.locals.Resolve(e, dc, h, false);
      if (q >= 0) t_.objects.OnQuery(e, dc, q, m.op == Op::kQueryBegin);
      return;
    }
    case Op::kMap:
    case Op::kUnmap: {
      int32_t r = t_.locals.Resolve(e, dc, h, false);
      if (r >= 0) t_.objects.OnMap(e, m, dc, r, m.op == Op::kMap);
      return;
    }
    default:
      t_.locals.CheckHandles(e, m, dc);
      return;
  }
}

// Thread domains: catalog IC-domain calls, non-shared primaries (R11) and the IC-table calls
// a Finish makes on the DC's thread (R12, in that DC's domain).
void Checker::Impl::EnterIcDomain(const Event& e, const CallMeta& m, int32_t ic) {
  switch (m.op) {
    case Op::kCalcPrivateCommandListSize:
    case Op::kCreateCommandList:
    case Op::kRecycleCreateCommandList: {
      int32_t d = t_.contexts.Lookup(Arg(e, m.hdeferred));
      if (d >= 0 && t_.contexts.at(d).dc) t_.contexts.EnterDomain(d, e, Rule::kR12);
      return;
    }
    case Op::kRecycleCreateDeferredContext: {
      int32_t d = t_.contexts.Lookup(Arg(e, m.hdrvcontext));
      if (d >= 0 && t_.contexts.at(d).dc) t_.contexts.EnterDomain(d, e, Rule::kR12);
      return;
    }
    case Op::kCreateObject:
    case Op::kDestroyObject: {
      bool primary = false;
      if (m.op == Op::kCreateObject && m.object_type == 0) {
        uint64_t misc = Arg(e, m.misc_flags);
        primary = Arg(e, m.primary_desc) != 0 && !(misc & env_.k().misc_shared);
      } else if (m.op == Op::kDestroyObject) {
        primary = t_.objects.IsNonSharedPrimary(env_.Slot(Arg(e, m.handle)).obj);
      }
      if (primary) t_.contexts.EnterDomain(ic, e, Rule::kR11);
      return;
    }
    default:
      if (m.domain == format::Domain::kIC) t_.contexts.EnterDomain(ic, e, Rule::kR10);
      return;
  }
}

void Checker::Impl::OnIcCall(const Event& e, const CallMeta& m, int32_t ic) {
  const Ctx& x = t_.contexts.at(ic);
  if (!m.in_ic_table && m.in_dc_table) {
    Rule rule = m.op == Op::kRecycleCommandList ? Rule::kR13 : Rule::kR51;
    Flag(rule, e, x.handle,
         absl::StrCat(CallName(e.call),
                      " called through the IC table; it is a deferred-context function"));
    return;
  }
  EnterIcDomain(e, m, ic);
  if (x.state == State::kDestroyed && m.op != Op::kCreateDeferredContext) {
    // A call through a destroyed device: nothing else to judge reliably.
    return;
  }
  t_.objects.NoteIcUses(e, m);
  switch (m.op) {
    case Op::kCreateDeferredContext:
      return t_.contexts.OnCreateDeferredContext(e, m, ic);
    case Op::kRecycleCreateDeferredContext:
      return t_.contexts.OnRecycleCreateDeferredContext(e, m, ic);
    case Op::kCalcPrivateCommandListSize:
      return t_.contexts.OnCalcPrivateCommandListSize(e, m, ic);
    case Op::kCreateCommandList:
    case Op::kRecycleCreateCommandList:
      return t_.lists.OnCreate(e, m, ic, m.op == Op::kRecycleCreateCommandList);
    case Op::kCommandListExecute:
      return t_.lists.OnExecute(e, m, ic);
    case Op::kRecycleDestroyCommandList:
      return t_.lists.OnRecycleDestroy(e, m, ic);
    case Op::kDestroyCommandList:
      return t_.lists.OnDestroy(e, m, ic);
    case Op::kCheckHandleSizes:
      return t_.locals.OnCheckHandleSizes(e, m, ic);
    case Op::kCalcHandleSize:
      return t_.locals.OnCalcHandleSize(e, m, ic, consumed_calc_, first_of_thread_);
    case Op::kCreateObject:
      return t_.objects.OnCreate(e, m, ic);
    case Op::kDestroyObject:
      return t_.objects.OnDestroy(e, m);
    case Op::kQueryBegin:
    case Op::kQueryEnd:
      if (int32_t q = env_.Slot(Arg(e, m.handle)).obj; q >= 0)
        t_.objects.OnQuery(e, ic, q, m.op == Op::kQueryBegin);
      return;
    case Op::kMap:
    case Op::kUnmap:
      if (int32_t r = env_.Slot(Arg(e, m.handle)).obj; r >= 0)
        t_.objects.OnMap(e, m, ic, r, m.op == Op::kMap);
      return;
    case Op::kSetter:
      return t_.objects.OnSetter(e, m, ic, false);
    case Op::kDestroyDevice:
      t_.contexts.To(ic, State::kDestroyed, e);
      t_.objects.ClearBindings(ic);
      return t_.gpu.OnDeviceDestroyed(e, ic);
    case Op::kFlush:
      return t_.gpu.OnFlush(e, ic);
    default:
      return;
  }
}

// ---- Public API --------------------------------------------------------------------------

Checker::Checker(const CheckOptions& options) : impl_(std::make_unique<Impl>(options)) {}
Checker::~Checker() = default;
void Checker::set_observer(TransitionObserver* observer) { impl_->set_observer(observer); }
absl::StatusOr<CheckResult> Checker::Run(absl::Span<const format::Event> events,
                                         const format::TokenTable& handles) {
  return impl_->Run(events, handles);
}

void Checker::Begin(const format::TokenTable& handles, TraceReplay replay) {
  impl_->Begin(handles, std::move(replay));
}
absl::Status Checker::Add(const format::Event& event) { return impl_->Add(event); }
CheckResult Checker::Finish() { return impl_->Finish(); }
size_t Checker::records_held() const { return impl_->records_held(); }
Checker::HandleMemory Checker::handle_memory() const { return impl_->handle_memory(); }
const CheckResult& Checker::findings() const { return impl_->findings(); }

absl::StatusOr<CheckResult> Check(absl::Span<const format::Event> events,
                                  const format::TokenTable& handles, const CheckOptions& options) {
  Checker checker(options);
  return checker.Run(events, handles);
}

}  // namespace cltrace::check
