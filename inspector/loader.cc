#include "inspector/loader.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "format/jsonl.h"
#include "format/trace_reader.h"

namespace cltrace::inspector {
namespace {

// Reports progress every this many events (a call through std::function per event would
// show in the load time of a 10 M-call trace).
constexpr uint64_t kProgressEvery = 1 << 16;

// Prefaults a large buffer on another thread while this one fills it: 10 M events are 1.3 GB,
// and taking their 330,000 page faults one by one inside the decoding loop costs about a
// second of a single core (huge pages are slower still on this VM: zeroing 2 MB pages inside
// the fault). MADV_POPULATE_WRITE (Linux 5.14) maps the pages without touching their bytes, so
// racing the writer is harmless. Returns a thread to join (or an empty one if not needed).
std::thread Prefault(void* data, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(page - 1);
  if (end <= begin || end - begin < (uintptr_t{64} << 20)) return std::thread();
  return std::thread([begin, end] {
    constexpr uintptr_t kStep = uintptr_t{32} << 20;
    for (uintptr_t p = begin; p < end; p += kStep) {
      if (madvise(reinterpret_cast<void*>(p), std::min(kStep, end - p), MADV_POPULATE_WRITE) != 0)
        return;  // an older kernel: the writer takes the faults itself
    }
  });
}

// Writers append in arrival order, which for several threads is not seq order; the checker
// wants seq order. `sorted` says whether the reading loop already saw them in order (one
// writer appending in call order, the common case), saving a pass over 1.3 GB.
void SortBySeq(std::vector<format::Event>* events, bool sorted) {
  if (sorted) return;
  std::stable_sort(events->begin(), events->end(),
                   [](const format::Event& a, const format::Event& b) { return a.seq < b.seq; });
}

absl::Status ReadJsonl(const std::string& path, const ProgressFn& progress, TraceData* out) {
  // Count the lines first (memchr speed) so progress can be a fraction.
  uint64_t total_lines = 0;
  {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> buf(1 << 20);
    while (in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      total_lines += static_cast<uint64_t>(std::count(buf.data(), buf.data() + in.gcount(), '\n'));
    }
  }
  absl::StatusOr<std::unique_ptr<format::JsonlReader>> r = format::JsonlReader::Open(path);
  if (!r.ok()) return r.status();
  format::Event e;
  uint64_t n = 0;
  while ((*r)->Next(&e)) {
    out->events.push_back(std::move(e));
    if (progress && ++n % kProgressEvery == 0 && total_lines > 0)
      progress(std::min(1.0f, static_cast<float>((*r)->lines()) / static_cast<float>(total_lines)));
  }
  if (!(*r)->status().ok()) return (*r)->status();
  out->handles = (*r)->handles();
  out->strings = (*r)->strings();
  return absl::OkStatus();
}

absl::Status ReadCltrace(const std::string& path, const ProgressFn& progress, TraceData* out) {
  absl::StatusOr<std::unique_ptr<format::TraceReader>> r = format::TraceReader::Open(path);
  if (!r.ok()) return r.status();
  format::TraceReader& reader = **r;
  // The trailer index (when the writer closed the file) gives the event count; without it
  // progress is estimated from the file size at the typical ~1.3 bytes per call.
  uint64_t expected = 0;
  std::thread prefault;
  struct Join {
    std::thread* t;
    ~Join() {
      if (t->joinable()) t->join();
    }
  } join{&prefault};
  if (reader.index() != nullptr) {
    expected = reader.index()->total_events();
    out->events.reserve(expected);
    prefault = Prefault(out->events.data(), expected * sizeof(format::Event));
  } else {
    expected = std::max<uint64_t>(1, out->file_size * 10 / 13);
  }
  format::Event e;
  uint64_t n = 0, last_seq = 0;
  bool sorted = true;
  while (reader.Next(&e)) {
    sorted = sorted && e.seq > last_seq;
    last_seq = e.seq;
    out->events.push_back(std::move(e));
    if (progress && ++n % kProgressEvery == 0)
      progress(std::min(0.99f, static_cast<float>(n) / static_cast<float>(expected)));
  }
  if (!reader.status().ok()) return reader.status();
  out->handles = reader.handles();
  out->strings = reader.strings();
  out->torn_tail = reader.torn_tail();
  SortBySeq(&out->events, sorted);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TraceData> ReadTraceFile(const std::string& path, const ProgressFn& progress) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  TraceData data;
  data.path = path;
  data.file_size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  data.format =
      absl::EndsWith(path, ".cltrace") ? TraceFileFormat::kCltrace : TraceFileFormat::kJsonl;
  char c;
  while (in.get(c)) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    data.format = c == '{' ? TraceFileFormat::kJsonl : TraceFileFormat::kCltrace;
    break;
  }
  in.close();
  absl::Status s = data.format == TraceFileFormat::kJsonl ? ReadJsonl(path, progress, &data)
                                                          : ReadCltrace(path, progress, &data);
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  if (progress) progress(1.0f);
  return data;
}

absl::StatusOr<std::unique_ptr<TraceModel>> LoadModel(const std::string& path,
                                                      const BuildOptions& options,
                                                      const ProgressFn& progress) {
  ProgressFn read_progress, build_progress;
  if (progress) {
    read_progress = [&](float f) { progress(0.5f * f); };
    build_progress = [&](float f) { progress(0.5f + 0.5f * f); };
  }
  absl::StatusOr<TraceData> data = ReadTraceFile(path, read_progress);
  if (!data.ok()) return data.status();
  absl::StatusOr<std::unique_ptr<TraceModel>> m =
      TraceModel::Build(*std::move(data), options, build_progress);
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
