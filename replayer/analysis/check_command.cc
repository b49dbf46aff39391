#include "replayer/analysis/check_command.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "format/catalog.h"

namespace cltrace::analysis {
namespace {

absl::string_view CallName(format::CallId c) {
  const format::CallInfo* ci = format::GetCall(c);
  return ci ? absl::string_view(ci->name) : absl::string_view("?");
}

// "--flag=value" or "--flag value"; advances *i past the value.
absl::StatusOr<std::string> FlagValue(absl::Span<const std::string> args, size_t* i,
                                      absl::string_view flag) {
  absl::string_view a = args[*i];
  if (a.size() > flag.size() && a[flag.size()] == '=')
    return std::string(a.substr(flag.size() + 1));
  if (*i + 1 >= args.size())
    return absl::InvalidArgumentError(absl::StrCat(flag, " needs a value"));
  ++*i;
  return args[*i];
}

absl::StatusOr<uint32_t> PositiveNumber(absl::string_view flag, absl::string_view text) {
  uint32_t n = 0;
  if (!absl::SimpleAtoi(text, &n) || n == 0)
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": expected a positive number, got \"", text, "\""));
  return n;
}

bool IsFlag(absl::string_view a, absl::string_view flag) {
  return a == flag ||
         (absl::StartsWith(a, flag) && a.size() > flag.size() && a[flag.size()] == '=');
}

void AppendJsonFinding(std::string* out, const Violation& v, const format::TokenTable& handles) {
  std::string message = v.message;
  std::string last = FormatLast(v);
  if (!last.empty()) absl::StrAppend(&message, " ", last);
  absl::StrAppend(out, "{\"rule\": ", JsonString(v.rule->id), ", \"seq\": ", v.seq,
                  ", \"tid\": ", v.tid, ", \"fn\": ", JsonString(CallName(v.call)),
                  ", \"handle\": ", v.handle ? JsonString(handles.Token(v.handle)) : "null",
                  ", \"message\": ", JsonString(message), "}");
}

}  // namespace

absl::Status ApplyCheckOption(absl::string_view name, absl::string_view value,
                              CheckOptions* options) {
  if (name == "--rules") {
    auto rules = ParseRuleList(value);
    if (!rules.ok()) return rules.status();
    options->rules = *rules;
  } else if (name == "--nested-execute-handle") {
    if (value == "local") {
      options->nested_execute_handle = NestedExecuteHandle::kLocal;
    } else if (value == "ic") {
      options->nested_execute_handle = NestedExecuteHandle::kIc;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--nested-execute-handle: expected local or ic, got \"", value, "\""));
    }
  } else if (name == "--amortized-max-submits") {
    auto n = PositiveNumber(name, value);
    if (!n.ok()) return n.status();
    options->heuristics.amortized_max_submits_without = *n;
  } else if (name == "--dc-amortized-max-calls") {
    auto n = PositiveNumber(name, value);
    if (!n.ok()) return n.status();
    options->heuristics.dc_amortized_max_calls = *n;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("check: unknown option ", name));
  }
  return absl::OkStatus();
}

absl::StatusOr<CheckCommandLine> ParseCheckArgs(absl::Span<const std::string> args) {
  CheckCommandLine cmd;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view a = args[i];
    if (a == "--json") {
      cmd.options.json = true;
      continue;
    }
    bool known = false;
    for (absl::string_view option : {"--rules", "--nested-execute-handle",
                                     "--amortized-max-submits", "--dc-amortized-max-calls"}) {
      if (!IsFlag(a, option)) continue;
      known = true;
      auto v = FlagValue(args, &i, option);
      if (!v.ok()) return v.status();
      absl::Status s = ApplyCheckOption(option, *v, &cmd.options);
      if (!s.ok()) return s;
    }
    if (known) continue;
    if (absl::StartsWith(a, "--")) {
      return absl::InvalidArgumentError(absl::StrCat("check: unknown flag ", a));
    } else if (cmd.file.empty()) {
      cmd.file = std::string(a);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("check: unexpected argument ", a));
    }
  }
  if (cmd.file.empty()) return absl::InvalidArgumentError("check: missing FILE");
  return cmd;
}

std::string FormatLast(const Violation& v) {
  if (v.last.empty()) return "";
  std::vector<std::string> parts;
  for (const LastTransition& t : v.last) {
    parts.push_back(t.call == format::CallId::kInvalid
                        ? absl::StrCat(StateName(t.state), "@", t.seq, " (before the trace)")
                        : absl::StrCat(StateName(t.state), "@", t.seq, " ", CallName(t.call)));
  }
  return absl::StrCat("[last: ", absl::StrJoin(parts, ", "), "]");
}

std::string FormatViolation(const Violation& v, const format::TokenTable& handles) {
  absl::string_view handle = v.handle ? handles.Token(v.handle) : absl::string_view("-");
  std::string line = absl::StrCat(v.rule->id, " seq=", v.seq, " tid=", v.tid,
                                  " fn=", CallName(v.call), " handle=", handle, ": ",
                                  v.severity == Severity::kWarning ? "warning: " : "", v.message);
  std::string last = FormatLast(v);
  if (!last.empty()) absl::StrAppend(&line, " ", last);
  return line;
}

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppend(&out, absl::StrFormat("\\u%04x", c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

int RunCheck(const CheckOptions& options, absl::Span<const format::Event> events,
             const format::TokenTable& handles, std::ostream& out, std::ostream& err) {
  absl::StatusOr<CheckResult> result = Check(events, handles, options);
  if (!result.ok()) {
    err << "cltrace check: " << result.status().message() << "\n";
    return kExitBadInput;
  }
  if (options.json) {
    std::string json = absl::StrCat("{\"calls\": ", result->calls, ", \"violations\": [");
    for (size_t i = 0; i < result->violations.size(); ++i) {
      if (i) json += ", ";
      AppendJsonFinding(&json, result->violations[i], handles);
    }
    json += "], \"warnings\": [";
    for (size_t i = 0; i < result->warnings.size(); ++i) {
      if (i) json += ", ";
      AppendJsonFinding(&json, result->warnings[i], handles);
    }
    json += "]}\n";
    out << json;
  } else {
    for (const Violation& v : result->violations) out << FormatViolation(v, handles) << "\n";
    for (const Violation& v : result->warnings) out << FormatViolation(v, handles) << "\n";
    out << "# " << result->calls << " calls, " << result->violations.size() << " violations, "
        << result->warnings.size() << " warnings";
    if (result->dropped_findings) out << " (" << result->dropped_findings << " more not listed)";
    out << "\n";
  }
  return result->violations.empty() && result->dropped_findings == 0 ? kExitClean : kExitViolations;
}

}  // namespace cltrace::analysis
