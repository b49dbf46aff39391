// Command-list DDIs of the reference driver: the IC command-list handle state machine
// (ddi-spec §3.1, R40–R46) and context-local command-list handles (§3.3, R59).
#include <algorithm>
#include <new>
#include <optional>
#include <utility>

#include "refdriver/internal/common.h"
#include "refdriver/internal/ops.h"
#include "refdriver/internal/tables.h"

namespace cltrace::refdriver {
namespace {

// Validates the DC named by `fn`, a Create/RecycleCreateCommandList, and moves it to Finishing.
// Returns nullptr (reported) if the DC cannot produce a command list now.
DeferredContext* BeginCreate(Device* dev, const D3D11DDIARG_CREATECOMMANDLIST* args,
                             const char* fn) {
  (void)dev;
  if (args == nullptr) {
    Report(rules::Rule::kR53, nullptr, "pCreateCommandList is NULL on the IC table");
    return nullptr;
  }
  const void* h = args->hDeferredContext.pDrvPrivate;
  DcEntry entry;
  if (!LookupDc(h, &entry) || entry.state == DcState::kDestroyed) {
    Report(rules::Rule::kR53, h, "hDeferredContext is not a live deferred context");
    return nullptr;
  }
  // D5 of the §3.2 table (from Rec or Fin; a create after a failed one is D5 again).
  if (!IsDcEdge(entry.state, DcState::kClosed, fn)) {
    Report(rules::Rule::kR53, h,
           absl::StrCat("command list created from a deferred context in state ",
                        rules::StateName(entry.state), " (expected Recording/Finishing)"));
    return nullptr;
  }
  DeferredContext* dc = static_cast<DeferredContext*>(const_cast<void*>(h));
  if (!dc->building_queries.empty()) {
    Report(rules::Rule::kR52, h,
           absl::StrCat(dc->building_queries.size(),
                        " query(ies) begun but not ended before the command list was created"));
  }
  if (!dc->mapped_resources.empty()) {
    Report(rules::Rule::kR52, h,
           absl::StrCat(dc->mapped_resources.size(),
                        " dynamic resource(s) still mapped when the command list was created"));
  }
  UpdateDc(h, [](DcEntry& e) { e.state = DcState::kFinishing; });
  return dc;
}

// A failed create leaves the DC Finishing; both D5e continuations are legal from there.
void FailCreate(DeferredContext* dc) {
  UpdateDc(dc, [](DcEntry& e) { e.create_failed = true; });
}

void EndCreate(DeferredContext* dc) {
  ++dc->finishes;
  dc->building_queries.clear();
  dc->mapped_resources.clear();
  dc->closing_started = false;
  UpdateDc(dc, [](DcEntry& e) {
    e.state = DcState::kClosed;
    e.create_failed = false;
  });
}

void* IcOfLocal(void* local) { return local == nullptr ? nullptr : AsLocal(local)->ic; }

// The DC's final bindings as IC handles (its local handles are still open here).
EndState CaptureEndState(const PipelineState& s) {
  EndState e;
  e.input_layout = IcOfLocal(s.input_layout);
  for (int i = 0; i < kStageCount; ++i) e.shader[i] = IcOfLocal(s.shader[i]);
  e.vb0 = IcOfLocal(s.vb[0]);
  e.ib = IcOfLocal(s.ib);
  e.vs_cb0 = IcOfLocal(s.cb[kVs][0]);
  e.ps_cb0 = IcOfLocal(s.cb[kPs][0]);
  e.ps_srv0 = IcOfLocal(s.srv[kPs][0]);
  e.ps_sampler0 = IcOfLocal(s.sampler[kPs][0]);
  e.rtv0 = IcOfLocal(s.rtv[0]);
  e.dsv = IcOfLocal(s.dsv);
  e.blend = IcOfLocal(s.blend);
  e.depth_stencil = IcOfLocal(s.depth_stencil);
  e.rasterizer = IcOfLocal(s.rasterizer);
  return e;
}

// The GPU state after the spliced list: its end state on the executing context.
void ApplyEndState(const EndState& e, PipelineState* s) {
  s->dirty = true;
  s->input_layout = e.input_layout;
  for (int i = 0; i < kStageCount; ++i) s->shader[i] = e.shader[i];
  s->vb[0] = e.vb0;
  s->ib = e.ib;
  s->cb[kVs][0] = e.vs_cb0;
  s->cb[kPs][0] = e.ps_cb0;
  s->srv[kPs][0] = e.ps_srv0;
  s->sampler[kPs][0] = e.ps_sampler0;
  s->rtv[0] = e.rtv0;
  s->dsv = e.dsv;
  s->blend = e.blend;
  s->depth_stencil = e.depth_stencil;
  s->rasterizer = e.rasterizer;
}

// Moves the DC's recording into the command list (swapping buffers so a recycled handle's
// capacity goes back to the DC: the point of recycling small command lists).
void TakeRecording(DeferredContext* dc, CommandList* cl) {
  dc->rec.end_state = CaptureEndState(dc->state);
  ReleaseRecordingAliases(dc->device, cl->content);
  cl->content.Clear();
  std::swap(cl->content, dc->rec);
  dc->rec.Clear();
}

// The IC device a call names, its call counted; nullptr for a handle that is not one.
Device* CountedIcDevice(D3D10DDI_HDEVICE h) {
  Device* dev = IcDevice(h);
  if (dev != nullptr) CountCall(dev);
  return dev;
}

ClEntry* FindCl(Device* dev, const void* h) {
  auto it = dev->cls.find(h);
  return it == dev->cls.end() ? nullptr : &it->second;
}

// Whether the IC command list `ic` is Valid; else reported (R59) as `what` and its state.
bool IcListValid(Device* dev, void* ic, absl::string_view what) {
  std::lock_guard<std::mutex> lock(dev->cls_mu);
  ClEntry* e = FindCl(dev, ic);
  if (e != nullptr && e->state == ClState::kValid) return true;
  Report(rules::Rule::kR59, ic,
         absl::StrCat(what, e == nullptr ? "Unallocated" : rules::StateName(e->state)));
  return false;
}

// For an IC command-list DDI given a handle that was never a command list: true (reported R57)
// if its memory holds another kind of driver object, e.g. a context-local handle.
bool ReportedWrongKind(const void* h, const char* fn) {
  const char* kind = ObjectKind(h);
  if (kind == nullptr || *static_cast<const uint32_t*>(h) == kCommandListMagic) return false;
  Report(rules::Rule::kR57, h,
         absl::StrCat(fn, " given ", kind, " where an IC command-list handle is expected"));
  return true;
}

// The entry of the command list at `h` when `fn` may act on it: it is Valid (`to` empty), or
// `fn` takes it to `to` by an edge of the §3.1 table. Otherwise reported (a handle of another
// kind, or `rule` for the state) and nullptr. The caller holds dev->cls_mu.
ClEntry* ValidClOrReport(Device* dev, void* h, const char* fn, rules::Rule rule,
                         std::optional<ClState> to) {
  ClEntry* e = FindCl(dev, h);
  if (e == nullptr && ReportedWrongKind(h, fn)) return nullptr;
  const bool legal =
      e != nullptr && (to.has_value() ? IsClEdge(e->state, *to, fn) : e->state == ClState::kValid);
  if (!legal) {
    Report(rule, h,
           absl::StrCat(fn, " on a handle in state ",
                        e == nullptr ? "Unallocated" : rules::StateName(e->state),
                        " (expected Valid)"));
    return nullptr;
  }
  return e;
}

// The successful end of a (recycle) create: `cl`, in the handle memory, takes the recording of
// `dc` and is Valid.
void CompleteCreate(Device* dev, DeferredContext* dc, CommandList* cl, const char* fn) {
  ProbeDcRefresh(dc, /*expect_bound=*/true, fn);
  cl->id = dev->next_id.fetch_add(1);
  cl->owner_dc = dc;
  TakeRecording(dc, cl);
  {
    std::lock_guard<std::mutex> lock(dev->cls_mu);
    dev->cls[cl] = ClEntry{ClState::kValid, dc, false};
  }
  EndCreate(dc);
}

}  // namespace

SIZE_T APIENTRY CalcPrivateCommandListSize(D3D10DDI_HDEVICE hDevice,
                                           const D3D11DDIARG_CREATECOMMANDLIST* args) {
  CallScope scope("CalcPrivateCommandListSize");
  Device* dev = IcDevice(hDevice);
  SIZE_T size = sizeof(CommandList);
  if (dev == nullptr) return size;
  CountCall(dev);
  DcEntry entry;
  if (dev->config.Has(Bug::kR36) && args != nullptr &&
      LookupDc(args->hDeferredContext.pDrvPrivate, &entry) && entry.state != DcState::kDestroyed) {
    // Planted bug R36: the size depends on what the DC recorded, so a recycled handle of the
    // first size may be too small for a later list.
    const auto* dc = static_cast<const DeferredContext*>(args->hDeferredContext.pDrvPrivate);
    size += 16 * std::min<uint64_t>(dc->finishes, 8);
  }
  return size;
}

void APIENTRY CreateCommandList(D3D10DDI_HDEVICE hDevice, const D3D11DDIARG_CREATECOMMANDLIST* args,
                                D3D11DDI_HCOMMANDLIST hCommandList,
                                D3D11DDI_HRTCOMMANDLIST /*hRTCommandList*/) {
  CallScope scope("CreateCommandList");
  Device* dev = CountedIcDevice(hDevice);
  if (dev == nullptr) return;
  void* h = hCommandList.pDrvPrivate;
  if (!HandleMemoryPresent(h, "CreateCommandList", "hCommandList")) return;
  if (ObjectKind(h) != nullptr) {
    // Creating would overwrite a live driver object.
    Report(rules::Rule::kR57, h,
           absl::StrCat("CreateCommandList into the memory of ", ObjectKind(h)));
    return;
  }
  DeferredContext* dc = BeginCreate(dev, args, "CreateCommandList");
  if (dc == nullptr) {
    std::lock_guard<std::mutex> lock(dev->cls_mu);
    dev->cls[h] = ClEntry{ClState::kCreateFailed, nullptr, false};
    SetErrorIc(dev, static_cast<HRESULT>(E_OUTOFMEMORY));
    return;
  }
  bool fail = InjectFault(dev, FaultSite::kCreateCommandList);
  // Only a removal reported by this very call fails it (another thread may report one at any
  // moment; that does not make this create fail).
  bool removed_here = MaybeReportRemoved(dev, nullptr);
  if (fail || removed_here) {
    // Any reported error means the handle was never created (T1e): nothing to clean up.
    {
      std::lock_guard<std::mutex> lock(dev->cls_mu);
      dev->cls[h] = ClEntry{ClState::kCreateFailed, dc, false};
    }
    if (fail) SetErrorIc(dev, static_cast<HRESULT>(E_OUTOFMEMORY));
    FailCreate(dc);
    return;
  }
  CompleteCreate(dev, dc, new (h) CommandList(), "CreateCommandList");
}

HRESULT APIENTRY RecycleCreateCommandList(D3D10DDI_HDEVICE hDevice,
                                          const D3D11DDIARG_CREATECOMMANDLIST* args,
                                          D3D11DDI_HCOMMANDLIST hCommandList,
                                          D3D11DDI_HRTCOMMANDLIST /*hRTCommandList*/) {
  CallScope scope("RecycleCreateCommandList");
  Device* dev = CountedIcDevice(hDevice);
  if (dev == nullptr) return static_cast<HRESULT>(E_OUTOFMEMORY);
  void* h = hCommandList.pDrvPrivate;
  if (!HandleMemoryPresent(h, "RecycleCreateCommandList", "hCommandList")) {
    return static_cast<HRESULT>(E_OUTOFMEMORY);
  }
  DeferredContext* dc = BeginCreate(dev, args, "RecycleCreateCommandList");
  if (dc == nullptr) return static_cast<HRESULT>(E_OUTOFMEMORY);
  bool object_alive = false;  // the handle memory holds a constructed CommandList
  {
    std::lock_guard<std::mutex> lock(dev->cls_mu);
    ClEntry* e = FindCl(dev, h);
    if (e == nullptr && ReportedWrongKind(h, "RecycleCreateCommandList")) {
      // Constructing a command list there would overwrite a live driver object.
      FailCreate(dc);
      return static_cast<HRESULT>(E_OUTOFMEMORY);
    }
    if (e == nullptr) {
      Report(rules::Rule::kR43, h,
             "RecycleCreateCommandList on a handle that was never a command list");
    } else if (!IsClEdge(e->state, ClState::kValid, "RecycleCreateCommandList")) {
      // Not T7 (RC -> V) nor the T7e retry: RD -> V is the shortcut R45 names, the rest R43.
      if (e->state == ClState::kRecycleDestroyed) {
        Report(rules::Rule::kR45, h,
               "RecycleCreateCommandList on a RecycleDestroyed handle that did not go through "
               "RecycleCommandList (RD->V shortcut)");
      } else {
        Report(rules::Rule::kR43, h,
               absl::StrCat("RecycleCreateCommandList on a handle in state ",
                            rules::StateName(e->state), " (expected Recycled)"));
      }
      object_alive = e->state == ClState::kRecycleDestroyed || e->state == ClState::kValid;
    } else {
      // T7 keeps the recycled object; the T7e retry builds it again (the failure destroyed it).
      object_alive = e->state == ClState::kRecycled;
      if (e->owner_dc != dc) {
        Report(rules::Rule::kR43, h,
               absl::StrCat("handle sits in the cache of deferred context ",
                            HandleText(e->owner_dc), ", not of hDeferredContext"));
      }
    }
  }
  auto* cl = object_alive ? static_cast<CommandList*>(h) : new (h) CommandList();
  if (InjectFault(dev, FaultSite::kRecycleCreateCommandList)) {
    // Clean up before failing: the handle is dead and a later DestroyCommandList is a no-op
    // (ddi-spec T7e).
    cl->magic = 0;
    cl->~CommandList();
    {
      std::lock_guard<std::mutex> lock(dev->cls_mu);
      dev->cls[h] = ClEntry{ClState::kRecycleCreateFailed, dc, true};
    }
    if (dev->config.Has(Bug::kR22)) {
      // Planted bug R22: out-of-memory through pfnSetErrorCb instead of the return value only.
      SetErrorIc(dev, static_cast<HRESULT>(E_OUTOFMEMORY));
    }
    FailCreate(dc);
    return static_cast<HRESULT>(E_OUTOFMEMORY);
  }
  CompleteCreate(dev, dc, cl, "RecycleCreateCommandList");
  return S_OK;
}

void APIENTRY RecycleDestroyCommandList(D3D10DDI_HDEVICE hDevice,
                                        D3D11DDI_HCOMMANDLIST hCommandList) {
  CallScope scope("RecycleDestroyCommandList");
  Device* dev = CountedIcDevice(hDevice);
  if (dev == nullptr) return;
  void* h = hCommandList.pDrvPrivate;
  {
    std::lock_guard<std::mutex> lock(dev->cls_mu);
    ClEntry* e = ValidClOrReport(dev, h, "RecycleDestroyCommandList", rules::Rule::kR41,
                                 ClState::kRecycleDestroyed);  // T3 of the §3.1 table
    if (e == nullptr) return;
    DcEntry owner;
    if (!LookupDc(e->owner_dc, &owner) || owner.state == DcState::kDestroyed) {
      Report(rules::Rule::kR41, h,
             "RecycleDestroyCommandList after the owning deferred context was destroyed");
    }
    e->state = ClState::kRecycleDestroyed;
  }
  // The list is dead to the application; keep the handle's buffers for reuse, but what the GPU
  // may still read (map-discard aliases) goes through deferred destruction.
  auto* cl = static_cast<CommandList*>(h);
  ReleaseRecordingAliases(dev, cl->content);
  if (!cl->content.aliases.empty()) {
    DeferredDestruction item;
    item.object_id = cl->id;
    item.content.aliases = std::move(cl->content.aliases);
    QueueDeferred(dev, std::move(item));
  }
  cl->content.Clear();
  MaybeReportRemoved(dev, nullptr);
}

void APIENTRY DestroyCommandList(D3D10DDI_HDEVICE hDevice, D3D11DDI_HCOMMANDLIST hCommandList) {
  CallScope scope("DestroyCommandList");
  Device* dev = CountedIcDevice(hDevice);
  if (dev == nullptr) return;
  void* h = hCommandList.pDrvPrivate;
  {
    std::lock_guard<std::mutex> lock(dev->cls_mu);
    ClEntry* e = FindCl(dev, h);
    if (e == nullptr && ReportedWrongKind(h, "DestroyCommandList")) return;
    if (e == nullptr) {
      Report(rules::Rule::kR44, h, "DestroyCommandList on a handle that was never a command list");
      return;
    }
    switch (e->state) {
      case ClState::kDestroyed:
        Report(rules::Rule::kR44, h, "DestroyCommandList twice on one handle");
        return;
      case ClState::kCreateFailed:
      case ClState::kRecycleCreateFailed:
        if (e->destroy_tolerant) {
          e->state = ClState::kDestroyed;  // T7e: tolerated no-op
        } else {
          Report(rules::Rule::kR21, h,
                 "DestroyCommandList on a handle whose CreateCommandList failed");
        }
        return;
      default:
        e->state = ClState::kDestroyed;
    }
  }
  auto* cl = static_cast<CommandList*>(h);
  DeferredDestruction item;
  item.object_id = cl->id;
  ReleaseRecordingAliases(dev, cl->content);
  item.content = std::move(cl->content);
  if (dev->config.Has(Bug::kR39)) {
    // Planted bug R39: the queue entry keeps the handle memory and writes to it when drained.
    item.stale_handle = h;
  }
  cl->magic = 0;
  cl->~CommandList();
  QueueDeferred(dev, std::move(item));
  MaybeReportRemoved(dev, nullptr);
}

void APIENTRY CommandListExecute(D3D10DDI_HDEVICE hDevice, D3D11DDI_HCOMMANDLIST hCommandList) {
  CallScope scope("CommandListExecute");
  Device* dev = IcDevice(hDevice);
  if (dev == nullptr) return;
  IcDomainScope domain(dev);
  void* h = hCommandList.pDrvPrivate;
  {
    std::lock_guard<std::mutex> lock(dev->cls_mu);
    if (ValidClOrReport(dev, h, "CommandListExecute", rules::Rule::kR40, std::nullopt) == nullptr)
      return;
  }
  auto* cl = static_cast<CommandList*>(h);
  for (IcObject* q : cl->content.queries) {
    if (q->ic_query_state == 1) {
      Report(rules::Rule::kR61, h,
             absl::StrCat("command list manipulates query #", q->id,
                          " which is begun but not ended on the immediate context"));
    }
  }
  for (IcObject* r : cl->content.mapped) {
    if (r->ic_mapped) {
      Report(rules::Rule::kR62, h,
             absl::StrCat("command list mapped dynamic resource #", r->id,
                          " which is currently mapped on the immediate context"));
    }
  }
  IcSplice(dev, cl->content, cl->id);
  for (IcObject* q : cl->content.queries) {
    q->ic_query_state = 2;
    q->query_fence = dev->submits + 1;
  }
  ProbeIcRefresh(dev, "CommandListExecute");
  ApplyEndState(cl->content.end_state, &dev->ic_state);
  if (!dev->config.Has(Bug::kR60)) ClearIcState(dev);  // planted bug R60 skips this
  MaybeReportRemoved(dev, nullptr);
}

void APIENTRY RecycleCommandList(D3D10DDI_HDEVICE hDevice, D3D11DDI_HCOMMANDLIST hCommandList) {
  CallScope scope("RecycleCommandList");
  DcCallScope call(hDevice, rules::Rule::kR42);
  if (!call.ok()) return;
  DeferredContext* dc = call.dc();
  // D4 of the §3.2 table (Rec -> Fin); its "0..n times" keeps a Finishing DC there.
  const bool d4 = IsDcEdge(call.state(), DcState::kFinishing, "RecycleCommandList") ||
                  (call.state() == DcState::kFinishing &&
                   IsDcEdge(DcState::kRecording, DcState::kFinishing, "RecycleCommandList"));
  if (d4) {
    UpdateDc(dc, [](DcEntry& e) { e.state = DcState::kFinishing; });
  } else if (call.state() == DcState::kClosed) {
    Report(rules::Rule::kR46, hDevice.pDrvPrivate,
           "RecycleCommandList after Create/RecycleCreateCommandList in the same "
           "FinishCommandList");
  } else {
    Report(rules::Rule::kR42, hDevice.pDrvPrivate,
           absl::StrCat("RecycleCommandList on a deferred context in state ",
                        rules::StateName(call.state())));
  }
  void* h = hCommandList.pDrvPrivate;
  Device* dev = dc->device;
  if (dev->config.Has(Bug::kR16) && !dc->r16_done) {
    // Planted bug R16: submits through pfnRenderCb from inside a deferred-context DDI.
    dc->r16_done = true;
    D3DDDICB_RENDER r{};
    r.hContext = dev->hcontext;
    dev->kt->pfnRenderCb(dev->rt_device.handle, &r);
  }
  std::lock_guard<std::mutex> lock(dev->cls_mu);
  ClEntry* e = FindCl(dev, h);
  // T5 of the §3.1 table (guarded by R42).
  if (e == nullptr || !IsClEdge(e->state, ClState::kRecycled, "RecycleCommandList")) {
    Report(rules::Rule::kR42, h,
           absl::StrCat("RecycleCommandList on a handle in state ",
                        e == nullptr ? "Unallocated" : rules::StateName(e->state),
                        " (expected RecycleDestroyed)"));
    return;
  }
  if (e->owner_dc != dc) {
    Report(rules::Rule::kR42, h,
           "RecycleCommandList through the table of a deferred context that does not "
           "own the command list");
  }
  e->state = ClState::kRecycled;
  e->owner_dc = dc;
}

// ---- context-local command-list handles (nested execution) ----

void APIENTRY DcCreateCommandList(D3D10DDI_HDEVICE hDevice,
                                  const D3D11DDIARG_CREATECOMMANDLIST* args,
                                  D3D11DDI_HCOMMANDLIST hCommandList,
                                  D3D11DDI_HRTCOMMANDLIST hRTCommandList) {
  CallScope scope("CreateCommandList");
  DcCallScope call(hDevice, rules::Rule::kR53);
  if (!call.ok()) return;
  DeferredContext* dc = call.dc();
  if (call.state() != DcState::kRecording) {
    Report(rules::Rule::kR53, dc,
           absl::StrCat("context-local command-list open on a deferred context in state ",
                        rules::StateName(call.state())));
  }
  if (args != nullptr) {
    Report(rules::Rule::kR56, hCommandList.pDrvPrivate,
           "context-local command-list open must pass pCreateCommandList = NULL");
  }
  void* local = hCommandList.pDrvPrivate;
  if (!HandleMemoryPresent(local, "CreateCommandList", "the context-local handle")) return;
  if (const char* kind = ObjectKind(local);
      kind != nullptr && *static_cast<const uint32_t*>(local) != kLocalObjectMagic) {
    Report(rules::Rule::kR57, local,
           absl::StrCat("context-local command-list open into the memory of ", kind));
    return;
  }
  void* ic = hRTCommandList.handle;
  IcListValid(dc->device, ic, "context-local open of a command list whose IC handle is in state ");
  LocalOpen(dc, D3D11DDI_HT_COMMANDLIST, hCommandList.pDrvPrivate, ic, nullptr);
}

void APIENTRY DcDestroyCommandList(D3D10DDI_HDEVICE hDevice, D3D11DDI_HCOMMANDLIST hCommandList) {
  CallScope scope("DestroyCommandList");
  DcCallScope call(hDevice, rules::Rule::kR53);
  if (!call.ok()) return;
  LocalClose(call.dc(), D3D11DDI_HT_COMMANDLIST, hCommandList.pDrvPrivate);
}

void APIENTRY DcCommandListExecute(D3D10DDI_HDEVICE hDevice, D3D11DDI_HCOMMANDLIST hCommandList) {
  CallScope scope("CommandListExecute");
  DcCallScope call(hDevice, rules::Rule::kR53);
  if (!call.ok()) return;
  DeferredContext* dc = call.dc();
  Device* dev = dc->device;
  if (call.state() != DcState::kRecording) {
    Report(rules::Rule::kR53, dc,
           absl::StrCat("nested CommandListExecute on a deferred context in state ",
                        rules::StateName(call.state())));
    return;
  }
  void* h = hCommandList.pDrvPrivate;
  void* ic = nullptr;
  auto local = dc->locals.find(h);
  if (local != dc->locals.end() && local->second.type == D3D11DDI_HT_COMMANDLIST) {
    ic = local->second.ic;
    if (dev->config.nested_execute_ic) {
      Report(rules::Rule::kR57, h,
             "nested CommandListExecute got a context-local handle but the driver is "
             "configured for nested_execute_handle=ic");
    }
  } else {
    std::lock_guard<std::mutex> lock(dev->cls_mu);
    if (FindCl(dev, h) != nullptr) {
      ic = h;
      if (!dev->config.nested_execute_ic) {
        Report(rules::Rule::kR57, h,
               "nested CommandListExecute got an IC command-list handle "
               "(nested_execute_handle=local expects the context-local handle)");
      }
    }
  }
  if (ic == nullptr) {
    Report(rules::Rule::kR59, h,
           "nested CommandListExecute with a handle that is not open on this context");
    return;
  }
  if (!IcListValid(dev, ic, "nested CommandListExecute of a command list in state ")) return;
  auto* cl = static_cast<CommandList*>(ic);
  DcWriteGeneric(dc, refcmd::kExecuteBegin, cl->id);
  dc->rec.stream.insert(dc->rec.stream.end(), cl->content.stream.begin(), cl->content.stream.end());
  dc->rec.gpu.Append(cl->content.gpu);  // its commands and renames (R66) nest in this list
  AliasesHeldToo(dev, cl->content);
  DcWriteGeneric(dc, refcmd::kExecuteEnd, cl->id);
  auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
  append(dc->rec.allocations, cl->content.allocations);
  append(dc->rec.queries, cl->content.queries);
  append(dc->rec.mapped, cl->content.mapped);
  if (!dev->config.Has(Bug::kR60)) ClearDcState(dc);
}

}  // namespace cltrace::refdriver
