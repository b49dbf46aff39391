// cltrace-synth OUT.cltrace CALLS [SOURCE.cltrace]: writes a trace of CALLS calls shaped like
// SOURCE (default: the corpus's smallcl.cltrace), for measuring the verbs at scale
// (bench/synthetic_trace.h).
#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "bench/synthetic_trace.h"

int main(int argc, char** argv) {
  uint64_t calls = 0;
  if (argc < 3 || !absl::SimpleAtoi(argv[2], &calls) || calls == 0) {
    std::fprintf(stderr, "usage: cltrace-synth OUT.cltrace CALLS [SOURCE.cltrace]\n");
    return 2;
  }
  const std::string source =
      argc > 3 ? argv[3] : std::string(CLTRACE_SOURCE_DIR "/corpus/traces/smallcl.cltrace");
  absl::Status s = cltrace::bench::WriteRepeatedTrace(source, argv[1], calls);
  if (!s.ok()) {
    std::fprintf(stderr, "cltrace-synth: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  return 0;
}
