// Loading a user-mode driver library the way the D3D runtime loads a UMD: dlopen + the
// exported entry point OpenAdapter10_2 (plus the optional annotation, violation and draw-state
// probe exports).
//
// Driver libraries stay loaded for the rest of the process (as the D3D runtime keeps UMDs),
// so late violation reads and threads still inside the driver are safe.
//
// Thread-safety: Load is called once per device; the loaded pointers are then immutable.
#ifndef CLTRACE_RUNTIME_INTERNAL_DRIVER_LOADER_H_
#define CLTRACE_RUNTIME_INTERNAL_DRIVER_LOADER_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ddi/ddi_abi.h"
#include "runtime/annotation.h"
#include "wddm/draw_state.h"

namespace cltrace::runtime::internal {

using ViolationsFn = size_t (*)(char* buf, size_t cap);

struct DriverLibrary {
  void* handle = nullptr;
  std::string path;
  PFND3D10DDI_OPENADAPTER open_adapter = nullptr;
  PFN_CLTRACE_ANNOTATE_BEGIN annotate_begin = nullptr;
  PFN_CLTRACE_ANNOTATE_END annotate_end = nullptr;
  // Application markers (runtime/annotation.h); null when the library has no such export.
  PFN_CLTRACE_ANNOTATE_MARKER annotate_marker = nullptr;
  // The recorder's trace positions (runtime/annotation.h), or null when not recording.
  PFN_CLTRACE_TRACE_SEQ trace_seq = nullptr;

  // `requested`: explicit path, else $CLTRACE_DRIVER, else DefaultDriverPath().
  // NotFound / FailedPrecondition with the dlerror text.
  absl::Status Load(const std::string& requested);
  // The reference driver's violation lines, if the loaded library (or a reference driver it
  // loaded itself, e.g. behind a recorder shim) exports CltraceRefDriverViolations.
  std::vector<std::string> DriverViolations() const;
  // The driver's draw-state probe (wddm/draw_state.h), found like DriverViolations; nullptr if
  // the driver has none.
  gpu::DecodePrivateDrawsFn DecodePrivateDraws() const;
};

// Violation lines of one loaded library (see DriverViolations) / of every library loaded.
std::vector<std::string> ViolationsOf(void* handle);
std::vector<std::string> AllDriverViolations();

// The reference driver next to this runtime: <dir>/libcltrace_refdriver.so or
// <dir>/../lib/libcltrace_refdriver.so, where <dir> is the directory of the module containing
// the runtime (shared object or executable); "" if none exists.
std::string DefaultDriverPath();

}  // namespace cltrace::runtime::internal

#endif  // CLTRACE_RUNTIME_INTERNAL_DRIVER_LOADER_H_
