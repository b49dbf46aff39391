// libcltrace_shim.so goes into any process: it needs libc and the C++ runtime only, no
// Abseil, protobuf or zstd (its ELF DT_NEEDED entries and undefined dynamic symbols), exports only
// the driver entry point and the documented C hooks (its dynamic symbol table), and records a
// program that itself links libprotobuf, Abseil and cltrace_format (the shim used to register the
// trace format's protobuf descriptors in the process's libprotobuf, which aborted such a program).
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

// Issue #15: the shim depends on libc and the C++ runtime at most. Every DT_NEEDED entry is one
// of those (glibc's own pieces, the dynamic loader, libstdc++, libgcc_s, libm which libstdc++
// needs), so no Abseil (it used to need ~30 libabsl_* through absl::Status in the generated
// codec), no protobuf, no zstd; and no undefined dynamic symbol of theirs either.
TEST_F(ShimDepsTest, NeedsOnlyTheCAndCxxRuntimes) {
  Result r = Run(absl::StrCat("readelf -d '", Shim(), "'"));
  ASSERT_EQ(r.exit, 0) << r.err;
  const std::vector<std::string> allowed = {"libc.so.",       "libm.so.",    "libdl.so.",
                                            "libpthread.so.", "librt.so.",   "ld-linux",
                                            "libstdc++.so.",  "libgcc_s.so."};
  int needed = 0;
  for (const std::string& line : Lines(r.out)) {
    if (!absl::StrContains(line, "(NEEDED)")) continue;
    ++needed;
    EXPECT_FALSE(absl::StrContains(line, "libabsl")) << line;
    EXPECT_FALSE(absl::StrContains(line, "libprotobuf")) << line;
    EXPECT_FALSE(absl::StrContains(line, "libzstd")) << line;
    const size_t open = line.find('[');
    ASSERT_NE(open, std::string::npos) << line;
    const std::string lib = line.substr(open + 1, line.find(']', open) - open - 1);
    bool ok = false;
    for (const std::string& a : allowed) ok = ok || absl::StartsWith(lib, a);
    EXPECT_TRUE(ok) << "the shim needs " << lib << ", which is neither libc nor the C++ runtime";
  }
  EXPECT_GT(needed, 0) << r.out;  // libc at least: the listing was read

  Result u = Run(absl::StrCat("nm -D --undefined-only '", Shim(), "'"));
  ASSERT_EQ(u.exit, 0) << u.err;
  int undefined = 0;
  for (const std::string& line : Lines(u.out)) {
    ++undefined;
    EXPECT_FALSE(absl::StrContains(line, "absl")) << line;
    EXPECT_FALSE(absl::StrContains(line, "google") && absl::StrContains(line, "protobuf")) << line;
    EXPECT_FALSE(absl::StrContains(line, "ZSTD_")) << line;
  }
  EXPECT_GT(undefined, 0) << u.out;  // malloc at least: the listing was read
}

TEST_F(ShimDepsTest, ExportsOnlyTheEntryPointAndTheDocumentedHooks) {
  Result r = Run(absl::StrCat("nm -D --defined-only '", Shim(), "'"));
  ASSERT_EQ(r.exit, 0) << r.err;
  const std::set<std::string> allowed = {"OpenAdapter10_2",    "CltraceAnnotateBegin",
                                         "CltraceAnnotateEnd", "CltraceAnnotateMarker",
                                         "CltraceTraceSeq",    "CltraceWrapKernelTable"};
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
