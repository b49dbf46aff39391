// What the end-to-end tests share: a scratch directory per test and a shell runner that
// captures a command's exit status, stdout and stderr (the tools as a user runs them).
//
// Example:
//   class MyE2eTest : public cltrace::testing::CommandTest {};
//   TEST_F(MyE2eTest, Info) {
//     CommandResult r = Run(CLTRACE_BIN " info " + Path("t.cltrace"));
//     EXPECT_EQ(r.exit, 0) << r.err;
//   }
#ifndef CLTRACE_TESTS_TESTING_COMMAND_TEST_H_
#define CLTRACE_TESTS_TESTING_COMMAND_TEST_H_

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace cltrace::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct CommandResult {
  int exit = -1;  // -1: killed by a signal
  std::string out, err;
};

class CommandTest : public ::testing::Test {
 public:
  void SetUp() override {
    char tmpl[] = "/tmp/cltrace_e2e_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { (void)!std::system(absl::StrCat("rm -rf '", dir_, "'").c_str()); }

  // Runs a shell command line; stdout and stderr captured separately.
  CommandResult Run(const std::string& command) {
    const std::string out = dir_ + "/.stdout", err = dir_ + "/.stderr";
    const int status = std::system(absl::StrCat(command, " >'", out, "' 2>'", err, "'").c_str());
    CommandResult r;
    r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = ReadFile(out);
    r.err = ReadFile(err);
    return r;
  }
  // A file in the test's scratch directory.
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;
};

}  // namespace cltrace::testing

#endif  // CLTRACE_TESTS_TESTING_COMMAND_TEST_H_
