// The built-in reference kernel model (runtime/kernel.h): command buffers, allocation lists,
// allocation handles and fences for an infinitely fast GPU.
#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/kernel.h"

namespace cltrace::runtime {
namespace {

constexpr uint32_t kDefaultCommandBufferSize = 64 * 1024;
constexpr uint32_t kDefaultAllocationListSize = 512;
constexpr uint32_t kDefaultPatchListSize = 512;
constexpr uint32_t kPatchEntrySize = 24;  // D3DDDI_PATCHLOCATIONLIST

// Two sets of buffers per context, handed out alternately: the UMD fills one while the other
// one's submission is (notionally) executing, as with DX6-style double buffering.
struct ContextBuffers {
  std::vector<uint8_t> command[2];
  std::vector<AllocationListEntry> allocations[2];
  std::vector<uint8_t> patches[2];
  int current = 0;
  uint64_t submitted = 0;
};

class ReferenceKernel : public KernelModel {
 public:
  HRESULT CreateContext(D3DDDICB_CREATECONTEXT* a) override {
    std::lock_guard<std::mutex> lock(mu_);
    uint32_t id = ++next_context_;
    ContextBuffers& c = contexts_[id];
    for (int i = 0; i < 2; ++i) {
      c.command[i].assign(kDefaultCommandBufferSize, 0);
      c.allocations[i].assign(kDefaultAllocationListSize, AllocationListEntry{0, 0});
      c.patches[i].assign(kDefaultPatchListSize * kPatchEntrySize, 0);
    }
    a->hContext.value = id;
    a->pCommandBuffer = c.command[0].data();
    a->CommandBufferSize = kDefaultCommandBufferSize;
    a->pAllocationList = c.allocations[0].data();
    a->AllocationListSize = kDefaultAllocationListSize;
    a->pPatchLocationList = c.patches[0].data();
    a->PatchLocationListSize = kDefaultPatchListSize;
    a->CommandBuffer = 0x100000000ull * id;
    return S_OK;
  }

  HRESULT DestroyContext(const D3DDDICB_DESTROYCONTEXT* a) override {
    std::lock_guard<std::mutex> lock(mu_);
    return contexts_.erase(a->hContext.value) == 1 ? S_OK : static_cast<HRESULT>(E_INVALIDARG);
  }

  HRESULT Render(D3DDDICB_RENDER* a) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = contexts_.find(a->hContext.value);
    if (it == contexts_.end()) return static_cast<HRESULT>(E_INVALIDARG);
    ContextBuffers& c = it->second;
    ++c.submitted;  // completes at once: the model GPU is infinitely fast
    c.current ^= 1;
    int n = c.current;
    uint32_t want = std::max(a->NewCommandBufferSize, kDefaultCommandBufferSize);
    if (c.command[n].size() < want) c.command[n].assign(want, 0);
    uint32_t want_alloc = std::max(a->NewAllocationListSize, kDefaultAllocationListSize);
    if (c.allocations[n].size() < want_alloc) {
      c.allocations[n].assign(want_alloc, AllocationListEntry{0, 0});
    }
    uint32_t want_patch = std::max(a->NewPatchLocationListSize, kDefaultPatchListSize);
    if (c.patches[n].size() < want_patch * kPatchEntrySize) {
      c.patches[n].assign(want_patch * kPatchEntrySize, 0);
    }
    a->pNewCommandBuffer = c.command[n].data();
    a->NewCommandBufferSize = static_cast<UINT>(c.command[n].size());
    a->pNewAllocationList = c.allocations[n].data();
    a->NewAllocationListSize = static_cast<UINT>(c.allocations[n].size());
    a->pNewPatchLocationList = c.patches[n].data();
    a->NewPatchLocationListSize = static_cast<UINT>(c.patches[n].size() / kPatchEntrySize);
    a->QueuedBufferCount = 0;
    a->NewCommandBuffer = 0x100000000ull * a->hContext.value + 0x10000ull * n;
    return S_OK;
  }

  HRESULT Present(const D3DDDICB_PRESENT* a) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = contexts_.find(a->hContext.value);
    if (it == contexts_.end()) return static_cast<HRESULT>(E_INVALIDARG);
    ++it->second.submitted;
    return S_OK;
  }

  HRESULT Allocate(D3DDDICB_ALLOCATE* a) override {
    if (a == nullptr || (a->NumAllocations > 0 && a->pAllocationInfo == nullptr)) {
      return static_cast<HRESULT>(E_INVALIDARG);
    }
    for (UINT i = 0; i < a->NumAllocations; ++i) {
      a->pAllocationInfo[i].hAllocation.value = next_allocation_.fetch_add(1) + 1;
    }
    a->hKMResource.value = next_resource_.fetch_add(1) + 1;
    return S_OK;
  }

  HRESULT Deallocate(const D3DDDICB_DEALLOCATE* a) override {
    return a == nullptr ? static_cast<HRESULT>(E_INVALIDARG) : S_OK;
  }

  HRESULT Lock(D3DDDICB_LOCK*) override {
    // Allocations of this model have no CPU-visible backing; drivers keep their own copies.
    return static_cast<HRESULT>(D3DDDIERR_NOTAVAILABLE);
  }
  HRESULT Unlock(const D3DDDICB_UNLOCK*) override { return S_OK; }

  const uint8_t* CommandBuffer(uint32_t hContext) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = contexts_.find(hContext);
    return it == contexts_.end() ? nullptr : it->second.command[it->second.current].data();
  }

  const AllocationListEntry* AllocationList(uint32_t hContext) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = contexts_.find(hContext);
    return it == contexts_.end() ? nullptr : it->second.allocations[it->second.current].data();
  }

  uint64_t CompletedFence(uint32_t hContext) override { return SubmittedFence(hContext); }

  uint64_t SubmittedFence(uint32_t hContext) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = contexts_.find(hContext);
    return it == contexts_.end() ? 0 : it->second.submitted;
  }

 private:
  std::mutex mu_;
  absl::flat_hash_map<uint32_t, ContextBuffers> contexts_;
  uint32_t next_context_ = 0;
  std::atomic<uint32_t> next_allocation_{0};
  std::atomic<uint32_t> next_resource_{0};
};

}  // namespace

std::unique_ptr<KernelModel> MakeReferenceKernel() { return std::make_unique<ReferenceKernel>(); }

}  // namespace cltrace::runtime
