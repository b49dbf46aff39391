// The size of a DX6 flexible-vertex-format vertex (the D3DFVF_* bits of the catalog's ABI),
// defined once: the DX6 runtime model and driver size vertex buffers with it, and the trace
// format sizes a DrawPrimitives2's recorded vertices with it (format/content.h).
//
// Thread-safety: a pure function.
//
// Example:
//   ddi::FvfStride(D3DFVF_XYZRHW | D3DFVF_DIFFUSE)  // 20
#ifndef CLTRACE_DDI_FVF_H_
#define CLTRACE_DDI_FVF_H_

#include <cstdint>

#include "ddi/ddi_abi.h"

namespace cltrace::ddi {

// Bytes per vertex of `fvf` (the D3DFVF_* bits the model knows; others add nothing).
constexpr uint32_t FvfStride(uint32_t fvf) {
  uint32_t s = 0;
  if (fvf & D3DFVF_XYZ) s += 12;
  if (fvf & D3DFVF_XYZRHW) s += 16;
  if (fvf & D3DFVF_NORMAL) s += 12;
  if (fvf & D3DFVF_DIFFUSE) s += 4;
  if (fvf & D3DFVF_SPECULAR) s += 4;
  if (fvf & D3DFVF_TEX1) s += 8;
  return s;
}

}  // namespace cltrace::ddi

#endif  // CLTRACE_DDI_FVF_H_
