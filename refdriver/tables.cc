// The IC and DC function tables of the reference driver (ddi-spec §1.5, §2.3; R2, R3).
#include "refdriver/internal/tables.h"

namespace cltrace::refdriver {
namespace {

// The slots both tables fill, each with its IC function or its DC variant (context-local
// opens/closes, context-local command-list handles).
void FillSharedSlots(D3D11DDI_DEVICEFUNCS* t, bool dc) {
  *t = D3D11DDI_DEVICEFUNCS{};
  FillPipelineSlots(t, dc);
  FillResourceWorkSlots(t, dc);
  FillObjectSlots(t, dc);
  FillCapsSlots(t, dc);
  t->pfnDestroyDevice = dc ? &DcDestroyDevice : &DestroyDevice;
  t->pfnCreateCommandList = dc ? &DcCreateCommandList : &CreateCommandList;
  t->pfnDestroyCommandList = dc ? &DcDestroyCommandList : &DestroyCommandList;
  t->pfnCommandListExecute = dc ? &DcCommandListExecute : &CommandListExecute;
}

}  // namespace

void FillIcTable(D3D11DDI_DEVICEFUNCS* t) {
  FillSharedSlots(t, /*dc=*/false);
  FillSubmitSlots(t);
  t->pfnCheckDeferredContextHandleSizes = &CheckDeferredContextHandleSizes;
  t->pfnCalcDeferredContextHandleSize = &CalcDeferredContextHandleSize;
  t->pfnCalcPrivateDeferredContextSize = &CalcPrivateDeferredContextSize;
  t->pfnCreateDeferredContext = &CreateDeferredContext;
  t->pfnCalcPrivateCommandListSize = &CalcPrivateCommandListSize;
  t->pfnRecycleCreateCommandList = &RecycleCreateCommandList;
  t->pfnRecycleCreateDeferredContext = &RecycleCreateDeferredContext;
  t->pfnRecycleDestroyCommandList = &RecycleDestroyCommandList;
  // RecycleCommandList and AbandonCommandList are DC-table functions (§2.3): NULL here.
}

void FillDcTable(D3D11DDI_DEVICEFUNCS* t) {
  // The DC-excludable slots (§2.3) stay NULL.
  FillSharedSlots(t, /*dc=*/true);
  t->pfnRecycleCommandList = &RecycleCommandList;
  t->pfnAbandonCommandList = &AbandonCommandList;
}

}  // namespace cltrace::refdriver
