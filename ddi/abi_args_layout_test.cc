// Layouts of the argument structures, function types and values that the generated ddi_abi.h
// must share with Microsoft's headers (issue #14, audit items 1, 2, 5, 6, 11, 12, 14, 16, 17, 21),
// checked with the numbers of Microsoft's pages, not with what our own header says.
//
// Part 1 is plain C++17 against the generated header (static_assert only, no test framework),
// so it also compiles with mingw-w64 (x86_64-w64-mingw32, i686-w64-mingw32) where <windows.h>
// comes first: the x86-64 numbers are Microsoft's LLP64 layout, the 32-bit numbers the i686
// one. Part 2, compiled only inside the gtest binary, checks that the C compiler sees the same
// layouts as the C++ compiler (ddi_abi_c_test.c).
//
// Sources (MicrosoftDocs/windows-driver-docs-ddi, wdk-ddi-src/content/; member order from the
// C syntax blocks of the repository's first commit 388f7c952f, member lists at HEAD), one per
// structure below. Offsets follow from the declared order and the natural alignment the
// Windows ABIs use; the x86-64 and x86 sizes are those of ../shared/abi-audit.md where it
// gives them.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ddi/ddi_abi.h"

namespace cltrace::ddi::abi_layout {

constexpr bool k64 = sizeof(void*) == 8;
// Microsoft's offset on x86-64 or on x86.
constexpr size_t At(size_t x64, size_t x86) { return k64 ? x64 : x86; }

// ---- d3d10umddi/ns-d3d10umddi-d3d10ddiarg_openadapter.md (audit item 1) ------------------
// hRTAdapter, hAdapter, Interface, Version, const D3DDDI_ADAPTERCALLBACKS* pAdapterCallbacks,
// union { D3D10DDI_ADAPTERFUNCS* pAdapterFuncs; D3D10_2DDI_ADAPTERFUNCS* pAdapterFuncs_2; }.
static_assert(offsetof(D3D10DDIARG_OPENADAPTER, hRTAdapter) == 0);
static_assert(offsetof(D3D10DDIARG_OPENADAPTER, hAdapter) == At(8, 4));
static_assert(offsetof(D3D10DDIARG_OPENADAPTER, Interface) == At(16, 8));
static_assert(offsetof(D3D10DDIARG_OPENADAPTER, Version) == At(20, 12));
static_assert(offsetof(D3D10DDIARG_OPENADAPTER, pAdapterCallbacks) == At(24, 16));
static_assert(offsetof(D3D10DDIARG_OPENADAPTER, pAdapterFuncs) == At(32, 20));
static_assert(offsetof(D3D10DDIARG_OPENADAPTER, pAdapterFuncs_2) == At(32, 20));
static_assert(sizeof(D3D10DDIARG_OPENADAPTER) == At(40, 24));
static_assert(std::is_same_v<decltype(D3D10DDIARG_OPENADAPTER::pAdapterCallbacks),
                             const D3DDDI_ADAPTERCALLBACKS*>);
static_assert(
    std::is_same_v<decltype(D3D10DDIARG_OPENADAPTER::pAdapterFuncs_2), D3D10_2DDI_ADAPTERFUNCS*>);

// ---- d3dumddi/ns-d3dumddi-_d3dddi_adaptercallbacks.md (2018 syntax block) ----------------
static_assert(offsetof(D3DDDI_ADAPTERCALLBACKS, pfnQueryAdapterInfoCb) == 0);
static_assert(offsetof(D3DDDI_ADAPTERCALLBACKS, pfnGetMultisampleMethodListCb) == At(8, 4));
static_assert(sizeof(D3DDDI_ADAPTERCALLBACKS) == At(16, 8));
// d3dumddi/ns-d3dumddi-_d3dddicb_queryadapterinfo.md
static_assert(offsetof(D3DDDICB_QUERYADAPTERINFO, PrivateDriverDataSize) == At(8, 4));
static_assert(sizeof(D3DDDICB_QUERYADAPTERINFO) == At(16, 8));
// d3dumddi/ns-d3dumddi-_d3dddicb_getmultisamplemethodlist.md
static_assert(offsetof(D3DDDICB_GETMULTISAMPLEMETHODLIST, Format) == 12);
static_assert(offsetof(D3DDDICB_GETMULTISAMPLEMETHODLIST, pMethodList) == 16);
static_assert(offsetof(D3DDDICB_GETMULTISAMPLEMETHODLIST, MethodCount) == At(24, 20));
static_assert(sizeof(D3DDDICB_GETMULTISAMPLEMETHODLIST) == At(32, 24));

// ---- dxgiddi/ns-dxgiddi-dxgi_ddi_base_args.md (audit item 2) -----------------------------
// DXGI_DDI_BASE_CALLBACKS* pDXGIBaseCallbacks; union { pDXGIDDIBaseFunctions ... 6_1 }.
static_assert(offsetof(DXGI_DDI_BASE_ARGS, pDXGIBaseCallbacks) == 0);
static_assert(offsetof(DXGI_DDI_BASE_ARGS, pDXGIDDIBaseFunctions) == At(8, 4));
static_assert(offsetof(DXGI_DDI_BASE_ARGS, pDXGIDDIBaseFunctions2) == At(8, 4));
static_assert(offsetof(DXGI_DDI_BASE_ARGS, pDXGIDDIBaseFunctions6_1) == At(8, 4));
static_assert(sizeof(DXGI_DDI_BASE_ARGS) == At(16, 8));

// ---- d3d10umddi/ns-d3d10umddi-d3d10ddiarg_createdevice.md (audit items 2, 17) ------------
// hRTDevice, Interface, Version, pKTCallbacks, union{...DeviceFuncs}, hDrvDevice,
// DXGI_DDI_BASE_ARGS DXGIBaseDDI, hRTCoreLayer, union{...UMCallbacks}, Flags,
// ppfnRetrieveSubObject (11.1+ header).
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, hRTDevice) == 0);
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, Interface) == At(8, 4));
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, Version) == At(12, 8));
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, pKTCallbacks) == At(16, 12));
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, pDeviceFuncs) == At(24, 16));
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, p11DeviceFuncs) == At(24, 16));
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, pWDDM2_6DeviceFuncs) == At(24, 16));
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, hDrvDevice) == At(32, 20));
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, DXGIBaseDDI) == At(40, 24));
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, hRTCoreLayer) == At(56, 32));
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, pUMCallbacks) == At(64, 36));
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, p11UMCallbacks) == At(64, 36));
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, Flags) == At(72, 40));
static_assert(offsetof(D3D10DDIARG_CREATEDEVICE, ppfnRetrieveSubObject) == At(80, 44));
static_assert(sizeof(D3D10DDIARG_CREATEDEVICE) == At(88, 48));
static_assert(std::is_same_v<decltype(D3D10DDIARG_CREATEDEVICE::pKTCallbacks),
                             const D3DDDI_DEVICECALLBACKS*>);
static_assert(std::is_same_v<decltype(D3D10DDIARG_CREATEDEVICE::p11UMCallbacks),
                             const D3D11DDI_CORELAYER_DEVICECALLBACKS*>);
static_assert(std::is_same_v<decltype(D3D10DDIARG_CREATEDEVICE::ppfnRetrieveSubObject),
                             PFND3D10DDI_RETRIEVESUBOBJECT*>);

// ---- d3d10umddi/ns-d3d10umddi-d3d11ddiarg_createdeferredcontext.md (audit item 17) -------
// union{p11ContextFuncs, p11_1ContextFuncs, pWDDM1_3...2_6ContextFuncs}, hDrvContext,
// hRTCoreLayer, union{const p11UMCallbacks, pWDDM2_x UMCallbacks}, UINT Flags.
static_assert(offsetof(D3D11DDIARG_CREATEDEFERREDCONTEXT, p11ContextFuncs) == 0);
static_assert(offsetof(D3D11DDIARG_CREATEDEFERREDCONTEXT, p11_1ContextFuncs) == 0);
static_assert(offsetof(D3D11DDIARG_CREATEDEFERREDCONTEXT, hDrvContext) == At(8, 4));
static_assert(offsetof(D3D11DDIARG_CREATEDEFERREDCONTEXT, hRTCoreLayer) == At(16, 8));
static_assert(offsetof(D3D11DDIARG_CREATEDEFERREDCONTEXT, p11UMCallbacks) == At(24, 12));
static_assert(offsetof(D3D11DDIARG_CREATEDEFERREDCONTEXT, pWDDM2_6UMCallbacks) == At(24, 12));
static_assert(offsetof(D3D11DDIARG_CREATEDEFERREDCONTEXT, Flags) == At(32, 16));
static_assert(sizeof(D3D11DDIARG_CREATEDEFERREDCONTEXT) == At(40, 20));
static_assert(std::is_same_v<decltype(D3D11DDIARG_CREATEDEFERREDCONTEXT::p11UMCallbacks),
                             const D3D11DDI_CORELAYER_DEVICECALLBACKS*>);
static_assert(std::is_same_v<decltype(D3D11DDIARG_CREATEDEFERREDCONTEXT::Flags), UINT>);
static_assert(std::is_same_v<decltype(D3D10DDIARG_CREATEDEVICE::Flags), UINT>);

// ---- d3d10umddi/ns-d3d10umddi-d3d10_2ddiarg_getcaps.md (audit item 5) --------------------
// Type, VOID* pInfo [in], VOID* pData [out], UINT DataSize.
static_assert(offsetof(D3D10_2DDIARG_GETCAPS, Type) == 0);
static_assert(offsetof(D3D10_2DDIARG_GETCAPS, pInfo) == At(8, 4));
static_assert(offsetof(D3D10_2DDIARG_GETCAPS, pData) == At(16, 8));
static_assert(offsetof(D3D10_2DDIARG_GETCAPS, DataSize) == At(24, 12));
static_assert(sizeof(D3D10_2DDIARG_GETCAPS) == At(32, 16));
static_assert(std::is_same_v<decltype(D3D10_2DDIARG_GETCAPS::pInfo), VOID*>);
static_assert(std::is_same_v<decltype(D3D10_2DDIARG_GETCAPS::pData), VOID*>);

// ---- View creation (audit item 11) ----------------------------------------------------------
// hDrvResource, DXGI_FORMAT Format, D3D10DDIRESOURCE_TYPE ResourceDimension, [UINT Flags (DSV)],
// union of the per-dimension structures.
// d3d10umddi/ns-d3d10umddi-d3d11ddiarg_createshaderresourceview.md (largest: TEX2D, 4 UINTs)
static_assert(offsetof(D3D11DDIARG_CREATESHADERRESOURCEVIEW, Format) == At(8, 4));
static_assert(offsetof(D3D11DDIARG_CREATESHADERRESOURCEVIEW, ResourceDimension) == At(12, 8));
static_assert(offsetof(D3D11DDIARG_CREATESHADERRESOURCEVIEW, Buffer) == At(16, 12));
static_assert(offsetof(D3D11DDIARG_CREATESHADERRESOURCEVIEW, Tex2D) == At(16, 12));
static_assert(offsetof(D3D11DDIARG_CREATESHADERRESOURCEVIEW, BufferEx) == At(16, 12));
static_assert(offsetof(D3D10DDIARG_BUFFER_SHADERRESOURCEVIEW, ElementOffset) == 0);
static_assert(offsetof(D3D10DDIARG_BUFFER_SHADERRESOURCEVIEW, ElementWidth) == 4);
static_assert(offsetof(D3D10DDIARG_TEX2D_SHADERRESOURCEVIEW, MipLevels) == 8);
static_assert(offsetof(D3D11DDIARG_BUFFEREX_SHADERRESOURCEVIEW, Flags) == 8);
static_assert(sizeof(D3D11DDIARG_CREATESHADERRESOURCEVIEW) == At(32, 28));
// d3d10umddi/ns-d3d10umddi-d3d10ddiarg_createrendertargetview.md (3 UINTs)
static_assert(offsetof(D3D10DDIARG_CREATERENDERTARGETVIEW, Tex2D) == At(16, 12));
static_assert(offsetof(D3D10DDIARG_CREATERENDERTARGETVIEW, TexCube) == At(16, 12));
static_assert(offsetof(D3D10DDIARG_TEX3D_RENDERTARGETVIEW, WSize) == 8);
static_assert(sizeof(D3D10DDIARG_CREATERENDERTARGETVIEW) == At(32, 24));
// d3d10umddi/ns-d3d10umddi-d3d11ddiarg_createdepthstencilview.md: Flags before the union.
static_assert(offsetof(D3D11DDIARG_CREATEDEPTHSTENCILVIEW, Flags) == At(16, 12));
static_assert(offsetof(D3D11DDIARG_CREATEDEPTHSTENCILVIEW, Tex2D) == At(20, 16));
static_assert(offsetof(D3D11DDIARG_CREATEDEPTHSTENCILVIEW, TexCube) == At(20, 16));
static_assert(sizeof(D3D11DDIARG_CREATEDEPTHSTENCILVIEW) == At(32, 28));
// d3d10umddi/ns-d3d10umddi-d3d11ddiarg_createunorderedaccessview.md (3 UINTs)
static_assert(offsetof(D3D11DDIARG_CREATEUNORDEREDACCESSVIEW, Buffer) == At(16, 12));
static_assert(offsetof(D3D11DDIARG_CREATEUNORDEREDACCESSVIEW, Tex3D) == At(16, 12));
static_assert(offsetof(D3D11DDIARG_BUFFER_UNORDEREDACCESSVIEW, Flags) == 8);
static_assert(sizeof(D3D11DDIARG_CREATEUNORDEREDACCESSVIEW) == At(32, 24));

// ---- d3d10umddi/ns-d3d10umddi-d3d11ddi_devicefuncs.md: pfnFlush (audit item 12) ----------
// The 11.0 table's slot is PFND3D10DDI_FLUSH: VOID (APIENTRY*)(D3D10DDI_HDEVICE)
// (d3d10umddi/nc-d3d10umddi-pfnd3d10ddi_flush.md).
static_assert(std::is_same_v<PFND3D10DDI_FLUSH, void(APIENTRY*)(D3D10DDI_HDEVICE)>);
static_assert(std::is_same_v<decltype(D3D11DDI_DEVICEFUNCS::pfnFlush), PFND3D10DDI_FLUSH>);

// ---- Parameter types Microsoft declares UINT / VOID* (audit item 21) ----------------------
// nc-d3d10umddi-pfnd3d10ddi_querygetdata.md, nc-d3d10umddi-pfnd3d10ddi_resourcemap.md,
// nc-d3d10umddi-pfnd3d10ddi_cleardepthstencilview.md.
static_assert(
    std::is_same_v<PFND3D10DDI_QUERYGETDATA,
                   void(APIENTRY*)(D3D10DDI_HDEVICE, D3D10DDI_HQUERY, VOID*, UINT, UINT)>);
static_assert(std::is_same_v<PFND3D10DDI_RESOURCEMAP,
                             void(APIENTRY*)(D3D10DDI_HDEVICE, D3D10DDI_HRESOURCE, UINT,
                                             D3D10_DDI_MAP, UINT, D3D10DDI_MAPPED_SUBRESOURCE*)>);
static_assert(std::is_same_v<PFND3D10DDI_CLEARDEPTHSTENCILVIEW,
                             void(APIENTRY*)(D3D10DDI_HDEVICE, D3D10DDI_HDEPTHSTENCILVIEW, UINT,
                                             FLOAT, UINT8)>);

// ---- Interface and version numbers (audit item 6) -----------------------------------------
// d3d10umddi/ns-d3d10umddi-d3d10ddiarg_createdevice.md: D3D1x_y_DDI_SUPPORTED =
// (INTERFACE_VERSION << 32) | (BUILD_VERSION << 16), INTERFACE_VERSION = (major << 16) | minor;
// D3D11.0 = 0x000B000A00020000 (audit, from the header).
static_assert(D3D11_0_DDI_INTERFACE_VERSION == 0x000B000Au);
static_assert(D3D11_0_DDI_SUPPORTED == 0x000B000A00020000ull);
static_assert((D3D11_0_DDI_BUILD_VERSION << 16) == 0x00020000u);

// ---- HRESULT / NTSTATUS values (audit items 14, 16) ----------------------------------------
// MAKE_D3DDDIHRESULT(n) = 0x88760000 | n; CANTRENDERLOCKEDALLOCATION is
// ERROR_GRAPHICS_CANT_RENDER_LOCKED_ALLOCATION; STATUS_INVALID_USER_BUFFER per ntstatus.h and
// d3dkmddi/nc-d3dkmddi-dxgkddi_render.md.
static_assert(static_cast<uint32_t>(D3DDDIERR_CANTRENDERLOCKEDALLOCATION) == 0xC0262111u);
static_assert(static_cast<uint32_t>(D3DDDIERR_INVALIDUSERBUFFER) == 0x88760879u);
static_assert(static_cast<uint32_t>(D3DDDIERR_APPLICATIONERROR) == 0x88760885u);
static_assert(static_cast<uint32_t>(STATUS_INVALID_USER_BUFFER) == 0xC00000E8u);

}  // namespace cltrace::ddi::abi_layout

// ---- Part 2: the C compiler agrees (gtest binary only) -------------------------------------
#ifndef CLTRACE_ABI_LAYOUT_STANDALONE
#include "gtest/gtest.h"

extern "C" size_t CltraceAbiCLayout(int which);

namespace cltrace::ddi::abi_layout {
namespace {

TEST(AbiArgsLayoutTest, TheCCompilerSeesMicrosoftsArgumentLayoutsToo) {
  EXPECT_EQ(CltraceAbiCLayout(13), At(88, 48));  // sizeof(D3D10DDIARG_CREATEDEVICE)
  EXPECT_EQ(CltraceAbiCLayout(14), At(40, 24));  // sizeof(D3D10DDIARG_OPENADAPTER)
  EXPECT_EQ(CltraceAbiCLayout(15), At(32, 20));  // offsetof(OPENADAPTER, pAdapterFuncs_2)
  EXPECT_EQ(CltraceAbiCLayout(16), At(16, 8));   // offsetof(GETCAPS, pData)
  EXPECT_EQ(CltraceAbiCLayout(17), At(56, 32));  // offsetof(CREATEDEVICE, hRTCoreLayer)
  EXPECT_EQ(CltraceAbiCLayout(18), At(48, 28));  // offsetof(CREATEDEVICE, DXGIBaseDDI.funcs)
}

}  // namespace
}  // namespace cltrace::ddi::abi_layout
#endif  // CLTRACE_ABI_LAYOUT_STANDALONE
