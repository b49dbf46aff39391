// Test fixture for the checker's trackers on their own: write a trace with the CheckTest
// building blocks, then Start() builds a CheckEnv and the Trackers over it, and a test feeds
// chosen events straight to one tracker (and the peers it queries) instead of running the
// whole checker.
//
// Thread-safety: none (test helper).
#ifndef CLTRACE_CHECK_TESTING_TRACKER_FIXTURE_H_
#define CLTRACE_CHECK_TESTING_TRACKER_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "check/internal/trackers.h"
#include "check/testing/check_fixture.h"

namespace cltrace::check::testing {

class TrackerTest : public CheckTest {
 protected:
  using CallMeta = internal::CallMeta;
  using CommandListTracker = internal::CommandListTracker;
  using ContextTracker = internal::ContextTracker;
  using GpuTracker = internal::GpuTracker;
  using LocalTracker = internal::LocalTracker;
  using ObjectTracker = internal::ObjectTracker;
  using Op = internal::Op;

  // Builds the trackers over the trace written so far (the trace must be complete: the
  // environment keeps a view of its events).
  internal::Trackers& Start() {
    env_ = std::make_unique<internal::CheckEnv>(options);
    env_->Begin(t.events(), t.handles());
    trackers_ = std::make_unique<internal::Trackers>(*env_);
    return *trackers_;
  }
  internal::Trackers& trk() { return *trackers_; }
  internal::CheckEnv& env() { return *env_; }
  const format::Event& E(uint64_t seq) const { return t.At(seq); }
  const internal::CallMeta& M(uint64_t seq) const {
    return internal::CallTable::Get()[t.At(seq).call];
  }
  // The seq of the nth (from 0) call of `fn` in the trace, 0 (a test failure) if none.
  uint64_t SeqOf(absl::string_view fn, int nth = 0) const {
    for (const format::Event& e : t.events())
      if (internal::CheckEnv::CallName(e.call) == fn && nth-- == 0) return e.seq;
    ADD_FAILURE() << "no call " << fn;
    return 0;
  }
  // Rule ids of the errors (warnings) reported so far, in report order.
  std::vector<std::string> Found() const { return Ids(env_->result().violations); }
  std::vector<std::string> Warned() const { return Ids(env_->result().warnings); }
  // The index of a handle token's context, command list, object or local handle (-1 none).
  internal::HandleSlot& SlotOf(const std::string& token) { return env_->Slot(t.H(token)); }
  // Feeds an adapter CreateDevice and the device's first IC call (the context tracker's way
  // of learning the IC); returns the IC's index.
  int32_t DeviceFrom(uint64_t create_device_seq) {
    trk().contexts.OnCreateDevice(E(create_device_seq), M(create_device_seq));
    return SlotOf("ic").ctx;
  }
  // Feeds the device's CreateDevice and dc1's CreateDeferredContext to the context tracker;
  // sets ic_ and dc_ to their indexes and returns dc1's.
  int32_t DeviceAndDc() {
    ic_ = DeviceFrom(SeqOf("CreateDevice"));
    uint64_t create = SeqOf("CreateDeferredContext");
    trk().contexts.OnCreateDeferredContext(E(create), M(create), ic_);
    dc_ = SlotOf("dc1").ctx;
    return dc_;
  }

  int32_t ic_ = -1;  // the IC's index, after DeviceAndDc()
  int32_t dc_ = -1;  // dc1's index, after DeviceAndDc()

 private:
  static std::vector<std::string> Ids(const std::vector<Violation>& vs) {
    std::vector<std::string> ids;
    for (const Violation& v : vs) ids.push_back(v.id());
    return ids;
  }
  std::unique_ptr<internal::CheckEnv> env_;
  std::unique_ptr<internal::Trackers> trackers_;
};

}  // namespace cltrace::check::testing

#endif  // CLTRACE_CHECK_TESTING_TRACKER_FIXTURE_H_
