#include "cli/trace_input.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "format/catalog.h"
#include "format/jsonl.h"
#include "format/trace_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class TempFile {
 public:
  TempFile(absl::string_view name, absl::string_view content)
      : path_(absl::StrCat(::testing::TempDir(), "/", getpid(), "_", name)) {
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(DetectFormatTest, ByContentNotByName) {
  TempFile jsonl("a.cltrace", "\n  {\"seq\":1}\n");
  EXPECT_EQ(*DetectFormat(jsonl.path()), TraceFormat::kJsonl);
  TempFile binary("b.jsonl", "CLTRACE\0...");
  EXPECT_EQ(*DetectFormat(binary.path()), TraceFormat::kCltrace);
}

TEST(DetectFormatTest, EmptyFiles) {
  TempFile empty_jsonl("e.jsonl", "");
  EXPECT_EQ(*DetectFormat(empty_jsonl.path()), TraceFormat::kJsonl);
  TempFile empty_cltrace("e.cltrace", " \n");
  EXPECT_EQ(*DetectFormat(empty_cltrace.path()), TraceFormat::kCltrace);
}

TEST(DetectFormatTest, MissingFile) {
  EXPECT_EQ(DetectFormat("/nonexistent/x.jsonl").status().code(), absl::StatusCode::kNotFound);
}

TEST(ReadTraceTest, JsonlKeepsTheCallsAboveABadLine) {
  TempFile f("bad.jsonl",
             "{\"seq\":1,\"tid\":1,\"fn\":\"Flush\",\"args\":{\"hDevice\":\"d\"}}\n"
             "{\"seq\":2,\"tid\":1,\"fn\":\"Flush\",\"args\":{\"hDevice\":\"d\"}}\n"
             "{\"seq\":3,\"tid\":1,\"fn\":\"Flush\",\"args\":{\"hDevic\":\"d\"}}\n");
  absl::StatusOr<TraceInput> in = ReadTrace(f.path(), false);
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->format, TraceFormat::kJsonl);
  ASSERT_EQ(in->events.size(), 2u);
  EXPECT_EQ(in->events[1].seq, 3u);  // 1..2, then 3..4: the ends were inferred at the error
  EXPECT_THAT(std::string(in->error.message()), HasSubstr("line 3: unknown argument \"hDevic\""));
}

TEST(ReadTraceTest, ContentOfBothFormatsIsRead) {
  const std::string line =
      R"({"seq":1,"tid":1,"fn":"ResourceUpdateSubresourceUP","args":{"hDevice":"d",)"
      R"("hDstResource":"r","pDstBox":null},"end":2,"content":"0a0b"})";
  TempFile jsonl("c.jsonl", line);
  absl::StatusOr<TraceInput> j = ReadTrace(jsonl.path(), false);
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_EQ(j->events.size(), 1u);
  EXPECT_EQ(j->contents.Token(j->events[0].content), "\x0a\x0b");

  const std::string path = absl::StrCat(::testing::TempDir(), "/", getpid(), "_c.cltrace");
  {
    format::TraceWriter::Options o;
    o.background = false;
    auto w = format::TraceWriter::Open(path, o);
    ASSERT_TRUE(w.ok()) << w.status();
    format::Event e = j->events[0];
    e.args[0] = (*w)->InternHandleToken("d");
    e.args[1] = (*w)->InternHandleToken("r");
    e.content = (*w)->InternContent("\x0a\x0b");
    ASSERT_TRUE((*w)->Append(e).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  absl::StatusOr<TraceInput> b = ReadTrace(path, false);
  std::remove(path.c_str());
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->events.size(), 1u);
  EXPECT_EQ(b->contents.Token(b->events[0].content), "\x0a\x0b");
}

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
