// The frame of every pipeline DDI of the reference driver (pipeline.cc: bindings and draws;
// resource_work.cc: copies, updates, clears, queries, maps): PipeCall validates the call on
// the IC or a deferred context and writes its work to the right place.
//
// Thread-safety: a PipeCall lives on the calling thread for one DDI call; it takes the IC
// domain or the deferred context's call scope (internal/domain.h) for its lifetime.
#ifndef CLTRACE_REFDRIVER_INTERNAL_PIPE_CALL_H_
#define CLTRACE_REFDRIVER_INTERNAL_PIPE_CALL_H_

#include <optional>

#include "absl/strings/str_cat.h"
#include "refdriver/internal/common.h"
#include "refdriver/internal/ops.h"
#include "refdriver/internal/refresh.h"

namespace cltrace::refdriver {

// Binding kinds in kSet records (operand a).
enum BindKind : uint64_t {
  kBindShader = 0,    // + stage
  kBindCb = 8,        // + stage
  kBindSrv = 16,      // + stage
  kBindSampler = 24,  // + stage
  kBindCsUav = 32,
  kBindInputLayout,
  kBindVb,
  kBindIb,
  kBindTopology,
  kBindRtv,
  kBindDsv,
  kBindBlend,
  kBindDepthStencil,
  kBindRasterizer,
  kBindSo,
  kBindViewports,
  kBindScissors,
  kBindPredicate,
};

// One pipeline DDI on the IC (kDc = false) or a deferred context (kDc = true).
template <bool kDc>
class PipeCall {
 public:
  // `binding`: a Set* call (unbinds are legal in some closed states); `all_null`: it only
  // unbinds.
  PipeCall(D3D10DDI_HDEVICE h, const char* fn, bool binding, bool all_null) : scope_(fn) {
    if constexpr (kDc) {
      dc_call_.emplace(h, rules::Rule::kR53);
      if (!dc_call_->ok()) return;
      dc_ = dc_call_->dc();
      dev_ = dc_->device;
      ok_ = CheckDcState(fn, binding, all_null);
    } else {
      dev_ = IcDevice(h);
      if (dev_ == nullptr) return;
      ic_.emplace(dev_);
      ok_ = true;
    }
    if (ok_ && binding && !all_null) state().dirty = true;
  }
  bool ok() const { return ok_; }
  Device* dev() const { return dev_; }
  DeferredContext* dc() const { return dc_; }
  PipelineState& state() { return kDc ? dc_->state : dev_->ic_state; }
  const void* ctx() const { return kDc ? static_cast<const void*>(dc_) : dev_; }

  // Validates a handle argument; returns the IC object it stands for (nullptr for NULL or
  // an invalid handle, which is reported: R57 on a DC, R39/R57 on the IC).
  IcObject* Ic(void* h, uint32_t type, const char* what) {
    if (h == nullptr) return nullptr;
    if constexpr (kDc) return AsIc(LocalToIc(dc_, h, type, what));
    return IcArg(h, type, what);
  }
  // A handle to keep as a binding: `h` if valid, else NULL (reported), so that draws never
  // dereference a handle the driver does not know.
  void* Binding(void* h, uint32_t type, const char* what) {
    return Ic(h, type, what) != nullptr ? h : nullptr;
  }
  // The IC object behind a bound handle (bindings hold local handles on a DC).
  static IcObject* Bound(void* h) {
    if (h == nullptr) return nullptr;
    if constexpr (kDc) return AsIc(AsLocal(h)->ic);
    return AsIc(h);
  }
  void Write(const void* rec, uint32_t size) {
    if constexpr (kDc) {
      DcWrite(dc_, rec, size);
    } else {
      IcWrite(dev_, rec, size);
    }
  }
  void Generic(uint32_t opcode, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
    if constexpr (kDc) {
      DcWriteGeneric(dc_, opcode, a, b, c);
    } else {
      IcWriteGeneric(dev_, opcode, a, b, c);
    }
  }
  // The allocation this context's GPU commands reference for a resource or view (0: none):
  // on a DC the alias of a map-discard in this recording, on the IC the current alias a
  // command list left (R66), else the resource's own allocation.
  uint32_t Alloc(const IcObject* o) {
    if (o == nullptr) return 0;
    if (o->type != D3D10DDI_HT_RESOURCE) o = o->dependency;
    if (o == nullptr) return 0;
    if constexpr (kDc) {
      auto it = dc_->rec.renamed.find(o);
      if (it != dc_->rec.renamed.end()) return it->second.first;
      dc_->rec.allocations.push_back(o->allocation);
      return o->allocation;
    } else {
      return IcAllocationOf(dev_, o);
    }
  }
  // One GPU-model command (wddm/README.md) into the recording or the IC's command buffer.
  void Emit(const gpu::Command& command) {
    if constexpr (kDc) {
      DcEmit(dc_, command);
    } else {
      IcEmit(dev_, command);
    }
  }
  // Refresh answers (InRefreshOf this context) are compared with the probe's expectation.
  void Answer(bool matches_current, bool all_null) {
    if (InRefreshOf(ctx())) NoteRefreshAnswer(ctx(), matches_current, all_null);
  }

 private:
  bool CheckDcState(const char* fn, bool binding, bool all_null) {
    DcState s = dc_call_->state();
    if (s == DcState::kRecording) return true;
    if (binding && InRefreshOf(dc_)) return true;  // the runtime answering a refresh
    if (binding && all_null && s == DcState::kAbandoned) {
      if (dc_->closing_started) {
        Report(rules::Rule::kR51, dc_,
               absl::StrCat(fn,
                            ": unbind after the local-handle closes of the "
                            "abandon sequence"));
      }
      return true;
    }
    if (binding && all_null && s == DcState::kClosed) {
      Report(rules::Rule::kR50, dc_,
             absl::StrCat(fn,
                          ": unbind in the FinishCommandList closing path "
                          "(closes must not be preceded by unbinds)"));
      return true;
    }
    Report(rules::Rule::kR53, dc_,
           absl::StrCat(fn, " on a deferred context in state ", rules::StateName(s)));
    return false;
  }

  CallScope scope_;
  std::optional<DcCallScope> dc_call_;
  std::optional<IcDomainScope> ic_;
  Device* dev_ = nullptr;
  DeferredContext* dc_ = nullptr;
  bool ok_ = false;
};

template <typename H>
bool AllNull(const H* h, UINT n) {
  for (UINT i = 0; i < n; ++i) {
    if (h != nullptr && h[i].pDrvPrivate != nullptr) return false;
  }
  return true;
}

// Fills one slot of an IC (dc = false) or DC table with the matching instantiation.
#define CLTRACE_PIPE_SLOT(t, dc, Name) t->pfn##Name = dc ? &Name<true> : &Name<false>;

}  // namespace cltrace::refdriver

#endif  // CLTRACE_REFDRIVER_INTERNAL_PIPE_CALL_H_
