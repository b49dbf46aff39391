// Test hook: every DDI call and callback as one readable line.
//
// When RuntimeOptions::observer is set, the runtime renders each DDI call it makes and each
// callback it receives as text and hands it to the observer with its nesting depth (a callback
// made inside a DDI call is one level deeper; a Set* DDI re-sent inside a state-refresh callback
// deeper again). Handles are shown by stable names the runtime assigns when it allocates their
// memory ("IC", "DC1", "CL2", "RES3", local handles "RES3@DC1", runtime handles "rt:RES3"), so
// transcripts are identical run after run. API calls appear as "API <Name>" lines at depth 0.
//
// Line grammar:
//   API FinishCommandList [DC1]
//     DC1.RecycleCommandList(DC1, CL1)
//     IC.RecycleCreateCommandList(IC, {hDeferredContext=DC1}, CL1, rt:CL#3) -> S_OK
//     IC.CreateCommandList(IC, {hDeferredContext=DC1}, CL2, rt:CL#4)
//       cb SetErrorCb(core:IC, E_OUTOFMEMORY)
//     <- (void)
//
// Thread-safety: OnLine may be called concurrently from several threads; golden tests run
// single-threaded scenarios.
#ifndef CLTRACE_RUNTIME_TRANSCRIPT_H_
#define CLTRACE_RUNTIME_TRANSCRIPT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cltrace::runtime {

class DdiObserver {
 public:
  virtual ~DdiObserver() = default;
  virtual void OnLine(int depth, absl::string_view line) = 0;
};

}  // namespace cltrace::runtime

#endif  // CLTRACE_RUNTIME_TRANSCRIPT_H_
