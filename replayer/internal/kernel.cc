#include "replayer/internal/kernel.h"

#include <algorithm>
#include <cstring>

#include "wddm/digest.h"

namespace cltrace::replay::internal {

void* ReplayKernel::NewBuffer(uint64_t bytes) {
  Owned o;
  o.bytes = std::max<uint64_t>(bytes, 8);
  // Whole 64-bit words, zeroed: the digest reads words, and a driver sees clean memory.
  o.words.reset(new uint64_t[(o.bytes + 7) / 8]());
  void* p = o.words.get();
  buffers_.push_back(std::move(o));
  return p;
}

void* ReplayKernel::Buffer(uint64_t recorded, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_recorded_.find(recorded);
  if (it != by_recorded_.end() && recorded_bytes_[recorded] >= bytes) return it->second;
  void* p = NewBuffer(bytes);
  by_recorded_[recorded] = p;
  recorded_bytes_[recorded] = bytes;
  return p;
}

void* ReplayKernel::Fresh(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  return NewBuffer(bytes);
}

uint32_t ReplayKernel::NewHandle() {
  std::lock_guard<std::mutex> lock(mu_);
  return ++next_handle_;
}

void ReplayKernel::SetContext(uint32_t hcontext, const ContextBuffers& buffers) {
  std::lock_guard<std::mutex> lock(mu_);
  contexts_[hcontext] = buffers;
}

ReplayKernel::ContextBuffers ReplayKernel::Context(uint32_t hcontext) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = contexts_.find(hcontext);
  return it == contexts_.end() ? ContextBuffers{} : it->second;
}

bool ReplayKernel::Submit(uint32_t hcontext, uint32_t offset, uint32_t length, uint32_t allocations,
                          bool digest, const std::function<void(absl::Span<uint64_t>)>& canon) {
  ContextBuffers c;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++summary_.submissions;
    summary_.command_bytes += length;
    if (!digest) return true;
    auto it = contexts_.find(hcontext);
    if (it == contexts_.end()) return false;
    c = it->second;
  }
  if (c.command == nullptr || uint64_t{offset} + length > c.command_size ||
      allocations > c.allocation_entries) {
    return false;
  }
  // Words of the submitted range (the tail zero-padded), canonicalised, then the allocation
  // list entries as submitted.
  std::vector<uint64_t> words((length + 7) / 8, 0);
  std::memcpy(words.data(), static_cast<const uint8_t*>(c.command) + offset, length);
  canon(absl::MakeSpan(words));
  uint64_t d = gpu::HashBytes(words.data(), words.size() * 8);
  if (c.allocations != nullptr && allocations > 0) {
    d = gpu::DigestCombine(d, gpu::HashBytes(c.allocations, allocations * kAllocationEntryBytes));
  }
  std::lock_guard<std::mutex> lock(mu_);
  summary_.digest = gpu::DigestCombine(summary_.digest, d);
  return true;
}

void ReplayKernel::Present() {
  std::lock_guard<std::mutex> lock(mu_);
  ++summary_.submissions;
}

KernelSummary ReplayKernel::summary() {
  std::lock_guard<std::mutex> lock(mu_);
  return summary_;
}

}  // namespace cltrace::replay::internal
