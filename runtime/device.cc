// Device bring-up (ddi-spec §4.1), object creation (§4.2), Present, and device teardown
// (§4.9), plus the driver-side checks made there: R1, R2, R5, R32, R33, R70.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ddi/limits.h"
#include "runtime/internal/access.h"
#include "runtime/internal/callbacks.h"
#include "runtime/internal/common.h"
#include "runtime/internal/kernel_wiring.h"
#include "runtime/internal/send.h"
#include "runtime/runtime.h"

namespace cltrace::runtime {

using internal::Access;
using internal::ContextState;
using internal::DeviceState;
using internal::Table;

namespace {

// The kernel's R74-R78 reports as violation lines of the device ("R75 seq=... fn=kernel ...").
class KernelViolationSink : public gpu::ViolationSink {
 public:
  explicit KernelViolationSink(DeviceState* dev) : dev_(dev) {}
  void Report(const gpu::Violation& v) override {
    internal::Report(dev_, v.rule, "kernel", absl::StrCat(v.message, " (t=", v.time, "ns)"));
  }

 private:
  DeviceState* dev_;
};

// The D3D11.0 interface the runtime model requests, encoded as Microsoft encodes it: the
// interface (major << 16 | minor) and the build number in the high word of Version.
constexpr UINT kInterface = D3D11_0_DDI_INTERFACE_VERSION;
constexpr UINT kVersion = D3D11_0_DDI_BUILD_VERSION << 16;

// IC-table slots that must not change after CreateDevice: pfnCreate*, pfnOpen*, pfnDestroy*,
// pfnCalcPrivate*, pfnCheck* (R5) and the recycle/handle-size slots of R5a.
#define CLTRACE_FIXED(member) \
  { offsetof(D3D11DDI_DEVICEFUNCS, member), #member }
struct FixedSlot {
  size_t offset;
  const char* name;
};
constexpr FixedSlot kFixedSlots[] = {
    CLTRACE_FIXED(pfnCalcPrivateResourceSize),
    CLTRACE_FIXED(pfnCalcPrivateOpenedResourceSize),
    CLTRACE_FIXED(pfnCreateResource),
    CLTRACE_FIXED(pfnOpenResource),
    CLTRACE_FIXED(pfnDestroyResource),
    CLTRACE_FIXED(pfnCalcPrivateShaderResourceViewSize),
    CLTRACE_FIXED(pfnCreateShaderResourceView),
    CLTRACE_FIXED(pfnDestroyShaderResourceView),
    CLTRACE_FIXED(pfnCalcPrivateRenderTargetViewSize),
    CLTRACE_FIXED(pfnCreateRenderTargetView),
    CLTRACE_FIXED(pfnDestroyRenderTargetView),
    CLTRACE_FIXED(pfnCalcPrivateDepthStencilViewSize),
    CLTRACE_FIXED(pfnCreateDepthStencilView),
    CLTRACE_FIXED(pfnDestroyDepthStencilView),
    CLTRACE_FIXED(pfnCalcPrivateElementLayoutSize),
    CLTRACE_FIXED(pfnCreateElementLayout),
    CLTRACE_FIXED(pfnDestroyElementLayout),
    CLTRACE_FIXED(pfnCalcPrivateBlendStateSize),
    CLTRACE_FIXED(pfnCreateBlendState),
    CLTRACE_FIXED(pfnDestroyBlendState),
    CLTRACE_FIXED(pfnCalcPrivateDepthStencilStateSize),
    CLTRACE_FIXED(pfnCreateDepthStencilState),
    CLTRACE_FIXED(pfnDestroyDepthStencilState),
    CLTRACE_FIXED(pfnCalcPrivateRasterizerStateSize),
    CLTRACE_FIXED(pfnCreateRasterizerState),
    CLTRACE_FIXED(pfnDestroyRasterizerState),
    CLTRACE_FIXED(pfnCalcPrivateShaderSize),
    CLTRACE_FIXED(pfnCreateVertexShader),
    CLTRACE_FIXED(pfnCreateGeometryShader),
    CLTRACE_FIXED(pfnCreatePixelShader),
    CLTRACE_FIXED(pfnDestroyShader),
    CLTRACE_FIXED(pfnCalcPrivateSamplerSize),
    CLTRACE_FIXED(pfnCreateSampler),
    CLTRACE_FIXED(pfnDestroySampler),
    CLTRACE_FIXED(pfnCalcPrivateQuerySize),
    CLTRACE_FIXED(pfnCreateQuery),
    CLTRACE_FIXED(pfnDestroyQuery),
    CLTRACE_FIXED(pfnCreateHullShader),
    CLTRACE_FIXED(pfnCreateDomainShader),
    CLTRACE_FIXED(pfnCheckDeferredContextHandleSizes),
    CLTRACE_FIXED(pfnCalcDeferredContextHandleSize),
    CLTRACE_FIXED(pfnCalcPrivateDeferredContextSize),
    CLTRACE_FIXED(pfnCreateDeferredContext),
    CLTRACE_FIXED(pfnCalcPrivateCommandListSize),
    CLTRACE_FIXED(pfnCreateCommandList),
    CLTRACE_FIXED(pfnDestroyCommandList),
    CLTRACE_FIXED(pfnCalcPrivateTessellationShaderSize),
    CLTRACE_FIXED(pfnCreateComputeShader),
    CLTRACE_FIXED(pfnCalcPrivateUnorderedAccessViewSize),
    CLTRACE_FIXED(pfnCreateUnorderedAccessView),
    CLTRACE_FIXED(pfnDestroyUnorderedAccessView),
    CLTRACE_FIXED(pfnRecycleCreateCommandList),
    CLTRACE_FIXED(pfnRecycleCreateDeferredContext),
    CLTRACE_FIXED(pfnRecycleDestroyCommandList),
};

// R2: IC slots required when COMMANDLISTS_BUILD_2 is reported.
constexpr FixedSlot kRequiredIcSlots[] = {
    CLTRACE_FIXED(pfnCommandListExecute),
    CLTRACE_FIXED(pfnCheckDeferredContextHandleSizes),
    CLTRACE_FIXED(pfnCalcDeferredContextHandleSize),
    CLTRACE_FIXED(pfnCalcPrivateDeferredContextSize),
    CLTRACE_FIXED(pfnCreateDeferredContext),
    CLTRACE_FIXED(pfnCalcPrivateCommandListSize),
    CLTRACE_FIXED(pfnCreateCommandList),
    CLTRACE_FIXED(pfnDestroyCommandList),
    CLTRACE_FIXED(pfnRecycleCreateCommandList),
    CLTRACE_FIXED(pfnRecycleCreateDeferredContext),
    CLTRACE_FIXED(pfnRecycleDestroyCommandList),
};
#undef CLTRACE_FIXED

void* SlotValue(const D3D11DDI_DEVICEFUNCS* table, size_t offset) {
  void* v;
  std::memcpy(&v, reinterpret_cast<const char*>(table) + offset, sizeof(v));
  return v;
}

// CalcDeferredContextHandleSize after every IC object creation (R35) and its R33 check.
size_t QueryLocalSize(DeviceState* dev, D3D11DDI_HANDLETYPE type, void* ic) {
  SIZE_T size = CLTRACE_DDI(dev, CalcDeferredContextHandleSize, type, ic);
  bool listed = false;
  for (const D3D11DDI_HANDLESIZE& hs : dev->handle_sizes) {
    if (hs.HandleType == type && hs.DriverPrivateSize == size) listed = true;
  }
  if (!listed) {
    internal::ReportOnce(dev, absl::StrCat("R33-", type), rules::Rule::kR33,
                         "CalcDeferredContextHandleSize",
                         absl::StrCat("size ", size, " for handle type ", type,
                                      " is not in the CheckDeferredContextHandleSizes list"));
  }
  return size;
}

}  // namespace

namespace internal {

void CheckFixedSlots(DeviceState* dev, const char* when) {
  for (auto& [offset, value] : dev->fixed_slots) {
    void* now = SlotValue(&dev->ic_funcs, offset);
    if (now == value) continue;
    const char* name = "?";
    for (const FixedSlot& f : kFixedSlots) {
      if (f.offset == offset) name = f.name;
    }
    Report(dev, rules::Rule::kR5, when,
           absl::StrCat("the driver changed IC-table slot ", name, " after CreateDevice"));
    value = now;  // report each change once
  }
}

void TearDown(DeviceState* dev, Device* device) {
  if (dev->torn_down.exchange(true)) return;
  {
    ApiScope api(dev, "Release", "device");
    IcDomainScope ic(dev);
    dev->quarantine.Check(dev, false);
    // No Flush first: the driver must finish all deferred destruction itself (R70).
    CLTRACE_DDI(dev, DestroyDevice);
    CheckFixedSlots(dev, "DestroyDevice");
  }
  {
    std::lock_guard<std::mutex> lock(dev->alloc_mu);
    uint32_t live = 0;
    std::string example;
    for (const auto& [alloc, info] : dev->allocations) {
      if (info.deallocated) continue;
      if (++live == 1) example = absl::StrCat(alloc, " of ", info.owner);
    }
    if (live > 0) {
      Report(dev, rules::Rule::kR70, "DestroyDevice",
             absl::StrCat(live,
                          " allocation(s) still allocated after DestroyDevice returned "
                          "(deferred destruction unfinished), e.g. ",
                          example));
    }
  }
  // The kernel waits for the device's work and frees what the driver left (after the R70
  // check, which looks at what the driver itself deallocated).
  if (!dev->kernel_device_destroyed) {
    dev->kernel_device_destroyed = true;
    (void)dev->stack->kernel().DestroyDevice(dev->kdev);
  }
  Invoke(&dev->sink, dev, nullptr, Table::kAdapter, false, ddi::CallId::kCloseAdapter,
         ddi::NameOf(ddi::CallId::kCloseAdapter), dev->adapter_funcs.pfnCloseAdapter, dev->adapter);
  dev->quarantine.Check(dev, true);
  Access::DeleteContext(dev->immediate);
  dev->immediate = nullptr;
  dev->ic = nullptr;
  Access::DeleteDevice(device);
}

void ChildGone(DeviceState* dev) {
  if (dev->children.fetch_sub(1, std::memory_order_acq_rel) == 1 && dev->released.load()) {
    TearDown(dev, dev->self);
  }
}

}  // namespace internal

Device::Device() : state_(std::make_unique<DeviceState>()) {}
Device::~Device() = default;

HRESULT Device::Create(const RuntimeOptions& options, Device** device) {
  *device = nullptr;
  auto* d = new Device();
  HRESULT hr = d->Init(options);
  if (hr != S_OK) {
    // Nothing of the driver's device exists: no teardown DDIs.
    if (d->state_->immediate != nullptr) Access::DeleteContext(d->state_->immediate);
    delete d;
    return hr;
  }
  *device = d;
  return S_OK;
}

namespace {

// OpenAdapter10_2, then GetCaps(THREADING) before device creation (§4.1.1, R1).
HRESULT OpenAdapter(DeviceState* s) {
  D3D10DDIARG_OPENADAPTER open{};
  open.hRTAdapter.handle = s;
  open.Interface = kInterface;
  open.Version = kVersion;
  open.pAdapterCallbacks = internal::AdapterCallbacks();
  open.pAdapterFuncs_2 = &s->adapter_funcs;
  HRESULT hr = internal::Invoke(&s->sink, s, nullptr, Table::kAdapter, false, ddi::CallId::kInvalid,
                                "OpenAdapter10_2", s->driver.open_adapter, &open);
  if (hr != S_OK) return hr;
  s->adapter = open.hAdapter;
  if (s->sink.observer != nullptr) s->sink.names.Set(s->adapter.pDrvPrivate, "ADAPTER");

  D3D11DDI_THREADING_CAPS caps{};
  D3D10_2DDIARG_GETCAPS get_caps{};
  get_caps.Type = D3D11DDICAPS_THREADING;
  get_caps.pInfo = nullptr;  // no input for D3D11DDICAPS_THREADING
  get_caps.pData = &caps;
  get_caps.DataSize = sizeof(caps);
  hr = internal::Invoke(&s->sink, s, nullptr, Table::kAdapter, false, ddi::CallId::kGetCaps,
                        ddi::NameOf(ddi::CallId::kGetCaps), s->adapter_funcs.pfnGetCaps, s->adapter,
                        &get_caps);
  if (hr != S_OK) return hr;
  s->caps = caps.Caps;
  if ((s->caps & (D3D11DDICAPS_COMMANDLISTS_BUILD_2 | D3D11DDICAPS_COMMANDLISTS)) != 0 &&
      (s->caps & D3D11DDICAPS_FREETHREADED) == 0) {
    internal::Report(s, rules::Rule::kR1, "GetCaps", "command lists reported without FREETHREADED");
  }
  return S_OK;
}

// Two-pass CheckDeferredContextHandleSizes (§4.1.4, R32).
void QueryHandleSizes(DeviceState* s) {
  UINT count = 0;
  CLTRACE_DDI(s, CheckDeferredContextHandleSizes, &count,
              static_cast<D3D11DDI_HANDLESIZE*>(nullptr));
  std::vector<D3D11DDI_HANDLESIZE> sizes(count + 1);
  const D3D11DDI_HANDLESIZE sentinel{0xfeedu, 0xfeedfaceu};
  sizes[count] = sentinel;
  UINT filled = count;
  CLTRACE_DDI(s, CheckDeferredContextHandleSizes, &filled, sizes.data());
  if (filled > count || sizes[count].HandleType != sentinel.HandleType ||
      sizes[count].DriverPrivateSize != sentinel.DriverPrivateSize) {
    internal::Report(s, rules::Rule::kR32, "CheckDeferredContextHandleSizes",
                     absl::StrCat("second pass wrote beyond the ", count,
                                  " entries announced by the first pass"));
  }
  sizes.resize(std::min(filled, count));
  s->handle_sizes = std::move(sizes);
}

}  // namespace

HRESULT Device::Init(const RuntimeOptions& options) {
  DeviceState* s = state_.get();
  s->self = this;
  s->options = options;
  s->sink.calls = &internal::ProcessCalls();
  s->sink.observer = options.observer;
  if (absl::Status st = s->driver.Load(options.driver_path); !st.ok()) {
    std::fprintf(stderr, "cltrace runtime: %s\n", std::string(st.message()).c_str());
    return static_cast<HRESULT>(E_FAIL);
  }
  // The kernel (runtime/kernel.h): built after the driver loaded so a shim's
  // CltraceWrapKernelTable can interpose on its tables.
  s->kernel_sink = std::make_unique<KernelViolationSink>(s);
  s->stack = std::make_unique<gpu::KernelStack>(
      options.kernel, s->kernel_sink.get(), internal::KernelWrappersFor(options, s->driver.handle));
  s->kcb = s->stack->device_callbacks();
  if (absl::StatusOr<HANDLE> kdev = s->stack->kernel().CreateDevice(); kdev.ok()) {
    s->kdev = *kdev;
  } else {
    std::fprintf(stderr, "cltrace runtime: kernel device: %s\n",
                 std::string(kdev.status().message()).c_str());
    return static_cast<HRESULT>(E_FAIL);
  }
  internal::ApiScope api(s, "CreateDevice", "");
  s->immediate = Access::NewContext(this, /*deferred=*/false);
  ContextState* ic = Access::State(s->immediate);
  s->ic = ic;
  ic->name = "IC";
  internal::InitCoreLayer(&ic->layer, ic, "core:IC");
  internal::FillKernelCallbacks(&s->kt_callbacks);
  if (s->sink.observer != nullptr) {
    s->sink.names.Set(&ic->layer, "core:IC");
    s->sink.names.Set(s, "rtdevice");
  }

  // Adapter: OpenAdapter10_2, GetCaps(THREADING) before device creation (§4.1.1).
  HRESULT hr = OpenAdapter(s);
  if (hr != S_OK) return hr;

  // Device creation (§4.1.2-3).
  D3D10DDIARG_CALCPRIVATEDEVICESIZE calc{kInterface, kVersion, options.create_device_flags};
  SIZE_T size = internal::Invoke(&s->sink, s, nullptr, Table::kAdapter, false,
                                 ddi::CallId::kCalcPrivateDeviceSize,
                                 ddi::NameOf(ddi::CallId::kCalcPrivateDeviceSize),
                                 s->adapter_funcs.pfnCalcPrivateDeviceSize, s->adapter, &calc);
  s->device_memory.reset(static_cast<uint8_t*>(internal::AllocHandle(size)));
  s->hdevice.pDrvPrivate = s->device_memory.get();
  if (s->sink.observer != nullptr) s->sink.names.Set(s->hdevice.pDrvPrivate, "IC");
  ic->handle = s->hdevice;
  ic->funcs = &s->ic_funcs;

  D3D10DDIARG_CREATEDEVICE create{};
  create.hRTDevice.handle = s;
  create.Interface = kInterface;
  create.Version = kVersion;
  create.pKTCallbacks = &s->kt_callbacks;
  create.p11DeviceFuncs = &s->ic_funcs;
  create.hDrvDevice = s->hdevice;
  create.DXGIBaseDDI.pDXGIDDIBaseFunctions = &s->dxgi_funcs;
  create.hRTCoreLayer.handle = &ic->layer;
  create.p11UMCallbacks = &ic->layer.table;
  create.Flags = options.create_device_flags;
  {
    internal::ErrorCapture capture;
    hr = internal::Invoke(&s->sink, s, ic, Table::kAdapter, false, ddi::CallId::kCreateDevice,
                          ddi::NameOf(ddi::CallId::kCreateDevice), s->adapter_funcs.pfnCreateDevice,
                          s->adapter, &create);
    if (hr == S_OK && capture.failed()) hr = capture.error();
  }
  if (hr != S_OK) return hr;

  if ((s->caps & D3D11DDICAPS_COMMANDLISTS_BUILD_2) != 0) {
    for (const FixedSlot& f : kRequiredIcSlots) {
      if (SlotValue(&s->ic_funcs, f.offset) == nullptr) {
        internal::Report(
            s, rules::Rule::kR2, "CreateDevice",
            absl::StrCat("IC table slot ", f.name, " is NULL with COMMANDLISTS_BUILD_2"));
      }
    }
  }
  for (const FixedSlot& f : kFixedSlots) {
    s->fixed_slots.emplace_back(f.offset, SlotValue(&s->ic_funcs, f.offset));
  }

  if ((s->caps & D3D11DDICAPS_COMMANDLISTS_BUILD_2) != 0) QueryHandleSizes(s);
  return S_OK;
}

void Device::FinalRelease() {
  DeviceState* dev = state_.get();
  internal::ChildAdded(dev);  // held until the end of this function
  internal::ApiScope api(dev, "Release", "device");
  {
    internal::IcDomainScope ic(dev);
    // Like D3D11, the final release drops the immediate context's references first.
    internal::SendAllBound(dev->ic, internal::SendMode::kNull);
  }
  dev->released.store(true);
  internal::ChildGone(dev);  // may tear the device down (inside this API call)
}

DeviceContext* Device::GetImmediateContext() { return state_->immediate; }
bool Device::IsRemoved() const { return state_->removed.load(); }
std::vector<std::string> Device::Violations() const { return state_->violations.Lines(); }
std::vector<rules::Finding> Device::Findings() const { return state_->violations.Findings(); }
std::vector<std::string> Device::DriverViolations() const {
  return state_->driver.DriverViolations();
}
gpu::KernelStack* Device::GpuKernel() const { return state_->stack.get(); }

uint64_t Device::CallCount() const { return internal::ProcessCalls().load(); }
const RuntimeOptions& Device::options() const { return state_->options; }

// ---- object creation (§4.2) ----

namespace {

// The common tail of every IC object creation: handle memory from the CalcPrivate size, the
// create DDI, then CalcDeferredContextHandleSize (R35). A create that reports an error through
// pfnSetErrorCb leaves no handle (no destroy follows).
template <typename T, typename F>
HRESULT FinishCreate(DeviceState* dev, T* object, absl::string_view prefix, SIZE_T size, F&& create,
                     T** out) {
  void* mem = internal::AllocHandle(size);
  std::string name = internal::NewName(dev, prefix);
  if (dev->sink.observer != nullptr) {
    dev->sink.names.Set(mem, name);
    dev->sink.names.Set(object, name);
  }
  Access::SetName(object, name);
  internal::ErrorCapture capture;
  create(mem);
  if (capture.failed()) {
    dev->sink.names.Erase(mem);
    dev->sink.names.Erase(object);
    delete[] static_cast<uint8_t*>(mem);
    if (object->dependency() != nullptr) object->dependency()->InternalRelease();
    delete object;
    *out = nullptr;
    return capture.error();
  }
  Access::SetIcHandle(object, mem, size);
  Access::SetLocalSize(object, QueryLocalSize(dev, object->handle_type(), mem));
  internal::ChildAdded(dev);
  *out = object;
  return S_OK;
}

}  // namespace

HRESULT Device::CreateResource(const ResourceDesc& desc,
                               const D3D10_DDIARG_SUBRESOURCE_UP* initial_data, Resource** out) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "CreateResource", "");
  D3D11DDIARG_CREATERESOURCE a{};
  // What D3D11 refuses before the driver sees it: more mip levels than the largest dimension
  // has (or than D3D11 allows), more array slices than D3D11 allows.
  const uint32_t largest = std::max({desc.width, desc.height, desc.depth, 1u});
  const uint32_t full_chain = 32 - static_cast<uint32_t>(__builtin_clz(largest));
  if (desc.mip_levels > std::min(ddi::kMaxMipLevels, full_chain) ||
      desc.array_size > ddi::kMaxArraySize) {
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  // One D3D10DDI_MIPINFO per mip level (the sizes live there, not in the structure).
  std::vector<D3D10DDI_MIPINFO> mips(std::max<uint32_t>(desc.mip_levels, 1));
  for (uint32_t m = 0; m < mips.size(); ++m) {
    auto level = [m](uint32_t size) { return std::max<uint32_t>(size >> m, 1); };
    const bool buffer = desc.dimension == D3D10DDIRESOURCE_BUFFER;
    mips[m].TexelWidth = mips[m].PhysicalWidth = level(desc.width);
    mips[m].TexelHeight = mips[m].PhysicalHeight = buffer ? 1 : level(desc.height);
    mips[m].TexelDepth = mips[m].PhysicalDepth = buffer ? 1 : level(desc.depth);
  }
  DXGI_DDI_PRIMARY_DESC primary_desc{};
  const bool primary = desc.primary;
  if (primary) {
    primary_desc.ModeDesc.Width = desc.width;
    primary_desc.ModeDesc.Height = desc.height;
    primary_desc.ModeDesc.Format = desc.format;
    primary_desc.ModeDesc.RefreshRate = DXGI_DDI_RATIONAL{60, 1};
    primary_desc.ModeDesc.ScanlineOrdering = DXGI_DDI_MODE_SCANLINE_ORDER_PROGRESSIVE;
    primary_desc.ModeDesc.Rotation = DXGI_DDI_MODE_ROTATION_IDENTITY;
    a.pPrimaryDesc = &primary_desc;
  }
  a.pMipInfoList = mips.data();
  // The runtime hands the application's D3D11_SUBRESOURCE_DATA array over as it is: the same
  // layout as D3D10_DDIARG_SUBRESOURCE_UP (pSysMem, SysMemPitch, SysMemSlicePitch).
  a.pInitialDataUP = initial_data;
  a.ResourceDimension = desc.dimension;
  a.Usage = desc.usage;
  a.BindFlags = desc.bind_flags | (primary ? D3D10_DDI_BIND_PRESENT : 0);
  a.MapFlags = desc.map_flags;
  a.MiscFlags = desc.misc_flags;
  a.Format = desc.format;
  a.SampleDesc = DXGI_SAMPLE_DESC{1, 0};
  a.MipLevels = static_cast<UINT>(mips.size());
  a.ArraySize = desc.array_size;
  a.ByteStride = desc.byte_stride;
  auto* r = new Resource(this, desc);
  SIZE_T size = CLTRACE_DDI(dev, CalcPrivateResourceSize, &a);
  return FinishCreate(
      dev, r, "RES", size,
      [&](void* mem) {
        if (primary) {
          internal::IcDomainScope ic(dev);  // non-shared primaries: IC domain (R11)
          CLTRACE_PRIMARY_DDI(dev, CreateResource, &a, D3D10DDI_HRESOURCE{mem},
                              D3D10DDI_HRTRESOURCE{r});
        } else {
          CLTRACE_DDI(dev, CreateResource, &a, D3D10DDI_HRESOURCE{mem}, D3D10DDI_HRTRESOURCE{r});
        }
      },
      out);
}

HRESULT Device::CreateView(ViewKind kind, Resource* resource, const ViewDesc& desc, View** out) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "CreateView", "");
  auto* v = new View(this, kind, resource);
  D3D10DDI_HRESOURCE res{resource->ic_handle()};
  switch (kind) {
    case ViewKind::kShaderResource: {
      D3D11DDIARG_CREATESHADERRESOURCEVIEW a{};
      a.hDrvResource = res;
      a.Format = desc.format;
      a.ResourceDimension = desc.dimension;
      a.Buffer.FirstElement = desc.first_element;
      a.Buffer.NumElements = desc.num_elements;
      SIZE_T size = CLTRACE_DDI(dev, CalcPrivateShaderResourceViewSize, &a);
      return FinishCreate(
          dev, v, "SRV", size,
          [&](void* mem) {
            CLTRACE_DDI(dev, CreateShaderResourceView, &a, D3D10DDI_HSHADERRESOURCEVIEW{mem},
                        D3D10DDI_HRTSHADERRESOURCEVIEW{v});
          },
          out);
    }
    case ViewKind::kRenderTarget: {
      D3D10DDIARG_CREATERENDERTARGETVIEW a{};
      a.hDrvResource = res;
      a.Format = desc.format;
      a.ResourceDimension = desc.dimension;
      a.Tex2D.MipSlice = desc.mip_slice;
      SIZE_T size = CLTRACE_DDI(dev, CalcPrivateRenderTargetViewSize, &a);
      return FinishCreate(
          dev, v, "RTV", size,
          [&](void* mem) {
            CLTRACE_DDI(dev, CreateRenderTargetView, &a, D3D10DDI_HRENDERTARGETVIEW{mem},
                        D3D10DDI_HRTRENDERTARGETVIEW{v});
          },
          out);
    }
    case ViewKind::kDepthStencil: {
      D3D11DDIARG_CREATEDEPTHSTENCILVIEW a{};
      a.hDrvResource = res;
      a.Format = desc.format;
      a.ResourceDimension = desc.dimension;
      a.Tex2D.MipSlice = desc.mip_slice;
      SIZE_T size = CLTRACE_DDI(dev, CalcPrivateDepthStencilViewSize, &a);
      return FinishCreate(
          dev, v, "DSV", size,
          [&](void* mem) {
            CLTRACE_DDI(dev, CreateDepthStencilView, &a, D3D10DDI_HDEPTHSTENCILVIEW{mem},
                        D3D10DDI_HRTDEPTHSTENCILVIEW{v});
          },
          out);
    }
    case ViewKind::kUnorderedAccess: {
      D3D11DDIARG_CREATEUNORDEREDACCESSVIEW a{};
      a.hDrvResource = res;
      a.Format = desc.format;
      a.ResourceDimension = desc.dimension;
      a.Buffer.FirstElement = desc.first_element;
      a.Buffer.NumElements = desc.num_elements;
      SIZE_T size = CLTRACE_DDI(dev, CalcPrivateUnorderedAccessViewSize, &a);
      return FinishCreate(
          dev, v, "UAV", size,
          [&](void* mem) {
            CLTRACE_DDI(dev, CreateUnorderedAccessView, &a, D3D11DDI_HUNORDEREDACCESSVIEW{mem},
                        D3D11DDI_HRTUNORDEREDACCESSVIEW{v});
          },
          out);
    }
  }
  return static_cast<HRESULT>(E_INVALIDARG);
}

HRESULT Device::CreateShader(Stage stage, const uint32_t* code, Shader** out) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "CreateShader", "");
  auto* sh = new Shader(this, stage);
  const D3D10DDIARG_STAGE_IO_SIGNATURES* no_sig = nullptr;
  const D3D11DDIARG_TESSELLATION_IO_SIGNATURES* no_tess = nullptr;
  bool tess = stage == Stage::kHS || stage == Stage::kDS;
  SIZE_T size = tess ? CLTRACE_DDI(dev, CalcPrivateTessellationShaderSize, code, no_tess)
                     : CLTRACE_DDI(dev, CalcPrivateShaderSize, code, no_sig);
  static constexpr const char* kPrefix[kStageCount] = {"VS", "PS", "GS", "HS", "DS", "CS"};
  return FinishCreate(
      dev, sh, kPrefix[static_cast<int>(stage)], size,
      [&](void* mem) {
        D3D10DDI_HSHADER h{mem};
        D3D10DDI_HRTSHADER rt{sh};
        switch (stage) {
          case Stage::kVS:
            CLTRACE_DDI(dev, CreateVertexShader, code, h, rt, no_sig);
            break;
          case Stage::kPS:
            CLTRACE_DDI(dev, CreatePixelShader, code, h, rt, no_sig);
            break;
          case Stage::kGS:
            CLTRACE_DDI(dev, CreateGeometryShader, code, h, rt, no_sig);
            break;
          case Stage::kHS:
            CLTRACE_DDI(dev, CreateHullShader, code, h, rt, no_tess);
            break;
          case Stage::kDS:
            CLTRACE_DDI(dev, CreateDomainShader, code, h, rt, no_tess);
            break;
          case Stage::kCS:
            CLTRACE_DDI(dev, CreateComputeShader, code, h, rt);
            break;
        }
      },
      out);
}

HRESULT Device::CreateInputLayout(const D3D10DDIARG_INPUT_ELEMENT_DESC* elements, uint32_t count,
                                  InputLayout** out) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "CreateInputLayout", "");
  auto* il = new InputLayout(this);
  D3D10DDIARG_CREATEELEMENTLAYOUT a{const_cast<D3D10DDIARG_INPUT_ELEMENT_DESC*>(elements), count};
  SIZE_T size = CLTRACE_DDI(dev, CalcPrivateElementLayoutSize, &a);
  return FinishCreate(
      dev, il, "IL", size,
      [&](void* mem) {
        CLTRACE_DDI(dev, CreateElementLayout, &a, D3D10DDI_HELEMENTLAYOUT{mem},
                    D3D10DDI_HRTELEMENTLAYOUT{il});
      },
      out);
}

// Device::CreateBlendState, CreateDepthStencilState, CreateRasterizerState and
// CreateSamplerState are alike (§4.2): the driver's private size for the description, then
// its create call into handle memory of that size. Only names differ, and CLTRACE_DDI
// takes DDI names as tokens, hence a macro that defines Device::Create<Object>.
#define CLTRACE_DEFINE_CREATE_STATE(Object, Desc, prefix, CalcDdi, CreateDdi, Handle, RtHandle) \
  HRESULT Device::Create##Object(const Desc& desc, Object** out) {                              \
    DeviceState* dev = state_.get();                                                            \
    internal::ApiScope api(dev, "Create" #Object, "");                                          \
    auto* o = new Object(this);                                                                 \
    SIZE_T size = CLTRACE_DDI(dev, CalcDdi, &desc);                                             \
    return FinishCreate(                                                                        \
        dev, o, prefix, size,                                                                   \
        [&](void* mem) { CLTRACE_DDI(dev, CreateDdi, &desc, Handle{mem}, RtHandle{o}); }, out); \
  }

CLTRACE_DEFINE_CREATE_STATE(BlendState, D3D10_1_DDI_BLEND_DESC, "BS", CalcPrivateBlendStateSize,
                            CreateBlendState, D3D10DDI_HBLENDSTATE, D3D10DDI_HRTBLENDSTATE)
CLTRACE_DEFINE_CREATE_STATE(DepthStencilState, D3D10_DDI_DEPTH_STENCIL_DESC, "DSS",
                            CalcPrivateDepthStencilStateSize, CreateDepthStencilState,
                            D3D10DDI_HDEPTHSTENCILSTATE, D3D10DDI_HRTDEPTHSTENCILSTATE)
CLTRACE_DEFINE_CREATE_STATE(RasterizerState, D3D10_DDI_RASTERIZER_DESC, "RS",
                            CalcPrivateRasterizerStateSize, CreateRasterizerState,
                            D3D10DDI_HRASTERIZERSTATE, D3D10DDI_HRTRASTERIZERSTATE)
CLTRACE_DEFINE_CREATE_STATE(SamplerState, D3D10_DDI_SAMPLER_DESC, "SS", CalcPrivateSamplerSize,
                            CreateSampler, D3D10DDI_HSAMPLER, D3D10DDI_HRTSAMPLER)

#undef CLTRACE_DEFINE_CREATE_STATE

HRESULT Device::CreateQuery(D3D10DDI_QUERY type, Query** out) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "CreateQuery", "");
  auto* q = new Query(this, type);
  D3D10DDIARG_CREATEQUERY a{type, 0};
  SIZE_T size = CLTRACE_DDI(dev, CalcPrivateQuerySize, &a);
  return FinishCreate(
      dev, q, "Q", size,
      [&](void* mem) {
        CLTRACE_DDI(dev, CreateQuery, &a, D3D10DDI_HQUERY{mem}, D3D10DDI_HRTQUERY{q});
      },
      out);
}

HRESULT Device::CreateCounter(D3D10DDI_QUERY counter, Query** out) {
  if (out != nullptr) *out = nullptr;
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "CreateCounter", "");  // CreateQuery's scope nests in it
  D3D10DDI_COUNTER_INFO info{};
  CLTRACE_DDI(dev, CheckCounterInfo, &info);
  if (counter < D3D10DDI_COUNTER_DEVICE_DEPENDENT_0 || counter > info.LastDeviceDependentCounter) {
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  return CreateQuery(counter, out);
}

HRESULT Device::Present(Resource* surface) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "Present", "");
  HRESULT hr;
  {
    internal::IcDomainScope ic(dev);  // DXGI base functions share the IC domain
    DXGI_DDI_ARG_PRESENT a{};
    a.hDevice.handle = dev->hdevice.pDrvPrivate;
    a.hSurfaceToPresent.handle = surface != nullptr ? surface->ic_handle() : nullptr;
    a.Flags = DXGI_DDI_PRESENT_FLAGS_BLT;
    a.FlipInterval = DXGI_DDI_FLIP_INTERVAL_IMMEDIATE;
    hr = internal::Invoke(&dev->sink, dev, dev->ic, Table::kDxgi, true, ddi::CallId::kPresentDXGI,
                          ddi::NameOf(ddi::CallId::kPresentDXGI), dev->dxgi_funcs.pfnPresent, &a);
    internal::CheckFixedSlots(dev, "PresentDXGI");
  }
  dev->quarantine.Check(dev, false);
  if (dev->removed.load()) return static_cast<HRESULT>(DXGI_ERROR_DEVICE_REMOVED);
  return hr;
}

HRESULT Device::CreateGeometryShaderWithStreamOutput(
    const uint32_t* code, const D3D11DDIARG_STREAM_OUTPUT_DECLARATION_ENTRY* entries,
    uint32_t num_entries, const uint32_t* strides, uint32_t num_strides, uint32_t rasterized_stream,
    Shader** out) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "CreateGeometryShaderWithStreamOutput", "");
  auto* sh = new Shader(this, Stage::kGS);
  D3D11DDIARG_CREATEGEOMETRYSHADERWITHSTREAMOUTPUT a{};
  a.pShaderCode = code;
  a.pOutputStreamDecl = entries;
  a.NumEntries = num_entries;
  a.BufferStridesInBytes = strides;
  a.NumStrides = num_strides;
  a.RasterizedStream = rasterized_stream;
  const D3D10DDIARG_STAGE_IO_SIGNATURES* no_sig = nullptr;
  SIZE_T size = CLTRACE_DDI(dev, CalcPrivateGeometryShaderWithStreamOutput, &a, no_sig);
  return FinishCreate(
      dev, sh, "GS", size,
      [&](void* mem) {
        CLTRACE_DDI(dev, CreateGeometryShaderWithStreamOutput, &a, D3D10DDI_HSHADER{mem},
                    D3D10DDI_HRTSHADER{sh}, no_sig);
      },
      out);
}

// ---- the other DXGI base functions ----

namespace {

// One DXGI base function on the IC's domain, with the table check Present makes (R5).
template <typename Arg, typename Pfn>
HRESULT DxgiCall(DeviceState* dev, ddi::CallId id, Pfn fn, Arg* a) {
  HRESULT hr;
  {
    internal::IcDomainScope ic(dev);
    a->hDevice.handle = dev->hdevice.pDrvPrivate;
    hr = internal::Invoke(&dev->sink, dev, dev->ic, Table::kDxgi, true, id, ddi::NameOf(id), fn, a);
    internal::CheckFixedSlots(dev, ddi::NameOf(id));
  }
  dev->quarantine.Check(dev, false);
  if (dev->removed.load()) return static_cast<HRESULT>(DXGI_ERROR_DEVICE_REMOVED);
  return hr;
}

void* IcHandleOf(Resource* r) { return r != nullptr ? r->ic_handle() : nullptr; }

}  // namespace

HRESULT Device::GetGammaControlCapabilities(DXGI_GAMMA_CONTROL_CAPABILITIES* caps) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "GetGammaControlCapabilities", "");
  if (caps == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  DXGI_DDI_ARG_GET_GAMMA_CONTROL_CAPS a{};
  a.pGammaCapabilities = caps;
  return DxgiCall(dev, ddi::CallId::kGetGammaCapsDXGI, dev->dxgi_funcs.pfnGetGammaCaps, &a);
}

HRESULT Device::SetDisplayMode(Resource* primary) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "SetDisplayMode", "");
  DXGI_DDI_ARG_SETDISPLAYMODE a{};
  a.hResource.handle = IcHandleOf(primary);
  a.SubResourceIndex = 0;
  return DxgiCall(dev, ddi::CallId::kSetDisplayModeDXGI, dev->dxgi_funcs.pfnSetDisplayMode, &a);
}

HRESULT Device::SetEvictionPriority(Resource* resource, uint32_t priority) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "SetEvictionPriority", "");
  DXGI_DDI_ARG_SETRESOURCEPRIORITY a{};
  a.hResource.handle = IcHandleOf(resource);
  a.Priority = priority;
  return DxgiCall(dev, ddi::CallId::kSetResourcePriorityDXGI,
                  dev->dxgi_funcs.pfnSetResourcePriority, &a);
}

HRESULT Device::QueryResourceResidency(Resource* const* resources, uint32_t count,
                                       DXGI_DDI_RESIDENCY* status) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "QueryResourceResidency", "");
  if (count > 0 && (resources == nullptr || status == nullptr)) {
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  std::vector<DXGI_DDI_HRESOURCE> handles(count);
  for (uint32_t i = 0; i < count; ++i) handles[i].handle = IcHandleOf(resources[i]);
  DXGI_DDI_ARG_QUERYRESOURCERESIDENCY a{};
  a.pResources = handles.data();
  a.pStatus = status;
  a.Resources = count;
  return DxgiCall(dev, ddi::CallId::kQueryResourceResidencyDXGI,
                  dev->dxgi_funcs.pfnQueryResourceResidency, &a);
}

HRESULT Device::RotateResourceIdentities(Resource* const* resources, uint32_t count) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "RotateResourceIdentities", "");
  if (count > 0 && resources == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  std::vector<DXGI_DDI_HRESOURCE> handles(count);
  for (uint32_t i = 0; i < count; ++i) handles[i].handle = IcHandleOf(resources[i]);
  DXGI_DDI_ARG_ROTATE_RESOURCE_IDENTITIES a{};
  a.pResources = handles.data();
  a.Resources = count;
  return DxgiCall(dev, ddi::CallId::kRotateResourceIdentitiesDXGI,
                  dev->dxgi_funcs.pfnRotateResourceIdentities, &a);
}

HRESULT Device::Blt(Resource* dst, Resource* src) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "Blt", "");
  DXGI_DDI_ARG_BLT a{};
  a.hDstResource.handle = IcHandleOf(dst);
  a.hSrcResource.handle = IcHandleOf(src);
  a.Rotate = DXGI_DDI_MODE_ROTATION_IDENTITY;
  return DxgiCall(dev, ddi::CallId::kBltDXGI, dev->dxgi_funcs.pfnBlt, &a);
}

// ---- capability checks ----

HRESULT Device::CheckFormatSupport(DXGI_FORMAT format, uint32_t* support) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "CheckFormatSupport", "");
  if (support == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  *support = 0;
  UINT caps = 0;
  CLTRACE_DDI(dev, CheckFormatSupport, format, &caps);
  *support = caps;
  return S_OK;
}

HRESULT Device::CheckMultisampleQualityLevels(DXGI_FORMAT format, uint32_t samples,
                                              uint32_t* levels) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "CheckMultisampleQualityLevels", "");
  if (levels == nullptr) return static_cast<HRESULT>(E_INVALIDARG);
  UINT n = 0;
  CLTRACE_DDI(dev, CheckMultisampleQualityLevels, format, samples, &n);
  *levels = n;
  return S_OK;
}

void Device::CheckCounterInfo(D3D10DDI_COUNTER_INFO* info) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "CheckCounterInfo", "");
  if (info == nullptr) return;
  *info = D3D10DDI_COUNTER_INFO{};
  CLTRACE_DDI(dev, CheckCounterInfo, info);
}

HRESULT Device::CheckCounter(D3D10DDI_QUERY counter, D3D10DDI_COUNTER_TYPE* type, uint32_t* active,
                             std::string* name, std::string* units, std::string* description) {
  DeviceState* dev = state_.get();
  internal::ApiScope api(dev, "CheckCounter", "");
  D3D10DDI_COUNTER_INFO info{};
  CLTRACE_DDI(dev, CheckCounterInfo, &info);
  if (counter < D3D10DDI_COUNTER_DEVICE_DEPENDENT_0 || counter > info.LastDeviceDependentCounter) {
    return static_cast<HRESULT>(E_INVALIDARG);
  }
  // Two passes, as the runtime makes them: the lengths, then the strings.
  D3D10DDI_COUNTER_TYPE t{};
  UINT n_active = 0, name_len = 0, units_len = 0, desc_len = 0;
  CHAR* no_text = nullptr;
  CLTRACE_DDI(dev, CheckCounter, counter, &t, &n_active, no_text, &name_len, no_text, &units_len,
              no_text, &desc_len);
  std::string n(name_len, '\0'), u(units_len, '\0'), d(desc_len, '\0');
  CLTRACE_DDI(dev, CheckCounter, counter, &t, &n_active, name_len ? n.data() : nullptr, &name_len,
              units_len ? u.data() : nullptr, &units_len, desc_len ? d.data() : nullptr, &desc_len);
  auto text = [](std::string s) { return std::string(s.c_str()); };
  if (type != nullptr) *type = t;
  if (active != nullptr) *active = n_active;
  if (name != nullptr) *name = text(n);
  if (units != nullptr) *units = text(u);
  if (description != nullptr) *description = text(d);
  return S_OK;
}

}  // namespace cltrace::runtime
