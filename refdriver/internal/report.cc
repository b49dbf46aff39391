#include "refdriver/internal/report.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "refdriver/refdriver.h"
#include "rules/finding.h"
#include "rules/rules.h"

namespace cltrace::refdriver {
namespace {

std::atomic<uint64_t> g_seq{0};
thread_local const char* t_fn = "-";
thread_local uint64_t t_seq = 0;
// A recorder loaded in front of the driver (the shim) hands its trace positions here
// (CltraceSetTraceSeqSource, runtime/annotation.h): reports then carry the seq of the call in
// the trace, the one `cltrace check` reports, instead of the driver's own call count.
using TraceSeqFn = unsigned long long (*)(void);
std::atomic<TraceSeqFn> g_trace_seq{nullptr};

uint64_t ReportSeq() {
  if (TraceSeqFn fn = g_trace_seq.load(std::memory_order_acquire); fn != nullptr) {
    if (uint64_t seq = fn(); seq != 0) return seq;
  }
  return t_seq;
}

struct Sink {
  std::mutex mu;
  std::string text;
  int fd = -1;
};

Sink& GetSink() {
  static Sink* sink = new Sink();  // never destroyed: reports may come from exiting threads
  return *sink;
}

}  // namespace

uint64_t NextCallSeq() { return g_seq.fetch_add(1, std::memory_order_relaxed) + 1; }
uint64_t CurrentCallSeq() { return g_seq.load(std::memory_order_relaxed); }

CallScope::CallScope(const char* fn)
    : previous_fn_(t_fn), previous_seq_(t_seq), seq_(NextCallSeq()) {
  t_fn = fn;
  t_seq = seq_;
}

CallScope::~CallScope() {
  t_fn = previous_fn_;
  t_seq = previous_seq_;
}

const char* CurrentFn() { return t_fn; }

void Report(rules::Rule rule, const void* handle, absl::string_view message) {
  rules::Finding finding{.rule = rule,
                         .seq = ReportSeq(),
                         .handle = reinterpret_cast<uintptr_t>(handle),
                         .message = std::string(message)};
  std::string line = rules::FormatFindingLine(finding, t_fn, rules::LineHandle::kPrint);
  line += '\n';
  Sink& sink = GetSink();
  std::lock_guard<std::mutex> lock(sink.mu);
  sink.text += line;
  if (sink.fd >= 0) {
    // One write per line with O_APPEND keeps lines whole across processes.
    ssize_t ignored = write(sink.fd, line.data(), line.size());
    (void)ignored;
  }
}

void SetViolationFile(const std::string& path) {
  Sink& sink = GetSink();
  std::lock_guard<std::mutex> lock(sink.mu);
  if (sink.fd >= 0) close(sink.fd);
  sink.fd = path.empty() ? -1 : open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

}  // namespace cltrace::refdriver

extern "C" __attribute__((visibility("default"))) size_t CltraceRefDriverViolations(char* buf,
                                                                                    size_t cap) {
  auto& sink = cltrace::refdriver::GetSink();
  std::lock_guard<std::mutex> lock(sink.mu);
  if (cap > 0) {
    size_t n = std::min(cap - 1, sink.text.size());
    std::memcpy(buf, sink.text.data(), n);
    buf[n] = '\0';
  }
  return sink.text.size();
}

extern "C" __attribute__((visibility("default"))) void CltraceRefDriverClearViolations(void) {
  auto& sink = cltrace::refdriver::GetSink();
  std::lock_guard<std::mutex> lock(sink.mu);
  sink.text.clear();
}

extern "C" __attribute__((visibility("default"))) void CltraceSetTraceSeqSource(
    unsigned long long (*source)(void)) {
  cltrace::refdriver::g_trace_seq.store(source, std::memory_order_release);
}
