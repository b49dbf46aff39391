// The callback tables the replayer hands to the driver: one C thunk per core-layer callback
// (D3D11DDI_CORELAYER_DEVICECALLBACKS) and per kernel thunk (D3DDDI_DEVICECALLBACKS),
// instantiated from format/call_traits.h. Each thunk captures what the driver passed (the
// codec's CaptureEntry/CaptureExit at entry), lets the session match it against the recording,
// and answers:
//   - core layer: a state-refresh request re-issues the DDI calls recorded under it; the other
//     callbacks (SetErrorCb, amortized processing...) have nothing to answer;
//   - kernel thunks: the recorded outputs through the codec's ApplyOutputs*, with the replay
//     kernel's buffers for recorded pointers (kernel.h); a kernel call the recording does not
//     show gets the fallback answer of an infinitely fast kernel.
#include <tuple>
#include <type_traits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ddi/catalog.h"
#include "format/call_traits.h"
#include "replayer/internal/kernel_model.h"
#include "replayer/internal/session.h"
#include "replayer/internal/thunk_table.h"

namespace cltrace::replay::internal {
namespace {

using format::CallId;
using format::CallTraits;
using format::Event;
using format::FieldInfo;

constexpr uint32_t kFallbackCommandBytes = 64 * 1024;
constexpr uint32_t kFallbackListEntries = 512;

// Bytes of the buffer that stands for recorded output pointer `f` of kernel callback `e`.
uint64_t BytesFor(const Event& e, const FieldInfo& f) {
  const format::CallInfo& ci = *format::GetCall(e.call);
  auto get = [&](const char* name) -> uint64_t {
    const int i = format::FieldIndex(ci, name);
    return i >= 0 ? e.args[i] : 0;
  };
  const absl::string_view name = f.name;
  uint64_t bytes = 4096;
  if (name == "pCommandBuffer") {
    bytes = get("CommandBufferSize");
  } else if (name == "pAllocationList") {
    bytes = get("AllocationListSize") * kAllocationEntryBytes;
  } else if (name == "pPatchLocationList") {
    bytes = get("PatchLocationListSize") * kPatchEntryBytes;
  } else if (name == "pNewCommandBuffer") {
    bytes = get("NewCommandBufferSizeOut");
  } else if (name == "pNewAllocationList") {
    bytes = get("NewAllocationListSizeOut") * kAllocationEntryBytes;
  } else if (name == "pNewPatchLocationList") {
    bytes = get("NewPatchLocationListSizeOut") * kPatchEntryBytes;
  } else if (name == "pData.pData") {
    // LockCb: the allocation's size is not in the recording; NumPages bounds what was asked.
    bytes = std::max<uint64_t>(get("NumPages") * 4096, uint64_t{1} << 20);
  }
  return std::min<uint64_t>(std::max<uint64_t>(bytes, 8), kMaxKernelBufferBytes);
}

// A kernel context is a HANDLE (d3dumddi.h) whose value the replay kernel hands out
// (ReplayKernel::NewHandle, a 32-bit number): its key in the replay kernel's tables.
uint32_t ContextKey(HANDLE h) { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(h)); }

// The fallback kernel: answers a kernel call the recording does not show.
template <CallId kId, typename... P>
int64_t Fallback(Session* s, P... p) {
  auto args = std::forward_as_tuple(p...);
  ReplayKernel& k = s->kernel();
  if constexpr (kId == CallId::kCreateContextCb) {
    D3DDDICB_CREATECONTEXT* cc = std::get<1>(args);
    if (cc == nullptr) return static_cast<int32_t>(E_INVALIDARG);
    cc->hContext = reinterpret_cast<HANDLE>(uintptr_t{k.NewHandle()});
    cc->pCommandBuffer = k.Fresh(kFallbackCommandBytes);
    cc->CommandBufferSize = kFallbackCommandBytes;
    cc->pAllocationList = k.Fresh(kFallbackListEntries * kAllocationEntryBytes);
    cc->AllocationListSize = kFallbackListEntries;
    cc->pPatchLocationList = k.Fresh(kFallbackListEntries * kPatchEntryBytes);
    cc->PatchLocationListSize = kFallbackListEntries;
    return S_OK;
  } else if constexpr (kId == CallId::kRenderCb) {
    D3DDDICB_RENDER* r = std::get<1>(args);
    if (r == nullptr) return static_cast<int32_t>(E_INVALIDARG);
    ReplayKernel::ContextBuffers c = k.Context(ContextKey(r->hContext));
    if (c.command == nullptr) {
      c.command_size = std::max(r->NewCommandBufferSize, kFallbackCommandBytes);
      c.command = k.Fresh(c.command_size);
      c.allocation_entries = std::max(r->NewAllocationListSize, kFallbackListEntries);
      c.allocations = k.Fresh(uint64_t{c.allocation_entries} * kAllocationEntryBytes);
      c.patch_entries = std::max(r->NewPatchLocationListSize, kFallbackListEntries);
      c.patches = k.Fresh(uint64_t{c.patch_entries} * kPatchEntryBytes);
    }
    r->pNewCommandBuffer = c.command;
    r->NewCommandBufferSize = c.command_size;
    r->pNewAllocationList = c.allocations;
    r->NewAllocationListSize = c.allocation_entries;
    r->pNewPatchLocationList = c.patches;
    r->NewPatchLocationListSize = c.patch_entries;
    return S_OK;
  } else if constexpr (kId == CallId::kAllocateCb) {
    D3DDDICB_ALLOCATE* a = std::get<1>(args);
    if (a == nullptr) return static_cast<int32_t>(E_INVALIDARG);
    a->hKMResource.value = k.NewHandle();
    for (UINT i = 0; a->pAllocationInfo != nullptr && i < a->NumAllocations; ++i) {
      a->pAllocationInfo[i].hAllocation.value = k.NewHandle();
    }
    return S_OK;
  } else if constexpr (kId == CallId::kLockCb) {
    return static_cast<int32_t>(D3DDDIERR_NOTAVAILABLE);
  } else {
    return S_OK;
  }
}

// --kernel model: the driver's kernel-thunk call made on the model, with the model's device
// in place of the runtime device handle the driver passed.
template <CallId kId, typename... P>
int64_t ForwardToModel(ModelKernel* mk, P... p) {
  using T = CallTraits<kId>;
  const auto pfn = *reinterpret_cast<const typename T::Pfn*>(
      reinterpret_cast<const char*>(mk->callbacks()) + T::kSlotOffset);
  if (pfn == nullptr) return static_cast<int32_t>(E_NOTIMPL);
  auto call = [&](HANDLE device, auto... rest) -> int64_t {
    if constexpr (std::is_void_v<decltype(pfn(device, rest...))>) {
      pfn(mk->ModelDevice(device), rest...);
      return 0;
    } else {
      return static_cast<int64_t>(pfn(mk->ModelDevice(device), rest...));
    }
  };
  return call(p...);
}

template <CallId kId, typename... P>
int64_t KernelCallback(Session* s, const Event* ev, P... p) {
  using T = CallTraits<kId>;
  auto args = std::forward_as_tuple(p...);
  if constexpr (kId == CallId::kRenderCb) {
    const D3DDDICB_RENDER* r = std::get<1>(args);
    if (r != nullptr) {
      s->Submit(ContextKey(r->hContext), r->CommandOffset, r->CommandLength, r->NumAllocations);
    }
  } else if constexpr (kId == CallId::kPresentCb) {
    s->kernel().Present();
  }
  int64_t ret = 0;
  bool answered = false;
  if (ModelKernel* mk = s->model()) {
    // --kernel model: the model answers, and its answer is compared with the recorded one.
    if (mk->BeginThunk(ev)) {
      ret = ForwardToModel<kId>(mk, p...);
      mk->EndThunk(ev);
      answered = true;
      if (ev != nullptr) s->CompareKernelAnswer<kId>(*ev, ret, p...);
    } else if (ThreadState* t = CurrentThread()) {
      // Out of turn behind a kernel action that will never run (the replay stopped, or the
      // driver did not make a recorded kernel call): not compared, and whatever the driver
      // makes of the fallback answer is a consequence, not a divergence of its own.
      t->out_of_turn = true;
    }
  } else if (ev != nullptr) {
    format::InvokeEnv env;
    env.handle_raw = [s](uint64_t id) { return s->KernelHandle(id); };
    env.pointer = [s, ev](const FieldInfo& f, uint64_t recorded) -> void* {
      return recorded == 0 ? nullptr : s->kernel().Buffer(recorded, BytesFor(*ev, f));
    };
    absl::Status applied = T::ApplyOutputs(ev->args, env, p...);
    if (applied.ok()) {
      ret = ev->ret;
      answered = true;
    } else {
      s->Diverge(*ev, "room for the recorded outputs", std::string(applied.message()));
    }
  }
  if (!answered) ret = Fallback<kId>(s, p...);
  // The buffers the context writes into next.
  if constexpr (kId == CallId::kCreateContextCb) {
    const D3DDDICB_CREATECONTEXT* cc = std::get<1>(args);
    if (cc != nullptr && ret == S_OK) {
      s->kernel().SetContext(
          ContextKey(cc->hContext),
          {cc->pCommandBuffer, cc->CommandBufferSize, cc->pAllocationList, cc->AllocationListSize,
           cc->pPatchLocationList, cc->PatchLocationListSize});
    }
  } else if constexpr (kId == CallId::kRenderCb) {
    const D3DDDICB_RENDER* r = std::get<1>(args);
    if (r != nullptr && ret == S_OK) {
      s->kernel().SetContext(
          ContextKey(r->hContext),
          {r->pNewCommandBuffer, r->NewCommandBufferSize, r->pNewAllocationList,
           r->NewAllocationListSize, r->pNewPatchLocationList, r->NewPatchLocationListSize});
    }
  }
  return ret;
}

template <CallId kId, typename Pfn = typename CallTraits<kId>::Pfn>
struct Thunk;

template <CallId kId, typename R, typename... P>
struct Thunk<kId, R (*)(P...)> {
  static R Fn(P... p) {
    using T = CallTraits<kId>;
    Session* s = ActiveSession();
    if (s == nullptr) {
      // No replay running (a driver calling back after its replay ended).
      if constexpr (!std::is_void_v<R>)
        return R{};
      else
        return;
    }
    ThreadState* t = CurrentThread();
    ThreadState foreign;  // a driver thread of its own: no DDI call in flight on it
    if (t == nullptr) {
      s->InitThread(&foreign);
      t = &foreign;
    }
    format::ArgVec actual;
    auto handle_id = [s, t](uint64_t raw) { return s->HandleId(t, raw); };
    T::CaptureEntry(&actual, handle_id, p...);
    T::CaptureExit(&actual, handle_id, p...);  // input arrays' elements too
    const Event* ev = s->MatchCallback(t, kId, actual);
    int64_t ret = 0;
    if constexpr (T::kLayer == format::Layer::kCoreLayer) {
      if (ev != nullptr) {
        s->IssueChildren(t, s->IndexOf(ev));
        ret = ev->ret;
      }
    } else {
      ret = KernelCallback<kId>(s, ev, p...);
    }
    if constexpr (!std::is_void_v<R>) return static_cast<R>(ret);
  }
};

template <CallId kId>
using ReplayThunk = Thunk<kId>;

const D3D11DDI_CORELAYER_DEVICECALLBACKS* CoreTable() {
  return ThunkTable<D3D11DDI_CORELAYER_DEVICECALLBACKS, ReplayThunk>();
}

const D3DDDI_DEVICECALLBACKS* KernelTable() {
  return ThunkTable<D3DDDI_DEVICECALLBACKS, ReplayThunk>();
}

}  // namespace

const D3D11DDI_CORELAYER_DEVICECALLBACKS* Session::core_callbacks() const { return CoreTable(); }
const D3DDDI_DEVICECALLBACKS* Session::kernel_callbacks() const { return KernelTable(); }

}  // namespace cltrace::replay::internal
