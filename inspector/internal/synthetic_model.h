// A synthetic trace (inspector/internal/synthetic_trace.h) as the inspector's model reads it,
// for the tests and benchmarks that build a TraceModel of one.
//
// Thread-safety: plain functions.
#ifndef CLTRACE_INSPECTOR_INTERNAL_SYNTHETIC_MODEL_H_
#define CLTRACE_INSPECTOR_INTERNAL_SYNTHETIC_MODEL_H_

#include <string>
#include <utility>

#include "inspector/internal/synthetic_trace.h"
#include "inspector/model.h"

namespace cltrace::inspector::testing {

// `t` as if read from the file `path` (its events and handles moved, not copied).
inline TraceData AsTraceData(SyntheticTrace t, std::string path) {
  TraceData d;
  d.path = std::move(path);
  d.events = std::move(t.events);
  d.handles = std::move(t.handles);
  return d;
}

}  // namespace cltrace::inspector::testing

#endif  // CLTRACE_INSPECTOR_INTERNAL_SYNTHETIC_MODEL_H_
