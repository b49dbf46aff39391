/* A Windows UMD's entry point, defined through the generated header: scripts/windows_check.sh
 * compiles it with mingw-w64 (warnings as errors) and checks the exported symbol. On i686 a
 * proxy's OpenAdapter10_2 must be __stdcall (`_OpenAdapter10_2@4`), as the runtime calls it;
 * assigning it to PFND3D10DDI_OPENADAPTER proves the typedef has the same convention. */
#include <windows.h>

#include "ddi/ddi_abi.h"

__declspec(dllexport) HRESULT APIENTRY OpenAdapter10_2(D3D10DDIARG_OPENADAPTER* pOpenData) {
  (void)pOpenData;
  return E_NOTIMPL;
}

const PFND3D10DDI_OPENADAPTER cltrace_entry_point_has_the_typedefs_convention = OpenAdapter10_2;
