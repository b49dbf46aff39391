/* Compiles the generated C ABI header as C11 (drivers written in C include it too) and reports
 * layout facts that format/catalog_test.cc compares with what the C++ compiler sees: a
 * disagreement between the two languages would corrupt every call across the boundary. */
#include <stddef.h>

#include "ddi/ddi_abi.h"

/* Sizes and offsets, in this order, for the C++ side to compare (see catalog_test.cc). */
size_t CltraceAbiCLayout(int which) {
  /* Using one of every kind of declaration the generator emits: typedef'd scalars, handles
   * (pointer and 32-bit), enums, embedded arrays, nested by-value structures, tables,
   * function pointers and the epilogue typedef. */
  PFND3D10DDI_OPENADAPTER open_adapter = NULL;
  (void)open_adapter;
  switch (which) {
    case 0: return sizeof(D3D11DDI_DEVICEFUNCS);
    case 1: return sizeof(D3D11DDI_CORELAYER_DEVICECALLBACKS);
    case 2: return sizeof(D3DDDI_DEVICECALLBACKS);
    case 3: return sizeof(D3DDDICB_RENDER);
    case 4: return offsetof(D3DDDICB_RENDER, BroadcastContext);
    case 5: return offsetof(D3DDDICB_RENDER, QueuedBufferCount);
    case 6: return sizeof(D3D10_1_DDI_BLEND_DESC);
    case 7: return offsetof(D3D10_DDI_DEPTH_STENCIL_DESC, BackFace);
    case 8: return sizeof(D3DHAL_DRAWPRIMITIVES2DATA);
    case 9: return sizeof(D3DKMT_HALLOCATION);
    case 10: return sizeof(D3D11DDI_HCOMMANDLIST);
    case 11: return offsetof(D3D11DDI_DEVICEFUNCS, pfnRecycleDestroyCommandList);
    case 12: return sizeof(DXGKARG_SUBMITCOMMAND);
    case 13: return sizeof(D3D10DDIARG_CREATEDEVICE);
    /* Microsoft's argument layouts (abi_args_layout_test.cc). */
    case 14: return sizeof(D3D10DDIARG_OPENADAPTER);
    case 15: return offsetof(D3D10DDIARG_OPENADAPTER, pAdapterFuncs_2);
    case 16: return offsetof(D3D10_2DDIARG_GETCAPS, pData);
    case 17: return offsetof(D3D10DDIARG_CREATEDEVICE, hRTCoreLayer);
    case 18: return offsetof(D3D10DDIARG_CREATEDEVICE, DXGIBaseDDI.pDXGIDDIBaseFunctions);
    default: return 0;
  }
}
