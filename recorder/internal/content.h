// Content capture (recorder/README.md, "Content capture"; format/FORMAT.md §3.8): the bytes
// the application hands the driver through a pointer the trace would otherwise only hold the
// address of. The thunks of the calls format/content.h gives a role call in here:
//   CreateResource / DestroyResource  remember / forget each resource's shape;
//   the Map family (after it returned)  remember where the driver mapped what, with which
//                                       pitches (not for D3D10_DDI_MAP_READ);
//   the Unmap family (before the call)  copy the mapped subresource as the application left
//                                       it, laid out by the Map's pitches;
//   UpdateSubresourceUP (before)        copy the source region at pSysMemUP;
//   CreateResource (before)             copy its initial data, every pInitialDataUP[i].pSysMem
//                                       region in subresource order;
//   DX6 CreateD3DBuffer / LockD3DBuffer remember where each D3D buffer's memory is (fpVidMem,
//     (after)                           lpSurfData); DestroyD3DBuffer forgets it;
//   D3dDrawPrimitives2 (before)         copy the dwCommandLength command bytes and the
//                                       vertices the call names (format/content.h).
// Only these calls pay for it; the per-call path of every other DDI is unchanged. The copy is
// handed to the call's ring record (kFlagHasContent) and interned by the background thread
// (TraceWriter::InternContent, which stores equal bytes once).
//
// What cannot be sized (an unknown DXGI format, a resource created before the recorder
// wrapped the device, a box outside the resource) or is larger than format::kMaxContentBytes
// is not captured and counted (Stats::contents_skipped, with the first reason), so a replay
// of that call falls back to zeros and says so rather than guessing.
//
// Thread-safety: all functions may be called from any thread (one mutex; the calls that
// reach it are the rare ones above).
#ifndef CLTRACE_RECORDER_INTERNAL_CONTENT_H_
#define CLTRACE_RECORDER_INTERNAL_CONTENT_H_

#include <cstdint>
#include <string>

#include "ddi/call_ids.h"
#include "ddi/call_traits.h"
#include "ddi/ddi_abi.h"
#include "format/content.h"

namespace cltrace::recorder::internal {

// format::ContentRoleOf for the thunks, as a constant (the thunks are instantiated per call,
// so the other calls carry no trace of content capture): the catalog's content=.
constexpr format::ContentRole ThunkContentRole(format::CallId id) {
  return ddi::TraitsOf(id).content;
}

// A DC-local open (ddi-spec §3.3, R56: args NULL, the HRT slot carrying the IC driver handle)
// takes the shape of the IC resource `rt_resource` names.
void ContentOnCreateResource(const void* resource, const D3D11DDIARG_CREATERESOURCE* args,
                             const void* rt_resource);
void ContentOnDestroyResource(const void* resource);
void ContentOnMap(const void* device, const void* resource, UINT subresource, D3D10_DDI_MAP type,
                  const D3D10DDI_MAPPED_SUBRESOURCE* out);
// New copies (owned by the caller, who passes them on with the call's record), or nullptr when
// there is nothing to capture (not recording, nothing mapped, skipped).
std::string* ContentAtUnmap(const void* device, const void* resource, UINT subresource);
std::string* ContentOfUpload(const void* resource, UINT subresource, const D3D10_DDI_BOX* box,
                             const void* sys_mem, UINT row_pitch, UINT depth_pitch);
std::string* ContentOfInitialData(const D3D11DDIARG_CREATERESOURCE* args);

// DX6: where the runtime writes a D3D buffer (the latest CreateD3DBuffer fpVidMem or
// LockD3DBuffer lpSurfData of the surface; a failed call forgets it), and the DP2 content.
void ContentOnD3DBuffer(const void* surface, const void* data);
void ContentOnDestroyD3DBuffer(const void* surface);
std::string* ContentOfDrawPrimitives2(const D3DHAL_DRAWPRIMITIVES2DATA* data);

struct ContentStats {
  uint64_t captured = 0;   // calls whose content was captured
  uint64_t bytes = 0;      // bytes captured (before deduplication)
  uint64_t skipped = 0;    // calls with content that could not be captured
  std::string first_skip;  // why the first one was skipped
};
ContentStats GetContentStats();
// Zeroes the statistics (a Recorder starting); the shapes and mappings stay, since resources
// outlive recorders.
void ResetContentStats();

}  // namespace cltrace::recorder::internal

#endif  // CLTRACE_RECORDER_INTERNAL_CONTENT_H_
