// Microsoft's function tables transcribed from Microsoft's pages (the MicrosoftDocs
// windows-driver-docs-ddi repository), independent of ddi/ddi_catalog.txt, so tests can hold the
// generated ddi_abi.h to Microsoft rather than to the catalog. Each list is the table's members
// in Microsoft's order, without the `pfn` prefix: slot i of the table is the i-th entry.
// Test code only (header-only, no dependencies).
#ifndef CLTRACE_DDI_TESTING_MS_TABLES_H_
#define CLTRACE_DDI_TESTING_MS_TABLES_H_

// clang-format off

// D3D11DDI_DEVICEFUNCS, 150 slots: the syntax block of
// wdk-ddi-src/content/d3d10umddi/ns-d3d10umddi-d3d11ddi_devicefuncs.md (repository commit
// 388f7c952f; today's page adds the `#ifdef D3D10PSGP` pair ResetPrimitiveID /
// SetVertexPipelineOutput, which normal builds do not have).
#define CLTRACE_MS_D3D11DDI_DEVICEFUNCS(X) \
  X(DefaultConstantBufferUpdateSubresourceUP) \
  X(VsSetConstantBuffers) \
  X(PsSetShaderResources) \
  X(PsSetShader) \
  X(PsSetSamplers) \
  X(VsSetShader) \
  X(DrawIndexed) \
  X(Draw) \
  X(DynamicIABufferMapNoOverwrite) \
  X(DynamicIABufferUnmap) \
  X(DynamicConstantBufferMapDiscard) \
  X(DynamicIABufferMapDiscard) \
  X(DynamicConstantBufferUnmap) \
  X(PsSetConstantBuffers) \
  X(IaSetInputLayout) \
  X(IaSetVertexBuffers) \
  X(IaSetIndexBuffer) \
  X(DrawIndexedInstanced) \
  X(DrawInstanced) \
  X(DynamicResourceMapDiscard) \
  X(DynamicResourceUnmap) \
  X(GsSetConstantBuffers) \
  X(GsSetShader) \
  X(IaSetTopology) \
  X(StagingResourceMap) \
  X(StagingResourceUnmap) \
  X(VsSetShaderResources) \
  X(VsSetSamplers) \
  X(GsSetShaderResources) \
  X(GsSetSamplers) \
  X(SetRenderTargets) \
  X(ShaderResourceViewReadAfterWriteHazard) \
  X(ResourceReadAfterWriteHazard) \
  X(SetBlendState) \
  X(SetDepthStencilState) \
  X(SetRasterizerState) \
  X(QueryEnd) \
  X(QueryBegin) \
  X(ResourceCopyRegion) \
  X(ResourceUpdateSubresourceUP) \
  X(SoSetTargets) \
  X(DrawAuto) \
  X(SetViewports) \
  X(SetScissorRects) \
  X(ClearRenderTargetView) \
  X(ClearDepthStencilView) \
  X(SetPredication) \
  X(QueryGetData) \
  X(Flush) \
  X(GenMips) \
  X(ResourceCopy) \
  X(ResourceResolveSubresource) \
  X(ResourceMap) \
  X(ResourceUnmap) \
  X(ResourceIsStagingBusy) \
  X(RelocateDeviceFuncs) \
  X(CalcPrivateResourceSize) \
  X(CalcPrivateOpenedResourceSize) \
  X(CreateResource) \
  X(OpenResource) \
  X(DestroyResource) \
  X(CalcPrivateShaderResourceViewSize) \
  X(CreateShaderResourceView) \
  X(DestroyShaderResourceView) \
  X(CalcPrivateRenderTargetViewSize) \
  X(CreateRenderTargetView) \
  X(DestroyRenderTargetView) \
  X(CalcPrivateDepthStencilViewSize) \
  X(CreateDepthStencilView) \
  X(DestroyDepthStencilView) \
  X(CalcPrivateElementLayoutSize) \
  X(CreateElementLayout) \
  X(DestroyElementLayout) \
  X(CalcPrivateBlendStateSize) \
  X(CreateBlendState) \
  X(DestroyBlendState) \
  X(CalcPrivateDepthStencilStateSize) \
  X(CreateDepthStencilState) \
  X(DestroyDepthStencilState) \
  X(CalcPrivateRasterizerStateSize) \
  X(CreateRasterizerState) \
  X(DestroyRasterizerState) \
  X(CalcPrivateShaderSize) \
  X(CreateVertexShader) \
  X(CreateGeometryShader) \
  X(CreatePixelShader) \
  X(CalcPrivateGeometryShaderWithStreamOutput) \
  X(CreateGeometryShaderWithStreamOutput) \
  X(DestroyShader) \
  X(CalcPrivateSamplerSize) \
  X(CreateSampler) \
  X(DestroySampler) \
  X(CalcPrivateQuerySize) \
  X(CreateQuery) \
  X(DestroyQuery) \
  X(CheckFormatSupport) \
  X(CheckMultisampleQualityLevels) \
  X(CheckCounterInfo) \
  X(CheckCounter) \
  X(DestroyDevice) \
  X(SetTextFilterSize) \
  X(ResourceConvert) \
  X(ResourceConvertRegion) \
  X(DrawIndexedInstancedIndirect) \
  X(DrawInstancedIndirect) \
  X(CommandListExecute) \
  X(HsSetShaderResources) \
  X(HsSetShader) \
  X(HsSetSamplers) \
  X(HsSetConstantBuffers) \
  X(DsSetShaderResources) \
  X(DsSetShader) \
  X(DsSetSamplers) \
  X(DsSetConstantBuffers) \
  X(CreateHullShader) \
  X(CreateDomainShader) \
  X(CheckDeferredContextHandleSizes) \
  X(CalcDeferredContextHandleSize) \
  X(CalcPrivateDeferredContextSize) \
  X(CreateDeferredContext) \
  X(AbandonCommandList) \
  X(CalcPrivateCommandListSize) \
  X(CreateCommandList) \
  X(DestroyCommandList) \
  X(CalcPrivateTessellationShaderSize) \
  X(PsSetShaderWithIfaces) \
  X(VsSetShaderWithIfaces) \
  X(GsSetShaderWithIfaces) \
  X(HsSetShaderWithIfaces) \
  X(DsSetShaderWithIfaces) \
  X(CsSetShaderWithIfaces) \
  X(CreateComputeShader) \
  X(CsSetShader) \
  X(CsSetShaderResources) \
  X(CsSetSamplers) \
  X(CsSetConstantBuffers) \
  X(CalcPrivateUnorderedAccessViewSize) \
  X(CreateUnorderedAccessView) \
  X(DestroyUnorderedAccessView) \
  X(ClearUnorderedAccessViewUint) \
  X(ClearUnorderedAccessViewFloat) \
  X(CsSetUnorderedAccessViews) \
  X(Dispatch) \
  X(DispatchIndirect) \
  X(SetResourceMinLOD) \
  X(CopyStructureCount) \
  X(RecycleCommandList) \
  X(RecycleCreateCommandList) \
  X(RecycleCreateDeferredContext) \
  X(RecycleDestroyCommandList)
inline constexpr int kMsD3D11DeviceFuncsSlots = 150;

// DXGI_DDI_BASE_FUNCTIONS, 7 slots: wdk-ddi-src/content/dxgiddi/ns-dxgiddi-dxgi_ddi_base_functions.md.
#define CLTRACE_MS_DXGI_DDI_BASE_FUNCTIONS(X) \
  X(Present) \
  X(GetGammaCaps) \
  X(SetDisplayMode) \
  X(SetResourcePriority) \
  X(QueryResourceResidency) \
  X(RotateResourceIdentities) \
  X(Blt)
inline constexpr int kMsDxgiBaseFunctionsSlots = 7;

// D3DDDI_DEVICECALLBACKS as a Direct3D 11.0 (D3D_UMD_INTERFACE_VERSION_WIN7) driver sees it, 22
// slots: the members of the syntax block of
// wdk-ddi-src/content/d3dumddi/ns-d3dumddi-_d3dddi_devicecallbacks.md (commit 388f7c952f) before
// its first `#if (D3D_UMD_INTERFACE_VERSION >= D3D_UMD_INTERFACE_VERSION_WIN8)`.
#define CLTRACE_MS_D3DDDI_DEVICECALLBACKS(X) \
  X(AllocateCb) \
  X(DeallocateCb) \
  X(SetPriorityCb) \
  X(QueryResidencyCb) \
  X(SetDisplayModeCb) \
  X(PresentCb) \
  X(RenderCb) \
  X(LockCb) \
  X(UnlockCb) \
  X(EscapeCb) \
  X(CreateOverlayCb) \
  X(UpdateOverlayCb) \
  X(FlipOverlayCb) \
  X(DestroyOverlayCb) \
  X(CreateContextCb) \
  X(DestroyContextCb) \
  X(CreateSynchronizationObjectCb) \
  X(DestroySynchronizationObjectCb) \
  X(WaitForSynchronizationObjectCb) \
  X(SignalSynchronizationObjectCb) \
  X(SetAsyncCallbacksCb) \
  X(SetDisplayPrivateDriverFormatCb)
inline constexpr int kMsD3dDdiDeviceCallbacksSlots = 22;

// clang-format on

#endif  // CLTRACE_DDI_TESTING_MS_TABLES_H_
