// Test support for the trace format's tests and the tests on top of it (recorder/): a whole
// trace read from bytes, and sinks that fail like a full disk.
//
// Thread-safety: none (test code).
#ifndef CLTRACE_FORMAT_TESTING_TRACE_BYTES_H_
#define CLTRACE_FORMAT_TESTING_TRACE_BYTES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "format/event.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"

namespace cltrace::format::testing {

struct ReadResult {
  std::vector<Event> events;
  absl::Status open_status;
  absl::Status status;
  int64_t torn_tail = -1;
  TraceReader::Stats stats;
  TokenTable handles, strings, contents;
};

inline ReadResult ReadAllBytes(absl::string_view bytes, TraceReader::Options options = {}) {
  ReadResult r;
  auto reader = TraceReader::OpenBytes(bytes, options);
  if (!reader.ok()) {
    r.open_status = reader.status();
    return r;
  }
  Event e;
  while ((*reader)->Next(&e)) r.events.push_back(e);
  r.status = (*reader)->status();
  r.torn_tail = (*reader)->torn_tail();
  r.stats = (*reader)->stats();
  r.handles = (*reader)->handles();
  r.strings = (*reader)->strings();
  r.contents = (*reader)->contents();
  return r;
}

// A sink that accepts the file header (its first write) when `header_free`, then `budget`
// bytes: a write that does not fit fails whole (ResourceExhausted), later ones that fit pass.
class BudgetSink : public ByteSink {
 public:
  explicit BudgetSink(size_t budget, bool header_free = false)
      : budget_(budget), header_free_(header_free) {}
  absl::Status Write(absl::string_view bytes) override {
    if (header_free_) {
      header_free_ = false;
      return absl::OkStatus();
    }
    if (bytes.size() > budget_) return absl::ResourceExhaustedError("disk full (test)");
    budget_ -= bytes.size();
    return absl::OkStatus();
  }
  absl::Status Flush() override { return absl::OkStatus(); }

 private:
  size_t budget_;
  bool header_free_;
};

// A sink that appends to *out and fails like a full disk, leaving the torn part write(2) may
// leave: at write number `fail_at` (0-based; half of it is written) or at every write that
// would take *out past `limit` bytes (the part that fits is written).
class TornWriteSink : public ByteSink {
 public:
  static std::unique_ptr<TornWriteSink> FailingWrite(std::string* out, int fail_at) {
    return std::unique_ptr<TornWriteSink>(new TornWriteSink(out, fail_at, SIZE_MAX));
  }
  static std::unique_ptr<TornWriteSink> FullAt(std::string* out, size_t limit) {
    return std::unique_ptr<TornWriteSink>(new TornWriteSink(out, -1, limit));
  }
  absl::Status Write(absl::string_view bytes) override {
    const bool fail_here = writes_++ == fail_at_;
    const size_t room = limit_ - out_->size();
    if (fail_here || bytes.size() > room) {
      out_->append(bytes.data(), fail_here ? bytes.size() / 2 : room);
      return absl::ResourceExhaustedError("write to t.cltrace: No space left on device");
    }
    out_->append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }
  absl::Status Flush() override { return absl::OkStatus(); }

 private:
  TornWriteSink(std::string* out, int fail_at, size_t limit)
      : out_(out), fail_at_(fail_at), limit_(limit) {}

  std::string* out_;
  int fail_at_;
  size_t limit_;
  int writes_ = 0;
};

}  // namespace cltrace::format::testing

#endif  // CLTRACE_FORMAT_TESTING_TRACE_BYTES_H_
