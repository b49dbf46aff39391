#include "check/internal/trackers.h"

namespace cltrace::check::internal {

void Trackers::Compact(CheckEnv& env) {
  gpu.ForgetDeallocated();
  RecordMarks marks;
  marks.keep[kClRecord].assign(lists.size(), 0);
  marks.keep[kObjRecord].assign(objects.size(), 0);
  marks.keep[kLocalRecord].assign(locals.size(), 0);
  marks.keep[kAllocRecord].assign(gpu.allocations().size(), 0);
  // Every reference held anywhere, also by records about to be dropped (a chain of them is
  // dropped over several compactions): whatever is marked stays.
  env.ForEachSlotRecord([&](RecordKind k, int32_t& i) { marks.Mark(k, i); });
  threads.ForEachList([&](int32_t& cl) { marks.Mark(kClRecord, cl); });
  contexts.MarkRefs(marks);
  lists.MarkRefs(marks);
  objects.MarkRefs(marks);
  locals.MarkRefs(marks);
  gpu.MarkRefs(marks);  // after the slots: a named allocation keeps its object
  gpu.MarkAllocations(marks);

  RecordRemap remap;
  for (int k = 0; k < kRecordKinds; ++k) {
    std::vector<int32_t>& to = remap.to[k];
    to.resize(marks.keep[k].size());
    int32_t n = 0;
    for (size_t i = 0; i < to.size(); ++i) to[i] = marks.keep[k][i] ? n++ : -1;
  }
  if (env.observer() != nullptr) {
    for (size_t i = 0; i < remap.to[kClRecord].size(); ++i)
      if (remap.to[kClRecord][i] < 0)
        env.Retire(HandleRole::kCommandList, lists.at(static_cast<int32_t>(i)).number);
    for (size_t i = 0; i < remap.to[kObjRecord].size(); ++i)
      if (remap.to[kObjRecord][i] < 0)
        env.Retire(HandleRole::kObject, objects.at(static_cast<int32_t>(i)).number);
    for (size_t i = 0; i < remap.to[kLocalRecord].size(); ++i)
      if (remap.to[kLocalRecord][i] < 0)
        env.Retire(HandleRole::kLocal, locals.at(static_cast<int32_t>(i)).number);
    contexts.RetireFinished();
  }
  env.ForEachSlotRecord([&](RecordKind k, int32_t& i) { remap.Apply(k, i); });
  threads.ForEachList([&](int32_t& cl) { remap.Apply(kClRecord, cl); });
  contexts.Remap(remap);
  lists.Compact(remap);
  objects.Compact(remap);
  locals.Compact(remap);
  gpu.Compact(remap);
}

}  // namespace cltrace::check::internal
