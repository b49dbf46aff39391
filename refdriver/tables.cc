// The IC and DC function tables of the reference driver (ddi-spec §1.5, §2.3; R2, R3).
#include "refdriver/internal/tables.h"

namespace cltrace::refdriver {
namespace {

#define CLTRACE_IC_OBJECT_SLOTS(t)                                                \
  t->pfnCalcPrivateResourceSize = &CalcPrivateResourceSize;                       \
  t->pfnCalcPrivateOpenedResourceSize = &CalcPrivateOpenedResourceSize;           \
  t->pfnCreateResource = &CreateResource;                                         \
  t->pfnOpenResource = &OpenResource;                                             \
  t->pfnDestroyResource = &DestroyResource;                                       \
  t->pfnCalcPrivateShaderResourceViewSize = &CalcPrivateShaderResourceViewSize;   \
  t->pfnCreateShaderResourceView = &CreateShaderResourceView;                     \
  t->pfnDestroyShaderResourceView = &DestroyShaderResourceView;                   \
  t->pfnCalcPrivateRenderTargetViewSize = &CalcPrivateRenderTargetViewSize;       \
  t->pfnCreateRenderTargetView = &CreateRenderTargetView;                         \
  t->pfnDestroyRenderTargetView = &DestroyRenderTargetView;                       \
  t->pfnCalcPrivateDepthStencilViewSize = &CalcPrivateDepthStencilViewSize;       \
  t->pfnCreateDepthStencilView = &CreateDepthStencilView;                         \
  t->pfnDestroyDepthStencilView = &DestroyDepthStencilView;                       \
  t->pfnCalcPrivateUnorderedAccessViewSize = &CalcPrivateUnorderedAccessViewSize; \
  t->pfnCreateUnorderedAccessView = &CreateUnorderedAccessView;                   \
  t->pfnDestroyUnorderedAccessView = &DestroyUnorderedAccessView;                 \
  t->pfnCalcPrivateElementLayoutSize = &CalcPrivateElementLayoutSize;             \
  t->pfnCreateElementLayout = &CreateElementLayout;                               \
  t->pfnDestroyElementLayout = &DestroyElementLayout;                             \
  t->pfnCalcPrivateBlendStateSize = &CalcPrivateBlendStateSize;                   \
  t->pfnCreateBlendState = &CreateBlendState;                                     \
  t->pfnDestroyBlendState = &DestroyBlendState;                                   \
  t->pfnCalcPrivateDepthStencilStateSize = &CalcPrivateDepthStencilStateSize;     \
  t->pfnCreateDepthStencilState = &CreateDepthStencilState;                       \
  t->pfnDestroyDepthStencilState = &DestroyDepthStencilState;                     \
  t->pfnCalcPrivateRasterizerStateSize = &CalcPrivateRasterizerStateSize;         \
  t->pfnCreateRasterizerState = &CreateRasterizerState;                           \
  t->pfnDestroyRasterizerState = &DestroyRasterizerState;                         \
  t->pfnCalcPrivateShaderSize = &CalcPrivateShaderSize;                           \
  t->pfnCalcPrivateTessellationShaderSize = &CalcPrivateTessellationShaderSize;   \
  t->pfnCreateVertexShader = &CreateVertexShader;                                 \
  t->pfnCreateGeometryShader = &CreateGeometryShader;                             \
  t->pfnCreatePixelShader = &CreatePixelShader;                                   \
  t->pfnCreateHullShader = &CreateHullShader;                                     \
  t->pfnCreateDomainShader = &CreateDomainShader;                                 \
  t->pfnCreateComputeShader = &CreateComputeShader;                               \
  t->pfnDestroyShader = &DestroyShader;                                           \
  t->pfnCalcPrivateSamplerSize = &CalcPrivateSamplerSize;                         \
  t->pfnCreateSampler = &CreateSampler;                                           \
  t->pfnDestroySampler = &DestroySampler;                                         \
  t->pfnCalcPrivateQuerySize = &CalcPrivateQuerySize;                             \
  t->pfnCreateQuery = &CreateQuery;                                               \
  t->pfnDestroyQuery = &DestroyQuery;

}  // namespace

void FillIcTable(D3D11DDI_DEVICEFUNCS* t) {
  *t = D3D11DDI_DEVICEFUNCS{};
  FillPipelineSlots(t, /*dc=*/false);
  FillSubmitSlots(t);
  CLTRACE_IC_OBJECT_SLOTS(t)
  t->pfnDestroyDevice = &DestroyDevice;
  t->pfnCommandListExecute = &CommandListExecute;
  t->pfnCheckDeferredContextHandleSizes = &CheckDeferredContextHandleSizes;
  t->pfnCalcDeferredContextHandleSize = &CalcDeferredContextHandleSize;
  t->pfnCalcPrivateDeferredContextSize = &CalcPrivateDeferredContextSize;
  t->pfnCreateDeferredContext = &CreateDeferredContext;
  t->pfnCalcPrivateCommandListSize = &CalcPrivateCommandListSize;
  t->pfnCreateCommandList = &CreateCommandList;
  t->pfnDestroyCommandList = &DestroyCommandList;
  t->pfnRecycleCreateCommandList = &RecycleCreateCommandList;
  t->pfnRecycleCreateDeferredContext = &RecycleCreateDeferredContext;
  t->pfnRecycleDestroyCommandList = &RecycleDestroyCommandList;
  // RecycleCommandList and AbandonCommandList are DC-table functions (§2.3): NULL here.
}

void FillDcTable(D3D11DDI_DEVICEFUNCS* t) {
  *t = D3D11DDI_DEVICEFUNCS{};
  FillPipelineSlots(t, /*dc=*/true);
  // Context-local opens/closes; the DC-excludable slots (§2.3) stay NULL.
  t->pfnCreateResource = &DcCreateResource;
  t->pfnDestroyResource = &DcDestroyResource;
  t->pfnCreateShaderResourceView = &DcCreateShaderResourceView;
  t->pfnDestroyShaderResourceView = &DcDestroyShaderResourceView;
  t->pfnCreateRenderTargetView = &DcCreateRenderTargetView;
  t->pfnDestroyRenderTargetView = &DcDestroyRenderTargetView;
  t->pfnCreateDepthStencilView = &DcCreateDepthStencilView;
  t->pfnDestroyDepthStencilView = &DcDestroyDepthStencilView;
  t->pfnCreateUnorderedAccessView = &DcCreateUnorderedAccessView;
  t->pfnDestroyUnorderedAccessView = &DcDestroyUnorderedAccessView;
  t->pfnCreateElementLayout = &DcCreateElementLayout;
  t->pfnDestroyElementLayout = &DcDestroyElementLayout;
  t->pfnCreateBlendState = &DcCreateBlendState;
  t->pfnDestroyBlendState = &DcDestroyBlendState;
  t->pfnCreateDepthStencilState = &DcCreateDepthStencilState;
  t->pfnDestroyDepthStencilState = &DcDestroyDepthStencilState;
  t->pfnCreateRasterizerState = &DcCreateRasterizerState;
  t->pfnDestroyRasterizerState = &DcDestroyRasterizerState;
  t->pfnCreateSampler = &DcCreateSampler;
  t->pfnDestroySampler = &DcDestroySampler;
  t->pfnCreateQuery = &DcCreateQuery;
  t->pfnDestroyQuery = &DcDestroyQuery;
  t->pfnCreateVertexShader = &DcCreateVertexShader;
  t->pfnCreateGeometryShader = &DcCreateGeometryShader;
  t->pfnCreatePixelShader = &DcCreatePixelShader;
  t->pfnCreateHullShader = &DcCreateHullShader;
  t->pfnCreateDomainShader = &DcCreateDomainShader;
  t->pfnCreateComputeShader = &DcCreateComputeShader;
  t->pfnDestroyShader = &DcDestroyShader;
  t->pfnDestroyDevice = &DcDestroyDevice;
  t->pfnCreateCommandList = &DcCreateCommandList;
  t->pfnDestroyCommandList = &DcDestroyCommandList;
  t->pfnCommandListExecute = &DcCommandListExecute;
  t->pfnRecycleCommandList = &RecycleCommandList;
  t->pfnAbandonCommandList = &AbandonCommandList;
}

}  // namespace cltrace::refdriver
