#include "check/check_command.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "format/catalog.h"
#include "format/trace_reader.h"

namespace cltrace::check {
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
  absl::StrAppend(
      out, "{\"rule\": ", JsonString(v.rule->id), ", \"seq\": ", v.seq, ", \"tid\": ", v.tid,
      ", \"fn\": ", v.call == format::CallId::kInvalid ? "null" : JsonString(CallName(v.call)),
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
  std::string line = absl::StrCat(
      v.rule->id, " seq=", v.seq, " tid=", v.tid,
      " fn=", v.call == format::CallId::kInvalid ? "-" : CallName(v.call), " handle=", handle, ": ",
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

const RuleInfo& GapsRule() {
  static const RuleInfo kGaps{"GAPS", "-", Enforcement::kInformative, false,
                              "findings across positions missing from a recording are not judged"};
  return kGaps;
}

void WithholdAcrossGaps(const format::PositionGaps& gaps, absl::Span<const format::Event> events,
                        const absl::flat_hash_map<uint64_t, std::vector<uint64_t>>& creations,
                        CheckResult* result) {
  if (gaps.holes.empty()) return;
  absl::flat_hash_map<uint64_t, bool> handles;  // handles of withheld findings
  std::map<std::string, uint64_t> rules;        // withheld findings per rule
  uint64_t withheld = 0;
  auto crosses = [&](const Violation& v) {
    uint64_t from = 0;  // position after which the handle's history is in the trace
    if (v.handle != 0) {
      auto it = creations.find(v.handle);
      if (it != creations.end()) {
        auto c = std::upper_bound(it->second.begin(), it->second.end(), v.seq);
        if (c != it->second.begin()) from = *(c - 1);
      }
    }
    uint64_t to = v.seq;  // through the end of the offending call (deadline rules)
    auto e = std::lower_bound(events.begin(), events.end(), v.seq,
                              [](const format::Event& x, uint64_t s) { return x.seq < s; });
    if (e != events.end() && e->seq == v.seq) to = std::max(to, e->end);
    return gaps.MissingBetween(from, to + 1);
  };
  auto filter = [&](std::vector<Violation>* list) {
    std::vector<Violation> kept;
    for (Violation& v : *list) {
      if (!crosses(v)) {
        kept.push_back(std::move(v));
        continue;
      }
      ++withheld;
      ++rules[v.rule->id];
      if (v.handle != 0) handles[v.handle] = true;
    }
    *list = std::move(kept);
  };
  filter(&result->violations);
  filter(&result->warnings);
  std::vector<std::string> per_rule;
  for (const auto& [rule, n] : rules) per_rule.push_back(absl::StrCat(rule, " x", n));
  Violation note;
  note.rule = &GapsRule();
  note.severity = Severity::kWarning;
  note.seq = gaps.first_missing;
  note.message = absl::StrCat(
      "not judged: the recording lost calls (", gaps.missing, " positions missing in ",
      gaps.holes.size(), gaps.holes.size() == 1 ? " hole" : " holes", ", seq ",
      gaps.holes.front().first, " .. ", gaps.holes.back().second,
      "); findings about handles whose history crosses a hole are withheld: ", withheld,
      withheld == 1 ? " finding" : " findings", " about ", handles.size(),
      handles.size() == 1 ? " handle" : " handles",
      per_rule.empty() ? std::string() : absl::StrCat(" (", absl::StrJoin(per_rule, ", "), ")"));
  result->warnings.push_back(std::move(note));
}

// Entry positions of the calls that created each handle (transitions from kNone).
class CreationIndex : public TransitionObserver {
 public:
  void OnTransition(const TransitionEvent& t) override {
    if (t.from != State::kNone || t.call == format::CallId::kInvalid || t.handle == 0) return;
    std::vector<uint64_t>& v = seqs_[t.handle];
    if (v.empty() || v.back() < t.seq) v.push_back(t.seq);  // events come in seq order
  }
  const absl::flat_hash_map<uint64_t, std::vector<uint64_t>>& seqs() const { return seqs_; }

 private:
  absl::flat_hash_map<uint64_t, std::vector<uint64_t>> seqs_;
};

int RunCheck(const CheckOptions& options, absl::Span<const format::Event> events,
             const format::TokenTable& handles, std::ostream& out, std::ostream& err) {
  const bool gaps = options.gaps != nullptr && !options.gaps->holes.empty();
  CreationIndex creations;
  Checker checker(options);
  if (gaps) checker.set_observer(&creations);
  absl::StatusOr<CheckResult> result = checker.Run(events, handles);
  if (result.ok() && gaps) WithholdAcrossGaps(*options.gaps, events, creations.seqs(), &*result);
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

}  // namespace cltrace::check
