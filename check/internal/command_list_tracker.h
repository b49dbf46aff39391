// CommandListTracker: the command-list state machine of ddi-spec §3.1. It consumes the IC-table
// CreateCommandList / RecycleCreateCommandList (the end of a DC's Finish), CommandListExecute,
// RecycleDestroyCommandList and DestroyCommandList, the DC-table RecycleCommandList loop and
// nested CommandListExecute, and the failure of a CreateCommandList (pfnSetErrorCb inside it).
// It reports R13, R21, R22, R29, R40-R46, R52, R53, R54, R59, R61, R62; it sets the creating
// thread's R35 obligation (ThreadTracker) and closes the finished DC (ContextTracker). Peers
// read lists by index (at): local handles count their opens, R35/R37 the local size.
//
// Thread-safety: none (one per Checker, which is single-threaded).
//
// Example:
//   t.lists.OnCreate(e, m, ic, /*recycle=*/false);  // IC::CreateCommandList
//   t.lists.OnExecute(e, m, ic);                     // IC::CommandListExecute
#ifndef CLTRACE_CHECK_INTERNAL_COMMAND_LIST_TRACKER_H_
#define CLTRACE_CHECK_INTERNAL_COMMAND_LIST_TRACKER_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "check/internal/tracker.h"

namespace cltrace::check::internal {

struct CommandList {
  uint64_t handle = 0;
  uint32_t number = 0;  // lifetime number (1, 2, ... in creation order; TransitionEvent)
  State state = State::kNone;
  int32_t owner = -1;     // DC that recorded it
  int32_t cache_dc = -1;  // DC whose cache holds it (RC)
  uint64_t create_seq = 0;
  std::vector<int32_t> queries;  // IC query objects its recording began or ended
  std::vector<int32_t> maps;     // IC dynamic resources its recording mapped
  Ring last;
};

class CommandListTracker : public TrackerBase {
 public:
  CommandListTracker(CheckEnv& env, Trackers& peers) : TrackerBase(env, peers) {}

  const CommandList& at(int32_t i) const { return cls_[i]; }
  size_t size() const { return cls_.size(); }
  // Moves list `i` to `s` (its "[last: ...]" ring and the observer see it).
  void To(int32_t i, State s, const Event& e);

  // IC table.
  void OnCreate(const Event& e, const CallMeta& m, int32_t ic, bool recycle);
  void OnExecute(const Event& e, const CallMeta& m, int32_t ic);
  void OnRecycleDestroy(const Event& e, const CallMeta& m, int32_t ic);
  void OnDestroy(const Event& e, const CallMeta& m, int32_t ic);
  // A pfnSetErrorCb `cb` failed the IC CreateCommandList `create` (T1e, D5e).
  void OnCreateFailed(const Event& cb, const Event& create, const CallMeta& cm);
  // DC table.
  void OnDcRecycle(const Event& e, const CallMeta& m, int32_t dc);
  void OnDcExecute(const Event& e, const CallMeta& m, int32_t dc);

  // Compaction (Trackers::Compact): what the lists refer to; drops the lists `r` drops.
  void MarkRefs(RecordMarks& marks) const;
  void Compact(const RecordRemap& r);

 private:
  // A new list record for handle `h` (its lifetime number is the next one).
  int32_t NewList(uint64_t h, uint64_t create_seq);
  // The DC a Finish ends must be recording, with no open query or map (R53, R29, R52).
  bool CheckFinishingDc(const Event& e, int32_t d);
  // The list handle `h` of IC-table call `fn` names (its index in *index when given); null when
  // there is none to judge further: `h` never was a list ("<fn> on a handle that
  // <not_a_list_what>", flagged `not_a_list` when the trace shows the IC from its start) or
  // the list's CreateCommandList failed (R21).
  CommandList* IcList(const Event& e, uint64_t h, int32_t ic, Rule not_a_list, absl::string_view fn,
                      absl::string_view not_a_list_what, int32_t* index = nullptr);
  int32_t CreateFresh(const Event& e, uint64_t h, int32_t d);
  // RecycleCreateCommandList of `h` (R22, R43, R45); *ok: it succeeded.
  int32_t RecycleCreate(const Event& e, uint64_t h, int32_t d, int32_t ic, bool* ok);
  void CheckRecycleCreateFrom(const Event& e, uint64_t h, int32_t ci, int32_t d);
  // R61/R62: what the list began or mapped is not still begun or mapped on `target`.
  void CheckExecuteTarget(const Event& e, const CommandList& c, int32_t target, uint64_t h);
  // The IC list a nested CommandListExecute names, -1 (flagged R59) if none.
  int32_t NestedTarget(const Event& e, uint64_t h, int32_t dc);

  std::vector<CommandList> cls_;
  uint32_t created_ = 0;  // lists ever made (the last lifetime number)
};

}  // namespace cltrace::check::internal

#endif  // CLTRACE_CHECK_INTERNAL_COMMAND_LIST_TRACKER_H_
