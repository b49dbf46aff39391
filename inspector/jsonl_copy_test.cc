// "Copy as JSONL" gives the lines `cltrace export` writes (the binary is run on a corpus
// trace), and a copied selection reads back as the same calls.
#include "inspector/jsonl_copy.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "format/jsonl.h"
#include "gtest/gtest.h"
#include "inspector/loader.h"

namespace cltrace::inspector {
namespace {

constexpr char kTrace[] = "corpus/traces/scene.cltrace";

TEST(JsonlCopyTest, CopiedCallsAreTheExportsLines) {
  const char* dir = std::getenv("CLTRACE_BUILD_DIR");
  const std::string out = absl::StrCat(::testing::TempDir(), "/jsonl_copy_test_", getpid());
  const std::string cmd =
      absl::StrCat(dir ? dir : "build", "/bin/cltrace export --quiet ", kTrace, " -o ", out);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<std::string> lines;
  {
    std::ifstream f(out);
    for (std::string l; std::getline(f, l);) lines.push_back(l);
  }
  std::remove(out.c_str());
  absl::StatusOr<std::unique_ptr<TraceModel>> m = LoadModel(kTrace, {}, {});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(lines.size(), (*m)->call_count());
  for (int64_t i : {int64_t{0}, int64_t{17}, static_cast<int64_t>(lines.size() / 2),
                    static_cast<int64_t>(lines.size() - 1)})
    EXPECT_EQ(CallsAsJsonl(**m, {i}), lines[static_cast<size_t>(i)] + "\n") << i;
  // A selection: consecutive lines, in order; top-level calls parse back into the same calls.
  int64_t f = 40;
  auto top = [&](int64_t i) { return (*m)->Call(static_cast<size_t>(i)).parent == 0; };
  while (!(top(f) && top(f + 1) && top(f + 2) && top(f + 3))) ++f;
  const std::string sel = CallsAsJsonl(**m, {f, f + 1, f + 2, f + 3});
  EXPECT_EQ(sel, absl::StrCat(lines[f], "\n", lines[f + 1], "\n", lines[f + 2], "\n", lines[f + 3],
                              "\n"));
  absl::StatusOr<format::JsonlTrace> back = format::ParseJsonl(sel);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->events.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(back->events[k].seq, (*m)->Call(f + k).seq);
    EXPECT_EQ(back->events[k].call, (*m)->Call(f + k).call);
  }
  EXPECT_EQ(CallsAsJsonl(**m, {-1, static_cast<int64_t>(lines.size())}), "");
}

}  // namespace
}  // namespace cltrace::inspector
