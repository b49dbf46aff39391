#include "cli/verb.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "cltrace_version.h"
#include "ddi/catalog.h"

namespace cltrace::cli {
namespace {

// A function-local static: registrars in other files may run before this file's globals.
std::map<std::string, Verb>& Registry() {
  static auto* verbs = new std::map<std::string, Verb>();
  return *verbs;
}

void PrintToolUsage(std::ostream& os) {
  os << "usage: cltrace VERB [ARGS...]\n"
        "       cltrace VERB --help\n"
        "\n"
        "Record, replay and inspect traces of the Direct3D 11 command-list / deferred-context\n"
        "DDI. Trace files are .cltrace (binary) or .jsonl (one call per line); verbs that read\n"
        "a trace detect which by content.\n"
        "\n"
        "verbs:\n";
  size_t width = 0;
  for (const auto& [name, verb] : Registry()) width = std::max(width, name.size());
  for (const auto& [name, verb] : Registry())
    os << "  " << name << std::string(width - name.size() + 2, ' ') << verb.summary << "\n";
  os << "\n"
        "for scripts: info, stats, lifecycle, replay and diff take --json (one JSON document);\n"
        "dump --json prints JSONL and dump filters by --tid, --fn [IC::|DC::]NAME, --handle,\n"
        "--from/--to/--count\n"
        "\n"
        "exit codes: 0 success, 1 the verb found problems, 2 bad input or usage,\n"
        "            3 replay divergence\n";
}

}  // namespace

std::string FindBesideTool(const char* override_env, absl::string_view library) {
  if (const char* env = getenv(override_env); env != nullptr && env[0] != '\0') return env;
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return "";
  exe[n] = '\0';
  std::string dir(exe);
  const size_t slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  for (const std::string& candidate :
       {absl::StrCat(dir, "/../lib/", library), absl::StrCat(dir, "/", library)}) {
    if (access(candidate.c_str(), R_OK) == 0) return candidate;
  }
  return "";
}

VerbRegistrar::VerbRegistrar(const Verb& verb) { Registry()[verb.name] = verb; }

std::vector<Verb> Verbs() {
  std::vector<Verb> out;
  for (const auto& [name, verb] : Registry()) out.push_back(verb);
  return out;
}

const Verb* FindVerb(const std::string& name) {
  auto it = Registry().find(name);
  return it == Registry().end() ? nullptr : &it->second;
}

int RunCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  if (argv.size() < 2) {
    PrintToolUsage(err);
    return kExitBadInput;
  }
  const std::string& first = argv[1];
  if (first == "--help" || first == "-h" || (first == "help" && argv.size() == 2)) {
    PrintToolUsage(out);
    return kExitOk;
  }
  if (first == "--version") {
    out << "cltrace " CLTRACE_VERSION " (catalog version " << format::CatalogVersion() << ")\n";
    return kExitOk;
  }
  if (first == "help") {
    const Verb* verb = FindVerb(argv[2]);
    if (verb == nullptr) {
      err << "cltrace: unknown verb '" << argv[2] << "' (see cltrace --help)\n";
      return kExitBadInput;
    }
    out << verb->usage;
    return kExitOk;
  }
  const Verb* verb = FindVerb(first);
  if (verb == nullptr) {
    err << "cltrace: unknown verb '" << first << "' (see cltrace --help)\n";
    return kExitBadInput;
  }
  return verb->run(std::vector<std::string>(argv.begin() + 2, argv.end()), out, err);
}

}  // namespace cltrace::cli
