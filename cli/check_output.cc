#include "cli/check_output.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "check/check_trace.h"
#include "check/rules.h"
#include "cli/lifecycle_output.h"
#include "cli/verb.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"

namespace cltrace::cli {
namespace {

absl::string_view CallName(format::CallId c) {
  const format::CallInfo* ci = format::GetCall(c);
  return ci ? absl::string_view(ci->name) : absl::string_view("?");
}

absl::StatusOr<uint32_t> PositiveNumber(absl::string_view flag, absl::string_view text) {
  uint32_t n = 0;
  if (!absl::SimpleAtoi(text, &n) || n == 0)
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": expected a positive number, got \"", text, "\""));
  return n;
}

void AppendJsonFinding(std::string* out, const check::Violation& v,
                       const format::TokenTable& handles) {
  std::string message = v.message;
  std::string last = check::FormatLast(v);
  if (!last.empty()) absl::StrAppend(&message, " ", last);
  absl::StrAppend(
      out, "{\"rule\": ", JsonString(v.id()), ", \"seq\": ", v.seq, ", \"tid\": ", v.tid,
      ", \"fn\": ", v.call == format::CallId::kInvalid ? "null" : JsonString(CallName(v.call)),
      ", \"handle\": ", v.handle ? JsonString(handles.Token(v.handle)) : "null",
      ", \"message\": ", JsonString(message), "}");
}

}  // namespace

ArgSpec CheckArgSpec(const char* usage) {
  return ArgSpec("check", usage)
      .Options({"--rules", "--nested-execute-handle", "--amortized-max-submits",
                "--dc-amortized-max-calls"})
      .Flags({"--json", "--salvage", "--quiet"})
      .Positional(1, 1);
}

absl::StatusOr<CheckCommandLine> CheckCommandLineFrom(const ParsedArgs& parsed) {
  CheckCommandLine cmd;
  if (!parsed.positional.empty()) cmd.file = parsed.positional[0];
  cmd.json = parsed.Flag("--json");
  cmd.salvage = parsed.Flag("--salvage");
  for (const auto& [name, value] : parsed.options) {
    absl::Status s = ApplyCheckOption(name, value, &cmd.options);
    if (!s.ok()) return s;
  }
  return cmd;
}

absl::Status ApplyCheckOption(absl::string_view name, absl::string_view value,
                              check::CheckOptions* options) {
  if (name == "--rules") {
    auto rules = check::ParseRuleList(value);
    if (!rules.ok()) return rules.status();
    options->rules = *rules;
  } else if (name == "--nested-execute-handle") {
    if (value == "local") {
      options->nested_execute_handle = check::NestedExecuteHandle::kLocal;
    } else if (value == "ic") {
      options->nested_execute_handle = check::NestedExecuteHandle::kIc;
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

// One escaper for every JSON the tools write (format/jsonl.h: UTF-8 kept, the rest escaped).
std::string JsonString(absl::string_view s) { return format::JsonQuote(s); }

int RunCheck(const check::CheckOptions& options, bool json, absl::Span<const format::Event> events,
             const format::TokenTable& handles, std::ostream& out, std::ostream& err) {
  absl::StatusOr<check::CheckResult> result = check::CheckTrace(options, events, handles);
  if (!result.ok()) {
    err << "cltrace check: " << result.status().message() << "\n";
    return kExitBadInput;
  }
  return PrintCheckResult(*result, json, handles, out);
}

int PrintCheckResult(const check::CheckResult& r, bool json, const format::TokenTable& handles,
                     std::ostream& out, const LiveHandles* leaks) {
  const check::CheckResult* result = &r;
  if (json) {
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
    for (const check::Violation& v : result->violations)
      out << check::FormatViolation(v, handles) << "\n";
    for (const check::Violation& v : result->warnings)
      out << check::FormatViolation(v, handles) << "\n";
    if (leaks != nullptr) leaks->PrintLeaks(handles, out);
    out << "# " << result->calls << " calls, " << result->violations.size() << " violations, "
        << result->warnings.size() << " warnings";
    if (result->dropped_findings) out << " (" << result->dropped_findings << " more not listed)";
    out << "\n";
  }
  return result->violations.empty() && result->dropped_findings == 0 ? kExitOk : kExitProblems;
}

}  // namespace cltrace::cli
