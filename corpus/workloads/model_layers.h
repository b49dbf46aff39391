// What the workloads drive below the D3D11 runtime model: the violations the GPU/kernel model
// and the DX6 model report, and the DX6 calls made (the kernel layer counts its own calls,
// gpu::ProcessKernelLayerCalls). cltrace-workload prints these with the runtime's.
//
// Thread-safety: all functions may be called from any thread.
#ifndef CLTRACE_CORPUS_WORKLOADS_MODEL_LAYERS_H_
#define CLTRACE_CORPUS_WORKLOADS_MODEL_LAYERS_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ddi/ddi_abi.h"
#include "wddm/violation.h"

namespace cltrace::workloads {

// Collects model violations as lines "R79 fn=<layer> <message>" (process-wide).
class ModelViolationSink : public gpu::ViolationSink {
 public:
  explicit ModelViolationSink(std::string layer) : layer_(std::move(layer)) {}
  void Report(const gpu::Violation& v) override;

 private:
  std::string layer_;
};
std::vector<std::string> ModelViolations();

// DX6 driver calls (DD_D3DBUFCALLBACKS, D3DHAL_CALLBACKS3) made so far by this process.
uint64_t Dx6Calls();
// Counting wrappers around a DX6 driver's tables (the model's tables are process-wide
// constants; one wrapped pair per process at a time).
const DD_D3DBUFCALLBACKS* CountingBufferCallbacks(const DD_D3DBUFCALLBACKS* real);
const D3DHAL_CALLBACKS3* CountingHalCallbacks3(const D3DHAL_CALLBACKS3* real);

// Every call the workload drove: DDI calls + callbacks of the runtime model, kernel-layer
// calls (DxgkDdi*, DxgkCb*, GpuFenceRetired) and DX6 calls.
uint64_t AllLayerCalls();

// Every violation this process saw, in the order cltrace-workload prints them: the runtime's
// (runtime::ProcessViolations), the driver's (runtime::ProcessDriverViolations), then the
// kernel and DX6 models' (ModelViolations).
std::vector<std::string> AllViolations();

// What `cltrace-workload` and `cltrace-workload apitrace` print after a run, on `out`: every
// line of AllViolations(), then "calls: N" (AllLayerCalls). Returns their exit code: 2 when the
// run itself failed (`run_ok` false), else 1 when a violation was printed, else 0.
int PrintViolationsAndCalls(bool run_ok, std::FILE* out);

}  // namespace cltrace::workloads

#endif  // CLTRACE_CORPUS_WORKLOADS_MODEL_LAYERS_H_
