// The implementation's access to private members of the public API classes.
//
// Thread-safety: none of its own; callers follow the owning object's rules.
#ifndef CLTRACE_RUNTIME_INTERNAL_ACCESS_H_
#define CLTRACE_RUNTIME_INTERNAL_ACCESS_H_

#include "runtime/internal/state.h"

namespace cltrace::runtime::internal {

struct Access {
  static DeviceState* State(Device* d) { return d->state_.get(); }
  static ContextState* State(DeviceContext* c) { return c->state_.get(); }
  static ClHandle*& Handle(CommandList* cl) { return cl->handle_; }
  static std::unique_ptr<CommandListRecorded>& Recorded(CommandList* cl) { return cl->recorded_; }
  static CommandList* NewCommandList() { return new CommandList(); }
  static void DeleteCommandList(CommandList* cl) { delete cl; }
  static DeviceContext* NewContext(Device* d, bool deferred) {
    return new DeviceContext(d, deferred);
  }
  static void SetIcHandle(DeviceChild* o, void* memory, size_t size) {
    o->ic_handle_ = memory;
    o->ic_size_ = size;
  }
  static size_t IcSize(DeviceChild* o) { return o->ic_size_; }
  static void SetLocalSize(DeviceChild* o, size_t size) { o->local_size_ = size; }
  static void SetName(DeviceChild* o, std::string name) { o->name_ = std::move(name); }
  static std::unique_ptr<ContextState>& StatePtr(DeviceContext* c) { return c->state_; }
  static void DeleteDevice(Device* d) { delete d; }
  static void DeleteContext(DeviceContext* c) { delete c; }
};

}  // namespace cltrace::runtime::internal

#endif  // CLTRACE_RUNTIME_INTERNAL_ACCESS_H_
