// The planted-bug and misuse modes (`cltrace-workload --bug RULE`): which rules the toolkit can
// break on purpose, and who breaks them. The reference driver's bug modes are these rules
// (refdriver::Bug is rules::Rule), the GPU model's gpu::PlantedBug and the runtime model's
// runtime::Misuse are tested against this table, and corpus/workloads/bug_modes.cc turns a
// rule into its mode from it.
//
// Thread-safety: constant data.
//
// Example:
//   for (const PlantedBugMode& m : PlantedBugModes())
//     if (m.layer == BugLayer::kDriver) ...  // "bug=R22" in CLTRACE_REFDRIVER_CONFIG
#ifndef CLTRACE_RULES_PLANTED_BUGS_H_
#define CLTRACE_RULES_PLANTED_BUGS_H_

#include <cstdint>

#include "absl/types/span.h"
#include "rules/rules.h"

namespace cltrace::rules {

// Who misbehaves.
enum class BugLayer : uint8_t {
  kDriver,     // the reference driver (R74: its gpu::UmdContext), CLTRACE_REFDRIVER_CONFIG bug=
  kKernel,     // the kernel model: Dxgkrnl or the model KMD (gpu::PlantedBug)
  kDx6Driver,  // the DX6 driver of the `dp2` workload (gpu::PlantedBug)
  kMisuse,     // the runtime model misuses the DDI (runtime::Misuse)
};

struct PlantedBugMode {
  Rule rule;
  BugLayer layer;
};

namespace internal {
inline constexpr PlantedBugMode kPlantedBugModes[] = {
    {Rule::kR5, BugLayer::kDriver},     {Rule::kR6, BugLayer::kDriver},
    {Rule::kR16, BugLayer::kDriver},    {Rule::kR22, BugLayer::kDriver},
    {Rule::kR33, BugLayer::kDriver},    {Rule::kR36, BugLayer::kDriver},
    {Rule::kR39, BugLayer::kDriver},    {Rule::kR50, BugLayer::kDriver},
    {Rule::kR60, BugLayer::kDriver},    {Rule::kR67, BugLayer::kDriver},
    {Rule::kR68, BugLayer::kDriver},    {Rule::kR70, BugLayer::kDriver},
    {Rule::kR71, BugLayer::kDriver},    {Rule::kR72, BugLayer::kDriver},
    {Rule::kR74, BugLayer::kDriver},    {Rule::kR75, BugLayer::kKernel},
    {Rule::kR76, BugLayer::kKernel},    {Rule::kR77, BugLayer::kKernel},
    {Rule::kR78, BugLayer::kKernel},    {Rule::kR79, BugLayer::kDx6Driver},
    {Rule::kR80, BugLayer::kDx6Driver}, {Rule::kR40, BugLayer::kMisuse},
    {Rule::kR41, BugLayer::kMisuse},    {Rule::kR44, BugLayer::kMisuse},
    {Rule::kR45, BugLayer::kMisuse},    {Rule::kR46, BugLayer::kMisuse},
    {Rule::kR52, BugLayer::kMisuse},    {Rule::kR61, BugLayer::kMisuse},
};
}  // namespace internal

// Every mode: the planted bugs (driver, kernel, DX6 driver) in rule order, then the misuse
// modes in rule order.
inline absl::Span<const PlantedBugMode> PlantedBugModes() { return internal::kPlantedBugModes; }

// True if `rule` has a mode in `layer`.
constexpr bool HasPlantedBug(Rule rule, BugLayer layer) {
  for (const PlantedBugMode& m : internal::kPlantedBugModes)
    if (m.rule == rule && m.layer == layer) return true;
  return false;
}

}  // namespace cltrace::rules

#endif  // CLTRACE_RULES_PLANTED_BUGS_H_
