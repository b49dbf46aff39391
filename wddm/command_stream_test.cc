#include "wddm/command_stream.h"

#include <vector>

#include "gtest/gtest.h"

namespace cltrace::gpu {
namespace {

std::vector<Command> AllUserCommands() {
  const uint64_t inputs[] = {1, 2, 3};
  return {Command::Nop(),
          Command::Clear(0, 0x1122334455667788ull),
          Command::Update(1, 16, 32, 0xABCDEF0123456789ull),
          Command::Copy(2, 3),
          Command::CopyRegion(0, 4, 1, 8, 12),
          Command::Draw(0, inputs, 0x77, 36, 3, 2),
          Command::Marker(1234567890123ull),
          Command::Private(std::vector<uint32_t>{7, 8, 9})};
}

TEST(CommandStreamTest, UserRoundTrip) {
  std::vector<uint32_t> words;
  std::vector<uint32_t> refs;
  const auto cmds = AllUserCommands();
  for (const Command& c : cmds) AppendCommand(c, CommandFormat::kUser, &words, &refs);
  size_t pos = 0;
  for (const Command& want : cmds) {
    Command got;
    auto n = DecodeCommand(words, pos, CommandFormat::kUser, &got);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(got, want) << FormatCommand(got);
    EXPECT_EQ(*n, EncodedWords(want, CommandFormat::kUser));
    pos += *n;
  }
  EXPECT_EQ(pos, words.size());
  // One reference word per allocation reference; each holds the slot index.
  ASSERT_EQ(refs.size(), 1u + 1 + 2 + 2 + 4);
  EXPECT_EQ(words[refs[0]], 0u);
  EXPECT_EQ(words[refs[1]], 1u);
}

TEST(CommandStreamTest, DmaReferencesAreTwoWords) {
  std::vector<uint32_t> words;
  std::vector<uint32_t> refs;
  Command c = Command::Copy(0x123456789ull, 0xABCDEF012ull);
  AppendCommand(c, CommandFormat::kDma, &words, &refs);
  ASSERT_EQ(words.size(), 5u);
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(words[refs[0]], 0x23456789u);
  EXPECT_EQ(words[refs[0] + 1], 0x1u);
  Command back;
  ASSERT_TRUE(DecodeCommand(words, 0, CommandFormat::kDma, &back).ok());
  EXPECT_EQ(back, c);
}

TEST(CommandStreamTest, KernelOpcodesArePrivilegedInUserFormat) {
  std::vector<uint32_t> words;
  AppendCommand(Command::Fence(5), CommandFormat::kDma, &words, nullptr);
  Command c;
  EXPECT_EQ(DecodeCommand(words, 0, CommandFormat::kUser, &c).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(DecodeCommand(words, 0, CommandFormat::kDma, &c).ok());
}

TEST(CommandStreamTest, UnknownOpcodeIsIllegal) {
  const uint32_t words[] = {0x5C | (1u << 8)};
  Command c;
  auto r = DecodeCommand(words, 0, CommandFormat::kUser, &c);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CommandStreamTest, PoisonIsIllegal) {
  const uint32_t words[] = {kPoisonWord, kPoisonWord};
  Command c;
  EXPECT_EQ(DecodeCommand(words, 0, CommandFormat::kUser, &c).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CommandStreamTest, TruncatedCommandIsOutOfRange) {
  std::vector<uint32_t> words;
  AppendCommand(Command::Clear(0, 1), CommandFormat::kUser, &words, nullptr);
  words.pop_back();
  Command c;
  auto r = DecodeCommand(words, 0, CommandFormat::kUser, &c);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
}

TEST(CommandStreamTest, LengthMismatchIsOutOfRange) {
  std::vector<uint32_t> words;
  AppendCommand(Command::Clear(0, 1), CommandFormat::kUser, &words, nullptr);
  words.push_back(0);
  words[0] = static_cast<uint32_t>(Opcode::kClear) | (5u << 8);  // claims 5, needs 4
  Command c;
  auto r = DecodeCommand(words, 0, CommandFormat::kUser, &c);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(r.status().message().find("byte offset 0"), std::string::npos);
}

TEST(CommandStreamTest, TooManyDrawInputsIsOutOfRange) {
  std::vector<uint64_t> inputs(kMaxDrawInputs + 1, 1);
  std::vector<uint32_t> words;
  AppendCommand(Command::Draw(0, inputs, 0, 3, 0, 1), CommandFormat::kUser, &words, nullptr);
  Command c;
  EXPECT_EQ(DecodeCommand(words, 0, CommandFormat::kUser, &c).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST(CommandStreamTest, ErrorMessageCarriesByteOffset) {
  std::vector<uint32_t> words;
  AppendCommand(Command::Nop(), CommandFormat::kUser, &words, nullptr);
  words.push_back(0xEE | (1u << 8));
  Command c;
  auto r = DecodeCommand(words, 1, CommandFormat::kUser, &c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("byte offset 4"), std::string::npos) << r.status();
}

TEST(CommandStreamTest, EncodeRefusesWhenFull) {
  std::vector<uint32_t> buf(3);
  EXPECT_FALSE(
      EncodeCommand(Command::Clear(0, 1), CommandFormat::kUser, absl::MakeSpan(buf), nullptr));
  buf.resize(4);
  EXPECT_TRUE(
      EncodeCommand(Command::Clear(0, 1), CommandFormat::kUser, absl::MakeSpan(buf), nullptr));
}

}  // namespace
}  // namespace cltrace::gpu
