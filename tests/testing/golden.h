// Golden files: the one way every test compares text with a reviewed file in the source tree.
//
// MatchesGolden(path, actual) compares `actual` with the file at `path` byte for byte. When the
// environment has CLTRACE_UPDATE_GOLDEN=1 (exactly "1") it rewrites the file with `actual`
// instead and succeeds. Any other value (unset, "", "0", "yes", ...) compares: a golden test
// can only be turned into a rewrite on purpose, never by an accidental or negated setting.
// Regenerate after an intended change with e.g.
//   CLTRACE_UPDATE_GOLDEN=1 ctest -R CliE2e     (from the build directory), then review the diff.
// A missing golden file or a difference fails with the first differing line (1-based) and
// both versions of it.
//
// Header-only so that any test binary (component unit tests such as umd/'s included) can use
// it with no library to link beyond GoogleTest.
//
// Thread-safety: call from the test's main thread (it reads the environment and files).
//
// Example:
//   EXPECT_TRUE(cltrace::testing::MatchesGolden(
//       absl::StrCat(CLTRACE_SOURCE_DIR, "/tests/cli/golden/x.txt"), transcript));
#ifndef CLTRACE_TESTS_TESTING_GOLDEN_H_
#define CLTRACE_TESTS_TESTING_GOLDEN_H_

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cltrace::testing {

inline constexpr char kUpdateGoldenEnv[] = "CLTRACE_UPDATE_GOLDEN";

// True only when CLTRACE_UPDATE_GOLDEN is exactly "1".
inline bool UpdateGoldenRequested() {
  const char* v = std::getenv(kUpdateGoldenEnv);
  return v != nullptr && std::strcmp(v, "1") == 0;
}

namespace golden_internal {

// The lines of `text`; a final newline ends the last line rather than starting another.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string::size_type start = 0;
  while (start < text.size()) {
    const std::string::size_type nl = text.find('\n', start);
    if (nl == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// How to regenerate, and why a set-but-not-1 value did not.
inline std::string Hint() {
  std::string hint = "regenerate with CLTRACE_UPDATE_GOLDEN=1 if the change is intended";
  const char* v = std::getenv(kUpdateGoldenEnv);
  if (v != nullptr && std::strcmp(v, "1") != 0) {
    hint += std::string("; CLTRACE_UPDATE_GOLDEN=") + v + " compares (only 1 rewrites)";
  }
  return hint;
}

}  // namespace golden_internal

// Compares `actual` with the golden file `path` (or rewrites it, see the top of the file).
inline ::testing::AssertionResult MatchesGolden(const std::string& path,
                                                const std::string& actual) {
  if (UpdateGoldenRequested()) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << actual;
    out.close();
    if (!out) return ::testing::AssertionFailure() << "cannot write golden " << path;
    return ::testing::AssertionSuccess() << "rewrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return ::testing::AssertionFailure()
           << "missing golden " << path << " (" << golden_internal::Hint() << ")";
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string want = ss.str();
  if (want == actual) return ::testing::AssertionSuccess();
  const std::vector<std::string> a = golden_internal::Lines(want);
  const std::vector<std::string> b = golden_internal::Lines(actual);
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  if (i == a.size() && i == b.size()) {
    return ::testing::AssertionFailure()
           << "golden " << path << " differs only in its final newline (" << golden_internal::Hint()
           << ")";
  }
  const std::string golden_line = i < a.size() ? a[i] : "<end of golden>";
  const std::string actual_line = i < b.size() ? b[i] : "<end of actual>";
  return ::testing::AssertionFailure()
         << "golden " << path << ":" << i + 1 << " differs (golden " << a.size()
         << " lines, actual " << b.size() << ")\n  golden: " << golden_line
         << "\n  actual: " << actual_line << "\n(" << golden_internal::Hint() << ")";
}

}  // namespace cltrace::testing

#endif  // CLTRACE_TESTS_TESTING_GOLDEN_H_
