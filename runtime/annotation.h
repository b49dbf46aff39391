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

// Application markers (ID3DUserDefinedAnnotation::BeginEvent / EndEvent / SetMarker). If the
// loaded driver library exports CltraceAnnotateMarker (the recorder shim does), the runtime
// calls it on the application's thread with "BeginEvent: NAME", "EndEvent" or "SetMarker: NAME"
// (a temporary string: copy it). The recorder attaches the text to the next call it records on
// that thread, after its API annotation: "Draw | BeginEvent: Shadow pass". Markers make no DDI
// call (the D3D11.0 DDI has none for them).
typedef void (*PFN_CLTRACE_ANNOTATE_MARKER)(const char* marker);

void CltraceAnnotateMarker(const char* marker);

// Trace positions for violation reports. A recorder (the shim) exports CltraceTraceSeq: the
// trace position (seq) of the innermost call in flight on the calling thread, else of the last
// call the thread entered at its outermost level, else 0 (not recording, or no call yet).
// The runtime model looks it up in the driver library it loads; the shim hands it to the
// driver it loads through the driver's optional CltraceSetTraceSeqSource export. Violation
// lines then carry the seq `cltrace check` reports for the same call.
typedef unsigned long long (*PFN_CLTRACE_TRACE_SEQ)(void);
typedef void (*PFN_CLTRACE_SET_TRACE_SEQ_SOURCE)(PFN_CLTRACE_TRACE_SEQ source);

unsigned long long CltraceTraceSeq(void);
void CltraceSetTraceSeqSource(PFN_CLTRACE_TRACE_SEQ source);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // CLTRACE_RUNTIME_ANNOTATION_H_
