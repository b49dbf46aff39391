// Commands whose references are kernel allocation handles (D3DKMT_HALLOCATION values) rather
// than allocation-list slots: what a deferred context records in CPU memory (deferred contexts
// never submit, ddi-spec §6.5), and what CommandListExecute splices into the immediate
// context's command stream (gpu::UmdContext::Splice).
//
// It also carries the dynamic-resource renames of the recording (R66): a map-discard on a
// deferred context points the resource at a fresh allocation ("alias") inside the recording
// only; executing the list makes the list's last alias the immediate context's current one
// (DynamicAliasTable), and later discards on the immediate context rename again, so content a
// not-yet-executed list reads is never overwritten.
//
// Thread-safety: none (one recording per context, used from that context's domain).
//
// Example (deferred context d, dynamic vertex buffer key 7):
//   CommandRecording rec;
//   rec.RecordRename(7, alias);                         // DC Map(WRITE_DISCARD)
//   rec.Emit(Command::Update(alias, 0, 64, HashBytes(p, 64)));   // DC Unmap
//   rec.Emit(Command::Draw(rt, {alias}, state, 3, 0, 1));
//   ... later on the IC: umd_context.Splice(rec, &ic_aliases);
#ifndef CLTRACE_UMD_COMMAND_RECORDING_H_
#define CLTRACE_UMD_COMMAND_RECORDING_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "wddm/command_stream.h"
#include "wddm/content_model.h"

namespace cltrace::gpu {

// Where the reference driver puts commands: a recording (deferred context) or the immediate
// context's live command buffer (gpu::UmdContext). References are allocation handle values.
class CommandSink {
 public:
  virtual ~CommandSink() = default;
  // Adds one user-format command. InvalidArgument for kernel-only opcodes or a zero handle.
  virtual absl::Status Emit(const Command& c) = 0;
};

// The immediate context's current allocation per dynamic resource (resource keys are the
// driver's own, e.g. the IC resource handle value).
class DynamicAliasTable {
 public:
  void Set(uint64_t resource_key, AllocationId alias) { current_[resource_key] = alias; }
  std::optional<AllocationId> Get(uint64_t resource_key) const;
  void Erase(uint64_t resource_key) { current_.erase(resource_key); }
  size_t size() const { return current_.size(); }

 private:
  absl::flat_hash_map<uint64_t, AllocationId> current_;
};

class CommandRecording : public CommandSink {
 public:
  absl::Status Emit(const Command& c) override;
  // A discard inside this recording pointed `resource_key` at `alias`.
  void RecordRename(uint64_t resource_key, AllocationId alias);
  // Nested execute on a deferred context: appends `other`'s commands and renames.
  void Append(const CommandRecording& other);
  // Makes the recording's last alias per resource current in `table` (what executing the
  // list on the immediate context does, R66).
  void ApplyRenames(DynamicAliasTable* table) const;

  const std::vector<Command>& commands() const { return commands_; }
  const std::vector<std::pair<uint64_t, AllocationId>>& renames() const { return renames_; }
  // Distinct allocations referenced, in first-use order.
  std::vector<AllocationId> ReferencedAllocations() const;
  bool empty() const { return commands_.empty() && renames_.empty(); }
  void Clear();

 private:
  std::vector<Command> commands_;
  std::vector<std::pair<uint64_t, AllocationId>> renames_;
};

// Shared validation of a handle-referencing user command (used by every CommandSink).
absl::Status ValidateHandleCommand(const Command& c);

}  // namespace cltrace::gpu

#endif  // CLTRACE_UMD_COMMAND_RECORDING_H_
