// CLTRACE_RETURN_IF_ERROR / CLTRACE_ASSIGN_OR_RETURN: Debian's Abseil (20220623) has no
// status macros, so we keep these two small ones.
#ifndef CLTRACE_FORMAT_STATUS_MACROS_H_
#define CLTRACE_FORMAT_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define CLTRACE_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::absl::Status cltrace_status_ = (expr);           \
    if (!cltrace_status_.ok()) return cltrace_status_; \
  } while (0)

#define CLTRACE_CONCAT_INNER_(a, b) a##b
#define CLTRACE_CONCAT_(a, b) CLTRACE_CONCAT_INNER_(a, b)
#define CLTRACE_ASSIGN_OR_RETURN(lhs, expr) \
  CLTRACE_ASSIGN_OR_RETURN_IMPL_(CLTRACE_CONCAT_(cltrace_statusor_, __LINE__), lhs, expr)
#define CLTRACE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

#endif  // CLTRACE_FORMAT_STATUS_MACROS_H_
