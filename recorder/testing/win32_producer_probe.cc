// Linked by scripts/windows_check.sh into a Windows DLL with recorder/platform_win32.cc and
// recorder/ring_wait.cc: every function of the platform layer and the producer's ring path
// (claim a slot, reserve with back-pressure, write and commit a record, publish the open
// calls, wake the drainer; the drainer's release) is referenced, so an undefined symbol or a
// dependency beyond the system's libraries fails the check. It is never run here (that needs
// Windows); the exported function is what a Windows test program would call.
#include <cstdint>
#include <string>
#include <vector>

#include "recorder/internal/platform.h"
#include "recorder/internal/region.h"
#include "recorder/internal/ring.h"
#include "recorder/internal/ring_wait.h"

namespace {

using namespace cltrace::recorder;  // NOLINT: a probe, not library code

bool DrainerAlive() { return true; }

void OnCrash(int /*code*/) {}

}  // namespace

// Records `calls` one-word records through a region of its own, drains them on the same thread
// and returns how many it read back (or -1 with nothing recorded).
extern "C" __declspec(dllexport) int64_t CltraceWin32ProducerProbe(int64_t calls) {
  platform::InstallCrashHandler(&OnCrash, nullptr);
  const uint64_t ring_words = internal::SpscRing::CapacityFor(4096);
  platform::Mapping m;
  std::string error;
  if (!platform::CreateRegion(internal::Region::BytesFor(4, ring_words), false, &m, &error)) {
    return -1;
  }
  internal::Region* region = internal::Region::Init(m.base, 4, ring_words, platform::ProcessId());
  platform::Mapping again;
  if (!platform::MapRegion(m.handle, &again, &error) ||
      internal::Region::Check(again.base, again.size) == nullptr) {
    return -1;
  }
  const int slot = region->Claim(platform::ThreadId());
  if (slot < 0) return -1;
  internal::SpscRing producer, consumer;
  producer.Attach(region->slot(slot), region->ring(slot), ring_words);
  consumer.Attach(region->slot(slot), region->ring(slot), ring_words);
  int64_t read = 0;
  const int64_t start = platform::MonotonicNs();
  for (int64_t i = 0; i < calls; ++i) {
    producer.PublishDepth(1);
    int64_t wait_start = 0;
    uint64_t* w = internal::RingReserveWaiting(&producer, 2, region, &DrainerAlive, &wait_start);
    if (w == nullptr) return -1;
    w[0] = internal::MakeHeader(1, 2, 0);
    w[1] = static_cast<uint64_t>(i);
    producer.Commit(2, 0);
    internal::WakeRegionDrainer(region);
    if (consumer.Head() - consumer.tail() >= ring_words / 2 || i + 1 == calls) {
      uint64_t pos = consumer.tail();
      for (; pos < consumer.Head(); pos += internal::HeaderWords(*consumer.At(pos))) {
        if (internal::HeaderCall(*consumer.At(pos)) == 1) ++read;
      }
      internal::RingRelease(&consumer, pos);
    }
  }
  platform::FutexWait(&region->header()->wake, region->header()->wake.load() + 1, 1);
  platform::SleepMs(0);
  (void)(platform::MonotonicNs() - start);
  (void)platform::ProcessAlive(platform::ProcessId());
  std::string load_error;
  if (void* lib = platform::LoadLibraryAt(platform::DefaultDriverFileName(), &load_error)) {
    (void)platform::FindSymbol(lib, "OpenAdapter10_2");
  }
  (void)platform::LibraryBaseOf(reinterpret_cast<const void*>(&DrainerAlive));
  const std::string dir = platform::LibraryDirOf(reinterpret_cast<const void*>(&DrainerAlive));
  platform::Service service;
  if (platform::IsExecutable(dir + "\\cltrace.exe") &&
      platform::StartService(
          {dir + "\\cltrace.exe", "record", "--attach", "{region}", "--watch-fd", "{watch}"}, m,
          &service, &error)) {
    platform::FinishService(&service, 1000);
  }
  platform::PrepareRecorderThread("cltrace-probe");
  platform::AtForkChild(nullptr);
  platform::ReraiseDeferredCrash(0);
  platform::RemoveCrashHandler();
  return read;
}
