// The reference driver's DDI entry points and the function tables it fills.
//
// IC-table and DC-table variants of the same slot are different functions where the contract
// differs (ddi-spec §5: rules are keyed by table and function): the DC variants of the object
// creates/destroys are context-local opens/closes, DC CreateCommandList/DestroyCommandList/
// CommandListExecute work on context-local command-list handles.
//
// Thread-safety: the functions follow the DDI's thread domain (ddi-spec §2).
#ifndef CLTRACE_REFDRIVER_INTERNAL_TABLES_H_
#define CLTRACE_REFDRIVER_INTERNAL_TABLES_H_

#include "ddi/ddi_abi.h"

namespace cltrace::refdriver {

struct Device;

// Fills the IC table at CreateDevice and a DC table at CreateDeferredContext. Slots the DC
// table may leave NULL (§2.3) stay NULL.
void FillIcTable(D3D11DDI_DEVICEFUNCS* t);
void FillDcTable(D3D11DDI_DEVICEFUNCS* t);
// Per-file parts of the fill.
void FillPipelineSlots(D3D11DDI_DEVICEFUNCS* t, bool dc);
void FillSubmitSlots(D3D11DDI_DEVICEFUNCS* t);  // IC only: Flush, QueryGetData, maps...
void FillDxgiTable(DXGI_DDI_BASE_FUNCTIONS* t);

// Command lists (command_lists.cc).
SIZE_T APIENTRY CalcPrivateCommandListSize(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATECOMMANDLIST*);
void APIENTRY CreateCommandList(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATECOMMANDLIST*,
                                D3D11DDI_HCOMMANDLIST, D3D11DDI_HRTCOMMANDLIST);
HRESULT APIENTRY RecycleCreateCommandList(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATECOMMANDLIST*,
                                          D3D11DDI_HCOMMANDLIST, D3D11DDI_HRTCOMMANDLIST);
void APIENTRY RecycleDestroyCommandList(D3D10DDI_HDEVICE, D3D11DDI_HCOMMANDLIST);
void APIENTRY DestroyCommandList(D3D10DDI_HDEVICE, D3D11DDI_HCOMMANDLIST);
void APIENTRY CommandListExecute(D3D10DDI_HDEVICE, D3D11DDI_HCOMMANDLIST);
void APIENTRY RecycleCommandList(D3D10DDI_HDEVICE, D3D11DDI_HCOMMANDLIST);
void APIENTRY DcCreateCommandList(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATECOMMANDLIST*,
                                  D3D11DDI_HCOMMANDLIST, D3D11DDI_HRTCOMMANDLIST);
void APIENTRY DcDestroyCommandList(D3D10DDI_HDEVICE, D3D11DDI_HCOMMANDLIST);
void APIENTRY DcCommandListExecute(D3D10DDI_HDEVICE, D3D11DDI_HCOMMANDLIST);

// Deferred contexts (deferred_contexts.cc).
void APIENTRY CheckDeferredContextHandleSizes(D3D10DDI_HDEVICE, UINT*, D3D11DDI_HANDLESIZE*);
SIZE_T APIENTRY CalcDeferredContextHandleSize(D3D10DDI_HDEVICE, D3D11DDI_HANDLETYPE, PVOID);
SIZE_T APIENTRY CalcPrivateDeferredContextSize(D3D10DDI_HDEVICE,
                                               const D3D11DDIARG_CALCPRIVATEDEFERREDCONTEXTSIZE*);
void APIENTRY CreateDeferredContext(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATEDEFERREDCONTEXT*);
HRESULT APIENTRY RecycleCreateDeferredContext(D3D10DDI_HDEVICE,
                                              const D3D11DDIARG_CREATEDEFERREDCONTEXT*);
void APIENTRY AbandonCommandList(D3D10DDI_HDEVICE);
void APIENTRY DcDestroyDevice(D3D10DDI_HDEVICE);

// Device (adapter.cc).
void APIENTRY DestroyDevice(D3D10DDI_HDEVICE);

// Objects (objects.cc): IC creates/destroys and DC context-local opens/closes.
SIZE_T APIENTRY CalcPrivateResourceSize(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATERESOURCE*);
SIZE_T APIENTRY CalcPrivateOpenedResourceSize(D3D10DDI_HDEVICE, const D3D10DDIARG_OPENRESOURCE*);
void APIENTRY CreateResource(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATERESOURCE*,
                             D3D10DDI_HRESOURCE, D3D10DDI_HRTRESOURCE);
void APIENTRY OpenResource(D3D10DDI_HDEVICE, const D3D10DDIARG_OPENRESOURCE*, D3D10DDI_HRESOURCE,
                           D3D10DDI_HRTRESOURCE);
void APIENTRY DestroyResource(D3D10DDI_HDEVICE, D3D10DDI_HRESOURCE);
// Planted bug R5 writes this (same behaviour, different address) into pfnCreateResource.
void APIENTRY CreateResourceHotSwapped(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATERESOURCE*,
                                       D3D10DDI_HRESOURCE, D3D10DDI_HRTRESOURCE);
SIZE_T APIENTRY CalcPrivateShaderResourceViewSize(D3D10DDI_HDEVICE,
                                                  const D3D11DDIARG_CREATESHADERRESOURCEVIEW*);
void APIENTRY CreateShaderResourceView(D3D10DDI_HDEVICE,
                                       const D3D11DDIARG_CREATESHADERRESOURCEVIEW*,
                                       D3D10DDI_HSHADERRESOURCEVIEW,
                                       D3D10DDI_HRTSHADERRESOURCEVIEW);
void APIENTRY DestroyShaderResourceView(D3D10DDI_HDEVICE, D3D10DDI_HSHADERRESOURCEVIEW);
SIZE_T APIENTRY CalcPrivateRenderTargetViewSize(D3D10DDI_HDEVICE,
                                                const D3D10DDIARG_CREATERENDERTARGETVIEW*);
void APIENTRY CreateRenderTargetView(D3D10DDI_HDEVICE, const D3D10DDIARG_CREATERENDERTARGETVIEW*,
                                     D3D10DDI_HRENDERTARGETVIEW, D3D10DDI_HRTRENDERTARGETVIEW);
void APIENTRY DestroyRenderTargetView(D3D10DDI_HDEVICE, D3D10DDI_HRENDERTARGETVIEW);
SIZE_T APIENTRY CalcPrivateDepthStencilViewSize(D3D10DDI_HDEVICE,
                                                const D3D11DDIARG_CREATEDEPTHSTENCILVIEW*);
void APIENTRY CreateDepthStencilView(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATEDEPTHSTENCILVIEW*,
                                     D3D10DDI_HDEPTHSTENCILVIEW, D3D10DDI_HRTDEPTHSTENCILVIEW);
void APIENTRY DestroyDepthStencilView(D3D10DDI_HDEVICE, D3D10DDI_HDEPTHSTENCILVIEW);
SIZE_T APIENTRY CalcPrivateUnorderedAccessViewSize(D3D10DDI_HDEVICE,
                                                   const D3D11DDIARG_CREATEUNORDEREDACCESSVIEW*);
void APIENTRY CreateUnorderedAccessView(D3D10DDI_HDEVICE,
                                        const D3D11DDIARG_CREATEUNORDEREDACCESSVIEW*,
                                        D3D11DDI_HUNORDEREDACCESSVIEW,
                                        D3D11DDI_HRTUNORDEREDACCESSVIEW);
void APIENTRY DestroyUnorderedAccessView(D3D10DDI_HDEVICE, D3D11DDI_HUNORDEREDACCESSVIEW);
SIZE_T APIENTRY CalcPrivateElementLayoutSize(D3D10DDI_HDEVICE,
                                             const D3D10DDIARG_CREATEELEMENTLAYOUT*);
void APIENTRY CreateElementLayout(D3D10DDI_HDEVICE, const D3D10DDIARG_CREATEELEMENTLAYOUT*,
                                  D3D10DDI_HELEMENTLAYOUT, D3D10DDI_HRTELEMENTLAYOUT);
void APIENTRY DestroyElementLayout(D3D10DDI_HDEVICE, D3D10DDI_HELEMENTLAYOUT);
SIZE_T APIENTRY CalcPrivateBlendStateSize(D3D10DDI_HDEVICE, const D3D10_1_DDI_BLEND_DESC*);
void APIENTRY CreateBlendState(D3D10DDI_HDEVICE, const D3D10_1_DDI_BLEND_DESC*,
                               D3D10DDI_HBLENDSTATE, D3D10DDI_HRTBLENDSTATE);
void APIENTRY DestroyBlendState(D3D10DDI_HDEVICE, D3D10DDI_HBLENDSTATE);
SIZE_T APIENTRY CalcPrivateDepthStencilStateSize(D3D10DDI_HDEVICE,
                                                 const D3D10_DDI_DEPTH_STENCIL_DESC*);
void APIENTRY CreateDepthStencilState(D3D10DDI_HDEVICE, const D3D10_DDI_DEPTH_STENCIL_DESC*,
                                      D3D10DDI_HDEPTHSTENCILSTATE, D3D10DDI_HRTDEPTHSTENCILSTATE);
void APIENTRY DestroyDepthStencilState(D3D10DDI_HDEVICE, D3D10DDI_HDEPTHSTENCILSTATE);
SIZE_T APIENTRY CalcPrivateRasterizerStateSize(D3D10DDI_HDEVICE, const D3D10_DDI_RASTERIZER_DESC*);
void APIENTRY CreateRasterizerState(D3D10DDI_HDEVICE, const D3D10_DDI_RASTERIZER_DESC*,
                                    D3D10DDI_HRASTERIZERSTATE, D3D10DDI_HRTRASTERIZERSTATE);
void APIENTRY DestroyRasterizerState(D3D10DDI_HDEVICE, D3D10DDI_HRASTERIZERSTATE);
SIZE_T APIENTRY CalcPrivateShaderSize(D3D10DDI_HDEVICE, const UINT*,
                                      const D3D11DDIARG_STAGE_IO_SIGNATURES*);
SIZE_T APIENTRY CalcPrivateTessellationShaderSize(D3D10DDI_HDEVICE, const UINT*,
                                                  const D3D11DDIARG_TESSELLATION_IO_SIGNATURES*);
void APIENTRY CreateVertexShader(D3D10DDI_HDEVICE, const UINT*, D3D10DDI_HSHADER,
                                 D3D10DDI_HRTSHADER, const D3D11DDIARG_STAGE_IO_SIGNATURES*);
void APIENTRY CreateGeometryShader(D3D10DDI_HDEVICE, const UINT*, D3D10DDI_HSHADER,
                                   D3D10DDI_HRTSHADER, const D3D11DDIARG_STAGE_IO_SIGNATURES*);
void APIENTRY CreatePixelShader(D3D10DDI_HDEVICE, const UINT*, D3D10DDI_HSHADER, D3D10DDI_HRTSHADER,
                                const D3D11DDIARG_STAGE_IO_SIGNATURES*);
void APIENTRY CreateHullShader(D3D10DDI_HDEVICE, const UINT*, D3D10DDI_HSHADER, D3D10DDI_HRTSHADER,
                               const D3D11DDIARG_TESSELLATION_IO_SIGNATURES*);
void APIENTRY CreateDomainShader(D3D10DDI_HDEVICE, const UINT*, D3D10DDI_HSHADER,
                                 D3D10DDI_HRTSHADER, const D3D11DDIARG_TESSELLATION_IO_SIGNATURES*);
void APIENTRY CreateComputeShader(D3D10DDI_HDEVICE, const UINT*, D3D10DDI_HSHADER,
                                  D3D10DDI_HRTSHADER);
void APIENTRY DestroyShader(D3D10DDI_HDEVICE, D3D10DDI_HSHADER);
SIZE_T APIENTRY CalcPrivateSamplerSize(D3D10DDI_HDEVICE, const D3D10_DDI_SAMPLER_DESC*);
void APIENTRY CreateSampler(D3D10DDI_HDEVICE, const D3D10_DDI_SAMPLER_DESC*, D3D10DDI_HSAMPLER,
                            D3D10DDI_HRTSAMPLER);
void APIENTRY DestroySampler(D3D10DDI_HDEVICE, D3D10DDI_HSAMPLER);
SIZE_T APIENTRY CalcPrivateQuerySize(D3D10DDI_HDEVICE, const D3D10DDIARG_CREATEQUERY*);
void APIENTRY CreateQuery(D3D10DDI_HDEVICE, const D3D10DDIARG_CREATEQUERY*, D3D10DDI_HQUERY,
                          D3D10DDI_HRTQUERY);
void APIENTRY DestroyQuery(D3D10DDI_HDEVICE, D3D10DDI_HQUERY);

void APIENTRY DcCreateResource(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATERESOURCE*,
                               D3D10DDI_HRESOURCE, D3D10DDI_HRTRESOURCE);
void APIENTRY DcCreateShaderResourceView(D3D10DDI_HDEVICE,
                                         const D3D11DDIARG_CREATESHADERRESOURCEVIEW*,
                                         D3D10DDI_HSHADERRESOURCEVIEW,
                                         D3D10DDI_HRTSHADERRESOURCEVIEW);
void APIENTRY DcCreateRenderTargetView(D3D10DDI_HDEVICE, const D3D10DDIARG_CREATERENDERTARGETVIEW*,
                                       D3D10DDI_HRENDERTARGETVIEW, D3D10DDI_HRTRENDERTARGETVIEW);
void APIENTRY DcCreateDepthStencilView(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATEDEPTHSTENCILVIEW*,
                                       D3D10DDI_HDEPTHSTENCILVIEW, D3D10DDI_HRTDEPTHSTENCILVIEW);
void APIENTRY DcCreateUnorderedAccessView(D3D10DDI_HDEVICE,
                                          const D3D11DDIARG_CREATEUNORDEREDACCESSVIEW*,
                                          D3D11DDI_HUNORDEREDACCESSVIEW,
                                          D3D11DDI_HRTUNORDEREDACCESSVIEW);
void APIENTRY DcCreateElementLayout(D3D10DDI_HDEVICE, const D3D10DDIARG_CREATEELEMENTLAYOUT*,
                                    D3D10DDI_HELEMENTLAYOUT, D3D10DDI_HRTELEMENTLAYOUT);
void APIENTRY DcCreateBlendState(D3D10DDI_HDEVICE, const D3D10_1_DDI_BLEND_DESC*,
                                 D3D10DDI_HBLENDSTATE, D3D10DDI_HRTBLENDSTATE);
void APIENTRY DcCreateDepthStencilState(D3D10DDI_HDEVICE, const D3D10_DDI_DEPTH_STENCIL_DESC*,
                                        D3D10DDI_HDEPTHSTENCILSTATE, D3D10DDI_HRTDEPTHSTENCILSTATE);
void APIENTRY DcCreateRasterizerState(D3D10DDI_HDEVICE, const D3D10_DDI_RASTERIZER_DESC*,
                                      D3D10DDI_HRASTERIZERSTATE, D3D10DDI_HRTRASTERIZERSTATE);
void APIENTRY DcCreateSampler(D3D10DDI_HDEVICE, const D3D10_DDI_SAMPLER_DESC*, D3D10DDI_HSAMPLER,
                              D3D10DDI_HRTSAMPLER);
void APIENTRY DcCreateQuery(D3D10DDI_HDEVICE, const D3D10DDIARG_CREATEQUERY*, D3D10DDI_HQUERY,
                            D3D10DDI_HRTQUERY);
void APIENTRY DcCreateVertexShader(D3D10DDI_HDEVICE, const UINT*, D3D10DDI_HSHADER,
                                   D3D10DDI_HRTSHADER, const D3D11DDIARG_STAGE_IO_SIGNATURES*);
void APIENTRY DcCreateGeometryShader(D3D10DDI_HDEVICE, const UINT*, D3D10DDI_HSHADER,
                                     D3D10DDI_HRTSHADER, const D3D11DDIARG_STAGE_IO_SIGNATURES*);
void APIENTRY DcCreatePixelShader(D3D10DDI_HDEVICE, const UINT*, D3D10DDI_HSHADER,
                                  D3D10DDI_HRTSHADER, const D3D11DDIARG_STAGE_IO_SIGNATURES*);
void APIENTRY DcCreateHullShader(D3D10DDI_HDEVICE, const UINT*, D3D10DDI_HSHADER,
                                 D3D10DDI_HRTSHADER, const D3D11DDIARG_TESSELLATION_IO_SIGNATURES*);
void APIENTRY DcCreateDomainShader(D3D10DDI_HDEVICE, const UINT*, D3D10DDI_HSHADER,
                                   D3D10DDI_HRTSHADER,
                                   const D3D11DDIARG_TESSELLATION_IO_SIGNATURES*);
void APIENTRY DcCreateComputeShader(D3D10DDI_HDEVICE, const UINT*, D3D10DDI_HSHADER,
                                    D3D10DDI_HRTSHADER);
void APIENTRY DcDestroyResource(D3D10DDI_HDEVICE, D3D10DDI_HRESOURCE);
void APIENTRY DcDestroyShaderResourceView(D3D10DDI_HDEVICE, D3D10DDI_HSHADERRESOURCEVIEW);
void APIENTRY DcDestroyRenderTargetView(D3D10DDI_HDEVICE, D3D10DDI_HRENDERTARGETVIEW);
void APIENTRY DcDestroyDepthStencilView(D3D10DDI_HDEVICE, D3D10DDI_HDEPTHSTENCILVIEW);
void APIENTRY DcDestroyUnorderedAccessView(D3D10DDI_HDEVICE, D3D11DDI_HUNORDEREDACCESSVIEW);
void APIENTRY DcDestroyElementLayout(D3D10DDI_HDEVICE, D3D10DDI_HELEMENTLAYOUT);
void APIENTRY DcDestroyBlendState(D3D10DDI_HDEVICE, D3D10DDI_HBLENDSTATE);
void APIENTRY DcDestroyDepthStencilState(D3D10DDI_HDEVICE, D3D10DDI_HDEPTHSTENCILSTATE);
void APIENTRY DcDestroyRasterizerState(D3D10DDI_HDEVICE, D3D10DDI_HRASTERIZERSTATE);
void APIENTRY DcDestroySampler(D3D10DDI_HDEVICE, D3D10DDI_HSAMPLER);
void APIENTRY DcDestroyShader(D3D10DDI_HDEVICE, D3D10DDI_HSHADER);
void APIENTRY DcDestroyQuery(D3D10DDI_HDEVICE, D3D10DDI_HQUERY);

}  // namespace cltrace::refdriver

#endif  // CLTRACE_REFDRIVER_INTERNAL_TABLES_H_
