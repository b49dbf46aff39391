#include "umd/command_recording.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace cltrace::gpu {

std::optional<AllocationId> DynamicAliasTable::Get(uint64_t resource_key) const {
  auto it = current_.find(resource_key);
  if (it == current_.end()) return std::nullopt;
  return it->second;
}

absl::Status ValidateHandleCommand(const Command& c) {
  if (!IsUserOpcode(c.op)) {
    return absl::InvalidArgumentError(
        absl::StrCat("command ", OpcodeName(static_cast<uint8_t>(c.op)), " is kernel-only"));
  }
  if (c.op == Opcode::kDraw && c.refs.size() > kMaxDrawInputs + 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("draw with ", c.refs.size() - 1, " inputs; at most ", kMaxDrawInputs));
  }
  for (uint64_t r : c.refs) {
    if (r == 0 || r > UINT32_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(OpcodeName(static_cast<uint8_t>(c.op)),
                                                     " references invalid allocation handle ", r));
    }
  }
  return absl::OkStatus();
}

absl::Status CommandRecording::Emit(const Command& c) {
  absl::Status s = ValidateHandleCommand(c);
  if (!s.ok()) return s;
  commands_.push_back(c);
  return absl::OkStatus();
}

void CommandRecording::RecordRename(uint64_t resource_key, AllocationId alias) {
  renames_.emplace_back(resource_key, alias);
}

void CommandRecording::Append(const CommandRecording& other) {
  commands_.insert(commands_.end(), other.commands_.begin(), other.commands_.end());
  renames_.insert(renames_.end(), other.renames_.begin(), other.renames_.end());
}

void CommandRecording::ApplyRenames(DynamicAliasTable* table) const {
  for (const auto& [key, alias] : renames_) table->Set(key, alias);  // last one wins
}

std::vector<AllocationId> CommandRecording::ReferencedAllocations() const {
  std::vector<AllocationId> out;
  absl::flat_hash_set<AllocationId> seen;
  for (const Command& c : commands_) {
    for (uint64_t r : c.refs) {
      if (seen.insert(static_cast<AllocationId>(r)).second)
        out.push_back(static_cast<AllocationId>(r));
    }
  }
  return out;
}

void CommandRecording::Clear() {
  commands_.clear();
  renames_.clear();
}

}  // namespace cltrace::gpu
