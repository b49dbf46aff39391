// libFuzzer target: arbitrary bytes as a JSONL trace (format/jsonl.h).
//
// Beyond "no crash, no sanitizer report", every input that parses must survive the
// canonical round trip: export -> parse gives the same events and the same handle tokens,
// and exporting again gives the same bytes. A violation traps (a crash for libFuzzer).
//
// Seeds: corpus/jsonl/*.jsonl. Build and run (clang):
//   CC=clang CXX=clang++ cmake -S . -B build-fuzz-cli -G Ninja -DCLTRACE_FUZZ=ON
//   ninja -C build-fuzz-cli jsonl_fuzz
//   build-fuzz-cli/bin/jsonl_fuzz -max_total_time=120 -max_len=4096 NEW_CORPUS corpus/jsonl
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "format/jsonl.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cltrace::format;
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<JsonlTrace> trace = ParseJsonl(text);
  if (!trace.ok()) {
    // Every rejection names its line, except that of an input with no call at all (empty or
    // blank lines only: FORMAT.md §9), which has no line to name.
    const absl::string_view message = trace.status().message();
    Check(absl::StartsWith(message, "line ") ||
          absl::EndsWith(message, "(a JSONL trace holds at least one call)"));
    return 0;
  }
  std::string exported;
  for (const Event& e : trace->events) {
    Check(CheckEventLayout(e).ok());
    exported += EventToJsonl(e, trace->handles, trace->strings);
    exported += '\n';
    (void)ArgsToText(e, trace->handles, trace->strings);
    (void)RetToText(e);
  }
  absl::StatusOr<JsonlTrace> again = ParseJsonl(exported);
  Check(again.ok());
  Check(again->events == trace->events);
  Check(again->handles.size() == trace->handles.size());
  for (uint64_t id = 0; id < trace->handles.size(); ++id)
    Check(again->handles.Token(id) == trace->handles.Token(id));
  std::string twice;
  for (const Event& e : again->events) {
    twice += EventToJsonl(e, again->handles, again->strings);
    twice += '\n';
  }
  Check(twice == exported);
  return 0;
}
