// Microsoft's function tables, slot by slot, as X-macro lists X(TABLE, INDEX, MEMBER) in
// Microsoft's order: transcribed from the C syntax blocks of the MicrosoftDocs
// windows-driver-docs-ddi pages named above each list, independent of ddi/ddi_catalog.txt, so
// tests hold the generated ddi_abi.h to Microsoft rather than to the catalog.
// - D3D11DDI_DEVICEFUNCS: 150 slots, without the `#ifdef D3D10PSGP` pair a later page adds.
// - D3DDDI_DEVICECALLBACKS: the 22 members a D3D11.0 driver sees (it is built with
//   D3D_UMD_INTERFACE_VERSION_WIN7): the syntax block up to its first `#if ... >= WIN8`; later
//   runtimes pass a longer table of which this is the prefix.
//
// ddi/ms_layout_test.cc expands them into compile-time slot checks and compares them with the
// catalog's tables; other tests may expand them too (e.g. to call every slot once).
//
// Thread-safety: macros only.
//
// Example:
//   #define NAME(table, index, member) #member,
//   const char* kSlots[] = {CLTRACE_MS_ADAPTERFUNCS(NAME)};
#ifndef CLTRACE_DDI_TESTING_MS_TABLES_H_
#define CLTRACE_DDI_TESTING_MS_TABLES_H_

// clang-format off

// D3D10_2DDI_ADAPTERFUNCS: 5 slots; MicrosoftDocs/windows-driver-docs-ddi,
// wdk-ddi-src/content/d3d10umddi/ns-d3d10umddi-d3d10_2ddi_adapterfuncs.md
// (syntax block of the first commit, 388f7c952f).
#define CLTRACE_MS_ADAPTERFUNCS(X) \
  X(D3D10_2DDI_ADAPTERFUNCS, 0, pfnCalcPrivateDeviceSize) \
  X(D3D10_2DDI_ADAPTERFUNCS, 1, pfnCreateDevice) \
  X(D3D10_2DDI_ADAPTERFUNCS, 2, pfnCloseAdapter) \
  X(D3D10_2DDI_ADAPTERFUNCS, 3, pfnGetSupportedVersions) \
  X(D3D10_2DDI_ADAPTERFUNCS, 4, pfnGetCaps)

// D3D11DDI_CORELAYER_DEVICECALLBACKS: 40 slots; MicrosoftDocs/windows-driver-docs-ddi,
// wdk-ddi-src/content/d3d10umddi/ns-d3d10umddi-d3d11ddi_corelayer_devicecallbacks.md
// (syntax block of the first commit, 388f7c952f).
#define CLTRACE_MS_CORELAYER_DEVICECALLBACKS(X) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 0, pfnSetErrorCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 1, pfnStateVsConstBufCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 2, pfnStatePsSrvCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 3, pfnStatePsShaderCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 4, pfnStatePsSamplerCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 5, pfnStateVsShaderCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 6, pfnStatePsConstBufCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 7, pfnStateIaInputLayoutCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 8, pfnStateIaVertexBufCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 9, pfnStateIaIndexBufCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 10, pfnStateGsConstBufCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 11, pfnStateGsShaderCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 12, pfnStateIaPrimitiveTopologyCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 13, pfnStateVsSrvCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 14, pfnStateVsSamplerCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 15, pfnStateGsSrvCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 16, pfnStateGsSamplerCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 17, pfnStateOmRenderTargetsCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 18, pfnStateOmBlendStateCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 19, pfnStateOmDepthStateCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 20, pfnStateRsRastStateCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 21, pfnStateSoTargetsCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 22, pfnStateRsViewportsCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 23, pfnStateRsScissorCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 24, pfnDisableDeferredStagingResourceDestruction) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 25, pfnStateTextFilterSizeCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 26, pfnStateHsSrvCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 27, pfnStateHsShaderCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 28, pfnStateHsSamplerCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 29, pfnStateHsConstBufCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 30, pfnStateDsSrvCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 31, pfnStateDsShaderCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 32, pfnStateDsSamplerCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 33, pfnStateDsConstBufCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 34, pfnPerformAmortizedProcessingCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 35, pfnStateCsSrvCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 36, pfnStateCsUavCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 37, pfnStateCsShaderCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 38, pfnStateCsSamplerCb) \
  X(D3D11DDI_CORELAYER_DEVICECALLBACKS, 39, pfnStateCsConstBufCb)

// D3D11DDI_DEVICEFUNCS: 150 slots; MicrosoftDocs/windows-driver-docs-ddi,
// wdk-ddi-src/content/d3d10umddi/ns-d3d10umddi-d3d11ddi_devicefuncs.md
// (syntax block of the first commit, 388f7c952f).
#define CLTRACE_MS_DEVICEFUNCS(X) \
  X(D3D11DDI_DEVICEFUNCS, 0, pfnDefaultConstantBufferUpdateSubresourceUP) \
  X(D3D11DDI_DEVICEFUNCS, 1, pfnVsSetConstantBuffers) \
  X(D3D11DDI_DEVICEFUNCS, 2, pfnPsSetShaderResources) \
  X(D3D11DDI_DEVICEFUNCS, 3, pfnPsSetShader) \
  X(D3D11DDI_DEVICEFUNCS, 4, pfnPsSetSamplers) \
  X(D3D11DDI_DEVICEFUNCS, 5, pfnVsSetShader) \
  X(D3D11DDI_DEVICEFUNCS, 6, pfnDrawIndexed) \
  X(D3D11DDI_DEVICEFUNCS, 7, pfnDraw) \
  X(D3D11DDI_DEVICEFUNCS, 8, pfnDynamicIABufferMapNoOverwrite) \
  X(D3D11DDI_DEVICEFUNCS, 9, pfnDynamicIABufferUnmap) \
  X(D3D11DDI_DEVICEFUNCS, 10, pfnDynamicConstantBufferMapDiscard) \
  X(D3D11DDI_DEVICEFUNCS, 11, pfnDynamicIABufferMapDiscard) \
  X(D3D11DDI_DEVICEFUNCS, 12, pfnDynamicConstantBufferUnmap) \
  X(D3D11DDI_DEVICEFUNCS, 13, pfnPsSetConstantBuffers) \
  X(D3D11DDI_DEVICEFUNCS, 14, pfnIaSetInputLayout) \
  X(D3D11DDI_DEVICEFUNCS, 15, pfnIaSetVertexBuffers) \
  X(D3D11DDI_DEVICEFUNCS, 16, pfnIaSetIndexBuffer) \
  X(D3D11DDI_DEVICEFUNCS, 17, pfnDrawIndexedInstanced) \
  X(D3D11DDI_DEVICEFUNCS, 18, pfnDrawInstanced) \
  X(D3D11DDI_DEVICEFUNCS, 19, pfnDynamicResourceMapDiscard) \
  X(D3D11DDI_DEVICEFUNCS, 20, pfnDynamicResourceUnmap) \
  X(D3D11DDI_DEVICEFUNCS, 21, pfnGsSetConstantBuffers) \
  X(D3D11DDI_DEVICEFUNCS, 22, pfnGsSetShader) \
  X(D3D11DDI_DEVICEFUNCS, 23, pfnIaSetTopology) \
  X(D3D11DDI_DEVICEFUNCS, 24, pfnStagingResourceMap) \
  X(D3D11DDI_DEVICEFUNCS, 25, pfnStagingResourceUnmap) \
  X(D3D11DDI_DEVICEFUNCS, 26, pfnVsSetShaderResources) \
  X(D3D11DDI_DEVICEFUNCS, 27, pfnVsSetSamplers) \
  X(D3D11DDI_DEVICEFUNCS, 28, pfnGsSetShaderResources) \
  X(D3D11DDI_DEVICEFUNCS, 29, pfnGsSetSamplers) \
  X(D3D11DDI_DEVICEFUNCS, 30, pfnSetRenderTargets) \
  X(D3D11DDI_DEVICEFUNCS, 31, pfnShaderResourceViewReadAfterWriteHazard) \
  X(D3D11DDI_DEVICEFUNCS, 32, pfnResourceReadAfterWriteHazard) \
  X(D3D11DDI_DEVICEFUNCS, 33, pfnSetBlendState) \
  X(D3D11DDI_DEVICEFUNCS, 34, pfnSetDepthStencilState) \
  X(D3D11DDI_DEVICEFUNCS, 35, pfnSetRasterizerState) \
  X(D3D11DDI_DEVICEFUNCS, 36, pfnQueryEnd) \
  X(D3D11DDI_DEVICEFUNCS, 37, pfnQueryBegin) \
  X(D3D11DDI_DEVICEFUNCS, 38, pfnResourceCopyRegion) \
  X(D3D11DDI_DEVICEFUNCS, 39, pfnResourceUpdateSubresourceUP) \
  X(D3D11DDI_DEVICEFUNCS, 40, pfnSoSetTargets) \
  X(D3D11DDI_DEVICEFUNCS, 41, pfnDrawAuto) \
  X(D3D11DDI_DEVICEFUNCS, 42, pfnSetViewports) \
  X(D3D11DDI_DEVICEFUNCS, 43, pfnSetScissorRects) \
  X(D3D11DDI_DEVICEFUNCS, 44, pfnClearRenderTargetView) \
  X(D3D11DDI_DEVICEFUNCS, 45, pfnClearDepthStencilView) \
  X(D3D11DDI_DEVICEFUNCS, 46, pfnSetPredication) \
  X(D3D11DDI_DEVICEFUNCS, 47, pfnQueryGetData) \
  X(D3D11DDI_DEVICEFUNCS, 48, pfnFlush) \
  X(D3D11DDI_DEVICEFUNCS, 49, pfnGenMips) \
  X(D3D11DDI_DEVICEFUNCS, 50, pfnResourceCopy) \
  X(D3D11DDI_DEVICEFUNCS, 51, pfnResourceResolveSubresource) \
  X(D3D11DDI_DEVICEFUNCS, 52, pfnResourceMap) \
  X(D3D11DDI_DEVICEFUNCS, 53, pfnResourceUnmap) \
  X(D3D11DDI_DEVICEFUNCS, 54, pfnResourceIsStagingBusy) \
  X(D3D11DDI_DEVICEFUNCS, 55, pfnRelocateDeviceFuncs) \
  X(D3D11DDI_DEVICEFUNCS, 56, pfnCalcPrivateResourceSize) \
  X(D3D11DDI_DEVICEFUNCS, 57, pfnCalcPrivateOpenedResourceSize) \
  X(D3D11DDI_DEVICEFUNCS, 58, pfnCreateResource) \
  X(D3D11DDI_DEVICEFUNCS, 59, pfnOpenResource) \
  X(D3D11DDI_DEVICEFUNCS, 60, pfnDestroyResource) \
  X(D3D11DDI_DEVICEFUNCS, 61, pfnCalcPrivateShaderResourceViewSize) \
  X(D3D11DDI_DEVICEFUNCS, 62, pfnCreateShaderResourceView) \
  X(D3D11DDI_DEVICEFUNCS, 63, pfnDestroyShaderResourceView) \
  X(D3D11DDI_DEVICEFUNCS, 64, pfnCalcPrivateRenderTargetViewSize) \
  X(D3D11DDI_DEVICEFUNCS, 65, pfnCreateRenderTargetView) \
  X(D3D11DDI_DEVICEFUNCS, 66, pfnDestroyRenderTargetView) \
  X(D3D11DDI_DEVICEFUNCS, 67, pfnCalcPrivateDepthStencilViewSize) \
  X(D3D11DDI_DEVICEFUNCS, 68, pfnCreateDepthStencilView) \
  X(D3D11DDI_DEVICEFUNCS, 69, pfnDestroyDepthStencilView) \
  X(D3D11DDI_DEVICEFUNCS, 70, pfnCalcPrivateElementLayoutSize) \
  X(D3D11DDI_DEVICEFUNCS, 71, pfnCreateElementLayout) \
  X(D3D11DDI_DEVICEFUNCS, 72, pfnDestroyElementLayout) \
  X(D3D11DDI_DEVICEFUNCS, 73, pfnCalcPrivateBlendStateSize) \
  X(D3D11DDI_DEVICEFUNCS, 74, pfnCreateBlendState) \
  X(D3D11DDI_DEVICEFUNCS, 75, pfnDestroyBlendState) \
  X(D3D11DDI_DEVICEFUNCS, 76, pfnCalcPrivateDepthStencilStateSize) \
  X(D3D11DDI_DEVICEFUNCS, 77, pfnCreateDepthStencilState) \
  X(D3D11DDI_DEVICEFUNCS, 78, pfnDestroyDepthStencilState) \
  X(D3D11DDI_DEVICEFUNCS, 79, pfnCalcPrivateRasterizerStateSize) \
  X(D3D11DDI_DEVICEFUNCS, 80, pfnCreateRasterizerState) \
  X(D3D11DDI_DEVICEFUNCS, 81, pfnDestroyRasterizerState) \
  X(D3D11DDI_DEVICEFUNCS, 82, pfnCalcPrivateShaderSize) \
  X(D3D11DDI_DEVICEFUNCS, 83, pfnCreateVertexShader) \
  X(D3D11DDI_DEVICEFUNCS, 84, pfnCreateGeometryShader) \
  X(D3D11DDI_DEVICEFUNCS, 85, pfnCreatePixelShader) \
  X(D3D11DDI_DEVICEFUNCS, 86, pfnCalcPrivateGeometryShaderWithStreamOutput) \
  X(D3D11DDI_DEVICEFUNCS, 87, pfnCreateGeometryShaderWithStreamOutput) \
  X(D3D11DDI_DEVICEFUNCS, 88, pfnDestroyShader) \
  X(D3D11DDI_DEVICEFUNCS, 89, pfnCalcPrivateSamplerSize) \
  X(D3D11DDI_DEVICEFUNCS, 90, pfnCreateSampler) \
  X(D3D11DDI_DEVICEFUNCS, 91, pfnDestroySampler) \
  X(D3D11DDI_DEVICEFUNCS, 92, pfnCalcPrivateQuerySize) \
  X(D3D11DDI_DEVICEFUNCS, 93, pfnCreateQuery) \
  X(D3D11DDI_DEVICEFUNCS, 94, pfnDestroyQuery) \
  X(D3D11DDI_DEVICEFUNCS, 95, pfnCheckFormatSupport) \
  X(D3D11DDI_DEVICEFUNCS, 96, pfnCheckMultisampleQualityLevels) \
  X(D3D11DDI_DEVICEFUNCS, 97, pfnCheckCounterInfo) \
  X(D3D11DDI_DEVICEFUNCS, 98, pfnCheckCounter) \
  X(D3D11DDI_DEVICEFUNCS, 99, pfnDestroyDevice) \
  X(D3D11DDI_DEVICEFUNCS, 100, pfnSetTextFilterSize) \
  X(D3D11DDI_DEVICEFUNCS, 101, pfnResourceConvert) \
  X(D3D11DDI_DEVICEFUNCS, 102, pfnResourceConvertRegion) \
  X(D3D11DDI_DEVICEFUNCS, 103, pfnDrawIndexedInstancedIndirect) \
  X(D3D11DDI_DEVICEFUNCS, 104, pfnDrawInstancedIndirect) \
  X(D3D11DDI_DEVICEFUNCS, 105, pfnCommandListExecute) \
  X(D3D11DDI_DEVICEFUNCS, 106, pfnHsSetShaderResources) \
  X(D3D11DDI_DEVICEFUNCS, 107, pfnHsSetShader) \
  X(D3D11DDI_DEVICEFUNCS, 108, pfnHsSetSamplers) \
  X(D3D11DDI_DEVICEFUNCS, 109, pfnHsSetConstantBuffers) \
  X(D3D11DDI_DEVICEFUNCS, 110, pfnDsSetShaderResources) \
  X(D3D11DDI_DEVICEFUNCS, 111, pfnDsSetShader) \
  X(D3D11DDI_DEVICEFUNCS, 112, pfnDsSetSamplers) \
  X(D3D11DDI_DEVICEFUNCS, 113, pfnDsSetConstantBuffers) \
  X(D3D11DDI_DEVICEFUNCS, 114, pfnCreateHullShader) \
  X(D3D11DDI_DEVICEFUNCS, 115, pfnCreateDomainShader) \
  X(D3D11DDI_DEVICEFUNCS, 116, pfnCheckDeferredContextHandleSizes) \
  X(D3D11DDI_DEVICEFUNCS, 117, pfnCalcDeferredContextHandleSize) \
  X(D3D11DDI_DEVICEFUNCS, 118, pfnCalcPrivateDeferredContextSize) \
  X(D3D11DDI_DEVICEFUNCS, 119, pfnCreateDeferredContext) \
  X(D3D11DDI_DEVICEFUNCS, 120, pfnAbandonCommandList) \
  X(D3D11DDI_DEVICEFUNCS, 121, pfnCalcPrivateCommandListSize) \
  X(D3D11DDI_DEVICEFUNCS, 122, pfnCreateCommandList) \
  X(D3D11DDI_DEVICEFUNCS, 123, pfnDestroyCommandList) \
  X(D3D11DDI_DEVICEFUNCS, 124, pfnCalcPrivateTessellationShaderSize) \
  X(D3D11DDI_DEVICEFUNCS, 125, pfnPsSetShaderWithIfaces) \
  X(D3D11DDI_DEVICEFUNCS, 126, pfnVsSetShaderWithIfaces) \
  X(D3D11DDI_DEVICEFUNCS, 127, pfnGsSetShaderWithIfaces) \
  X(D3D11DDI_DEVICEFUNCS, 128, pfnHsSetShaderWithIfaces) \
  X(D3D11DDI_DEVICEFUNCS, 129, pfnDsSetShaderWithIfaces) \
  X(D3D11DDI_DEVICEFUNCS, 130, pfnCsSetShaderWithIfaces) \
  X(D3D11DDI_DEVICEFUNCS, 131, pfnCreateComputeShader) \
  X(D3D11DDI_DEVICEFUNCS, 132, pfnCsSetShader) \
  X(D3D11DDI_DEVICEFUNCS, 133, pfnCsSetShaderResources) \
  X(D3D11DDI_DEVICEFUNCS, 134, pfnCsSetSamplers) \
  X(D3D11DDI_DEVICEFUNCS, 135, pfnCsSetConstantBuffers) \
  X(D3D11DDI_DEVICEFUNCS, 136, pfnCalcPrivateUnorderedAccessViewSize) \
  X(D3D11DDI_DEVICEFUNCS, 137, pfnCreateUnorderedAccessView) \
  X(D3D11DDI_DEVICEFUNCS, 138, pfnDestroyUnorderedAccessView) \
  X(D3D11DDI_DEVICEFUNCS, 139, pfnClearUnorderedAccessViewUint) \
  X(D3D11DDI_DEVICEFUNCS, 140, pfnClearUnorderedAccessViewFloat) \
  X(D3D11DDI_DEVICEFUNCS, 141, pfnCsSetUnorderedAccessViews) \
  X(D3D11DDI_DEVICEFUNCS, 142, pfnDispatch) \
  X(D3D11DDI_DEVICEFUNCS, 143, pfnDispatchIndirect) \
  X(D3D11DDI_DEVICEFUNCS, 144, pfnSetResourceMinLOD) \
  X(D3D11DDI_DEVICEFUNCS, 145, pfnCopyStructureCount) \
  X(D3D11DDI_DEVICEFUNCS, 146, pfnRecycleCommandList) \
  X(D3D11DDI_DEVICEFUNCS, 147, pfnRecycleCreateCommandList) \
  X(D3D11DDI_DEVICEFUNCS, 148, pfnRecycleCreateDeferredContext) \
  X(D3D11DDI_DEVICEFUNCS, 149, pfnRecycleDestroyCommandList)

// DXGI_DDI_BASE_FUNCTIONS: 7 slots; MicrosoftDocs/windows-driver-docs-ddi,
// wdk-ddi-src/content/dxgiddi/ns-dxgiddi-dxgi_ddi_base_functions.md
// (syntax block of the first commit, 388f7c952f).
#define CLTRACE_MS_DXGI_BASE_FUNCTIONS(X) \
  X(DXGI_DDI_BASE_FUNCTIONS, 0, pfnPresent) \
  X(DXGI_DDI_BASE_FUNCTIONS, 1, pfnGetGammaCaps) \
  X(DXGI_DDI_BASE_FUNCTIONS, 2, pfnSetDisplayMode) \
  X(DXGI_DDI_BASE_FUNCTIONS, 3, pfnSetResourcePriority) \
  X(DXGI_DDI_BASE_FUNCTIONS, 4, pfnQueryResourceResidency) \
  X(DXGI_DDI_BASE_FUNCTIONS, 5, pfnRotateResourceIdentities) \
  X(DXGI_DDI_BASE_FUNCTIONS, 6, pfnBlt)

// D3DDDI_DEVICECALLBACKS: 22 slots; MicrosoftDocs/windows-driver-docs-ddi,
// wdk-ddi-src/content/d3dumddi/ns-d3dumddi-_d3dddi_devicecallbacks.md
// (syntax block of the first commit, 388f7c952f).
#define CLTRACE_MS_DEVICECALLBACKS(X) \
  X(D3DDDI_DEVICECALLBACKS, 0, pfnAllocateCb) \
  X(D3DDDI_DEVICECALLBACKS, 1, pfnDeallocateCb) \
  X(D3DDDI_DEVICECALLBACKS, 2, pfnSetPriorityCb) \
  X(D3DDDI_DEVICECALLBACKS, 3, pfnQueryResidencyCb) \
  X(D3DDDI_DEVICECALLBACKS, 4, pfnSetDisplayModeCb) \
  X(D3DDDI_DEVICECALLBACKS, 5, pfnPresentCb) \
  X(D3DDDI_DEVICECALLBACKS, 6, pfnRenderCb) \
  X(D3DDDI_DEVICECALLBACKS, 7, pfnLockCb) \
  X(D3DDDI_DEVICECALLBACKS, 8, pfnUnlockCb) \
  X(D3DDDI_DEVICECALLBACKS, 9, pfnEscapeCb) \
  X(D3DDDI_DEVICECALLBACKS, 10, pfnCreateOverlayCb) \
  X(D3DDDI_DEVICECALLBACKS, 11, pfnUpdateOverlayCb) \
  X(D3DDDI_DEVICECALLBACKS, 12, pfnFlipOverlayCb) \
  X(D3DDDI_DEVICECALLBACKS, 13, pfnDestroyOverlayCb) \
  X(D3DDDI_DEVICECALLBACKS, 14, pfnCreateContextCb) \
  X(D3DDDI_DEVICECALLBACKS, 15, pfnDestroyContextCb) \
  X(D3DDDI_DEVICECALLBACKS, 16, pfnCreateSynchronizationObjectCb) \
  X(D3DDDI_DEVICECALLBACKS, 17, pfnDestroySynchronizationObjectCb) \
  X(D3DDDI_DEVICECALLBACKS, 18, pfnWaitForSynchronizationObjectCb) \
  X(D3DDDI_DEVICECALLBACKS, 19, pfnSignalSynchronizationObjectCb) \
  X(D3DDDI_DEVICECALLBACKS, 20, pfnSetAsyncCallbacksCb) \
  X(D3DDDI_DEVICECALLBACKS, 21, pfnSetDisplayPrivateDriverFormatCb)

// D3DDDI_ADAPTERCALLBACKS: 2 slots; MicrosoftDocs/windows-driver-docs-ddi,
// wdk-ddi-src/content/d3dumddi/ns-d3dumddi-_d3dddi_adaptercallbacks.md
// (syntax block of the first commit, 388f7c952f).
#define CLTRACE_MS_ADAPTERCALLBACKS(X) \
  X(D3DDDI_ADAPTERCALLBACKS, 0, pfnQueryAdapterInfoCb) \
  X(D3DDDI_ADAPTERCALLBACKS, 1, pfnGetMultisampleMethodListCb)

// clang-format on

#endif  // CLTRACE_DDI_TESTING_MS_TABLES_H_
