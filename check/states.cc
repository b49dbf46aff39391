#include "check/states.h"

namespace cltrace::check {

absl::string_view StateName(State s) {
  switch (s) {
    case State::kNone:
      return "None";
    case State::kValid:
      return "Valid";
    case State::kRecycleDestroyed:
      return "RecycleDestroyed";
    case State::kRecycled:
      return "Recycled";
    case State::kRecycleCreateFailed:
      return "RecycleCreateFailed";
    case State::kRecording:
      return "Recording";
    case State::kFinishing:
      return "Finishing";
    case State::kClosed:
      return "Closed";
    case State::kAbandoned:
      return "Abandoned";
    case State::kFinishFailed:
      return "FinishFailed";
    case State::kRecycleFailed:
      return "RecycleFailed";
    case State::kOpen:
      return "Open";
    case State::kClosedLocal:
      return "Closed";
    case State::kAlive:
      return "Alive";
    case State::kCreateFailed:
      return "CreateFailed";
    case State::kDestroyed:
      return "Destroyed";
  }
  return "?";
}

absl::string_view RoleName(HandleRole r) {
  switch (r) {
    case HandleRole::kImmediateContext:
      return "immediate context";
    case HandleRole::kDeferredContext:
      return "deferred context";
    case HandleRole::kCommandList:
      return "command list";
    case HandleRole::kObject:
      return "object";
    case HandleRole::kLocal:
      return "local handle";
  }
  return "?";
}

}  // namespace cltrace::check
