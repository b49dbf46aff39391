#include "runtime/options.h"

namespace cltrace::runtime {
namespace {

struct MisuseName {
  Misuse misuse;
  const char* rule;
};
constexpr MisuseName kMisuseNames[] = {
    {Misuse::kR40, "R40"}, {Misuse::kR41, "R41"}, {Misuse::kR44, "R44"}, {Misuse::kR45, "R45"},
    {Misuse::kR46, "R46"}, {Misuse::kR52, "R52"}, {Misuse::kR61, "R61"},
};

}  // namespace

absl::string_view MisuseRule(Misuse m) {
  for (const MisuseName& n : kMisuseNames) {
    if (n.misuse == m) return n.rule;
  }
  return "";
}

bool MisuseFromRule(absl::string_view rule, Misuse* m) {
  for (const MisuseName& n : kMisuseNames) {
    if (rule == n.rule) {
      *m = n.misuse;
      return true;
    }
  }
  return false;
}

}  // namespace cltrace::runtime
