// The driver's side of state refresh: probes that ask the runtime to re-send bindings and check
// the answer against the timing rules (R49 on deferred contexts, R60 on the executing context).
//
// Thread-safety: probes are thread-local; they run inside the probed context's domain.
#ifndef CLTRACE_REFDRIVER_INTERNAL_REFRESH_H_
#define CLTRACE_REFDRIVER_INTERNAL_REFRESH_H_

namespace cltrace::refdriver {

// Called by Set* DDIs while InRefreshOf(ctx): does the answer match the active probe?
void NoteRefreshAnswer(const void* ctx, bool matches_current, bool all_null);

}  // namespace cltrace::refdriver

#endif  // CLTRACE_REFDRIVER_INTERNAL_REFRESH_H_
