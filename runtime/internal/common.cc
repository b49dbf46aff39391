#include "runtime/internal/common.h"

#include <cstring>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"

namespace cltrace::runtime::internal {
namespace {

constexpr uint8_t kPoison = 0xDB;

thread_local int t_api_depth = 0;
thread_local ErrorCapture* t_capture = nullptr;
thread_local char t_thread_tag;

struct ProcessLog {
  std::mutex mu;
  std::vector<std::string> lines;
};
ProcessLog& GetProcessLog() {
  static ProcessLog* log = new ProcessLog();
  return *log;
}

}  // namespace

std::atomic<uint64_t>& ProcessCalls() {
  static std::atomic<uint64_t>* calls = new std::atomic<uint64_t>(0);
  return *calls;
}

void AddProcessViolation(const std::string& line) {
  ProcessLog& log = GetProcessLog();
  std::lock_guard<std::mutex> lock(log.mu);
  log.lines.push_back(line);
}

// The seq a violation line carries: under a recorder, the trace position of the call the
// report is about (the innermost recorded call in flight on this thread, else the thread's
// last one: runtime/annotation.h), which is what `cltrace check` reports; otherwise the
// model's own count of calls.
static uint64_t ReportSeq(DeviceState* dev) {
  if (dev->driver.trace_seq != nullptr) {
    if (uint64_t seq = dev->driver.trace_seq(); seq != 0) return seq;
  }
  return dev->sink.calls->load(std::memory_order_relaxed);
}

void Report(DeviceState* dev, rules::Rule rule, absl::string_view fn, absl::string_view message) {
  rules::Finding finding{.rule = rule, .seq = ReportSeq(dev), .message = std::string(message)};
  AddProcessViolation(rules::FormatFindingLine(finding, fn, rules::LineHandle::kOmit));
  dev->violations.Add(std::move(finding), fn);
}

void ReportOnce(DeviceState* dev, absl::string_view key, rules::Rule rule, absl::string_view fn,
                absl::string_view message) {
  rules::Finding finding{.rule = rule, .seq = ReportSeq(dev), .message = std::string(message)};
  std::string line = rules::FormatFindingLine(finding, fn, rules::LineHandle::kOmit);
  if (dev->violations.AddOnce(key, std::move(finding), fn)) AddProcessViolation(line);
}

std::string NewName(DeviceState* dev, absl::string_view prefix) {
  std::lock_guard<std::mutex> lock(dev->names_mu);
  uint64_t n = ++dev->name_counters[std::string(prefix)];
  return absl::StrCat(prefix, n);
}

void* AllocHandle(size_t size) { return new uint8_t[size == 0 ? 1 : size](); }

void FreeHandle(DeviceState* dev, void* memory, size_t size, rules::Rule rule, std::string what) {
  if (memory == nullptr) return;
  if (dev->sink.observer != nullptr) dev->sink.names.Erase(memory);
  if (!dev->options.poison_freed_handles || size == 0) {
    delete[] static_cast<uint8_t*>(memory);
    return;
  }
  std::memset(memory, kPoison, size);
  Quarantine::Entry entry;
  entry.memory.reset(static_cast<uint8_t*>(memory));
  entry.size = size;
  entry.what = std::move(what);
  entry.rule = rule;
  entry.epoch = dev->flushes.load(std::memory_order_relaxed);
  dev->quarantine.Add(dev, std::move(entry));
}

namespace {

// A write to a quarantined block, or nullopt; re-poisons the block so each write is reported
// once.
std::optional<std::pair<rules::Rule, std::string>> CheckEntry(Quarantine::Entry& e) {
  for (size_t i = 0; i < e.size; ++i) {
    if (e.memory[i] != kPoison) {
      std::memset(e.memory.get(), kPoison, e.size);
      return std::make_pair(e.rule, absl::StrCat("driver wrote to freed handle memory of ", e.what,
                                                 " (byte ", i, " of ", e.size, ")"));
    }
  }
  return std::nullopt;
}

}  // namespace

void Quarantine::Add(DeviceState* dev, Entry entry) {
  std::vector<std::pair<rules::Rule, std::string>> findings;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_back(std::move(entry));
    while (entries_.size() > dev->options.quarantine_entries) {
      if (auto f = CheckEntry(entries_.front())) findings.push_back(std::move(*f));
      entries_.pop_front();
      if (next_check_ > 0) --next_check_;
    }
  }
  for (const auto& [rule, message] : findings) Report(dev, rule, "(handle memory check)", message);
}

void Quarantine::Check(DeviceState* dev, bool evict_all) {
  std::vector<std::pair<rules::Rule, std::string>> findings;
  uint64_t now = dev->flushes.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t n = entries_.size();
    const size_t budget = evict_all ? n : std::min(n, dev->options.quarantine_check_entries);
    if (next_check_ >= n) next_check_ = 0;
    for (size_t k = 0; k < budget; ++k) {
      if (auto f = CheckEntry(entries_[next_check_])) findings.push_back(std::move(*f));
      if (++next_check_ == n) next_check_ = 0;
    }
    // Leaving the quarantine: a block the bounded scan has not reached since is checked now.
    while (!entries_.empty() && (evict_all || entries_.front().epoch + 2 <= now)) {
      if (budget < n) {
        if (auto f = CheckEntry(entries_.front())) findings.push_back(std::move(*f));
      }
      entries_.pop_front();
      if (next_check_ > 0) --next_check_;
    }
  }
  for (const auto& [rule, message] : findings) Report(dev, rule, "(handle memory check)", message);
}

ApiScope::ApiScope(DeviceState* dev, const char* api, ContextState* ctx)
    : ApiScope(dev, api, ctx != nullptr ? absl::string_view(ctx->name) : absl::string_view()) {}

ApiScope::ApiScope(DeviceState* dev, const char* api, absl::string_view target) {
  if (t_api_depth++ == 0) {
    if (dev->sink.observer != nullptr) {
      EmitApiLine(&dev->sink, target.empty() ? absl::StrCat("API ", api)
                                             : absl::StrCat("API ", api, " [", target, "]"));
    }
    if (dev->driver.annotate_begin != nullptr) {
      dev->driver.annotate_begin(api);
      annotate_end_ = dev->driver.annotate_end;
    }
  }
}

ApiScope::~ApiScope() {
  --t_api_depth;
  if (annotate_end_ != nullptr) annotate_end_();
}

ContextCall::ContextCall(ContextState* ctx, const char* api) : api_(ctx->dev, api, ctx), ctx_(ctx) {
  if (!ctx->domain.Enter()) {
    Report(ctx->dev, rules::Rule::kR10, api,
           absl::StrCat("application called ", api, " on ", ctx->name,
                        " while another thread was inside that context (calls serialized)"));
  }
  entered_ = true;
}

ContextCall::~ContextCall() {
  if (entered_) ctx_->domain.Leave();
}

ErrorCapture::ErrorCapture() : previous_(t_capture) { t_capture = this; }
ErrorCapture::~ErrorCapture() { t_capture = previous_; }
void ErrorCapture::Record(HRESULT hr) {
  if (t_capture != nullptr && t_capture->error_ == S_OK) t_capture->error_ = hr;
}

bool DomainLock::Enter() {
  uintptr_t me = reinterpret_cast<uintptr_t>(&t_thread_tag);
  uintptr_t expected = 0;
  if (owner_.compare_exchange_strong(expected, me, std::memory_order_acquire)) {
    depth_ = 1;
    return true;
  }
  if (expected == me) {
    ++depth_;
    return true;
  }
  // Overlap: wait for the other thread (the calls are serialized after being reported).
  for (;;) {
    expected = 0;
    if (owner_.compare_exchange_weak(expected, me, std::memory_order_acquire)) break;
    std::this_thread::yield();
  }
  depth_ = 1;
  return false;
}

void DomainLock::Leave() {
  if (--depth_ == 0) owner_.store(0, std::memory_order_release);
}

void DcControl::MarkDeadAndWait() {
  uint64_t s = state.fetch_or(kDead, std::memory_order_acq_rel);
  while ((s & ~kDead) != 0) {
    std::this_thread::yield();
    s = state.load(std::memory_order_acquire);
  }
}

ContextState* Ic(DeviceState* dev) { return dev->ic; }

IcDomainScope::IcDomainScope(DeviceState* dev) : ic_(dev->ic) { ic_->domain.Enter(); }
IcDomainScope::~IcDomainScope() { ic_->domain.Leave(); }

void ChildAdded(DeviceState* dev) { dev->children.fetch_add(1, std::memory_order_relaxed); }

}  // namespace cltrace::runtime::internal

namespace cltrace::runtime {

std::vector<std::string> ProcessViolations() {
  internal::ProcessLog& log = internal::GetProcessLog();
  std::lock_guard<std::mutex> lock(log.mu);
  return log.lines;
}

void ClearProcessViolations() {
  internal::ProcessLog& log = internal::GetProcessLog();
  std::lock_guard<std::mutex> lock(log.mu);
  log.lines.clear();
}

namespace internal {
namespace {
thread_local DeferredBindingReleases* g_binding_releases = nullptr;
}  // namespace

DeferredBindingReleases::DeferredBindingReleases() : previous_(g_binding_releases) {
  g_binding_releases = this;
}

DeferredBindingReleases::~DeferredBindingReleases() {
  g_binding_releases = previous_;
  for (Object* o : items_) o->InternalRelease();
}

bool DeferredBindingReleases::Defer(Object* o) {
  if (g_binding_releases == nullptr) return false;
  g_binding_releases->items_.push_back(o);
  return true;
}

}  // namespace internal
}  // namespace cltrace::runtime
