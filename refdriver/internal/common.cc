#include "refdriver/internal/common.h"

#include <iterator>
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

size_t RetireDeferredContextsOf(const Device* dev) {
  size_t n = 0;
  for (int i = 0; i < kShards; ++i) {
    DcShard& s = Shards()[i];
    std::unique_lock<std::shared_mutex> lock(s.mu);
    for (auto& [handle, entry] : s.map) {
      if (entry.device != dev || entry.state == DcState::kDestroyed) continue;
      auto* dc = static_cast<DeferredContext*>(const_cast<void*>(handle));
      dc->magic = 0;
      dc->~DeferredContext();
      entry.state = DcState::kDestroyed;
      ++n;
    }
  }
  return n;
}

void SetErrorIc(Device* dev, HRESULT hr) { dev->callbacks->pfnSetErrorCb(dev->rt_core_layer, hr); }

void SetErrorDc(DeferredContext* dc, HRESULT hr) {
  dc->callbacks->pfnSetErrorCb(dc->rt_core_layer, hr);
}

bool MaybeReportRemoved(Device* dev, DeferredContext* dc) {
  uint64_t at = dev->config.removed_at_call;
  if (at == 0 || dev->ddi_calls.load(std::memory_order_relaxed) < at) return false;
  if (dev->removed.exchange(true)) return false;
  if (dc != nullptr) {
    SetErrorDc(dc, static_cast<HRESULT>(D3DDDIERR_DEVICEREMOVED));
  } else {
    SetErrorIc(dev, static_cast<HRESULT>(D3DDDIERR_DEVICEREMOVED));
  }
  return true;
}

bool InjectFault(Device* dev, FaultSite site) {
  uint64_t n = dev->fault_counters[static_cast<int>(site)].fetch_add(1) + 1;
  return dev->config.FailsAt(site, n);
}

IcDomainScope::IcDomainScope(Device* dev) : dev_(dev), entered_(dev->ic_domain.Enter()) {
  CountCall(dev);
  if (!entered_) {
    Report(rules::Rule::kR10, dev, "two immediate-context DDIs in flight at once");
  }
}

IcDomainScope::~IcDomainScope() {
  if (entered_) dev_->ic_domain.Leave();
}

DcCallScope::DcCallScope(D3D10DDI_HDEVICE h, rules::Rule rule_if_dead) {
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
    Report(rules::Rule::kR10, h.pDrvPrivate, "two DDIs on one deferred context in flight at once");
  }
}

DcCallScope::~DcCallScope() {
  if (entered_) dc_->domain.Leave();
}

bool InRefreshOf(const void* ctx) { return t_refresh_ctx == ctx; }

RefreshScope::RefreshScope(const void* ctx) : previous_(t_refresh_ctx) { t_refresh_ctx = ctx; }
RefreshScope::~RefreshScope() { t_refresh_ctx = previous_; }

std::string HandleText(const void* p) { return absl::StrFormat("%p", p); }

const char* ObjectKind(const void* p) {
  if (p == nullptr) return nullptr;
  switch (*static_cast<const uint32_t*>(p)) {
    case kDeviceMagic:
      return "a device";
    case kContextMagic:
      return "a deferred context";
    case kIcObjectMagic:
      return "an IC object";
    case kLocalObjectMagic:
      return "a context-local handle";
    case kCommandListMagic:
      return "an IC command list";
  }
  return nullptr;
}

Device* IcDevice(const void* h) {
  if (h == nullptr) {
    Report(rules::Rule::kR39, nullptr, "hDevice is NULL");
    return nullptr;
  }
  const char* kind = ObjectKind(h);
  if (kind == nullptr) {
    Report(rules::Rule::kR39, h,
           "hDevice is not a live device of this driver (destroyed or never created)");
    return nullptr;
  }
  if (*static_cast<const uint32_t*>(h) != kDeviceMagic) {
    Report(rules::Rule::kR57, h,
           absl::StrCat("hDevice of an IC-table call is ", kind,
                        ", not the device (deferred contexts use their own table)"));
    return nullptr;
  }
  return static_cast<Device*>(const_cast<void*>(h));
}

IcObject* IcArg(void* h, uint32_t type, const char* what) {
  if (h == nullptr) return nullptr;
  const char* kind = ObjectKind(h);
  if (kind == nullptr) {
    Report(rules::Rule::kR39, h,
           absl::StrCat(what,
                        ": handle is not a live object of this driver (destroyed or never "
                        "created)"));
    return nullptr;
  }
  if (*static_cast<const uint32_t*>(h) != kIcObjectMagic) {
    Report(rules::Rule::kR57, h,
           absl::StrCat(what, ": IC-table call given ", kind,
                        " where an IC object handle is expected"));
    return nullptr;
  }
  IcObject* o = AsIc(h);
  if (o->type != type) {
    Report(rules::Rule::kR57, h,
           absl::StrCat(what, ": IC handle of type ", o->type, ", expected ", type));
    return nullptr;
  }
  return o;
}

bool ArgPresent(const void* p, const char* fn, const char* what) {
  if (p != nullptr) return true;
  Report(
      rules::Rule::kR56, nullptr,
      absl::StrCat(fn, ": ", what, " is NULL (only context-local opens may pass NULL arguments)"));
  return false;
}

bool HandleMemoryPresent(const void* p, const char* fn, const char* what) {
  if (p != nullptr) return true;
  Report(rules::Rule::kR39, nullptr, absl::StrCat(fn, ": ", what, " (the handle memory) is NULL"));
  return false;
}

bool CreatableAt(const void* p, const char* fn, const char* what) {
  if (!HandleMemoryPresent(p, fn, what)) return false;
  const char* kind = ObjectKind(p);
  if (kind == nullptr) return true;
  Report(rules::Rule::kR57, p, absl::StrCat(fn, " into the memory of ", kind, " (", what, ")"));
  return false;
}

}  // namespace cltrace::refdriver
