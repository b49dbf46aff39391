// The contract checker's engine (Checker::Impl): a thin dispatcher over the trackers of
// check/internal/trackers.h. It validates the event order, routes each event by layer and
// table to the tracker that owns the state machine, resolves deadlines as calls return and
// judges what belongs to no single machine: the table a device call goes through (R13, R51),
// the R5 table-rewrite notes and the pfnSetErrorCb error rules (R7, R20-R31).
// Dispatch of device calls is in checker.cc, callbacks in checker_callbacks.cc.
//
// Thread-safety: one Impl per Checker, single-threaded.
#ifndef CLTRACE_CHECK_INTERNAL_CHECKER_IMPL_H_
#define CLTRACE_CHECK_INTERNAL_CHECKER_IMPL_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "check/checker.h"
#include "check/internal/check_env.h"
#include "check/internal/trackers.h"

namespace cltrace::check {

class Checker::Impl {
  using CallMeta = internal::CallMeta;
  using Event = format::Event;
  using Op = internal::Op;

 public:
  explicit Impl(const CheckOptions& options) : env_(options), t_(env_) {}

  void set_observer(TransitionObserver* o) { env_.set_observer(o); }

  absl::StatusOr<CheckResult> Run(absl::Span<const Event> events,
                                  const format::TokenTable& handles);
  void Begin(const format::TokenTable& handles, TraceReplay replay);
  absl::Status Add(const Event& e);
  CheckResult Finish();
  size_t records_held() const { return t_.records(); }
  Checker::HandleMemory handle_memory() const {
    return {t_.records(), env_.slot_count(), t_.spill.clusters_out(), t_.spill.clusters_back(),
            t_.spill.file_bytes()};
  }
  const CheckResult& findings() const { return env_.result(); }

 private:
  void Flag(Rule rule, const Event& e, uint64_t handle, std::string message,
            const internal::Ring* last = nullptr) {
    env_.Flag(rule, e, handle, std::move(message), last);
  }
  void Warn(Rule rule, const Event& e, uint64_t handle, std::string message) {
    env_.Warn(rule, e, handle, std::move(message));
  }
  static uint64_t Arg(const Event& e, int16_t f) { return internal::CheckEnv::Arg(e, f); }
  static absl::string_view CallName(format::CallId c) { return internal::CheckEnv::CallName(c); }

  void OnEvent(const Event& e);
  uint64_t added_ = 0;     // events judged (Add)
  size_t compact_at_ = 0;  // records held that trigger the next compaction
  // Slots in memory that trigger the next compaction (a trace may name many handle values
  // without making records for them).
  static constexpr size_t kSlotsBeforeCompaction = size_t{1} << 16;
  size_t slots_at_ = kSlotsBeforeCompaction;
  uint64_t prev_seq_ = 0;
  void OnAnnotation(const Event& e);
  void OnAdapterCall(const Event& e, const CallMeta& m);
  void OnDeviceCall(const Event& e, const CallMeta& m);
  void OnDcCall(const Event& e, const CallMeta& m, int32_t dc);
  // Rendering, copies, queries, maps and nested execution on a recording DC.
  void OnDcWork(const Event& e, const CallMeta& m, int32_t dc);
  void OnIcCall(const Event& e, const CallMeta& m, int32_t ic);
  // R10-R12: the thread domain an IC-table call enters.
  void EnterIcDomain(const Event& e, const CallMeta& m, int32_t ic);
  void OnCoreLayerCallback(const Event& e, const CallMeta& m);
  void OnDisableStagingCb(const Event& e, const CallMeta& m);
  void OnSetErrorCb(const Event& e, const CallMeta& m);
  // R28: an error is reported to the core layer of the table the failing call went through.
  void CheckErrorRoute(const Event& e, uint64_t rt, int32_t pctx, const std::string& fn);
  // R20-R27, R30, R31: the codes the enclosing call `pm` may report.
  void JudgeErrorCode(const Event& e, const CallMeta& pm, bool pdc, uint32_t code, uint64_t rt,
                      const std::string& what);
  // The failing call's consequences (§3: "create failed => handle dead"; R29).
  void ApplyFailure(const Event& e, const Event& p, const CallMeta& pm, int32_t pctx,
                    uint32_t code);

  internal::CheckEnv env_;
  internal::Trackers t_;
  bool consumed_calc_ = false;    // this CalcDeferredContextHandleSize answered a creation
  bool first_of_thread_ = false;  // this top-level device call is its thread's first
};

}  // namespace cltrace::check

#endif  // CLTRACE_CHECK_INTERNAL_CHECKER_IMPL_H_
