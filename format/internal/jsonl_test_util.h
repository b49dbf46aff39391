// Helpers shared by the JSONL tests (jsonl_test.cc, jsonl_error_test.cc).
#ifndef CLTRACE_FORMAT_INTERNAL_JSONL_TEST_UTIL_H_
#define CLTRACE_FORMAT_INTERNAL_JSONL_TEST_UTIL_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "format/jsonl.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::format::jsonl_testing {

// Parses `text`, expects InvalidArgument whose message starts with `prefix` (the line) and
// contains `part`.
inline void ExpectError(absl::string_view text, absl::string_view prefix, absl::string_view part) {
  auto r = ParseJsonl(text);
  ASSERT_FALSE(r.ok()) << "parsed: " << text;
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), ::testing::StartsWith(std::string(prefix)));
  EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr(std::string(part)));
}

inline JsonlTrace MustParse(absl::string_view text) {
  auto r = ParseJsonl(text);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : JsonlTrace();
}

inline std::string Export(const JsonlTrace& t) {
  std::string out;
  for (const Event& e : t.events)
    absl::StrAppend(&out, EventToJsonl(e, t.handles, t.strings), "\n");
  return out;
}

// (seq, end, parent) per event, for compact expectations.
struct Pos {
  uint64_t seq, end, parent;
  bool operator==(const Pos&) const = default;
};
inline std::ostream& operator<<(std::ostream& os, const Pos& p) {
  return os << "{" << p.seq << "," << p.end << "," << p.parent << "}";
}
inline std::vector<Pos> Positions(const JsonlTrace& t) {
  std::vector<Pos> out;
  for (const Event& e : t.events) out.push_back({e.seq, e.end, e.parent});
  return out;
}

// A leaf call line on thread `tid` (Flush has one required handle).
inline std::string Flush(uint64_t seq, uint32_t tid, absl::string_view extra = "") {
  return absl::StrCat(R"({"seq":)", seq, R"(,"tid":)", tid,
                      R"(,"fn":"Flush","args":{"hDevice":"dev"})", extra, "}\n");
}
inline std::string ErrorCb(uint64_t seq, uint32_t tid, uint64_t parent,
                           absl::string_view extra = "") {
  return absl::StrCat(
      R"({"seq":)", seq, R"(,"tid":)", tid,
      R"(,"fn":"SetErrorCb","args":{"hRuntimeDevice":"rt","hResult":"E_OUTOFMEMORY"},"parent":)",
      parent, extra, "}\n");
}

}  // namespace cltrace::format::jsonl_testing

#endif  // CLTRACE_FORMAT_INTERNAL_JSONL_TEST_UTIL_H_
