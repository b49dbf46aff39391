// A driver library for the replayer's tests: exports OpenAdapter10_2, which succeeds and fills
// no adapter function at all, and none of the reference driver's out-of-band interface. Replays
// into it show how the replayer reports a table slot the recorded driver had and this one lacks,
// and that fault injection needs a driver's own configuration interface.
#include "ddi/ddi_abi.h"

extern "C" __attribute__((visibility("default"))) HRESULT APIENTRY
OpenAdapter10_2(D3D10DDIARG_OPENADAPTER* open) {
  if (open == nullptr || open->pAdapterFuncs_2 == nullptr) return static_cast<HRESULT>(0x80070057);
  static int adapter;
  open->hAdapter.pDrvPrivate = &adapter;
  return 0;
}
