#include "ddi/catalog.h"

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ddi/ddi_abi.h"
#include "ddi/fvf.h"
#include "gtest/gtest.h"

// ddi/ddi_abi_c_test.c: the same header compiled as C11.
extern "C" size_t CltraceAbiCLayout(int which);

namespace cltrace::ddi {
namespace {

TEST(CatalogTest, IdsAndNamesAgree) {
  ASSERT_GT(Calls().size(), 1u);
  std::set<std::string> names;
  for (size_t i = 1; i < Calls().size(); ++i) {
    const CallInfo& c = Calls()[i];
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate " << c.name;
    EXPECT_EQ(FindCall(c.name), &c);
    EXPECT_EQ(static_cast<size_t>(IdOf(c)), i);
  }
  EXPECT_EQ(FindCall("NoSuchDdi"), nullptr);
  EXPECT_EQ(GetCall(0u), nullptr);
  EXPECT_EQ(GetCall(static_cast<uint32_t>(Calls().size())), nullptr);
}

TEST(CatalogTest, CreateCommandListFieldsUseDocumentedNames) {
  const CallInfo* c = FindCall("CreateCommandList");
  ASSERT_NE(c, nullptr);
  std::vector<std::string> names;
  for (const FieldInfo& f : Fields(*c)) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"hDevice", "pCreateCommandList", "hDeferredContext",
                                             "hCommandList", "hRTCommandList"}));
  EXPECT_EQ(Fields(*c)[1].kind, FieldKind::kPresent);
  EXPECT_TRUE(c->in_ic_table);
  EXPECT_TRUE(c->in_dc_table);
  EXPECT_EQ(c->domain, Domain::kFT);
}

TEST(CatalogTest, InoutAndOutputArray) {
  const CallInfo* c = FindCall("CheckDeferredContextHandleSizes");
  ASSERT_NE(c, nullptr);
  auto f = Fields(*c);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_STREQ(f[1].name, "pHSizes");
  EXPECT_EQ(f[1].dir, FieldDir::kIn);
  EXPECT_STREQ(f[2].name, "pHSizesOut");
  EXPECT_EQ(f[2].dir, FieldDir::kOut);
  EXPECT_EQ(f[3].kind, FieldKind::kArray);
  auto elems = ElementFields(f[3]);
  ASSERT_EQ(elems.size(), 2u);
  EXPECT_STREQ(elems[0].name, "HandleType");
  EXPECT_EQ(elems[0].kind, FieldKind::kEnum);
  EXPECT_STREQ(elems[1].name, "DriverPrivateSize");
}

TEST(CatalogTest, EnumAndFlagNames) {
  const EnumInfo* ht = FindEnum("D3D11DDI_HANDLETYPE");
  ASSERT_NE(ht, nullptr);
  EXPECT_EQ(NameOfValue(*ht, 11), "D3D11DDI_HT_COMMANDLIST");
  EXPECT_EQ(ValueOfName(*ht, "D3D11DDI_HT_COMMANDLIST"), 11u);
  EXPECT_EQ(NameOfValue(*ht, 999), std::nullopt);
  const EnumInfo* caps = FindEnum("D3D11DDI_THREADING_CAPS_FLAGS");
  ASSERT_NE(caps, nullptr);
  EXPECT_EQ(NameOfValue(*caps, 0x5), "D3D11DDICAPS_FREETHREADED|D3D11DDICAPS_COMMANDLISTS_BUILD_2");
  EXPECT_EQ(ValueOfName(*caps, "D3D11DDICAPS_FREETHREADED|D3D11DDICAPS_COMMANDLISTS_BUILD_2"), 5u);
  EXPECT_EQ(NameOfValue(*caps, 0x8), std::nullopt);
  EXPECT_EQ(HresultToString(static_cast<int32_t>(0x8007000E)), "E_OUTOFMEMORY");
  EXPECT_EQ(HresultToString(static_cast<int32_t>(0x88760870)), "D3DDDIERR_DEVICEREMOVED");
  EXPECT_EQ(HresultToString(static_cast<int32_t>(0x80001234)), "0x80001234");
}

// The generated C ABI: a table slot per catalog entry, handles are one pointer.
// The short names messages and JSON use; a corrupt value reads "?".
TEST(CatalogTest, LayerAndDomainNames) {
  const std::vector<std::pair<Layer, absl::string_view>> layers = {
      {Layer::kAdapter, "adapter"},     {Layer::kDevice, "device"},     {Layer::kDxgi, "dxgi"},
      {Layer::kCoreLayer, "corelayer"}, {Layer::kKernelCb, "kernelcb"}, {Layer::kKmd, "kmd"},
      {Layer::kDxgkrnl, "dxgkrnl"},     {Layer::kDx6, "dx6"},           {Layer::kApi, "api"}};
  for (const auto& [layer, name] : layers) EXPECT_EQ(LayerName(layer), name);
  EXPECT_EQ(LayerName(static_cast<Layer>(200)), "?");
  const std::vector<std::pair<Domain, absl::string_view>> domains = {
      {Domain::kIC, "IC"},        {Domain::kDC, "DC"},       {Domain::kFT, "FT"},
      {Domain::kFTAlways, "FT!"}, {Domain::kCallback, "CB"}, {Domain::kKernel, "KM"},
      {Domain::kAny, "any"}};
  for (const auto& [domain, name] : domains) EXPECT_EQ(DomainName(domain), name);
  EXPECT_EQ(DomainName(static_cast<Domain>(200)), "?");
}

TEST(CatalogTest, GeneratedAbiShapes) {
  static_assert(sizeof(D3D11DDI_HCOMMANDLIST) == sizeof(void*));
  static_assert(sizeof(D3DKMT_HALLOCATION) == 4);
  static_assert(sizeof(D3DDDICB_DESTROYCONTEXT) == sizeof(HANDLE));  // a kernel context is a HANDLE
  D3D11DDI_DEVICEFUNCS funcs{};
  funcs.pfnRecycleCreateCommandList = nullptr;
  PFND3D11DDI_DESTROYCOMMANDLIST destroy = nullptr;
  funcs.pfnRecycleDestroyCommandList = destroy;  // one typedef for both (ddi-spec §1.4)
  funcs.pfnDestroyCommandList = destroy;
  EXPECT_EQ(funcs.pfnDestroyCommandList, funcs.pfnRecycleDestroyCommandList);
}

// ---- catalog_version 2: the full scope -------------------------------------------------------

std::vector<std::string> FieldNames(const CallInfo& c) {
  std::vector<std::string> names;
  for (const FieldInfo& f : Fields(c)) names.push_back(f.name);
  return names;
}

std::vector<const CallInfo*> CallsOfLayer(Layer layer) {
  std::vector<const CallInfo*> out;
  for (size_t i = 1; i < Calls().size(); ++i)
    if (Calls()[i].layer == layer) out.push_back(&Calls()[i]);
  return out;
}

const FieldInfo& FieldOf(const char* call, const char* field) {
  const CallInfo* c = FindCall(call);
  EXPECT_NE(c, nullptr) << call;
  int i = FieldIndex(*c, field);
  EXPECT_GE(i, 0) << call << "." << field;
  return Fields(*c)[i];
}

TEST(CatalogScopeTest, EveryDeviceEntryTakesHDeviceFirst) {
  const HandleTypeInfo& hdevice = HandleTypes()[FieldOf("Draw", "hDevice").type_index];
  EXPECT_STREQ(hdevice.name, "D3D10DDI_HDEVICE");
  auto device = CallsOfLayer(Layer::kDevice);
  ASSERT_GT(device.size(), 100u);
  for (const CallInfo* c : device) {
    ASSERT_GT(c->field_count, 0) << c->name;
    const FieldInfo& first = Fields(*c)[0];
    EXPECT_STREQ(first.name, "hDevice") << c->name;
    EXPECT_EQ(first.kind, FieldKind::kHandle) << c->name;
    EXPECT_STREQ(HandleTypes()[first.type_index].name, "D3D10DDI_HDEVICE") << c->name;
    EXPECT_TRUE(c->in_ic_table || c->in_dc_table) << c->name;
    EXPECT_STREQ(c->table, "D3D11DDI_DEVICEFUNCS");
    EXPECT_EQ(std::string(c->member), std::string("pfn") + c->name);
  }
}

TEST(CatalogScopeTest, EveryCoreLayerCallbackTakesHRuntimeDeviceFirst) {
  for (const CallInfo* c : CallsOfLayer(Layer::kCoreLayer)) {
    ASSERT_GT(c->field_count, 0) << c->name;
    EXPECT_STREQ(Fields(*c)[0].name, "hRuntimeDevice") << c->name;
    EXPECT_STREQ(HandleTypes()[Fields(*c)[0].type_index].name, "D3D10DDI_HRTCORELAYER");
    EXPECT_EQ(c->domain, Domain::kCallback) << c->name;
    // Single-binding refreshes take only the handle; slot-array ones add Base, Count
    // (ddi-spec §1.4, prototype order).
    auto names = FieldNames(*c);
    if (names.size() > 1 && std::string(c->name) != "SetErrorCb") {
      EXPECT_EQ(names, (std::vector<std::string>{"hRuntimeDevice", "Base", "Count"})) << c->name;
    }
  }
}

// ddi-spec §1.6: D3D11DDI_CORELAYER_DEVICECALLBACKS in header order (the whole table).
TEST(CatalogScopeTest, CoreLayerCallbacksInHeaderOrder) {
  std::vector<std::string> members;
  for (const CallInfo* c : CallsOfLayer(Layer::kCoreLayer)) members.push_back(c->member);
  EXPECT_EQ(members, (std::vector<std::string>{"pfnSetErrorCb",
                                               "pfnStateVsConstBufCb",
                                               "pfnStatePsSrvCb",
                                               "pfnStatePsShaderCb",
                                               "pfnStatePsSamplerCb",
                                               "pfnStateVsShaderCb",
                                               "pfnStatePsConstBufCb",
                                               "pfnStateIaInputLayoutCb",
                                               "pfnStateIaVertexBufCb",
                                               "pfnStateIaIndexBufCb",
                                               "pfnStateGsConstBufCb",
                                               "pfnStateGsShaderCb",
                                               "pfnStateIaPrimitiveTopologyCb",
                                               "pfnStateVsSrvCb",
                                               "pfnStateVsSamplerCb",
                                               "pfnStateGsSrvCb",
                                               "pfnStateGsSamplerCb",
                                               "pfnStateOmRenderTargetsCb",
                                               "pfnStateOmBlendStateCb",
                                               "pfnStateOmDepthStateCb",
                                               "pfnStateRsRastStateCb",
                                               "pfnStateSoTargetsCb",
                                               "pfnStateRsViewportsCb",
                                               "pfnStateRsScissorCb",
                                               "pfnDisableDeferredStagingResourceDestruction",
                                               "pfnStateTextFilterSizeCb",
                                               "pfnStateHsSrvCb",
                                               "pfnStateHsShaderCb",
                                               "pfnStateHsSamplerCb",
                                               "pfnStateHsConstBufCb",
                                               "pfnStateDsSrvCb",
                                               "pfnStateDsShaderCb",
                                               "pfnStateDsSamplerCb",
                                               "pfnStateDsConstBufCb",
                                               "pfnPerformAmortizedProcessingCb",
                                               "pfnStateCsSrvCb",
                                               "pfnStateCsUavCb",
                                               "pfnStateCsShaderCb",
                                               "pfnStateCsSamplerCb",
                                               "pfnStateCsConstBufCb"}));
  // The generated table has the same slots at the same places.
  static_assert(offsetof(D3D11DDI_CORELAYER_DEVICECALLBACKS, pfnSetErrorCb) == 0);
  static_assert(offsetof(D3D11DDI_CORELAYER_DEVICECALLBACKS, pfnPerformAmortizedProcessingCb) ==
                34 * sizeof(void*));
}

// ddi-spec §1.5: the device-table slots in scope appear in header order.
TEST(CatalogScopeTest, DeviceSlotsFollowHeaderOrder) {
  const std::vector<std::string> header_order = {"DefaultConstantBufferUpdateSubresourceUP",
                                                 "VsSetConstantBuffers",
                                                 "PsSetShaderResources",
                                                 "PsSetShader",
                                                 "PsSetSamplers",
                                                 "VsSetShader",
                                                 "DrawIndexed",
                                                 "Draw",
                                                 "DynamicIABufferMapNoOverwrite",
                                                 "DynamicIABufferUnmap",
                                                 "DynamicConstantBufferMapDiscard",
                                                 "DynamicIABufferMapDiscard",
                                                 "DynamicConstantBufferUnmap",
                                                 "PsSetConstantBuffers",
                                                 "IaSetInputLayout",
                                                 "IaSetVertexBuffers",
                                                 "IaSetIndexBuffer",
                                                 "DrawIndexedInstanced",
                                                 "DrawInstanced",
                                                 "DynamicResourceMapDiscard",
                                                 "DynamicResourceUnmap",
                                                 "GsSetConstantBuffers",
                                                 "GsSetShader",
                                                 "IaSetTopology",
                                                 "StagingResourceMap",
                                                 "StagingResourceUnmap",
                                                 "VsSetShaderResources",
                                                 "VsSetSamplers",
                                                 "GsSetShaderResources",
                                                 "GsSetSamplers",
                                                 "SetRenderTargets",
                                                 "ShaderResourceViewReadAfterWriteHazard",
                                                 "ResourceReadAfterWriteHazard",
                                                 "SetBlendState",
                                                 "SetDepthStencilState",
                                                 "SetRasterizerState",
                                                 "QueryEnd",
                                                 "QueryBegin",
                                                 "ResourceCopyRegion",
                                                 "ResourceUpdateSubresourceUP",
                                                 "SoSetTargets",
                                                 "DrawAuto",
                                                 "SetViewports",
                                                 "SetScissorRects",
                                                 "ClearRenderTargetView",
                                                 "ClearDepthStencilView",
                                                 "SetPredication",
                                                 "QueryGetData",
                                                 "Flush",
                                                 "GenMips",
                                                 "ResourceCopy",
                                                 "ResourceResolveSubresource",
                                                 "ResourceMap",
                                                 "ResourceUnmap",
                                                 "ResourceIsStagingBusy",
                                                 "RelocateDeviceFuncs",
                                                 "CalcPrivateResourceSize",
                                                 "CalcPrivateOpenedResourceSize",
                                                 "CreateResource",
                                                 "OpenResource",
                                                 "DestroyResource",
                                                 "CalcPrivateShaderResourceViewSize",
                                                 "CreateShaderResourceView",
                                                 "DestroyShaderResourceView",
                                                 "CalcPrivateRenderTargetViewSize",
                                                 "CreateRenderTargetView",
                                                 "DestroyRenderTargetView",
                                                 "CalcPrivateDepthStencilViewSize",
                                                 "CreateDepthStencilView",
                                                 "DestroyDepthStencilView",
                                                 "CalcPrivateElementLayoutSize",
                                                 "CreateElementLayout",
                                                 "DestroyElementLayout",
                                                 "CalcPrivateBlendStateSize",
                                                 "CreateBlendState",
                                                 "DestroyBlendState",
                                                 "CalcPrivateDepthStencilStateSize",
                                                 "CreateDepthStencilState",
                                                 "DestroyDepthStencilState",
                                                 "CalcPrivateRasterizerStateSize",
                                                 "CreateRasterizerState",
                                                 "DestroyRasterizerState",
                                                 "CalcPrivateShaderSize",
                                                 "CreateVertexShader",
                                                 "CreateGeometryShader",
                                                 "CreatePixelShader",
                                                 "CalcPrivateGeometryShaderWithStreamOutput",
                                                 "CreateGeometryShaderWithStreamOutput",
                                                 "DestroyShader",
                                                 "CalcPrivateSamplerSize",
                                                 "CreateSampler",
                                                 "DestroySampler",
                                                 "CalcPrivateQuerySize",
                                                 "CreateQuery",
                                                 "DestroyQuery",
                                                 "CheckFormatSupport",
                                                 "CheckMultisampleQualityLevels",
                                                 "CheckCounterInfo",
                                                 "CheckCounter",
                                                 "DestroyDevice",
                                                 "SetTextFilterSize",
                                                 "ResourceConvert",
                                                 "ResourceConvertRegion",
                                                 "DrawIndexedInstancedIndirect",
                                                 "DrawInstancedIndirect",
                                                 "CommandListExecute",
                                                 "HsSetShaderResources",
                                                 "HsSetShader",
                                                 "HsSetSamplers",
                                                 "HsSetConstantBuffers",
                                                 "DsSetShaderResources",
                                                 "DsSetShader",
                                                 "DsSetSamplers",
                                                 "DsSetConstantBuffers",
                                                 "CreateHullShader",
                                                 "CreateDomainShader",
                                                 "CheckDeferredContextHandleSizes",
                                                 "CalcDeferredContextHandleSize",
                                                 "CalcPrivateDeferredContextSize",
                                                 "CreateDeferredContext",
                                                 "AbandonCommandList",
                                                 "CalcPrivateCommandListSize",
                                                 "CreateCommandList",
                                                 "DestroyCommandList",
                                                 "CalcPrivateTessellationShaderSize",
                                                 "PsSetShaderWithIfaces",
                                                 "VsSetShaderWithIfaces",
                                                 "GsSetShaderWithIfaces",
                                                 "HsSetShaderWithIfaces",
                                                 "DsSetShaderWithIfaces",
                                                 "CsSetShaderWithIfaces",
                                                 "CreateComputeShader",
                                                 "CsSetShader",
                                                 "CsSetShaderResources",
                                                 "CsSetSamplers",
                                                 "CsSetConstantBuffers",
                                                 "CalcPrivateUnorderedAccessViewSize",
                                                 "CreateUnorderedAccessView",
                                                 "DestroyUnorderedAccessView",
                                                 "ClearUnorderedAccessViewUint",
                                                 "ClearUnorderedAccessViewFloat",
                                                 "CsSetUnorderedAccessViews",
                                                 "Dispatch",
                                                 "DispatchIndirect",
                                                 "SetResourceMinLOD",
                                                 "CopyStructureCount",
                                                 "RecycleCommandList",
                                                 "RecycleCreateCommandList",
                                                 "RecycleCreateDeferredContext",
                                                 "RecycleDestroyCommandList"};
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < header_order.size(); ++i) position[header_order[i]] = i;
  size_t last = 0;
  bool first = true;
  for (const CallInfo* c : CallsOfLayer(Layer::kDevice)) {
    auto it = position.find(c->name);
    ASSERT_NE(it, position.end()) << c->name << " is not a D3D11DDI_DEVICEFUNCS slot";
    if (!first) {
      EXPECT_GT(it->second, last) << c->name << " is out of header order";
    }
    last = it->second;
    first = false;
  }
}

// ddi-spec §1.4a: documented parameter names, in order. Structure members follow the pointer
// that reaches them, so the documented list must be a subsequence of the fixed fields.
TEST(CatalogScopeTest, DocumentedParameterNamesInOrder) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> documented = {
      {{"CheckDeferredContextHandleSizes"}, {"hDevice", "pHSizes", "pHandleSize"}},
      {{"CalcDeferredContextHandleSize"}, {"hDevice", "HandleType", "pICObject"}},
      {{"CalcPrivateCommandListSize"}, {"hDevice", "pCreateCommandList", "hDeferredContext"}},
      {{"CreateCommandList", "RecycleCreateCommandList"},
       {"hDevice", "pCreateCommandList", "hDeferredContext", "hCommandList", "hRTCommandList"}},
      {{"RecycleCommandList", "DestroyCommandList", "RecycleDestroyCommandList",
        "CommandListExecute"},
       {"hDevice", "hCommandList"}},
      {{"AbandonCommandList", "DestroyDevice"}, {"hDevice"}},
      {{"Flush"}, {"hDevice"}},
      {{"CalcPrivateDeferredContextSize"}, {"hDevice", "pCalcPrivateDeferredContextSize", "Flags"}},
      {{"CreateDeferredContext", "RecycleCreateDeferredContext"},
       {"hDevice", "pCreateDeferredContext", "p11ContextFuncs", "hDrvContext", "hRTCoreLayer",
        "p11UMCallbacks", "Flags"}},
      {{"ResourceCopy"}, {"hDevice", "hDstResource", "hSrcResource"}},
      {{"CreateResource"}, {"hDevice", "pCreateResource", "hResource", "hRTResource"}},
      {{"CreateQuery"}, {"hDevice", "pCreateQuery", "hQuery", "hRTQuery"}},
      {{"QueryBegin", "QueryEnd"}, {"hDevice", "hQuery"}},
      {{"ResourceMap"},
       {"hDevice", "hResource", "Subresource", "DDIMap", "Flags", "pMappedSubResource"}},
      {{"ResourceUnmap"}, {"hDevice", "hResource", "Subresource"}},
      {{"SetErrorCb"}, {"hRuntimeDevice", "hResult"}},
      {{"PerformAmortizedProcessingCb", "DisableDeferredStagingResourceDestruction",
        "StatePsShaderCb", "StateOmRenderTargetsCb"},
       {"hRuntimeDevice"}},
      {{"StateVsConstBufCb", "StatePsSrvCb", "StateIaVertexBufCb", "StateCsUavCb"},
       {"hRuntimeDevice", "Base", "Count"}},
      {{"RenderCb"},
       {"hDevice",
        "pData",
        "CommandLength",
        "CommandOffset",
        "NumAllocations",
        "NumPatchLocations",
        "pNewCommandBuffer",
        "NewCommandBufferSize",
        "pNewAllocationList",
        "NewAllocationListSize",
        "pNewPatchLocationList",
        "NewPatchLocationListSize",
        "Flags",
        "hContext",
        "BroadcastContextCount",
        "BroadcastContext",
        "QueuedBufferCount",
        "NewCommandBuffer",
        "pPrivateDriverData",
        "PrivateDriverDataSize"}},
  };
  for (const auto& [calls, expected] : documented) {
    for (const std::string& name : calls) {
      const CallInfo* c = FindCall(name);
      ASSERT_NE(c, nullptr) << name;
      auto names = FieldNames(*c);
      size_t at = 0;
      for (const std::string& want : expected) {
        while (at < names.size() && names[at] != want) ++at;
        EXPECT_LT(at, names.size()) << name << ": '" << want << "' missing or out of order";
        if (at < names.size()) ++at;
      }
    }
  }
  // Calls without structures have exactly the documented fields.
  EXPECT_EQ(FieldNames(*FindCall("ResourceUnmap")),
            (std::vector<std::string>{"hDevice", "hResource", "Subresource"}));
  EXPECT_EQ(FieldNames(*FindCall("StateVsConstBufCb")),
            (std::vector<std::string>{"hRuntimeDevice", "Base", "Count"}));
  EXPECT_EQ(FieldNames(*FindCall("RecycleCommandList")),
            (std::vector<std::string>{"hDevice", "hCommandList"}));
}

// ddi-spec §2.3: which device DDIs the runtime calls through a DC table.
TEST(CatalogScopeTest, DeferredContextTableMembership) {
  const std::set<std::string> dc_excludable = {
      "StagingResourceMap", "StagingResourceUnmap", "QueryGetData", "Flush", "ResourceMap",
      "ResourceUnmap", "ResourceIsStagingBusy", "OpenResource", "CheckDeferredContextHandleSizes",
      "CalcDeferredContextHandleSize", "CalcPrivateDeferredContextSize", "CreateDeferredContext",
      "CalcPrivateCommandListSize", "SetResourceMinLOD", "CheckFormatSupport",
      "CheckMultisampleQualityLevels", "CheckCounterInfo", "CheckCounter",
      // Build-2 IC-table functions invoked on DC threads (ddi-spec §2.1, R12).
      "RecycleCreateCommandList", "RecycleCreateDeferredContext", "RecycleDestroyCommandList"};
  const std::set<std::string> dc_only = {"RecycleCommandList", "AbandonCommandList"};
  for (const CallInfo* c : CallsOfLayer(Layer::kDevice)) {
    std::string name = c->name;
    bool calc_private = name.rfind("CalcPrivate", 0) == 0;
    if (dc_only.count(name)) {
      EXPECT_FALSE(c->in_ic_table) << name;
      EXPECT_TRUE(c->in_dc_table) << name;
      EXPECT_EQ(c->domain, Domain::kDC) << name;
    } else if (dc_excludable.count(name) || calc_private) {
      EXPECT_TRUE(c->in_ic_table) << name;
      EXPECT_FALSE(c->in_dc_table) << name;
    } else {
      EXPECT_TRUE(c->in_ic_table) << name;
      EXPECT_TRUE(c->in_dc_table) << name;
    }
    // Domains (ddi-spec §0.2, §2): CalcPrivate* FT!, object creation/destruction FT.
    if (calc_private) {
      EXPECT_EQ(c->domain, Domain::kFTAlways) << name;
    }
    bool object_lifetime =
        (name.rfind("Create", 0) == 0 || name.rfind("Destroy", 0) == 0 || name == "OpenResource") &&
        name != "DestroyDevice";
    if (object_lifetime) {
      EXPECT_EQ(c->domain, Domain::kFT) << name;
    }
  }
  EXPECT_EQ(FindCall("DrawIndexed")->domain, Domain::kIC);
  EXPECT_EQ(FindCall("CsSetUnorderedAccessViews")->domain, Domain::kIC);
  EXPECT_EQ(FindCall("DynamicIABufferMapDiscard")->domain, Domain::kIC);
}

TEST(CatalogScopeTest, ArrayCountsAreRecorded) {
  const CallInfo* vb = FindCall("IaSetVertexBuffers");
  ASSERT_NE(vb, nullptr);
  int num = FieldIndex(*vb, "NumBuffers");
  for (const char* arr : {"phBuffers", "pStrides", "pOffsets"}) {
    const FieldInfo& f = Fields(*vb)[FieldIndex(*vb, arr)];
    EXPECT_EQ(f.kind, FieldKind::kArray) << arr;
    EXPECT_EQ(f.count_field, num) << arr;
    EXPECT_EQ(f.count_divisor, 1);
    EXPECT_FALSE(f.embedded);
  }
  // count=*pHSizes: the count is pHSizes' exit value, the capacity its entry value.
  const CallInfo* sizes = FindCall("CheckDeferredContextHandleSizes");
  const FieldInfo& hs = FieldOf("CheckDeferredContextHandleSizes", "pHandleSize");
  EXPECT_EQ(hs.count_field, FieldIndex(*sizes, "pHSizesOut"));
  EXPECT_EQ(hs.capacity_field, FieldIndex(*sizes, "pHSizes"));
  // count=DataSize/4.
  const FieldInfo& info = FieldOf("GetCaps", "pData.pData");
  EXPECT_EQ(info.count_field, FieldIndex(*FindCall("GetCaps"), "DataSize"));
  EXPECT_EQ(info.count_divisor, 4);
  EXPECT_EQ(info.capacity_field, info.count_field);
  // count=4 and count=pCode[1] (the token stream's length token).
  EXPECT_EQ(FieldOf("SetBlendState", "pBlendFactor").count_fixed, 4);
  EXPECT_EQ(FieldOf("SetBlendState", "pBlendFactor").count_field, -1);
  const FieldInfo& code = FieldOf("CreateVertexShader", "pCode");
  EXPECT_EQ(code.count_in_element, 1);
  EXPECT_EQ(code.count_field, -1);
  // Embedded arrays: D3DDDICB_RENDER.BroadcastContext[64] count=BroadcastContextCount.
  const FieldInfo& bc = FieldOf("RenderCb", "BroadcastContext");
  EXPECT_TRUE(bc.embedded);
  EXPECT_EQ(bc.count_fixed, 64);
  EXPECT_EQ(bc.count_field, FieldIndex(*FindCall("RenderCb"), "BroadcastContextCount"));
  EXPECT_TRUE(FieldOf("CreateBlendState", "RenderTarget").embedded);
  EXPECT_EQ(FieldOf("CreateBlendState", "RenderTarget").count_fixed, 8);
  EXPECT_EQ(FieldOf("CreateBlendState", "RenderTarget").count_field, -1);
  // count=MipLevels*ArraySize: one initial-data entry per subresource.
  const CallInfo* create = FindCall("CreateResource");
  const FieldInfo& up = FieldOf("CreateResource", "pInitialDataUP");
  EXPECT_EQ(up.count_field, FieldIndex(*create, "MipLevels"));
  EXPECT_EQ(up.count_factor_field, FieldIndex(*create, "ArraySize"));
  EXPECT_EQ(up.count_divisor, 1);
  const FieldInfo& mips = FieldOf("CreateResource", "pMipInfoList");
  EXPECT_EQ(mips.count_field, FieldIndex(*create, "MipLevels"));
  EXPECT_EQ(mips.count_factor_field, -1);
  // Non-array fields carry no count.
  EXPECT_EQ(FieldOf("Draw", "VertexCount").count_field, -1);
  EXPECT_EQ(FieldOf("Draw", "VertexCount").count_factor_field, -1);
}

TEST(CatalogScopeTest, InoutMembersNestedNamesAndWidths) {
  // A by-value inout member records its entry and exit values.
  EXPECT_EQ(FieldOf("RenderCb", "NewCommandBufferSize").dir, FieldDir::kIn);
  EXPECT_EQ(FieldOf("RenderCb", "NewCommandBufferSizeOut").dir, FieldDir::kOut);
  EXPECT_EQ(FieldOf("D3dDrawPrimitives2", "lpDDCommandsOut").kind, FieldKind::kHandle);
  EXPECT_EQ(FieldOf("D3dDrawPrimitives2", "ddrval").dir, FieldDir::kOut);
  EXPECT_EQ(FieldOf("D3dDrawPrimitives2", "dwErrorOffset").dir, FieldDir::kOut);
  EXPECT_EQ(FieldOf("D3dDrawPrimitives2", "dwVertexSize").dir, FieldDir::kIn);
  // By-value structures and member pointers prefix their members.
  EXPECT_EQ(FieldOf("CreateDepthStencilState", "BackFace.StencilFunc").kind, FieldKind::kEnum);
  EXPECT_EQ(FieldOf("DxgkDdiCreateDevice", "pInfo.DmaBufferSize").dir, FieldDir::kOut);
  EXPECT_EQ(FieldOf("DxgkDdiCreateContext", "ContextInfo.PatchLocationListSize").dir,
            FieldDir::kOut);
  EXPECT_EQ(FieldOf("DxgkDdiCreateDevice", "pInfo").kind, FieldKind::kPresent);
  EXPECT_EQ(FieldOf("DxgkDdiCreateDevice", "pInfo").elem_count, 6);
  EXPECT_EQ(FieldOf("DxgkDdiCreateDevice", "pCreateDevice").elem_count, 9);
  // Value widths of the C types.
  EXPECT_EQ(FieldOf("ClearDepthStencilView", "Stencil").bits, 8);
  EXPECT_EQ(FieldOf("ClearDepthStencilView", "Depth").bits, 32);
  EXPECT_EQ(FieldOf("RenderCb", "NewCommandBuffer").bits, 64);
  EXPECT_EQ(FieldOf("Draw", "hDevice").bits, 0);
}

TEST(CatalogScopeTest, OtherLayers) {
  const CallInfo* present = FindCall("PresentDXGI");
  ASSERT_NE(present, nullptr);
  EXPECT_EQ(present->layer, Layer::kDxgi);
  EXPECT_STREQ(present->member, "pfnPresent");
  EXPECT_EQ(present->ret, ReturnKind::kHresult);
  for (const char* m : {"hSurfaceToPresent", "hDstResource", "FlipInterval", "Flags"})
    EXPECT_GE(FieldIndex(*present, m), 0) << m;
  // Kernel thunks: the runtime's device HANDLE, then the D3DDDICB_* structure (SetAsyncCallbacksCb
  // alone takes a BOOL).
  for (const CallInfo* c : CallsOfLayer(Layer::kKernelCb)) {
    EXPECT_STREQ(Fields(*c)[0].name,
                 std::string(c->name) == "EscapeCb" ? "hAdapter" : "hDevice")
        << c->name;  // pfnEscapeCb takes the adapter (nc-d3dumddi-pfnd3dddi_escapecb)
    EXPECT_STREQ(HandleTypes()[Fields(*c)[0].type_index].name, "D3DRTDEVICEHANDLE");
    EXPECT_EQ(Fields(*c)[1].kind, std::string(c->name) == "SetAsyncCallbacksCb"
                                      ? FieldKind::kBool
                                      : FieldKind::kPresent)
        << c->name;
    EXPECT_EQ(c->ret, ReturnKind::kHresult) << c->name;
  }
  EXPECT_EQ(FieldOf("CreateContextCb", "hContext").dir, FieldDir::kOut);
  EXPECT_EQ(FieldOf("CreateContextCb", "PatchLocationListSize").dir, FieldDir::kOut);
  EXPECT_EQ(FieldOf("AllocateCb", "pAllocationInfo").kind, FieldKind::kArray);
  // KMD and dxgkrnl: entries named like the DRIVER_INITIALIZATION_DATA members.
  for (const CallInfo* c : CallsOfLayer(Layer::kKmd)) {
    EXPECT_EQ(std::string(c->name).rfind("DxgkDdi", 0), 0u) << c->name;
    EXPECT_STREQ(c->member, c->name);
    EXPECT_EQ(c->domain, Domain::kKernel);
  }
  auto patch_entry = ElementFields(FieldOf("DxgkDdiPatch", "pPatchLocationList"));
  ASSERT_EQ(patch_entry.size(), 6u);
  EXPECT_STREQ(patch_entry[5].name, "SplitOffset");
  EXPECT_GE(FieldIndex(*FindCall("DxgkDdiSubmitCommand"), "SubmissionFenceId"), 0);
  EXPECT_GE(FieldIndex(*FindCall("DxgkDdiSubmitCommand"), "DmaBufferSubmissionEndOffset"), 0);
  const EnumInfo* irq = FindEnum("DXGK_INTERRUPT_TYPE");
  ASSERT_NE(irq, nullptr);
  EXPECT_EQ(ValueOfName(*irq, "DXGK_INTERRUPT_DMA_COMPLETED"), 1u);
  // DXGKRNL_INTERFACE's three callbacks and the model GPU's observer (our own table).
  EXPECT_EQ(CallsOfLayer(Layer::kDxgkrnl).size(), 4u);
  const CallInfo* retired = FindCall("GpuFenceRetired");
  ASSERT_NE(retired, nullptr);
  EXPECT_STREQ(retired->table, "CLTRACE_GPU_OBSERVER");
  EXPECT_STREQ(retired->member, "pfnGpuFenceRetired");
  EXPECT_EQ(retired->domain, Domain::kKernel);
  EXPECT_EQ(FieldNames(*retired), (std::vector<std::string>{"hAdapter", "NodeOrdinal", "FenceId",
                                                            "ContentDigest", "Paging"}));
  // DX6: the buffer callbacks and DrawPrimitives2 return DDHAL_DRIVER_* codes.
  const CallInfo* dp2 = FindCall("D3dDrawPrimitives2");
  ASSERT_NE(dp2, nullptr);
  EXPECT_STREQ(dp2->member, "DrawPrimitives2");
  EXPECT_EQ(dp2->ret, ReturnKind::kU32);
  ASSERT_NE(dp2->ret_enum, kNoEnum);
  EXPECT_STREQ(Enums()[dp2->ret_enum].name, "DDHAL_DRIVER_NAMES");
  const EnumInfo* dp2_flags = FindEnum("D3DHALDP2_FLAGS");
  ASSERT_NE(dp2_flags, nullptr);
  EXPECT_EQ(ValueOfName(*dp2_flags, "D3DHALDP2_SWAPCOMMANDBUFFER|D3DHALDP2_VIDMEMCOMMANDBUF"),
            0x88u);
  EXPECT_EQ(CallsOfLayer(Layer::kDx6).size(), 6u);
}

TEST(CatalogScopeTest, ArgumentStructuresAgreeBetweenCAndCxx) {
  const size_t cxx[] = {sizeof(D3D11DDI_DEVICEFUNCS),
                        sizeof(D3D11DDI_CORELAYER_DEVICECALLBACKS),
                        sizeof(D3DDDI_DEVICECALLBACKS),
                        sizeof(D3DDDICB_RENDER),
                        offsetof(D3DDDICB_RENDER, BroadcastContext),
                        offsetof(D3DDDICB_RENDER, QueuedBufferCount),
                        sizeof(D3D10_1_DDI_BLEND_DESC),
                        offsetof(D3D10_DDI_DEPTH_STENCIL_DESC, BackFace),
                        sizeof(D3DHAL_DRAWPRIMITIVES2DATA),
                        sizeof(D3DKMT_HALLOCATION),
                        sizeof(D3D11DDI_HCOMMANDLIST),
                        offsetof(D3D11DDI_DEVICEFUNCS, pfnRecycleDestroyCommandList),
                        sizeof(DXGKARG_SUBMITCOMMAND),
                        sizeof(D3D10DDIARG_CREATEDEVICE)};
  for (int i = 0; i < static_cast<int>(sizeof(cxx) / sizeof(cxx[0])); ++i)
    EXPECT_EQ(CltraceAbiCLayout(i), cxx[i]) << "layout probe " << i;
  // One table slot per device-layer catalog entry.
  EXPECT_EQ(sizeof(D3D11DDI_DEVICEFUNCS), CallsOfLayer(Layer::kDevice).size() * sizeof(void*));
  EXPECT_EQ(offsetof(D3D11DDI_DEVICEFUNCS, pfnRecycleDestroyCommandList),
            (CallsOfLayer(Layer::kDevice).size() - 1) * sizeof(void*));
  PFND3D10DDI_OPENADAPTER open_adapter = nullptr;  // the epilogue typedef
  EXPECT_EQ(open_adapter, nullptr);
}

// A vertex's size is the sum of the sizes of the FVF parts it has; bits the model does not know
// add nothing.
TEST(FvfTest, StrideSumsThePartsTheFormatNames) {
  EXPECT_EQ(FvfStride(0), 0u);
  EXPECT_EQ(FvfStride(D3DFVF_XYZ), 12u);
  EXPECT_EQ(FvfStride(D3DFVF_XYZRHW | D3DFVF_DIFFUSE), 20u);
  EXPECT_EQ(FvfStride(D3DFVF_XYZ | D3DFVF_NORMAL | D3DFVF_DIFFUSE | D3DFVF_SPECULAR | D3DFVF_TEX1),
            40u);
  EXPECT_EQ(FvfStride(D3DFVF_XYZ | 0x80000000u), 12u);
}

}  // namespace
}  // namespace cltrace::ddi
