// Per-verb command-line parsing for `cltrace` (hand-rolled: each verb has its own small set
// of options, which absl::flags' process-global flags do not model).
//
// Thread-safety: plain functions over values.
//
// Grammar: options may come before, between or after positionals; `--name value` and
// `--name=value` for options that take a value, `--name` for flags, `-h`/`--help` anywhere
// asks for the verb's usage, `--` ends option parsing, a lone `-` is a positional (stdin or
// stdout, as the verb says).
//
// Example:
//   ArgSpec spec = ArgSpec("dump", kUsage).Options({"--from", "--count"}).Flags({"--json"})
//                      .Positional(1, 1);
//   ParsedArgs args;
//   if (std::optional<int> done = ParseVerbArgs(argv, spec, &args, out, err)) return *done;
#ifndef CLTRACE_CLI_ARGS_H_
#define CLTRACE_CLI_ARGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cltrace::cli {

struct ArgSpec {
  ArgSpec(const char* verb_name, const char* usage_text) : verb(verb_name), usage(usage_text) {}
  ArgSpec& Options(std::vector<std::string> names) {
    options = std::move(names);
    return *this;
  }
  ArgSpec& Alias(const std::string& alias, const std::string& name) {
    aliases[alias] = name;
    return *this;
  }
  ArgSpec& Flags(std::vector<std::string> names) {
    flags = std::move(names);
    return *this;
  }
  ArgSpec& Positional(int min, int max) {
    min_positional = min;
    max_positional = max;
    return *this;
  }

  const char* verb;
  const char* usage;                           // printed for --help (and its first line on errors)
  std::vector<std::string> options;            // take a value
  std::map<std::string, std::string> aliases;  // e.g. "-o" -> "--output"
  std::vector<std::string> flags;              // booleans
  int min_positional = 0;
  int max_positional = -1;  // -1: no limit
};

struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;  // by canonical name
  std::set<std::string> flags;
  bool help = false;

  bool Flag(const std::string& name) const { return flags.count(name) > 0; }
  std::optional<std::string> Option(const std::string& name) const {
    auto it = options.find(name);
    if (it == options.end()) return std::nullopt;
    return it->second;
  }
};

// InvalidArgument with a message for the user on a usage error.
absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args, const ArgSpec& spec);

// ParseArgs plus the standard reactions: --help prints the usage to `out` (returns kExitOk);
// a usage error prints "cltrace VERB: message" and the usage line to `err` (returns
// kExitBadInput). Returns nullopt when the verb should run.
std::optional<int> ParseVerbArgs(const std::vector<std::string>& args, const ArgSpec& spec,
                                 ParsedArgs* parsed, std::ostream& out, std::ostream& err);

// A non-negative decimal integer option value; InvalidArgument naming the option otherwise.
absl::StatusOr<uint64_t> ParseCount(absl::string_view option, absl::string_view value);

}  // namespace cltrace::cli

#endif  // CLTRACE_CLI_ARGS_H_
