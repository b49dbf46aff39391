#include "refdriver/internal/config.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <shared_mutex>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cltrace::refdriver {
namespace {

constexpr const char* kFaultSiteNames[] = {"RecycleCreateCommandList",
                                           "RecycleCreateDeferredContext", "CreateCommandList"};

std::mutex g_override_mu;
std::optional<Config>* g_override = nullptr;

absl::Status ParseNumbers(absl::string_view item, absl::string_view list,
                          std::vector<uint64_t>* out) {
  for (absl::string_view n : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    uint64_t v = 0;
    if (!absl::SimpleAtoi(n, &v) || v == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("config item '", item, "': '", n, "' is not a call number >= 1"));
    }
    out->push_back(v);
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view BugRule(Bug bug) { return rules::RuleId(bug); }

bool BugFromRule(absl::string_view rule, Bug* bug) {
  const rules::RuleInfo* info = rules::FindRule(rule);
  if (info == nullptr || !rules::HasPlantedBug(info->rule, rules::BugLayer::kDriver)) return false;
  *bug = info->rule;
  return true;
}

const std::vector<Bug>& AllBugs() {
  static const std::vector<Bug>* all = [] {
    auto* v = new std::vector<Bug>();
    for (const rules::PlantedBugMode& m : rules::PlantedBugModes())
      if (m.layer == rules::BugLayer::kDriver) v->push_back(m.rule);
    return v;
  }();
  return *all;
}

bool Config::FailsAt(FaultSite site, uint64_t n) const {
  return absl::c_linear_search(oom[static_cast<int>(site)], n);
}

absl::StatusOr<Config> ParseConfig(absl::string_view text) {
  Config config;
  for (absl::string_view raw : absl::StrSplit(text, ';', absl::SkipWhitespace())) {
    absl::string_view item = absl::StripAsciiWhitespace(raw);
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    absl::string_view key = absl::StripAsciiWhitespace(kv.first);
    absl::string_view value = absl::StripAsciiWhitespace(kv.second);
    if (key == "bug") {
      for (absl::string_view r : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
        Bug bug;
        if (!BugFromRule(absl::StripAsciiWhitespace(r), &bug)) {
          return absl::InvalidArgumentError(
              absl::StrCat("config item '", item, "': no planted-bug mode for '", r, "'"));
        }
        config.bugs.insert(bug);
      }
    } else if (absl::ConsumePrefix(&key, "oom:")) {
      int site = -1;
      for (int i = 0; i < static_cast<int>(FaultSite::kCount); ++i) {
        if (key == kFaultSiteNames[i]) site = i;
      }
      if (site < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("config item '", item, "': no fault site '", key, "'"));
      }
      if (auto s = ParseNumbers(item, value, &config.oom[site]); !s.ok()) return s;
    } else if (key == "removed") {
      std::vector<uint64_t> n;
      if (auto s = ParseNumbers(item, value, &n); !s.ok()) return s;
      if (n.size() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("config item '", item, "': expects one call number"));
      }
      config.removed_at_call = n[0];
    } else if (key == "nested_execute_handle") {
      if (value != "local" && value != "ic") {
        return absl::InvalidArgumentError(
            absl::StrCat("config item '", item, "': expects local or ic"));
      }
      config.nested_execute_ic = value == "ic";
    } else if (key == "aliases") {
      if (value != "released" && value != "with_resource") {
        return absl::InvalidArgumentError(
            absl::StrCat("config item '", item, "': expects released or with_resource"));
      }
      config.aliases_with_resource = value == "with_resource";
    } else if (key == "violations") {
      config.violations_path = std::string(value);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown config item '", item, "'"));
    }
  }
  return config;
}

Config CurrentConfig() {
  {
    std::lock_guard<std::mutex> lock(g_override_mu);
    if (g_override != nullptr && g_override->has_value()) return **g_override;
  }
  const char* env = std::getenv("CLTRACE_REFDRIVER_CONFIG");
  Config config;
  if (env != nullptr) {
    absl::StatusOr<Config> parsed = ParseConfig(env);
    if (parsed.ok()) {
      config = *std::move(parsed);
    } else {
      std::fprintf(stderr, "cltrace_refdriver: CLTRACE_REFDRIVER_CONFIG ignored: %s\n",
                   std::string(parsed.status().message()).c_str());
    }
  }
  if (config.violations_path.empty()) {
    if (const char* path = std::getenv("CLTRACE_REFDRIVER_VIOLATIONS")) {
      config.violations_path = path;
    }
  }
  return config;
}

}  // namespace cltrace::refdriver

extern "C" __attribute__((visibility("default"))) int CltraceRefDriverConfigure(
    const char* config) {
  using namespace cltrace::refdriver;
  std::lock_guard<std::mutex> lock(g_override_mu);
  if (g_override == nullptr) g_override = new std::optional<Config>();
  if (config == nullptr) {
    g_override->reset();
    return 0;
  }
  absl::StatusOr<Config> parsed = ParseConfig(config);
  if (!parsed.ok()) return -1;
  *g_override = *std::move(parsed);
  return 0;
}
