#include "runtime/internal/ddi.h"

#include "absl/strings/str_format.h"
#include "runtime/internal/common.h"
#include "runtime/internal/state.h"

namespace cltrace::runtime::internal {
namespace {

constexpr int kMaxFrames = 64;
thread_local Frame* t_frames[kMaxFrames];
thread_local int t_depth = 0;

void EmitPendingHeads(CallSink* sink) {
  for (int i = 0; i < t_depth; ++i) {
    Frame* f = t_frames[i];
    if (f->head_emitted || f->head.empty()) continue;
    f->head_emitted = true;
    sink->observer->OnLine(f->depth, f->head);
  }
}

const char* HresultText(uint32_t hr) {
  switch (hr) {
    case S_OK:
      return "S_OK";
    case S_FALSE:
      return "S_FALSE";
    case E_NOTIMPL:
      return "E_NOTIMPL";
    case E_FAIL:
      return "E_FAIL";
    case E_OUTOFMEMORY:
      return "E_OUTOFMEMORY";
    case E_INVALIDARG:
      return "E_INVALIDARG";
    case DXGI_ERROR_DEVICE_REMOVED:
      return "DXGI_ERROR_DEVICE_REMOVED";
    case DXGI_DDI_ERR_WASSTILLDRAWING:
      return "DXGI_DDI_ERR_WASSTILLDRAWING";
    case D3DDDIERR_WASSTILLDRAWING:
      return "D3DDDIERR_WASSTILLDRAWING";
    case D3DDDIERR_DEVICEREMOVED:
      return "D3DDDIERR_DEVICEREMOVED";
    case D3DDDIERR_APPLICATIONERROR:
      return "D3DDDIERR_APPLICATIONERROR";
    default:
      return nullptr;
  }
}

}  // namespace

void HandleNames::Set(const void* p, std::string name) {
  std::lock_guard<std::mutex> lock(mu_);
  names_[p] = std::move(name);
}

void HandleNames::Erase(const void* p) {
  std::lock_guard<std::mutex> lock(mu_);
  names_.erase(p);
}

std::string HandleNames::Get(const void* p) const {
  if (p == nullptr) return "NULL";
  std::lock_guard<std::mutex> lock(mu_);
  auto it = names_.find(p);
  return it == names_.end() ? absl::StrFormat("%p", p) : it->second;
}

Frame* CurrentFrame() { return t_depth > 0 ? t_frames[t_depth - 1] : nullptr; }

Frame* CurrentDdiFrame() {
  for (int i = t_depth - 1; i >= 0; --i) {
    if (t_frames[i]->table != Table::kCallback) return t_frames[i];
  }
  return nullptr;
}

int FrameCount() { return t_depth; }

FrameScope::FrameScope(CallSink* sink, DeviceState* dev, ContextState* ctx, Table table,
                       bool ic_domain, const char* name, ddi::CallId id)
    : sink_(sink) {
  frame_.name = name;
  frame_.id = id;
  frame_.table = table;
  frame_.ic_domain = ic_domain;
  frame_.ctx = ctx;
  frame_.dev = dev;
  frame_.depth = t_depth + 1;
  if (t_depth < kMaxFrames) t_frames[t_depth] = &frame_;
  ++t_depth;
}

FrameScope::~FrameScope() {
  if (sink_->observer != nullptr) {
    if (!frame_.head_emitted) {
      if (!frame_.head.empty()) {
        frame_.head_emitted = true;  // printed below, with the result
        EmitPendingHeads(sink_);     // outer frames first
        sink_->observer->OnLine(frame_.depth, result_.empty()
                                                  ? frame_.head
                                                  : absl::StrCat(frame_.head, " -> ", result_));
      }
    } else if (!result_.empty()) {
      sink_->observer->OnLine(frame_.depth, absl::StrCat("<- ", result_));
    }
  }
  --t_depth;
}

void EmitLine(CallSink* sink, int extra_depth, absl::string_view line) {
  if (sink->observer == nullptr) return;
  EmitPendingHeads(sink);
  sink->observer->OnLine(t_depth + extra_depth, line);
}

void EmitApiLine(CallSink* sink, absl::string_view line) {
  if (sink->observer == nullptr) return;
  sink->observer->OnLine(0, line);
}

std::string HresultName(HRESULT hr) {
  const char* text = HresultText(static_cast<uint32_t>(hr));
  return text != nullptr ? std::string(text) : absl::StrFormat("0x%08x", static_cast<uint32_t>(hr));
}

void ReportNullSlot(DeviceState* dev, ContextState* ctx, Table table, const char* name) {
  bool dc = table == Table::kDc;
  ReportOnce(
      dev, absl::StrCat("null-", dc ? "dc-" : "ic-", name),
      dc ? rules::Rule::kR3 : rules::Rule::kR2, name,
      absl::StrCat(dc ? absl::StrCat(ctx != nullptr ? ctx->name : "DC", " table") : "IC table",
                   " slot pfn", name, " is NULL but the runtime needs it"));
}

std::string TablePrefix(ContextState* ctx, Table table) {
  switch (table) {
    case Table::kAdapter:
      return "ADAPTER.";
    case Table::kDxgi:
      return "DXGI.";
    case Table::kIc:
      return "IC.";
    case Table::kDc:
      return ctx != nullptr ? absl::StrCat(ctx->name, ".") : std::string("DC?.");
    case Table::kCallback:
      return "cb ";
  }
  return "";
}

std::string FormatStruct(const HandleNames& n, const D3D11DDIARG_CREATECOMMANDLIST& a) {
  return absl::StrCat("{hDeferredContext=", n.Get(a.hDeferredContext.pDrvPrivate), "}");
}

std::string FormatStruct(const HandleNames& n, const D3D11DDIARG_CREATEDEFERREDCONTEXT& a) {
  return absl::StrCat("{hDrvContext=", n.Get(a.hDrvContext.pDrvPrivate),
                      ", hRTCoreLayer=", n.Get(a.hRTCoreLayer.handle), ", Flags=", a.Flags, "}");
}

std::string FormatStruct(const HandleNames&, const D3D11DDIARG_CALCPRIVATEDEFERREDCONTEXTSIZE& a) {
  return absl::StrCat("{Flags=", a.Flags, "}");
}

std::string FormatStruct(const HandleNames&, const D3D11DDIARG_CREATERESOURCE& a) {
  return absl::StrCat("{Dimension=", a.ResourceDimension, ", Usage=", a.Usage, ", BindFlags=0x",
                      absl::Hex(a.BindFlags),
                      ", Width=", a.pMipInfoList != nullptr ? a.pMipInfoList[0].TexelWidth : 0,
                      a.pPrimaryDesc != nullptr ? ", primary" : "", "}");
}

std::string FormatStruct(const HandleNames& n, const D3D11DDIARG_CREATESHADERRESOURCEVIEW& a) {
  return absl::StrCat("{hDrvResource=", n.Get(a.hDrvResource.pDrvPrivate), "}");
}

std::string FormatStruct(const HandleNames& n, const D3D10DDIARG_CREATERENDERTARGETVIEW& a) {
  return absl::StrCat("{hDrvResource=", n.Get(a.hDrvResource.pDrvPrivate), "}");
}

std::string FormatStruct(const HandleNames& n, const D3D11DDIARG_CREATEDEPTHSTENCILVIEW& a) {
  return absl::StrCat("{hDrvResource=", n.Get(a.hDrvResource.pDrvPrivate), "}");
}

std::string FormatStruct(const HandleNames& n, const D3D11DDIARG_CREATEUNORDEREDACCESSVIEW& a) {
  return absl::StrCat("{hDrvResource=", n.Get(a.hDrvResource.pDrvPrivate), "}");
}

std::string FormatStruct(const HandleNames&, const D3D10DDIARG_CREATEQUERY& a) {
  return absl::StrCat("{Query=", a.Query, "}");
}

std::string FormatStruct(const HandleNames&, const D3D10_2DDIARG_GETCAPS& a) {
  return absl::StrCat("{Type=", a.Type, ", DataSize=", a.DataSize, "}");
}

std::string FormatStruct(const HandleNames& n, const D3D10DDIARG_CREATEDEVICE& a) {
  return absl::StrCat("{hDrvDevice=", n.Get(a.hDrvDevice.pDrvPrivate),
                      ", hRTCoreLayer=", n.Get(a.hRTCoreLayer.handle), ", Flags=", a.Flags, "}");
}

std::string FormatStruct(const HandleNames&, const D3D10DDIARG_OPENADAPTER& a) {
  return absl::StrCat("{Interface=", a.Interface, ", Version=", a.Version, "}");
}

std::string FormatStruct(const HandleNames&, const D3D10DDIARG_CALCPRIVATEDEVICESIZE& a) {
  return absl::StrCat("{Interface=", a.Interface, ", Version=", a.Version, ", Flags=", a.Flags,
                      "}");
}

std::string FormatStruct(const HandleNames& n, const DXGI_DDI_ARG_PRESENT& a) {
  return absl::StrCat("{hSurfaceToPresent=", n.Get(a.hSurfaceToPresent.handle), "}");
}

std::string FormatStruct(const HandleNames&, const D3DDDICB_RENDER& a) {
  return absl::StrCat("{CommandLength=", a.CommandLength, ", NumAllocations=", a.NumAllocations,
                      ", hContext=", reinterpret_cast<uintptr_t>(a.hContext), "}");
}

std::string FormatStruct(const HandleNames& n, const D3DDDICB_ALLOCATE& a) {
  return absl::StrCat("{hResource=", n.Get(a.hResource), ", NumAllocations=", a.NumAllocations,
                      "}");
}

std::string FormatStruct(const HandleNames&, const D3DDDICB_DEALLOCATE& a) {
  std::string out = absl::StrCat("{NumAllocations=", a.NumAllocations);
  return out + "}";
}

std::string FormatStruct(const HandleNames&, const D3DDDICB_CREATECONTEXT& a) {
  return absl::StrCat("{NodeOrdinal=", a.NodeOrdinal, "}");
}

std::string FormatStruct(const HandleNames&, const D3DDDICB_PRESENT& a) {
  return absl::StrCat("{hContext=", reinterpret_cast<uintptr_t>(a.hContext), "}");
}

}  // namespace cltrace::runtime::internal
