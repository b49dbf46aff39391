// The driver under replay: a shared library exporting the DDI entry point OpenAdapter10_2,
// loaded with dlopen, plus the reference driver's optional out-of-band interface
// (refdriver/refdriver.h: CltraceRefDriverConfigure, CltraceRefDriverViolations,
// CltraceRefDriverClearViolations), found with dlsym when the library has it.
//
// The library is never unloaded: a driver may keep process-wide state, and a replay that ends
// without the recorded DestroyDevice leaves the driver holding handles.
//
// Thread-safety: Load and Configure are called by one thread before/after a replay; the
// accessors are safe from any thread.
#ifndef CLTRACE_REPLAYER_INTERNAL_DRIVER_H_
#define CLTRACE_REPLAYER_INTERNAL_DRIVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ddi/ddi_abi.h"

namespace cltrace::replay::internal {

class Driver {
 public:
  // FailedPrecondition if the library cannot be loaded or has no OpenAdapter10_2.
  static absl::StatusOr<std::unique_ptr<Driver>> Load(const std::string& path);

  const std::string& path() const { return path_; }
  PFND3D10DDI_OPENADAPTER open_adapter() const { return open_adapter_; }
  // The library exports the reference driver's configuration interface.
  bool configurable() const { return configure_ != nullptr; }

  // Sets the configuration for the following OpenAdapter10_2 calls: $CLTRACE_REFDRIVER_CONFIG
  // (or `*base` when given) followed by `items` (';'-separated). InvalidArgument if the driver
  // rejects it.
  absl::Status Configure(const std::string& items, const std::string* base = nullptr);
  // Back to the environment's configuration.
  void ResetConfiguration();

  // The violation channel: lines detected since the last Clear (empty without the channel).
  std::vector<std::string> Violations() const;
  void ClearViolations();

 private:
  Driver() = default;
  std::string path_;
  void* library_ = nullptr;
  PFND3D10DDI_OPENADAPTER open_adapter_ = nullptr;
  int (*configure_)(const char*) = nullptr;
  size_t (*violations_)(char*, size_t) = nullptr;
  void (*clear_violations_)() = nullptr;
};

}  // namespace cltrace::replay::internal

#endif  // CLTRACE_REPLAYER_INTERNAL_DRIVER_H_
