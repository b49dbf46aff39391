// The contract checker's engine (Checker::Impl): its per-handle records and handlers. The
// handlers live in checker.cc (dispatch, IC/DC device calls) and internal/checker_*.cc
// (command lists, contexts and local handles, callbacks, GPU/DX6), one area per file.
//
// Thread-safety: one Impl per Checker, single-threaded.
#ifndef CLTRACE_CHECK_INTERNAL_CHECKER_IMPL_H_
#define CLTRACE_CHECK_INTERNAL_CHECKER_IMPL_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "check/checker.h"
#include "check/internal/call_meta.h"
#include "check/internal/thread_tracker.h"
#include "format/catalog.h"

namespace cltrace::check {
namespace internal {

using format::CallId;
using format::Domain;
using format::Event;
using format::Layer;

constexpr uint64_t kNeverReturned = ~uint64_t{0};
inline uint64_t EndOf(const Event& e) { return e.end == 0 ? kNeverReturned : e.end; }

// The last few transitions of one handle lifetime, for "[last: ...]".
struct Ring {
  LastTransition t[3];
  uint8_t n = 0;
  void Push(State s, uint64_t seq, CallId call) {
    if (n == 3) {
      t[0] = t[1];
      t[1] = t[2];
      n = 2;
    }
    t[n++] = LastTransition{s, seq, call};
  }
};

// The call of one thread domain (§0.2) that returns last among those entered so far.
struct DomainSlot {
  uint64_t seq = 0;
  uint64_t end = 0;
  uint32_t tid = 0;
  CallId call = CallId::kInvalid;
  Rule rule = Rule::kR10;  // R10, R11 (non-shared primary) or R12 (IC-table call of a DC's Finish)
  bool used = false;
};

// Bound objects of one context, by binding group and slot (R73).
struct Bindings {
  absl::flat_hash_map<uint32_t, absl::InlinedVector<int32_t, 4>> slots;
  uint32_t bound = 0;  // non-empty slots
};

struct Ctx {
  bool dc = false;
  bool implicit = false;  // first seen as an hDevice, never created in the trace
  State state = State::kNone;
  uint64_t handle = 0;
  uint64_t core_layer = 0;
  int32_t device = -1;  // DC: its immediate context
  uint32_t recording = 0;
  Ring last;
  DomainSlot domain;
  Bindings bind;
  // Deferred context.
  bool has_work = false;
  bool oom_pending = false;
  bool closes_started = false;
  uint64_t oom_seq = 0;
  uint32_t open_locals = 0;
  uint32_t calls_since_amortized = 0;
  bool r72_warned = false;
  uint64_t cl_size = 0;
  std::vector<int32_t> rec_queries;
  std::vector<int32_t> rec_maps;
  // Immediate context.
  bool dc_support = false;
  // R35: seq of the GetCaps(D3D11DDICAPS_THREADING) of its adapter that reported no command
  // lists (0: none seen) -- the only evidence that the runtime must not query local sizes.
  uint64_t no_lists_caps_seq = 0;
  bool sizes_known = false;
  bool removed = false;
  std::vector<std::pair<uint64_t, uint64_t>> sizes;  // (HandleType, DriverPrivateSize)
  uint32_t submits_since_amortized = 0;
  uint64_t last_amortized_parent = 0;  // enclosing call of the last amortized callback
  bool submit_since_amortized = true;
  uint64_t submitted_through = 0;         // enclosing call of the last pfnRenderCb (R67)
  std::vector<int32_t> destroyed_shared;  // shared resources destroyed since the last Flush
  // R68: other destroyed resources with allocations not yet deallocated (pruned at Flush),
  // and the latest pfnRenderCb (seq) whose submission the GPU is known to have retired
  // (kernel-layer events of the trace: DxgkDdiRender, DxgkDdiSubmitCommand, fence retired).
  std::vector<int32_t> destroyed_queued;
  uint64_t retired_render = 0;
  uint64_t retired_fence = 0;  // the fence that retired it
};

struct CommandList {
  uint64_t handle = 0;
  State state = State::kNone;
  int32_t owner = -1;     // DC that recorded it
  int32_t cache_dc = -1;  // DC whose cache holds it (RC)
  uint32_t open_locals = 0;
  uint64_t local_size = 0;  // CalcDeferredContextHandleSize(HT_COMMANDLIST) answer
  uint64_t create_seq = 0;
  std::vector<int32_t> queries;  // IC query objects its recording began or ended
  std::vector<int32_t> maps;     // IC dynamic resources its recording mapped
  Ring last;
};

struct Object {
  uint64_t handle = 0;
  int8_t type = -1;
  State state = State::kNone;
  int32_t device = -1;
  int32_t dependency = -1;  // views: the resource
  bool dynamic = false;
  bool primary = false;
  bool shared = false;
  uint32_t open_locals = 0;
  uint32_t bind_count = 0;
  // Queries (§3.4, per (query, context)): the contexts it is Building on, with the recording
  // each Begin was made in.
  struct Building {
    int32_t ctx = -1;
    uint32_t recording = 0;
  };
  absl::InlinedVector<Building, 1> building;
  bool BuildingOn(int32_t c) const {
    for (const Building& b : building)
      if (b.ctx == c) return true;
    return false;
  }
  void StopBuilding(int32_t c) {
    for (size_t i = 0; i < building.size(); ++i) {
      if (building[i].ctx == c) {
        building.erase(building.begin() + static_cast<ptrdiff_t>(i));
        return;
      }
    }
  }
  absl::InlinedVector<int32_t, 2> mapped_on;  // contexts it is mapped on (one per map)
  uint64_t create_seq = 0;
  uint64_t destroy_seq = 0;
  uint64_t last_ic_use = 0;  // last IC-table call naming it (R67)
  absl::InlinedVector<int32_t, 1> allocs;
};

struct Local {
  uint64_t handle = 0;
  int32_t dc = -1;
  bool is_cl = false;
  int32_t target = -1;  // Object index or CommandList index
  State state = State::kNone;
  uint32_t recording = 0;
  int32_t dep_local = -1;
  uint32_t open_dependents = 0;
  uint64_t open_seq = 0;
  uint64_t close_seq = 0;
  Ring last;
};

// Per handle id: the current lifetime of each role the id has had.
struct HandleSlot {
  int32_t ctx = -1;
  int32_t core = -1;  // context whose hRTCoreLayer this is
  int32_t cl = -1;
  int32_t obj = -1;
  int32_t local = -1;
  int32_t rtobj = -1;    // IC object whose hRT* handle this is
  int32_t alloc = -1;    // allocation (pfnAllocateCb hAllocation)
  int32_t surface = -1;  // DX6 buffer surface
};

struct Allocation {
  int32_t obj = -1;  // resource it was allocated for (-1 unknown)
  uint64_t alloc_seq = 0;
  uint64_t dealloc_seq = 0;
  uint64_t dealloc_parent = 0;  // enclosing call of the pfnDeallocateCb
};

// A check that can only be judged once a call has returned (its exit position passed).
struct Deadline {
  enum Kind : uint8_t {
    kFlushDeallocates,
    kFlushDrainsIdle,
    kPrimaryDeallocated,
    kDeviceDrained,
    kIsr
  } kind;
  uint64_t at = 0;  // exit position of the call
  uint64_t seq = 0;
  uint32_t tid = 0;
  CallId call = CallId::kInvalid;
  int32_t index = -1;  // object, context or ISR record
  std::vector<int32_t> objs;
  uint64_t render = 0;  // kFlushDrainsIdle: the retired pfnRenderCb and its fence
  uint64_t fence = 0;
};

// R68: a submission (pfnRenderCb) on its way through the kernel to a fence.
struct Submission {
  int32_t ctx = -1;
  uint64_t render = 0;  // seq of the pfnRenderCb
};

// One DxgkDdiInterruptRoutine in flight (R77).
struct Isr {
  uint64_t seq = 0;
  bool notified = false;
  bool dpc_after_notify = false;
  bool crtc_seen = false;
};

// Sizes the UMD may fill for one HCONTEXT (R74).
struct ContextBuffers {
  uint64_t command = 0;
  uint64_t allocations = 0;
  uint64_t patches = 0;
};

// A DX6 D3D buffer surface (R79).
struct Surface {
  uint64_t caps = 0;
  uint64_t caps2 = 0;
  bool video = false;
};

}  // namespace internal

class Checker::Impl {
  using Allocation = internal::Allocation;
  using Bindings = internal::Bindings;
  using CommandList = internal::CommandList;
  using ContextBuffers = internal::ContextBuffers;
  using Ctx = internal::Ctx;
  using Deadline = internal::Deadline;
  using DomainSlot = internal::DomainSlot;
  using HandleSlot = internal::HandleSlot;
  using Isr = internal::Isr;
  using Local = internal::Local;
  using Object = internal::Object;
  using PendingCalc = internal::PendingCalc;
  using Ring = internal::Ring;
  using Surface = internal::Surface;
  using Submission = internal::Submission;
  using CallId = format::CallId;
  using Domain = format::Domain;
  using Event = format::Event;
  using Layer = format::Layer;
  using CallMeta = internal::CallMeta;
  using CallTable = internal::CallTable;
  using Op = internal::Op;
  static constexpr int16_t kNoField = internal::kNoField;
  static constexpr uint64_t kNeverReturned = internal::kNeverReturned;
  static uint64_t EndOf(const Event& e) { return internal::EndOf(e); }

 public:
  explicit Impl(const CheckOptions& options)
      : options_(options), table_(CallTable::Get()), k_(table_.constants()) {}

  void set_observer(TransitionObserver* o) { observer_ = o; }

  absl::StatusOr<CheckResult> Run(absl::Span<const Event> events,
                                  const format::TokenTable& handles);

 private:
  // ---- Infrastructure -----------------------------------------------------------------
  bool On(Rule rule) const { return options_.rules.test(RuleIndex(rule)); }

  void Flag(Rule rule, const Event& e, uint64_t handle, std::string message,
            const Ring* last = nullptr, Severity severity = Severity::kError) {
    FlagAt(rule, e.seq, e.tid, e.call, current_dc_table_, handle, std::move(message), last,
           severity);
  }
  void FlagAt(Rule rule, uint64_t seq, uint32_t tid, CallId call, bool dc_table, uint64_t handle,
              std::string message, const Ring* last = nullptr,
              Severity severity = Severity::kError) {
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
  void Warn(Rule rule, const Event& e, uint64_t handle, std::string message,
            const Ring* last = nullptr) {
    Flag(rule, e, handle, std::move(message), last, Severity::kWarning);
  }

  static uint64_t Arg(const Event& e, int16_t f) {
    return f >= 0 && static_cast<size_t>(f) < e.args.size() ? e.args[f] : 0;
  }
  // Elements of array number `i` of a call (empty for a NULL array).
  absl::Span<const uint64_t> ArrayElems(const Event& e, const CallMeta& m, size_t i,
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

  HandleSlot& Slot(uint64_t id) {
    if (id >= slots_.size()) slots_.resize(std::max<size_t>(id + 1, slots_.size() * 2));
    return slots_[id];
  }
  absl::string_view Token(uint64_t id) const {
    absl::string_view t = handles_->Token(id);
    return t.empty() ? absl::string_view("?") : t;
  }
  std::string Name(uint64_t id) const { return std::string(Token(id)); }
  static absl::string_view CallName(CallId c) {
    const format::CallInfo* ci = format::GetCall(c);
    return ci ? absl::string_view(ci->name) : absl::string_view("?");
  }
  std::string CtxName(int32_t c) const {
    if (c < 0) return "?";
    return absl::StrCat(ctxs_[c].dc ? "DC " : "IC ", Token(ctxs_[c].handle));
  }

  const Event* FindSeq(uint64_t seq) const {
    auto it = std::lower_bound(events_.begin(), events_.end(), seq,
                               [](const Event& e, uint64_t s) { return e.seq < s; });
    return it != events_.end() && it->seq == seq ? &*it : nullptr;
  }
  bool IsAncestor(const Event& e, uint64_t anc) const {
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
  static bool IsCallbackLayer(Layer l) {
    return l == Layer::kCoreLayer || l == Layer::kKernelCb || l == Layer::kDxgkrnl;
  }
  // The nearest enclosing call that is not a callback, or nullptr.
  const Event* Enclosing(const Event& e) const {
    uint64_t p = e.parent;
    while (p != 0) {
      const Event* pe = FindSeq(p);
      if (pe == nullptr) return nullptr;
      if (!IsCallbackLayer(table_[pe->call].layer)) return pe;
      p = pe->parent;
    }
    return nullptr;
  }

  // ---- Transitions ----------------------------------------------------------------------
  void Emit(HandleRole role, State from, State to, uint32_t lifetime, uint64_t handle,
            const Event& e, uint64_t context, uint64_t ic_handle, uint32_t recording) {
    if (observer_ == nullptr) return;
    TransitionEvent t{role,    from,      to,       lifetime,
                      handle,  e.seq,     e.call,   current_dc_table_,
                      context, ic_handle, recording};
    observer_->OnTransition(t);
  }
  void CtxTo(int32_t c, State s, const Event& e) {
    Ctx& x = ctxs_[c];
    State from = x.state;
    x.state = s;
    x.last.Push(s, e.seq, e.call);
    Emit(x.dc ? HandleRole::kDeferredContext : HandleRole::kImmediateContext, from, s,
         static_cast<uint32_t>(c + 1), x.handle, e, 0, 0, x.recording);
  }
  void ClTo(int32_t i, State s, const Event& e) {
    CommandList& c = cls_[i];
    State from = c.state;
    c.state = s;
    c.last.Push(s, e.seq, e.call);
    Emit(HandleRole::kCommandList, from, s, static_cast<uint32_t>(i + 1), c.handle, e,
         c.owner >= 0 ? ctxs_[c.owner].handle : 0, 0, 0);
  }
  void ObjTo(int32_t i, State s, const Event& e) {
    Object& o = objs_[i];
    State from = o.state;
    o.state = s;
    Emit(HandleRole::kObject, from, s, static_cast<uint32_t>(i + 1), o.handle, e, 0, 0, 0);
  }
  void LocalTo(int32_t i, State s, const Event& e) {
    Local& l = locals_[i];
    State from = l.state;
    l.state = s;
    l.last.Push(s, e.seq, e.call);
    uint64_t ic = l.is_cl ? cls_[l.target].handle : objs_[l.target].handle;
    Emit(HandleRole::kLocal, from, s, static_cast<uint32_t>(i + 1), l.handle, e, ctxs_[l.dc].handle,
         ic, l.recording);
  }

  int32_t NewCtx(bool dc, uint64_t handle, uint64_t core, int32_t device, bool implicit,
                 const Event& e) {
    int32_t c = static_cast<int32_t>(ctxs_.size());
    ctxs_.emplace_back();
    Ctx& x = ctxs_.back();
    x.dc = dc;
    x.implicit = implicit;
    x.handle = handle;
    x.core_layer = core;
    x.device = device;
    x.recording = dc ? 1 : 0;
    Slot(handle).ctx = c;
    if (core != 0) Slot(core).core = c;
    if (implicit) {
      // Created before the trace began: no call of the trace caused this state.
      Event before;
      before.seq = e.seq;
      CtxTo(c, dc ? State::kRecording : State::kAlive, before);
    } else {
      CtxTo(c, dc ? State::kRecording : State::kAlive, e);
    }
    return c;
  }

  // The context whose table a device call went through (creating an implicit one for an
  // hDevice the trace never created: a trace may start after CreateDevice).
  int32_t ContextOf(const Event& e, const CallMeta& m) {
    uint64_t h = Arg(e, m.hdevice);
    if (h == 0) return -1;
    int32_t c = Slot(h).ctx;
    if (c >= 0) return c;
    return NewCtx(GuessDc(h, m, e), h, 0, -1, /*implicit=*/true, e);
  }
  // For an hDevice the trace never created (a fragment starting after CreateDevice /
  // CreateDeferredContext): which table is it? The call itself may tell (a DC-only or
  // IC-only function, a DC-local CreateCommandList with NULL arguments); otherwise the first
  // other use of the handle in the trace does. Runs once per such handle.
  bool GuessDc(uint64_t h, const CallMeta& m, const Event& e) {
    if (m.in_dc_table && !m.in_ic_table) return true;
    if (m.in_ic_table && !m.in_dc_table) return false;
    if (m.op == Op::kCreateCommandList && m.present != kNoField && Arg(e, m.present) == 0)
      return true;
    if (!evidence_built_) BuildEvidence();
    auto it = evidence_.find(h);
    return it != evidence_.end() && it->second;
  }
  // One pass over the trace: for every handle used as an hDevice (or named as a DC), whether
  // its first telling use shows a DC table.
  void BuildEvidence() {
    evidence_built_ = true;
    for (const Event& x : events_) {
      const CallMeta& xm = table_[x.call];
      if (xm.layer != Layer::kDevice) continue;
      for (int16_t f : {xm.hdeferred, xm.hdrvcontext}) {
        if (f != kNoField && Arg(x, f) != 0) evidence_.try_emplace(Arg(x, f), true);
      }
      uint64_t h = Arg(x, xm.hdevice);
      if (h == 0) continue;
      if (xm.in_dc_table && !xm.in_ic_table) {
        evidence_.try_emplace(h, true);
      } else if (xm.in_ic_table && !xm.in_dc_table) {
        evidence_.try_emplace(h, false);
      } else if (xm.op == Op::kCreateCommandList && xm.present != kNoField &&
                 Arg(x, xm.present) == 0) {
        evidence_.try_emplace(h, true);
      }
    }
  }
  // Handles created before a trace fragment began cannot be judged as "never created":
  // true if the context (and, for a DC, its device) was created in the trace.
  bool Complete(int32_t c) const {
    if (c < 0 || ctxs_[c].implicit) return false;
    return !ctxs_[c].dc || ctxs_[c].device < 0 || !ctxs_[ctxs_[c].device].implicit;
  }
  int32_t LookupCtx(uint64_t h) { return h == 0 ? -1 : Slot(h).ctx; }
  // The DC a pCreateCommandList/pCreateDeferredContext names (implicit DC if unknown).
  int32_t DcOf(const Event& e, uint64_t h, int32_t device) {
    if (h == 0) return -1;
    int32_t c = Slot(h).ctx;
    if (c >= 0 && ctxs_[c].dc) return c;
    if (c >= 0) return -1;  // an IC handle where a DC is expected
    return NewCtx(true, h, 0, device, /*implicit=*/true, e);
  }

  // A fragment's implicit context learns its core layer from the first callback made inside
  // one of its calls (a traced CreateDevice/CreateDeferredContext names it up front).
  void LearnCore(int32_t c, uint64_t rt) {
    if (c < 0 || rt == 0 || ctxs_[c].core_layer != 0 || Slot(rt).core >= 0) return;
    ctxs_[c].core_layer = rt;
    Slot(rt).core = c;
  }

  // ---- Domains (R10, R11, R12) ----------------------------------------------------------
  void EnterDomain(DomainSlot& d, const Event& e, Rule rule, int32_t ctx) {
    if (d.used && d.end > e.seq && !IsAncestor(e, d.seq)) {
      Rule r = std::max(rule, d.rule);
      Flag(r, e, ctxs_[ctx].handle,
           absl::StrCat(r == Rule::kR12 ? "IC-table call of a Finish on " : "", CtxName(ctx),
                        r == Rule::kR12 ? "" : " domain", ": overlaps ", CallName(d.call), " (seq ",
                        d.seq, ", tid ", d.tid, ") still in flight",
                        r == Rule::kR11 ? " (non-shared primaries are IC-domain)" : ""));
    }
    uint64_t end = EndOf(e);
    if (!d.used || end > d.end) {
      d.seq = e.seq;
      d.end = end;
      d.tid = e.tid;
      d.call = e.call;
      d.rule = rule;
      d.used = true;
    }
  }

  // ---- R35 ------------------------------------------------------------------------------
  // Called before every top-level device call. Returns true if `e` is the
  // CalcDeferredContextHandleSize the pending creation asked for.
  bool ResolvePending(const Event& e, const CallMeta& m) {
    std::optional<PendingCalc> taken = threads_.Take(e.tid, e.seq);
    if (!taken) return false;
    const PendingCalc& pc = *taken;
    bool is_calc = m.op == Op::kCalcHandleSize;
    uint64_t type = Arg(e, m.handle_type);
    if (pc.recycle) {
      if (is_calc && type == k_.ht_commandlist) {
        const CommandList& c = cls_[pc.cl];
        Flag(Rule::kR35, e, pc.handle,
             absl::StrCat("CalcDeferredContextHandleSize(D3D11DDI_HT_COMMANDLIST) after "
                          "RecycleCreateCommandList (seq ",
                          pc.create_seq, "): the local handle size is not re-queried"),
             &c.last);
        if (c.local_size != 0 && static_cast<uint64_t>(e.ret) != c.local_size) {
          Flag(Rule::kR37, e, pc.handle,
               absl::StrCat("DC-local command-list handle size changed from ", c.local_size, " to ",
                            e.ret, " across a recycle"),
               &c.last);
        }
        return true;
      }
      return false;
    }
    if (is_calc && static_cast<int64_t>(type) == pc.type) {
      if (int32_t ic = LookupCtx(Arg(e, m.hdevice));
          ic >= 0 && !ctxs_[ic].dc && ctxs_[ic].no_lists_caps_seq != 0 && !ctxs_[ic].dc_support) {
        Flag(Rule::kR35, e, pc.handle,
             absl::StrCat("CalcDeferredContextHandleSize(", HandleTypeName(pc.type), ") after ",
                          CallName(pc.create_call), " (seq ", pc.create_seq,
                          ") on a device whose threading caps (GetCaps seq ",
                          ctxs_[ic].no_lists_caps_seq,
                          ") report no command lists: local handle sizes are queried only "
                          "from drivers that support deferred contexts"));
      }
      if (pc.cl >= 0) {
        CommandList& c = cls_[pc.cl];
        if (c.local_size != 0 && static_cast<uint64_t>(e.ret) != c.local_size) {
          Flag(Rule::kR37, e, pc.handle,
               absl::StrCat("DC-local command-list handle size changed from ", c.local_size, " to ",
                            e.ret),
               &c.last);
        }
        c.local_size = static_cast<uint64_t>(e.ret);
      }
      return true;
    }
    if (!pc.expected) return false;
    Flag(Rule::kR35, e, pc.handle,
         absl::StrCat("the call after ", CallName(pc.create_call), " (seq ", pc.create_seq,
                      ") on this thread is not CalcDeferredContextHandleSize(",
                      HandleTypeName(pc.type), ")"));
    return false;
  }
  static std::string HandleTypeName(int64_t type) {
    const format::EnumInfo* e = format::FindEnum("D3D11DDI_HANDLETYPE");
    if (e != nullptr) {
      auto n = format::NameOfValue(*e, static_cast<uint64_t>(type));
      if (n) return *n;
    }
    return absl::StrCat(type);
  }

  // ---- Bindings (R73) -------------------------------------------------------------------
  void BindSlot(Ctx& x, uint32_t key, uint32_t slot, int32_t obj) {
    auto& v = x.bind.slots[key];
    if (slot >= v.size()) {
      if (obj < 0) return;
      if (slot > 4096) return;  // a corrupt slot number; not worth tracking
      v.resize(slot + 1, -1);
    }
    int32_t old = v[slot];
    if (old == obj) return;
    if (old >= 0) {
      --objs_[old].bind_count;
      --x.bind.bound;
    }
    v[slot] = obj;
    if (obj >= 0) {
      ++objs_[obj].bind_count;
      ++x.bind.bound;
    }
  }
  void ClearBindings(Ctx& x) {
    if (x.bind.bound == 0) return;
    for (auto& [key, v] : x.bind.slots) {
      for (int32_t& o : v) {
        if (o >= 0) --objs_[o].bind_count;
        o = -1;
      }
    }
    x.bind.bound = 0;
  }

  // ---- Handlers -------------------------------------------------------------------------
  void OnEvent(const Event& e);
  void OnAnnotation(const Event& e);
  void OnDeviceCall(const Event& e, const CallMeta& m);
  void OnDcCall(const Event& e, const CallMeta& m, int32_t c);
  void OnIcCall(const Event& e, const CallMeta& m, int32_t c);
  void OnAdapterCall(const Event& e, const CallMeta& m);
  void OnCoreLayerCallback(const Event& e, const CallMeta& m);
  void OnSetErrorCb(const Event& e, const CallMeta& m);
  void OnKernelCallback(const Event& e, const CallMeta& m);
  void OnKmdCall(const Event& e, const CallMeta& m);
  void OnDx6Call(const Event& e, const CallMeta& m);
  void RetireFence(uint64_t fence);
  void EnterHContext(const Event& e, uint64_t hcontext);
  void NoteIcUses(const Event& e, const CallMeta& m);
  void AddDeadline(Deadline d) {
    next_deadline_ = std::min(next_deadline_, d.at);
    deadlines_.push_back(std::move(d));
  }
  void ResolveDeadlines(uint64_t now);
  bool Deallocated(const Object& o, uint64_t by) const {
    for (int32_t a : o.allocs)
      if (allocs_[a].dealloc_seq == 0 || allocs_[a].dealloc_seq > by) return false;
    return true;
  }

  // Command lists.
  void IcCreateCommandList(const Event& e, const CallMeta& m, int32_t ic, bool recycle);
  void IcCommandListExecute(const Event& e, const CallMeta& m, int32_t ic);
  void IcRecycleDestroy(const Event& e, const CallMeta& m, int32_t ic);
  void IcDestroyCommandList(const Event& e, const CallMeta& m, int32_t ic);
  void DcRecycleCommandList(const Event& e, const CallMeta& m, int32_t dc);
  void DcCommandListExecute(const Event& e, const CallMeta& m, int32_t dc);
  void CheckExecuteTarget(const Event& e, const CommandList& c, int32_t target, uint64_t h);
  // Deferred contexts.
  void IcCreateDeferredContext(const Event& e, const CallMeta& m, int32_t ic);
  void IcRecycleCreateDeferredContext(const Event& e, const CallMeta& m, int32_t ic);
  void DcDestroy(const Event& e, int32_t dc);
  void ResetRecording(int32_t dc);
  void CheckClosedBeforeRecycle(const Event& e, int32_t dc, bool destroy);
  // Objects and local handles.
  void IcCreateObject(const Event& e, const CallMeta& m, int32_t ic);
  void IcDestroyObject(const Event& e, const CallMeta& m);
  void DcOpen(const Event& e, const CallMeta& m, int32_t dc);
  void DcClose(const Event& e, const CallMeta& m, int32_t dc);
  void CloseLocal(int32_t l, const Event& e);
  // The IC object (>= 0) a DC-table call's handle stands for; flags R57/R58 otherwise.
  int32_t ResolveLocal(const Event& e, int32_t dc, uint64_t h, bool want_cl);
  void CheckDcHandles(const Event& e, const CallMeta& m, int32_t dc);
  void Setter(const Event& e, const CallMeta& m, int32_t c, bool dc);
  // Trackers.
  void QueryBeginEnd(const Event& e, int32_t c, int32_t q, bool begin);
  void MapUnmap(const Event& e, const CallMeta& m, int32_t c, int32_t r, bool map);

  bool IsDeviceRemovedCode(uint32_t hr) const {
    return hr == k_.deviceremoved || hr == k_.dxgi_deviceremoved;
  }

  const CheckOptions options_;
  const CallTable& table_;
  const internal::Constants& k_;
  TransitionObserver* observer_ = nullptr;

  absl::Span<const Event> events_;
  const format::TokenTable* handles_ = nullptr;
  CheckResult result_;
  bool current_dc_table_ = false;

  std::vector<HandleSlot> slots_;
  std::vector<Ctx> ctxs_;
  std::vector<CommandList> cls_;
  std::vector<Object> objs_;
  std::vector<Local> locals_;
  // (dc << 33 | is_cl << 32 | target) -> open local index (R58).
  absl::flat_hash_map<uint64_t, int32_t> open_local_;
  internal::ThreadTracker threads_;  // R35 obligations, first calls per thread
  std::vector<Allocation> allocs_;
  std::vector<Deadline> deadlines_;
  uint64_t next_deadline_ = kNeverReturned;
  std::vector<Isr> isrs_;
  absl::flat_hash_map<uint64_t, DomainSlot> hcontext_domain_;  // R15
  absl::flat_hash_map<uint64_t, ContextBuffers> buffers_;      // R74, by HCONTEXT
  // R75/R76: DMA buffer (physical address, start, end) -> fence id given to DxgkDdiPatch.
  absl::flat_hash_map<std::tuple<uint64_t, uint64_t, uint64_t>, uint64_t> patched_;
  absl::flat_hash_map<uint64_t, uint64_t> engine_fence_;  // (node << 32 | engine) -> fence
  std::vector<Surface> surfaces_;
  // R68: DMA buffer physical address -> the pfnRenderCb whose DxgkDdiRender filled it; fence
  // id -> that submission once DxgkDdiSubmitCommand gave it a fence.
  absl::flat_hash_map<uint64_t, Submission> dma_owner_;
  absl::flat_hash_map<uint64_t, Submission> fence_owner_;
  absl::flat_hash_map<uint64_t, bool> evidence_;  // GuessDc: handle -> is a DC
  bool evidence_built_ = false;
  bool caps_build2_ = false;
  bool consumed_calc_ = false;    // this CalcDeferredContextHandleSize answered a creation
  bool first_of_thread_ = false;  // this top-level device call is its thread's first
  absl::flat_hash_map<uint64_t, uint64_t> no_lists_;  // R35: adapter -> GetCaps seq, no lists
  bool context_created_ = false;                      // R74
};

}  // namespace cltrace::check

#endif  // CLTRACE_CHECK_INTERNAL_CHECKER_IMPL_H_
