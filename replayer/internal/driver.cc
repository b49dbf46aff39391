#include "replayer/internal/driver.h"

#include <dlfcn.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace cltrace::replay::internal {

absl::StatusOr<std::unique_ptr<Driver>> Driver::Load(const std::string& path) {
  std::unique_ptr<Driver> d(new Driver());
  d->path_ = path;
  d->library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (d->library_ == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load driver ", path, ": ", why != nullptr ? why : "dlopen failed"));
  }
  d->open_adapter_ =
      reinterpret_cast<PFND3D10DDI_OPENADAPTER>(dlsym(d->library_, "OpenAdapter10_2"));
  if (d->open_adapter_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("driver ", path, " does not export OpenAdapter10_2"));
  }
  d->configure_ =
      reinterpret_cast<int (*)(const char*)>(dlsym(d->library_, "CltraceRefDriverConfigure"));
  d->violations_ =
      reinterpret_cast<size_t (*)(char*, size_t)>(dlsym(d->library_, "CltraceRefDriverViolations"));
  d->clear_violations_ =
      reinterpret_cast<void (*)()>(dlsym(d->library_, "CltraceRefDriverClearViolations"));
  return d;
}

absl::Status Driver::Configure(const std::string& items, const std::string* base) {
  if (configure_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("driver ", path_, " has no configuration interface"));
  }
  std::string config;
  if (base != nullptr) {
    config = *base;
  } else if (const char* env = std::getenv("CLTRACE_REFDRIVER_CONFIG"); env != nullptr) {
    config = env;
  }
  if (!items.empty()) {
    if (!config.empty()) config += ";";
    config += items;
  }
  if (configure_(config.c_str()) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("driver ", path_, " rejects the configuration \"", config, "\""));
  }
  return absl::OkStatus();
}

void Driver::ResetConfiguration() {
  if (configure_ != nullptr) configure_(nullptr);
}

std::vector<std::string> Driver::Violations() const {
  std::vector<std::string> lines;
  if (violations_ == nullptr) return lines;
  const size_t need = violations_(nullptr, 0);
  std::string text(need + 1, '\0');
  violations_(text.data(), text.size());
  text.resize(need);
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    lines.emplace_back(line);
  }
  return lines;
}

void Driver::ClearViolations() {
  if (clear_violations_ != nullptr) clear_violations_();
}

}  // namespace cltrace::replay::internal
