#include "inspector/load_error.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inspector/internal/synthetic_trace.h"
#include "inspector/loader.h"

namespace cltrace::inspector {
namespace {

using ::testing::HasSubstr;

TEST(LoadErrorTest, DamagedTraceNamesTheOffsetAndSuggestsSalvage) {
  LoadErrorText t = DescribeLoadError(
      absl::DataLossError("t.cltrace: chunk at offset 4096: CRC mismatch"), "t.cltrace", false);
  EXPECT_EQ(t.headline, "t.cltrace is damaged at offset 4096");
  EXPECT_EQ(t.offset, 4096u);
  EXPECT_TRUE(t.salvage_may_help);
  EXPECT_THAT(t.hint, HasSubstr("--salvage"));
  EXPECT_THAT(t.detail, HasSubstr("CRC mismatch"));
  LoadErrorText s = DescribeLoadError(
      absl::DataLossError("t.cltrace: chunk at offset 4096: CRC mismatch"), "t.cltrace", true);
  EXPECT_FALSE(s.salvage_may_help);
}

TEST(LoadErrorTest, OtherErrors) {
  LoadErrorText j =
      DescribeLoadError(absl::InvalidArgumentError("t.jsonl: line 7: bad fn"), "t.jsonl", false);
  EXPECT_EQ(j.headline, "t.jsonl: bad JSONL at line 7");
  EXPECT_EQ(j.line, 7u);
  EXPECT_FALSE(j.salvage_may_help);
  // The file header (catalog, definitions): nothing --salvage can skip.
  LoadErrorText h =
      DescribeLoadError(absl::DataLossError("t.cltrace: file header CRC mismatch at offset 5273"),
                        "t.cltrace", false);
  EXPECT_EQ(h.headline, "t.cltrace is damaged at offset 5273");
  EXPECT_FALSE(h.salvage_may_help);
  LoadErrorText n = DescribeLoadError(absl::NotFoundError("x: cannot open"), "x", false);
  EXPECT_EQ(n.headline, "x: no such file");
  EXPECT_FALSE(n.salvage_may_help);
}

// The loader's real message for a damaged chunk: the dialog names the offset it names, offers
// --salvage, and the salvaged model says what was skipped.
TEST(LoadErrorTest, RealCorruptChunk) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/load_error_test_", getpid());
  ASSERT_TRUE(testing::WriteCltrace(testing::MakeSmallCommandListTrace({.calls = 20000}), path,
                                    /*chunk_bytes=*/1024)
                  .ok());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    const std::streamoff size = f.tellg();
    f.seekp(size * 2 / 3);  // inside a chunk in the last third
    f.put('\x55');
    f.put('\xaa');
  }
  absl::StatusOr<std::unique_ptr<TraceModel>> m = LoadModel(path, {}, {});
  BuildOptions salvage;
  salvage.salvage = true;
  absl::StatusOr<std::unique_ptr<TraceModel>> saved = LoadModel(path, salvage, {});
  std::remove(path.c_str());
  ASSERT_FALSE(m.ok());
  LoadErrorText t = DescribeLoadError(m.status(), path, false);
  ASSERT_TRUE(t.offset.has_value()) << m.status();
  EXPECT_THAT(m.status().message(), HasSubstr(absl::StrCat("offset ", *t.offset)));
  EXPECT_THAT(t.headline, HasSubstr(absl::StrCat("damaged at offset ", *t.offset)));
  EXPECT_TRUE(t.salvage_may_help) << m.status();
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_THAT(SalvageNotice((*saved)->data()), HasSubstr("salvaged: 1 corrupt chunk ("));
}

TEST(LoadErrorTest, NoNoticeWhenNothingWasSkipped) { EXPECT_EQ(SalvageNotice(TraceData()), ""); }

}  // namespace
}  // namespace cltrace::inspector
