// Reading a trace file (.cltrace or JSONL, told apart by content) and building the model on a
// background thread with progress, so the window stays responsive while a large trace loads.
//
// Thread-safety: Loader's accessors may be called from the UI thread while the load thread
// runs; ReadTraceFile and LoadModel are plain functions.
//
// Example:
//   Loader loader;
//   loader.Start("big.cltrace");
//   while (!loader.done()) DrawProgressBar(loader.progress(), loader.phase());
//   absl::StatusOr<std::unique_ptr<TraceModel>> m = loader.Take();
#ifndef CLTRACE_INSPECTOR_LOADER_H_
#define CLTRACE_INSPECTOR_LOADER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "inspector/model.h"

namespace cltrace::inspector {

// Reads a whole trace through format::LoadTrace (format/load_trace.h): .cltrace or JSONL told
// apart by content, events sorted by seq, recorded content kept. Errors: NotFound (no such
// file), InvalidArgument (not a trace, a bad JSONL line: "line N: ..."), DataLoss (a corrupt
// chunk, with its offset) — damage anywhere fails the load: the inspector shows whole traces
// only, unless `salvage`, which skips corrupt chunks of a .cltrace (TraceData::stats counts
// them). A torn tail of a .cltrace is end of file (TraceData::torn_tail says where).
// `progress` (may be empty) receives values in [0, 1].
// `name_file`: prefix error messages with the path.
absl::StatusOr<TraceData> ReadTraceFile(const std::string& path, const ProgressFn& progress,
                                        bool salvage = false, bool name_file = true);

// TraceModel::Open (one streaming pass; JSONL: ReadTraceFile, then TraceModel::Build), errors
// prefixed with the path.
absl::StatusOr<std::unique_ptr<TraceModel>> LoadModel(const std::string& path,
                                                      const BuildOptions& options,
                                                      const ProgressFn& progress);

class Loader {
 public:
  Loader() = default;
  ~Loader();  // joins the load thread
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Starts loading on a new thread. Precondition: not started before.
  void Start(const std::string& path, const BuildOptions& options = {});
  bool started() const { return thread_.joinable() || taken_; }
  bool done() const { return done_.load(std::memory_order_acquire); }
  float progress() const { return progress_.load(std::memory_order_relaxed); }
  // What the load is doing (one streaming pass reads and indexes at once).
  const char* phase() const { return "reading and indexing"; }
  // The result, once done(); joins the thread. Call once.
  absl::StatusOr<std::unique_ptr<TraceModel>> Take();

 private:
  std::thread thread_;
  std::atomic<bool> done_{false};
  std::atomic<float> progress_{0.0f};
  bool taken_ = false;
  absl::Mutex mu_;
  absl::StatusOr<std::unique_ptr<TraceModel>> result_ ABSL_GUARDED_BY(mu_) =
      absl::UnknownError("not loaded");
};

}  // namespace cltrace::inspector

#endif  // CLTRACE_INSPECTOR_LOADER_H_
