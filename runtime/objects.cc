// Reference counting and the destruction paths of API objects: IC-table destroys of device
// children (§4.2), and the final release of a command list (§4.6: RecycleDestroyCommandList
// onto the owning deferred context's lock-free list while it lives, else DestroyCommandList).
#include <optional>

#include "absl/strings/str_cat.h"
#include "runtime/internal/access.h"
#include "runtime/internal/common.h"
#include "runtime/internal/lifecycle.h"
#include "runtime/runtime.h"

namespace cltrace::runtime {

using internal::Access;
using internal::DeviceState;

namespace {

DeviceState* StateOf(Device* d) { return Access::State(d); }

// The DDI destroy of an IC object (free-threaded, R11/R14).
void DestroyIcObject(DeviceState* dev, DeviceChild* o) {
  void* h = o->ic_handle();
  switch (o->handle_type()) {
    case D3D10DDI_HT_RESOURCE: {
      auto* r = static_cast<Resource*>(o);
      const bool primary = r->desc().primary;  // created with a pPrimaryDesc
      if (primary) {
        // Non-shared primaries live in the IC domain (R11).
        internal::IcDomainScope ic(dev);
        CLTRACE_PRIMARY_DDI(dev, DestroyResource, D3D10DDI_HRESOURCE{h});
      } else {
        CLTRACE_DDI(dev, DestroyResource, D3D10DDI_HRESOURCE{h});
      }
      std::lock_guard<std::mutex> lock(dev->alloc_mu);
      auto it = dev->resource_allocations.find(o);
      if (it != dev->resource_allocations.end()) {
        for (uint32_t alloc : it->second) {
          internal::AllocationInfo& info = dev->allocations[alloc];
          if (!info.destroyed && !info.deallocated) ++dev->destroyed_not_deallocated;
          info.destroyed = true;
          info.destroyed_at_flush = dev->flushes.load();
          if (primary && !info.deallocated) {
            internal::Report(dev, rules::Rule::kR69, "DestroyResource",
                             absl::StrCat("primary ", o->debug_name(), " allocation ", alloc,
                                          " not deallocated inside DestroyResource"));
          }
        }
        dev->resource_allocations.erase(it);
      }
      break;
    }
    case D3D10DDI_HT_SHADERRESOURCEVIEW:
      CLTRACE_DDI(dev, DestroyShaderResourceView, D3D10DDI_HSHADERRESOURCEVIEW{h});
      break;
    case D3D10DDI_HT_RENDERTARGETVIEW:
      CLTRACE_DDI(dev, DestroyRenderTargetView, D3D10DDI_HRENDERTARGETVIEW{h});
      break;
    case D3D10DDI_HT_DEPTHSTENCILVIEW:
      CLTRACE_DDI(dev, DestroyDepthStencilView, D3D10DDI_HDEPTHSTENCILVIEW{h});
      break;
    case D3D11DDI_HT_UNORDEREDACCESSVIEW:
      CLTRACE_DDI(dev, DestroyUnorderedAccessView, D3D11DDI_HUNORDEREDACCESSVIEW{h});
      break;
    case D3D10DDI_HT_SHADER:
      CLTRACE_DDI(dev, DestroyShader, D3D10DDI_HSHADER{h});
      break;
    case D3D10DDI_HT_ELEMENTLAYOUT:
      CLTRACE_DDI(dev, DestroyElementLayout, D3D10DDI_HELEMENTLAYOUT{h});
      break;
    case D3D10DDI_HT_BLENDSTATE:
      CLTRACE_DDI(dev, DestroyBlendState, D3D10DDI_HBLENDSTATE{h});
      break;
    case D3D10DDI_HT_DEPTHSTENCILSTATE:
      CLTRACE_DDI(dev, DestroyDepthStencilState, D3D10DDI_HDEPTHSTENCILSTATE{h});
      break;
    case D3D10DDI_HT_RASTERIZERSTATE:
      CLTRACE_DDI(dev, DestroyRasterizerState, D3D10DDI_HRASTERIZERSTATE{h});
      break;
    case D3D10DDI_HT_SAMPLERSTATE:
      CLTRACE_DDI(dev, DestroySampler, D3D10DDI_HSAMPLER{h});
      break;
    case D3D10DDI_HT_QUERY:
      CLTRACE_DDI(dev, DestroyQuery, D3D10DDI_HQUERY{h});
      break;
    default:
      break;
  }
}

}  // namespace

// ---- Object ----

uint32_t Object::AddRef() { return refs_.fetch_add(1, std::memory_order_relaxed) + 1; }

uint32_t Object::Release() {
  uint32_t left = refs_.fetch_sub(1, std::memory_order_acq_rel) - 1;
  if (left == 0) FinalRelease();
  return left;
}

void Object::InternalRelease() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) FinalRelease();
}

// ---- DeviceChild ----

DeviceChild::DeviceChild(Device* device, D3D11DDI_HANDLETYPE type, DeviceChild* dependency)
    : device_(device), type_(type), dependency_(dependency) {
  if (dependency_ != nullptr) dependency_->InternalAddRef();
}

DeviceChild::~DeviceChild() = default;

void DeviceChild::FinalRelease() {
  DeviceState* dev = StateOf(device_);
  internal::ApiScope api(dev, "Release", name_);
  if (ic_handle_ != nullptr) {
    DestroyIcObject(dev, this);
    internal::FreeHandle(dev, ic_handle_, ic_size_, rules::Rule::kR39,
                         absl::StrCat(name_, " after its IC destroy"));
    ic_handle_ = nullptr;
    if (dev->sink.observer != nullptr) dev->sink.names.Erase(this);
  }
  DeviceChild* dep = dependency_;
  delete this;
  if (dep != nullptr) dep->InternalRelease();
  internal::ChildGone(dev);
}

View::View(Device* device, ViewKind kind, Resource* resource)
    : DeviceChild(device,
                  kind == ViewKind::kShaderResource ? D3D10DDI_HT_SHADERRESOURCEVIEW
                  : kind == ViewKind::kRenderTarget ? D3D10DDI_HT_RENDERTARGETVIEW
                  : kind == ViewKind::kDepthStencil ? D3D10DDI_HT_DEPTHSTENCILVIEW
                                                    : D3D11DDI_HT_UNORDEREDACCESSVIEW,
                  resource),
      kind_(kind) {}

// ---- CommandList ----

CommandList::~CommandList() = default;

DeviceContext* CommandList::owner() const { return recorded_->owner; }
const std::string& CommandList::debug_name() const { return recorded_->name; }

void CommandList::FinalRelease() {
  CommandListRecorded* rec = recorded_.get();
  DeviceState* dev = StateOf(rec->device);
  internal::ApiScope api(dev, "Release", rec->name);
  internal::ClHandle* h = handle_;
  D3D11DDI_HCOMMANDLIST hcl{h->memory};
  internal::DcControl* control = rec->control.get();
  const RuntimeOptions& o = dev->options;
  bool recycle = o.recycle_command_lists && control->TryEnter();
  if (recycle) {
    // The owning DC lives: light destroy, then onto its lock-free list; its next
    // FinishCommandList integrates the handle with RecycleCommandList (SCL pseudocode).
    internal::Step(rules::Machine::kCommandList, &h->state, rules::State::kRecycleDestroyed,
                   "RecycleDestroyCommandList",
                   rules::Rule::kR41);  // T3
    CLTRACE_DDI(dev, RecycleDestroyCommandList, hcl);
    if (o.misuse == Misuse::kR40 && !dev->misuse_done.exchange(true)) {
      // Misuse R40: executes the list after its final release (handle RecycleDestroyed): no
      // edge of the §3.1 table.
      internal::CheckStep(rules::Machine::kCommandList, h->state, rules::State::kValid,
                          "CommandListExecute", rules::Rule::kR40);
      internal::IcDomainScope ic(dev);
      CLTRACE_DDI(dev, CommandListExecute, hcl);
    }
    control->Push(h);
    control->Leave();
  } else {
    if (o.misuse == Misuse::kR41 && o.recycle_command_lists) {
      // Misuse R41: recycle-destroys although the owning DC is gone (T3 itself is an edge;
      // the dead owner is what R41 forbids).
      internal::Step(rules::Machine::kCommandList, &h->state, rules::State::kRecycleDestroyed,
                     "RecycleDestroyCommandList", rules::Rule::kR41);
      CLTRACE_DDI(dev, RecycleDestroyCommandList, hcl);
    }
    internal::Step(rules::Machine::kCommandList, &h->state, rules::State::kDestroyed,
                   "DestroyCommandList", rules::Rule::kR44);  // T4/T6
    CLTRACE_DDI(dev, DestroyCommandList, hcl);
    if (o.misuse == Misuse::kR44 && !dev->misuse_done.exchange(true)) {
      // Misuse R44: destroyed twice (X -> X is no edge).
      internal::Step(rules::Machine::kCommandList, &h->state, rules::State::kDestroyed,
                     "DestroyCommandList", rules::Rule::kR44);
      CLTRACE_DDI(dev, DestroyCommandList, hcl);
    }
    internal::FreeHandle(dev, h->memory, h->size, rules::Rule::kR39,
                         absl::StrCat(rec->name, " after DestroyCommandList"));
    delete h;
  }
  handle_ = nullptr;
  std::vector<DeviceChild*> objects = std::move(rec->objects);
  std::vector<CommandList*> nested = std::move(rec->nested);
  delete this;
  for (CommandList* cl : nested) cl->InternalRelease();
  for (DeviceChild* child : objects) child->InternalRelease();
  internal::ChildGone(dev);
}

// ---- process-wide views ----

uint64_t ProcessCallCount() { return internal::ProcessCalls().load(); }

}  // namespace cltrace::runtime
