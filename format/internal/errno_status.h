// The status a failed file system call maps to, shared by the trace reader and writer
// (format/trace_reader.cc, format/trace_writer.cc). Not part of the API.
//
// Thread-safety: a pure function.
#ifndef CLTRACE_FORMAT_INTERNAL_ERRNO_STATUS_H_
#define CLTRACE_FORMAT_INTERNAL_ERRNO_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cltrace::format::internal {

// "<what> <path>: <strerror(err)>", with a code for the errno: ENOENT -> NotFound,
// EACCES/EPERM -> PermissionDenied, ENOSPC -> ResourceExhausted, anything else -> Internal.
absl::Status ErrnoStatus(int err, absl::string_view what, const std::string& path);

}  // namespace cltrace::format::internal

#endif  // CLTRACE_FORMAT_INTERNAL_ERRNO_STATUS_H_
