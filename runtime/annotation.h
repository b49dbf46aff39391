// Annotation hooks: which API call caused a DDI sequence.
//
// If the driver library the runtime loads exports these two functions (the recorder shim
// does; the reference driver does not), the runtime calls CltraceAnnotateBegin("FinishCommandList")
// before it issues the DDI calls of an application API call and CltraceAnnotateEnd() after,
// on the application's thread. Nested API calls (a Release inside another call) are not
// annotated separately: only the outermost API call of a thread is.
//
// `api_call` is a string literal with static storage duration (the API method name, e.g.
// "FinishCommandList", "ExecuteCommandList", "Release").
//
// Thread-safety: called concurrently from every application thread.
#ifndef CLTRACE_RUNTIME_ANNOTATION_H_
#define CLTRACE_RUNTIME_ANNOTATION_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*PFN_CLTRACE_ANNOTATE_BEGIN)(const char* api_call);
typedef void (*PFN_CLTRACE_ANNOTATE_END)(void);

void CltraceAnnotateBegin(const char* api_call);
void CltraceAnnotateEnd(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // CLTRACE_RUNTIME_ANNOTATION_H_
