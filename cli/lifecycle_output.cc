#include "cli/lifecycle_output.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "check/lifecycle.h"
#include "cli/verb.h"

namespace cltrace::cli {

ArgSpec LifecycleArgSpec(const char* usage) {
  return ArgSpec("lifecycle", usage)
      .Options({"--handle"})
      .Flags({"--salvage", "--quiet"})
      .Positional(1, 1);
}

int RunLifecycle(const LifecycleOptions& options, absl::Span<const format::Event> events,
                 const format::TokenTable& handles, std::ostream& out, std::ostream& err) {
  absl::StatusOr<uint64_t> want = LifecycleHandle(options, handles);
  if (!want.ok()) {
    err << want.status().message() << "\n";
    return kExitBadInput;
  }
  absl::StatusOr<check::Lifecycle> lc = check::AnalyzeLifecycle(events, handles, options.check);
  if (!lc.ok()) {
    err << "cltrace lifecycle: " << lc.status().message() << "\n";
    return kExitBadInput;
  }
  return PrintLifecycle(*lc, *want, handles, out);
}

absl::StatusOr<uint64_t> LifecycleHandle(const LifecycleOptions& options,
                                         const format::TokenTable& handles) {
  if (options.handle.empty()) return 0;
  int64_t id = handles.Find(options.handle);
  if (id <= 0) {
    return absl::NotFoundError(
        absl::StrCat("cltrace lifecycle: no handle \"", options.handle, "\" in the trace"));
  }
  return static_cast<uint64_t>(id);
}

int PrintLifecycle(const check::Lifecycle& lifecycle, uint64_t want,
                   const format::TokenTable& handles, std::ostream& out) {
  const check::Lifecycle* lc = &lifecycle;
  size_t shown = 0;
  for (const check::Lifetime& l : lc->lifetimes) {
    if (want != 0 && l.handle != want && l.ic_handle != want) continue;
    // Objects are many and uninteresting unless asked for.
    if (want == 0 && l.role == check::HandleRole::kObject) continue;
    out << check::FormatLifetime(l, handles);
    ++shown;
  }
  out << "# " << shown << " lifetimes, " << lc->calls << " calls\n";
  return kExitOk;
}

}  // namespace cltrace::cli
