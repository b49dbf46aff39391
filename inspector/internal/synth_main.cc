// inspector_synth OUT.cltrace CALLS DCS [VIOLATION_CYCLE]: writes a synthetic small-command-list
// trace (internal/synthetic_trace.h) for trying the inspector and making the README's pictures.
#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "inspector/internal/synthetic_trace.h"

int main(int argc, char** argv) {
  using namespace cltrace::inspector::testing;
  SyntheticOptions o;
  uint64_t calls = 0;
  int dcs = 0, cycle = 0;
  if (argc < 4 || !absl::SimpleAtoi(argv[2], &calls) || !absl::SimpleAtoi(argv[3], &dcs) ||
      dcs < 1 || (argc > 4 && !absl::SimpleAtoi(argv[4], &cycle))) {
    std::fprintf(stderr, "usage: inspector_synth OUT.cltrace CALLS DCS [VIOLATION_CYCLE]\n");
    return 2;
  }
  o.calls = calls;
  o.dcs = dcs;
  o.violation_cycle = cycle;
  absl::Status s = WriteCltrace(MakeSmallCommandListTrace(o), argv[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "inspector_synth: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
