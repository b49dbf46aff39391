#include "wddm/violation.h"

namespace cltrace::gpu {

PlantedBug PlantedBugFromRule(int rule) {
  switch (rule) {
    case 74:
      return PlantedBug::kR74StaleCommandBuffer;
    case 75:
      return PlantedBug::kR75FenceMismatch;
    case 76:
      return PlantedBug::kR76SubmitUnpatched;
    case 77:
      return PlantedBug::kR77DpcBeforeNotify;
    case 78:
      return PlantedBug::kR78SplitOffsetOrder;
    case 79:
      return PlantedBug::kR79ImplicitVbInVidmem;
    case 80:
      return PlantedBug::kR80BadErrorOffset;
  }
  return PlantedBug::kNone;
}

int RuleOf(PlantedBug bug) {
  switch (bug) {
    case PlantedBug::kNone:
      return 0;
    case PlantedBug::kR74StaleCommandBuffer:
      return 74;
    case PlantedBug::kR75FenceMismatch:
      return 75;
    case PlantedBug::kR76SubmitUnpatched:
      return 76;
    case PlantedBug::kR77DpcBeforeNotify:
      return 77;
    case PlantedBug::kR78SplitOffsetOrder:
      return 78;
    case PlantedBug::kR79ImplicitVbInVidmem:
      return 79;
    case PlantedBug::kR80BadErrorOffset:
      return 80;
  }
  return 0;
}

}  // namespace cltrace::gpu
