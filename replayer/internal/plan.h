// The replay plan: a trace checked for everything that can be checked before any driver runs
// (hostile-input validation) and arranged for replay — the call tree (callbacks under the DDI
// call that made them, state-refresh re-sends under their callback), the top-level calls the
// runtime made in seq order, and a dense index per recorded thread.
//
// Thread-safety: a Plan is immutable after BuildPlan and may be read from any thread.
#ifndef CLTRACE_REPLAYER_INTERNAL_PLAN_H_
#define CLTRACE_REPLAYER_INTERNAL_PLAN_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "format/event.h"
#include "replayer/internal/call_meta.h"
#include "replayer/internal/content.h"

namespace cltrace::replay::internal {

// Limits on sizes a trace may ask the replayer to honour (anything larger is bad input).
inline constexpr uint64_t kMaxHandleBytes = uint64_t{1} << 30;         // one driver handle
inline constexpr uint64_t kMaxKernelBufferBytes = uint64_t{64} << 20;  // one kernel buffer
inline constexpr uint64_t kMaxCapsBytes = uint64_t{1} << 20;           // GetCaps pData
// Input data pointers without content (pSysMemUP of a call the trace has no bytes for, private
// driver data) point into a read-only zero region of this size.
inline constexpr uint64_t kZeroRegionBytes = uint64_t{64} << 20;

// A problem with the input, located at one call.
struct BadInput {
  uint64_t seq = 0;
  uint32_t tid = 0;
  format::CallId call = format::CallId::kInvalid;
  std::string message;

  // The problem `message` at call `e`.
  static BadInput At(const format::Event& e, std::string message) {
    return {e.seq, e.tid, e.call, std::move(message)};
  }
};

// Sets *bad to the problem `message` at call `e`; returns false (a failed check).
bool FailAt(BadInput* bad, const format::Event& e, std::string message);

struct Plan {
  absl::Span<const format::Event> events;
  const format::TokenTable* handles = nullptr;
  // The trace's content table (FORMAT.md §3.8); never null after BuildPlan.
  const format::TokenTable* contents = nullptr;
  // Unmaps whose content the replay writes into the replay driver's mapping, by event index
  // (checked: the content's size is what the recorded Map's pitches lay out).
  absl::flat_hash_map<uint32_t, UnmapContent> unmap_content;
  // Per event: children in seq order (first_child / next_sibling, -1 = none), the effective
  // role (kIgnore for everything below an ignored call) and the dense recorded-thread index.
  std::vector<int32_t> first_child;
  std::vector<int32_t> next_sibling;
  std::vector<Role> role;
  std::vector<uint16_t> thread;
  std::vector<uint32_t> tids;  // dense thread index -> recorded tid
  // Top-level calls the runtime made (issued by the replayer), in seq order, up to --until and
  // before the first call that never returned.
  std::vector<uint32_t> top;
  // DX6-layer calls (Role::kDx6: the DX6 runtime into the DX6 driver), all top-level, in seq
  // order, up to --until and before the first call that never returned; replayed by
  // replayer/internal/dx6_replay.h into the DX6 model driver.
  std::vector<uint32_t> dx6;
  // Top-level callbacks: made by a driver thread outside any DDI call.
  std::vector<uint32_t> async_callbacks;
  // Recorded calls and callbacks the replay covers (the N of "identical (N calls)").
  uint64_t covered = 0;
  // Entry seq of the first top-level call that never returned (the recording ended inside it);
  // the replay stops before it. 0 = none.
  uint64_t never_returned_seq = 0;
  // Handle ids whose token is a recorded value ("0x1a2b"): that value, else 0.
  std::vector<uint64_t> token_value;
  // Recorded value -> handle id, for pointer fields that carry a handle (pICObject).
  absl::flat_hash_map<uint64_t, uint64_t> id_of_value;
};

// Builds the plan of a trace delivered in segments (seq order; format::SeqStream), keeping
// across segments only what later events need: the handle bookkeeping (per id of the trace's
// handle table), the threads, the content checker's shapes and open maps, and a bounded tail
// of earlier calls for the parent checks. Each AddSegment makes its events the plan's current
// segment: events, first_child/next_sibling/role/thread, top, dx6, async_callbacks and
// unmap_content index the segment; tids, token_value, id_of_value, covered (the running total) and
// never_returned_seq are the trace's so far. One segment holding the whole trace is BuildPlan.
//
// Precedence is BuildPlan's: a problem with an event on its own or its nesting (kStructural)
// anywhere in the trace wins over a handle used before its create or after its destroy
// (kHandles); after a kHandles problem AddSegment checks later segments structurally only, and
// a caller that wants BuildPlan's verdict reads on to the end.
//
// A segment should hold whole call trees: a call nested in a call of an earlier segment is
// checked against the tail of earlier calls (made inside a call that returned, on another
// thread, the nesting rules) but not linked below it. ReplayStream cuts segments only where no
// recorded call is in flight (or, once no later call is replayed, where no replayed call is),
// so every call it replays has its tree in one segment.
class HandleSimulation;

class PlanBuilder {
 public:
  enum class Check { kOk, kStructural, kHandles };
  // `handles` and `contents` may grow between segments (definitions read with the events);
  // both must outlive the builder. `collect_dx6`: keep copies of the DX6-layer calls for
  // dx6_plan() (a segmented replay; BuildPlan indexes them in its one segment instead).
  PlanBuilder(const format::TokenTable& handles, const format::TokenTable& contents,
              uint64_t until_seq, bool collect_dx6);
  ~PlanBuilder();
  PlanBuilder(const PlanBuilder&) = delete;
  PlanBuilder& operator=(const PlanBuilder&) = delete;

  Check AddSegment(absl::Span<const format::Event> events, BadInput* bad);
  // After the last segment: the DX6 handle checks over every DX6-layer call.
  bool FinishDx6(BadInput* bad);
  const Plan& plan() const { return plan_; }
  Plan& mutable_plan() { return plan_; }
  // collect_dx6: the DX6-layer calls to replay (their own plan: dx6 indexes them).
  const Plan& dx6_plan() const { return dx6_plan_; }
  // Whether a top-level call after the events so far may still be replayed (not past
  // --until, no top-level call that never returned).
  bool Issuing(uint64_t next_seq) const {
    return plan_.never_returned_seq == 0 && (until_seq_ == 0 || next_seq <= until_seq_);
  }
  // Events kept for the parent checks of later segments (bounded: kParentTail).
  size_t parent_tail_size() const { return tail_.size(); }
  static constexpr size_t kParentTail = size_t{1} << 16;

 private:
  struct Earlier {
    uint64_t seq = 0, end = 0;
    uint32_t tid = 0;
    format::CallId call = format::CallId::kInvalid;
    Role role = Role::kInvalid;
  };
  bool LinkToParent(size_t i, Role* role, std::vector<int32_t>* last_child, BadInput* bad);
  void IndexNewTokens();

  const format::TokenTable& handles_;
  const format::TokenTable& contents_;
  const uint64_t until_seq_;
  const bool collect_dx6_;
  Plan plan_;
  Plan dx6_plan_;
  std::vector<format::Event> dx6_events_;
  std::unique_ptr<HandleSimulation> sim_;
  std::unique_ptr<ContentChecker> content_;
  absl::flat_hash_map<uint32_t, uint16_t> thread_of_tid_;
  std::deque<Earlier> tail_;  // the last kParentTail events of earlier segments, seq order
  uint64_t last_seq_ = 0;
  bool handles_failed_ = false;
  size_t indexed_tokens_ = 1;
};

// Validates `events` (sorted by seq) and builds the plan. Calls with seq > until_seq are left
// out (until_seq 0 = no limit). `contents` is the trace's content table (Event::content ids);
// `handles` and `contents` must outlive the plan. On bad input returns false with *bad filled.
bool BuildPlan(absl::Span<const format::Event> events, const format::TokenTable& handles,
               const format::TokenTable& contents, uint64_t until_seq, Plan* plan, BadInput* bad);

// Bytes a pSysMemUP source of an UpdateSubresourceUP-style call without content reads at most,
// from its box and pitches (texels counted as 16 bytes, the widest DXGI format); 64 KiB without
// a box. (With content the source is the content, whose size the plan checks exactly.)
uint64_t SysMemBytes(format::CallId call, absl::Span<const uint64_t> args);

}  // namespace cltrace::replay::internal

#endif  // CLTRACE_REPLAYER_INTERNAL_PLAN_H_
