// The producer side of a recording (the shim under `cltrace record`, or a program attached to
// a service): this process's threads write their calls into a recording region that a
// drainer in another process reads (recorder/README.md). Dependency-free: libc and the C++
// runtime only, so libcltrace_shim.so can go into any process.
//
// Thread-safety: AttachToRegion once, before the first recorded call; the rest from any thread.
#ifndef CLTRACE_RECORDER_PRODUCER_H_
#define CLTRACE_RECORDER_PRODUCER_H_

#include <cstdint>
#include <string>

namespace cltrace::recorder {

// This process's threads record into the region named `region` ("fd:N", "sysv:ID").
// `clock`: read the clock per call; `signals`: on a fatal signal, commit the crashing thread's
// open calls as incomplete before the process dies. A non-empty `driver_error` (the real
// driver could not be loaded) is noted in the region instead, and nothing is recorded.
// False with `*error` if the region cannot be mapped.
bool AttachToRegion(const std::string& region, bool clock, bool signals,
                    const std::string& driver_error, std::string* error);
// Counts an OpenAdapter10_2 call in the region (reported by `cltrace record`).
void NoteAdapterOpened();
// Whether the region's drainer still runs (its process exists).
bool RegionDrainerAlive();

}  // namespace cltrace::recorder

#endif  // CLTRACE_RECORDER_PRODUCER_H_
