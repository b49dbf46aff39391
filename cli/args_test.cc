#include "cli/args.h"

#include <sstream>

#include "cli/verb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cltrace::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ArgSpec DumpLike() {
  return ArgSpec("dump", "usage: cltrace dump FILE\nmore\n")
      .Options({"--from", "--output"})
      .Alias("-o", "--output")
      .Flags({"--json"})
      .Positional(1, 1);
}

TEST(ArgsTest, OptionsFlagsAndPositionalsInAnyOrder) {
  auto r = ParseArgs({"--json", "t.cltrace", "--from", "7", "-o", "-"}, DumpLike());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->positional, ElementsAre("t.cltrace"));
  EXPECT_TRUE(r->Flag("--json"));
  EXPECT_EQ(r->Option("--from"), "7");
  EXPECT_EQ(r->Option("--output"), "-");  // alias resolved; "-" is a value, not an option
}

TEST(ArgsTest, EqualsFormAndDoubleDash) {
  auto r = ParseArgs({"--from=12", "--", "--json"}, DumpLike());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->Option("--from"), "12");
  EXPECT_THAT(r->positional, ElementsAre("--json"));
  EXPECT_FALSE(r->Flag("--json"));
}

TEST(ArgsTest, UnknownOption) {
  auto r = ParseArgs({"t", "--frm", "7"}, DumpLike());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "unknown option --frm");
}

TEST(ArgsTest, OptionWithoutValue) {
  EXPECT_EQ(ParseArgs({"t", "--from"}, DumpLike()).status().message(), "--from needs a value");
}

TEST(ArgsTest, FlagWithValue) {
  EXPECT_EQ(ParseArgs({"t", "--json=1"}, DumpLike()).status().message(), "--json takes no value");
}

TEST(ArgsTest, RepeatedOption) {
  EXPECT_EQ(ParseArgs({"t", "--from", "1", "--from", "2"}, DumpLike()).status().message(),
            "--from given twice");
}

TEST(ArgsTest, PositionalCount) {
  EXPECT_EQ(ParseArgs({}, DumpLike()).status().message(), "missing argument");
  EXPECT_EQ(ParseArgs({"a", "b"}, DumpLike()).status().message(), "unexpected argument 'b'");
}

TEST(ArgsTest, HelpWinsOverUsageErrors) {
  auto r = ParseArgs({"--bogus", "--help"}, DumpLike());
  // An unknown option is reported before --help is seen; --help alone always works.
  EXPECT_FALSE(r.ok());
  r = ParseArgs({"-h"}, DumpLike());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->help);
}

TEST(ArgsTest, ParseVerbArgsReactions) {
  std::ostringstream out, err;
  ParsedArgs parsed;
  EXPECT_EQ(ParseVerbArgs({"--help"}, DumpLike(), &parsed, out, err), kExitOk);
  EXPECT_EQ(out.str(), "usage: cltrace dump FILE\nmore\n");
  out.str("");
  EXPECT_EQ(ParseVerbArgs({}, DumpLike(), &parsed, out, err), kExitBadInput);
  EXPECT_EQ(err.str(),
            "cltrace dump: missing argument\nusage: cltrace dump FILE\n"
            "(cltrace dump --help for more)\n");
  EXPECT_EQ(ParseVerbArgs({"x"}, DumpLike(), &parsed, out, err), std::nullopt);
  EXPECT_THAT(parsed.positional, ElementsAre("x"));
}

TEST(ArgsTest, ParseCount) {
  EXPECT_EQ(*ParseCount("--count", "42"), 42u);
  EXPECT_EQ(ParseCount("--count", "-1").status().message(),
            "--count needs a non-negative integer, not '-1'");
  EXPECT_FALSE(ParseCount("--count", "").ok());
  EXPECT_FALSE(ParseCount("--count", "12x").ok());
}

TEST(VerbRegistryTest, TheVerbsOfThisToolAreRegistered) {
  for (const char* name : {"info", "dump", "import", "export"}) {
    const Verb* v = FindVerb(name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_THAT(v->usage, HasSubstr(std::string("usage: cltrace ") + name));
  }
  EXPECT_EQ(FindVerb("nope"), nullptr);
}

TEST(VerbRegistryTest, RunCliUsage) {
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"cltrace"}, out, err), kExitBadInput);
  EXPECT_THAT(err.str(), HasSubstr("usage: cltrace VERB"));
  EXPECT_EQ(RunCli({"cltrace", "--help"}, out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("  dump "));
  EXPECT_EQ(RunCli({"cltrace", "frobnicate"}, out, err), kExitBadInput);
  EXPECT_THAT(err.str(), HasSubstr("unknown verb 'frobnicate'"));
  out.str("");
  EXPECT_EQ(RunCli({"cltrace", "help", "info"}, out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("usage: cltrace info FILE"));
}

}  // namespace
}  // namespace cltrace::cli
