// Detects overlapping calls in one thread domain (R10) from the driver side.
//
// The runtime promises that no two IC-domain DDIs of a device, and no two DDIs on one deferred
// context, are in flight at once (ddi-spec R10). A domain here is entered by a thread at DDI
// entry and left at exit; re-entry from the same thread (a state-refresh callback re-sending a
// binding through a Set* DDI) is nesting, not overlap.
//
// Thread-safety: Enter/Leave may race; that race is exactly what is being detected.
#ifndef CLTRACE_REFDRIVER_INTERNAL_DOMAIN_H_
#define CLTRACE_REFDRIVER_INTERNAL_DOMAIN_H_

#include <atomic>
#include <cstdint>

namespace cltrace::refdriver {

// A per-thread identity that is never 0.
uintptr_t ThreadTag();

class Domain {
 public:
  // Returns false if another thread is inside the domain (the caller reports R10).
  bool Enter() {
    uintptr_t me = ThreadTag();
    uintptr_t expected = 0;
    if (owner_.compare_exchange_strong(expected, me, std::memory_order_acquire)) {
      depth_ = 1;
      return true;
    }
    if (expected == me) {
      ++depth_;
      return true;
    }
    return false;
  }
  // Only for a successful Enter.
  void Leave() {
    if (--depth_ == 0) owner_.store(0, std::memory_order_release);
  }

 private:
  std::atomic<uintptr_t> owner_{0};
  int depth_ = 0;  // touched only by the owner
};

}  // namespace cltrace::refdriver

#endif  // CLTRACE_REFDRIVER_INTERNAL_DOMAIN_H_
