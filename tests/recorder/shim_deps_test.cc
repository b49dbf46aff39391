// libcltrace_shim.so goes into any process: it needs no protobuf and no zstd (its ELF
// DT_NEEDED entries), exports only the driver entry point and the documented C hooks (its
// dynamic symbol table), and records a program that itself links libprotobuf, Abseil and
// cltrace_format (the shim used to register the trace format's protobuf descriptors in the
// process's libprotobuf, which aborted such a program).
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "format/load_trace.h"
#include "gtest/gtest.h"
#include "tests/testing/command_test.h"

namespace cltrace {
namespace {

using Result = ::cltrace::testing::CommandResult;

std::string Shim() { return CLTRACE_SHIM_SO; }

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

class ShimDepsTest : public ::cltrace::testing::CommandTest {};

TEST_F(ShimDepsTest, NeedsNoProtobufAndNoZstd) {
  Result r = Run(absl::StrCat("readelf -d '", Shim(), "'"));
  ASSERT_EQ(r.exit, 0) << r.err;
  int needed = 0;
  for (const std::string& line : Lines(r.out)) {
    if (!absl::StrContains(line, "(NEEDED)")) continue;
    ++needed;
    EXPECT_FALSE(absl::StrContains(line, "libprotobuf")) << line;
    EXPECT_FALSE(absl::StrContains(line, "libzstd")) << line;
  }
  EXPECT_GT(needed, 0) << r.out;  // libc at least: the listing was read
}

TEST_F(ShimDepsTest, ExportsOnlyTheEntryPointAndTheDocumentedHooks) {
  Result r = Run(absl::StrCat("nm -D --defined-only '", Shim(), "'"));
  ASSERT_EQ(r.exit, 0) << r.err;
  const std::set<std::string> allowed = {"OpenAdapter10_2", "CltraceAnnotateBegin",
                                         "CltraceAnnotateEnd", "CltraceTraceSeq",
                                         "CltraceWrapKernelTable"};
  std::set<std::string> exported;
  for (const std::string& line : Lines(r.out)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    ASSERT_EQ(f.size(), 3u) << line;
    // Code and data symbols; a `u` (unique global) is the C++ runtime's template statics.
    if (f[1] == "T" || f[1] == "D" || f[1] == "B" || f[1] == "R" || f[1] == "W" || f[1] == "V") {
      exported.insert(f[2]);
    }
  }
  EXPECT_EQ(exported, allowed);
}

TEST_F(ShimDepsTest, RecordsAProgramThatLinksProtobufAbseilAndTheFormatLibrary) {
  const std::string trace = Path("host.cltrace");
  Result r = Run(absl::StrCat(CLTRACE_BIN, " record -o ", trace, " -- ", CLTRACE_HOST_APP_BIN, " ",
                              Path("scratch.cltrace")));
  ASSERT_EQ(r.exit, 0) << r.out << r.err;
  uint64_t calls = 0;
  for (const std::string& line : Lines(r.out)) {
    if (absl::StartsWith(line, "calls: ")) {
      ASSERT_TRUE(absl::SimpleAtoi(line.substr(7), &calls));
    }
  }
  ASSERT_GT(calls, 0u) << r.out;
  absl::StatusOr<format::LoadedTrace> t = format::ReadAllSorted(trace);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->events.size(), calls);
}

}  // namespace
}  // namespace cltrace
