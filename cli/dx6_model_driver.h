// The DX6 driver `cltrace replay` plays a trace's DX6-layer calls into: the DX6 model driver
// of dx6/ (gpu::Dx6Driver) behind the replayer's replay::Dx6Driver interface, with the planted
// bug the replay's configuration names (bug=R79 / bug=R80 of $CLTRACE_REFDRIVER_CONFIG).
//
// Thread-safety: one driver at a time per process (gpu::Dx6Driver's tables reach the most
// recently constructed one).
//
// Example:
//   replay::ReplayOptions options;
//   options.dx6_driver = cli::Dx6ModelDriverFactory();
#ifndef CLTRACE_CLI_DX6_MODEL_DRIVER_H_
#define CLTRACE_CLI_DX6_MODEL_DRIVER_H_

#include "replayer/replay.h"

namespace cltrace::cli {

replay::Dx6DriverFactory Dx6ModelDriverFactory();

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_DX6_MODEL_DRIVER_H_
