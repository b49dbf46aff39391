// The `cltrace` command-line tool: a registry of verbs, each in its own cli/verb_*.cc.
//
// Thread-safety: registration happens during static initialisation; RunCli is called once
// from main (or from tests) and is not thread-safe.
//
// Adding a verb is one new file, cli/verb_NAME.cc (picked up by cli/CMakeLists.txt):
//   namespace cltrace::cli {
//   namespace {
//   int RunFrob(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
//     ArgSpec spec = ArgSpec("frob", kFrobUsage).Options({"--level"}).Flags({"--fast"})
//                        .Positional(1, 1);
//     ParsedArgs parsed;  // cli/args.h; --help and usage errors are handled here:
//     if (std::optional<int> done = ParseVerbArgs(args, spec, &parsed, out, err)) return *done;
//     ...
//     return kExitOk;
//   }
//   const VerbRegistrar kFrob({"frob", "one-line summary", kFrobUsage, RunFrob});
//   }  // namespace
//   }  // namespace cltrace::cli
#ifndef CLTRACE_CLI_VERB_H_
#define CLTRACE_CLI_VERB_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cltrace::cli {

// Exit codes, the same for every verb.
enum ExitCode : int {
  kExitOk = 0,
  kExitProblems = 1,    // the verb ran and found problems (check: rule violations, ...)
  kExitBadInput = 2,    // bad input file, bad usage, I/O failure
  kExitDivergence = 3,  // replay diverged from the trace
};

struct Verb {
  const char* name;
  const char* summary;  // one line for `cltrace --help`
  const char* usage;    // the full text of `cltrace NAME --help`
  // Runs with the arguments after the verb name. Writes results to `out`, diagnostics to
  // `err`; returns an ExitCode.
  int (*run)(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
};

// Registers a verb at static-initialisation time (one per verb file).
class VerbRegistrar {
 public:
  explicit VerbRegistrar(const Verb& verb);
};

// Every registered verb, sorted by name.
// A library installed beside this tool (<bin>/../lib/LIBRARY or <bin>/LIBRARY), or the value
// of environment variable `override_env` when set; "" when neither is found.
std::string FindBesideTool(const char* override_env, absl::string_view library);

std::vector<Verb> Verbs();
const Verb* FindVerb(const std::string& name);

// The whole tool: `argv[0] VERB ARGS...`, `--help`, `help [VERB]`, `--version`.
int RunCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_VERB_H_
