// Small helpers shared by the workload scenarios: object creation with error statuses and a
// bounded multi-producer queue of command lists.
//
// Thread-safety: ListQueue is thread-safe; the creation helpers follow Device (free-threaded).
#ifndef CLTRACE_CORPUS_WORKLOADS_UTIL_H_
#define CLTRACE_CORPUS_WORKLOADS_UTIL_H_

#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "runtime/runtime.h"

namespace cltrace::workloads {

inline absl::Status Failed(absl::string_view what, HRESULT hr) {
  return absl::InternalError(
      absl::StrCat(what, " failed with 0x", absl::Hex(static_cast<uint32_t>(hr))));
}

// OK for S_OK, else the failure of `what`.
inline absl::Status HrStatus(absl::string_view what, HRESULT hr) {
  return hr == S_OK ? absl::OkStatus() : Failed(what, hr);
}

// Returns the status of `expr` from the enclosing function unless it is OK.
#define CLTRACE_WORKLOAD_RETURN_IF_ERROR(expr) \
  do {                                         \
    if (absl::Status s_ = (expr); !s_.ok()) {  \
      return s_;                               \
    }                                          \
  } while (0)

// Assigns the value of the StatusOr `expr` to `lhs`, or returns its status.
#define CLTRACE_WORKLOAD_ASSIGN_OR_RETURN(lhs, expr) \
  do {                                               \
    auto v_ = (expr);                                \
    if (!v_.ok()) return v_.status();                \
    lhs = *v_;                                       \
  } while (0)

absl::StatusOr<runtime::Resource*> MakeBuffer(runtime::Device* d, uint32_t bytes,
                                              D3D10_DDI_RESOURCE_USAGE usage, uint32_t bind);
// primary: a swap chain's scanned-out buffer (the runtime passes pPrimaryDesc).
absl::StatusOr<runtime::Resource*> MakeTexture(runtime::Device* d, uint32_t w, uint32_t h,
                                               uint32_t bind, uint32_t misc, bool primary = false);
absl::StatusOr<runtime::View*> MakeView(runtime::Device* d, runtime::ViewKind kind,
                                        runtime::Resource* r);
// A tokenized program of `tokens` tokens (token 1 = length).
absl::StatusOr<runtime::Shader*> MakeShader(runtime::Device* d, runtime::Stage stage,
                                            uint32_t tokens);

// Bounded FIFO of command lists; nullptr items are end markers.
class ListQueue {
 public:
  explicit ListQueue(size_t capacity) : capacity_(capacity) {}
  void Push(runtime::CommandList* cl);
  runtime::CommandList* Pop();
  size_t Size();

 private:
  // std primitives, not absl::Mutex: ThreadSanitizer sees pthread-based synchronization only
  // (the system Abseil is not instrumented).
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<runtime::CommandList*> items_;
  size_t capacity_;
};

// Round-robin turns among `parties` threads (ScenarioOptions::lockstep): a party makes calls
// only between Begin and End; End passes the turn to the next party still in the rotation.
// Party 0 has the first turn. Disabled, every call returns at once.
class Turns {
 public:
  Turns(int parties, bool enabled) : enabled_(enabled), left_(parties, false) {}
  void Begin(int party);
  void End(int party);
  // Ends the party's turn and takes it out of the rotation.
  void Leave(int party);
  // Whether `party` is the only one still in the rotation (always false when disabled).
  bool OnlyLeft(int party);

 private:
  void PassLocked(int party);

  bool enabled_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<bool> left_;
  int turn_ = 0;
};

}  // namespace cltrace::workloads

#endif  // CLTRACE_CORPUS_WORKLOADS_UTIL_H_
