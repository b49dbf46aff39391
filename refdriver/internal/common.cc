#include "refdriver/internal/common.h"

#include <mutex>
#include <shared_mutex>

#include "absl/strings/str_format.h"

namespace cltrace::refdriver {
namespace {

thread_local char t_tag;
thread_local const void* t_refresh_ctx = nullptr;

constexpr int kShards = 16;
struct DcShard {
  std::shared_mutex mu;
  absl::flat_hash_map<const void*, DcEntry> map;
};
DcShard* Shards() {
  static DcShard* shards = new DcShard[kShards];
  return shards;
}
DcShard& ShardOf(const void* h) {
  return Shards()[(reinterpret_cast<uintptr_t>(h) >> 6) % kShards];
}

}  // namespace

uintptr_t ThreadTag() { return reinterpret_cast<uintptr_t>(&t_tag); }

const char* ClStateName(ClState s) {
  switch (s) {
    case ClState::kValid:
      return "Valid";
    case ClState::kRecycleDestroyed:
      return "RecycleDestroyed";
    case ClState::kRecycled:
      return "Recycled";
    case ClState::kDestroyed:
      return "Destroyed";
    case ClState::kFailed:
      return "Failed";
  }
  return "?";
}

const char* DcStateName(DcState s) {
  switch (s) {
    case DcState::kRecording:
      return "Recording";
    case DcState::kFinishing:
      return "Finishing";
    case DcState::kClosed:
      return "Closed";
    case DcState::kAbandoned:
      return "Abandoned";
    case DcState::kDestroyed:
      return "Destroyed";
    case DcState::kFailed:
      return "Failed";
  }
  return "?";
}

bool LookupDc(const void* handle, DcEntry* out) {
  DcShard& s = ShardOf(handle);
  std::shared_lock<std::shared_mutex> lock(s.mu);
  auto it = s.map.find(handle);
  if (it == s.map.end()) return false;
  *out = it->second;
  return true;
}

void SetDcState(const void* handle, const DcEntry& entry) {
  DcShard& s = ShardOf(handle);
  std::unique_lock<std::shared_mutex> lock(s.mu);
  s.map[handle] = entry;
}

bool UpdateDc(const void* handle, absl::FunctionRef<void(DcEntry&)> update) {
  DcShard& s = ShardOf(handle);
  std::unique_lock<std::shared_mutex> lock(s.mu);
  auto it = s.map.find(handle);
  if (it == s.map.end()) return false;
  update(it->second);
  return true;
}

void SetErrorIc(Device* dev, HRESULT hr) { dev->callbacks->pfnSetErrorCb(dev->rt_core_layer, hr); }

void SetErrorDc(DeferredContext* dc, HRESULT hr) {
  dc->callbacks->pfnSetErrorCb(dc->rt_core_layer, hr);
}

void MaybeReportRemoved(Device* dev, DeferredContext* dc) {
  uint64_t at = dev->config.removed_at_call;
  if (at == 0 || dev->ddi_calls.load(std::memory_order_relaxed) < at) return;
  if (dev->removed.exchange(true)) return;
  if (dc != nullptr) {
    SetErrorDc(dc, static_cast<HRESULT>(D3DDDIERR_DEVICEREMOVED));
  } else {
    SetErrorIc(dev, static_cast<HRESULT>(D3DDDIERR_DEVICEREMOVED));
  }
}

bool InjectFault(Device* dev, FaultSite site) {
  uint64_t n = dev->fault_counters[static_cast<int>(site)].fetch_add(1) + 1;
  return dev->config.FailsAt(site, n);
}

IcDomainScope::IcDomainScope(Device* dev) : dev_(dev), entered_(dev->ic_domain.Enter()) {
  CountCall(dev);
  if (!entered_) {
    Report("R10", dev, "two immediate-context DDIs in flight at once");
  }
}

IcDomainScope::~IcDomainScope() {
  if (entered_) dev_->ic_domain.Leave();
}

DcCallScope::DcCallScope(D3D10DDI_HDEVICE h, const char* rule_if_dead) {
  if (!LookupDc(h.pDrvPrivate, &entry_)) {
    Report(rule_if_dead, h.pDrvPrivate, "not a deferred-context handle of this driver");
    return;
  }
  if (entry_.state == DcState::kDestroyed) {
    Report(rule_if_dead, h.pDrvPrivate, "deferred context already destroyed (DestroyDevice)");
    return;
  }
  dc_ = AsDc(h);
  CountCall(entry_.device);
  entered_ = dc_->domain.Enter();
  if (!entered_) {
    Report("R10", h.pDrvPrivate, "two DDIs on one deferred context in flight at once");
  }
}

DcCallScope::~DcCallScope() {
  if (entered_) dc_->domain.Leave();
}

bool InRefreshOf(const void* ctx) { return t_refresh_ctx == ctx; }

RefreshScope::RefreshScope(const void* ctx) : previous_(t_refresh_ctx) { t_refresh_ctx = ctx; }
RefreshScope::~RefreshScope() { t_refresh_ctx = previous_; }

std::string HandleText(const void* p) { return absl::StrFormat("%p", p); }

}  // namespace cltrace::refdriver
