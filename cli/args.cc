#include "cli/args.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/verb.h"

namespace cltrace::cli {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args, const ArgSpec& spec) {
  ParsedArgs parsed;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_done || a == "-" || a.empty() || a[0] != '-') {
      parsed.positional.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    if (a == "-h" || a == "--help") {
      parsed.help = true;
      continue;
    }
    std::string name = a;
    std::optional<std::string> value;
    if (size_t eq = a.find('='); eq != std::string::npos && absl::StartsWith(a, "--")) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
    }
    if (auto alias = spec.aliases.find(name); alias != spec.aliases.end()) name = alias->second;
    if (Contains(spec.flags, name)) {
      if (value) return absl::InvalidArgumentError(absl::StrCat(name, " takes no value"));
      parsed.flags.insert(name);
      continue;
    }
    if (Contains(spec.options, name)) {
      if (!value) {
        if (i + 1 >= args.size())
          return absl::InvalidArgumentError(absl::StrCat(a, " needs a value"));
        value = args[++i];
      }
      if (parsed.options.count(name))
        return absl::InvalidArgumentError(absl::StrCat(name, " given twice"));
      parsed.options[name] = *value;
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat("unknown option ", a));
  }
  if (parsed.help) return parsed;
  int n = static_cast<int>(parsed.positional.size());
  if (n < spec.min_positional) return absl::InvalidArgumentError("missing argument");
  if (spec.max_positional >= 0 && n > spec.max_positional)
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", parsed.positional[spec.max_positional], "'"));
  return parsed;
}

std::optional<int> ParseVerbArgs(const std::vector<std::string>& args, const ArgSpec& spec,
                                 ParsedArgs* parsed, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> r = ParseArgs(args, spec);
  if (!r.ok()) {
    std::vector<absl::string_view> lines = absl::StrSplit(spec.usage, '\n');
    err << "cltrace " << spec.verb << ": " << r.status().message() << "\n"
        << (lines.empty() ? absl::string_view() : lines[0]) << "\n"
        << "(cltrace " << spec.verb << " --help for more)\n";
    return kExitBadInput;
  }
  if (r->help) {
    out << spec.usage;
    return kExitOk;
  }
  *parsed = *std::move(r);
  return std::nullopt;
}

absl::StatusOr<uint64_t> ParseCount(absl::string_view option, absl::string_view value) {
  uint64_t v = 0;
  if (value.empty() || value[0] == '-' || value[0] == '+' || !absl::SimpleAtoi(value, &v))
    return absl::InvalidArgumentError(
        absl::StrCat(option, " needs a non-negative integer, not '", value, "'"));
  return v;
}

}  // namespace cltrace::cli
