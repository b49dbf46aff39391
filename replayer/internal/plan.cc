#include "replayer/internal/plan.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "ddi/catalog.h"
#include "format/call_codec.h"
#include "format/jsonl.h"
#include "replayer/internal/dx6_replay.h"

namespace cltrace::replay::internal {
namespace {

using format::CallId;
using format::Event;
using format::FieldInfo;
using format::FieldKind;

// "0x1a2b" -> 0x1a2b; anything else (hand-written names) -> 0.
uint64_t ValueOfToken(absl::string_view token) {
  if (!absl::StartsWith(token, "0x") || token.size() < 3 || token.size() > 18) return 0;
  uint64_t v = 0;
  for (char c : token.substr(2)) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return 0;
    }
    v = v * 16 + static_cast<uint64_t>(d);
  }
  return v;
}

// Sizes a recorded event asks the replayer to honour.
bool CheckSizes(const Event& e, const CallMeta& m, BadInput* bad) {
  absl::Span<const FieldInfo> fields = format::Fields(*m.info);
  // Buffers the kernel handed out (CreateContextCb, RenderCb): the replay allocates them. List
  // sizes count entries of at most 32 bytes.
  for (uint16_t i : m.buffer_size_outputs) {
    const absl::string_view name = fields[i].name;
    const uint64_t bytes = absl::StrContains(name, "List") ? e.args[i] * 32 : e.args[i];
    if (bytes > kMaxKernelBufferBytes) {
      return FailAt(bad, e,
                    absl::StrFormat("impossible size: %s = %d asks for a %d-byte kernel buffer "
                                    "(limit %d)",
                                    fields[i].name, e.args[i], bytes, kMaxKernelBufferBytes));
    }
  }
  if (m.role != Role::kIssue) return true;
  if (m.caps_size_field >= 0 && e.args[m.caps_size_field] > kMaxCapsBytes) {
    return FailAt(bad, e,
                  absl::StrFormat("impossible size: DataSize = %d (limit %d)",
                                  e.args[m.caps_size_field], kMaxCapsBytes));
  }
  if (m.info->ret == format::ReturnKind::kSize && e.end != 0 &&
      static_cast<uint64_t>(e.ret) > kMaxHandleBytes) {
    return FailAt(
        bad, e,
        absl::StrFormat("impossible size: the recorded driver answered %d bytes (limit %d)",
                        static_cast<uint64_t>(e.ret), kMaxHandleBytes));
  }
  if (m.sysmem_field >= 0 && e.content == 0) {
    const uint64_t bytes = SysMemBytes(e.call, e.args);
    if (bytes > kZeroRegionBytes) {
      return FailAt(bad, e,
                    absl::StrFormat("impossible size: the box and pitches describe %d bytes of "
                                    "source data (limit %d)",
                                    bytes, kZeroRegionBytes));
    }
  }
  return true;
}

}  // namespace

// Replays the handle bookkeeping of the calls the replay will issue, in seq order, to find
// handles used before any call created them (hostile or truncated traces) before the driver
// runs. Mirrors Session::Prepare. Segment by segment: Grow() before each (the handle table and
// the threads may have grown), then Run over the segment's events.
class HandleSimulation {
 public:
  explicit HandleSimulation(const Plan& plan) : plan_(plan), handles_(*plan.handles) {
    Grow();
    for (size_t t = 0; t < format::HandleTypes().size(); ++t) {
      if (absl::string_view(format::HandleTypes()[t].name) == "D3D11DDI_HCOMMANDLIST") {
        cl_type_ = static_cast<int>(t);
      }
    }
  }

  void Grow() {
    const size_t n = handles_.size();
    if (kind_.size() < n) {
      kind_.resize(n, kUnknown);
      type_.resize(n, 0);
      owner_.resize(n, 0);
      destroyed_.resize(n, 0);
      destroy_end_.resize(n, 0);
      local_.resize(n, 0);
    }
    if (pending_.size() < plan_.tids.size()) pending_.resize(plan_.tids.size(), 0);
  }

  bool Run(const std::vector<uint8_t>& covered, BadInput* bad) {
    for (size_t i = 0; i < plan_.events.size(); ++i) {
      if (!covered[i] || plan_.role[i] != Role::kIssue) continue;
      const Event& e = plan_.events[i];
      std::string problem = Step(e, plan_.thread[i]);
      if (!problem.empty()) return FailAt(bad, e, std::move(problem));
    }
    return true;
  }

 private:
  enum Kind : uint8_t { kUnknown, kDriverLive, kRuntimeValue, kKernelValue, kAdapter, kIc, kDc };

  std::string Token(uint64_t id) const { return std::string(handles_.Token(id)); }
  bool Created(uint64_t id) const {
    return kind_[id] == kDriverLive || kind_[id] == kIc || kind_[id] == kDc;
  }

  // One issued call: its table, its handles, then what it creates, answers or destroys.
  // Returns the problem, empty when there is none.
  std::string Step(const Event& e, uint16_t thread) {
    const CallMeta& m = CallMetaFor(e.call);
    std::string problem = CheckTable(e, m);
    if (problem.empty()) problem = CheckHandles(e, m);
    if (problem.empty()) problem = CheckArgumentStructure(e, m);
    if (problem.empty()) problem = AnswerLocalSize(e, m);
    if (problem.empty()) problem = Create(e, m, thread);
    if (!problem.empty()) return problem;
    if (m.calc_private) pending_[thread] = 1;
    if (m.destroy_field >= 0 && e.args[m.destroy_field] != 0) {
      destroyed_[e.args[m.destroy_field]] = e.seq;
      destroy_end_[e.args[m.destroy_field]] = e.end == 0 ? UINT64_MAX : e.end;
    }
    return "";
  }

  // The adapter, device or deferred context the call goes through.
  std::string CheckTable(const Event& e, const CallMeta& m) {
    if (m.layer == format::Layer::kAdapter) {
      const uint64_t id = e.args[0];
      if (id == 0) return "the call names no adapter (hAdapter is NULL)";
      if (kind_[id] == kUnknown) kind_[id] = kAdapter;
      return "";
    }
    const uint64_t id = m.table_field >= 0 ? e.args[m.table_field] : 0;
    const bool ok =
        m.layer == format::Layer::kDxgi ? kind_[id] == kIc : kind_[id] == kIc || kind_[id] == kDc;
    if (id == 0 || !ok) {
      return absl::StrFormat(
          "hDevice %s is not a device or deferred context created "
          "earlier",
          id == 0 ? "NULL" : Token(id));
    }
    // A call nested inside the device's own DestroyDevice (a state refresh the driver asks for
    // while it flushes its last commands) still reaches a live device.
    if (destroyed_[id] != 0 && e.seq > destroy_end_[id]) {
      return absl::StrFormat("hDevice %s is used after seq %d destroyed it", Token(id),
                             destroyed_[id]);
    }
    return "";
  }

  // Every handle the call names but does not create.
  std::string CheckHandles(const Event& e, const CallMeta& m) {
    absl::Span<const FieldInfo> fields = format::Fields(*m.info);
    // The device or deferred context whose table the call goes through.
    const uint64_t context = m.layer == format::Layer::kAdapter ? 0 : e.args[m.table_field];
    // DC::RecycleCommandList takes an IC command list (R13); DC::CommandListExecute takes the
    // context-local list or, with nested_execute_handle=ic, the IC one (ddi-spec §3.3).
    const bool ic_handles_allowed =
        kind_[context] == kDc &&
        (e.call == CallId::kRecycleCommandList || e.call == CallId::kCommandListExecute);
    std::string problem;
    auto use = [&](uint64_t id, const FieldInfo& f) {
      if (id != 0 && problem.empty()) problem = Use(id, f, context, ic_handles_allowed, e.seq);
    };
    for (const HandleField& h : m.handles) {
      if (h.index != m.create_field) use(e.args[h.index], fields[h.index]);
    }
    if (m.array_handles) {
      ForEachField(*m.info, e.args, [&](const FieldInfo& f, size_t index, int array) {
        if (array >= 0 && f.kind == FieldKind::kHandle) use(e.args[index], f);
      });
    }
    return problem;
  }

  // One named handle `id` in field `f` of a call through the table of `context`.
  std::string Use(uint64_t id, const FieldInfo& f, uint64_t context, bool ic_handles_allowed,
                  uint64_t seq) {
    switch (ClassOfHandleType(f.type_index)) {
      case HandleClass::kAdapter:
        if (kind_[id] != kAdapter) {
          return absl::StrFormat("handle %s (%s) is not an adapter", Token(id), f.name);
        }
        break;
      case HandleClass::kDriver:
        if (!Created(id)) {
          return absl::StrFormat("handle %s (%s) is used before any call created it", Token(id),
                                 f.name);
        } else if (destroyed_[id] != 0 && seq > destroy_end_[id] &&
                   static_cast<int>(type_[id]) != cl_type_) {
          // A destroyed command list may be named again: the runtime-misuse recordings of R44
          // do, and drivers track command-list state by handle (ddi-spec §3.1). Any other
          // destroyed handle is garbage to the driver.
          return absl::StrFormat("handle %s (%s) is used after seq %d destroyed it", Token(id),
                                 f.name, destroyed_[id]);
        } else if (type_[id] != CreatedTypeOf(f.type_index)) {
          // Never hand a driver one kind of object where it expects another...
          return absl::StrFormat("handle %s (%s) was created as a %s, not a %s", Token(id), f.name,
                                 format::HandleTypes()[type_[id]].name,
                                 format::HandleTypes()[f.type_index].name);
        } else if (kind_[id] == kDriverLive && context != 0 && owner_[id] != context &&
                   !(ic_handles_allowed && kind_[owner_[id]] == kIc)) {
          // ...nor an object of one context where another context's is expected (an
          // immediate-context handle and a context-local one have different memory).
          return absl::StrFormat(
              "handle %s (%s) was created through the table of %s, not "
              "of %s",
              Token(id), f.name, Token(owner_[id]), Token(context));
        }
        break;
      case HandleClass::kRuntime:
        if (kind_[id] == kUnknown) kind_[id] = kRuntimeValue;
        break;
      case HandleClass::kKernel:
        if (kind_[id] == kUnknown) kind_[id] = kKernelValue;
        break;
      case HandleClass::kOther:
        break;
    }
    return "";
  }

  // An IC create or CalcPrivate*Size needs its argument structure.
  std::string CheckArgumentStructure(const Event& e, const CallMeta& m) {
    const uint64_t context = m.layer == format::Layer::kAdapter ? 0 : e.args[m.table_field];
    if ((m.create_field >= 0 || m.calc_private) && m.args_struct_field >= 0 &&
        e.args[m.args_struct_field] == 0 && (context == 0 || kind_[context] == kIc)) {
      return absl::StrFormat(
          "%s through the immediate-context table without its argument "
          "structure (%s is NULL)",
          m.info->name, format::Fields(*m.info)[m.args_struct_field].name);
    }
    return "";
  }

  // CalcDeferredContextHandleSize answered for an IC object: it may be opened context-locally.
  std::string AnswerLocalSize(const Event& e, const CallMeta& m) {
    if (!m.calc_local_size || m.ic_object_field < 0 || e.args[m.ic_object_field] == 0) return "";
    const uint64_t v = e.args[m.ic_object_field];
    auto it = plan_.id_of_value.find(v);
    const uint64_t id = it == plan_.id_of_value.end() ? 0 : it->second;
    if (id == 0 || !Created(id)) {
      return absl::StrFormat("pICObject 0x%x names no handle an earlier call created", v);
    }
    local_[id] = 1;
    return "";
  }

  // A create (or context-local open) on `thread`: it needs the size answered before it.
  std::string Create(const Event& e, const CallMeta& m, uint16_t thread) {
    if (m.create_field < 0 || e.args[m.create_field] == 0) return "";
    absl::Span<const FieldInfo> fields = format::Fields(*m.info);
    const uint64_t id = e.args[m.create_field];
    const bool dc_table = m.layer == format::Layer::kDevice && kind_[e.args[0]] == kDc;
    if (dc_table && m.rt_field >= 0) {
      const uint64_t ic = e.args[m.rt_field];
      if (ic == 0 || !local_[ic]) {
        return absl::StrFormat(
            "context-local open of %s: no CalcDeferredContextHandleSize "
            "was answered for it before",
            ic == 0 ? "NULL" : Token(ic));
      }
    } else {
      if (!pending_[thread]) {
        return absl::StrFormat(
            "creates %s (%s) but no CalcPrivate*Size was answered "
            "before it on thread %d",
            Token(id), fields[m.create_field].name, e.tid);
      }
      pending_[thread] = 0;
    }
    kind_[id] = e.call == CallId::kCreateDevice            ? kIc
                : e.call == CallId::kCreateDeferredContext ? kDc
                                                           : kDriverLive;
    type_[id] = CreatedTypeOf(fields[m.create_field].type_index);
    owner_[id] = e.args[0];
    destroyed_[id] = 0;
    return "";
  }

  const Plan& plan_;
  const format::TokenTable& handles_;
  std::vector<uint8_t> kind_;
  std::vector<uint16_t> type_;         // driver handles: the type created as
  std::vector<uint64_t> owner_;        // object handles: the table they were made by
  std::vector<uint64_t> destroyed_;    // seq of the destroy since the create
  std::vector<uint64_t> destroy_end_;  // end of that destroy (UINT64_MAX: it never returned)
  std::vector<uint8_t> local_;         // IC objects with a context-local size answered
  std::vector<uint8_t> pending_;       // threads with a CalcPrivate*Size answered
  int cl_type_ = -1;
};

bool FailAt(BadInput* bad, const Event& e, std::string message) {
  *bad = BadInput::At(e, std::move(message));
  return false;
}

uint64_t SysMemBytes(CallId call, absl::Span<const uint64_t> args) {
  const format::CallInfo* ci = format::GetCall(call);
  if (ci == nullptr) return 0;
  auto get = [&](const char* name) -> uint64_t {
    const int i = format::FieldIndex(*ci, name);
    return i >= 0 && static_cast<size_t>(i) < args.size() ? args[i] : 0;
  };
  const uint64_t row = get("RowPitch") & 0xffffffffu, depth = get("DepthPitch") & 0xffffffffu;
  const int box = format::FieldIndex(*ci, "pDstBox");
  if (box < 0 || args[box] == 0) return std::max<uint64_t>({row, depth, 64 * 1024});
  auto span = [&](const char* lo, const char* hi) -> uint64_t {
    const int64_t a = static_cast<int32_t>(get(lo)), b = static_cast<int32_t>(get(hi));
    return b > a ? static_cast<uint64_t>(b - a) : 1;
  };
  const uint64_t w = span("left", "right"), h = span("top", "bottom"), d = span("front", "back");
  return (d - 1) * depth + (h - 1) * row + w * 16;
}

namespace {

// What one event must be on its own: in seq order after the one before it (seq `previous`, 0
// for none), a known D3D11 call (D3D11 or DX6 layer) with valid arguments, naming only
// handles the trace defines.
bool CheckEvent(const Event& e, uint64_t previous, const CallMeta& m,
                const format::TokenTable& handles, BadInput* bad) {
  if (e.seq == 0 || (previous != 0 && e.seq <= previous)) {
    return FailAt(bad, e,
                  absl::StrFormat("calls are not in strictly increasing seq order (seq %d "
                                  "after %d)",
                                  e.seq, previous));
  }
  if (m.role == Role::kInvalid) {
    return FailAt(bad, e, absl::StrFormat("unknown call id %d", static_cast<int>(e.call)));
  }
  if (absl::Status s = format::ValidateArgs(e.call, e.args); !s.ok()) {
    return FailAt(bad, e, std::string(s.message()));
  }
  bool bad_handle = false;
  uint64_t bad_id = 0;
  for (const HandleField& h : m.handles) {
    if (e.args[h.index] >= handles.size() && !bad_handle) {
      bad_handle = true;
      bad_id = e.args[h.index];
    }
  }
  if (m.array_handles) {
    ForEachField(*m.info, e.args, [&](const FieldInfo& f, size_t index, int array) {
      if (array >= 0 && f.kind == FieldKind::kHandle && e.args[index] >= handles.size() &&
          !bad_handle) {
        bad_handle = true;
        bad_id = e.args[index];
      }
    });
  }
  if (bad_handle) {
    return FailAt(bad, e, absl::StrFormat("handle id %d is not defined by the trace", bad_id));
  }
  return true;
}

// The replay thread of event i (threads numbered in order of first appearance).
bool AssignThread(absl::Span<const Event> events, size_t i,
                  absl::flat_hash_map<uint32_t, uint16_t>* thread_of_tid, Plan* plan,
                  BadInput* bad) {
  const Event& e = events[i];
  if (i > 0 && e.tid == events[i - 1].tid) {
    plan->thread[i] = plan->thread[i - 1];
    return true;
  }
  auto [it, inserted] = thread_of_tid->emplace(e.tid, static_cast<uint16_t>(thread_of_tid->size()));
  if (inserted) {
    if (thread_of_tid->size() > 4096) return FailAt(bad, e, "more than 4096 recorded threads");
    plan->tids.push_back(e.tid);
  }
  plan->thread[i] = it->second;
  return true;
}

// What the replay covers in the current segment: the top-level calls and every call/callback
// below them (added to plan->covered, the running total).
std::vector<uint8_t> MarkCovered(Plan* plan) {
  std::vector<uint8_t> covered(plan->events.size(), 0);
  std::vector<uint32_t> stack;
  for (uint32_t t : plan->top) {
    stack.push_back(t);
    while (!stack.empty()) {
      const uint32_t i = stack.back();
      stack.pop_back();
      if (plan->role[i] == Role::kIgnore) continue;
      covered[i] = 1;
      ++plan->covered;
      for (int32_t c = plan->first_child[i]; c >= 0; c = plan->next_sibling[c]) {
        stack.push_back(static_cast<uint32_t>(c));
      }
    }
  }
  plan->covered += plan->async_callbacks.size() + plan->dx6.size();
  return covered;
}

}  // namespace

PlanBuilder::PlanBuilder(const format::TokenTable& handles, const format::TokenTable& contents,
                         uint64_t until_seq, bool collect_dx6)
    : handles_(handles), contents_(contents), until_seq_(until_seq), collect_dx6_(collect_dx6) {
  plan_.handles = &handles;
  plan_.contents = &contents;
  dx6_plan_.handles = &handles;
  dx6_plan_.contents = &contents;
  content_ = std::make_unique<ContentChecker>(contents, handles);
  sim_ = std::make_unique<HandleSimulation>(plan_);
}

PlanBuilder::~PlanBuilder() = default;

// The handle tokens' recorded values, and the way back from a value to its token id (for the
// tokens defined since the last call).
void PlanBuilder::IndexNewTokens() {
  plan_.token_value.resize(std::max<size_t>(handles_.size(), 1), 0);
  for (uint64_t id = indexed_tokens_; id < handles_.size(); ++id) {
    const uint64_t v = ValueOfToken(handles_.Token(id));
    plan_.token_value[id] = v;
    if (v != 0) plan_.id_of_value.emplace(v, id);
    // A symbolic token ("res1") in pICObject is stored as its HandleTokenValue.
    if (v == 0) plan_.id_of_value.emplace(format::HandleTokenValue(handles_.Token(id)), id);
  }
  indexed_tokens_ = std::max<size_t>(handles_.size(), 1);
}

// Links event i (with a parent) below its parent call, which must be an earlier, still running
// call of the same thread that may nest it; a call below an ignored one is ignored (*role).
// A parent in an earlier segment is found in the tail: checked, not linked.
bool PlanBuilder::LinkToParent(size_t i, Role* role, std::vector<int32_t>* last_child,
                               BadInput* bad) {
  absl::Span<const Event> events = plan_.events;
  const Event& e = events[i];
  auto pit = std::lower_bound(events.begin(), events.begin() + i, e.parent,
                              [](const Event& a, uint64_t seq) { return a.seq < seq; });
  Earlier pe;
  size_t p = SIZE_MAX;
  if (pit != events.begin() + i && pit->seq == e.parent) {
    p = static_cast<size_t>(pit - events.begin());
    pe = {pit->seq, pit->end, pit->tid, pit->call, plan_.role[p]};
  } else {
    auto tit = std::lower_bound(tail_.begin(), tail_.end(), e.parent,
                                [](const Earlier& a, uint64_t seq) { return a.seq < seq; });
    if (tit == tail_.end() || tit->seq != e.parent) {
      return FailAt(bad, e, absl::StrFormat("parent seq %d names no earlier call", e.parent));
    }
    pe = *tit;
  }
  if (pe.tid != e.tid) {
    return FailAt(
        bad, e,
        absl::StrFormat("made inside seq %d of thread %d from thread %d", pe.seq, pe.tid, e.tid));
  }
  if (pe.end != 0 && e.seq > pe.end) {
    return FailAt(bad, e,
                  absl::StrFormat("made inside seq %d, which returned at %d", pe.seq, pe.end));
  }
  const Role parent_role = pe.role;
  const format::Layer parent_layer = CallMetaFor(pe.call).layer;
  if (*role == Role::kDx6 || parent_role == Role::kDx6) {
    // The DX6 runtime calls its driver from the top level, and the DX6 driver calls nothing
    // back: a DX6-layer call nested in anything (or anything in it) mixes the D3D11 and DX6
    // layers in a way no runtime does.
    return FailAt(
        bad, e,
        absl::StrFormat("%s made inside seq %d (%s); DX6-layer calls are top-level "
                        "runtime calls and make no callbacks, so the D3D11 and DX6 "
                        "layers never nest",
                        format::GetCall(e.call)->name, pe.seq, format::GetCall(pe.call)->name));
  }
  if (parent_role == Role::kIgnore || *role == Role::kIgnore) {
    *role = Role::kIgnore;
  } else if (parent_role == Role::kIssue && *role == Role::kIssue) {
    return FailAt(bad, e,
                  absl::StrFormat("a DDI call made directly inside DDI call seq %d (%s); only "
                                  "callbacks run inside a DDI call",
                                  pe.seq, format::GetCall(pe.call)->name));
  } else if (parent_role == Role::kCallback &&
             (*role == Role::kCallback || parent_layer == format::Layer::kKernelCb)) {
    return FailAt(bad, e,
                  absl::StrFormat("made inside callback seq %d (%s); only state-refresh DDI "
                                  "calls run inside a core-layer callback",
                                  pe.seq, format::GetCall(pe.call)->name));
  }
  if (p == SIZE_MAX) return true;
  if ((*last_child)[p] < 0) {
    plan_.first_child[p] = static_cast<int32_t>(i);
  } else {
    plan_.next_sibling[(*last_child)[p]] = static_cast<int32_t>(i);
  }
  (*last_child)[p] = static_cast<int32_t>(i);
  return true;
}

PlanBuilder::Check PlanBuilder::AddSegment(absl::Span<const Event> events, BadInput* bad) {
  Plan* plan = &plan_;
  plan->events = events;
  const size_t n = events.size();
  plan->first_child.assign(n, -1);
  plan->next_sibling.assign(n, -1);
  plan->role.assign(n, Role::kInvalid);
  plan->thread.assign(n, 0);
  plan->top.clear();
  plan->dx6.clear();
  plan->async_callbacks.clear();
  plan->unmap_content.clear();
  std::vector<int32_t> last_child(n, -1);
  IndexNewTokens();

  for (size_t i = 0; i < n; ++i) {
    const Event& e = events[i];
    const CallMeta& m = CallMetaFor(e.call);
    if (!CheckEvent(e, i > 0 ? events[i - 1].seq : last_seq_, m, handles_, bad))
      return Check::kStructural;
    if (!AssignThread(events, i, &thread_of_tid_, plan, bad)) return Check::kStructural;
    Role role = m.role;
    if (e.parent != 0 && !LinkToParent(i, &role, &last_child, bad)) return Check::kStructural;
    plan->role[i] = role;
    if (role != Role::kIgnore && m.info->ret == format::ReturnKind::kVoid && e.ret != 0) {
      FailAt(bad, e,
             absl::StrFormat("%s returns nothing, but the trace gives it ret %d", m.info->name,
                             e.ret));
      return Check::kStructural;
    }
    if (role == Role::kDx6) {
      if (std::string problem = CheckDx6Event(e, contents_); !problem.empty()) {
        FailAt(bad, e, std::move(problem));
        return Check::kStructural;
      }
    } else if (role != Role::kIgnore && !CheckSizes(e, m, bad)) {
      return Check::kStructural;
    }
    {
      UnmapContent unmap;
      bool has_unmap = false;
      std::string problem = content_->Check(e, m, role, &unmap, &has_unmap);
      if (!problem.empty()) {
        FailAt(bad, e, std::move(problem));
        return Check::kStructural;
      }
      if (has_unmap) plan->unmap_content.emplace(static_cast<uint32_t>(i), unmap);
    }

    if (e.parent == 0 && Issuing(e.seq)) {
      if (role == Role::kIssue) {
        if (e.end == 0) {
          plan->never_returned_seq = e.seq;
        } else {
          plan->top.push_back(static_cast<uint32_t>(i));
        }
      } else if (role == Role::kCallback) {
        plan->async_callbacks.push_back(static_cast<uint32_t>(i));
      } else if (role == Role::kDx6) {
        if (e.end == 0) {
          plan->never_returned_seq = e.seq;
        } else {
          plan->dx6.push_back(static_cast<uint32_t>(i));
          if (collect_dx6_) dx6_events_.push_back(e);
        }
      }
    }
  }
  if (n > 0) last_seq_ = events[n - 1].seq;
  // The tail of earlier calls the next segments' parent checks look in.
  for (size_t i = n > kParentTail ? n - kParentTail : 0; i < n; ++i) {
    const Event& e = events[i];
    tail_.push_back({e.seq, e.end, e.tid, e.call, plan->role[i]});
  }
  while (tail_.size() > kParentTail) tail_.pop_front();
  std::vector<uint8_t> covered = MarkCovered(plan);
  if (handles_failed_) return Check::kOk;
  sim_->Grow();
  if (!sim_->Run(covered, bad)) {
    handles_failed_ = true;
    return Check::kHandles;
  }
  return Check::kOk;
}

bool PlanBuilder::FinishDx6(BadInput* bad) {
  if (!collect_dx6_) return SimulateDx6Handles(plan_, bad);
  dx6_plan_.events = dx6_events_;
  dx6_plan_.dx6.resize(dx6_events_.size());
  for (size_t i = 0; i < dx6_events_.size(); ++i) dx6_plan_.dx6[i] = static_cast<uint32_t>(i);
  return SimulateDx6Handles(dx6_plan_, bad);
}

bool BuildPlan(absl::Span<const Event> events, const format::TokenTable& handles,
               const format::TokenTable& contents, uint64_t until_seq, Plan* plan, BadInput* bad) {
  PlanBuilder builder(handles, contents, until_seq, /*collect_dx6=*/false);
  const PlanBuilder::Check c = builder.AddSegment(events, bad);
  const bool ok = c == PlanBuilder::Check::kOk && builder.FinishDx6(bad);
  *plan = std::move(builder.mutable_plan());
  return ok;
}

}  // namespace cltrace::replay::internal
