// recorder_shim_host_app: a runtime-model program that links libprotobuf, Abseil and the
// project's own format library (cltrace_format) and uses them before it loads its driver, so
// the shim has to go into a process that already registered the trace format's protobuf
// descriptors (tests/recorder/shim_deps_test.cc). Prints `calls: N` like cltrace-workload.
//
//   recorder_shim_host_app SCRATCH_TRACE_PATH
#include <cstdio>

#include "corpus/workloads/model_layers.h"
#include "corpus/workloads/scenarios.h"
#include "format/trace_writer.h"
#include "runtime/runtime.h"

int main(int argc, char** argv) {
  using namespace cltrace;
  if (argc != 2) {
    std::fprintf(stderr, "usage: recorder_shim_host_app SCRATCH_TRACE_PATH\n");
    return 2;
  }
  // The format library (protobuf) at work in this process first.
  format::TraceWriter::Options o;
  o.background = false;
  absl::StatusOr<std::unique_ptr<format::TraceWriter>> w = format::TraceWriter::Open(argv[1], o);
  if (!w.ok() || !(*w)->Close().ok()) return 2;
  runtime::Device* device = nullptr;
  if (runtime::Device::Create(runtime::RuntimeOptions(), &device) != S_OK) return 2;
  workloads::ScenarioOptions options;
  options.threads = 2;
  options.frames = 10;
  if (!workloads::RunScenario("smallcl", device, options).ok()) return 2;
  std::printf("calls: %llu\n", static_cast<unsigned long long>(workloads::AllLayerCalls()));
  return 0;
}
