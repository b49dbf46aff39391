// Checker::Impl handlers of core-layer callbacks: pfnSetErrorCb and the error rules (R20-R31),
// staging destruction (R7); amortized processing goes to the ContextTracker.
#include "check/internal/checker_impl.h"

namespace cltrace::check {

using format::Layer;
using internal::Ctx;

void Checker::Impl::OnCoreLayerCallback(const Event& e, const CallMeta& m) {
  switch (m.op) {
    case Op::kSetErrorCb:
      OnSetErrorCb(e, m);
      return;
    case Op::kAmortizedCb:
      t_.contexts.OnAmortizedCb(e, m);
      return;
    case Op::kDisableStagingCb:
      OnDisableStagingCb(e, m);
      return;
    default:
      return;
  }
}

void Checker::Impl::OnDisableStagingCb(const Event& e, const CallMeta& m) {
  const Event* p = env_.Enclosing(e);
  uint64_t rt = Arg(e, m.hruntime);
  int32_t owner = rt ? env_.Slot(rt).core : -1;
  if (owner >= 0 && t_.contexts.at(owner).dc) {
    Flag(Rule::kR7, e, rt,
         absl::StrCat("pfnDisableDeferredStagingResourceDestruction through the callback "
                      "table of ",
                      t_.contexts.Name(owner)));
  } else if (p == nullptr || env_.table()[p->call].op != Op::kCreateDevice) {
    Flag(Rule::kR7, e, rt,
         absl::StrCat("pfnDisableDeferredStagingResourceDestruction outside CreateDevice",
                      p ? absl::StrCat(" (inside ", CallName(p->call), ")") : ""));
  }
}

void Checker::Impl::CheckErrorRoute(const Event& e, uint64_t rt, int32_t pctx,
                                    const std::string& fn) {
  if (pctx < 0 || rt == 0) return;
  int32_t owner = env_.Slot(rt).core;
  const Ctx& x = t_.contexts.at(pctx);
  if ((owner >= 0 && owner != pctx) || (owner < 0 && x.core_layer != 0 && x.core_layer != rt)) {
    Flag(Rule::kR28, e, rt,
         absl::StrCat("error from ", fn, " reported to ",
                      owner >= 0 ? absl::StrCat("the core layer of ", t_.contexts.Name(owner))
                                 : absl::StrCat("unknown core layer ", env_.Token(rt)),
                      "; calls through the table of ", t_.contexts.Name(pctx),
                      " report to its own core layer"));
  }
}

void Checker::Impl::OnSetErrorCb(const Event& e, const CallMeta& m) {
  const Event* p = env_.Enclosing(e);
  const int32_t hr = static_cast<int32_t>(Arg(e, m.hresult));
  const uint32_t code = static_cast<uint32_t>(hr);
  const uint64_t rt = Arg(e, m.hruntime);
  if (p == nullptr) {
    Flag(Rule::kR28, e, rt, "pfnSetErrorCb called outside any DDI call");
    return;
  }
  const CallMeta& pm = env_.table()[p->call];
  int32_t pctx = -1;
  if (pm.layer == Layer::kDevice) {
    pctx = t_.contexts.Lookup(Arg(*p, pm.hdevice));
  } else if (pm.op == Op::kCreateDevice) {
    pctx = t_.contexts.Lookup(Arg(*p, pm.hdrvdevice));
  }
  const bool pdc = pctx >= 0 && t_.contexts.at(pctx).dc;
  env_.set_dc_table(pdc);
  t_.contexts.LearnCore(pctx, rt);
  const std::string fn = absl::StrCat(pdc ? "DC::" : "IC::", CallName(p->call));
  // R28: routed by table.
  CheckErrorRoute(e, rt, pctx, fn);
  if (hr >= 0) return;
  if (pctx >= 0 && env_.IsDeviceRemovedCode(code)) t_.contexts.NoteRemoved(pctx);
  JudgeErrorCode(e, pm, pdc, code, rt, absl::StrCat(fn, " reported ", format::HresultToString(hr)));
  ApplyFailure(e, *p, pm, pctx, code);
}

void Checker::Impl::JudgeErrorCode(const Event& e, const CallMeta& pm, bool pdc, uint32_t code,
                                   uint64_t rt, const std::string& what) {
  const bool oom = code == env_.k().e_outofmemory;
  const bool removed = env_.IsDeviceRemovedCode(code);
  if (code == env_.k().e_invalidarg) {
    Flag(Rule::kR30, e, rt,
         absl::StrCat(what,
                      "; application errors are D3DDDIERR_APPLICATIONERROR "
                      "(E_INVALIDARG means a driver bug)"));
    return;
  }
  switch (pm.op) {
    case Op::kCalcPrivate:
    case Op::kCalcPrivateCommandListSize:
    case Op::kCalcPrivateDeferredContextSize:
    case Op::kCalcHandleSize:
      Flag(Rule::kR31, e, rt, absl::StrCat(what, "; size queries never call pfnSetErrorCb"));
      break;
    case Op::kCreateCommandList:   // R20 (the IC's; a DC's is a local open)
    case Op::kCommandListExecute:  // R24
      if (pm.op == Op::kCreateCommandList && pdc) break;
      if (!oom && !removed)
        Flag(pm.op == Op::kCreateCommandList ? Rule::kR20 : Rule::kR24, e, rt,
             absl::StrCat(what,
                          "; only E_OUTOFMEMORY and D3DDDIERR_DEVICEREMOVED are "
                          "legal (others are critical)"));
      break;
    case Op::kRecycleCreateCommandList:
    case Op::kRecycleCreateDeferredContext: {
      // The recycle creates report E_OUTOFMEMORY by return value.
      const Rule rule = pm.op == Op::kRecycleCreateCommandList ? Rule::kR22 : Rule::kR23;
      if (oom) {
        Flag(rule, e, rt, absl::StrCat(what, "; E_OUTOFMEMORY is reported by return value"));
      } else {
        Warn(rule, e, rt, absl::StrCat(what, " via pfnSetErrorCb (not addressed by the sources)"));
      }
      break;
    }
    case Op::kDestroyObject:
      if (pm.object_type != 0) break;
      [[fallthrough]];
    case Op::kDestroyCommandList:
    case Op::kRecycleDestroyCommandList:
    case Op::kDestroyDevice:
    case Op::kFlush:
    case Op::kQueryBegin:
    case Op::kQueryEnd:
    case Op::kRecycleCommandList:
      if (!removed && !(pdc && oom))
        Flag(Rule::kR25, e, rt,
             absl::StrCat(what, pdc ? "; only DEVICEREMOVED or E_OUTOFMEMORY may be set"
                                    : "; only D3DDDIERR_DEVICEREMOVED may be set"));
      break;
    case Op::kAbandonCommandList:
      if (oom || removed) {
        Flag(Rule::kR26, e, rt,
             absl::StrCat(what, "; AbandonCommandList may only set critical errors"));
      } else {
        Warn(Rule::kR26, e, rt, absl::StrCat(what, " (critical: the runtime treats it as fatal)"));
      }
      break;
    case Op::kCheckHandleSizes:
      if (removed)
        Flag(Rule::kR27, e, rt,
             absl::StrCat(what, "; capability checks never report device removal"));
      break;
    default:
      break;
  }
}

void Checker::Impl::ApplyFailure(const Event& e, const Event& p, const CallMeta& pm, int32_t pctx,
                                 uint32_t code) {
  const bool pdc = pctx >= 0 && t_.contexts.at(pctx).dc;
  const bool oom = code == env_.k().e_outofmemory;
  switch (pm.op) {
    case Op::kCreateCommandList:
      if (!pdc) return t_.lists.OnCreateFailed(e, p, pm);
      [[fallthrough]];
    case Op::kCreateObject:
      if (pdc) {
        t_.locals.OnOpenFailed(e, p, pm);
      } else {
        int32_t o = env_.Slot(Arg(p, pm.handle)).obj;
        if (o >= 0 && t_.objects.at(o).create_seq == p.seq &&
            t_.objects.at(o).state == State::kAlive)
          t_.objects.To(o, State::kCreateFailed, e);
        t_.threads.Cancel(p.tid, p.seq);
      }
      break;
    case Op::kCreateDeferredContext: {
      int32_t d = t_.contexts.Lookup(Arg(p, pm.hdrvcontext));
      if (d >= 0 && t_.contexts.at(d).dc && t_.contexts.at(d).state == State::kRecording &&
          t_.contexts.at(d).recording == 1)
        t_.contexts.To(d, State::kCreateFailed, e);
      return;
    }
    default:
      break;
  }
  // R29: a DC call's E_OUTOFMEMORY is a local context removal.
  if (pdc && oom && pm.op != Op::kAbandonCommandList) t_.contexts.NoteOutOfMemory(e, pctx);
}

}  // namespace cltrace::check
