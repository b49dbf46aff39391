// Reading traces recorded with an older catalog_version (FORMAT.md §8.1).
//
// Catalog version 3 gave calls Microsoft's argument layouts under their old names: CreateDevice
// (DXGI_DDI_BASE_ARGS by value, ppfnRetrieveSubObject), GetCaps (pInfo the input, pData the
// caps), Flush (the 11.0 slot: no FlushFlags, no return value) and the view calls (the
// per-dimension union; the depth-stencil view's Flags). Catalog version 4 gave the D3DDDICB_*
// kernel-thunk calls Microsoft's (Windows 7) layouts and the callbacks Microsoft's parameter
// names (GetCaps/LockCb pData, EscapeCb hAdapter). A version-2 or -3 trace is read in this
// build's layouts: each event of those calls is translated field by field, by name, from the
// older layout kept here; every other call is unchanged. Older versions (1) are refused with
// an error that names both versions.
//
// Catalog version 4 gave D3D11DDIARG_CREATERESOURCE Microsoft's layout (pMipInfoList,
// pInitialDataUP, SampleDesc, pPrimaryDesc instead of Width/Height/Depth/SampleCount and the
// MiscFlags bit 0x80000000 that marked a primary). CalcPrivateResourceSize and CreateResource
// events of version-2 and version-3 traces are rebuilt in that layout (catalog_migration.cc
// says how each old field maps).
//
//   CLTRACE_RETURN_IF_ERROR(CheckCatalogVersion(header.catalog_version()));
//   MigrateEvent(header.catalog_version(), &event);  // after decoding, before validating ids
#ifndef CLTRACE_FORMAT_CATALOG_MIGRATION_H_
#define CLTRACE_FORMAT_CATALOG_MIGRATION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "format/event.h"

namespace cltrace::format {

// The oldest catalog_version whose traces this build reads.
inline constexpr uint32_t kOldestReadableCatalogVersion = 2;

// OK for a version this build reads (kOldestReadableCatalogVersion up to its own, and 0: a
// header no cltrace writer produced, read with this catalog); otherwise InvalidArgument
// "recorded with catalog version N, cannot be read by this build (catalog version M): ...".
absl::Status CheckCatalogVersion(uint32_t file_version);

// Rewrites `e` (decoded from a trace of catalog_version `file_version`) into this build's
// field layout of its call. A no-op for the current version and for calls whose layout did
// not change.
void MigrateEvent(uint32_t file_version, Event* e);

}  // namespace cltrace::format

#endif  // CLTRACE_FORMAT_CATALOG_MIGRATION_H_
