// Test support: a file with given content in the test's temporary directory, removed when the
// object goes.
//
// Thread-safety: none (test code).
#ifndef CLTRACE_FORMAT_TESTING_TEMP_FILE_H_
#define CLTRACE_FORMAT_TESTING_TEMP_FILE_H_

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace cltrace::format::testing {

class TempFile {
 public:
  TempFile(absl::string_view name, absl::string_view content)
      : path_(absl::StrCat(::testing::TempDir(), "/", getpid(), "_", name)) {
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace cltrace::format::testing

#endif  // CLTRACE_FORMAT_TESTING_TEMP_FILE_H_
