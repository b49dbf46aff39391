// Deferred contexts and command lists: creation (§4.3), FinishCommandList with the
// small-command-list recycling protocol (§4.5, SCL pseudocode), ExecuteCommandList on the
// immediate and on deferred contexts (§4.8, §4.4 nested), the abandon sequence (§4.7) and
// deferred-context teardown (§4.6, §4.9), plus the runtime-misuse modes of RuntimeOptions.
#include <cstddef>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/internal/access.h"
#include "runtime/internal/callbacks.h"
#include "runtime/internal/common.h"
#include "runtime/internal/lifecycle.h"
#include "runtime/internal/locals.h"
#include "runtime/internal/send.h"
#include "runtime/runtime.h"

namespace cltrace::runtime {

using internal::Access;
using internal::ClHandle;
using internal::ContextCall;
using internal::ContextState;
using internal::DeviceState;
using internal::Phase;
using internal::SendMode;

namespace internal {
void SendUnmap(ContextState* c, Resource* r, uint32_t sub);  // context.cc
}  // namespace internal

namespace {

#define CLTRACE_DC_SLOT(member) \
  { offsetof(D3D11DDI_DEVICEFUNCS, member), #member }
struct Slot {
  size_t offset;
  const char* name;
};
// R3: slots every DC table must fill (§2.3 lets the others be NULL).
constexpr Slot kRequiredDcSlots[] = {
    CLTRACE_DC_SLOT(pfnAbandonCommandList),
    CLTRACE_DC_SLOT(pfnRecycleCommandList),
    CLTRACE_DC_SLOT(pfnCommandListExecute),
    CLTRACE_DC_SLOT(pfnDestroyDevice),
    CLTRACE_DC_SLOT(pfnCreateResource),
    CLTRACE_DC_SLOT(pfnDestroyResource),
    CLTRACE_DC_SLOT(pfnCreateShaderResourceView),
    CLTRACE_DC_SLOT(pfnDestroyShaderResourceView),
    CLTRACE_DC_SLOT(pfnCreateRenderTargetView),
    CLTRACE_DC_SLOT(pfnDestroyRenderTargetView),
    CLTRACE_DC_SLOT(pfnCreateDepthStencilView),
    CLTRACE_DC_SLOT(pfnDestroyDepthStencilView),
    CLTRACE_DC_SLOT(pfnCreateUnorderedAccessView),
    CLTRACE_DC_SLOT(pfnDestroyUnorderedAccessView),
    CLTRACE_DC_SLOT(pfnCreateVertexShader),
    CLTRACE_DC_SLOT(pfnCreateGeometryShader),
    CLTRACE_DC_SLOT(pfnCreatePixelShader),
    CLTRACE_DC_SLOT(pfnCreateHullShader),
    CLTRACE_DC_SLOT(pfnCreateDomainShader),
    CLTRACE_DC_SLOT(pfnCreateComputeShader),
    CLTRACE_DC_SLOT(pfnDestroyShader),
    CLTRACE_DC_SLOT(pfnCreateElementLayout),
    CLTRACE_DC_SLOT(pfnDestroyElementLayout),
    CLTRACE_DC_SLOT(pfnCreateBlendState),
    CLTRACE_DC_SLOT(pfnDestroyBlendState),
    CLTRACE_DC_SLOT(pfnCreateDepthStencilState),
    CLTRACE_DC_SLOT(pfnDestroyDepthStencilState),
    CLTRACE_DC_SLOT(pfnCreateRasterizerState),
    CLTRACE_DC_SLOT(pfnDestroyRasterizerState),
    CLTRACE_DC_SLOT(pfnCreateSampler),
    CLTRACE_DC_SLOT(pfnDestroySampler),
    CLTRACE_DC_SLOT(pfnCreateQuery),
    CLTRACE_DC_SLOT(pfnDestroyQuery),
    CLTRACE_DC_SLOT(pfnCreateCommandList),
    CLTRACE_DC_SLOT(pfnDestroyCommandList),
};
#undef CLTRACE_DC_SLOT

std::unique_ptr<CommandListRecorded> NewRecording(ContextState* c) {
  auto rec = std::make_unique<CommandListRecorded>();
  rec->control = c->control;
  rec->device = c->dev->self;
  rec->owner = c->self;
  return rec;
}

D3D11DDIARG_CREATEDEFERREDCONTEXT DcArgs(ContextState* c) {
  D3D11DDIARG_CREATEDEFERREDCONTEXT a{};
  a.p11ContextFuncs = &c->dc_funcs;
  a.hDrvContext = c->handle;
  a.hRTCoreLayer.handle = &c->layer;
  a.p11UMCallbacks = &c->layer.table;
  a.Flags = c->flags;
  return a;
}

// Step 2 of FinishCommandList: empty the lock-free list, integrating each handle into this
// DC's cache with DC::RecycleCommandList (RD -> RC).
void DrainRecycleList(ContextState* c) {
  ClHandle* h = c->control->TakeAll();
  while (h != nullptr) {
    ClHandle* next = h->next;
    if (c->dev->options.misuse != Misuse::kR45) {
      // D4 takes a Rec DC to Fin; its "0..n times" keeps a Fin DC there. From Clo (misuse R46:
      // after the create) it is no edge.
      const rules::State from =
          c->dc_state == rules::State::kFinishing ? rules::State::kRecording : c->dc_state;
      if (internal::CheckStep(
              rules::Machine::kDeferredContext, from, rules::State::kFinishing,
              "RecycleCommandList",
              c->dc_state == rules::State::kClosed ? rules::Rule::kR46 : rules::Rule::kR42)) {
        c->dc_state = rules::State::kFinishing;
      }
      internal::Step(rules::Machine::kCommandList, &h->state, rules::State::kRecycled,
                     "RecycleCommandList", rules::Rule::kR42);  // T5
      CLTRACE_CTX_DDI(c, RecycleCommandList, D3D11DDI_HCOMMANDLIST{h->memory});
    }  // misuse R45: straight into the cache, skipping RecycleCommandList
    c->cache.push_back(h);
    h = next;
  }
}

void FreeClHandle(DeviceState* dev, ClHandle* h, const char* what) {
  internal::FreeHandle(dev, h->memory, h->size, rules::Rule::kR39,
                       absl::StrCat(dev->sink.names.Get(h->memory), " ", what));
  delete h;
}

// Step 3: RecycleCreateCommandList into a cached handle, else a fresh handle with
// CalcPrivateCommandListSize + CreateCommandList + CalcDeferredContextHandleSize.
HRESULT CreateOrRecycle(ContextState* c, CommandList* cl, ClHandle** out) {
  DeviceState* dev = c->dev;
  D3D11DDIARG_CREATECOMMANDLIST a{c->handle};
  D3D11DDI_HRTCOMMANDLIST rt{cl};
  c->phase = Phase::kCreatingCommandList;
  HRESULT hr = S_OK;
  if (dev->options.recycle_command_lists && !c->cache.empty()) {
    ClHandle* h = c->cache.back();
    c->cache.pop_back();
    if (dev->sink.observer != nullptr) dev->sink.names.Set(cl, dev->sink.names.Get(h->memory));
    // T7 (RD -> V, after misuse R45 skipped RecycleCommandList, is no edge) and D5.
    internal::CheckStep(
        rules::Machine::kCommandList, h->state, rules::State::kValid, "RecycleCreateCommandList",
        h->state == rules::State::kRecycleDestroyed ? rules::Rule::kR45 : rules::Rule::kR43);
    internal::CheckStep(rules::Machine::kDeferredContext, c->dc_state, rules::State::kClosed,
                        "RecycleCreateCommandList", rules::Rule::kR53);
    hr = CLTRACE_DDI(dev, RecycleCreateCommandList, &a, D3D11DDI_HCOMMANDLIST{h->memory}, rt);
    if (hr == S_OK) {
      h->state = rules::State::kValid;
      c->dc_state = rules::State::kClosed;
      *out = h;
    } else {
      // T7e and D5e.
      internal::Step(rules::Machine::kCommandList, &h->state, rules::State::kRecycleCreateFailed,
                     "RecycleCreateCommandList", rules::Rule::kR22);
      internal::Step(rules::Machine::kDeferredContext, &c->dc_state, rules::State::kFinishFailed,
                     "RecycleCreateCommandList", rules::Rule::kR48);
      if (static_cast<uint32_t>(hr) != E_OUTOFMEMORY) {
        internal::Report(
            dev, rules::Rule::kR22, "RecycleCreateCommandList",
            absl::StrCat("returned ", internal::HresultName(hr), " (only S_OK or E_OUTOFMEMORY)"));
      }
      // T7e [INF]: the handle is dead; a destroy follows only if configured.
      if (dev->options.destroy_after_failed_recycle_create) {
        internal::Step(rules::Machine::kCommandList, &h->state, rules::State::kDestroyed,
                       "DestroyCommandList", rules::Rule::kR44);
        CLTRACE_DDI(dev, DestroyCommandList, D3D11DDI_HCOMMANDLIST{h->memory});
      }
      FreeClHandle(dev, h, "after failed RecycleCreateCommandList");
    }
  } else {
    SIZE_T size = CLTRACE_DDI(dev, CalcPrivateCommandListSize, &a);
    if (c->first_cl_size == 0) {
      c->first_cl_size = size;
    } else if (size != c->first_cl_size) {
      internal::ReportOnce(
          dev, absl::StrCat("R36-", c->name), rules::Rule::kR36, "CalcPrivateCommandListSize",
          absl::StrCat("returned ", size, " for ", c->name, " after ", c->first_cl_size,
                       " (recycled handles keep the first size)"));
    }
    auto* h = new ClHandle();
    h->memory = internal::AllocHandle(size);
    h->size = size;
    if (dev->sink.observer != nullptr) {
      std::string name = internal::NewName(dev, "CL");
      dev->sink.names.Set(h->memory, name);
      dev->sink.names.Set(cl, name);
    }
    internal::ErrorCapture capture;
    internal::Step(rules::Machine::kCommandList, &h->state, rules::State::kValid,
                   "CreateCommandList", rules::Rule::kR46);  // T1
    internal::Step(rules::Machine::kDeferredContext, &c->dc_state, rules::State::kClosed,
                   "CreateCommandList", rules::Rule::kR53);  // D5
    CLTRACE_DDI(dev, CreateCommandList, &a, D3D11DDI_HCOMMANDLIST{h->memory}, rt);
    if (capture.failed()) {
      // T1e and D5e: the error makes the handle dead and the Finish failed.
      internal::Step(rules::Machine::kCommandList, &h->state, rules::State::kCreateFailed,
                     "SetErrorCb", rules::Rule::kR21);
      internal::Step(rules::Machine::kDeferredContext, &c->dc_state, rules::State::kFinishFailed,
                     "SetErrorCb", rules::Rule::kR48);
      // T1e: never created; no DDI will ever name it again (R21).
      hr = capture.error();
      dev->sink.names.Erase(h->memory);
      delete[] static_cast<uint8_t*>(h->memory);
      delete h;
    } else {
      SIZE_T local =
          CLTRACE_DDI(dev, CalcDeferredContextHandleSize, D3D11DDI_HT_COMMANDLIST, h->memory);
      bool listed = false;
      for (const D3D11DDI_HANDLESIZE& hs : dev->handle_sizes) {
        if (hs.HandleType == D3D11DDI_HT_COMMANDLIST && hs.DriverPrivateSize == local)
          listed = true;
      }
      if (!listed) {
        internal::ReportOnce(dev, "R33-11", rules::Rule::kR33, "CalcDeferredContextHandleSize",
                             absl::StrCat("size ", local,
                                          " for D3D11DDI_HT_COMMANDLIST is not in "
                                          "the CheckDeferredContextHandleSizes list"));
      }
      h->local_size = local;
      *out = h;
    }
  }
  return hr;
}

void DestroyCachedLists(ContextState* c);

// Step 5 (and the end of the abandon path): RecycleCreateDeferredContext.
void RecycleDc(ContextState* c) {
  DeviceState* dev = c->dev;
  D3D11DDIARG_CREATEDEFERREDCONTEXT a = DcArgs(c);
  c->phase = Phase::kClosed;
  // D9 (from Clo/Abd) or D5e (from Fin after a failed create).
  internal::CheckStep(rules::Machine::kDeferredContext, c->dc_state, rules::State::kRecording,
                      "RecycleCreateDeferredContext", rules::Rule::kR48);
  HRESULT hr = CLTRACE_DDI(dev, RecycleCreateDeferredContext, &a);
  c->phase = Phase::kNormal;
  c->last_reset = 0;
  c->has_commands = false;
  c->local_removed = false;
  c->mapped_this_recording.clear();
  if (hr != S_OK) {
    internal::Step(rules::Machine::kDeferredContext, &c->dc_state, rules::State::kRecycleFailed,
                   "RecycleCreateDeferredContext",
                   rules::Rule::kR23);  // D9e
    if (static_cast<uint32_t>(hr) != E_OUTOFMEMORY) {
      internal::Report(
          dev, rules::Rule::kR23, "RecycleCreateDeferredContext",
          absl::StrCat("returned ", internal::HresultName(hr), " (only S_OK or E_OUTOFMEMORY)"));
    }
    // D9e [INF]: the deferred context cannot record any more; its command lists are now
    // those of a dead context (DestroyCommandList from here on).
    c->lost = true;
    c->control->MarkDeadAndWait();
    if (dev->options.destroy_dc_after_failed_recycle) {
      if (dev->options.destroy_cached_lists_before_dc) DestroyCachedLists(c);
      internal::Step(rules::Machine::kDeferredContext, &c->dc_state, rules::State::kDestroyed,
                     "DestroyDevice", rules::Rule::kR48);  // D9e
      CLTRACE_CTX_DDI(c, DestroyDevice);
      c->handle_destroyed = true;
      if (!dev->options.destroy_cached_lists_before_dc) DestroyCachedLists(c);
    }
    return;
  }
  c->dc_state = rules::State::kRecording;
  if (dev->options.probe_callback_caching) internal::SwapCoreCallbacks(&c->layer);
}

// §4.7: AbandonCommandList, unbind one by one, close every local handle; the caller recycles
// or destroys the context.
void Abandon(ContextState* c) {
  // D7 (from Rec) or D5e (from Fin after a failed create).
  internal::Step(rules::Machine::kDeferredContext, &c->dc_state, rules::State::kAbandoned,
                 "AbandonCommandList", rules::Rule::kR51);
  CLTRACE_CTX_DDI(c, AbandonCommandList);
  internal::SendAllBound(c, SendMode::kNull);
  c->phase = Phase::kClosed;
  internal::CloseAllLocals(c, nullptr, nullptr);
  c->building.clear();
  c->mapped.clear();
  for (CommandList* nested : c->rec->nested) nested->InternalRelease();
  c->rec = NewRecording(c);
}

// Destroys the RD/RC handles a dying DC still holds (§4.6 T6/T8).
void DestroyCachedLists(ContextState* c) {
  DeviceState* dev = c->dev;
  std::vector<ClHandle*> all = std::move(c->cache);
  c->cache.clear();
  for (ClHandle* h = c->control->TakeAll(); h != nullptr;) {
    ClHandle* next = h->next;
    all.push_back(h);
    h = next;
  }
  for (ClHandle* h : all) {
    D3D11DDI_HCOMMANDLIST hcl{h->memory};
    internal::Step(rules::Machine::kCommandList, &h->state, rules::State::kDestroyed,
                   "DestroyCommandList", rules::Rule::kR44);  // T6/T8
    CLTRACE_DDI(dev, DestroyCommandList, hcl);
    if (dev->options.misuse == Misuse::kR44 && !dev->misuse_done.exchange(true)) {
      internal::Step(rules::Machine::kCommandList, &h->state, rules::State::kDestroyed,
                     "DestroyCommandList", rules::Rule::kR44);  // X: none
      CLTRACE_DDI(dev, DestroyCommandList, hcl);                // misuse R44: destroyed twice
    }
    FreeClHandle(dev, h, "after DestroyCommandList");
  }
}

}  // namespace

HRESULT Device::CreateDeferredContext(uint32_t flags, DeviceContext** out) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "CreateDeferredContext", "");
  *out = nullptr;
  if ((dev->caps & D3D11DDICAPS_COMMANDLISTS_BUILD_2) == 0) return static_cast<HRESULT>(E_NOTIMPL);
  DeviceContext* obj = Access::NewContext(this, /*deferred=*/true);
  ContextState* c = Access::State(obj);
  c->name = internal::NewName(dev, "DC");
  c->flags = flags;
  internal::InitCoreLayer(&c->layer, c, absl::StrCat("core:", c->name));
  D3D11DDIARG_CALCPRIVATEDEFERREDCONTEXTSIZE calc{flags};
  SIZE_T size = CLTRACE_DDI(dev, CalcPrivateDeferredContextSize, &calc);
  c->dc_memory.reset(static_cast<uint8_t*>(internal::AllocHandle(size)));
  c->dc_size = size;
  c->handle.pDrvPrivate = c->dc_memory.get();
  if (dev->sink.observer != nullptr) {
    dev->sink.names.Set(c->handle.pDrvPrivate, c->name);
    dev->sink.names.Set(&c->layer, c->layer.name);
  }
  D3D11DDIARG_CREATEDEFERREDCONTEXT a = DcArgs(c);
  internal::ErrorCapture capture;
  internal::Step(rules::Machine::kDeferredContext, &c->dc_state, rules::State::kRecording,
                 "CreateDeferredContext", rules::Rule::kR47);  // D1
  CLTRACE_DDI(dev, CreateDeferredContext, &a);
  if (capture.failed()) {
    internal::Step(rules::Machine::kDeferredContext, &c->dc_state, rules::State::kCreateFailed,
                   "SetErrorCb", rules::Rule::kR48);  // D1e
    // D1e [INF]: a failed create leaves no handle (no DestroyDevice).
    Access::DeleteContext(obj);
    return capture.error();
  }
  c->funcs = &c->dc_funcs;
  for (const Slot& s : kRequiredDcSlots) {
    void* v;
    std::memcpy(&v, reinterpret_cast<const char*>(&c->dc_funcs) + s.offset, sizeof(v));
    if (v == nullptr) {
      internal::ReportOnce(dev, absl::StrCat("R3-", s.name), rules::Rule::kR3,
                           "CreateDeferredContext",
                           absl::StrCat("DC table slot ", s.name, " is NULL"));
    }
  }
  c->control = std::make_shared<internal::DcControl>();
  c->rec = NewRecording(c);
  internal::ChildAdded(dev);
  *out = obj;
  return S_OK;
}

namespace {

HRESULT FinishImpl(ContextState* c, BOOL restore, CommandList** out) {
  DeviceState* dev = c->dev;
  const RuntimeOptions& o = dev->options;
  std::unique_ptr<internal::Bindings> saved;
  if (restore) {
    saved = std::make_unique<internal::Bindings>();
    saved->CopyFrom(c->bindings);
  }
  auto restore_state = [&] {
    if (saved != nullptr && !c->lost) {
      c->bindings.CopyFrom(*saved);
      internal::SendAllBound(c, SendMode::kCurrent);
    }
  };

  if (c->local_removed) {
    // R29: a DC DDI reported E_OUTOFMEMORY; the recording is lost.
    Abandon(c);
    RecycleDc(c);
    restore_state();
    return static_cast<HRESULT>(E_OUTOFMEMORY);
  }
  // 1. Implicit QueryEnd / Unmap (R52).
  if (o.misuse != Misuse::kR52) {
    std::vector<Query*> building(c->building.begin(), c->building.end());
    for (Query* q : building) {
      CLTRACE_CTX_DDI(c, QueryEnd, D3D10DDI_HQUERY{internal::HandleFor(c, q)});
      c->rec->queries.push_back(q);
    }
    c->building.clear();
    std::vector<std::pair<Resource*, uint32_t>> mapped(c->mapped.begin(), c->mapped.end());
    for (auto& [r, sub] : mapped) internal::SendUnmap(c, r, sub);
    c->mapped.clear();
  }
  // 2. Drain the lock-free list (R46: before the create; the misuse mode does it after).
  if (o.misuse != Misuse::kR46) DrainRecycleList(c);
  // 3. The command list.
  CommandList* cl = Access::NewCommandList();
  ClHandle* h = nullptr;
  HRESULT hr = CreateOrRecycle(c, cl, &h);
  if (o.misuse == Misuse::kR46) DrainRecycleList(c);
  if (hr != S_OK) {
    Access::DeleteCommandList(cl);  // never handed out: no final release
    // D5e [INF]: abandon (default) or close and go straight to the recycle.
    if (o.abandon_after_failed_create) {
      Abandon(c);
    } else {
      c->bindings.Reset();
      c->phase = Phase::kClosed;
      internal::CloseAllLocals(c, nullptr, nullptr);
      for (CommandList* nested : c->rec->nested) nested->InternalRelease();
      c->rec = NewRecording(c);
      c->building.clear();
      c->mapped.clear();
    }
    RecycleDc(c);
    restore_state();
    return hr;
  }
  // 4. Everything is implicitly unbound now; close the local handles (no unbinds first, R50).
  c->bindings.Reset();
  c->phase = Phase::kClosed;
  std::unique_ptr<CommandListRecorded> rec = std::move(c->rec);
  internal::CloseAllLocals(c, &rec->objects, &rec->nested);
  // 5. Recycle the deferred context.
  c->rec = NewRecording(c);
  RecycleDc(c);

  Access::Handle(cl) = h;
  rec->name =
      dev->sink.observer != nullptr ? dev->sink.names.Get(h->memory) : absl::StrCat("CL@", c->name);
  if (dev->sink.observer != nullptr) dev->sink.names.Set(cl, rec->name);
  Access::Recorded(cl) = std::move(rec);
  internal::ChildAdded(dev);
  // 6. RestoreDeferredContextState: re-apply through ordinary opens and Set* calls [INF].
  restore_state();
  *out = cl;
  return S_OK;
}

}  // namespace

HRESULT DeviceContext::FinishCommandList(BOOL restore, CommandList** out) {
  ContextState* c = state_.get();
  ContextCall call(c, "FinishCommandList");
  DeviceState* dev = c->dev;
  *out = nullptr;
  if (!c->deferred) {
    internal::Report(dev, rules::Rule::kR65, "FinishCommandList",
                     "application: FinishCommandList on the IC");
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  if (c->lost) return static_cast<HRESULT>(E_OUTOFMEMORY);
  HRESULT hr = FinishImpl(c, restore, out);
  if (static_cast<uint32_t>(hr) == D3DDDIERR_DEVICEREMOVED) {
    hr = static_cast<HRESULT>(DXGI_ERROR_DEVICE_REMOVED);  // the API-level code
  }
  return hr;
}

void DeviceContext::ExecuteCommandList(CommandList* cl, BOOL restore) {
  ContextState* c = state_.get();
  ContextCall call(c, "ExecuteCommandList");
  DeviceState* dev = c->dev;
  if (c->deferred && c->lost) return;
  CommandListRecorded* r = Access::Recorded(cl).get();
  std::unique_ptr<internal::Bindings> saved;
  if (restore) {
    saved = std::make_unique<internal::Bindings>();
    saved->CopyFrom(c->bindings);
  }
  // R61/R62: the runtime refuses lists that conflict with this context's open queries/maps.
  bool reject = false;
  if (dev->options.misuse != Misuse::kR61) {
    for (Query* q : r->queries) {
      if (c->building.contains(q)) {
        internal::Report(dev, rules::Rule::kR61, "ExecuteCommandList",
                         absl::StrCat("application: ", r->name, " manipulates ", q->debug_name(),
                                      " which is begun on ", c->name, "; not executed"));
        reject = true;
        break;
      }
    }
  }
  for (Resource* res : r->mapped) {
    if (c->mapped.contains(res)) {
      internal::Report(dev, rules::Rule::kR62, "ExecuteCommandList",
                       absl::StrCat("application: ", r->name, " maps ", res->debug_name(),
                                    " which is mapped on ", c->name, "; not executed"));
      reject = true;
      break;
    }
  }
  if (reject) {
    // The context still ends in the default state (§8.8: explicit unbinds).
    internal::SendAllBound(c, SendMode::kNull);
  } else if (!c->deferred) {
    internal::CheckStep(rules::Machine::kCommandList, Access::Handle(cl)->state,
                        rules::State::kValid, "CommandListExecute",
                        rules::Rule::kR40);  // T2
    dev->expected_draws.insert(dev->expected_draws.end(), r->draws.begin(), r->draws.end());
    CLTRACE_CTX_DDI(c, CommandListExecute, D3D11DDI_HCOMMANDLIST{Access::Handle(cl)->memory});
    internal::CheckFixedSlots(dev, "CommandListExecute");
  } else {
    void* h;
    if (dev->options.nested_execute_handle == NestedExecuteHandle::kLocal) {
      h = internal::EnsureLocalList(c, cl);
    } else {
      h = Access::Handle(cl)->memory;
      cl->InternalAddRef();
      c->rec->nested.push_back(cl);
    }
    c->rec->draws.insert(c->rec->draws.end(), r->draws.begin(), r->draws.end());
    c->rec->queries.insert(c->rec->queries.end(), r->queries.begin(), r->queries.end());
    c->rec->mapped.insert(c->rec->mapped.end(), r->mapped.begin(), r->mapped.end());
    CLTRACE_CTX_DDI(c, CommandListExecute, D3D11DDI_HCOMMANDLIST{h});
    c->has_commands = true;
  }
  if (!reject) {
    // The driver left the context cleared (R60); the runtime's view follows.
    c->bindings.Reset();
    c->last_reset = 1;
  }
  if (saved != nullptr) {
    c->bindings.CopyFrom(*saved);
    internal::SendAllBound(c, SendMode::kCurrent);
  }
}

void DeviceContext::FinalRelease() {
  ContextState* c = state_.get();
  DeviceState* dev = c->dev;
  if (!c->deferred) return;  // the immediate context lives as long as its device
  {
    ContextCall call(c, "Release");
    c->control->MarkDeadAndWait();
    const RuntimeOptions& o = dev->options;
    if (!c->handle_destroyed && !c->lost) {
      bool idle = !c->has_commands && c->open_order.empty() && c->building.empty() &&
                  c->mapped.empty() && c->bindings.IsCleared();
      if (!idle || o.abandon_before_destroy_idle_dc) Abandon(c);  // D11 [INF]
    }
    if (o.destroy_cached_lists_before_dc) DestroyCachedLists(c);
    if (!c->handle_destroyed) {
      // D11 (Rec), D10 (Abd) or D9e (Rec!).
      internal::Step(rules::Machine::kDeferredContext, &c->dc_state, rules::State::kDestroyed,
                     "DestroyDevice", rules::Rule::kR48);
      CLTRACE_CTX_DDI(c, DestroyDevice);
      c->handle_destroyed = true;
    }
    if (!o.destroy_cached_lists_before_dc) DestroyCachedLists(c);
    internal::FreeHandle(dev, c->dc_memory.release(), c->dc_size, rules::Rule::kR39,
                         absl::StrCat(c->name, " after DestroyDevice"));
    c->bindings.Reset();
    for (CommandList* nested : c->rec->nested) nested->InternalRelease();
    c->rec.reset();
  }
  delete this;
  internal::ChildGone(dev);
}

}  // namespace cltrace::runtime
