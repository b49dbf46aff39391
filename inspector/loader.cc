#include "inspector/loader.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "format/load_trace.h"

namespace cltrace::inspector {
namespace {

// Reports progress every this many events (a call through std::function per event would
// show in the load time of a 10 M-call trace).
constexpr uint64_t kProgressEvery = 1 << 16;

}  // namespace

absl::StatusOr<TraceData> ReadTraceFile(const std::string& path, const ProgressFn& progress,
                                        bool salvage, bool name_file) {
  format::LoadOptions options;
  options.salvage = salvage;
  options.progress_every = kProgressEvery;
  if (progress) {
    options.progress = [&progress](uint64_t done, uint64_t total) {
      progress(total == 0 || done >= total
                   ? 1.0f
                   : std::min(0.99f, static_cast<float>(done) / static_cast<float>(total)));
    };
  }
  absl::StatusOr<format::LoadedTrace> t = format::LoadTrace(path, options);
  absl::Status s = t.ok() ? t->error : t.status();
  if (!s.ok() && !name_file) return s;
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  TraceData data;
  data.path = path;
  data.format = t->format;
  data.file_size = t->file_size;
  data.events = std::move(t->events);
  data.handles = std::move(t->handles);
  data.strings = std::move(t->strings);
  data.contents = std::move(t->contents);
  data.torn_tail = t->torn_tail;
  data.stats = t->stats;
  if (progress) progress(1.0f);
  return data;
}

absl::StatusOr<std::unique_ptr<TraceModel>> LoadModel(const std::string& path,
                                                      const BuildOptions& options,
                                                      const ProgressFn& progress) {
  absl::StatusOr<std::unique_ptr<TraceModel>> m = TraceModel::Open(path, options, progress);
  if (!m.ok())
    return absl::Status(m.status().code(), absl::StrCat(path, ": ", m.status().message()));
  return m;
}

Loader::~Loader() {
  if (thread_.joinable()) thread_.join();
}

void Loader::Start(const std::string& path, const BuildOptions& options) {
  thread_ = std::thread([this, path, options] {
    absl::StatusOr<std::unique_ptr<TraceModel>> m = LoadModel(
        path, options, [this](float f) { progress_.store(f, std::memory_order_relaxed); });
    {
      absl::MutexLock lock(&mu_);
      result_ = std::move(m);
    }
    done_.store(true, std::memory_order_release);
  });
}

absl::StatusOr<std::unique_ptr<TraceModel>> Loader::Take() {
  if (thread_.joinable()) thread_.join();
  taken_ = true;
  absl::MutexLock lock(&mu_);
  return std::move(result_);
}

}  // namespace cltrace::inspector
