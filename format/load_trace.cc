#include "format/load_trace.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "format/jsonl.h"

namespace cltrace::format {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

uint64_t FileSize(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  return in ? static_cast<uint64_t>(in.tellg()) : 0;
}

// Prefaults a large buffer on another thread while this one fills it: 10 M events are 1.3 GB,
// and taking their 330,000 page faults one by one inside the decoding loop costs about a
// second of a single core (huge pages are slower still: zeroing 2 MB pages inside the fault).
// MADV_POPULATE_WRITE (Linux 5.14) maps the pages without touching their bytes, so racing the
// writer is harmless. Returns a thread to join (or an empty one if not needed).
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

// Reports progress monotonically, every `every` events and once at the end (done == total).
class Progress {
 public:
  Progress(const LoadOptions& options, uint64_t total)
      : fn_(options.progress),
        every_(std::max<uint64_t>(1, options.progress_every)),
        total_(total) {}
  template <typename Reader>
  void Event(const Reader& r) {
    if (!fn_ || ++n_ % every_ != 0) return;
    Report(std::min(r.position(), total_));
  }
  void Finish() {
    if (fn_) Report(total_);
  }

 private:
  void Report(uint64_t done) {
    done_ = std::max(done_, done);
    fn_(done_, total_);
  }
  const LoadProgressFn& fn_;
  const uint64_t every_;
  const uint64_t total_;
  uint64_t n_ = 0;
  uint64_t done_ = 0;
};

// Appends every event `reader` yields to t->events (`each` sees each one first), reporting
// progress; then takes the reader's final status and its definition tables. Shared by both
// formats' readers (JsonlReader, TraceReader), inlined into each loop.
template <typename Reader, typename Each>
void ReadAll(Reader& reader, Progress& progress, LoadedTrace* t, Each each) {
  Event e;
  while (reader.Next(&e)) {
    each(e);
    t->events.push_back(std::move(e));
    progress.Event(reader);
  }
  t->error = reader.status();
  t->handles = reader.handles();
  t->strings = reader.strings();
  t->contents = reader.contents();
}

absl::Status ReadJsonl(const LoadOptions& options, LoadedTrace* t) {
  absl::StatusOr<std::unique_ptr<JsonlReader>> r = JsonlReader::Open(t->path);
  if (!r.ok()) return r.status();
  JsonlReader& reader = **r;
  Progress progress(options, t->file_size);
  ReadAll(reader, progress, t, [](const Event&) {});
  t->lines = reader.lines();
  progress.Finish();
  return absl::OkStatus();
}

absl::Status ReadCltrace(const LoadOptions& options, LoadedTrace* t) {
  TraceReader::Options reader_options;
  reader_options.salvage = options.salvage;
  absl::StatusOr<std::unique_ptr<TraceReader>> r = TraceReader::Open(t->path, reader_options);
  if (!r.ok()) return r.status();
  TraceReader& reader = **r;
  std::thread prefault;
  struct Join {
    std::thread* t;
    ~Join() {
      if (t->joinable()) t->join();
    }
  } join{&prefault};
  // The trailer index (when the writer closed the file) gives the event count.
  if (reader.index() != nullptr) {
    const uint64_t expected = reader.index()->total_events();
    t->events.reserve(expected);
    prefault = Prefault(t->events.data(), expected * sizeof(Event));
  }
  Progress progress(options, t->file_size);
  uint64_t last_seq = 0;
  bool sorted = true;
  ReadAll(reader, progress, t, [&](const Event& e) {
    sorted = sorted && e.seq > last_seq;
    last_seq = e.seq;
  });
  t->header = reader.header();
  t->stats = reader.stats();
  t->torn_tail = reader.torn_tail();
  // Writers append in arrival order, which for several threads is not seq order; every
  // reader wants call order. One writer appending in call order (the common case) saves the
  // pass over the events.
  if (!sorted) {
    std::stable_sort(t->events.begin(), t->events.end(),
                     [](const Event& a, const Event& b) { return a.seq < b.seq; });
  }
  t->dense_positions = PositionsAreDense(t->header);
  progress.Finish();
  return absl::OkStatus();
}

}  // namespace

absl::string_view TraceFormatName(TraceFileFormat format) {
  return format == TraceFileFormat::kJsonl ? "JSONL" : "cltrace";
}

absl::StatusOr<TraceFileFormat> DetectTraceFormat(const std::string& path) {
  // An ifstream opens a directory and then reads nothing: that would pass for an empty trace.
  if (IsDirectory(path)) return absl::InvalidArgumentError("is a directory, not a trace file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open: ", std::strerror(errno)));
  char c;
  while (in.get(c)) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{' ? TraceFileFormat::kJsonl : TraceFileFormat::kCltrace;
  }
  return absl::EndsWith(path, ".cltrace") ? TraceFileFormat::kCltrace : TraceFileFormat::kJsonl;
}

absl::StatusOr<LoadedTrace> LoadTrace(const std::string& path, const LoadOptions& options) {
  absl::StatusOr<TraceFileFormat> detected = DetectTraceFormat(path);
  if (!detected.ok()) return detected.status();
  LoadedTrace t;
  t.path = path;
  t.format = *detected;
  t.file_size = FileSize(path);
  absl::Status s =
      t.format == TraceFileFormat::kJsonl ? ReadJsonl(options, &t) : ReadCltrace(options, &t);
  if (!s.ok()) return s;
  t.gaps = FindPositionGaps(t.events);
  if (!t.dense_positions) {
    t.gaps.missing = t.gaps.first_missing = 0;
    t.gaps.holes.clear();
  }
  return t;
}

absl::StatusOr<LoadedTrace> ReadAllSorted(const std::string& path, TraceReader::Options options) {
  LoadOptions load;
  load.salvage = options.salvage;
  absl::StatusOr<LoadedTrace> t = LoadTrace(path, load);
  if (t.ok() && !t->error.ok()) return t->error;
  return t;
}

}  // namespace cltrace::format
