// Session: the handles — the replay's runtime and kernel handle values, the reverse map
// from a driver-visible address to a trace handle id, the memory of driver handles and its
// quarantine, and the canonical form of handle addresses in command buffers. See session.h.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "replayer/internal/session.h"

namespace cltrace::replay::internal {
namespace {

// Quarantine of freed handle memory (a late access by the driver stays harmless).
constexpr size_t kQuarantineBlocks = 1u << 16;
constexpr size_t kQuarantineBytes = size_t{64} << 20;
// Synthetic kernel handle values for hand-written tokens ("ctx1").
constexpr uint64_t kSyntheticKernelBase = 0x40000000;
// Canonical form of a driver/runtime handle address inside a command buffer.
constexpr uint64_t kCanonicalHandleTag = 0xC17A000000000000ull;

}  // namespace

// ---- Handles --------------------------------------------------------------------------------

uint64_t Session::RuntimeHandle(uint64_t id) {
  uint64_t raw = slots_[id].raw.load(std::memory_order_acquire);
  if (raw != 0) return raw;
  raw = runtime_base_ + id * 16;
  slots_[id].raw.store(raw, std::memory_order_release);
  return raw;
}

uint64_t Session::KernelHandle(uint64_t id) {
  if (id == 0 || id >= slot_count_) return 0;
  uint64_t raw = slots_[id].raw.load(std::memory_order_acquire);
  if (raw != 0) return raw;
  raw = plan_.token_value[id];
  if (raw == 0 || raw > 0xffffffffu) raw = kSyntheticKernelBase + (id & 0x3fffffff);
  slots_[id].raw.store(raw, std::memory_order_release);
  return raw;
}

uint64_t Session::HandleId(ThreadState* t, uint64_t raw) {
  if (raw >= runtime_base_ && raw < runtime_base_ + runtime_bytes_ &&
      (raw - runtime_base_) % 16 == 0) {
    const uint64_t id = (raw - runtime_base_) / 16;
    if (id < slot_count_ && slots_[id].raw.load(std::memory_order_acquire) == raw) return id;
  }
  if (raw <= 0xffffffffu) {
    auto it = plan_.id_of_value.find(raw);
    if (it != plan_.id_of_value.end() &&
        slots_[it->second].raw.load(std::memory_order_acquire) == raw) {
      return it->second;
    }
    if (raw >= kSyntheticKernelBase && raw < 2 * kSyntheticKernelBase) {
      const uint64_t id = raw - kSyntheticKernelBase;
      if (id < slot_count_ && slots_[id].raw.load(std::memory_order_acquire) == raw) return id;
    }
  }
  {
    std::lock_guard<std::mutex> lock(memory_mu_);
    auto it = id_of_raw_.find(raw);
    if (it != id_of_raw_.end()) return it->second;
  }
  if (t == nullptr) return kUnknownHandleBase;
  t->unknown.push_back(raw);
  return kUnknownHandleBase + t->unknown.size() - 1;
}

void* Session::AllocateHandle(uint64_t id, size_t size) {
  void* memory = std::calloc(std::max<size_t>(size, 1), 1);
  if (memory == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(memory_mu_);
  auto it = live_.find(id);
  if (it != live_.end()) {
    // The recorded runtime reused this address without a destroy (e.g. after a failed
    // create): the old memory goes to the quarantine like a destroyed handle's.
    quarantine_bytes_ += it->second.size;
    quarantine_.push_back(it->second);
    live_.erase(it);
  }
  live_[id] = Block{memory, size, id};
  id_of_raw_[reinterpret_cast<uintptr_t>(memory)] = id;
  slots_[id].raw.store(reinterpret_cast<uintptr_t>(memory), std::memory_order_release);
  TrimQuarantine();
  return memory;
}

void Session::TrimQuarantine() {
  while (quarantine_.size() > kQuarantineBlocks || quarantine_bytes_ > kQuarantineBytes) {
    Block b = quarantine_.front();
    quarantine_.pop_front();
    quarantine_bytes_ -= b.size;
    Slot& s = slots_[b.id];
    if (s.raw.load(std::memory_order_acquire) == reinterpret_cast<uintptr_t>(b.memory)) {
      s.raw.store(0, std::memory_order_release);
      s.table.store(nullptr, std::memory_order_release);
      s.dxgi.store(nullptr, std::memory_order_release);
      s.deferred.store(false, std::memory_order_release);
    }
    id_of_raw_.erase(reinterpret_cast<uintptr_t>(b.memory));
    std::free(b.memory);
  }
}

void Session::Quarantine(uint64_t id) {
  std::lock_guard<std::mutex> lock(memory_mu_);
  auto it = live_.find(id);
  if (it == live_.end()) return;
  quarantine_bytes_ += it->second.size;
  quarantine_.push_back(it->second);
  live_.erase(it);
  // A long run of destroys (no create between them) must not grow the quarantine past its
  // bound either.
  TrimQuarantine();
}

void Session::Submit(uint32_t hcontext, uint32_t offset, uint32_t length, uint32_t allocations) {
  kernel_.Submit(hcontext, offset, length, allocations, options_.digest,
                 [this](absl::Span<uint64_t> words) { Canonicalize(words); });
}

void Session::Canonicalize(absl::Span<uint64_t> words) {
  // Command formats pack 64-bit values into 32-bit word streams, so an address may start at
  // any 4-byte boundary: look at every one.
  unsigned char* bytes = reinterpret_cast<unsigned char*>(words.data());
  const size_t size = words.size() * 8;
  std::lock_guard<std::mutex> lock(memory_mu_);
  for (size_t at = 0; at + 8 <= size; at += 4) {
    uint64_t w;
    std::memcpy(&w, bytes + at, 8);
    if (w < 0x10000) continue;
    uint64_t id = 0;
    if (w >= runtime_base_ && w < runtime_base_ + runtime_bytes_) {
      id = (w - runtime_base_) / 16;
    } else if (auto it = id_of_raw_.find(w); it != id_of_raw_.end()) {
      id = it->second;
    } else {
      continue;
    }
    w = kCanonicalHandleTag | id;
    std::memcpy(bytes + at, &w, 8);
    at += 4;  // the next candidate starts after this value
  }
}

}  // namespace cltrace::replay::internal
