#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "format/event.h"
#include "gtest/gtest.h"

namespace cltrace::format {
namespace {

// A handle spelled the way the recorder spells it (InternValue): "0x" and lower-case hex.
std::string Handle(uint64_t i) { return absl::StrFormat("0x%x", 0x55679a2e360 + i * 0x40); }

// A token of `len` bytes that differs for every i (crosses the 15-byte inline limit).
std::string Text(uint64_t i, size_t len) {
  std::string s = absl::StrCat("t", i, ":");
  s.resize(std::max(len, s.size()), static_cast<char>('a' + i % 26));
  return s;
}

TEST(TokenTableTest, ViewsStayValidAndEqualAcrossGrowth) {
  TokenTable t;
  std::vector<std::pair<uint64_t, absl::string_view>> views;
  std::vector<std::string> expected;
  constexpr uint64_t kIds = 300000;  // several segments, some in the temporary file
  for (uint64_t i = 1; i < kIds; ++i) {
    const std::string s = i % 7 == 0 ? Text(i, i % 40) : Handle(i);
    ASSERT_TRUE(t.Define(i, s));
    expected.push_back(s);
    if (i % 97 == 1) views.emplace_back(i, t.Token(i));  // held across further Defines
  }
  t.Trim();  // gives pages back: the views must still read the same bytes
  for (const auto& [id, view] : views) {
    EXPECT_EQ(t.Token(id).data(), view.data()) << id;
    EXPECT_EQ(view, expected[id - 1]) << id;
  }
  for (uint64_t i = 1; i < kIds; ++i) ASSERT_EQ(t.Token(i), expected[i - 1]) << i;
  EXPECT_EQ(t.size(), kIds);
}

TEST(TokenTableTest, DefineRejectsATokenDefinedUnderAnotherId) {
  TokenTable t;
  const std::string long_token(100, 'x');
  EXPECT_TRUE(t.Define(1, "0x10"));
  EXPECT_FALSE(t.Define(2, "0x10"));  // one token, one id (FORMAT.md §4: DataLoss)
  EXPECT_EQ(t.size(), 2u);
  EXPECT_TRUE(t.Define(2, long_token));
  EXPECT_FALSE(t.Define(3, long_token));
  EXPECT_TRUE(t.Define(3, "0x20"));
  EXPECT_TRUE(t.Define(1, "0x10"));   // the same definition again
  EXPECT_FALSE(t.Define(1, "0x11"));  // a different one
  EXPECT_FALSE(t.Define(5, "0x50"));  // out of sequence
  EXPECT_FALSE(t.Define(0, "0x0"));   // reserved
  EXPECT_EQ(t.Token(2), long_token);
  EXPECT_EQ(t.Token(3), "0x20");
  // At scale (slots in the temporary file), against every earlier token.
  uint64_t id = t.size();
  for (uint64_t i = 0; i < 200000; ++i) ASSERT_TRUE(t.Define(id++, Handle(i)));
  for (uint64_t i = 0; i < 200000; i += 1009) EXPECT_FALSE(t.Define(id, Handle(i))) << i;
  EXPECT_FALSE(t.Define(id, long_token));
  EXPECT_TRUE(t.Define(id, Handle(200000)));
}

TEST(TokenTableTest, FindAndIntern) {
  TokenTable t;
  EXPECT_EQ(t.Find(""), 0);
  EXPECT_EQ(t.Intern(""), 0u);
  EXPECT_EQ(t.Find("0x10"), -1);
  for (uint64_t i = 0; i < 100000; ++i) ASSERT_EQ(t.Intern(Handle(i)), i + 1);
  for (uint64_t i = 0; i < 100000; i += 7) {
    EXPECT_EQ(t.Find(Handle(i)), static_cast<int64_t>(i + 1));
    EXPECT_EQ(t.Intern(Handle(i)), i + 1);
  }
  EXPECT_EQ(t.Find(Handle(100000)), -1);
  EXPECT_EQ(t.size(), 100001u);
  EXPECT_FALSE(t.Has(100001));
  EXPECT_EQ(t.Token(100001), "");
  EXPECT_EQ(t.Token(0), "");
}

TEST(TokenTableTest, InternValueSpellsHexAndMatchesIntern) {
  TokenTable t;
  EXPECT_EQ(t.InternValue(0), 0u);
  const uint64_t a = t.InternValue(0x1a2b00);
  EXPECT_EQ(t.Token(a), "0x1a2b00");
  EXPECT_EQ(t.Intern("0x1a2b00"), a);
  const uint64_t b = t.Intern("0xffffffffffffffff");  // 18 bytes: a long slot
  EXPECT_EQ(t.InternValue(~uint64_t{0}), b);
  EXPECT_EQ(t.InternValue(0x1a2b00), a);
  EXPECT_EQ(t.size(), 3u);
}

// Past the recent-value cache (collisions, evictions) and the first file-backed slots.
TEST(TokenTableTest, InternValueAgreesWithInternForManyValues) {
  TokenTable t;
  constexpr uint64_t kValues = 200000;
  auto value = [](uint64_t i) { return 0x55679a2e0000 + i * 0x40; };
  for (uint64_t i = 0; i < kValues; ++i) ASSERT_EQ(t.InternValue(value(i)), i + 1);
  std::mt19937_64 rng(5);
  for (int k = 0; k < 50000; ++k) {
    const uint64_t i = k % 2 ? rng() % kValues : rng() % 16;  // hot values and cold ones
    ASSERT_EQ(t.InternValue(value(i)), i + 1) << i;
    ASSERT_EQ(t.Intern(absl::StrFormat("0x%x", value(i))), i + 1) << i;
  }
  EXPECT_EQ(t.size(), kValues + 1);
  EXPECT_EQ(t.Token(kValues), absl::StrFormat("0x%x", value(kValues - 1)));
}

TEST(TokenTableTest, PlaceholdersAndEveryLengthAroundTheInlineLimit) {
  TokenTable t;
  std::vector<std::string> tokens = {"<lost handle 7>", "<lost string 12345678>", "cl1"};
  for (size_t len = 1; len <= 40; ++len) tokens.push_back(Text(len, len));
  tokens.push_back(std::string(3 << 20, 'c'));  // a content blob larger than an overflow block
  tokens.push_back(std::string("a\0b", 3));
  for (size_t i = 0; i < tokens.size(); ++i) ASSERT_TRUE(t.Define(i + 1, tokens[i])) << i;
  for (size_t i = 0; i < tokens.size(); ++i) {
    EXPECT_EQ(t.Token(i + 1), tokens[i]) << i;
    EXPECT_EQ(t.Find(tokens[i]), static_cast<int64_t>(i + 1)) << i;
  }
}

TEST(TokenTableTest, CopyAndMoveKeepEveryToken) {
  TokenTable t;
  for (uint64_t i = 0; i < 70000; ++i) t.InternValue(0x1000 + i);
  TokenTable copy = t;
  EXPECT_EQ(copy.size(), t.size());
  EXPECT_EQ(copy.InternValue(0x1000 + 69999), t.InternValue(0x1000 + 69999));
  absl::string_view view = t.Token(5);
  TokenTable moved = std::move(t);
  EXPECT_EQ(moved.Token(5).data(), view.data());  // moving keeps the storage
  for (uint64_t i = 1; i < copy.size(); i += 13) EXPECT_EQ(copy.Token(i), moved.Token(i)) << i;
  EXPECT_EQ(moved.Find("0x1005"), 6);
  t = std::move(copy);
  EXPECT_EQ(t.Find("0x1005"), 6);
  EXPECT_EQ(t.Intern("new"), 70001u);
}

// Millions of distinct handles (a 100 M-call trace of `scene` defines about 4.3 M): the table
// holds the index and a bounded window in memory, the slots in its temporary file.
TEST(TokenTableTest, FourMillionHandlesCostAtMostTwelveBytesEach) {
  TokenTable t;
  constexpr uint64_t kIds = 4000000;
  for (uint64_t i = 1; i <= kIds; ++i) ASSERT_TRUE(t.Define(i, Handle(i)));
  ASSERT_TRUE(t.file_backed()) << "no temporary file in $TMPDIR or /tmp";
  const double per_id = static_cast<double>(t.bytes_used()) / static_cast<double>(kIds);
  EXPECT_LE(per_id, 12.0);
  EXPECT_GE(t.file_bytes(), kIds * 16);
  for (uint64_t i = 1; i <= kIds; i += 9973) {
    EXPECT_EQ(t.Token(i), Handle(i));
    EXPECT_EQ(t.Find(Handle(i)), static_cast<int64_t>(i));
  }
  EXPECT_FALSE(t.Define(kIds + 1, Handle(17)));
  RecordProperty("bytes_per_id", absl::StrFormat("%.2f", per_id));
}

// Without a temporary file the table stays in memory and works the same.
TEST(TokenTableTest, WorksInMemoryWithoutATemporaryFile) {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old == nullptr ? "" : old;
  setenv("TMPDIR", "/nonexistent-cltrace-dir", 1);
  TokenTable t;
  for (uint64_t i = 1; i <= 200000; ++i) ASSERT_TRUE(t.Define(i, i % 5 ? Handle(i) : Text(i, 30)));
  if (old == nullptr) {
    unsetenv("TMPDIR");
  } else {
    setenv("TMPDIR", saved.c_str(), 1);
  }
  EXPECT_FALSE(t.file_backed());
  t.Trim();  // nothing to give back: must not lose anything
  for (uint64_t i = 1; i <= 200000; i += 11) {
    EXPECT_EQ(t.Token(i), i % 5 ? Handle(i) : Text(i, 30)) << i;
    EXPECT_EQ(t.Find(t.Token(i)), static_cast<int64_t>(i));
  }
  EXPECT_FALSE(t.Define(200001, Handle(3)));
}

}  // namespace
}  // namespace cltrace::format
