// HandleMap<T>: raw handle value -> context object, read without locks on every thunk call.
//
// The thunks the recorder installs are plain C function pointers shared by every context, so
// each call finds its context (device, deferred context, core layer, kernel-callback table,
// adapter) from the handle value in its first parameter. The handle values the driver sees stay
// exactly the ones the runtime passed; the map only observes them.
//
// Design: open addressing over a power-of-two array of (key, value) slots. Inserts and erases
// happen on Create*/Destroy* paths under a mutex; Find never locks, never allocates and never
// writes shared memory. A table that gets too full is replaced by a larger copy published with
// a release store; superseded arrays are kept until the map dies (a reader may still be
// probing one), which bounds the waste at the size of the final array. Values are never freed
// by the map: owners keep context objects alive for the life of the process (a late call with a
// dead handle then reads a stale but valid object instead of freed memory).
//
// Thread-safety: Find from any thread at any time; Insert/Erase serialise on an internal mutex.
//
// Example:
//   HandleMap<DeviceCtx> devices;
//   devices.Insert(hDevice.pDrvPrivate, ctx);
//   DeviceCtx* c = devices.Find(hDevice.pDrvPrivate);  // lock-free
#ifndef CLTRACE_RECORDER_INTERNAL_HANDLE_MAP_H_
#define CLTRACE_RECORDER_INTERNAL_HANDLE_MAP_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace cltrace::recorder::internal {

template <typename T>
class HandleMap {
 public:
  HandleMap() { Publish(std::make_unique<Table>(kInitialBits)); }
  HandleMap(const HandleMap&) = delete;
  HandleMap& operator=(const HandleMap&) = delete;

  // The value stored for `key` (a non-zero raw handle value), or nullptr.
  T* Find(const void* key) const { return Find(reinterpret_cast<uintptr_t>(key)); }
  T* Find(uintptr_t key) const {
    const Table* t = current_.load(std::memory_order_acquire);
    for (size_t i = Hash(key, t->bits);; i = (i + 1) & t->mask) {
      const uintptr_t k = t->slots[i].key.load(std::memory_order_acquire);
      if (k == key) return t->slots[i].value.load(std::memory_order_acquire);
      if (k == kEmpty) return nullptr;
    }
  }

  // Maps `key` to `value`, replacing an existing mapping (handle memory the runtime reuses for
  // a new object). `key` must not be 0.
  void Insert(const void* key, T* value) { Insert(reinterpret_cast<uintptr_t>(key), value); }
  void Insert(uintptr_t key, T* value) {
    std::lock_guard<std::mutex> l(mu_);
    Table* t = current_.load(std::memory_order_relaxed);
    if ((t->used + 1) * 2 > t->mask + 1) t = Grow(t);
    InsertLocked(t, key, value);
  }

  // Forgets `key` (its slot becomes a tombstone so probes continue past it).
  void Erase(const void* key) { Erase(reinterpret_cast<uintptr_t>(key)); }
  void Erase(uintptr_t key) {
    std::lock_guard<std::mutex> l(mu_);
    Table* t = current_.load(std::memory_order_relaxed);
    for (size_t i = Hash(key, t->bits);; i = (i + 1) & t->mask) {
      const uintptr_t k = t->slots[i].key.load(std::memory_order_relaxed);
      if (k == kEmpty) return;
      if (k == key) {
        t->slots[i].key.store(kTombstone, std::memory_order_release);
        --t->live;
        return;
      }
    }
  }

  size_t size() const {
    std::lock_guard<std::mutex> l(mu_);
    return current_.load(std::memory_order_relaxed)->live;
  }

  // Calls f(T*) for every live value, under the map's mutex (background checks only).
  template <typename F>
  void ForEach(F&& f) const {
    std::lock_guard<std::mutex> l(mu_);
    const Table* t = current_.load(std::memory_order_relaxed);
    for (size_t i = 0; i <= t->mask; ++i) {
      const uintptr_t k = t->slots[i].key.load(std::memory_order_relaxed);
      if (k != kEmpty && k != kTombstone) f(t->slots[i].value.load(std::memory_order_relaxed));
    }
  }

 private:
  static constexpr uintptr_t kEmpty = 0;
  static constexpr uintptr_t kTombstone = 1;  // never a handle value: handles are aligned
  static constexpr int kInitialBits = 6;

  struct Slot {
    std::atomic<uintptr_t> key{kEmpty};
    std::atomic<T*> value{nullptr};
  };
  struct Table {
    explicit Table(int b) : bits(b), mask((size_t{1} << b) - 1), slots(new Slot[size_t{1} << b]) {}
    int bits;
    size_t mask;
    std::unique_ptr<Slot[]> slots;
    size_t used = 0;  // live + tombstones (they lengthen probes)
    size_t live = 0;
  };

  static size_t Hash(uintptr_t key, int bits) {
    // Handle memory is at least 8-byte aligned; Fibonacci hashing spreads the high bits.
    return static_cast<size_t>((static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> (64 - bits));
  }

  void InsertLocked(Table* t, uintptr_t key, T* value) {
    size_t reuse = SIZE_MAX;
    for (size_t i = Hash(key, t->bits);; i = (i + 1) & t->mask) {
      const uintptr_t k = t->slots[i].key.load(std::memory_order_relaxed);
      if (k == key) {
        t->slots[i].value.store(value, std::memory_order_release);
        return;
      }
      if (k == kTombstone && reuse == SIZE_MAX) reuse = i;
      if (k == kEmpty) {
        if (reuse == SIZE_MAX) {
          reuse = i;
          ++t->used;
        }
        break;
      }
    }
    // Value first, then key: a reader that sees the key sees the value.
    t->slots[reuse].value.store(value, std::memory_order_release);
    t->slots[reuse].key.store(key, std::memory_order_release);
    ++t->live;
  }

  Table* Grow(Table* old) {
    int bits = old->bits;
    while ((old->live + 1) * 4 > (size_t{1} << bits)) ++bits;
    if (bits == old->bits && old->used > old->live) {
      // Mostly tombstones: rebuild at the same size.
    } else if (bits == old->bits) {
      ++bits;
    }
    auto fresh = std::make_unique<Table>(bits);
    for (size_t i = 0; i <= old->mask; ++i) {
      const uintptr_t k = old->slots[i].key.load(std::memory_order_relaxed);
      if (k != kEmpty && k != kTombstone) {
        InsertLocked(fresh.get(), k, old->slots[i].value.load(std::memory_order_relaxed));
      }
    }
    return Publish(std::move(fresh));
  }

  Table* Publish(std::unique_ptr<Table> t) {
    Table* raw = t.get();
    tables_.push_back(std::move(t));
    current_.store(raw, std::memory_order_release);
    return raw;
  }

  std::atomic<Table*> current_{nullptr};
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Table>> tables_;  // every array ever published (readers may lag)
};

}  // namespace cltrace::recorder::internal

#endif  // CLTRACE_RECORDER_INTERNAL_HANDLE_MAP_H_
