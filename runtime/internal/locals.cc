#include "runtime/internal/locals.h"

#include "runtime/internal/access.h"
#include "runtime/internal/common.h"
#include "runtime/internal/lifecycle.h"

namespace cltrace::runtime::internal {
namespace {

// DC::pfnCreate* as a context-local open: args NULL for dependency-free objects, for views only
// the dependency's local handle set; the HRT slot carries the IC driver handle (R56).
void OpenLocal(ContextState* c, DeviceChild* o, void* mem, void* dep) {
  void* ic = o->ic_handle();
  switch (o->handle_type()) {
    case D3D10DDI_HT_RESOURCE:
      CLTRACE_CTX_DDI(c, CreateResource, static_cast<const D3D11DDIARG_CREATERESOURCE*>(nullptr),
                      D3D10DDI_HRESOURCE{mem}, D3D10DDI_HRTRESOURCE{ic});
      break;
    case D3D10DDI_HT_SHADERRESOURCEVIEW: {
      D3D11DDIARG_CREATESHADERRESOURCEVIEW a{};
      a.hDrvResource.pDrvPrivate = dep;
      CLTRACE_CTX_DDI(c, CreateShaderResourceView, &a, D3D10DDI_HSHADERRESOURCEVIEW{mem},
                      D3D10DDI_HRTSHADERRESOURCEVIEW{ic});
      break;
    }
    case D3D10DDI_HT_RENDERTARGETVIEW: {
      D3D10DDIARG_CREATERENDERTARGETVIEW a{};
      a.hDrvResource.pDrvPrivate = dep;
      CLTRACE_CTX_DDI(c, CreateRenderTargetView, &a, D3D10DDI_HRENDERTARGETVIEW{mem},
                      D3D10DDI_HRTRENDERTARGETVIEW{ic});
      break;
    }
    case D3D10DDI_HT_DEPTHSTENCILVIEW: {
      D3D11DDIARG_CREATEDEPTHSTENCILVIEW a{};
      a.hDrvResource.pDrvPrivate = dep;
      CLTRACE_CTX_DDI(c, CreateDepthStencilView, &a, D3D10DDI_HDEPTHSTENCILVIEW{mem},
                      D3D10DDI_HRTDEPTHSTENCILVIEW{ic});
      break;
    }
    case D3D11DDI_HT_UNORDEREDACCESSVIEW: {
      D3D11DDIARG_CREATEUNORDEREDACCESSVIEW a{};
      a.hDrvResource.pDrvPrivate = dep;
      CLTRACE_CTX_DDI(c, CreateUnorderedAccessView, &a, D3D11DDI_HUNORDEREDACCESSVIEW{mem},
                      D3D11DDI_HRTUNORDEREDACCESSVIEW{ic});
      break;
    }
    case D3D10DDI_HT_SHADER: {
      const UINT* no_code = nullptr;
      const D3D10DDIARG_STAGE_IO_SIGNATURES* no_sig = nullptr;
      const D3D11DDIARG_TESSELLATION_IO_SIGNATURES* no_tess = nullptr;
      D3D10DDI_HSHADER h{mem};
      D3D10DDI_HRTSHADER rt{ic};
      switch (static_cast<Shader*>(o)->stage()) {
        case Stage::kVS:
          CLTRACE_CTX_DDI(c, CreateVertexShader, no_code, h, rt, no_sig);
          break;
        case Stage::kPS:
          CLTRACE_CTX_DDI(c, CreatePixelShader, no_code, h, rt, no_sig);
          break;
        case Stage::kGS:
          CLTRACE_CTX_DDI(c, CreateGeometryShader, no_code, h, rt, no_sig);
          break;
        case Stage::kHS:
          CLTRACE_CTX_DDI(c, CreateHullShader, no_code, h, rt, no_tess);
          break;
        case Stage::kDS:
          CLTRACE_CTX_DDI(c, CreateDomainShader, no_code, h, rt, no_tess);
          break;
        case Stage::kCS:
          CLTRACE_CTX_DDI(c, CreateComputeShader, no_code, h, rt);
          break;
      }
      break;
    }
    case D3D10DDI_HT_ELEMENTLAYOUT:
      CLTRACE_CTX_DDI(c, CreateElementLayout,
                      static_cast<const D3D10DDIARG_CREATEELEMENTLAYOUT*>(nullptr),
                      D3D10DDI_HELEMENTLAYOUT{mem}, D3D10DDI_HRTELEMENTLAYOUT{ic});
      break;
    case D3D10DDI_HT_BLENDSTATE:
      CLTRACE_CTX_DDI(c, CreateBlendState, static_cast<const D3D10_1_DDI_BLEND_DESC*>(nullptr),
                      D3D10DDI_HBLENDSTATE{mem}, D3D10DDI_HRTBLENDSTATE{ic});
      break;
    case D3D10DDI_HT_DEPTHSTENCILSTATE:
      CLTRACE_CTX_DDI(c, CreateDepthStencilState,
                      static_cast<const D3D10_DDI_DEPTH_STENCIL_DESC*>(nullptr),
                      D3D10DDI_HDEPTHSTENCILSTATE{mem}, D3D10DDI_HRTDEPTHSTENCILSTATE{ic});
      break;
    case D3D10DDI_HT_RASTERIZERSTATE:
      CLTRACE_CTX_DDI(c, CreateRasterizerState,
                      static_cast<const D3D10_DDI_RASTERIZER_DESC*>(nullptr),
                      D3D10DDI_HRASTERIZERSTATE{mem}, D3D10DDI_HRTRASTERIZERSTATE{ic});
      break;
    case D3D10DDI_HT_SAMPLERSTATE:
      CLTRACE_CTX_DDI(c, CreateSampler, static_cast<const D3D10_DDI_SAMPLER_DESC*>(nullptr),
                      D3D10DDI_HSAMPLER{mem}, D3D10DDI_HRTSAMPLER{ic});
      break;
    case D3D10DDI_HT_QUERY:
      CLTRACE_CTX_DDI(c, CreateQuery, static_cast<const D3D10DDIARG_CREATEQUERY*>(nullptr),
                      D3D10DDI_HQUERY{mem}, D3D10DDI_HRTQUERY{ic});
      break;
    default:
      break;
  }
}

void CloseLocal(ContextState* c, DeviceChild* o, void* mem) {
  switch (o->handle_type()) {
    case D3D10DDI_HT_RESOURCE:
      CLTRACE_CTX_DDI(c, DestroyResource, D3D10DDI_HRESOURCE{mem});
      break;
    case D3D10DDI_HT_SHADERRESOURCEVIEW:
      CLTRACE_CTX_DDI(c, DestroyShaderResourceView, D3D10DDI_HSHADERRESOURCEVIEW{mem});
      break;
    case D3D10DDI_HT_RENDERTARGETVIEW:
      CLTRACE_CTX_DDI(c, DestroyRenderTargetView, D3D10DDI_HRENDERTARGETVIEW{mem});
      break;
    case D3D10DDI_HT_DEPTHSTENCILVIEW:
      CLTRACE_CTX_DDI(c, DestroyDepthStencilView, D3D10DDI_HDEPTHSTENCILVIEW{mem});
      break;
    case D3D11DDI_HT_UNORDEREDACCESSVIEW:
      CLTRACE_CTX_DDI(c, DestroyUnorderedAccessView, D3D11DDI_HUNORDEREDACCESSVIEW{mem});
      break;
    case D3D10DDI_HT_SHADER:
      CLTRACE_CTX_DDI(c, DestroyShader, D3D10DDI_HSHADER{mem});
      break;
    case D3D10DDI_HT_ELEMENTLAYOUT:
      CLTRACE_CTX_DDI(c, DestroyElementLayout, D3D10DDI_HELEMENTLAYOUT{mem});
      break;
    case D3D10DDI_HT_BLENDSTATE:
      CLTRACE_CTX_DDI(c, DestroyBlendState, D3D10DDI_HBLENDSTATE{mem});
      break;
    case D3D10DDI_HT_DEPTHSTENCILSTATE:
      CLTRACE_CTX_DDI(c, DestroyDepthStencilState, D3D10DDI_HDEPTHSTENCILSTATE{mem});
      break;
    case D3D10DDI_HT_RASTERIZERSTATE:
      CLTRACE_CTX_DDI(c, DestroyRasterizerState, D3D10DDI_HRASTERIZERSTATE{mem});
      break;
    case D3D10DDI_HT_SAMPLERSTATE:
      CLTRACE_CTX_DDI(c, DestroySampler, D3D10DDI_HSAMPLER{mem});
      break;
    case D3D10DDI_HT_QUERY:
      CLTRACE_CTX_DDI(c, DestroyQuery, D3D10DDI_HQUERY{mem});
      break;
    default:
      break;
  }
}

}  // namespace

void* EnsureLocal(ContextState* c, DeviceChild* o) {
  auto it = c->locals.find(o);
  if (it != c->locals.end()) return it->second.memory;
  void* dep = o->dependency() != nullptr ? EnsureLocal(c, o->dependency()) : nullptr;
  size_t size = o->local_handle_size();
  void* mem = AllocHandle(size);
  DeviceState* dev = c->dev;
  if (dev->sink.observer != nullptr) {
    dev->sink.names.Set(mem, absl::StrCat(o->debug_name(), "@", c->name));
  }
  ErrorCapture capture;
  CheckStep(rules::Machine::kLocal, rules::State::kNone, rules::State::kOpen, "",
            rules::Rule::kR58);  // L1/L4 (not in `locals`: none or closed)
  OpenLocal(c, o, mem, dep);
  if (capture.failed()) {
    // A failed open leaves no handle (nothing to close); the recording is lost (R29) and the
    // draw that needed it sees NULL.
    dev->sink.names.Erase(mem);
    delete[] static_cast<uint8_t*>(mem);
    return nullptr;
  }
  o->InternalAddRef();
  c->locals.emplace(o, LocalHandle{mem, size});
  c->open_order.push_back(ContextState::OpenEntry{o, nullptr});
  return mem;
}

void* EnsureLocalList(ContextState* c, CommandList* cl) {
  auto it = c->local_lists.find(cl);
  if (it != c->local_lists.end()) return it->second.memory;
  ClHandle* h = Access::Handle(cl);
  void* mem = AllocHandle(h->local_size);
  DeviceState* dev = c->dev;
  if (dev->sink.observer != nullptr) {
    dev->sink.names.Set(mem, absl::StrCat(cl->debug_name(), "@", c->name));
  }
  CheckStep(rules::Machine::kLocal, rules::State::kNone, rules::State::kOpen, "",
            rules::Rule::kR58);  // L1/L4
  CLTRACE_CTX_DDI(c, CreateCommandList, static_cast<const D3D11DDIARG_CREATECOMMANDLIST*>(nullptr),
                  D3D11DDI_HCOMMANDLIST{mem}, D3D11DDI_HRTCOMMANDLIST{h->memory});
  cl->InternalAddRef();
  c->local_lists.emplace(cl, LocalHandle{mem, h->local_size});
  c->open_order.push_back(ContextState::OpenEntry{nullptr, cl});
  return mem;
}

void CloseAllLocals(ContextState* c, std::vector<DeviceChild*>* keep,
                    std::vector<CommandList*>* keep_lists) {
  DeviceState* dev = c->dev;
  // Dependents were opened after what they depend on: reverse order closes views first (R55).
  for (auto it = c->open_order.rbegin(); it != c->open_order.rend(); ++it) {
    if (it->object != nullptr) {
      LocalHandle lh = c->locals[it->object];
      CheckStep(rules::Machine::kLocal, rules::State::kOpen, rules::State::kClosedLocal, "",
                rules::Rule::kR57);  // L3: every entry of open_order is open
      CloseLocal(c, it->object, lh.memory);
      FreeHandle(dev, lh.memory, lh.size, rules::Rule::kR50,
                 absl::StrCat("context-local handle ", it->object->debug_name(), "@", c->name,
                              " (closed)"));
    } else {
      LocalHandle lh = c->local_lists[it->list];
      CheckStep(rules::Machine::kLocal, rules::State::kOpen, rules::State::kClosedLocal, "",
                rules::Rule::kR57);  // L3
      CLTRACE_CTX_DDI(c, DestroyCommandList, D3D11DDI_HCOMMANDLIST{lh.memory});
      FreeHandle(
          dev, lh.memory, lh.size, rules::Rule::kR50,
          absl::StrCat("context-local handle ", it->list->debug_name(), "@", c->name, " (closed)"));
    }
  }
  // References move to the command list (it keeps its objects alive) or are dropped; both only
  // after every close, so IC destroys come last (R54).
  std::vector<ContextState::OpenEntry> order = std::move(c->open_order);
  c->open_order.clear();
  c->locals.clear();
  c->local_lists.clear();
  for (const ContextState::OpenEntry& e : order) {
    if (e.object != nullptr) {
      if (keep != nullptr) {
        keep->push_back(e.object);
      } else {
        e.object->InternalRelease();
      }
    } else {
      if (keep_lists != nullptr) {
        keep_lists->push_back(e.list);
      } else {
        e.list->InternalRelease();
      }
    }
  }
}

}  // namespace cltrace::runtime::internal
