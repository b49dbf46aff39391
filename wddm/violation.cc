#include "wddm/violation.h"

namespace cltrace::gpu {
namespace {

using rules::Rule;

constexpr PlantedBugInfo kPlantedBugs[] = {
    {PlantedBug::kR74StaleCommandBuffer, Rule::kR74, PlantedBugLayer::kUmd},
    {PlantedBug::kR75FenceMismatch, Rule::kR75, PlantedBugLayer::kKernel},
    {PlantedBug::kR76SubmitUnpatched, Rule::kR76, PlantedBugLayer::kKernel},
    {PlantedBug::kR77DpcBeforeNotify, Rule::kR77, PlantedBugLayer::kKernel},
    {PlantedBug::kR78SplitOffsetOrder, Rule::kR78, PlantedBugLayer::kKernel},
    {PlantedBug::kR79ImplicitVbInVidmem, Rule::kR79, PlantedBugLayer::kDx6},
    {PlantedBug::kR80BadErrorOffset, Rule::kR80, PlantedBugLayer::kDx6},
};

}  // namespace

absl::Span<const PlantedBugInfo> PlantedBugs() { return kPlantedBugs; }

PlantedBug PlantedBugFromRule(Rule rule) {
  for (const PlantedBugInfo& b : kPlantedBugs)
    if (b.rule == rule) return b.bug;
  return PlantedBug::kNone;
}

}  // namespace cltrace::gpu
