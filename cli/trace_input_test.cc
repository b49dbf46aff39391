#include "cli/trace_input.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "ddi/catalog.h"
#include "format/jsonl.h"
#include "format/testing/temp_file.h"
#include "format/trace_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::cli {
namespace {

using format::testing::TempFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// DetectFormat and ReadTrace are format::DetectTraceFormat / format::LoadTrace: their tests
// are in format/load_trace_test.cc.
TEST(RemapIdsTest, HandlesInFixedFieldsAndArrayElements) {
  auto t = format::ParseJsonl(
      R"({"seq":1,"tid":1,"fn":"CheckDeferredContextHandleSizes","args":{"hDevice":"d","pHandleSize":[{"HandleType":1},{"HandleType":2}]}}
{"seq":3,"tid":1,"fn":"CreateCommandList","args":{"hDevice":"ic","hDeferredContext":"d","hCommandList":"c","hRTCommandList":"r"}})");
  ASSERT_TRUE(t.ok()) << t.status();
  format::Event e = t->events[1];
  RemapIds(
      &e, [](uint64_t id) { return id + 100; }, [](uint64_t id) { return id; });
  // hDevice, pCreateCommandList (present), hDeferredContext, hCommandList, hRTCommandList
  EXPECT_THAT(e.args, ElementsAre(t->events[1].args[0] + 100, 1u, t->events[1].args[2] + 100,
                                  t->events[1].args[3] + 100, t->events[1].args[4] + 100));
  e = t->events[0];
  RemapIds(
      &e, [](uint64_t id) { return id + 100; }, [](uint64_t id) { return id; });
  EXPECT_EQ(e.args[0], t->events[0].args[0] + 100);
  EXPECT_EQ(std::vector<uint64_t>(e.args.begin() + 1, e.args.end()),
            std::vector<uint64_t>(t->events[0].args.begin() + 1, t->events[0].args.end()));
}

TEST(IsCallbackTest, CoreLayerCallbacksAreCallbacks) {
  format::Event e;
  e.call = format::IdOf(*format::FindCall("SetErrorCb"));
  EXPECT_TRUE(IsCallback(e));
  e.call = format::IdOf(*format::FindCall("CreateCommandList"));
  EXPECT_FALSE(IsCallback(e));
}

}  // namespace
}  // namespace cltrace::cli
