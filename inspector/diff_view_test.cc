#include "inspector/diff_view.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inspector/internal/synthetic_model.h"
#include "inspector/internal/synthetic_trace.h"
#include "inspector/loader.h"

namespace cltrace::inspector {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/diff_view_test_", getpid(), "_", name);
}

class DiffViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = testing::MakeSmallCommandListTrace({.calls = 400, .dcs = 2});
    path_a_ = TempPath("a.cltrace");
    path_b_ = TempPath("b.cltrace");
    ASSERT_TRUE(testing::WriteCltrace(a_, path_a_).ok());
  }
  void TearDown() override {
    std::remove(path_a_.c_str());
    std::remove(path_b_.c_str());
  }
  std::unique_ptr<TraceModel> Load(const std::string& path) {
    absl::StatusOr<std::unique_ptr<TraceModel>> m = LoadModel(path, {}, {});
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *std::move(m) : nullptr;
  }

  testing::SyntheticTrace a_;
  std::string path_a_, path_b_;
};

TEST_F(DiffViewTest, EqualTracesCompareEqual) {
  ASSERT_TRUE(testing::WriteCltrace(a_, path_b_, /*chunk_bytes=*/512).ok());  // other layout
  absl::StatusOr<TraceComparison> c = CompareTraceFiles(path_a_, path_b_, false);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->summary.equal());
  EXPECT_EQ(c->summary.calls_a, a_.events.size());
  auto m = Load(path_a_);
  EXPECT_EQ(c->EventA(*m), -1);
  EXPECT_THAT(c->Headline(), HasSubstr("equal"));
}

// B lacks one call: the first difference is that call in A and the call after it in B, and
// the comparison finds both in the models the view shows.
TEST_F(DiffViewTest, FirstDifferenceIsLocatedInBothModels) {
  testing::SyntheticTrace b = a_;
  size_t k = 0;
  for (size_t i = 120; i + 1 < b.events.size(); ++i) {
    const format::Event& e = b.events[i];
    if (e.parent == 0 && e.end == e.seq + 1 && b.events[i + 1].tid == e.tid &&
        b.events[i + 1].call != e.call) {
      k = i;
      break;
    }
  }
  ASSERT_GT(k, 0u);
  const format::Event dropped = b.events[k];
  const format::Event next = b.events[k + 1];
  b.events.erase(b.events.begin() + static_cast<std::ptrdiff_t>(k));
  ASSERT_TRUE(testing::WriteCltrace(b, path_b_).ok());

  absl::StatusOr<TraceComparison> c = CompareTraceFiles(path_a_, path_b_, false);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_FALSE(c->summary.equal());
  EXPECT_EQ(c->summary.first_seq_a, dropped.seq);
  EXPECT_EQ(c->summary.first_seq_b, next.seq);
  EXPECT_THAT(c->summary.first_what, HasSubstr("function"));
  EXPECT_THAT(c->report, HasSubstr("first difference"));
  auto ma = Load(path_a_);
  auto mb = Load(path_b_);
  ASSERT_NE(ma, nullptr);
  ASSERT_NE(mb, nullptr);
  EXPECT_EQ(c->EventA(*ma), static_cast<int64_t>(k));
  ASSERT_GE(c->EventB(*mb), 0);
  EXPECT_EQ(mb->Call(c->EventB(*mb)).seq, next.seq);
  EXPECT_EQ(mb->Call(c->EventB(*mb)).call, next.call);
  EXPECT_THAT(c->Headline(),
              HasSubstr(absl::StrCat("(A seq ", dropped.seq, ", B seq ", next.seq, ")")));
}

TEST_F(DiffViewTest, AMissingFileIsAnError) {
  absl::StatusOr<TraceComparison> c = CompareTraceFiles(path_a_, TempPath("none.cltrace"), false);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("none.cltrace"));
}

}  // namespace
}  // namespace cltrace::inspector
