// cltrace-workload: runs a named scenario on the runtime model and reports every violation the
// runtime model and the reference driver detected.
//
//   cltrace-workload NAME [--threads N] [--frames N] [--seed S] [--driver LIB] [--bug RULE]
//                    [--lockstep]
//   cltrace-workload apitrace FILE [--strict] [--driver LIB]
//   cltrace-workload --list | --help | --version
//
// `apitrace FILE` plays a real program's apitrace capture through the runtime model
// (corpus/apitrace/command.h).
//
// --list prints every scenario ("NAME  description"), then every --bug mode
// ("--bug RULE  KIND  scenarios: NAME, NAME").
//
// --lockstep: the scenario's threads take turns in a fixed order, so every run makes the same
// calls in the same order (reproducible recordings; ScenarioOptions::lockstep).
//
// Output: one line per violation ("RULE seq=S fn=F ..."; recorded under `cltrace record`, S is
// the trace position `cltrace check` reports for the call: runtime/annotation.h,
// CltraceTraceSeq; run without a recorder, the model's own call count), then `calls: N` (DDI calls
// made plus callbacks received at every layer the workload drives: the D3D11 DDI and its
// callbacks, the kernel layer (DxgkDdi*, DxgkCb*, GpuFenceRetired) and the DX6 driver tables;
// not the driver's entry point OpenAdapter10_2, which is no catalog call: N is what a trace of
// the run holds).
// Exit status 0 when nothing was detected, 1 when something was, 2 on a usage or setup error.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cltrace_version.h"
#include "corpus/apitrace/command.h"
#include "corpus/workloads/bug_modes.h"
#include "corpus/workloads/model_layers.h"
#include "corpus/workloads/scenarios.h"
#include "runtime/runtime.h"

namespace {

constexpr char kUsage[] =
    "usage: cltrace-workload NAME [--threads N] [--frames N] [--seed S] [--driver LIB] "
    "[--bug RULE] [--lockstep]\n"
    "       cltrace-workload apitrace FILE [--strict] [--driver LIB]\n"
    "       cltrace-workload --list | --help | --version\n";

int Usage(const char* message) {
  if (message != nullptr) std::fprintf(stderr, "cltrace-workload: %s\n", message);
  std::fprintf(stderr, "%s", kUsage);
  return 2;
}

void List() {
  using namespace cltrace::workloads;
  for (const ScenarioInfo& s : Scenarios()) std::printf("%-10s %s\n", s.name, s.description);
  for (const BugModeInfo& m : BugModes()) {
    std::printf("--bug %-4s %-15s scenarios: %s\n", m.rule, m.kind,
                absl::StrJoin(m.scenarios, ", ").c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cltrace;
  std::string name;
  workloads::ScenarioOptions options;
  runtime::RuntimeOptions runtime_options;
  std::string bug;
  if (argc >= 2 && std::string(argv[1]) == "apitrace") {
    return apitrace::RunApitraceCommand(std::vector<std::string>(argv + 2, argv + argc));
  }
  bool frames_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)flag;
      return argv[++i];
    };
    if (arg == "--list") {
      List();
      return 0;
    } else if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (arg == "--version") {
      std::printf("cltrace-workload %s\n", CLTRACE_VERSION);
      return 0;
    } else if (arg == "--threads" || arg == "--frames" || arg == "--seed") {
      const char* v = value(arg.c_str());
      uint64_t n = 0;
      const uint64_t most = arg == "--threads" ? 4096 : uint64_t{1} << 30;
      if (v == nullptr || !absl::SimpleAtoi(v, &n) || (arg != "--seed" && (n == 0 || n > most))) {
        return Usage(absl::StrCat(arg, " needs a positive number").c_str());
      }
      if (arg == "--threads") options.threads = static_cast<int>(n);
      if (arg == "--frames") {
        options.frames = static_cast<int>(n);
        frames_given = true;
      }
      if (arg == "--seed") options.seed = n;
    } else if (arg == "--lockstep") {
      options.lockstep = true;
    } else if (arg == "--driver") {
      const char* v = value("--driver");
      if (v == nullptr) return Usage("--driver needs a library path");
      runtime_options.driver_path = v;
    } else if (arg == "--bug") {
      const char* v = value("--bug");
      if (v == nullptr) return Usage("--bug needs a rule (e.g. R22)");
      bug = v;
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage(absl::StrCat("unknown option ", arg).c_str());
    } else if (name.empty()) {
      name = arg;
    } else {
      return Usage("only one scenario name");
    }
  }
  if (name.empty()) return Usage("no scenario name");
  bool known = false;
  for (const workloads::ScenarioInfo& s : workloads::Scenarios()) known = known || name == s.name;
  if (!known) return Usage(absl::StrCat("no scenario named '", name, "' (see --list)").c_str());
  if (name == "long" && !frames_given) options.frames = workloads::LongDefaultFrames();

  if (!bug.empty()) {
    absl::Status s = workloads::ApplyBugMode(bug, &runtime_options, &options);
    if (!s.ok()) return Usage(std::string(s.message()).c_str());
  }

  runtime::Device* device = nullptr;
  HRESULT hr = runtime::Device::Create(runtime_options, &device);
  if (hr != S_OK) {
    std::fprintf(stderr, "cltrace-workload: device creation failed (0x%08x)\n",
                 static_cast<unsigned>(hr));
    return 2;
  }
  absl::Status status = workloads::RunScenario(name, device, options);
  device->Release();
  if (!status.ok()) {
    std::fprintf(stderr, "cltrace-workload: %s\n", std::string(status.message()).c_str());
  }
  return workloads::PrintViolationsAndCalls(status.ok(), stdout);
}
