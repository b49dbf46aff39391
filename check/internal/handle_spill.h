// HandleSpill: moves the checker's finished handle histories out of memory and brings them
// back when a call names the handle again, so that a streaming check's memory follows the
// live handles and the recently used ones, not every handle value the trace ever had.
//
// A trace whose handle values are rarely reused (each resource, allocation and DC-local open
// at a fresh address, as in `cltrace-workload scene`) leaves behind, per value, a slot and the
// records of its last lifetimes: a closed local handle (R58 reports a later use of it on its
// still-live DC, with its history), a destroyed object, a deallocated allocation. Dropping
// them would change findings; keeping them makes memory grow with the trace.
//
// At each compaction (Trackers::Compact), the slots no call named in the last
// CheckOptions::spill_after calls are grouped with the records they reach into clusters
// (a slot, the records it names, and what those records refer to: a view's resource, an
// object's allocations). A cluster moves out -- is appended to an unlinked temporary file and
// its slots marked as moved out -- only if nothing else in memory can reach it and every
// record in it is over: a closed local handle, a destroyed object bound nowhere and mapped
// nowhere, a deallocated allocation; and no call in flight names its handles. Command lists
// and contexts never move. Nothing but the handle ids' slots leads to a moved-out cluster, so
// the first lookup of any of its handle ids (SlotTable::Get) brings the whole cluster back,
// as new records at the end of the trackers' storage, before anything reads it: every
// finding is that of a run that kept it all.
//
// Thread-safety: none (one per Checker, single-threaded).
//
// Example:
//   HandleSpill spill(env, trackers);           // registers itself as the slots' restorer
//   spill.MoveOut(events_judged);               // at a compaction, before marking
#ifndef CLTRACE_CHECK_INTERNAL_HANDLE_SPILL_H_
#define CLTRACE_CHECK_INTERNAL_HANDLE_SPILL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "check/internal/check_env.h"
#include "check/internal/slot_table.h"

namespace cltrace::check::internal {

struct Trackers;
class SpillComponents;  // handle_spill.cc

class HandleSpill : public SlotTable::Restorer {
 public:
  HandleSpill(CheckEnv& env, Trackers& t);
  ~HandleSpill() override;
  HandleSpill(const HandleSpill&) = delete;
  HandleSpill& operator=(const HandleSpill&) = delete;

  // Starts a run: nothing moved out, the file (if any) truncated.
  void Reset();
  // True if clusters may move out in this run (streaming, a spill_after, and no observer
  // that wants to be told when lifetimes end: it is told when a record is dropped, which a
  // moved-out record is without its lifetime being over).
  bool Enabled() const;
  // At a compaction, before the records are marked: `judged` calls have been judged.
  void MoveOut(uint64_t judged);
  // SlotTable::Restorer: brings back the cluster of moved-out id `id`.
  void Restore(uint64_t id) override;

  uint64_t clusters_out() const { return clusters_out_; }
  uint64_t clusters_back() const { return clusters_back_; }
  uint64_t file_bytes() const { return file_end_; }

 private:
  struct Plan;
  bool OpenFile();
  // MoveOut's steps: the components of slots and records and what pins them here; the
  // clusters that move; one cluster's bytes; a batch of clusters written and let go.
  void JoinAndPin(Plan& plan, SpillComponents& c);
  void Group(Plan& plan, SpillComponents& c);
  void Serialize(const Plan& plan, size_t k, std::string& out) const;
  bool Commit(const Plan& plan, size_t first, size_t end, const std::vector<uint64_t>& at,
              const std::string& out);
  // Appends `blob` to the file; the position to look it up by (SlotTable::SetAway), 0 if it
  // could not be written.
  uint32_t Append(const std::string& blob);

  CheckEnv& env_;
  Trackers& t_;
  int fd_ = -1;
  bool failed_ = false;  // the file could not be made or written: keep everything
  uint64_t file_end_ = 0;
  // Calls judged when each compaction epoch began (SlotTable::epoch()).
  std::vector<uint64_t> epoch_start_;
  uint64_t clusters_out_ = 0;
  uint64_t clusters_back_ = 0;
};

}  // namespace cltrace::check::internal

#endif  // CLTRACE_CHECK_INTERNAL_HANDLE_SPILL_H_
