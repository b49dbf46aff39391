#include "inspector/call_filter.h"

#include <memory>

#include "gtest/gtest.h"
#include "inspector/internal/synthetic_model.h"
#include "inspector/internal/synthetic_trace.h"

namespace cltrace::inspector {
namespace {

class CallFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::SyntheticTrace t = testing::MakeSmallCommandListTrace({.calls = 400, .dcs = 2});
    TraceData d = testing::AsTraceData(std::move(t), "");
    auto m = TraceModel::Build(std::move(d));
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = *std::move(m);
  }
  std::vector<size_t> Run(const CallFilterSpec& spec, size_t step = 1 << 20) {
    CallFilter f;
    f.Reset(*model_, spec);
    while (!f.Step(step)) {
    }
    std::vector<size_t> out;
    for (size_t i = 0; i < f.size(); ++i) out.push_back(f.at(i));
    return out;
  }
  uint64_t H(const char* token) { return static_cast<uint64_t>(model_->handles().Find(token)); }
  std::unique_ptr<TraceModel> model_;
};

TEST_F(CallFilterTest, EmptySpecIsEveryCall) {
  CallFilter f;
  f.Reset(*model_, {});
  EXPECT_TRUE(f.done());
  EXPECT_EQ(f.size(), model_->call_count());
  EXPECT_EQ(f.at(17), 17u);
  EXPECT_EQ(f.LowerBound(17), 17u);
}

TEST_F(CallFilterTest, ByFunction) {
  std::vector<size_t> hits = Run({.call = format::CallId::kRecycleDestroyCommandList});
  EXPECT_EQ(hits.size(),
            model_->call_counts()[static_cast<size_t>(format::CallId::kRecycleDestroyCommandList)]);
  for (size_t i : hits) EXPECT_EQ(model_->Call(i).call, format::CallId::kRecycleDestroyCommandList);
}

TEST_F(CallFilterTest, ByThread) {
  std::vector<size_t> hits = Run({.tid = 3});
  ASSERT_FALSE(hits.empty());
  for (size_t i : hits) EXPECT_EQ(model_->Call(i).tid, 3u);
  uint64_t expected = 0;
  for (const auto& [tid, n] : model_->thread_counts())
    if (tid == 3) expected = n;
  EXPECT_EQ(hits.size(), expected);
}

TEST_F(CallFilterTest, ByHandleFindsArrayElements) {
  // lvb0 appears in the local open, the IaSetVertexBuffers array and the local close.
  std::vector<size_t> hits = Run({.handle = H("lvb0")});
  ASSERT_FALSE(hits.empty());
  bool array = false;
  for (size_t i : hits)
    array = array || model_->Call(i).call == format::CallId::kIaSetVertexBuffers;
  EXPECT_TRUE(array);
  EXPECT_EQ(hits.size() % 3, 0u);
}

TEST_F(CallFilterTest, UnknownHandleMatchesNothing) {
  EXPECT_TRUE(Run({.handle = ~uint64_t{0}}).empty());
}

TEST_F(CallFilterTest, TextMatchesNamesTokensAndArguments) {
  EXPECT_EQ(Run({.text = "recycledestroy"}).size(),
            model_->call_counts()[static_cast<size_t>(format::CallId::kRecycleDestroyCommandList)]);
  // "dc::" only in the labels of DC-table calls.
  for (size_t i : Run({.text = "DC::draw"})) EXPECT_TRUE(model_->ViaDcTable(i));
  // An argument value that is neither a name nor a token: VertexCount=36.
  std::vector<size_t> hits = Run({.text = "vertexcount=36"});
  ASSERT_FALSE(hits.empty());
  for (size_t i : hits) EXPECT_EQ(model_->Call(i).call, format::CallId::kDraw);
}

TEST_F(CallFilterTest, CombinedFiltersAndIncrementalSteps) {
  CallFilterSpec spec{.call = format::CallId::kCommandListExecute, .handle = H("cl1")};
  std::vector<size_t> at_once = Run(spec);
  std::vector<size_t> stepwise = Run(spec, 7);
  EXPECT_EQ(at_once, stepwise);
  ASSERT_FALSE(at_once.empty());
  CallFilter f;
  f.Reset(*model_, spec);
  f.Step(10);
  EXPECT_FALSE(f.done());
  EXPECT_GT(f.progress(), 0.0f);
  EXPECT_LT(f.progress(), 1.0f);
  while (!f.Step(100)) {
  }
  EXPECT_EQ(f.LowerBound(at_once[1]), 1u);
  EXPECT_EQ(f.LowerBound(at_once[1] + 1), 2u);
}

}  // namespace
}  // namespace cltrace::inspector
