// The producer side of service mode (recorder/producer.h).
#include "recorder/producer.h"

#include <atomic>
#include <thread>

#include "recorder/internal/content.h"
#include "recorder/internal/contexts.h"
#include "recorder/internal/core.h"
#include "recorder/internal/drain.h"
#include "recorder/internal/platform.h"
#include "recorder/internal/region.h"

namespace cltrace::recorder {
namespace internal {
void InstallCrashHandlers();  // crash.cc
}  // namespace internal

namespace {

// A forked child forwards calls without recording (its parent's region is not its to write).
void StopRecordingInForkedChild() {
  internal::G().recording.store(false, std::memory_order_relaxed);
  internal::g_drain_alive.store(false, std::memory_order_relaxed);
}

// The background R5 check the in-process recorder's drainer makes (recorder/README.md, "Table
// mutations"): the drainer of a region is in another process and cannot read this one's
// tables, so a thread of the shim's own looks every 50 ms.
void StartTableWatch() {
  std::thread([] {
    platform::PrepareRecorderThread("cltrace-tables");
    while (internal::G().recording.load(std::memory_order_acquire)) {
      platform::SleepMs(50);
      internal::CheckAllDeviceTables(/*periodic=*/true);
    }
  }).detach();
}

}  // namespace

bool AttachToRegion(const std::string& region_name, bool clock, bool signals,
                    const std::string& driver_error, std::string* error) {
  using internal::G;
  platform::Mapping m;
  if (!platform::MapRegion(region_name, &m, error)) return false;
  internal::Region* region = internal::Region::Check(m.base, m.size);
  if (region == nullptr) {
    *error = "not a recording region: " + region_name;
    return false;
  }
  internal::RegionHeader* h = region->header();
  h->producer_pid.store(platform::ProcessId(), std::memory_order_relaxed);
  if (!driver_error.empty()) {
    region->SetText(h->driver_error, sizeof(h->driver_error), driver_error.c_str(), true);
    h->driver_loaded.store(2, std::memory_order_release);
    return true;
  }
  G().clock_timestamps = clock;
  G().region = region;
  G().seq = &h->seq;
  G().remote_drainer = true;
  G().epoch += 1;
  internal::ResetContentStats();
  static const bool atfork = (platform::AtForkChild(&StopRecordingInForkedChild), true);
  (void)atfork;
  internal::g_drain_alive.store(true, std::memory_order_release);
  G().recording.store(true, std::memory_order_release);
  if (signals) internal::InstallCrashHandlers();
  StartTableWatch();
  h->driver_loaded.store(1, std::memory_order_release);
  return true;
}

void NoteAdapterOpened() {
  if (internal::Region* r = internal::G().region) r->header()->adapters_opened.fetch_add(1);
}

bool RegionDrainerAlive() {
  internal::Region* r = internal::G().region;
  return r != nullptr && r->header()->drainer_alive.load() != 0 &&
         platform::ProcessAlive(r->header()->drainer_pid);
}

}  // namespace cltrace::recorder
