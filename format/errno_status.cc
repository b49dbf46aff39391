#include "format/internal/errno_status.h"

#include <errno.h>
#include <string.h>

#include "absl/strings/str_format.h"

namespace cltrace::format::internal {

absl::Status ErrnoStatus(int err, absl::string_view what, const std::string& path) {
  std::string msg = absl::StrFormat("%s %s: %s", what, path, strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case ENOSPC:
      return absl::ResourceExhaustedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

}  // namespace cltrace::format::internal
