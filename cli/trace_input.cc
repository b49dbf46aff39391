#include "cli/trace_input.h"

#include <sys/stat.h>

#include "ddi/catalog.h"

namespace cltrace::cli {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::StatusOr<TraceInput> ReadTrace(const std::string& path, bool salvage) {
  format::LoadOptions options;
  options.salvage = salvage;
  return format::LoadTrace(path, options);
}

void RemapIds(format::Event* event, const std::function<uint64_t(uint64_t)>& handle,
              const std::function<uint64_t(uint64_t)>& string) {
  if (event->annotation != 0) event->annotation = string(event->annotation);
  const format::CallInfo* call = format::GetCall(event->call);
  if (call == nullptr) return;
  auto fields = format::Fields(*call);
  auto remap = [&](const format::FieldInfo& f, uint64_t* v) {
    if (*v == 0) return;
    if (f.kind == format::FieldKind::kHandle) *v = handle(*v);
    if (f.kind == format::FieldKind::kString) *v = string(*v);
  };
  size_t tail = fields.size();
  for (size_t i = 0; i < fields.size() && i < event->args.size(); ++i) {
    remap(fields[i], &event->args[i]);
    if (fields[i].kind != format::FieldKind::kArray || event->args[i] == 0) continue;
    auto elems = format::ElementFields(fields[i]);
    for (uint64_t k = 0; k + 1 < event->args[i]; ++k) {
      for (const format::FieldInfo& ef : elems) {
        if (tail < event->args.size()) remap(ef, &event->args[tail]);
        ++tail;
      }
    }
  }
}

bool IsCallback(const format::Event& event) {
  const format::CallInfo* call = format::GetCall(event.call);
  if (call == nullptr) return false;
  return call->domain == format::Domain::kCallback || call->layer == format::Layer::kCoreLayer ||
         call->layer == format::Layer::kKernelCb || call->layer == format::Layer::kDxgkrnl;
}

}  // namespace cltrace::cli
