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
void FillPipelineSlots(D3D11DDI_DEVICEFUNCS* t, bool dc);      // bindings and draws
void FillResourceWorkSlots(D3D11DDI_DEVICEFUNCS* t, bool dc);  // copies, clears, queries, maps
void FillSubmitSlots(D3D11DDI_DEVICEFUNCS* t);  // IC only: Flush, QueryGetData, maps...
void FillDxgiTable(DXGI_DDI_BASE_FUNCTIONS* t);
// The capability checks (IC only) and RelocateDeviceFuncs (caps.cc).
void FillCapsSlots(D3D11DDI_DEVICEFUNCS* t, bool dc);

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

// Objects (objects.cc): the IC creates/destroys and CalcPrivate sizes, or (dc) the DC
// table's context-local opens/closes.
void FillObjectSlots(D3D11DDI_DEVICEFUNCS* t, bool dc);
// Planted bug R5 writes this (same behaviour, different address) into pfnCreateResource.
void APIENTRY CreateResourceHotSwapped(D3D10DDI_HDEVICE, const D3D11DDIARG_CREATERESOURCE*,
                                       D3D10DDI_HRESOURCE, D3D10DDI_HRTRESOURCE);

}  // namespace cltrace::refdriver

#endif  // CLTRACE_REFDRIVER_INTERNAL_TABLES_H_
